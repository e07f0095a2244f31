// `npm run bench -- api`: does the API stay fast while the service works, and can one account's bodies stall it?
//
// The real local service (bin/local.ts on this Node, its own temporary DATA_DIR, SAI_WORKERS=4: jobs in worker
// threads, SAI_ACCESS_LOG=0, loopback targets allowed) against the bench's nginx, in three parts:
//   status  wrk (Debian's, `-t2 -c64 -d10s --latency`) on GET /api/v1/jobs/{id}/status/ of a completed one-row job
//           while 4 run jobs crawl the 1,050-page listing site (bench/configs/books.yaml). nginx sends every
//           response at 16 KiB/s per connection (`limit_rate`; nginx lets the first second's worth of bytes
//           through at once, so 16k makes each of the site's 20-40 KB pages take 1-2 s, where 96k would not slow
//           them at all): jobs of a real deployment crawl remote sites and spend most of their time waiting for
//           the network, and so do these (about 3 pages/s each). Measured once every job has scraped a page (the
//           job threads' one-time engine start is behind them) and after a 3 s wrk warm-up under load. Also
//           polled: one of the running jobs, and the completed job before the 4 jobs start (idle baseline, after a 3 s wrk warm-up). Before
//           and after each wrk run a GET status checks that the 4 jobs are still `running`.
//   minimal wrk on GET status of a completed 100-row job (bench/configs/books-100.yaml: 5 listing pages of the
//           bench site, 4 listing fields, crawled from nginx without a rate limit), then the same wrk on the minimal node:http +
//           node:sqlite server of bench/contenders/status-minimal.ts reading the same row from the service's own
//           database and answering the same JSON (checked), alternately, --minimal-rounds times (3), nothing else
//           running. Prints each round, the medians, the ratio of requests/s (service/minimal) and both p99s.
//   run     POST /run/ of a one-page static config (bench/configs/one-page.yaml: a 1 KB page, 5 items, the
//           lightweight engine, 3 fields), then GET status every 5 ms over the same kept-alive connection until
//           `completed`: 50 jobs one after another (after 5 not counted), nothing else running. p50/p95 in ms.
//   bodies  account A sends JSON bodies whose yaml_content (at most 256 KiB, the service's limit) is a worst case
//           for the YAML config parser (25,000 keys, a 100,000-item flow list, 5,000 levels of nesting, an alias
//           bomb, the largest valid config, 256 KiB of comments, ...) to POST /configs/ and POST /run/, round robin
//           from 3 connections for 10 s (until every body was sent at least once; 30 s time-out per request,
//           2 min at most), while account B calls GET /me/ one request at a time over one kept-alive connection.
//           Status codes and answer times per body, B's p50/p99/max. Before the loop, B's /me/ and each body once
//           are timed with nothing else going on, after one warm-up round (what a body costs without queueing).
// Each part runs on a fresh service (parts status and minimal each on their own, parts run and bodies on one). Accounts are pro
// accounts of a generated plans file (SAI_PLANS_FILE) whose pro plan has 1,000,000 credits and calls per hour.
// Targets (2 cores): status polls under load >= 5,000 req/s and p99 < 20 ms; the completed 100-row job's status at
// >= 0.5x the minimal server's req/s with p99 < 20 ms; run to completed p50 < 150 ms;
// every hostile body answered within 250 ms; B's /me/ p99 < 50 ms meanwhile. A missed target is reported
// (MISSED), not a failure; the exit code is 1 only when a part could not run. Figures: .bench/api-<timestamp>.json.
//
//   npm run bench -- api [--only status,minimal,run,bodies] [--wrk-seconds N (10)] [--connections N (64)] [--rate 16k]
//                        [--runs N (50)] [--bodies-seconds N (10)] [--bodies-connections N (3)] [--minimal-rounds N (3)]
//                        [--access-log (the service with its access log on, its default; off otherwise)]
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify, parseArgs } from 'node:util';
import { Client } from 'undici';
import { MAX_CONFIG_BYTES } from '../lambdas/engine/config.ts';
import { ensureSystemPackages, ensureWrk, nginxVersion, wrkVersion } from './deps.ts';
import { type Nginx, startNginx } from './nginx.ts';
import { BENCH_DIR, OUT_DIR, ROOT, SITE_DIR } from './paths.ts';
import { gitHead, latencyStats, short, table, type LatencyStats } from './report.ts';
import { ensureSite } from './site.ts';

const execFileAsync = promisify(execFile);

const TARGETS = { statusRps: 5000, statusP99Ms: 20, runP50Ms: 150, bodyMaxMs: 250, meP99Ms: 50, minimalRatio: 0.5 } as const;
const PARTS = ['status', 'minimal', 'run', 'bodies'] as const;
type Part = (typeof PARTS)[number];
/** Time-out of every request the bench makes itself (wrk gets the same). */
const REQUEST_TIMEOUT_MS = 30_000;
/** Part bodies stops sending after this long even if some body was never sent (the service hangs). */
const BODIES_HARD_CAP_MS = 120_000;
/** Part run: pause between two status polls. */
const POLL_MS = 5;
const LONG_JOBS = 4;
const API_SITE_DIR = join(OUT_DIR, 'api-site');
const ONE_PAGE_ITEMS = 5;

