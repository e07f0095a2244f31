/**
 * Fetching pages through the outbound guard: the HTTP client of the lightweight engine and the tools.
 *
 * Built on undici (one keep-alive Agent per Fetcher). What it adds on top, each a documented default
 * (docs/limits.md):
 * - every connection goes through {@link OutboundGuard}: IP literals are checked before the socket
 *   opens, host names through the socket's `lookup`; redirects are followed here, hop by hop, so each
 *   hop is checked the same way;
 * - a time limit per request (headers and body), a body size cap (compressed and decompressed);
 * - retries with exponential back-off and jitter on 429, 5xx and network errors, honouring Retry-After;
 * - a per-host concurrency limit (undici's `connections` per origin: requests beyond it wait their turn);
 * - the charset from a byte-order mark, else the Content-Type header, else a `<meta>` declaration,
 *   else UTF-8 (the WHATWG encoding sniffing order, prescan of the first 4 KiB).
 */
import zlib from 'node:zlib';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { CodedError } from '../errors.ts';
import { OutboundGuard } from './guard.ts';
import net from 'node:net';
import { sleep } from '../sleep.ts';

/** Options of a {@link Fetcher}. */
export interface FetcherOptions {
  /** Milliseconds a single attempt may take, headers and body. @default 30000 */
  timeoutMs?: number;
  /** Largest body accepted, in bytes, after decompression. @default 10485760 (10 MiB) */
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
  /** The body, decompressed. */
  body: Buffer;
  /** The body decoded with the detected charset. */
  text: string;
  /** The charset used to decode `text`. */
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
  headers?: Record<string, string>;
  method?: 'GET' | 'HEAD';
}

export const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; scrape-ai/0.1; +https://github.com/scrape-ai/scrape-ai)';

const RETRYABLE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED']);

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


/** Parses Retry-After (seconds or an HTTP date) to milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  // An HTTP date has a weekday and a month name; "-1" or "soon" is not one (Date.parse reads "-1" as a year).
  if (!/[a-z]{3}/i.test(value)) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

function isLabel(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the charset of an HTML body: byte-order mark, Content-Type header, `<meta charset>` or
 * `<meta http-equiv="Content-Type" content="…charset=…">` in the first 4 KiB, else utf-8.
 */
export function detectCharset(body: Buffer, contentTypeHeader: string | undefined): string {
  // A BOM outranks the header (HTML encoding sniffing, step 1), as in browsers: a UTF-8 page with a
  // BOM served as latin1 reads as UTF-8, not as "ï»¿" followed by mojibake.
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  const fromHeader = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentTypeHeader ?? '')?.[1];
  if (fromHeader && isLabel(fromHeader)) return fromHeader.toLowerCase();
  const head = body.subarray(0, 4096).toString('latin1');
  const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1];
  if (meta && isLabel(meta)) {
    // A page that declares UTF-16 in a meta tag is read as UTF-8 (HTML spec, prescan rule).
    return /^utf-16/i.test(meta) ? 'utf-8' : meta.toLowerCase();
  }
  return 'utf-8';
}

const decoders = new Map<string, TextDecoder>();

/**
 * Decodes a body with the WHATWG decoder of a charset (a byte-order mark is dropped, bad bytes become U+FFFD);
 * UTF-8 without a BOM, the common case, through Buffer's native decoder, which gives the same text.
 */
