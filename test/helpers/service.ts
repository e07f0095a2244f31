/**
 * Starts the real local service (`node bin/local.ts`) as a child process on a free loopback port with
 * its own DATA_DIR, for API tests over real HTTP; and creates accounts with the real accounts CLI.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const NODE = process.execPath;

export interface TestService {
  url: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  proc: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL (a crash) and wait. */
  kill(): Promise<void>;
}

/** Longest start of the service in a test, ms: about a second on a quiet machine; much more beside a second test suite. */
const SERVICE_START_TIMEOUT_MS = 60_000;

/** A fresh temporary DATA_DIR. */
export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'sai-test-'));
}

/**
 * Starts the service. Loopback targets are allowed (SAI_OUTBOUND_ALLOW=127.0.0.0/8) unless `env` says otherwise.
 * @param env extra environment; DATA_DIR defaults to a new temporary folder.
 */
export async function startService(env: NodeJS.ProcessEnv = {}): Promise<TestService> {
  const dataDir = env.DATA_DIR ?? tempDataDir();
  const fullEnv: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    SAI_OUTBOUND_ALLOW: '127.0.0.0/8',
    SAI_ACCESS_LOG: '0',
    SAI_WORKERS: '2',
    ...env,
    DATA_DIR: dataDir,
  };
  const proc = spawn(NODE, [path.join(ROOT, 'bin/local.ts')], { env: fullEnv, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  const url = await new Promise<string>((resolve, reject) => {
    // A start that times out kills the service: alive, it would hold this test file's process open for ever.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`service did not start in ${SERVICE_START_TIMEOUT_MS / 1000} s:\n${out}`));
    }, SERVICE_START_TIMEOUT_MS);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`service exited with ${code}:\n${out}`)); });
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stopWith = async (signal: NodeJS.Signals) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    await exited;
  };
  return { url, dataDir, env: fullEnv, proc, output: () => out, stop: () => stopWith('SIGTERM'), kill: () => stopWith('SIGKILL') };
}

/** The first-start account's credentials, from the file bin/local.ts writes when stdout is not a terminal (as in tests). */
export function firstStartCredentials(svc: TestService): { file: string; email: string; password: string; apiKey: string } {
  const file = path.join(svc.dataDir, 'first-start-credentials.txt');
  const text = fs.readFileSync(file, 'utf8');
  const field = (name: string) => new RegExp(`${name}:\\s+(\\S+)`).exec(text)?.[1] ?? '';
  return { file, email: field('email'), password: field('password'), apiKey: field('api key') };
}

/** Creates an account with `npm run accounts -- create --json` semantics. @returns its API key and id. */
export async function createAccount(dataDir: string, opts: { email?: string; password?: string; plan: string }, env: NodeJS.ProcessEnv = {}): Promise<{ id: number; email: string; plan: string; api_key: string; password: string }> {
  const email = opts.email ?? `user-${Math.random().toString(36).slice(2)}@example.com`;
  const password = opts.password ?? 'correct horse battery';
  const { stdout } = await execFileAsync(NODE, [path.join(ROOT, 'bin/accounts.ts'), 'create', '--email', email, '--password', password, '--plan', opts.plan, '--json'], {
    env: { ...process.env, ...env, DATA_DIR: dataDir },
    cwd: ROOT,
  });
  return { ...(JSON.parse(stdout) as { id: number; email: string; plan: string; api_key: string }), password };
}

/** What a run of the accounts CLI printed, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npm run accounts -- <args>` on a DATA_DIR; a non-zero exit is returned, not thrown. */
export async function runAccounts(dataDir: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  try {
    const { stdout, stderr } = await execFileAsync(NODE, [path.join(ROOT, 'bin/accounts.ts'), ...args], { env: { ...process.env, ...env, DATA_DIR: dataDir }, cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A small client for the API under test. */
export function client(baseUrl: string, key?: string) {
  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
    return { status: res.status, body: parsed, headers: res.headers };
  }
  return {
    get: (p: string, h?: Record<string, string>) => call('GET', p, undefined, h),
    post: (p: string, b?: unknown, h?: Record<string, string>) => call('POST', p, b, h),
    put: (p: string, b?: unknown, h?: Record<string, string>) => call('PUT', p, b, h),
    delete: (p: string) => call('DELETE', p),
    call,
    /** Polls a job until it is completed or failed; records every progress value seen. */
    async waitForJob(id: string, timeoutMs = 60_000): Promise<{ job: any; progressSeen: number[] }> {
      const seen: number[] = [];
      const end = Date.now() + timeoutMs;
      for (;;) {
        const r = await call('GET', `/api/v1/jobs/${id}/status/`);
        if (r.status !== 200) throw new Error(`status ${r.status}: ${JSON.stringify(r.body)}`);
        seen.push(r.body.progress);
        if (r.body.status === 'completed' || r.body.status === 'failed') return { job: r.body, progressSeen: seen };
        if (Date.now() > end) throw new Error(`job ${id} still ${r.body.status} after ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 100));
      }
    },
  };
}
