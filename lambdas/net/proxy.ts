/**
 * The browser's way out: a forward proxy on 127.0.0.1 that Chromium must use for every request
 * (`--proxy-server`, with loopback not bypassed), which opens each upstream connection through the
 * outbound guard (ARCHITECTURE.md, idea 5). So a page on an allowed host that loads
 * http://169.254.169.254/, a private address or a name resolving inside gets a 403 from here, and the
 * address checked is the address connected to (the guard resolves; the socket uses that result).
 *
 * - `CONNECT host:port` (https, wss): tunnels to the guard-checked address.
 * - absolute-URI requests (http): forwarded with the guard's `lookup`, hop by hop (Chromium follows
 *   redirects itself, each one comes back through here).
 */
import http from 'node:http';
import net from 'node:net';
import { OutboundGuard } from './guard.ts';
import { isCodedError } from '../errors.ts';

/** A request the proxy refused, for the job's warnings. */
export interface RefusedRequest {
  target: string;
  reason: string;
}

/** A running guard proxy. */
export interface GuardProxy {
  /** `http://127.0.0.1:<port>`, for `--proxy-server`. */
  url: string;
  port: number;
  /** Requests refused since start (most recent last, at most 100 kept). */
  refused: RefusedRequest[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * Starts a guard proxy.
 * @param guard decides every upstream connection.
 */
export async function startGuardProxy(guard: OutboundGuard): Promise<GuardProxy> {
  const refused: RefusedRequest[] = [];
  const sockets = new Set<net.Socket>();
  const refuse = (target: string, reason: string) => {
    refused.push({ target, reason });
    if (refused.length > 100) refused.shift();
  };

  /** Resolves and checks a host; the first accepted address is the one to connect to. */
  async function checked(host: string): Promise<{ address: string; family: number }> {
    const list = await guard.resolveChecked(host.replace(/^\[|\]$/g, ''));
    return list[0]!;
  }

  const server = http.createServer((req, res) => {
    let url: URL;
    try {
      url = guard.checkUrl(req.url ?? '');
    } catch (err) {
      refuse(req.url ?? '', (err as Error).message);
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`Refused by the outbound guard: ${(err as Error).message}`);
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Only http:// URLs are forwarded; https goes through CONNECT');
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k.toLowerCase()) && v !== undefined) headers[k] = v;
    const upstream = http.request({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || 80,
      path: url.pathname + url.search,
      method: req.method,
      headers,
      lookup: guard.lookup as unknown as net.LookupFunction,
      // IP-literal hosts skip `lookup`; checkUrl above already decided on them.
    }, (up) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(k.toLowerCase()) && v !== undefined) out[k] = v;
      res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
      up.pipe(res);
    });
    upstream.on('error', (err) => {
      const forbidden = isCodedError(err) && err.code === 'target_forbidden';
      if (forbidden) refuse(url.href, err.message);
      if (!res.headersSent) res.writeHead(forbidden ? 403 : 502, { 'content-type': 'text/plain' });
      res.end(forbidden ? `Refused by the outbound guard: ${err.message}` : `Upstream error: ${err.message}`);
    });
    req.pipe(upstream);
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
      check = checked(host);
    } catch (err) {
      check = Promise.reject(err);
    }
    check.then(({ address }) => {
      const upstream = net.connect({ host: address, port: Number(port) }, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on('close', () => { sockets.delete(upstream); client.destroy(); });
      upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
      client.on('close', () => upstream.destroy());
    }, (err: Error) => {
      refuse(target, err.message);
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nRefused by the outbound guard: ${err.message}`);
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    refused,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
