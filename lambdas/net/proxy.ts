/**
 * The browser's way out: a forward proxy on 127.0.0.1 that Chromium must use for every request
 * (`--proxy-server`, or the `proxyServer` of a job's browser context, with loopback not bypassed), which
 * opens each upstream connection through the outbound guard (docs/architecture.md, idea 6). So a page on an
 * allowed host that loads http://169.254.169.254/, a private address or a name resolving inside gets a 403
 * from here, and the address checked is the address connected to (the guard resolves; the socket uses
 * that result).
 *
 * - `CONNECT host:port` (https, wss): tunnels to the guard-checked address.
 * - absolute-URI requests (http): forwarded with the guard's `lookup` over keep-alive connections, hop by
 *   hop (Chromium follows redirects itself, each one comes back through here); a response body is cut at
 *   `maxBytes`, as the fetcher cuts it.
 *
 * Each job's browser context gets a proxy of its own (BrowserHost.newContext), so what the proxy refused
 * or could not reach is recorded for that job alone ({@link GuardProxy.events}), and a page that failed to
 * load is explained with the same code the HTTP fetcher would give: `target_forbidden`, `dns_failed` or
 * `fetch_failed`.
 */
import http from 'node:http';
import net from 'node:net';
import { OutboundGuard } from './guard.ts';
import { isCodedError } from '../errors.ts';
import { connectThrough, isProxyFailure } from './tunnel.ts';
import type { UpstreamProxy } from './upstream.ts';

/** Why the proxy did not get a response for a request. */
type ProxyFailureCode = 'target_forbidden' | 'dns_failed' | 'fetch_failed' | 'response_too_large';

/** One request the proxy refused or could not complete. */
export interface ProxyEvent {
  /** `host:port` for CONNECT, the absolute URL for plain http. */
  target: string;
  /** The host name (without port or brackets), to match a page's URL. */
  host: string;
  code: ProxyFailureCode;
  message: string;
  /** The upstream proxy failed (not the target): the run's session that used it is retired. */
  proxyFailure?: boolean;
}

/** What a proxy recorded: the last event per host, and counts (bounded memory whatever a page does). */
export interface ProxyEventLog {
  /** The most recent event of each host (at most 1,000 hosts kept). */
  readonly byHost: ReadonlyMap<string, ProxyEvent>;
  /** The first events (at most 20), for a job's warnings. */
  readonly first: readonly ProxyEvent[];
  /** Events of each code since the proxy started. */
  readonly counts: Readonly<Record<ProxyFailureCode, number>>;
  /** Events where the upstream proxy failed. */
  readonly proxyFailures: number;
}

/** A running guard proxy. */
export interface GuardProxy {
  /** `http://127.0.0.1:<port>`, for `--proxy-server` or a browser context's `proxyServer`. */
  url: string;
  port: number;
  events: ProxyEventLog;
  /**
   * Chains every later connection to `upstream` (null: direct), and closes the connections open now, so the browser
   * opens new ones through it (a retired proxy session is not used again).
   */
  useUpstream(upstream: UpstreamChoice | null): void;
  /** Connections the proxy opened to the target or an upstream, all told (the tests read it). */
  readonly upstreamConnections: number;
  close(): Promise<void>;
}

/** Options of {@link startGuardProxy}. */
export interface GuardProxyOptions {
  /** Largest response body forwarded for a plain-http request, bytes (as the fetcher's cap). @default 10485760 */
  maxBytes?: number;
}

/** The upstream proxy a job's guard proxy chains to now (its run's current session), or null for direct. */
export interface UpstreamChoice {
  proxy: UpstreamProxy;
  /** The session's id, for a proxy whose user name has `{session}`. */
  sessionId: string;
}

const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const MAX_HOSTS = 1000;

