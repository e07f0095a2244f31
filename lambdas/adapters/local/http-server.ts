/**
 * The HTTP side of the local service, a small stand-in for API Gateway: node:http listens, each request
 * is matched against the route table (lambdas/routes.ts), CORS preflights are answered, the request
 * becomes a proxy event (api-gateway-event.ts), routes with `auth` go through the authorizer
 * (authorize.ts), and the route's middy handler (the same module the route's Lambda runs) answers.
 * One access-log line per request (Powertools Logger, `SAI_ACCESS_LOG=0` turns it off).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { routes, pathMatcher, type RouteDef } from '../../routes.ts';
import { errorResult, MAX_BODY_BYTES, type ApiResult } from '../../http/middleware.ts';
import { logger } from '../../logger.ts';
import { lambdaContext, toProxyEvent, writeProxyResult } from './api-gateway-event.ts';
import { authorizeRequest } from './authorize.ts';

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
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type',
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
async function answer(loaded: LoadedRoute[], req: http.IncomingMessage, requestId: string): Promise<ApiResult | 'preflight'> {
  const url = new URL(req.url ?? '/', 'http://local');
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

async function dispatch(loaded: LoadedRoute[], req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const requestId = randomUUID();
  const started = performance.now();
  let status = 500;
  try {
    const result = await answer(loaded, req, requestId);
    if (result === 'preflight') {
      status = 204;
      res.writeHead(204, CORS_PREFLIGHT).end();
      return;
    }
    status = result.statusCode;
    writeProxyResult(res, result, requestId);
  } catch (err) {
    logger.error('request failed', { requestId, error: err });
    if (!res.headersSent) writeProxyResult(res, errorResult('internal_error', `Internal error; quote request id ${requestId} when reporting it`), requestId);
    else res.destroy();
  } finally {
    if (process.env.SAI_ACCESS_LOG !== '0') {
      logger.info('request', { requestId, method: req.method, path: req.url, status, ms: Math.round(performance.now() - started) });
    }
  }
}

/**
 * Loads every route's handler and listens.
 * @param port 0 for any free port.
 * @throws Error when the port is taken or the address cannot be bound.
 */
export async function startHttpServer(host: string, port: number): Promise<HttpServer> {
  const loaded = await loadRoutes();
  const server = http.createServer((req, res) => { void dispatch(loaded, req, res); });
  server.keepAliveTimeout = 5000;
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
