/**
 * The HTTP side of the local service, a small stand-in for API Gateway: node:http listens, each request
 * is matched against the route table (lambdas/routes.ts), CORS preflights are answered, the request
 * becomes a proxy event (api-gateway-event.ts), routes with `auth` go through the authorizer
 * (authorize.ts), and the route's middy handler (the same module the route's Lambda runs) answers.
 * `/` and `/assets/…` are the web dashboard's built files (lambdas/dashboard/static.ts), with its CSP.
 * Around every request, http-edges.ts: its logger scope, its access-log line (written when the answer is sent,
 * `SAI_ACCESS_LOG=0` turns it off, credential-like query values redacted), and the refusals of the HTTP layer
 * itself (no `Host`, a declared body over the limit) with the error body.
 *
 * Requests node:http refuses before any handler sees them (a malformed request, an unknown method,
 * headers over 16 KiB, a request that does not arrive in time, an `Expect` other than 100-continue,
 * CONNECT) are answered with the same `{error, code, details}` body as every other error.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { routes, pathMatcher, type RouteDef } from '../../routes.ts';
import { errorResult, MAX_BODY_BYTES, STATUS_BY_CODE, type ApiResult } from '../../http/middleware.ts';
import type { ErrorCode } from '../../errors.ts';
import { requestFailed, serveRequest } from './http-edges.ts';
import { lambdaContext, toProxyEvent, writeProxyResult } from './api-gateway-event.ts';
import { authorizeRequest } from './authorize.ts';
import { dashboardAnswer, isDashboardPath } from '../../dashboard/static.ts';
import { enableResponseStreams } from '../../http/response-streams.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<ApiResult>;

interface LoadedRoute {
  def: RouteDef;
  matcher: RegExp;
  handler: Handler;
}

/** A listening HTTP server. */
export interface HttpServer {
  /** e.g. `http://127.0.0.1:8787` */
  url: string;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** Answer to a CORS preflight on any route (the API is called from browsers and the extension). */
const CORS_PREFLIGHT = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE, OPTIONS',
  // The MCP endpoint's headers too (Streamable HTTP: protocol version, session, resumption).
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID',
  'Access-Control-Max-Age': '600',
};

async function loadRoutes(): Promise<LoadedRoute[]> {
  return Promise.all(routes.map(async (def) => {
    const mod = (await import(new URL(`../../${def.handler}`, import.meta.url).href)) as { handler: Handler };
    return { def, matcher: pathMatcher(def.path), handler: mod.handler };
  }));
}