function decodeText(body: Buffer, charset: string): string {
  if (charset === 'utf-8' && !(body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf)) return body.toString('utf8');
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

function decompress(body: Buffer, encoding: string | undefined, maxBytes: number, url: string): Buffer {
  const enc = (encoding ?? '').trim().toLowerCase();
  // An empty body (HEAD, 204, 304) carries the encoding header of the resource but no stream to inflate.
  if (!enc || enc === 'identity' || body.length === 0) return body;
  const opts = { maxOutputLength: maxBytes };
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return zlib.gunzipSync(body, { ...opts, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    if (enc === 'deflate') {
      try {
        return zlib.inflateSync(body, opts);
      } catch (err) {
        // Raw deflate (no zlib header) is the fallback for a bad header only: an overrun must stay one.
        if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw err;
        return zlib.inflateRawSync(body, opts);
      }
    }
    if (enc === 'br') return zlib.brotliDecompressSync(body, opts);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || /maxOutputLength|too large/i.test((err as Error).message)) {
      throw new FetchError('response_too_large', `Response of ${url} is larger than ${maxBytes} bytes once decompressed`, url);
    }
    throw new FetchError('fetch_failed', `Could not decompress the ${enc} response of ${url}: ${(err as Error).message}`, url);
  }
  return body;
}

/**
 * An undici Agent that cannot reach an address the guard refuses: host names resolve through `guard.lookup` (the
 * address checked is the address connected to), and a connection to an IP literal, which never calls `lookup`, is
 * checked before the socket opens. Keep-alive connections, `connections` per origin.
 * @param o.timeoutMs headers and body time-out of a request, ms.
 * @param o.connectTimeoutMs time-out of a connection (TCP and TLS), ms.
 */
export function guardedAgent(guard: OutboundGuard, o: { connections: number; timeoutMs: number; connectTimeoutMs: number }): Agent {
  const connector = buildConnector({ lookup: guard.lookup, timeout: o.connectTimeoutMs } as buildConnector.BuildOptions);
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
  private readonly o: Required<FetcherOptions>;

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
    this.agent = guardedAgent(guard, { connections: this.o.perHostConcurrency, timeoutMs: this.o.timeoutMs, connectTimeoutMs: Math.min(this.o.timeoutMs, 10_000) });
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
        if ((page.status === 429 || page.status >= 500) && attempt < this.o.retries) {
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
          throw new FetchError('fetch_failed', `Could not fetch ${url}: ${(err as Error).message}${attempt ? ` (after ${attempt} retries)` : ''}`, url, undefined, err);
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

  private async fetchOnce(startUrl: string, options: FetchRequestOptions): Promise<FetchedPage> {
    const url = this.guard.checkUrl(startUrl);
    // One controller for the attempt's time limit and the caller's signal: cheaper than AbortSignal.timeout()
    // plus AbortSignal.any() per request (their timers and weak references show in a crawl's GC time).
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException(`The request to ${startUrl} exceeded its timeout of ${this.o.timeoutMs} ms`, 'TimeoutError')), this.o.timeoutMs);
    const caller = options.signal;
    const onAbort = () => controller.abort(caller!.reason);
    if (caller) {
      if (caller.aborted) onAbort();
      else caller.addEventListener('abort', onAbort, { once: true });
    }
    try {
      return await this.fetchHops(url, startUrl, options, controller.signal);
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    }
  }

  private async fetchHops(first: URL, startUrl: string, options: FetchRequestOptions, signal: AbortSignal): Promise<FetchedPage> {
    let url = first;
    const origin = url.origin;
    const chain = [first.href];
    for (let hop = 0; ; hop++) {
      const res: Dispatcher.ResponseData = await this.agent.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: options.method ?? 'GET',
        headers: {
          'user-agent': this.o.userAgent,
          accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
          'accept-encoding': 'gzip, deflate, br',
          'accept-language': 'en-US,en;q=0.9',
          // The caller's headers (credentials, say) go to the origin it named, not to where a redirect leads.
          ...(url.origin === origin ? options.headers : {}),
        },
        signal,
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
      const location = headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && location) {
        await res.body.dump();
        if (hop >= this.o.maxRedirects) {
          throw new FetchError('fetch_failed', `Too many redirects (more than ${this.o.maxRedirects}) starting at ${startUrl}`, startUrl);
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new FetchError('fetch_failed', `Bad redirect Location "${location}" from ${url.href}`, url.href);
        }
        url = this.guard.checkUrl(next);
        chain.push(url.href);
        continue;
      }
      const declared = Number(headers['content-length']);
      if (declared > this.o.maxBytes) {
        res.body.destroy();
        throw new FetchError('response_too_large', `Response of ${url.href} is ${declared} bytes, limit ${this.o.maxBytes} bytes`, url.href);
      }
      let raw: Buffer;
      if (declared >= 0 && declared <= this.o.maxBytes) {
        // A declared length within the cap: undici fails a body that runs past it, so read it in one go.
        raw = Buffer.from(await res.body.arrayBuffer());
      } else {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          size += (chunk as Buffer).length;
          if (size > this.o.maxBytes) {
            res.body.destroy();
            throw new FetchError('response_too_large', `Response of ${url.href} exceeds the limit of ${this.o.maxBytes} bytes`, url.href);
          }
          chunks.push(chunk as Buffer);
        }
        raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      }
      const body = decompress(raw, headers['content-encoding'], this.o.maxBytes, url.href);
      const charset = detectCharset(body, headers['content-type']);
      const text = decodeText(body, charset);
      return {
        requestedUrl: startUrl,
        url: url.href,
        status: res.statusCode,
        headers,
        contentType: (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase(),
        body,
        text,
        charset,
        retries: 0,
        setCookies: ([] as string[]).concat(res.headers['set-cookie'] ?? []),
        redirectChain: chain,
      };
    }
  }

  /** Closes idle connections; pending requests are aborted. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}

