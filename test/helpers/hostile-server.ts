/**
 * A loopback HTTP server that misbehaves on purpose: the pages a hostile user asks the service to fetch (issue 24's
 * fault suite). Each behaviour has a path; {@link HostileServer.url} builds its URL, with parameters.
 *
 * ```ts
 * const hostile = await startHostileServer();
 * await fetcher.fetch(hostile.url('gzip-bomb', { mib: 512 }));      // → response_too_large
 * hostile.hits('gzip-bomb');                                       // requests it answered
 * hostile.inside.connections;                                      // connections the "internal" listener saw
 * await hostile.close();
 * ```
 *
 * Transport behaviours (parameters and defaults in brackets):
 * - `ok`: a small UTF-8 HTML page with a title and three list items (a control).
 * - `status`: answers `code` [503] with a small page, and `Retry-After: retryAfter` when given.
 * - `declared-length`: `Content-Length: bytes` [614400, an ordinary 600 KB article] and that many bytes of `a` on GET;
 *   on HEAD the headers only, as Python's http.server does.
 * - `short-body`: declares `declared` [1000] bytes, sends `sent` [500], then closes the connection.
 * - `long-body`: declares `declared` [10] bytes and sends them, followed in the same write by a whole second
 *   response (`HTTP/1.1 200 OK … SMUGGLED`), and keeps the connection open: a client that reuses the connection
 *   reads the smuggled answer as the next one.
 * - `reset-mid-body`: declares `declared` [1048576] bytes, sends `sent` [16384], then resets the connection (TCP RST).
 * - `gzip-bomb`, `deflate-bomb`, `brotli-bomb`: `mib` [256] MiB of zeros, compressed to about 255 KB (gzip,
 *   deflate) or under 1 KB (brotli), with the matching Content-Encoding and a Content-Length. Built once per size
 *   (about 0.4 s of a thread-pool thread per 256 MiB of gzip); {@link HostileServer.prepare} builds them ahead.
 * - `endless`: a chunked body of `a` that never ends (64 KiB chunks, as fast as the client reads).
 * - `drip`: headers, then one byte every `interval` ms [1000], for ever.
 * - `hang`: reads the request and never answers.
 * - `wrong-charset`: the bytes are UTF-8 ({@link WRONG_CHARSET_TEXT}), the header says `header` [windows-1251; `none`
 *   for no charset parameter], a `<meta charset>` says `meta` [shift_jis; `none` for no meta]; `bom=1` puts a UTF-8
 *   byte-order mark first.
 * - `redirect-to`: redirects (`code` [302]) to `to`, any URL (an internal address, another scheme); `endless=1`
 *   gives the redirect a chunked body that never ends.
 * - `redirect-loop`: redirects to itself.
 * - `redirect-pingpong`: `/redirect-pingpong/a` and `/b` redirect to each other.
 * - `redirect-endless`: `/redirect-endless/N/` redirects to `/redirect-endless/N+1/`, for ever (never a URL twice).
 *
 * Page behaviours (HTML that is costly to parse, extract or render; `text/html; charset=utf-8`):
 * - `nested`: `depth` [100000] nested `<div>`s around one word; `closed=0` leaves them unclosed.
 * - `unclosed-tables`: `<table><tr><td>` repeated, never closed, to `mb` [5] MB.
 * - `phone-digits`: `mb` [5] MB of phone-number-like digit groups in one `<p>`.
 * - `deep-json-ld`: a JSON-LD script of `depth` [500000] `[`s, unclosed; `closed=1` closes them (valid JSON).
 * - `alert`: calls `alert()`, `confirm()` and `prompt()` while loading, then shows three items.
 * - `self-navigation`: navigates to itself (`?n=N+1`) every `ms` [100] ms while rendering, `times` [for ever] times.
 * - `memory-bomb`: JavaScript that allocates until the renderer runs out of memory.
 * - `regex-bait`: ten `<li class="item">` whose text is 40 `a`s and a `!` (for `regex:^(a+)+$`).
 *
 * A second listener, {@link HostileServer.inside}, stands for an internal service: it listens on another loopback
 * address (`127.0.0.2`, which a guard allowing only `127.0.0.1/32` refuses) and counts every connection it gets, so
 * a test can prove that a redirect there never connected. Every request either listener reads is in `requests`.
 */
import http from 'node:http';
import type net from 'node:net';
import zlib from 'node:zlib';