interface Options {
  only: Part[];
  wrkSeconds: number;
  connections: number;
  rate: string;
  runs: number;
  bodiesSeconds: number;
  bodiesConnections: number;
  minimalRounds: number;
  /** Leave the service's access log on (its default: one JSON line per request to stdout, read by this process). */
  accessLog: boolean;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string', default: PARTS.join(',') },
      'wrk-seconds': { type: 'string', default: '10' },
      connections: { type: 'string', default: '64' },
      rate: { type: 'string', default: '16k' },
      runs: { type: 'string', default: '50' },
      'bodies-seconds': { type: 'string', default: '10' },
      'bodies-connections': { type: 'string', default: '3' },
      'minimal-rounds': { type: 'string', default: '3' },
      'access-log': { type: 'boolean', default: false },
    },
  });
  const only = values.only.split(',').map((s) => s.trim()).filter(Boolean);
  for (const p of only) if (!(PARTS as readonly string[]).includes(p)) throw new Error(`--only: unknown part "${p}" (parts: ${PARTS.join(', ')})`);
  const int = (name: string, v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got "${v}"`);
    return n;
  };
  if (!/^\d+[km]?$/.test(values.rate)) throw new Error(`--rate must be an nginx rate like 16k, got "${values.rate}"`);
  return {
    only: only as Part[],
    wrkSeconds: int('wrk-seconds', values['wrk-seconds']),
    connections: int('connections', values.connections),
    rate: values.rate,
    runs: int('runs', values.runs),
    bodiesSeconds: int('bodies-seconds', values['bodies-seconds']),
    bodiesConnections: int('bodies-connections', values['bodies-connections']),
    minimalRounds: int('minimal-rounds', values['minimal-rounds']),
    accessLog: values['access-log'],
  };
}

// ---- what runs now, stopped on every path ----

/** Stop functions of the children running now (service, nginx, wrk), for Ctrl-C. */
const running = new Set<() => unknown>();
const liveChildren = new Set<ChildProcess>();
// Last resort when the runner exits without stopping a child (an uncaught error): never leave one running.
process.on('exit', () => {
  for (const c of liveChildren) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Runs `fn` with a started resource and stops it afterwards, whatever happens (also on Ctrl-C, through `running`). */
async function withStarted<R extends { stop(): Promise<void> }, T>(resource: R, fn: (r: R) => Promise<T>): Promise<T> {
  const stop = () => resource.stop();
  running.add(stop);
  try {
    return await fn(resource);
  } finally {
    running.delete(stop);
    await resource.stop();
  }
}

// ---- stats ----


const ms = (x: number): string => (Number.isFinite(x) ? x.toFixed(x < 10 ? 2 : 1) : '-');
const verdict = (pass: boolean): string => (pass ? 'PASS' : 'MISSED');
const round = (x: number, d = 2): number => Math.round(x * 10 ** d) / 10 ** d;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

// ---- the service ----

interface Service {
  url: string;
  /** account name -> API key */
  keys: Record<string, string>;
  /** account name -> account id */
  ids: Record<string, number>;
  /** The service's DATA_DIR (removed when it stops). */
  dataDir: string;
  alive(): boolean;
  /** The last lines the service printed. */
  tail(): string;
  stop(): Promise<void>;
}

/** A copy of lambdas/core/plans.json whose pro plan has 1,000,000 credits a month and calls an hour. */
function writePlans(file: string): void {
  const plans = JSON.parse(readFileSync(join(ROOT, 'lambdas/core/plans.json'), 'utf8')) as { credits: { plans: Record<string, Record<string, unknown>> } };
  Object.assign(plans.credits.plans.pro!, { credits_per_month: 1_000_000, rate_limit_per_hour: 1_000_000 });
  writeFileSync(file, JSON.stringify(plans, null, 2));
}

/**
 * Starts `node bin/local.ts` on a free port with a fresh DATA_DIR and a generated plans file, after creating
 * one pro account per name with the accounts CLI. Its temporary folder is removed when it stops.
 */
/** Whether services start with their access log on (`--access-log`); off (`SAI_ACCESS_LOG=0`) by default. */
let serviceAccessLog = false;

async function startService(accounts: string[]): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), 'sai-bench-api-'));
  const plansFile = join(dir, 'plans.json');
  writePlans(plansFile);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: join(dir, 'data'),
    PORT: '0',
    HOST: '127.0.0.1',
    SAI_OUTBOUND_ALLOW: '127.0.0.0/8',
    ...(serviceAccessLog ? {} : { SAI_ACCESS_LOG: '0' }),
    SAI_WORKERS: String(LONG_JOBS),
    SAI_MAX_PAGES: '2000',
    SAI_PLANS_FILE: plansFile,
    // A per-account limit of refused requests (being added to the service): part bodies sends thousands.
    SAI_BAD_REQUEST_LIMIT: '1000000',
  };
  let out = '';
  const keep = (c: Buffer) => {
    out = (out + c.toString()).slice(-20_000);
  };
  try {
    const keys: Record<string, string> = {};
    const ids: Record<string, number> = {};
    for (const name of accounts) {
      const { stdout } = await execFileAsync(process.execPath, [join(ROOT, 'bin/accounts.ts'), 'create', '--email', `${name}@bench.example`, '--password', 'bench-password-1', '--plan', 'pro', '--json'], { env, cwd: ROOT });
      const created = JSON.parse(stdout) as { id: number; api_key: string };
      keys[name] = created.api_key;
      ids[name] = created.id;
    }
    const proc = spawn(process.execPath, [join(ROOT, 'bin/local.ts')], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    liveChildren.add(proc);
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    const alive = () => proc.exitCode === null && proc.signalCode === null;
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        if (alive()) {
          proc.kill('SIGTERM');
          const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        }
        liveChildren.delete(proc);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    };
    running.add(stop);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`service did not start in 30 s:\n${out}`)), 30_000);
        const check = () => {
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        };
        proc.stdout!.on('data', check);
        proc.once('exit', (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`service exited with ${code ?? signal} at start:\n${out}`));
        });
      });
      return { url, keys, ids, dataDir: env.DATA_DIR!, alive, tail: () => out.trim().split('\n').slice(-15).join('\n'), stop };
    } catch (err) {
      await stop();
      throw err;
    } finally {
      running.delete(stop);
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

// ---- HTTP ----

interface Answer {
  status: number;
  ms: number;
  body: any;
  /** `timeout`, or the connection error; status is 0 then. */
  error?: string;
}

/** One request over `client` (one kept-alive connection), the body read; never throws (status 0 with `error`). */
async function call(client: Client, method: 'GET' | 'POST', path: string, key: string, body?: string | Buffer): Promise<Answer> {
  const t0 = performance.now();
  const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  try {
    const res = await client.request({
      path,
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body }),
      signal,
    });
    const text = await res.body.text();
    const elapsed = performance.now() - t0;
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* not JSON: kept as text */ }
    return { status: res.statusCode, ms: elapsed, body: parsed };
  } catch (err) {
    return { status: 0, ms: performance.now() - t0, body: null, error: signal.aborted ? 'timeout' : (err as Error).message };
  }
}

/** `call` that wants a given status; throws with the answer otherwise. */
async function expect(status: number, client: Client, method: 'GET' | 'POST', path: string, key: string, body?: unknown): Promise<any> {
  const r = await call(client, method, path, key, body === undefined ? undefined : JSON.stringify(body));
  if (r.status !== status) throw new Error(`${method} ${path}: ${r.error ?? `HTTP ${r.status}`} ${short(r.body)} (wanted ${status})`);
  return r.body;
}

const statusPath = (id: string): string => `/api/v1/jobs/${id}/status/`;

/** Polls a job every `everyMs` until it is completed or failed (at most `timeoutMs`); returns its last status. */
async function waitForEnd(client: Client, key: string, id: string, everyMs: number, timeoutMs: number): Promise<any> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const job = await expect(200, client, 'GET', statusPath(id), key);
    if (job.status === 'completed' || job.status === 'failed') return job;
    if (performance.now() > end) throw new Error(`job ${id} still ${job.status} after ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

// ---- wrk ----

interface WrkResult {
  requestsPerSecond: number;
  requests: number;
  seconds: number;
  latencyMs: { avg: number; p50: number; p75: number; p90: number; p99: number; max: number };
  non2xx: number;
  socketErrors: { connect: number; read: number; write: number; timeout: number };
}

/** "812.00us", "5.23ms", "1.20s", "2.00m" -> ms. */
function wrkDuration(s: string): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(s);
  if (!m) throw new Error(`wrk: unreadable duration "${s}"`);
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'us']!;
}