/** The body, or `too_large` past MAX_BODY_BYTES (the rest is drained, not kept). */
function readBody(req: http.IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve('too_large');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The response of one request, as API Gateway with its authorizer would give it. */
/**
 * The URL of a request target: origin-form (`/api/v1/me/?a=1`) read as a path even when it starts with
 * `//`, absolute-form as is; null for anything else (`*`, authority-form, a target that does not parse).
 */
function requestUrl(target: string | undefined): URL | null {
  if (!target) return null;
  try {
    if (target.startsWith('/')) return new URL(`http://local${target}`);
    return /^https?:\/\//i.test(target) ? new URL(target) : null;
  } catch {
    return null;
  }
}

async function answer(loaded: LoadedRoute[], req: http.IncomingMessage, requestId: string): Promise<ApiResult | 'preflight'> {
  const url = requestUrl(req.url);
  if (!url) return errorResult('not_found', 'No such resource: the request target is not a path under /api/v1/');
  // The web dashboard's files (`/`, `/assets/…`): not routes of the API (lambdas/dashboard/static.ts).
  if (isDashboardPath(url.pathname)) return dashboardAnswer(url.pathname, req.method ?? 'GET');
  const candidates = loaded.map((r) => ({ r, m: r.matcher.exec(url.pathname) })).filter((x) => x.m);
  if (req.method === 'OPTIONS' && candidates.length) return 'preflight';
  const hit = candidates.find((x) => x.r.def.method === req.method);
  if (!hit) {
    const allowed = candidates.map((x) => x.r.def.method).join(', ');
    return candidates.length
      ? errorResult('method_not_allowed', `${req.method} is not allowed on ${url.pathname}; allowed: ${allowed}`, [], { Allow: allowed })
      : errorResult('not_found', `No route ${req.method} ${url.pathname}; the API lives under /api/v1/ (see README)`);
  }
  const body = await readBody(req);
  if (body === 'too_large') return errorResult('payload_too_large', `The request body is larger than the limit of ${MAX_BODY_BYTES} bytes`);
  const params = new Map<string, string>();
  try {
    for (const [name, value] of Object.entries(hit.m!.groups ?? {})) params.set(name, decodeURIComponent(value));
  } catch {
    // A malformed %-escape names no resource (docs/decisions.md: ids that are not UUIDs are 404).
    return errorResult('not_found', `No resource at ${url.pathname}`);
  }
  const event = toProxyEvent(req, url, hit.r.def.path, params, body.toString('utf8'), requestId);
  if (hit.r.def.auth) {
    const refused = await authorizeRequest(event);
    if (refused) return refused;
  }
  return hit.r.handler(event, lambdaContext(requestId, hit.r.def.handler));
}

async function dispatch(loaded: LoadedRoute[], req: http.IncomingMessage, res: http.ServerResponse, requestId: string): Promise<void> {
  try {
    const result = await answer(loaded, req, requestId);
    if (result === 'preflight') {
      res.writeHead(204, CORS_PREFLIGHT).end();
      return;
    }
    writeProxyResult(res, result, requestId);
  } catch (err) {
    requestFailed(err, req, res, requestId);
  }
}

/** Largest request head (request line and headers), bytes: past it, 431 `headers_too_large`. */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Writes an error answer straight to a socket node:http gave up on (no response object exists), and
 * closes the connection: what is left of the request cannot be read reliably.
 */
function writeRaw(socket: Duplex, code: ErrorCode, message: string): void {
  // A response already under way on this connection (a pipelined request after it was malformed) must not
  // get an error written into its body: the connection is cut instead, as node:http's own handler does.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const status = STATUS_BY_CODE[code] ?? 400;
  const body = JSON.stringify({ error: message, code, details: [] });
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nAccess-Control-Allow-Origin: *\r\nx-request-id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`);
}

/** node:http's `clientError`: the request could not be parsed or did not arrive in time. */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      socket.destroy();
      return;
    case 'HPE_HEADER_OVERFLOW':
      writeRaw(socket, 'headers_too_large', `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes`);
      return;
    case 'HPE_INVALID_METHOD':
      writeRaw(socket, 'method_not_implemented', 'Unknown method; the API answers GET, POST, PUT, DELETE and OPTIONS');
      return;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      writeRaw(socket, 'request_timeout', 'The request did not arrive whole in time');
      return;
    default:
      writeRaw(socket, 'bad_http_request', `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'}: ${err.message})`);
  }
}

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  /** Runs after every route's handler is loaded, before the server listens (the tool workers start there). */
  beforeListen?: () => Promise<void>;
}

/**
 * Loads every route's handler and listens.
 * @param port 0 for any free port.
 * @throws Error when the port is taken or the address cannot be bound.
 */
export async function startHttpServer(host: string, port: number, options: HttpServerOptions = {}): Promise<HttpServer> {
  // This host writes streamed bodies as they come (the MCP endpoint's progress); API Gateway reads them whole.
  enableResponseStreams();
  const loaded = await loadRoutes();
  await options.beforeListen?.();
  // requireHostHeader: node:http's own answer to a request without Host is an empty 400; http-edges.ts answers it.
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false }, serveRequest((req, res, requestId) => dispatch(loaded, req, res, requestId)));
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 60_000;
  server.requestTimeout = 300_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket));
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Closed after the answer: a client that sends its body anyway would have it read as the next request.
    writeProxyResult(res, errorResult('expectation_failed', `Expect: ${req.headers.expect} is not supported; only 100-continue is`, [], { Connection: 'close' }), randomUUID());
  });
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) => {
    writeRaw(socket, 'method_not_implemented', 'CONNECT is not supported: this is an API, not a proxy');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as { port: number };
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostInUrl}:${address.port}`,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
