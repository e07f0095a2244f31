/**
 * Fetching pages through the outbound guard: the HTTP client of the lightweight engine and the tools.
 *
 * Built on undici (one keep-alive Agent per Fetcher) and its `redirect` interceptor. What it adds on top, each a
 * documented default (docs/limits.md):
 * - every connection goes through {@link OutboundGuard}: IP literals are checked before the socket opens, host
 *   names through the socket's `lookup`; every redirect hop is checked too, before undici follows it (its
 *   Location, then its origin at dispatch), so a hop to a refused address never gets a connection;
 * - a time limit per attempt (headers and body: a server that sends one byte a second is cut off by it), a body
 *   size cap on the bytes received and, streaming, on the bytes decompressed (a gzip or brotli bomb stops at the
 *   cap), and a small cap on the body of a redirect;
 * - retries with exponential back-off and jitter on 429, 5xx and network errors, honouring Retry-After;
 * - a per-host concurrency limit (undici's `connections` per origin: requests beyond it wait their turn);
 * - the charset as browsers find it (WHATWG encoding sniffing, html-encoding-sniffer): a byte-order mark, else the
 *   Content-Type header, else the `<meta>` prescan of the first 1024 bytes, else UTF-8.
 *
 * A response is read by a dispatch handler, not a stream: nothing here can emit an unhandled `error` event, every
 * failure of a body (reset, time-out, size cap, bad compression) settles the fetch's promise once, and a `HEAD`
 * reads no body and is never too large. docs/decisions.md ("Fetcher on undici's parts") says which undici parts are
 * used and which are kept ours.
 */
import zlib from 'node:zlib';
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, interceptors, type Dispatcher } from 'undici';
// @ts-expect-error html-encoding-sniffer ships no type declarations; its one export is typed below.
import htmlEncodingSniffer from 'html-encoding-sniffer';
import { CodedError } from '../errors.ts';
import { OutboundGuard } from './guard.ts';
import { sleep } from '../sleep.ts';
import { connectThrough, redactProxy } from './tunnel.ts';
import type { UpstreamProxy } from './upstream.ts';
import { retryAfterMs } from './retry-after.ts';

/** Options of a {@link Fetcher}. */
export interface FetcherOptions {
  /** Milliseconds a single attempt may take, headers and body (all its redirect hops included). @default 30000 */
  timeoutMs?: number;
  /** Largest body accepted, in bytes, as received and after decompression. @default 10485760 (10 MiB) */
  maxBytes?: number;
  /** Redirects followed per request. @default 10 */
  maxRedirects?: number;
  /** Retries after the first attempt on 429, 5xx and network errors. @default 3 */
  retries?: number;
  /** First back-off delay in ms; doubles per retry, with jitter. @default 500 */
  retryBaseMs?: number;
  /** Longest wait for one retry in ms, Retry-After included. @default 10000 */
  retryMaxMs?: number;
  /** Concurrent connections per origin. @default 4 */
  perHostConcurrency?: number;
  /** The User-Agent header. */
  userAgent?: string;
  /**
   * An upstream proxy every connection goes through (lambdas/net/upstream.ts): the target's address is resolved and
   * checked by the guard here, and the proxy is asked for a tunnel to that address.
   */
  proxy?: UpstreamProxy;
  /** The proxy session's id, for a proxy whose user name has `{session}`. */
  sessionId?: string;
}

/** A fetched page. */
export interface FetchedPage {
  /** The URL asked for. */
  requestedUrl: string;
  /** The final URL after redirects: the base for relative links (with `<base href>` on top). */
  url: string;
  status: number;
  /** Response headers, lower-case names. */
  headers: Record<string, string>;
  /** The MIME type without parameters, lower case ('' when absent). */
  contentType: string;
  /** The body, decompressed (empty for a `HEAD`). */
  body: Buffer;
  /** The body decoded with the detected charset. */
  text: string;
  /** The encoding used to decode `text`: its WHATWG name in lower case (`utf-8`, `windows-1252`, `shift_jis`). */
  charset: string;
  /** Retries spent on this request. */
  retries: number;
  /** Each `Set-Cookie` header of the final response, whole (they cannot be joined with commas). */
  setCookies: string[];
  /** The URL of each hop: the requested URL first, the final URL last (`[url]` without redirects). */
  redirectChain: string[];
}

