// `npm run bench -- monitoring`: schedules and webhooks on the local service (issue 26).
//
// schedules: 1,000 schedules (10 accounts x 100, the per-account limit) all due at the same minute; the service's
//   clock is moved to that minute (SAI_CLOCK_FILE) and the bench measures how long the service takes to fire them
//   all: from the slot to the last job's created_at (the service's own clock), and to the moment the API shows
//   every schedule fired. Target: within the minute. Peer: the same 1,000 run jobs started over the API by
//   POST /run/ (8 connections), in a fresh service of the same settings: the ratio firing / API.
// webhooks: ten webhooks to a receiver that answers each delivery after 2 s; GET /jobs/{id}/status/ polls (4
//   connections) are measured with no delivery under way, then while a backlog of deliveries (32 one-page runs x 10
//   webhooks = 320 deliveries, 8 at a time: 80 s) is being delivered. Target: p99 within 20% of the idle figure.
//
//   npm run bench -- monitoring [--only schedules,webhooks] [--schedules N (1000)] [--poll-seconds N (20)] [--rounds N (2)]
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './paths.ts';
import { latencyStats, listeningUrl, type LatencyStats } from './report.ts';

const fmt = (x: LatencyStats) => `n=${String(x.n).padStart(6)}  p50 ${x.p50.toFixed(2).padStart(6)}  p95 ${x.p95.toFixed(2).padStart(6)}  p99 ${x.p99.toFixed(2).padStart(6)}  max ${x.max.toFixed(2).padStart(7)} ms`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A plans file whose Pro plan spends nothing a bench could run out of. */
function generousPlans(dir: string): string {
  const plans = JSON.parse(readFileSync(join(ROOT, 'lambdas/core/plans.json'), 'utf8'));
  Object.assign(plans.credits.plans.pro, { credits_per_month: 1_000_000, rate_limit_per_hour: 1_000_000 });
  const file = join(dir, 'plans.json');
  writeFileSync(file, JSON.stringify(plans));
  return file;
}

interface Service { url: string; dataDir: string; env: NodeJS.ProcessEnv; proc: ChildProcess; stop(): Promise<void> }

async function startService(extra: NodeJS.ProcessEnv = {}): Promise<Service> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sai-bench-monitoring-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', SAI_OUTBOUND_ALLOW: '127.0.0.0/8', SAI_ACCESS_LOG: '0', SAI_WORKERS: '2',
    SAI_PLANS_FILE: generousPlans(dataDir), ...extra,
  };
  const proc = spawn(process.execPath, [join(ROOT, 'bin/local.ts')], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await listeningUrl(proc);
  proc.stdout!.resume();
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return { url, dataDir, env, proc, stop: async () => { proc.kill('SIGTERM'); await exited; } };
}

function createAccount(svc: Service, email: string): string {
  const out = execFileSync(process.execPath, [join(ROOT, 'bin/accounts.ts'), 'create', '--email', email, '--password', 'bench-password', '--plan', 'pro', '--json'], { env: svc.env, cwd: ROOT, encoding: 'utf8' });
  return (JSON.parse(out) as { api_key: string }).api_key;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** One request over a kept-alive connection: status, parsed body and latency (ms). */
function call(method: string, url: string, key: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> {
  const t0 = performance.now();
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { authorization: `Bearer ${key}`, ...(data ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** Runs `tasks` with `n` at a time. */
async function pool<T>(n: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  }));
  return out;
}

/** A one-page site the scheduled runs scrape. */
async function startSite(): Promise<{ base: string; close(): void }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<ul><li class="p"><b>Alpha</b></li><li class="p"><b>Beta</b></li></ul>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => { server.closeAllConnections(); server.close(); } };
}

const yaml = (base: string) => `target: { url: "${base}/", engine: lightweight }\nextract:\n  container: li.p\n  fields:\n    - { name: name, selector: b }\n`;

/** Accounts of 100 schedules each, with one config each. */
async function setUpAccounts(svc: Service, count: number, base: string): Promise<Array<{ key: string; configId: string }>> {
  const accounts: Array<{ key: string; configId: string }> = [];
  for (let a = 0; a < Math.ceil(count / 100); a++) {
    const key = createAccount(svc, `bench-${a}@example.com`);
    const config = await call('POST', `${svc.url}/api/v1/configs/`, key, { name: 'bench', target_url: `${base}/`, yaml_content: yaml(base) });
    if (config.status !== 201) throw new Error(`config: ${JSON.stringify(config.body)}`);
    accounts.push({ key, configId: config.body.id });
  }
  return accounts;
}