/** The behaviours, by path segment. */
export const HOSTILE_BEHAVIOURS = [
  'ok', 'status', 'declared-length', 'short-body', 'long-body', 'reset-mid-body', 'gzip-bomb', 'deflate-bomb', 'brotli-bomb',
  'endless', 'drip', 'hang', 'wrong-charset', 'redirect-to', 'redirect-loop', 'redirect-pingpong', 'redirect-endless',
  'nested', 'unclosed-tables', 'phone-digits', 'deep-json-ld', 'alert', 'self-navigation', 'memory-bomb', 'regex-bait',
] as const;

export type HostileBehaviour = (typeof HOSTILE_BEHAVIOURS)[number];

/** The text of `wrong-charset`, whose bytes are its UTF-8 encoding. */
export const WRONG_CHARSET_TEXT = 'Grüße – “naïve” café, 日本語';

/** The body `long-body` smuggles after the declared bytes. */
export const SMUGGLED_BODY = 'SMUGGLED';

/** One request a listener read. */
export interface HostileRequest {
  listener: 'main' | 'inside';
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** Options of {@link startHostileServer}. */
export interface HostileServerOptions {
  /** The main listener's address (loopback). @default '127.0.0.1' */
  host?: string;
  /** The internal listener's address (loopback, other than `host`). @default '127.0.0.2' */
  insideHost?: string;
}

/** A running hostile server. */
export interface HostileServer {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly port: number;
  /** The URL of a behaviour, with its parameters as the query string. */
  url(behaviour: HostileBehaviour, params?: Record<string, string | number | boolean>): string;
  /** Requests answered (or refused to be answered) for a behaviour, since the start or the last `reset()`. */
  hits(behaviour: HostileBehaviour): number;
  /** Every request read, in order. */
  readonly requests: readonly HostileRequest[];
  /** Connections the main listener accepted. */
  readonly connections: number;
  /** The internal listener: its origin and the connections it accepted (a test wants 0). */
  readonly inside: { readonly origin: string; readonly connections: number };
  /** Builds the compressed bombs of the default size ahead (so a timed fetch does not wait for them). */
  prepare(): Promise<void>;
  /** Forgets the requests and counts seen so far. */
  reset(): void;
  /** Stops both listeners, closes every connection and stops every timer. */
  close(): Promise<void>;
}

const MiB = 1024 * 1024;
const bombs = new Map<string, Promise<Buffer>>();

/** `mib` MiB of zeros through a streaming compressor (a thread-pool thread), cached per kind and size. */
function bomb(kind: 'gzip' | 'deflate' | 'br', mib: number): Promise<Buffer> {
  const key = `${kind}:${mib}`;
  let p = bombs.get(key);
  if (!p) {
    p = (async () => {
      const z = kind === 'gzip' ? zlib.createGzip({ level: 9 })
        : kind === 'deflate' ? zlib.createDeflate({ level: 9 })
        : zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: mib * MiB } });
      const out: Buffer[] = [];
      z.on('data', (c: Buffer) => out.push(c));
      const ended = new Promise<void>((resolve, reject) => {
        z.on('end', resolve);
        z.on('error', reject);
      });
      const zeros = Buffer.alloc(MiB);
      for (let i = 0; i < mib; i++) {
        if (!z.write(zeros)) await new Promise((r) => z.once('drain', r));
      }
      z.end();
      await ended;
      return Buffer.concat(out);
    })();
    bombs.set(key, p);
  }
  return p;
}

const pages = new Map<string, string>();

/** A generated page, cached by key. */
function page(key: string, make: () => string): string {
  let p = pages.get(key);
  if (p === undefined) {
    p = make();
    pages.set(key, p);
  }
  return p;
}