/** Per-request options. */
export interface FetchRequestOptions {
  signal?: AbortSignal;
  /**
   * Headers on top of the fetcher's. They go to the origin named and its same-origin redirects; at a redirect to
   * another origin the ones that are not standard request headers (User-Agent, Accept, Accept-Language,
   * Accept-Encoding) are dropped, for that hop and every later one.
   */
  headers?: Record<string, string>;
  /** @default GET. POST sends {@link body} (an API config's request, lambdas/engine/api/); a 301, 302 or 303 turns it into a GET, as browsers do. */
  method?: 'GET' | 'HEAD' | 'POST';
  /** The request body of a POST (its Content-Type is the caller's header). */
  body?: string;
  /**
   * Retry 429 and 5xx answers here (with back-off, honouring Retry-After). The crawler passes false: it retries
   * them itself on both engines, under the host's pace (lambdas/engine/crawl/access.ts). Network errors are
   * retried either way. @default true
   */
  retryStatuses?: boolean;
  /** This request's body cap, bytes, instead of the fetcher's (robots.txt: 512 KiB). */
  maxBytes?: number;
  /** This request's time limit per attempt, ms, instead of the fetcher's (robots.txt: 8 s). */
  timeoutMs?: number;
}

export const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; scrape-ai/0.1; +https://github.com/scrape-ai/scrape-ai)';

/** Largest body of a redirect response read before the fetch fails (its body is never used). */
export const REDIRECT_BODY_MAX_BYTES = 128 * 1024;

const RETRYABLE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED']);

/** The statuses undici's redirect handler follows (a 304 with a Location is not a redirect). */
const REDIRECT_STATUSES = new Set([300, 301, 302, 303, 307, 308]);

/** The request headers every fetch sends; a caller's headers of these names replace them and follow any redirect. */
const STANDARD_HEADERS = new Set(['user-agent', 'accept', 'accept-encoding', 'accept-language']);

/** A fetch that failed for good; code `fetch_failed` (or `response_too_large`). */
export class FetchError extends CodedError {
  readonly status?: number;
  /**
   * @param cause the error of the last attempt (a Node system error with its `code`, a TimeoutError), so that
   *   callers can say why (lambdas/tools/run.ts tells DNS from refused, reset, time-out and TLS).
   */
  constructor(code: 'fetch_failed' | 'response_too_large', message: string, url: string, status?: number, cause?: unknown) {
    super(code, message, [{ url, ...(status ? { status } : {}) }]);
    this.name = 'FetchError';
    if (status !== undefined) this.status = status;
    if (cause !== undefined) this.cause = cause;
  }
}

/** Retry-After, read where the extension can bundle it too (./retry-after.ts). */
export { retryAfterMs };

/** html-encoding-sniffer: the HTML standard's encoding sniffing; returns a WHATWG encoding name ("UTF-8", "Shift_JIS"). */
const sniffEncoding = htmlEncodingSniffer as (bytes: Uint8Array, options?: { xml?: boolean; transportLayerEncodingLabel?: string; defaultEncoding?: string }) => string;

/** The `charset` parameter of a Content-Type header, unquoted, or undefined. */
function charsetParam(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  return /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1];
}

/**
 * Finds the encoding of an HTML body as a browser does (the HTML standard's encoding sniffing, by
 * html-encoding-sniffer): a byte-order mark; else the Content-Type header's charset when it names an encoding; else a
 * `<meta charset>` or `<meta http-equiv="Content-Type" content="…charset=…">` in the first 1024 bytes (a meta
 * UTF-16 means UTF-8); else UTF-8.
 * @returns the WHATWG name of the encoding in lower case: `utf-8`, `windows-1252` (also for `iso-8859-1`, `latin1`
 *   and `us-ascii`, as in browsers), `shift_jis`, `utf-16le`, or `replacement` for the labels browsers refuse to
 *   decode (`iso-2022-kr`, `hz-gb-2312`…).
 */
export function detectCharset(body: Uint8Array, contentTypeHeader: string | undefined): string {
  const label = charsetParam(contentTypeHeader);
  try {
    return sniffEncoding(body, { transportLayerEncodingLabel: label, defaultEncoding: 'UTF-8' }).toLowerCase();
  } catch {
    // html-encoding-sniffer 6.0.0 throws a TypeError on a meta `content` that ends right after `charset` or `charset=`
    // (it reads past the string): the prescan found nothing usable. BOM, then header, then UTF-8, without it.
    return sniffEncoding(body, { xml: true, transportLayerEncodingLabel: label, defaultEncoding: 'UTF-8' }).toLowerCase();
  }
}

