/**
 * What the local HTTP server does around every request before and after its route (http-server.ts), the parts API
 * Gateway does in front of a Lambda:
 *
 * - **request scope**: each request runs in its own logger scope (lambdas/logger.ts `withRequestScope`), so the lines
 *   logged while it is handled, its access-log line included, carry its own Lambda context and request id and no
 *   other request's;
 * - **the access log**: one line per request once its answer is sent, with the status actually sent; a request whose
 *   client went away before the answer was sent is logged as `aborted` (with the status, if one was under way),
 *   never as a 500 it did not get. Credential-like query values are redacted. `SAI_ACCESS_LOG=0` turns it off;
 * - **refusals of the HTTP layer itself, with the error body**: a request without `Host` or with two (HTTP/1.1
 *   requires exactly one, RFC 9112 3.2) is a 400 `bad_http_request` with `{error, code, details}` (node:http's own
 *   answer to a missing one is an empty
 *   400: the server turns it off with `requireHostHeader: false` and leaves it to this module); a declared
 *   `Content-Length` over MAX_BODY_BYTES is a 413 `payload_too_large` at once, before any byte of the body is read;
 * - **no reading of bodies nobody wants**: an answer that starts while the request's body is still arriving (that
 *   413, a body found too large while being read, a 404 for a large POST) closes the connection after it
 *   (`Connection: close`, a lingering close of at most 2 s and 64 MiB) instead of reading the rest of the body to
 *   keep the connection alive.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { errorResult, MAX_BODY_BYTES, type ApiResult } from '../../http/middleware.ts';
import { logger, withRequestScope } from '../../logger.ts';
import { writeProxyResult } from './api-gateway-event.ts';

/** Handles one request (routing, the handler, the answer); `requestId` is the request's `x-request-id`. */
export type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse, requestId: string) => Promise<void>;

/** Query parameters whose values are credentials: redacted in the access log. */
const CREDENTIAL_PARAMS = /^(?:(?:x[_-])?api[_-]?key|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|password|passwd|pwd|secret|client[_-]?secret|auth|authorization|session|sid)$/i;

/** An API key anywhere in a target (a path, a parameter of another name). */
const API_KEY_VALUE = /sai_[A-Za-z0-9]{20,}/g;

/** Longest request target written to the access log, characters (a target may be 16 KiB long). */
const MAX_LOGGED_TARGET_CHARS = 2048;

/**
 * The request target for the access log: credential-like query values (`?api_key=…`) become `[redacted]`, and so
 * does anything shaped like an API key wherever it is; cut to {@link MAX_LOGGED_TARGET_CHARS}.
 */
function redactTarget(target: string | undefined): string {
  if (!target) return '';
  target = target.replace(API_KEY_VALUE, 'sai_[redacted]');
  const q = target.indexOf('?');
  if (q !== -1) {
    const redacted = target.slice(q + 1).split('&').map((part) => {
      const eq = part.indexOf('=');
      const rawName = eq === -1 ? part : part.slice(0, eq);
      let name = rawName;
      try { name = decodeURIComponent(rawName.replace(/\+/g, ' ')); } catch { /* keep it raw */ }
      return eq !== -1 && CREDENTIAL_PARAMS.test(name.trim()) ? `${rawName}=[redacted]` : part;
    });
    target = `${target.slice(0, q)}?${redacted.join('&')}`;
  }
  return target.length > MAX_LOGGED_TARGET_CHARS ? `${target.slice(0, MAX_LOGGED_TARGET_CHARS)}…` : target;
}

/** Whether the access log is on (`SAI_ACCESS_LOG=0` turns it off), read per request as the server did. */
const accessLogOn = (): boolean => process.env.SAI_ACCESS_LOG !== '0';

/**
 * Logs the request's access-log line once its answer is sent (`finish`: the status sent) or its connection closed
 * before that (`aborted: true`, with `status` the one under way or null when none was).
 */
function logWhenDone(req: http.IncomingMessage, res: http.ServerResponse, requestId: string, started: number): void {
  let logged = false;
  const line = (aborted: boolean) => {
    if (logged) return;
    logged = true;
    const ms = Math.round(performance.now() - started);
    const base = { requestId, method: req.method, path: redactTarget(req.url), ms };
    if (aborted) logger.info('request', { ...base, status: res.headersSent ? res.statusCode : null, aborted: true });
    else logger.info('request', { ...base, status: res.statusCode });
  };
  res.once('finish', () => line(false));
  res.once('close', () => line(!res.writableFinished));
}

