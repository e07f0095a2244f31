/**
 * Connections through an upstream proxy (docs/crawler.md, "Upstream proxies"): {@link openTunnel} and
 * {@link connectThrough}, used by the fetcher's connector (lambdas/net/fetch.ts) and by the job's guard proxy that
 * Chromium's traffic goes through (lambdas/net/proxy.ts). The caller resolves the target's name through the guard
 * and hands the checked address here; the proxy is asked for a tunnel to that address (an HTTP `CONNECT
 * 93.184.215.14:443`, a SOCKS5 CONNECT to the IPv4/IPv6 address), never to the name. Messages name a proxy by its
 * label and hold no credential.
 */
import net from 'node:net';
import tls from 'node:tls';
import { SocksClient } from 'socks';
import type { UpstreamProxy } from './upstream.ts';

/** A failure of the proxy itself (not of the target): the session that used it is retired. */
export class ProxyFailure extends Error {
  readonly code = 'fetch_failed';
  readonly details: unknown[] = [];
  readonly proxyFailure = true;
  constructor(message: string) {
    super(message);
    this.name = 'ProxyFailure';
  }
}

export { isProxyFailure } from './proxy-failure.ts';

/** `text` with the proxy's credentials, raw and URL-encoded, replaced by `***`. */
export function redactProxy(text: string, proxy: UpstreamProxy): string {
  let out = text;
  for (const secret of [proxy.password, proxy.username]) {
    if (!secret || secret.length < 3) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('***');
  }
  return out;
}

/** The user name a session sends: `{session}` replaced by its id. */
function userFor(proxy: UpstreamProxy, sessionId: string | undefined): string | undefined {
  return proxy.username?.replaceAll('{session}', sessionId ?? '0');
}

/** Options of {@link openTunnel}. */
export interface TunnelOptions {
  /** The whole set-up (proxy connection, its handshake), ms. */
  timeoutMs: number;
  /** The pool session's id, for a `{session}` user name. */
  sessionId?: string;
  signal?: AbortSignal;
}

/**
 * A TCP tunnel through `proxy` to an address the guard checked (an IP literal, never a name).
 * @throws ProxyFailure naming the proxy by its label: it could not be reached, refused the credentials (407, SOCKS
 *   authentication), refused the tunnel or timed out; the message holds no credential.
 */
export async function openTunnel(proxy: UpstreamProxy, target: { address: string; port: number }, o: TunnelOptions): Promise<net.Socket> {
  if (!net.isIP(target.address)) throw new Error(`openTunnel: ${target.address} is not an address checked by the guard`);
  try {
    return proxy.protocol === 'socks5:' ? await socksTunnel(proxy, target, o) : await connectTunnel(proxy, target, o);
  } catch (err) {
    if (err instanceof ProxyFailure) throw err;
    throw new ProxyFailure(`The upstream proxy ${proxy.label} failed: ${redactProxy(((err as Error)?.message ?? String(err)).split('\n')[0]!, proxy)}`);
  }
}

async function socksTunnel(proxy: UpstreamProxy, target: { address: string; port: number }, o: TunnelOptions): Promise<net.Socket> {
  const user = userFor(proxy, o.sessionId);
  try {
    const { socket } = await SocksClient.createConnection({
      proxy: { host: proxy.host, port: proxy.port, type: 5, ...(user !== undefined ? { userId: user } : {}), ...(proxy.password !== undefined ? { password: proxy.password } : {}) },
      command: 'connect',
      destination: { host: target.address, port: target.port },
      timeout: o.timeoutMs,
    });
    return socket;
  } catch (err) {
    const message = ((err as Error)?.message ?? String(err)).split('\n')[0]!;
    const why = /auth/i.test(message) ? 'refused the credentials' : message;
    throw new ProxyFailure(`The upstream proxy ${proxy.label} (SOCKS5): ${redactProxy(why, proxy)}`);
  }
}

/** An HTTP(S) proxy's tunnel: `CONNECT address:port`, with Basic credentials when declared. */
function connectTunnel(proxy: UpstreamProxy, target: { address: string; port: number }, o: TunnelOptions): Promise<net.Socket> {
  return new Promise<net.Socket>((resolve, reject) => {
    const authority = `${net.isIPv6(target.address) ? `[${target.address}]` : target.address}:${target.port}`;
    const user = userFor(proxy, o.sessionId);
    const auth = user !== undefined || proxy.password !== undefined ? `Proxy-Authorization: Basic ${Buffer.from(`${user ?? ''}:${proxy.password ?? ''}`).toString('base64')}\r\n` : '';
    const socket: net.Socket = proxy.protocol === 'https:'
      ? tls.connect({ host: proxy.host, port: proxy.port, ...(net.isIP(proxy.host) ? {} : { servername: proxy.host }) })
      : net.connect({ host: proxy.host, port: proxy.port });
    let head = Buffer.alloc(0);
    let done = false;
    const fail = (message: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(new ProxyFailure(`The upstream proxy ${proxy.label}: ${redactProxy(message, proxy)}`));
    };
    const onAbort = () => fail('the request was aborted');
    const timer = setTimeout(() => fail(`no tunnel within ${o.timeoutMs} ms`), o.timeoutMs);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once(proxy.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
    });
    socket.on('error', (err) => fail((err as Error).message));
    socket.on('close', () => fail('it closed the connection'));
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > 16 * 1024) fail('its answer to CONNECT has headers over 16 KiB');
        return;
      }
      socket.off('data', onData);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, Math.min(end, 200)).toString('latin1'))?.[1]);
      if (status !== 200) {
        fail(status === 407 ? 'it refused the credentials (407 Proxy Authentication Required)' : `it answered CONNECT with ${status || 'something that is not HTTP'}`);
        return;
      }
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      const rest = head.subarray(end + 4);
      if (rest.length) socket.unshift(rest);
      resolve(socket);
    };
    socket.on('data', onData);
  });
}

/**
 * A connection to `host:port` through `proxy`, TLS to the target on top when `tlsTo` is given (its SNI name); the
 * target's address is the one the caller's guard checked.
 */
export async function connectThrough(proxy: UpstreamProxy, target: { address: string; port: number }, o: TunnelOptions & { tlsTo?: string; alpn?: string[] }): Promise<net.Socket> {
  const raw = await openTunnel(proxy, target, o);
  if (!o.tlsTo) return raw;
  return new Promise<net.Socket>((resolve, reject) => {
    const secure = tls.connect({ socket: raw, ...(net.isIP(o.tlsTo!) ? {} : { servername: o.tlsTo }), ...(o.alpn ? { ALPNProtocols: o.alpn } : {}) });
    const timer = setTimeout(() => { secure.destroy(); reject(new Error(`TLS with ${o.tlsTo} through ${proxy.label} took over ${o.timeoutMs} ms`)); }, o.timeoutMs);
    secure.once('secureConnect', () => { clearTimeout(timer); secure.removeAllListeners('error'); resolve(secure); });
    secure.once('error', (err) => { clearTimeout(timer); raw.destroy(); reject(err); });
  });
}