const decoders = new Map<string, TextDecoder>();

/**
 * Decodes a body with the WHATWG decoder of an encoding (a byte-order mark is dropped, bad bytes become U+FFFD);
 * UTF-8 without a BOM, the common case, through Buffer's native decoder, which gives the same text. The
 * `replacement` encoding decodes a non-empty body to one U+FFFD, as browsers do.
 */
function decodeText(body: Buffer, charset: string): string {
  if (charset === 'utf-8' && !(body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf)) return body.toString('utf8');
  if (charset === 'replacement') return body.length ? '\uFFFD' : '';
  let decoder = decoders.get(charset);
  if (!decoder) {
    try {
      decoder = new TextDecoder(charset);
    } catch {
      return body.toString('utf8');
    }
    decoders.set(charset, decoder);
  }
  return decoder.decode(body);
}

/**
 * An undici Agent that cannot reach an address the guard refuses: host names resolve through `guard.lookup` (the
 * address checked is the address connected to), and a connection to an IP literal, which never calls `lookup`, is
 * checked before the socket opens. Keep-alive connections, `connections` per origin.
 * @param o.timeoutMs headers and body time-out of a request, ms.
 * @param o.connectTimeoutMs time-out of a connection (TCP and TLS), ms.
 */
export function guardedAgent(guard: OutboundGuard, o: { connections: number; timeoutMs: number; connectTimeoutMs: number; proxy?: UpstreamProxy; sessionId?: string }): Agent {
  const connector = buildConnector({ lookup: guard.lookup, timeout: o.connectTimeoutMs } as buildConnector.BuildOptions);
  const proxy = o.proxy;
  if (proxy) {
    return new Agent({
      connections: o.connections,
      keepAliveTimeout: 4_000,
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
      // Through the operator's proxy: the guard resolves and checks the target, the tunnel goes to that address.
      connect: (opts, callback) => {
        const host = opts.hostname.replace(/^\[|\]$/g, '');
        const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
        guard.resolveChecked(host)
          .then(([a]) => connectThrough(proxy, { address: a!.address, port }, {
            timeoutMs: o.connectTimeoutMs, ...(o.sessionId ? { sessionId: o.sessionId } : {}),
            ...(opts.protocol === 'https:' ? { tlsTo: opts.servername || host, alpn: ['http/1.1'] } : {}),
          }))
          .then((socket) => callback(null, socket as TLSSocket), (err: Error) => callback(err, null));
      },
    });
  }
  return new Agent({
    connections: o.connections,
    keepAliveTimeout: 4_000,
    headersTimeout: o.timeoutMs,
    bodyTimeout: o.timeoutMs,
    // Second line of defence: a connection to an IP literal never calls lookup, so check it here too.
    connect: (opts, callback) => {
      const host = opts.hostname.replace(/^\[|\]$/g, '');
      if (net.isIP(host)) {
        try {
          // undici hands IPv6 hosts over without brackets; put them back so the URL parses.
          guard.checkUrl(`${opts.protocol}//${net.isIPv6(host) ? `[${host}]` : host}/`);
        } catch (err) {
          callback(err as Error, null);
          return;
        }
      }
      connector(opts, callback);
    },
  });
}

/** The origin {@link Fetcher.fetch} checked before its first dispatch (carried along by undici's redirect handler). */
const kCheckedOrigin = Symbol('scrape-ai.checkedOrigin');
/** The caller's own headers of one attempt, dropped from its first hop to another origin on (see {@link hopGuard}). */
const kCrossOriginStrip = Symbol('scrape-ai.crossOriginStrip');

/** Headers (lower-case names) sent to the first origin only; `crossed` once a hop has gone to another origin. */
interface CrossOriginStrip {
  readonly names: ReadonlySet<string>;
  readonly origin: string;
  crossed: boolean;
}

type GuardedDispatchOptions = Dispatcher.DispatchOptions & { [kCheckedOrigin]?: string; [kCrossOriginStrip]?: CrossOriginStrip };

