/**
 * Real upstream proxies on loopback for the proxy tests: Debian's tinyproxy (an HTTP proxy with Basic credentials) and
 * microsocks (a SOCKS5 server with a user name and password), each started on a free port and bound for its outgoing
 * connections to an address of its own in 127.0.0.0/8, so that a test server can tell which proxy a request came
 * through. .ci/run installs both packages.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A running proxy. */
export interface LoopbackProxy {
  /** `http://user:password@127.0.0.1:port` or `socks5://…`. */
  url: string;
  /** The address its outgoing connections come from. */
  bind: string;
  /** What it logged (tinyproxy: one CONNECT line per tunnel). */
  log(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function listening(port: number, proc: ChildProcess, out: () => string): Promise<void> {
  const end = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the proxy exited (${proc.exitCode}): ${out()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect({ host: '127.0.0.1', port }, () => { c.destroy(); resolve(true); });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`the proxy did not listen on ${port}: ${out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function stopper(proc: ChildProcess, dir: string): () => Promise<void> {
  return async () => {
    if (proc.exitCode === null) {
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
}

/** tinyproxy with Basic credentials `user:password`, its outgoing connections from `bind`. */
export async function startTinyproxy(o: { user: string; password: string; bind?: string }): Promise<LoopbackProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-tinyproxy-'));
  fs.chmodSync(dir, 0o777);
  const port = await freePort();
  const bind = o.bind ?? '127.0.0.3';
  const logFile = path.join(dir, 'tinyproxy.log');
  fs.writeFileSync(path.join(dir, 'tinyproxy.conf'), [
    `Port ${port}`, 'Listen 127.0.0.1', `Bind ${bind}`, 'Timeout 60', `LogFile "${logFile}"`, 'LogLevel Connect', 'MaxClients 100',
    `BasicAuth ${o.user} ${o.password}`, '',
  ].join('\n'));
  let out = '';
  const proc = spawn('tinyproxy', ['-d', '-c', path.join(dir, 'tinyproxy.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (c: Buffer) => { out += c; });
  proc.stderr!.on('data', (c: Buffer) => { out += c; });
  await listening(port, proc, () => out);
  return {
    url: `http://${encodeURIComponent(o.user)}:${encodeURIComponent(o.password)}@127.0.0.1:${port}`,
    bind,
    log: () => { try { return fs.readFileSync(logFile, 'utf8'); } catch { return ''; } },
    stop: stopper(proc, dir),
  };
}

/** microsocks (SOCKS5) with `user` and `password`, its outgoing connections from `bind`. */
export async function startMicrosocks(o: { user: string; password: string; bind?: string }): Promise<LoopbackProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-microsocks-'));
  const port = await freePort();
  const bind = o.bind ?? '127.0.0.2';
  let out = '';
  const proc = spawn('microsocks', ['-i', '127.0.0.1', '-p', String(port), '-u', o.user, '-P', o.password, '-b', bind], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (c: Buffer) => { out += c; });
  proc.stderr!.on('data', (c: Buffer) => { out += c; });
  await listening(port, proc, () => out);
  return { url: `socks5://${encodeURIComponent(o.user)}:${encodeURIComponent(o.password)}@127.0.0.1:${port}`, bind, log: () => out, stop: stopper(proc, dir) };
}