/** Reads the figures of wrk 4.1's output with --latency. */
export function parseWrk(text: string): WrkResult {
  const need = (re: RegExp, what: string): RegExpExecArray => {
    const m = re.exec(text);
    if (!m) throw new Error(`wrk output has no ${what}:\n${text}`);
    return m;
  };
  const lat = need(/^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)/m, 'Latency line');
  const pct = (p: number): number => wrkDuration(need(new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm'), `${p}% latency`)[1]!);
  const total = need(/(\d+) requests in ([\d.]+\w+),/, 'request count');
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    requestsPerSecond: Number(need(/Requests\/sec:\s+([\d.]+)/, 'Requests/sec')[1]),
    requests: Number(total[1]),
    seconds: wrkDuration(total[2]!) / 1000,
    latencyMs: { avg: wrkDuration(lat[1]!), p50: pct(50), p75: pct(75), p90: pct(90), p99: pct(99), max: wrkDuration(lat[3]!) },
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
    socketErrors: { connect: Number(sock?.[1] ?? 0), read: Number(sock?.[2] ?? 0), write: Number(sock?.[3] ?? 0), timeout: Number(sock?.[4] ?? 0) },
  };
}

/** `wrk -t2 -c<connections> -d<seconds>s --latency` with the API key on `url`; killed on Ctrl-C and 60 s past its time. */
async function runWrk(wrk: string, url: string, key: string, seconds: number, connections: number): Promise<WrkResult & { output: string }> {
  const args = ['-t2', `-c${connections}`, `-d${seconds}s`, `--timeout`, `${REQUEST_TIMEOUT_MS / 1000}s`, '--latency', '-H', `Authorization: Bearer ${key}`, url];
  const child = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  liveChildren.add(child);
  const kill = () => child.kill('SIGKILL');
  running.add(kill);
  const timer = setTimeout(kill, (seconds + 60) * 1000);
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
  try {
    const code = await new Promise<number | string>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c, s) => resolve(c ?? s ?? 'unknown'));
    });
    if (code !== 0) throw new Error(`wrk exited with ${code}:\n${out}`);
    return { ...parseWrk(out), output: out };
  } finally {
    clearTimeout(timer);
    running.delete(kill);
    liveChildren.delete(child);
  }
}

/** A wrk result as one table row. */
function wrkRow(label: string, r: WrkResult): string[] {
  const errs = r.socketErrors.connect + r.socketErrors.read + r.socketErrors.write + r.socketErrors.timeout;
  return [label, r.requestsPerSecond.toFixed(0), ms(r.latencyMs.p50), ms(r.latencyMs.p90), ms(r.latencyMs.p99), ms(r.latencyMs.max), String(r.non2xx), String(errs)];
}