/** A request's headers without the names given, whichever shape undici holds them in (an object, a flat array, pairs). */
function withoutHeaders(headers: Dispatcher.DispatchOptions['headers'], names: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const keep = (name: unknown, value: unknown) => {
    if (value === undefined || names.has(String(name).toLowerCase())) return;
    for (const v of Array.isArray(value) ? value : [value]) out.push(String(name), String(v));
  };
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) for (const [name, value] of headers as unknown as Array<[string, unknown]>) keep(name, value);
    else for (let i = 0; i < headers.length; i += 2) keep(headers[i], headers[i + 1]);
  } else if (headers && typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [name, value] of headers as Iterable<[string, unknown]>) keep(name, value);
  } else if (headers) {
    for (const [name, value] of Object.entries(headers)) keep(name, value);
  }
  return out;
}

/**
 * The interceptor under undici's redirect interceptor, so it sees every hop: a hop to an origin not checked yet is
 * checked by the guard before it is dispatched, and each response goes through a {@link GuardedHop}. The caller's
 * own headers ({@link kCrossOriginStrip}) are left out from the first hop to another origin on, back on the first
 * origin too (undici 7's redirect handler drops only Authorization, Cookie and Proxy-Authorization; 8's
 * `stripHeadersOnCrossOriginRedirect` needs Node 22).
 */
function hopGuard(guard: OutboundGuard, redirectBodyMax: number): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts: GuardedDispatchOptions, handler) => {
    const origin = String(opts.origin);
    if (opts[kCheckedOrigin] !== origin) {
      try {
        guard.checkUrl(origin);
      } catch (err) {
        handler.onResponseError?.(null as unknown as Dispatcher.DispatchController, err as Error);
        return false;
      }
    }
    const strip = opts[kCrossOriginStrip];
    if (strip && (strip.crossed || origin !== strip.origin)) {
      strip.crossed = true;
      opts = { ...opts, headers: withoutHeaders(opts.headers, strip.names) };
    }
    return dispatch(opts, new GuardedHop(handler, guard, origin, opts.path, redirectBodyMax));
  };
}

/**
 * One hop's response on its way to undici's redirect handler: a redirect's Location is checked by the guard before
 * the redirect handler can follow it (a refused scheme or address fails the fetch with `target_forbidden` and no
 * connection), an unreadable Location fails it, and a redirect's body is capped (it is never used).
 */
class GuardedHop implements Dispatcher.DispatchHandler {
  private readonly handler: Dispatcher.DispatchHandler;
  private readonly guard: OutboundGuard;
  private readonly origin: string;
  private readonly path: string;
  private readonly redirectBodyMax: number;
  /** Bytes of a redirect's body so far; -1 when the response is not a redirect. */
  private redirectBytes = -1;

  constructor(handler: Dispatcher.DispatchHandler, guard: OutboundGuard, origin: string, path: string, redirectBodyMax: number) {
    this.handler = handler;
    this.guard = guard;
    this.origin = origin;
    this.path = path;
    this.redirectBodyMax = redirectBodyMax;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.handler.onRequestStart?.(controller, context);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>, statusMessage?: string): void {
    const location = headers.location;
    if (REDIRECT_STATUSES.has(statusCode) && location) {
      this.redirectBytes = 0;
      const here = `${this.origin}${this.path}`;
      let next: URL;
      try {
        next = new URL(String(location), here);
      } catch {
        controller.abort(new FetchError('fetch_failed', `Bad redirect Location "${String(location).slice(0, 200)}" from ${here}`, here));
        return;
      }
      try {
        this.guard.checkUrl(next);
      } catch (err) {
        controller.abort(err as Error);
        return;
      }
    }
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.redirectBytes >= 0) {
      this.redirectBytes += chunk.length;
      if (this.redirectBytes > this.redirectBodyMax) {
        const here = `${this.origin}${this.path}`;
        controller.abort(new FetchError('response_too_large', `The redirect response of ${here} has a body over ${this.redirectBodyMax} bytes`, here));
        return;
      }
    }
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Record<string, string | string[] | undefined>): void {
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.handler.onResponseError?.(controller, error);
  }
}

/** What a {@link PageHandler} needs of its fetcher. */
interface PageLimits {
  maxBytes: number;
  maxRedirects: number;
  timeoutMs: number;
}