function hostOf(target: string): string {
  try {
    return new URL(target.includes('://') ? target : `http://${target}`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return '';
  }
}

function failureCode(err: unknown): ProxyFailureCode {
  if (isCodedError(err) && (err.code === 'target_forbidden' || err.code === 'dns_failed')) return err.code;
  return 'fetch_failed';
}

/**
 * Starts a guard proxy.
 * @param guard decides every upstream connection.
 */
export async function startGuardProxy(guard: OutboundGuard, options: GuardProxyOptions = {}): Promise<GuardProxy> {
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const byHost = new Map<string, ProxyEvent>();
  const first: ProxyEvent[] = [];
  const counts: Record<ProxyFailureCode, number> = { target_forbidden: 0, dns_failed: 0, fetch_failed: 0, response_too_large: 0 };
  const sockets = new Set<net.Socket>();
  // Keep-alive upstream connections: each was opened through the guard's lookup, so reusing it is safe.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16, lookup: guard.lookup as unknown as net.LookupFunction } as http.AgentOptions);
  let upstream: UpstreamChoice | null = null;
  let opened = 0;
  /** Sockets to the target or through the upstream (closed when the upstream changes). */
  const outward = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    opened++;
    outward.add(s);
    s.once('close', () => outward.delete(s));
    return s;
  };
  /** A connection to a checked address: direct, or a tunnel through the current upstream. */
  const connectTo = (address: string, port: number): Promise<net.Socket> => {
    const up = upstream;
    if (!up) return Promise.resolve(track(net.connect({ host: address, port })));
    return connectThrough(up.proxy, { address, port }, { timeoutMs: 10_000, sessionId: up.sessionId }).then(track);
  };

  let proxyFailures = 0;
  const record = (target: string, code: ProxyFailureCode, message: string, viaProxy = false) => {
    const event: ProxyEvent = { target, host: hostOf(target), code, message, ...(viaProxy ? { proxyFailure: true } : {}) };
    if (viaProxy) proxyFailures++;
    counts[code]++;
    if (first.length < 20) first.push(event);
    if (byHost.size >= MAX_HOSTS && !byHost.has(event.host)) byHost.delete(byHost.keys().next().value!);
    byHost.set(event.host, event);
  };

  const server = http.createServer((req, res) => {
    let url: URL;
    try {
      url = guard.checkUrl(req.url ?? '');
    } catch (err) {
      record(req.url ?? '', 'target_forbidden', (err as Error).message);
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`Refused by the outbound guard: ${(err as Error).message}`);
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Only http:// URLs are forwarded; https goes through CONNECT');
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k.toLowerCase()) && v !== undefined) headers[k] = v;
    // IP-literal hosts skip `lookup`; checkUrl above already decided on them. Through an upstream proxy the guard
    // resolves and checks the name first, and the tunnel goes to that address (lambdas/net/upstream.ts).
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port) || 80;
    const through = upstream
      // No agent: node:http then opens each connection with createConnection (an `agent: false` would not).
      ? { createConnection: (_o: unknown, cb: (err: Error | null, s?: net.Socket) => void) => {
        guard.resolveChecked(hostname).then(([a]) => connectTo(a!.address, port)).then((s) => cb(null, s), (err: Error) => cb(err));
        return undefined;
      } }
      : { agent };
    const upstreamReq = http.request({ host: hostname, port, path: url.pathname + url.search, method: req.method, headers, ...through } as http.RequestOptions, (up) => {
      const declared = Number(up.headers['content-length']);
      if (declared > maxBytes) {
        up.destroy();
        record(url.href, 'response_too_large', `${url.href} is ${declared} bytes, limit ${maxBytes} bytes`);
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`Response larger than ${maxBytes} bytes`);
        return;
      }
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(k.toLowerCase()) && v !== undefined) out[k] = v;
      res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
      let size = 0;
      up.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          record(url.href, 'response_too_large', `${url.href} exceeds the limit of ${maxBytes} bytes`);
          up.destroy();
          res.destroy();
        }
      });
      up.pipe(res);
    });
    upstreamReq.on('error', (err) => {
      const code = failureCode(err);
      record(url.href, code, err.message, isProxyFailure(err));
      if (!res.headersSent) res.writeHead(code === 'target_forbidden' ? 403 : 502, { 'content-type': 'text/plain' });
      res.end(code === 'target_forbidden' ? `Refused by the outbound guard: ${err.message}` : `Upstream error: ${err.message}`);
    });
    req.pipe(upstreamReq);
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = req.url ?? '';
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const [, host, port] = m as unknown as [string, string, string];
    let check: Promise<{ address: string; family: number }>;
    try {
      // The scheme does not matter for CONNECT; check the host the same way as an https URL.
      guard.checkUrl(`https://${host}:${port}/`);
      check = guard.resolveChecked(host.replace(/^\[|\]$/g, '')).then((list) => list[0]!);
    } catch (err) {
      check = Promise.reject(err);
    }
    check.then(({ address }) => connectTo(address, Number(port)).then((out) => {
      const established = () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) out.write(head);
        out.pipe(client);
        client.pipe(out);
      };
      if (out.connecting) out.once('connect', established);
      else established();
      sockets.add(out);
      out.on('close', () => { sockets.delete(out); client.destroy(); });
      out.on('error', (err) => {
        record(target, 'fetch_failed', err.message);
        client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      });
      client.on('close', () => out.destroy());
    }), (err: Error) => {
      const code = failureCode(err);
      record(target, code, err.message, isProxyFailure(err));
      client.end(code === 'target_forbidden'
        ? `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nRefused by the outbound guard: ${err.message}`
        : `HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\n${err.message}`);
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    events: { byHost, first, counts, get proxyFailures() { return proxyFailures; } },
    useUpstream(next) {
      upstream = next;
      for (const s of outward) s.destroy();
      agent.destroy();
    },
    get upstreamConnections() { return opened; },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      agent.destroy();
      server.close(() => resolve());
    }),
  };
}