async function benchSchedules(count: number): Promise<boolean> {
  const site = await startSite();
  const clockFile = join(mkdtempSync(join(tmpdir(), 'sai-bench-clock-')), 'offset');
  const slot = Date.parse('2031-05-05T10:00:00.000Z');
  writeFileSync(clockFile, String(slot - 60_000 - Date.now()));
  const svc = await startService({ SAI_CLOCK_FILE: clockFile });
  let firingMs: number;
  let apiVisibleMs: number;
  let meIdle: number[] = [];
  let meFiring: number[] = [];
  try {
    const accounts = await setUpAccounts(svc, count, site.base);
    const t0 = performance.now();
    await pool(8, Array.from({ length: count }, (_, i) => async () => {
      const a = accounts[Math.floor(i / 100)]!;
      const r = await call('POST', `${svc.url}/api/v1/schedules/`, a.key, { config_id: a.configId, cron: '0 * * * *' });
      if (r.status !== 201) throw new Error(`schedule: ${JSON.stringify(r.body)}`);
    }));
    console.log(`created ${count} schedules (0 * * * *) in ${((performance.now() - t0) / 1000).toFixed(1)} s; moving the clock to the slot`);
    // Another account's GET /me/ while nothing fires, then while the 1,000 fire (the loop runs on the HTTP thread).
    const bystander = accounts[accounts.length - 1]!.key;
    const meUrl = `${svc.url}/api/v1/me/`;
    const pollMe = async (until: () => boolean): Promise<number[]> => {
      const out: number[] = [];
      while (!until()) out.push((await call('GET', meUrl, bystander)).ms);
      return out;
    };
    const idleEnd = performance.now() + 3000;
    meIdle = await pollMe(() => performance.now() > idleEnd);
    let firing = true;
    const during = pollMe(() => !firing);
    // The service's clock now reads the slot.
    writeFileSync(clockFile, String(slot - Date.now()));
    const jumped = performance.now();
    for (;;) {
      const fired = await Promise.all(accounts.map(async (a) => (await call('GET', `${svc.url}/api/v1/schedules/`, a.key)).body.schedules.reduce((n: number, s: any) => n + s.fired_count, 0)));
      const total = fired.reduce((x, y) => x + y, 0);
      if (total >= count) break;
      if (performance.now() - jumped > 5 * 60_000) throw new Error(`only ${total} of ${count} fired after 5 min`);
      await sleep(200);
    }
    apiVisibleMs = performance.now() - jumped;
    firing = false;
    meFiring = await during;
    let last = 0;
    let jobs = 0;
    for (const a of accounts) {
      const page = (await call('GET', `${svc.url}/api/v1/jobs/?limit=100`, a.key)).body.results as Array<{ created_at: string }>;
      jobs += page.length;
      for (const j of page) last = Math.max(last, Date.parse(j.created_at));
    }
    firingMs = last - slot;
    console.log(`schedules: ${jobs} run jobs created; the last at slot + ${(firingMs / 1000).toFixed(2)} s (service clock); every schedule shown fired ${(apiVisibleMs / 1000).toFixed(2)} s after the clock reached the slot`);
  } finally {
    await svc.stop();
  }

  // Peer: the same jobs started over the API.
  const peer = await startService();
  let apiMs: number;
  try {
    const accounts = await setUpAccounts(peer, count, site.base);
    const t0 = performance.now();
    await pool(8, Array.from({ length: count }, (_, i) => async () => {
      const a = accounts[Math.floor(i / 100)]!;
      const r = await call('POST', `${peer.url}/api/v1/run/`, a.key, { config_id: a.configId });
      if (r.status !== 202) throw new Error(`run: ${JSON.stringify(r.body)}`);
    }));
    apiMs = performance.now() - t0;
    console.log(`peer: ${count} POST /run/ (8 connections) in ${(apiMs / 1000).toFixed(2)} s`);
  } finally {
    await peer.stop();
    site.close();
  }
  const ok = firingMs < 60_000 && apiVisibleMs < 60_000;
  console.log(`another account's GET /me/ while nothing fires: ${fmt(latencyStats(meIdle))}\n                     while the ${count} fire: ${fmt(latencyStats(meFiring))}`);
  console.log(`schedules: ${count} firings in ${(firingMs / 1000).toFixed(2)} s vs ${(apiMs / 1000).toFixed(2)} s for the same jobs over the API: ratio ${(firingMs / apiMs).toFixed(2)}; target within the minute: ${ok ? 'met' : 'NOT met'}`);
  return ok;
}