/** The Content-Encodings decompressed (others are returned as received). */
type Encoding = 'gzip' | 'deflate' | 'br';

function encodingOf(header: string | undefined): Encoding | null {
  if (!header) return null;
  const e = header.trim().toLowerCase();
  if (e === 'gzip' || e === 'x-gzip') return 'gzip';
  if (e === 'deflate' || e === 'br') return e;
  return null;
}

/** Output chunk of the decompressors: larger than zlib's 16 KiB, fewer thread-pool round trips per page. */
const DECOMPRESS_CHUNK = 64 * 1024;

/**
 * A streaming decompressor for an encoding (its work runs on libuv's thread pool, never synchronously). `deflate`
 * is zlib-wrapped per RFC 9110, but some servers send raw deflate, which browsers read too: the first two bytes
 * tell (a zlib header is `CMF FLG` with compression method 8 and `(CMF*256+FLG) % 31 == 0`). gzip and deflate
 * tolerate a truncated stream (Z_SYNC_FLUSH at the end), as browsers show what arrived.
 */
function createDecompressor(encoding: Encoding, head: Buffer): zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress {
  const opts = { chunkSize: DECOMPRESS_CHUNK, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (encoding === 'gzip') return zlib.createGunzip(opts);
  if (encoding === 'br') return zlib.createBrotliDecompress({ chunkSize: DECOMPRESS_CHUNK });
  const zlibHeader = head.length >= 2 && (head[0]! & 0x0f) === 8 && ((head[0]! << 8) | head[1]!) % 31 === 0;
  return zlibHeader ? zlib.createInflate(opts) : zlib.createInflateRaw(opts);
}

const EMPTY = Buffer.alloc(0);

/**
 * Reads one attempt's final response (after undici's redirect handler) into a {@link FetchedPage}, or fails it:
 * the attempt's time limit and the caller's signal abort it, a body over the cap (declared, received or
 * decompressed) fails it with `response_too_large`, a redirect past the limit or a redirect loop with
 * `fetch_failed`; undici's own errors (reset, closed, time-outs) are passed on for the retry loop to judge. It
 * settles once; whatever happens later (a late error of an aborted socket, a decompressor's last output) is
 * ignored, and the decompressor always has its `error` listener.
 */
class PageHandler implements Dispatcher.DispatchHandler {
  private done = false;
  private controller: Dispatcher.DispatchController | null = null;
  /** The reason to abort with once the request starts (it was still queued for a connection). */
  private pendingAbort: Error | null = null;
  private history: URL[] | undefined;
  private status = 0;
  private headers: Record<string, string> = {};
  private setCookies: string[] = [];
  private ignoreBody = false;
  private encoding: Encoding | null = null;
  private chunks: Buffer[] = [];
  private received = 0;
  private decompressor: zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress | null = null;
  /** The first bytes of a deflate body, until there are two to tell zlib from raw deflate. */
  private deflateHead: Buffer | null = null;
  private decoded: Buffer[] = [];
  private decodedSize = 0;
  private responseEnded = false;
  private readonly timer: NodeJS.Timeout;
  private readonly limits: PageLimits;
  private readonly first: URL;
  private readonly startUrl: string;
  private readonly method: 'GET' | 'HEAD' | 'POST';
  private readonly signal: AbortSignal | undefined;
  private readonly resolve: (page: FetchedPage) => void;
  private readonly reject: (err: unknown) => void;

  constructor(limits: PageLimits, first: URL, startUrl: string, method: 'GET' | 'HEAD' | 'POST', signal: AbortSignal | undefined,
    resolve: (page: FetchedPage) => void, reject: (err: unknown) => void) {
    this.limits = limits;
    this.first = first;
    this.startUrl = startUrl;
    this.method = method;
    this.signal = signal;
    this.resolve = resolve;
    this.reject = reject;
    // No closure per request: the timer gets the handler as its argument, the signal calls handleEvent.
    this.timer = setTimeout(PageHandler.onTimeout, limits.timeoutMs, this);
    signal?.addEventListener('abort', this, { once: true });
  }

  private static onTimeout(h: PageHandler): void {
    h.fail(new DOMException(`The request to ${h.startUrl} exceeded its timeout of ${h.limits.timeoutMs} ms`, 'TimeoutError'));
  }

  /** The caller's signal aborted (EventListener interface). */
  handleEvent(): void {
    this.fail(this.signal!.reason);
  }

  /** The URL of the response being read: the last hop's. */
  private get currentUrl(): string {
    const h = this.history;
    return h && h.length > 1 ? h[h.length - 1]!.href : this.first.href;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: { history?: URL[] } | undefined): void {
    this.controller = controller;
    if (context?.history) this.history = context.history;
    if (this.pendingAbort) controller.abort(this.pendingAbort);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (this.done || statusCode < 200) return; // 1xx: informational, the response follows
    this.controller = controller;
    this.status = statusCode;
    const out: Record<string, string> = {};
    for (const name in headers) {
      const v = headers[name];
      out[name.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
    }
    this.headers = out;
    const cookies = headers['set-cookie'];
    if (cookies !== undefined) this.setCookies = Array.isArray(cookies) ? cookies : [cookies];
    if (REDIRECT_STATUSES.has(statusCode) && out.location) {
      // undici's redirect handler follows up to maxRedirects and hands over the one after.
      this.fail(new FetchError('fetch_failed', `Too many redirects (more than ${this.limits.maxRedirects}) starting at ${this.startUrl}`, this.startUrl));
      return;
    }
    // A HEAD has no body, whatever its Content-Length says (it is the length a GET would get); nor do 204 and 304.
    this.ignoreBody = this.method === 'HEAD' || statusCode === 204 || statusCode === 304;
    if (this.ignoreBody) return;
    const declared = Number(out['content-length']);
    if (declared > this.limits.maxBytes) {
      this.fail(new FetchError('response_too_large', `Response of ${this.currentUrl} is ${declared} bytes, limit ${this.limits.maxBytes} bytes`, this.currentUrl));
      return;
    }
    this.encoding = encodingOf(out['content-encoding']);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done || this.ignoreBody) return;
    this.received += chunk.length;
    if (this.received > this.limits.maxBytes) {
      this.fail(new FetchError('response_too_large', `Response of ${this.currentUrl} exceeds the limit of ${this.limits.maxBytes} bytes`, this.currentUrl));
      return;
    }
    if (!this.encoding) {
      this.chunks.push(chunk);
      return;
    }
    let input = chunk;
    if (!this.decompressor) {
      if (this.encoding === 'deflate' && (this.deflateHead ? this.deflateHead.length : 0) + chunk.length < 2) {
        this.deflateHead = this.deflateHead ? Buffer.concat([this.deflateHead, chunk]) : chunk;
        return;
      }
      if (this.deflateHead) {
        input = Buffer.concat([this.deflateHead, chunk]);
        this.deflateHead = null;
      }
      this.startDecompressor(input);
    }
    if (!this.decompressor!.write(input)) controller.pause();
  }

  onResponseEnd(): void {
    if (this.done) return;
    this.responseEnded = true;
    if (this.encoding && !this.decompressor && this.deflateHead) this.startDecompressor(this.deflateHead);
    if (this.decompressor) this.decompressor.end();
    else this.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.done) return;
    if ((error as { code?: string }).code === 'UND_ERR_INVALID_ARG' && /redirect loop/i.test(error.message)) {
      this.fail(new FetchError('fetch_failed', `Redirect loop starting at ${this.startUrl}: ${this.currentUrl} leads back to a URL already visited`, this.startUrl, undefined, error));
      return;
    }
    this.fail(error);
  }

  private startDecompressor(head: Buffer): void {
    const z = createDecompressor(this.encoding!, head);
    this.decompressor = z;
    z.on('data', (out: Buffer) => {
      if (this.done) return;
      this.decodedSize += out.length;
      if (this.decodedSize > this.limits.maxBytes) {
        this.fail(new FetchError('response_too_large', `Response of ${this.currentUrl} is larger than ${this.limits.maxBytes} bytes once decompressed`, this.currentUrl));
        return;
      }
      this.decoded.push(out);
    });
    z.on('drain', () => {
      if (!this.done) this.controller?.resume();
    });
    z.on('error', (err: Error) => {
      this.fail(new FetchError('fetch_failed', `Could not decompress the ${this.encoding} response of ${this.currentUrl}: ${err.message}`, this.currentUrl, undefined, err));
    });
    z.on('end', () => {
      if (this.responseEnded) this.finish();
    });
  }

  /**
   * Settles with an error, once: stops the timer, the decompressor and the request. The request may be a redirect
   * hop still queued for a connection, so the reason is kept for {@link onRequestStart}; aborting a request that
   * already ended does nothing.
   */
  private fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.cleanup();
    this.pendingAbort = err as Error;
    this.controller?.abort(err as Error);
    this.reject(err);
  }

  private cleanup(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
    if (this.decompressor) this.decompressor.destroy();
    this.chunks = [];
    this.decoded = [];
  }

  private finish(): void {
    if (this.done) return;
    let body: Buffer;
    if (this.encoding) body = this.decoded.length === 1 ? this.decoded[0]! : this.decoded.length ? Buffer.concat(this.decoded, this.decodedSize) : EMPTY;
    else body = this.chunks.length === 1 ? this.chunks[0]! : this.chunks.length ? Buffer.concat(this.chunks, this.received) : EMPTY;
    this.done = true;
    this.cleanup();
    try {
      const contentType = this.headers['content-type'];
      const charset = detectCharset(body, contentType);
      const h = this.history;
      const redirected = h !== undefined && h.length > 1;
      this.resolve({
        requestedUrl: this.startUrl,
        url: redirected ? h[h.length - 1]!.href : this.first.href,
        status: this.status,
        headers: this.headers,
        contentType: contentType ? contentType.split(';')[0]!.trim().toLowerCase() : '',
        body,
        text: decodeText(body, charset),
        charset,
        retries: 0,
        setCookies: this.setCookies,
        redirectChain: redirected ? [this.first.href, ...h.slice(1).map((u) => u.href)] : [this.first.href],
      });
    } catch (err) {
      this.reject(err);
    }
  }
}