/** Longest a connection closed after an early answer stays open for the client to read it, ms. */
const LINGER_MS = 2000;
/** Most bytes read (and dropped) from such a connection meanwhile; past them it is closed at once. */
const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * A lingering close (as web servers do it: Apache's lingering_close): once the answer is sent, the connection's
 * sending side ends (FIN), and what the client still sends is read and dropped until it closes its side, for at most
 * {@link LINGER_MS} and {@link LINGER_BYTES}. Closing at once while the client is still sending would make the
 * kernel reset the connection, and a reset can make the client lose the answer it has not read yet.
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function (this: Socket) {
    if (this.writable) this.end();
    const start = this.bytesRead;
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    // node:http reads the socket in C++ (no 'data' events): the bytes are counted as they add up.
    const watch = setInterval(() => { if (this.bytesRead - start > LINGER_BYTES) this.destroy(); }, 20);
    timer.unref();
    watch.unref();
    this.once('close', () => { clearTimeout(timer); clearInterval(watch); });
  };
}

/**
 * Makes an answer that starts while the request's body is still arriving close the connection after it
 * (`Connection: close`, then {@link lingerOnClose}): the rest of the body is not read (node:http would read and drop
 * all of it, however large, to keep the connection).
 */
function closeIfAnsweredEarly(req: http.IncomingMessage, res: http.ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
    if (!req.complete) {
      this.shouldKeepAlive = false;
      lingerOnClose(req.socket);
    }
    return writeHead.apply(this, args);
  } as typeof res.writeHead;
}

/** The answer of the HTTP layer itself, before any route: no `Host` or two, or a declared body over the limit; null to go on. */
function edgeRefusal(req: http.IncomingMessage): ApiResult | null {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined) {
    return errorResult('bad_http_request', 'The request has no Host header, which HTTP/1.1 requires (RFC 9112, section 3.2)', [], { Connection: 'close' });
  }
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.length === 4 && req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) return errorResult('bad_http_request', `The request has ${hosts} Host headers; HTTP/1.1 allows one (RFC 9112, section 3.2)`, [], { Connection: 'close' });
  const declared = req.headers['content-length'];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > MAX_BODY_BYTES) {
    return errorResult('payload_too_large', `The request body is larger than the limit of ${MAX_BODY_BYTES} bytes (Content-Length: ${declared.length > 20 ? `${declared.slice(0, 20)}…` : declared})`);
  }
  return null;
}

/**
 * The request listener of the local server: a request scope and the access log around `handle`, and the refusals of
 * the HTTP layer itself (see the file's comment) before it. `handle` must not throw (it answers its own errors).
 *
 * **Example usage:**
 * ```ts
 * http.createServer({ requireHostHeader: false }, serveRequest((req, res, requestId) => dispatch(loaded, req, res, requestId)));
 * ```
 */
export function serveRequest(handle: RequestHandler): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    const requestId = randomUUID();
    withRequestScope(() => {
      if (accessLogOn()) logWhenDone(req, res, requestId, performance.now());
      closeIfAnsweredEarly(req, res);
      const refused = edgeRefusal(req);
      if (refused) {
        writeProxyResult(res, refused, requestId);
        return;
      }
      void handle(req, res, requestId);
    });
  };
}

/**
 * Whether a request's client went away before its answer was sent (the connection closed, or the body was cut off):
 * an error it causes (the body's `aborted`) is no failure of the service, and no 500 is logged for it.
 */
function clientGone(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  return !res.writableFinished && (res.destroyed || req.destroyed || req.socket.destroyed);
}

/**
 * What a request whose handling threw ends with: logged as a failure and answered 500 `internal_error` when its
 * client is still there; when the client went away ({@link clientGone}) nothing is sent and nothing logged as an
 * error (the access log says `aborted`); an answer already under way is cut off.
 */
export function requestFailed(err: unknown, req: http.IncomingMessage, res: http.ServerResponse, requestId: string): void {
  if (clientGone(req, res)) {
    logger.debug('request ended by the client', { requestId, error: (err as Error | null)?.message });
    res.destroy();
    return;
  }
  logger.error('request failed', { requestId, error: err });
  if (!res.headersSent) writeProxyResult(res, errorResult('internal_error', `Internal error; quote request id ${requestId} when reporting it`), requestId);
  else res.destroy();
}
