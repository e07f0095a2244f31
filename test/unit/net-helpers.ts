/**
 * Helpers for the tests of the outbound guard and the fetcher.
 *
 * {@link watchSockets} records every client socket of the process and stands in front of every
 * connection as a safety net: a connection to a non-loopback address is never attempted, even if the
 * guard under test let it through. It wraps `net.Socket.prototype.connect` (IP-literal hosts are checked
 * there, and the socket's `lookup` is wrapped so every address a name resolves to is checked before the
 * socket uses it) and subscribes to `net.client.socket` (node:diagnostics_channel) to see every socket
 * created. What it stops goes to `blocked`, which the tests assert stays empty.
 */
import assert from 'node:assert/strict';
import dc from 'node:diagnostics_channel';
import dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** True for 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8: addresses whose packets stay on loopback. */
function isLoopbackAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '');
  if (!net.isIP(a)) return false;
  let parsed = ipaddr.parse(a);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'loopback';
}

/** What {@link watchSockets} saw since the last reset. */
export interface SocketWatch {
  /** Client sockets created (`net.client.socket`). */
  readonly created: net.Socket[];
  /** The host of every `Socket#connect` call: a name or an address. */
  readonly attempts: string[];
  /** The addresses sockets connected to. */
  readonly connected: string[];
  /** Non-loopback addresses a socket was about to use; the safety net stopped them. Must stay empty. */
  readonly blocked: string[];
  reset(): void;
  /** Nothing went anywhere but loopback, and nothing was stopped by the safety net. */
  assertLoopbackOnly(): void;
  /** No client socket was created and no connection attempted at all. */
  assertNoSocket(): void;
  /** Unsubscribes and restores `Socket#connect`. */
  stop(): void;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | dns.LookupAddress[], family?: number) => void;
type LookupFn = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

function blockedError(what: string): Error {
  return Object.assign(new Error(`test safety net: connection to ${what} blocked (not loopback)`), { code: 'ERR_TEST_BLOCKED' });
}

/** Starts watching client sockets; call `stop()` when done (one watch at a time). */
export function watchSockets(): SocketWatch {
  const created: net.Socket[] = [];
  const attempts: string[] = [];
  const connected: string[] = [];
  const blocked: string[] = [];

  const onSocket = (message: unknown) => {
    const socket = (message as { socket: net.Socket }).socket;
    created.push(socket);
    socket.once('connect', () => connected.push(socket.remoteAddress ?? '?'));
  };
  dc.subscribe('net.client.socket', onSocket);

  const realConnect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]): net.Socket {
    // net.connect() passes its normalized arguments as one array ([options, callback]); keep that
    // array (it carries Node's marker) and swap the options inside it.
    const normalized = Array.isArray(args[0]) ? (args[0] as unknown[]) : undefined;
    let options = (normalized ? normalized[0] : args[0]) as net.TcpNetConnectOpts & { path?: string } | number | string;
    if (typeof options !== 'object' || options === null) {
      // connect(port[, host][, cb]): turn into the options form so the lookup can be wrapped.
      const cb = args.find((a) => typeof a === 'function');
      options = { port: Number(options), host: typeof args[1] === 'string' ? args[1] : 'localhost' };
      args = cb ? [options, cb] : [options];
    }
    if (options.path) return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args); // IPC, not IP
    const host = options.host ?? 'localhost';
    attempts.push(host);
    if (net.isIP(host) && !isLoopbackAddress(host)) {
      blocked.push(host);
      process.nextTick(() => this.destroy(blockedError(host)));
      return this;
    }
    const inner = (options.lookup ?? dns.lookup) as unknown as LookupFn;
    const lookup: LookupFn = (hostname, lookupOptions, callback) => {
      inner(hostname, lookupOptions, (err, address, family) => {
        if (err) return callback(err);
        const list = Array.isArray(address) ? address.map((a) => a.address) : [String(address)];
        const outside = list.filter((a) => !isLoopbackAddress(a));
        if (outside.length) {
          blocked.push(...outside);
          return callback(blockedError(`${hostname} (${outside.join(', ')})`));
        }
        callback(null, address, family);
      });
    };
    const wrapped = { ...options, lookup: lookup as unknown as net.LookupFunction };
    if (normalized) normalized[0] = wrapped;
    else args[0] = wrapped;
    return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;

  return {
    created, attempts, connected, blocked,
    reset() {
      created.length = 0;
      attempts.length = 0;
      connected.length = 0;
      blocked.length = 0;
    },
    assertLoopbackOnly() {
      assert.deepEqual(blocked, [], `the safety net had to stop connections to ${blocked.join(', ')}`);
      for (const a of connected) assert.ok(isLoopbackAddress(a), `a socket connected to ${a}`);
      for (const s of created) {
        if (s.remoteAddress !== undefined) assert.ok(isLoopbackAddress(s.remoteAddress), `a socket is connected to ${s.remoteAddress}`);
      }
    },
    assertNoSocket() {
      assert.equal(created.length, 0, `${created.length} client socket(s) created`);
      assert.deepEqual(attempts, [], 'connection attempts');
      assert.deepEqual(connected, [], 'connections');
    },
    stop() {
      dc.unsubscribe('net.client.socket', onSocket);
      net.Socket.prototype.connect = realConnect;
    },
  };
}

/** A small HTTP server on a loopback address for one test. */
export interface LocalServer {
  /** e.g. "http://127.0.0.1:40123" */
  url: string;
  port: number;
  server: http.Server;
  close(): Promise<void>;
}

/** Starts `handler` on `host` (127.0.0.1 unless given; loopback only) and a free port. */
export async function listen(handler: http.RequestListener, host = '127.0.0.1'): Promise<LocalServer> {
  if (!isLoopbackAddress(host)) throw new Error(`listen: ${host} is not a loopback address`);
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    server,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Milliseconds since `t0` (a `performance.now()` reading). */
export function since(t0: number): number {
  return performance.now() - t0;
}