/**
 * An HTTP client for pages, safe by construction: it cannot reach an address the guard refuses.
 *
 * **Example usage:**
 * ```ts
 * const fetcher = new Fetcher(OutboundGuard.fromEnv(), { perHostConcurrency: 8 });
 * const page = await fetcher.fetch('https://books.toscrape.com/');
 * console.log(page.status, page.url, page.text.length);
 * await fetcher.close();
 * ```
 */
export class Fetcher {
  readonly guard: OutboundGuard;
  private readonly agent: Agent;
  private readonly dispatcher: Dispatcher;
  private readonly o: Required<Omit<FetcherOptions, 'proxy' | 'sessionId'>>;
  /** The upstream proxy of every connection, or null. */
  readonly proxy: UpstreamProxy | null;
  /** The request headers of a fetch without headers of its own (shared: undici does not change them). */
  private readonly baseHeaders: Readonly<Record<string, string>>;

  constructor(guard: OutboundGuard, options: FetcherOptions = {}) {
    this.guard = guard;
    this.o = {
      timeoutMs: options.timeoutMs ?? 30_000,
      maxBytes: options.maxBytes ?? 10 * 1024 * 1024,
      maxRedirects: options.maxRedirects ?? 10,
      retries: options.retries ?? 3,
      retryBaseMs: options.retryBaseMs ?? 500,
      retryMaxMs: options.retryMaxMs ?? 10_000,
      perHostConcurrency: options.perHostConcurrency ?? 4,
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    };
    this.baseHeaders = Object.freeze({
      'user-agent': this.o.userAgent,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-encoding': 'gzip, deflate, br',
      'accept-language': 'en-US,en;q=0.9',
    });
    this.agent = guardedAgent(guard, {
      connections: this.o.perHostConcurrency, timeoutMs: this.o.timeoutMs, connectTimeoutMs: Math.min(this.o.timeoutMs, 10_000),
      ...(options.proxy ? { proxy: options.proxy } : {}), ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    });
    this.proxy = options.proxy ?? null;
    // compose(a, b): b wraps a, so the redirect handler sees each hop only after hopGuard has.
    this.dispatcher = this.agent.compose(
      hopGuard(guard, Math.min(REDIRECT_BODY_MAX_BYTES, this.o.maxBytes)),
      interceptors.redirect({ maxRedirections: this.o.maxRedirects }),
    );
  }