const WRK_HEAD = ['GET status', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx', 'socket errors'];

// ---- targets ----

interface Target { part: Part; target: string; value: string; pass: boolean }

// ---- part status ----

interface JobState { id: string; status: string; pages: number }

async function jobStates(client: Client, key: string, ids: string[]): Promise<JobState[]> {
  const out: JobState[] = [];
  for (const id of ids) {
    const job = await expect(200, client, 'GET', statusPath(id), key);
    out.push({ id, status: job.status, pages: job.pages_scraped });
  }
  return out;
}

const describeStates = (s: JobState[]): string =>
  `${s.filter((j) => j.status === 'running').length}/${s.length} running (pages scraped: ${s.map((j) => j.pages).join(', ')})`;

interface StatusResult {
  idle: WrkResult;
  completed: WrkResult;
  runningJob: WrkResult;
  /** The 4 jobs before and after each wrk run under load. */
  checks: { at: string; jobs: JobState[] }[];
  allRunning: boolean;
  outputs: Record<string, string>;
}

/** Part status: wrk on GET status, idle and while 4 network-bound jobs crawl. */
async function partStatus(o: Options, wrk: string, nginxBin: string, targets: Target[]): Promise<StatusResult> {
  const site = ensureSite();
  console.log(`\n== status polls under load: wrk -t2 -c${o.connections} -d${o.wrkSeconds}s --latency on GET /api/v1/jobs/{id}/status/`);
  console.log(`   site ${site.cached ? 'cached' : 'generated'}: ${SITE_DIR}; nginx limit_rate ${o.rate} per connection: a slow remote site (nginx sends the first second's worth at once, then ${o.rate}/s), so the jobs mostly wait on the network`);
  return withStarted(await startNginx({ nginx: nginxBin, root: SITE_DIR, limitRate: o.rate }), async (nginx) =>
    withStarted(await startService(['status']), async (svc) => {
      const key = svc.keys.status!;
      const client = new Client(svc.url, { keepAliveTimeout: 60_000 });
      try {
        const yaml = readFileSync(join(BENCH_DIR, 'configs', 'books.yaml'), 'utf8').replaceAll('127.0.0.1:PORT', new URL(nginx.origin).host);
        // The polled job: one listing page, one row kept (a status answer as small as a running job's).
        const small = await expect(202, client, 'POST', '/api/v1/run/', key, { yaml_content: yaml.replace(/max_pages: \d+/, 'max_pages: 1') + '\noutput: { limit: 1 }\n' });
        const done = await waitForEnd(client, key, small.id, 100, 120_000);
        if (done.status !== 'completed') throw new Error(`the one-row job ended ${done.status}: ${done.status_message}`);
        const doneUrl = svc.url + statusPath(small.id);
        console.log(`   service ${svc.url}; polled job ${small.id} completed (${done.results.row_count} row)`);

        await runWrk(wrk, doneUrl, key, 3, o.connections); // warm-up (JIT, caches), not counted
        const idle = await runWrk(wrk, doneUrl, key, o.wrkSeconds, o.connections);
        console.log(`   idle (no job running): ${idle.requestsPerSecond.toFixed(0)} req/s, p99 ${ms(idle.latencyMs.p99)} ms`);

        const ids: string[] = [];
        for (let i = 0; i < LONG_JOBS; i++) ids.push((await expect(202, client, 'POST', '/api/v1/run/', key, { yaml_content: yaml })).id);
        const until = performance.now() + 30_000;
        let states = await jobStates(client, key, ids);
        while (states.some((j) => j.status !== 'running') && performance.now() < until) {
          if (states.some((j) => j.status === 'completed' || j.status === 'failed')) break;
          await sleep(100);
          states = await jobStates(client, key, ids);
        }
        // The jobs' first pages load the engine in each job thread (module loading and JIT on 4 threads at
        // once, a start-up cost paid once per worker); the figures are of the service at work, so they wait
        // until every job has a page behind it, and a 3 s wrk run under load warms up as the idle one did.
        while (states.every((j) => j.status === 'running') && states.some((j) => !j.pages) && performance.now() < until) {
          await sleep(100);
          states = await jobStates(client, key, ids);
        }
        await runWrk(wrk, doneUrl, key, 3, o.connections);
        const checks = [{ at: 'before wrk (completed job)', jobs: states }];
        console.log(`   ${LONG_JOBS} jobs of ${yaml.match(/max_pages: (\d+)/)![1]} listing pages + their detail pages: ${describeStates(states)}`);
        const completed = await runWrk(wrk, doneUrl, key, o.wrkSeconds, o.connections);
        checks.push({ at: 'after wrk (completed job)', jobs: await jobStates(client, key, ids) });
        console.log(`   after wrk on the completed job: ${describeStates(checks.at(-1)!.jobs)}`);
        const runningJob = await runWrk(wrk, svc.url + statusPath(ids[0]!), key, o.wrkSeconds, o.connections);
        checks.push({ at: 'after wrk (running job)', jobs: await jobStates(client, key, ids) });
        console.log(`   after wrk on a running job: ${describeStates(checks.at(-1)!.jobs)}`);
        const allRunning = checks.every((c) => c.jobs.every((j) => j.status === 'running'));
        if (!allRunning) console.log(`   WARNING: not all ${LONG_JOBS} jobs were running throughout: the figures under load are not under the intended load`);

        const head = [...WRK_HEAD];
        head[0] = `GET status, ${o.connections} connections`;
        console.log(`\n${table([head, wrkRow('completed job, idle', idle), wrkRow(`completed job, ${LONG_JOBS} jobs running`, completed), wrkRow(`running job, ${LONG_JOBS} jobs running`, runningJob)])}`);
        const clean = (r: WrkResult) => r.non2xx === 0 && Object.values(r.socketErrors).every((n) => n === 0);
        if (!clean(completed) || !clean(runningJob) || !clean(idle)) console.log('   WARNING: wrk saw non-2xx answers or socket errors (see the table)');
        const rpsPass = completed.requestsPerSecond >= TARGETS.statusRps && clean(completed);
        const p99Pass = completed.latencyMs.p99 < TARGETS.statusP99Ms && clean(completed);
        targets.push(
          { part: 'status', target: `status polls, ${LONG_JOBS} jobs running: >= ${TARGETS.statusRps.toLocaleString('en-US')} req/s`, value: `${completed.requestsPerSecond.toFixed(0)} req/s`, pass: rpsPass },
          { part: 'status', target: `status polls, ${LONG_JOBS} jobs running: p99 < ${TARGETS.statusP99Ms} ms`, value: `${ms(completed.latencyMs.p99)} ms`, pass: p99Pass },
        );
        console.log(`   target >= ${TARGETS.statusRps} req/s: ${verdict(rpsPass)}; p99 < ${TARGETS.statusP99Ms} ms: ${verdict(p99Pass)} (completed job, ${LONG_JOBS} jobs running; the running job: ${runningJob.requestsPerSecond.toFixed(0)} req/s, p99 ${ms(runningJob.latencyMs.p99)} ms)`);
        const strip = ({ output: _o, ...r }: WrkResult & { output: string }): WrkResult => r;
        return {
          idle: strip(idle), completed: strip(completed), runningJob: strip(runningJob), checks, allRunning,
          outputs: { idle: idle.output, completed: completed.output, runningJob: runningJob.output },
        };
      } finally {
        await client.close();
      }
    }));
}

// ---- part minimal ----

/** Rows of the polled job of part minimal. */
const MINIMAL_ROWS = 100;

interface MinimalRound { order: string; service: WrkResult; minimal: WrkResult }
interface MinimalResult {
  rows: number;
  /** Bytes of the status answer (the same from both). */
  answerBytes: number;
  rounds: MinimalRound[];
  median: { serviceRps: number; minimalRps: number; ratio: number; serviceP99: number; minimalP99: number };
  outputs: string[];
}

/** Starts bench/contenders/status-minimal.ts on the service's database; stopped with the part. */
async function startMinimal(svc: Service): Promise<{ url: string; stop(): Promise<void> }> {
  const proc = spawn(process.execPath, [join(BENCH_DIR, 'contenders', 'status-minimal.ts'), '--db', join(svc.dataDir, 'scrape-ai.db'), '--blobs', join(svc.dataDir, 'blobs'),
    '--account', String(svc.ids.poll), '--key', svc.keys.poll!], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  liveChildren.add(proc);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    liveChildren.delete(proc);
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the minimal server did not start in 20 s:\n${out}`)), 20_000);
      proc.stdout!.on('data', () => {
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the minimal server exited with ${code ?? signal}:\n${out}`));
      });
    });
    return { url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * Part minimal: wrk on GET status of a completed 100-row job, the service against the minimal node:http + node:sqlite
 * server answering the same row with the same body, in alternating order, nothing else running.
 */
async function partMinimal(o: Options, wrk: string, nginxBin: string, targets: Target[]): Promise<MinimalResult> {
  ensureSite();
  console.log(`\n== status polls of a completed ${MINIMAL_ROWS}-row job: the service vs a minimal node:http + node:sqlite server on the same row (wrk -t2 -c${o.connections} -d${o.wrkSeconds}s, ${o.minimalRounds} rounds, alternating)`);
  return withStarted(await startNginx({ nginx: nginxBin, root: SITE_DIR }), async (nginx) =>
    withStarted(await startService(['poll']), async (svc) => {
      const key = svc.keys.poll!;
      const client = new Client(svc.url, { keepAliveTimeout: 60_000 });
      try {
        const yaml = readFileSync(join(BENCH_DIR, 'configs', 'books-100.yaml'), 'utf8').replaceAll('127.0.0.1:PORT', new URL(nginx.origin).host);
        const job = await expect(202, client, 'POST', '/api/v1/run/', key, { yaml_content: yaml });
        const done = await waitForEnd(client, key, job.id, 100, 180_000);
        if (done.status !== 'completed' || done.results.row_count !== MINIMAL_ROWS) throw new Error(`the ${MINIMAL_ROWS}-row job ended ${done.status} with ${done.results?.row_count} rows: ${done.status_message}`);
        return await withStarted(await startMinimal(svc), async (minimal) => {
          // The same answer from both, or the comparison means nothing.
          const path = statusPath(job.id);
          const mine = await fetch(svc.url + path, { headers: { authorization: `Bearer ${key}` } });
          const theirs = await fetch(minimal.url + path, { headers: { authorization: `Bearer ${key}` } });
          const [a, b] = [await mine.text(), await theirs.text()];
          if (mine.status !== 200 || theirs.status !== 200 || JSON.stringify(JSON.parse(a)) !== JSON.stringify(JSON.parse(b))) {
            let at = 0;
            while (at < a.length && a[at] === b[at]) at++;
            throw new Error(`the two servers answer differently from character ${at} on: service ${mine.status} …${a.slice(Math.max(0, at - 80), at + 120)}…, minimal ${theirs.status} …${b.slice(Math.max(0, at - 80), at + 120)}…`);
          }
          console.log(`   service ${svc.url}, minimal ${minimal.url}; job ${job.id}: ${MINIMAL_ROWS} rows, status answer ${Buffer.byteLength(a)} bytes (the same JSON from both)`);
          await runWrk(wrk, svc.url + path, key, 3, o.connections); // warm-up (JIT, caches), not counted
          await runWrk(wrk, minimal.url + path, key, 3, o.connections);
          const rounds: MinimalRound[] = [];
          const outputs: string[] = [];
          for (let i = 0; i < o.minimalRounds; i++) {
            // Alternating order: whatever the machine does meanwhile falls on both alike.
            const serviceFirst = i % 2 === 0;
            const first = await runWrk(wrk, (serviceFirst ? svc.url : minimal.url) + path, key, o.wrkSeconds, o.connections);
            const second = await runWrk(wrk, (serviceFirst ? minimal.url : svc.url) + path, key, o.wrkSeconds, o.connections);
            const [service, min] = serviceFirst ? [first, second] : [second, first];
            outputs.push(service.output, min.output);
            const strip = ({ output: _o, ...r }: WrkResult & { output: string }): WrkResult => r;
            rounds.push({ order: serviceFirst ? 'service, minimal' : 'minimal, service', service: strip(service), minimal: strip(min) });
            console.log(`   round ${i + 1}: service ${service.requestsPerSecond.toFixed(0)} req/s p99 ${ms(service.latencyMs.p99)} ms; minimal ${min.requestsPerSecond.toFixed(0)} req/s p99 ${ms(min.latencyMs.p99)} ms; ratio ${(service.requestsPerSecond / min.requestsPerSecond).toFixed(2)}`);
          }
          const head = [...WRK_HEAD];
          head[0] = `GET status, ${MINIMAL_ROWS} rows, ${o.connections} connections`;
          console.log(`\n${table([head, ...rounds.flatMap((r, i) => [wrkRow(`round ${i + 1}: service`, r.service), wrkRow(`round ${i + 1}: minimal node:http + node:sqlite`, r.minimal)])])}`);
          const m = {
            serviceRps: round(median(rounds.map((r) => r.service.requestsPerSecond)), 0),
            minimalRps: round(median(rounds.map((r) => r.minimal.requestsPerSecond)), 0),
            ratio: round(median(rounds.map((r) => r.service.requestsPerSecond / r.minimal.requestsPerSecond))),
            serviceP99: round(median(rounds.map((r) => r.service.latencyMs.p99))),
            minimalP99: round(median(rounds.map((r) => r.minimal.latencyMs.p99))),
          };
          const clean = (r: WrkResult) => r.non2xx === 0 && Object.values(r.socketErrors).every((n) => n === 0);
          const allClean = rounds.every((r) => clean(r.service) && clean(r.minimal));
          if (!allClean) console.log('   WARNING: wrk saw non-2xx answers or socket errors (see the table)');
          console.log(`   medians of ${rounds.length} rounds: service ${m.serviceRps} req/s, p99 ${ms(m.serviceP99)} ms; minimal ${m.minimalRps} req/s, p99 ${ms(m.minimalP99)} ms; service/minimal ${m.ratio.toFixed(2)}×`);
          const ratioPass = m.ratio >= TARGETS.minimalRatio && allClean;
          const p99Pass = m.serviceP99 < TARGETS.statusP99Ms && allClean;
          targets.push(
            { part: 'minimal', target: `status of a completed ${MINIMAL_ROWS}-row job: >= ${TARGETS.minimalRatio}× the minimal server's req/s`, value: `${m.ratio.toFixed(2)}× (${m.serviceRps} vs ${m.minimalRps} req/s)`, pass: ratioPass },
            { part: 'minimal', target: `status of a completed ${MINIMAL_ROWS}-row job: p99 < ${TARGETS.statusP99Ms} ms`, value: `${ms(m.serviceP99)} ms (minimal: ${ms(m.minimalP99)} ms)`, pass: p99Pass },
          );
          console.log(`   target >= ${TARGETS.minimalRatio}× the minimal server: ${verdict(ratioPass)}; p99 < ${TARGETS.statusP99Ms} ms: ${verdict(p99Pass)}`);
          return { rows: MINIMAL_ROWS, answerBytes: Buffer.byteLength(a), rounds, median: m, outputs };
        });
      } finally {
        await client.close();
      }
    }));
}

// ---- the small site of parts run and bodies ----

/** Writes .bench/api-site/one.html: a 1 KB page of 5 items, each linking to its own URL (?item=N). */
function writeApiSite(): void {
  mkdirSync(API_SITE_DIR, { recursive: true });
  const items = Array.from({ length: ONE_PAGE_ITEMS }, (_, i) =>
    `  <li class="item"><h2> Item ${i + 1} </h2> <span class="price">£${(10 + i * 2.5).toFixed(2)}</span> <a href="/one.html?item=${i + 1}">more about item ${i + 1}</a></li>`);
  writeFileSync(join(API_SITE_DIR, 'one.html'), `<!doctype html>\n<html><head><meta charset="utf-8"><title>One page</title></head>\n<body><h1>Items</h1>\n<ul>\n${items.join('\n')}\n</ul></body></html>\n`);
}

// ---- part run ----

interface RunSample { ms: number; serverMs: number; polls: number }
interface RunResult { runs: number; warmUp: number; totalMs: LatencyStats; serverMs: LatencyStats; polls: LatencyStats; samples: RunSample[] }

/** One job: POST /run/, then GET status every POLL_MS over the same connection until completed. */
async function timeRun(client: Client, key: string, configId: string): Promise<RunSample> {
  const t0 = performance.now();
  const job = await expect(202, client, 'POST', '/api/v1/run/', key, { config_id: configId });
  let polls = 0;
  for (;;) {
    const r = await expect(200, client, 'GET', statusPath(job.id), key);
    polls++;
    if (r.status === 'completed') {
      if (r.results.row_count !== ONE_PAGE_ITEMS) throw new Error(`job ${job.id} gave ${r.results.row_count} rows, not ${ONE_PAGE_ITEMS}`);
      return { ms: performance.now() - t0, serverMs: Date.parse(r.completed_at) - Date.parse(r.created_at), polls };
    }
    if (r.status === 'failed') throw new Error(`job ${job.id} failed: ${r.status_message}`);
    if (performance.now() - t0 > 60_000) throw new Error(`job ${job.id} still ${r.status} after 60 s`);
    await sleep(POLL_MS);
  }
}

/** Part run: from POST /run/ to `completed` for a one-page config, `runs` times one after another. */
async function partRun(o: Options, svc: Service, nginx: Nginx, targets: Target[]): Promise<RunResult> {
  console.log(`\n== run to completed: POST /run/ of bench/configs/one-page.yaml, then GET status every ${POLL_MS} ms over one kept-alive connection; ${o.runs} jobs one after another`);
  const key = svc.keys.run!;
  const client = new Client(svc.url, { keepAliveTimeout: 60_000 });
  try {
    const yaml = readFileSync(join(BENCH_DIR, 'configs', 'one-page.yaml'), 'utf8').replaceAll('127.0.0.1:PORT', new URL(nginx.origin).host);
    const config = await expect(201, client, 'POST', '/api/v1/configs/', key, { name: 'bench one page', target_url: `${nginx.origin}/one.html`, yaml_content: yaml });
    const warmUp = 5;
    for (let i = 0; i < warmUp; i++) await timeRun(client, key, config.id);
    const samples: RunSample[] = [];
    for (let i = 0; i < o.runs; i++) samples.push(await timeRun(client, key, config.id));
    const total = latencyStats(samples.map((s) => s.ms));
    const server = latencyStats(samples.map((s) => s.serverMs));
    const polls = latencyStats(samples.map((s) => s.polls));
    console.log(table([
      ['', 'n', 'p50', 'p95', 'max'],
      ['POST /run/ to completed seen, ms', String(total.n), ms(total.p50), ms(total.p95), ms(total.max)],
      ['job created_at to completed_at, ms', String(server.n), ms(server.p50), ms(server.p95), ms(server.max)],
      ['status polls per job', String(polls.n), String(polls.p50), String(polls.p95), String(polls.max)],
    ]));
    const pass = total.p50 < TARGETS.runP50Ms;
    targets.push({ part: 'run', target: `POST /run/ to completed (one page): p50 < ${TARGETS.runP50Ms} ms`, value: `${ms(total.p50)} ms (p95 ${ms(total.p95)})`, pass });
    console.log(`   target p50 < ${TARGETS.runP50Ms} ms: ${verdict(pass)}`);
    return { runs: o.runs, warmUp, totalMs: total, serverMs: server, polls, samples: samples.map((s) => ({ ms: round(s.ms), serverMs: s.serverMs, polls: s.polls })) };
  } finally {
    await client.close();
  }
}

// ---- part bodies ----

interface BodyKind { kind: string; what: string; yaml: string }

/** A small valid config on the bench's page: what most hostile bodies add their worst case to. */
function baseConfig(target: string): string {
  return `version: "2.0"\nname: hostile\ntarget: { url: "${target}", engine: lightweight }\nextract:\n  container: li.item\n  fields:\n    - { name: title, selector: h2 }\n`;
}

/** `head` then `line(i)` for i = 0, 1, … while the text stays within `maxBytes` and i < `count`; returns the text and the count. */
function fill(head: string, line: (i: number) => string, count: number, tail = '', maxBytes = MAX_CONFIG_BYTES): { text: string; n: number } {
  const parts = [head];
  let bytes = Buffer.byteLength(head) + Buffer.byteLength(tail);
  let n = 0;
  for (; n < count; n++) {
    const l = line(n);
    const b = Buffer.byteLength(l);
    if (bytes + b > maxBytes) break;
    parts.push(l);
    bytes += b;
  }
  parts.push(tail);
  return { text: parts.join(''), n };
}

/** The largest valid config: 200 extract fields and 200 detail fields of the types that run without a browser (image_url aside), most with several transforms. */
function maxValidConfig(target: string): string {
  const shapes = [
    (n: string) => `    - name: ${n}\n      selector: h2\n      type: text\n      transform: [strip, lowercase, "replace:item:thing", trim_whitespace, "slice:0:40"]\n      default: ""\n`,
    (n: string) => `    - name: ${n}\n      selector: span.price\n      transform: [strip, strip_currency, to_number]\n      default: 0\n`,
    (n: string) => `    - name: ${n}\n      selector: "li.item > a"\n      type: attribute\n      attribute: href\n      transform: [strip, "split:=:-1", extract_number]\n`,
    (n: string) => `    - name: ${n}\n      selector: a\n      type: regex\n      pattern: "item (\\\\d+)"\n      transform: [strip, to_number]\n`,
    (n: string) => `    - name: ${n}\n      selector: "h2, span"\n      type: html\n      transform: [strip_html, trim_whitespace, uppercase, "template:<{value}>"]\n`,
    (n: string) => `    - name: ${n}\n      selector: "span.price:not(.old)"\n      type: count\n`,
    (n: string) => `    - name: ${n}\n      selector: "a[href*=item]"\n      type: exists\n`,
    (n: string) => `    - name: ${n}\n      selector: "h2 ~ a"\n      type: text\n      multiple: true\n      transform: ["regex:(\\\\w+)", lowercase, "replace:more:less"]\n`,
  ];
  let y = `version: "2.0"\nname: max fields\ntarget: { url: "${target}", engine: lightweight }\nextract:\n  container: li.item\n  type: list\n  fields:\n`;
  y += '    - { name: url, selector: a, type: link }\n';
  for (let i = 1; i < 200; i++) y += shapes[i % shapes.length]!(`e${i}`);
  y += 'detail_fields:\n  fields:\n';
  for (let i = 0; i < 200; i++) y += shapes[i % shapes.length]!(`d${i}`);
  return y + 'output: { deduplicate: true, limit: 100 }\n';
}

/** The bodies of part bodies (yaml_content of each; all within the service's 256 KiB). */
function hostileBodies(target: string): BodyKind[] {
  const base = baseConfig(target);
  const a = fill(base, (i) => `k${i}: 1\n`, 25_000);
  const b = fill(`${base}output:\n`, (i) => `  k${i}: 1\n`, 25_000);
  const c = fill(`${base}x: [1`, () => ',1', 100_000 - 1, ']\n');
  const d = fill(`${base}x: {k0: 1`, (i) => `, k${i + 1}: 1`, 20_000 - 1, '}\n');
  const laughs = [`l0: &l0 [${Array(10).fill('"lol"').join(', ')}]`];
  for (let i = 1; i < 10; i++) laughs.push(`l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
  const h = fill(base, () => '#\n', 1_000_000);
  const kinds: BodyKind[] = [
    { kind: 'a', what: `flat mapping, ${a.n.toLocaleString('en-US')} keys`, yaml: a.text },
    { kind: 'b', what: `${b.n.toLocaleString('en-US')} keys under output:`, yaml: b.text },
    { kind: 'c', what: `flow sequence of ${(c.n + 1).toLocaleString('en-US')} items`, yaml: c.text },
    { kind: 'd', what: `flow mapping, ${(d.n + 1).toLocaleString('en-US')} keys`, yaml: d.text },
    { kind: 'e', what: 'nesting [[[…]]], 5,000 levels', yaml: `${base}x: ${'['.repeat(5000)}${']'.repeat(5000)}\n` },
    { kind: 'f', what: 'alias bomb, 10 levels × 10 (1e10 items)', yaml: `${base}${laughs.join('\n')}\n` },
    { kind: 'g', what: 'valid: 200 fields + 200 detail fields', yaml: maxValidConfig(target) },
    { kind: 'h', what: `${(Buffer.byteLength(h.text) / 1024).toFixed(0)} KiB: config + ${h.n.toLocaleString('en-US')} comment lines`, yaml: h.text },
  ];
  for (const k of kinds) {
    const bytes = Buffer.byteLength(k.yaml);
    if (bytes > MAX_CONFIG_BYTES) throw new Error(`body ${k.kind} is ${bytes} bytes, over the service's ${MAX_CONFIG_BYTES}`);
  }
  return kinds;
}

interface Variant { kind: BodyKind; endpoint: 'configs' | 'run'; path: string; body: Buffer }
interface VariantResult {
  kind: string;
  what: string;
  endpoint: string;
  yamlBytes: number;
  n: number;
  /** "400 invalid_config" -> count; "timeout" or the connection error for requests with no answer. */
  answers: Record<string, number>;
  /** The first answer's error message (or the created id), shortened. */
  first: string;
  times: LatencyStats;
  pass: boolean;
  samplesMs: number[];
  /** The body sent once with nothing else going on (before the loop): answer time in ms and answer. */
  alone?: { ms: number; answer: string };
}
interface BodiesResult {
  seconds: number;
  connections: number;
  requests: number;
  notSent: string[];
  serviceAlive: boolean;
  variants: VariantResult[];
  meIdle: LatencyStats;
  meBusy: LatencyStats;
  meFailures: Record<string, number>;
  serviceTail?: string;
}

/** GET /me/ in a loop over `client` until `done()`; answer times and what was not a 200. */
async function meLoop(client: Client, key: string, svc: Service, done: () => boolean, times: number[], failures: Record<string, number>): Promise<void> {
  while (!done() && svc.alive()) {
    const r = await call(client, 'GET', '/api/v1/me/', key);
    times.push(r.ms);
    if (r.status !== 200) {
      const what = r.error ?? `${r.status} ${r.body?.code ?? ''}`.trim();
      failures[what] = (failures[what] ?? 0) + 1;
      if (r.status === 0 && r.error !== 'timeout') await sleep(10); // refused: no busy loop
    }
  }
}

/** Answer label of a request: "400 invalid_config", "201", "timeout", or the connection error. */
const answerOf = (r: Answer): string => r.error ?? `${r.status}${r.body?.code ? ` ${r.body.code}` : ''}`;

/** Each body once, one after another, with nothing else going on (60 s at most): what one body costs without queueing. */
async function sendAlone(variants: Variant[], client: Client, key: string, svc: Service): Promise<({ ms: number; answer: string } | undefined)[]> {
  const out: ({ ms: number; answer: string } | undefined)[] = [];
  const end = performance.now() + 60_000;
  for (const v of variants) {
    if (performance.now() > end || !svc.alive()) break;
    const r = await call(client, 'POST', v.path, key, v.body);
    out.push({ ms: r.ms, answer: answerOf(r) });
  }
  return out;
}

/** Part bodies: account A's hostile bodies in a loop, account B's GET /me/ meanwhile. */
async function partBodies(o: Options, svc: Service, nginx: Nginx, targets: Target[]): Promise<BodiesResult> {
  const target = `${nginx.origin}/one.html`;
  const kinds = hostileBodies(target);
  const variants: Variant[] = kinds.flatMap((k) => [
    { kind: k, endpoint: 'configs' as const, path: '/api/v1/configs/', body: Buffer.from(JSON.stringify({ name: `hostile ${k.kind}`, target_url: target, yaml_content: k.yaml })) },
    { kind: k, endpoint: 'run' as const, path: '/api/v1/run/', body: Buffer.from(JSON.stringify({ yaml_content: k.yaml })) },
  ]);
  console.log(`\n== hostile bodies: account A sends ${kinds.length} bodies to POST /configs/ and POST /run/ (round robin, ${o.bodiesConnections} connections, ${o.bodiesSeconds} s); account B: GET /me/ one at a time`);
  for (const k of kinds) console.log(`   ${k.kind}  ${(Buffer.byteLength(k.yaml) / 1024).toFixed(1).padStart(6)} KiB  ${k.what}`);
  const keyA = svc.keys.hostile!;
  const keyB = svc.keys.me!;
  const meClient = new Client(svc.url, { keepAliveTimeout: 60_000 });
  const clients = Array.from({ length: o.bodiesConnections }, () => new Client(svc.url, { keepAliveTimeout: 60_000 }));
  try {
    // B alone first: warm-up, then the baseline.
    const warm: number[] = [];
    const idleTimes: number[] = [];
    const idleFailures: Record<string, number> = {};
    let count = 0;
    await meLoop(meClient, keyB, svc, () => ++count > 200, warm, idleFailures);
    count = 0;
    await meLoop(meClient, keyB, svc, () => ++count > 500, idleTimes, idleFailures);
    const meIdle = latencyStats(idleTimes);
    console.log(`   B's GET /me/ alone: p50 ${ms(meIdle.p50)} p99 ${ms(meIdle.p99)} max ${ms(meIdle.max)} ms (n=${meIdle.n})`);
    await sendAlone(variants, clients[0]!, keyA, svc); // warm-up (the parser's JIT), not counted
    const alone = await sendAlone(variants, clients[0]!, keyA, svc);

    const results = variants.map(() => ({ times: [] as number[], answers: {} as Record<string, number>, first: '' }));
    const sent = new Set<number>();
    let next = 0;
    const start = performance.now();
    const durationMs = o.bodiesSeconds * 1000;
    /** The next body to send: round robin for the duration, then those never sent; none past the hard cap or once the service died. */
    const pick = (): number | undefined => {
      const elapsed = performance.now() - start;
      if (!svc.alive() || elapsed > BODIES_HARD_CAP_MS) return undefined;
      if (elapsed < durationMs) return next++ % variants.length;
      const i = variants.findIndex((_, j) => !sent.has(j));
      return i < 0 ? undefined : i;
    };
    let aDone = false;
    const meTimes: number[] = [];
    const meFailures: Record<string, number> = {};
    const me = meLoop(meClient, keyB, svc, () => aDone, meTimes, meFailures);
    await Promise.all(clients.map(async (client) => {
      for (let i = pick(); i !== undefined; i = pick()) {
        sent.add(i);
        const v = variants[i]!;
        const r = await call(client, 'POST', v.path, keyA, v.body);
        const res = results[i]!;
        res.times.push(r.ms);
        const answer = answerOf(r);
        res.answers[answer] = (res.answers[answer] ?? 0) + 1;
        if (!res.first) res.first = r.error ?? (r.status < 300 ? `id ${r.body?.id}` : String(r.body?.error ?? short(r.body)));
      }
    }));
    aDone = true;
    await me;
    const seconds = (performance.now() - start) / 1000;
    const serviceAlive = svc.alive();

    const out: VariantResult[] = variants.map((v, i) => {
      const r = results[i]!;
      const t = latencyStats(r.times);
      return {
        kind: v.kind.kind, what: v.kind.what, endpoint: `POST /${v.endpoint}/`, yamlBytes: Buffer.byteLength(v.kind.yaml), n: t.n,
        answers: r.answers, first: r.first.length > 160 ? `${r.first.slice(0, 157)}...` : r.first, times: t,
        pass: t.n > 0 && t.max <= TARGETS.bodyMaxMs && Object.keys(r.answers).every((a) => /^\d/.test(a)),
        samplesMs: r.times.map((x) => round(x, 1)),
        ...(alone[i] ? { alone: { ms: round(alone[i].ms, 1), answer: alone[i].answer } } : {}),
      };
    });
    const rows = [['body', 'endpoint', 'alone ms', 'n', 'answers', 'p50 ms', 'p99 ms', 'max ms', `<= ${TARGETS.bodyMaxMs} ms`]];
    for (const r of out) {
      rows.push([`${r.kind} ${r.what}`, r.endpoint, r.alone ? ms(r.alone.ms) : '-', String(r.n), Object.entries(r.answers).map(([a, n]) => `${a} ×${n}`).join(', ') || 'not sent', ms(r.times.p50), ms(r.times.p99), ms(r.times.max), r.n ? verdict(r.pass) : 'NOT SENT']);
    }
    console.log(`\n${table(rows)}`);
    console.log('   first answer per body:');
    for (const r of out) console.log(`     ${r.kind} ${r.endpoint.padEnd(14)} ${r.first || '-'}`);
    const meBusy = latencyStats(meTimes);
    const requests = out.reduce((s, r) => s + r.n, 0);
    const notSent = out.filter((r) => r.n === 0).map((r) => `${r.kind} ${r.endpoint}`);
    console.log(`\n   A: ${requests} requests in ${seconds.toFixed(1)} s${notSent.length ? `; never sent (hard cap or service down): ${notSent.join(', ')}` : ''}; service ${serviceAlive ? 'still up' : 'DIED'}`);
    console.log(`   B's GET /me/ meanwhile: n=${meBusy.n} p50 ${ms(meBusy.p50)} p99 ${ms(meBusy.p99)} max ${ms(meBusy.max)} ms${Object.keys(meFailures).length ? `; not 200: ${JSON.stringify(meFailures)}` : ''} (alone: p99 ${ms(meIdle.p99)} ms)`);

    const worst = out.reduce((w, r) => (r.times.max > w.times.max || !Number.isFinite(w.times.max) ? r : w), out[0]!);
    const allPass = out.every((r) => r.pass) && notSent.length === 0 && serviceAlive;
    targets.push({ part: 'bodies', target: `every hostile body answered within ${TARGETS.bodyMaxMs} ms`, value: `max ${ms(worst.times.max)} ms (${worst.kind} ${worst.endpoint}); ${out.filter((r) => !r.pass).length} of ${out.length} over`, pass: allPass });
    const mePass = meBusy.n > 0 && meBusy.p99 < TARGETS.meP99Ms && Object.keys(meFailures).length === 0;
    targets.push({ part: 'bodies', target: `GET /me/ of another account meanwhile: p99 < ${TARGETS.meP99Ms} ms`, value: `${ms(meBusy.p99)} ms (p50 ${ms(meBusy.p50)}, max ${ms(meBusy.max)})`, pass: mePass });
    console.log(`   targets: every answer <= ${TARGETS.bodyMaxMs} ms: ${verdict(allPass)}; B's /me/ p99 < ${TARGETS.meP99Ms} ms: ${verdict(mePass)}`);
    return {
      seconds: round(seconds, 1), connections: o.bodiesConnections, requests, notSent, serviceAlive, variants: out, meIdle, meBusy, meFailures,
      ...(serviceAlive ? {} : { serviceTail: svc.tail() }),
    };
  } finally {
    await Promise.all([meClient, ...clients].map((c) => c.destroy()));
  }
}

// ---- main ----

export async function main(argv: string[]): Promise<number> {
  const benchStart = performance.now();
  const o = options(argv);
  serviceAccessLog = o.accessLog;
  mkdirSync(OUT_DIR, { recursive: true });
  const { nginx: nginxBin } = ensureSystemPackages({ scrapy: false });
  const wrk = o.only.includes('status') || o.only.includes('minimal') ? ensureWrk() : undefined;
  const env = {
    node: process.version,
    wrk: wrk ? wrkVersion(wrk) : undefined,
    nginx: nginxVersion(nginxBin),
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    loadAverage1m: round(loadavg()[0]!),
  };
  console.log(`node ${env.node}, nginx ${env.nginx}${wrk ? `, wrk ${env.wrk}` : ''}; ${env.cpu}; parts: ${o.only.join(', ')}`);
  if (env.loadAverage1m > 0.5) console.log(`WARNING: load average ${env.loadAverage1m} before the bench: something else is using the CPU, figures will be low and noisy`);

  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${sig}: stopping`);
    void Promise.allSettled([...running].map((stop) => stop())).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const targets: Target[] = [];
  const errors: Record<string, string> = {};
  const results: { status?: StatusResult; minimal?: MinimalResult; run?: RunResult; bodies?: BodiesResult } = {};
  const attempt = async (part: Part, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      const msg = err instanceof Error ? (process.env.BENCH_DEBUG ? (err.stack ?? err.message) : err.message) : String(err);
      errors[part] = msg;
      console.error(`\nERROR in part ${part}: ${msg}`);
    }
  };
  try {
    if (o.only.includes('status')) await attempt('status', async () => { results.status = await partStatus(o, wrk!, nginxBin, targets); });
    if (o.only.includes('minimal')) await attempt('minimal', async () => { results.minimal = await partMinimal(o, wrk!, nginxBin, targets); });
    const rest = o.only.filter((p) => p !== 'status' && p !== 'minimal');
    if (rest.length) {
      await attempt(rest[0]!, async () => {
        writeApiSite();
        await withStarted(await startNginx({ nginx: nginxBin, root: API_SITE_DIR }), async (nginx) =>
          withStarted(await startService(['run', 'hostile', 'me']), async (svc) => {
            console.log(`\nservice ${svc.url} (fresh DATA_DIR, ${LONG_JOBS} workers), nginx ${nginx.origin} serving ${API_SITE_DIR} (no rate limit)`);
            if (o.only.includes('run')) await attempt('run', async () => { results.run = await partRun(o, svc, nginx, targets); });
            if (o.only.includes('bodies')) await attempt('bodies', async () => { results.bodies = await partBodies(o, svc, nginx, targets); });
          }));
      });
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  // ---- summary ----
  console.log('\nsummary (2-core targets)');
  const rows = [['part', 'target', 'measured', 'verdict']];
  for (const t of targets) rows.push([t.part, t.target, t.value, verdict(t.pass)]);
  for (const [part, msg] of Object.entries(errors)) rows.push([part, 'did not run to the end', msg.split('\n')[0]!.slice(0, 100), 'ERROR']);
  console.log(table(rows));
  const missed = targets.filter((t) => !t.pass);
  console.log(missed.length ? `MISSED ${missed.length} of ${targets.length} targets` : `all ${targets.length} targets PASS`);

  const total = (performance.now() - benchStart) / 1000;
  const file = join(OUT_DIR, `api-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ bench: 'api', at: new Date().toISOString(), commit: gitHead(), options: o, env, targetsDefined: TARGETS, results, targets, errors, totalSeconds: round(total, 1) }, null, 2)}\n`);
  console.log(`\nresults: ${file.slice(ROOT.length + 1)}; whole bench ${total.toFixed(1)} s`);
  return Object.keys(errors).length ? 1 : 0;
}