function html(body: string, head = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>hostile</title>${head}</head><body>${body}</body></html>`;
}

/** Repeats `unit` until the text reaches `bytes`. */
function fill(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / unit.length));
}

/** Phone-like digit groups (a fixed pseudo-random sequence) to `bytes`. */
function phoneDigits(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  let x = 12345;
  while (size < bytes) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const d = String(x).padStart(10, '0');
    const part = `+1 (${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6, 10)} ${d.slice(2, 5)} `;
    parts.push(part);
    size += part.length;
  }
  return parts.join('');
}

/** Starts the server on two loopback addresses and free ports. */
export async function startHostileServer(options: HostileServerOptions = {}): Promise<HostileServer> {
  const host = options.host ?? '127.0.0.1';
  const insideHost = options.insideHost ?? '127.0.0.2';
  const requests: HostileRequest[] = [];
  const counts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let connections = 0;
  let insideConnections = 0;

  const every = (ms: number, fn: () => void, stop: net.Socket): void => {
    const t = setInterval(fn, ms);
    timers.add(t);
    stop.once('close', () => {
      clearInterval(t);
      timers.delete(t);
    });
  };

  /** Writes `unit` until `total` bytes (Infinity: for ever), as fast as the client reads, and stops when it leaves. */
  const pump = (res: http.ServerResponse, unit: Buffer, total: number): void => {
    let sent = 0;
    // At most 16 chunks a turn, then the next turn: a response whose client has gone may take writes without
    // saying so (they pile up in memory) until its 'close' event, which only a later turn can deliver.
    const write = (): void => {
      for (let i = 0; i < 16; i++) {
        if (res.destroyed || !res.socket || res.socket.destroyed) return;
        if (sent >= total) {
          res.end();
          return;
        }
        const chunk = total - sent >= unit.length ? unit : unit.subarray(0, total - sent);
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', write);
          return;
        }
      }
      setImmediate(write);
    };
    write();
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://hostile.invalid');
    const [behaviour = '', sub = ''] = url.pathname.split('/').filter(Boolean);
    const q = (name: string, fallback: string): string => url.searchParams.get(name) ?? fallback;
    const n = (name: string, fallback: number): number => {
      const v = Number(url.searchParams.get(name));
      return url.searchParams.has(name) && Number.isFinite(v) ? v : fallback;
    };
    counts.set(behaviour, (counts.get(behaviour) ?? 0) + 1);
    const socket = req.socket;
    const sendHtml = (text: string, status = 200, headers: http.OutgoingHttpHeaders = {}): void => {
      const body = Buffer.from(text);
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const redirect = (to: string, code = 302): void => {
      res.writeHead(code, { location: to, 'content-type': 'text/html', 'content-length': 0 });
      res.end();
    };

    switch (behaviour as HostileBehaviour) {
      case 'ok':
        return sendHtml(html('<h1>ok</h1><ul><li class="item">one</li><li class="item">two</li><li class="item">three</li></ul>'));
      case 'status': {
        const headers: http.OutgoingHttpHeaders = {};
        if (url.searchParams.has('retryAfter')) headers['retry-after'] = q('retryAfter', '');
        return sendHtml(html(`<p>status ${n('code', 503)}</p>`), n('code', 503), headers);
      }
      case 'declared-length': {
        const bytes = n('bytes', 600 * 1024);
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': bytes });
        if (req.method === 'HEAD') return void res.end();
        return pump(res, Buffer.alloc(64 * 1024, 'a'), bytes);
      }
      case 'short-body': {
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': n('declared', 1000) });
        res.write(Buffer.alloc(n('sent', 500), 'a'), () => socket.end());
        return;
      }
      case 'long-body': {
        const declared = n('declared', 10);
        // Raw bytes on the socket: the framing is the point. The ServerResponse is never used.
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${declared}\r\nconnection: keep-alive\r\n\r\n${'a'.repeat(declared)}`
          + `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${SMUGGLED_BODY.length}\r\n\r\n${SMUGGLED_BODY}`);
        return;
      }
      case 'reset-mid-body': {
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': n('declared', MiB) });
        res.write(Buffer.alloc(n('sent', 16 * 1024), 'a'), () => {
          const t = setTimeout(() => {
            timers.delete(t);
            socket.resetAndDestroy();
          }, 50);
          timers.add(t);
        });
        return;
      }
      case 'gzip-bomb':
      case 'deflate-bomb':
      case 'brotli-bomb': {
        const kind = behaviour === 'gzip-bomb' ? 'gzip' : behaviour === 'deflate-bomb' ? 'deflate' : 'br';
        const body = await bomb(kind, n('mib', 256));
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': kind, 'content-length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      case 'endless':
        res.writeHead(200, { 'content-type': 'text/html' });
        return pump(res, Buffer.alloc(64 * 1024, 'a'), Infinity);
      case 'drip':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.flushHeaders();
        every(n('interval', 1000), () => {
          if (!res.destroyed) res.write('a');
        }, socket);
        return;
      case 'hang':
        return;
      case 'wrong-charset': {
        const header = q('header', 'windows-1251');
        const meta = q('meta', 'shift_jis');
        const text = `<!doctype html><html><head>${meta === 'none' ? '' : `<meta charset="${meta}">`}<title>charset</title></head>`
          + `<body><p id="t">${WRONG_CHARSET_TEXT}</p></body></html>`;
        const bytes = Buffer.concat([q('bom', '0') === '1' ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(text, 'utf8')]);
        res.writeHead(200, { 'content-type': header === 'none' ? 'text/html' : `text/html; charset=${header}`, 'content-length': bytes.length });
        res.end(req.method === 'HEAD' ? undefined : bytes);
        return;
      }
      case 'redirect-to':
        if (q('endless', '0') === '1') {
          res.writeHead(n('code', 302), { location: q('to', '/ok/'), 'content-type': 'text/html' });
          return pump(res, Buffer.alloc(64 * 1024, 'a'), Infinity);
        }
        return redirect(q('to', '/ok/'), n('code', 302));
      case 'redirect-loop':
        return redirect(url.pathname + url.search);
      case 'redirect-pingpong':
        return redirect(`/redirect-pingpong/${sub === 'a' ? 'b' : 'a'}`);
      case 'redirect-endless':
        return redirect(`/redirect-endless/${(Number(sub) || 0) + 1}/`);
      case 'nested': {
        const depth = n('depth', 100_000);
        const closed = q('closed', '1') !== '0';
        return sendHtml(page(`nested:${depth}:${closed}`, () => html(`${'<div>'.repeat(depth)}deep${closed ? '</div>'.repeat(depth) : ''}`)));
      }
      case 'unclosed-tables': {
        const mb = n('mb', 5);
        return sendHtml(page(`tables:${mb}`, () => html(fill('<table><tr><td>', mb * 1_000_000))));
      }
      case 'phone-digits': {
        const mb = n('mb', 5);
        return sendHtml(page(`phones:${mb}`, () => html(`<p>${phoneDigits(mb * 1_000_000)}</p>`)));
      }
      case 'deep-json-ld': {
        const depth = n('depth', 500_000);
        const closed = q('closed', '0') === '1';
        return sendHtml(page(`jsonld:${depth}:${closed}`, () => html('<p>deep JSON-LD</p>',
          `<script type="application/ld+json">${'['.repeat(depth)}${closed ? ']'.repeat(depth) : ''}</script>`)));
      }
      case 'alert':
        return sendHtml(html('<script>alert("hostile"); confirm("sure?"); prompt("name?");</script>'
          + '<ul><li class="item">one</li><li class="item">two</li><li class="item">three</li></ul>'));
      case 'self-navigation': {
        const times = n('times', Infinity);
        const ms = n('ms', 100);
        return sendHtml(html('<ul><li class="item">moving</li></ul><script>'
          + `(() => { const u = new URL(location.href); const k = Number(u.searchParams.get('n') || 0);`
          + ` if (k < ${Number.isFinite(times) ? times : 'Infinity'}) setTimeout(() => { u.searchParams.set('n', String(k + 1)); location.href = u.href; }, ${ms}); })();`
          + '</script>'));
      }
      case 'memory-bomb':
        return sendHtml(html('<p>memory</p><script>const hog = []; for (;;) hog.push(new Array(1e6).fill(Math.random()));</script>'));
      case 'regex-bait':
        return sendHtml(html(`<ul>${`<li class="item">${'a'.repeat(40)}!</li>`.repeat(10)}</ul>`));
      default:
        return sendHtml(html('<p>no such behaviour</p>'), 404);
    }
  };

  const main = http.createServer((req, res) => {
    requests.push({ listener: 'main', method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handle(req, res).catch((err: unknown) => {
      // A bug in the server, not a behaviour: end the request loudly rather than hang.
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`hostile server error: ${(err as Error).message}`);
    });
  });
  main.on('connection', () => connections++);
  const inside = http.createServer((req, res) => {
    requests.push({ listener: 'inside', method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<p>internal service: you should not be here</p>');
  });
  inside.on('connection', () => insideConnections++);

  const listen = (server: http.Server, address: string): Promise<number> => new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, () => resolve((server.address() as net.AddressInfo).port));
  });
  const port = await listen(main, host);
  const insidePort = await listen(inside, insideHost);
  const origin = `http://${host}:${port}`;
  const insideOrigin = `http://${insideHost}:${insidePort}`;

  return {
    origin,
    port,
    url(behaviour, params) {
      const path = behaviour === 'redirect-pingpong' ? '/redirect-pingpong/a' : behaviour === 'redirect-endless' ? '/redirect-endless/0/' : `/${behaviour}/`;
      const query = params ? new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString() : '';
      return `${origin}${path}${query ? `?${query}` : ''}`;
    },
    hits: (behaviour) => counts.get(behaviour) ?? 0,
    requests,
    get connections() {
      return connections;
    },
    inside: {
      origin: insideOrigin,
      get connections() {
        return insideConnections;
      },
    },
    async prepare() {
      await Promise.all([bomb('gzip', 256), bomb('deflate', 256), bomb('br', 256)]);
    },
    reset() {
      requests.length = 0;
      counts.clear();
      connections = 0;
      insideConnections = 0;
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const stop = (server: http.Server) => new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await Promise.all([stop(main), stop(inside)]);
    },
  };
}