  /**
   * Fetches a URL, following redirects and retrying transient failures.
   * Non-2xx final responses are returned, not thrown (the caller decides what a 404 means).
   * @throws TargetForbiddenError (lambdas/net/guard.ts) when the URL or a redirect hop is refused by the guard.
   * @throws FetchError `fetch_failed` after the last retry, `response_too_large` past {@link FetcherOptions.maxBytes}.
   * @throws the signal's reason when aborted.
   */
  async fetch(url: string, options: FetchRequestOptions = {}): Promise<FetchedPage> {
    let attempt = 0;
    for (;;) {
      try {
        const page = await this.fetchOnce(url, options);
        if ((page.status === 429 || page.status >= 500) && attempt < this.o.retries && options.retryStatuses !== false) {
          const wait = Math.min(this.o.retryMaxMs, retryAfterMs(page.headers['retry-after']) ?? this.backoff(attempt));
          attempt++;
          await sleep(wait, options.signal);
          continue;
        }
        page.retries = attempt;
        return page;
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        const code = (err as NodeJS.ErrnoException).code ?? '';
        const transient = RETRYABLE_CODES.has(code) || (err as Error).name === 'TimeoutError';
        if (!transient || attempt >= this.o.retries) {
          if (err instanceof CodedError && !(err as { syscall?: unknown }).syscall) throw err;
          const message = this.proxy ? redactProxy((err as Error).message, this.proxy) : (err as Error).message;
          throw new FetchError('fetch_failed', `Could not fetch ${url}: ${message}${attempt ? ` (after ${attempt} retries)` : ''}`, url, undefined, err);
        }
        await sleep(this.backoff(attempt), options.signal);
        attempt++;
      }
    }
  }