async function benchWebhooks(pollSeconds: number, rounds: number): Promise<boolean> {
  const RECEIVER_DELAY_MS = 2000;
  /** Deliveries per round: 8 at a time, 2 s each, about 80 s of them. */
  const BACKLOG = 320;
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => { received++; res.writeHead(204).end(); }, RECEIVER_DELAY_MS));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const site = await startSite();
  const svc = await startService();
  const idle: number[] = [];
  const busy: number[] = [];
  try {
    const key = createAccount(svc, 'bench-hooks@example.com');
    const hooks: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await call('POST', `${svc.url}/api/v1/webhooks/`, key, { url: `${hookUrl}?n=${i}`, events: ['job.completed', 'job.failed'] });
      if (r.status !== 201) throw new Error(`webhook: ${JSON.stringify(r.body)}`);
      hooks.push(r.body.id);
    }
    // The polled job: finished before the rounds (its own 10 deliveries done).
    const polled = await call('POST', `${svc.url}/api/v1/run/`, key, { yaml_content: yaml(site.base) });
    const statusUrl = `${svc.url}/api/v1/jobs/${polled.body.id}/status/`;
    while (!['completed', 'failed'].includes((await call('GET', statusUrl, key)).body.status)) await sleep(50);
    while (received < 10) await sleep(100);
    const poll = async (seconds: number): Promise<number[]> => {
      const out: number[] = [];
      const end = performance.now() + seconds * 1000;
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (performance.now() < end) out.push((await call('GET', statusUrl, key)).ms);
      }));
      return out;
    };
    await poll(3); // JIT warm-up, not counted
    for (let r = 1; r <= rounds; r++) {
      const idleRound = await poll(pollSeconds);
      for (const x of idleRound) idle.push(x);
      const before = received;
      // A backlog of deliveries: one-page runs (some 0.1 s each) x 10 webhooks, made in a few seconds.
      const runs = await Promise.all(Array.from({ length: BACKLOG / 10 }, () => call('POST', `${svc.url}/api/v1/run/`, key, { yaml_content: yaml(site.base) })));
      for (const f of runs) while (!['completed', 'failed'].includes((await call('GET', `${svc.url}/api/v1/jobs/${f.body.id}/status/`, key)).body.status)) await sleep(50);
      const busyRound = await poll(pollSeconds);
      for (const x of busyRound) busy.push(x);
      const deliveredMeanwhile = received - before;
      console.log(`round ${r}: idle ${fmt(latencyStats(idleRound))}\n         busy ${fmt(latencyStats(busyRound))}   (${deliveredMeanwhile} deliveries of 2 s answered by its end, ${BACKLOG - deliveredMeanwhile} still queued)`);
      if (deliveredMeanwhile >= BACKLOG) console.log('  (the backlog ran out before the busy window ended: lengthen it with fewer --poll-seconds)');
      while (received < before + BACKLOG) await sleep(250);
    }
    const attempts = (await call('GET', `${svc.url}/api/v1/webhooks/${hooks[0]}/deliveries/?limit=100`, key)).body.deliveries as Array<{ outcome: string; duration_ms: number }>;
    console.log(`webhook 1: ${attempts.length} attempts recorded, outcomes ${[...new Set(attempts.map((a) => a.outcome))].join(', ')}, median duration ${latencyStats(attempts.map((a) => a.duration_ms)).p50} ms`);
  } finally {
    await svc.stop();
    receiver.closeAllConnections();
    receiver.close();
    site.close();
  }
  const i = latencyStats(idle);
  const b = latencyStats(busy);
  const ratio = b.p99 / i.p99;
  console.log(`webhooks: status polls idle ${fmt(i)}\n          during deliveries ${fmt(b)}\n          p99 ratio ${ratio.toFixed(2)} (target <= 1.20): ${ratio <= 1.2 ? 'met' : 'NOT met'}`);
  return ratio <= 1.2;
}

export async function main(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { only: { type: 'string' }, schedules: { type: 'string' }, 'poll-seconds': { type: 'string' }, rounds: { type: 'string' } } });
  const only = values.only ? values.only.split(',') : ['schedules', 'webhooks'];
  let ok = true;
  if (only.includes('schedules')) ok = (await benchSchedules(Number(values.schedules ?? 1000))) && ok;
  if (only.includes('webhooks')) ok = (await benchWebhooks(Number(values['poll-seconds'] ?? 20), Number(values.rounds ?? 2))) && ok;
  return ok ? 0 : 1;
}