  private backoff(attempt: number): number {
    const base = this.o.retryBaseMs * 2 ** attempt;
    return Math.min(this.o.retryMaxMs, base / 2 + Math.random() * base / 2);
  }

  /** One attempt: the request and its redirects, within the attempt's time limit. */
  private fetchOnce(startUrl: string, options: FetchRequestOptions): Promise<FetchedPage> {
    let url: URL;
    try {
      url = this.guard.checkUrl(startUrl);
    } catch (err) {
      return Promise.reject(err);
    }
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    const method = options.method ?? 'GET';
    let headers: Record<string, string> = this.baseHeaders as Record<string, string>;
    let strip: string[] | undefined;
    if (options.headers) {
      headers = { ...this.baseHeaders };
      for (const name in options.headers) {
        const lower = name.toLowerCase();
        headers[lower] = options.headers[name]!;
        // The caller's own headers (credentials, say) go to the origin it named, not to where a redirect leads.
        if (!STANDARD_HEADERS.has(lower)) (strip ??= []).push(lower);
      }
    }
    const origin = url.origin;
    const opts: GuardedDispatchOptions = {
      origin,
      path: url.pathname + url.search,
      method,
      headers,
      ...(options.body !== undefined && method === 'POST' ? { body: options.body } : {}),
      [kCheckedOrigin]: origin,
    };
    if (strip) opts[kCrossOriginStrip] = { names: new Set(strip), origin, crossed: false };
    return new Promise<FetchedPage>((resolve, reject) => {
      const limits = options.maxBytes === undefined && options.timeoutMs === undefined ? this.o
        : { maxRedirects: this.o.maxRedirects, maxBytes: Math.min(options.maxBytes ?? this.o.maxBytes, this.o.maxBytes), timeoutMs: Math.min(options.timeoutMs ?? this.o.timeoutMs, this.o.timeoutMs) };
      const handler = new PageHandler(limits, url, startUrl, method, options.signal, resolve, reject);
      this.dispatcher.dispatch(opts, handler);
    });
  }

  /**
   * A fetcher like this one (its limits, retries, User-Agent, guard) whose connections go through `proxy`: a proxy
   * session's (lambdas/engine/crawl/proxy-sessions.ts). Close it when done.
   */
  withProxy(proxy: UpstreamProxy, sessionId: string): Fetcher {
    return new Fetcher(this.guard, { ...this.o, proxy, sessionId });
  }

  /**
   * How this fetcher retries 429 and 5xx answers (its options): the crawler, which retries them itself on both engines
   * (lambdas/engine/crawl/access.ts), follows the same policy.
   */
  get retryPolicy(): { retries: number; retryBaseMs: number; retryMaxMs: number } {
    return { retries: this.o.retries, retryBaseMs: this.o.retryBaseMs, retryMaxMs: this.o.retryMaxMs };
  }

  /** Closes idle connections; pending requests are aborted. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
