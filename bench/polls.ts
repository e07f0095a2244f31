// `npm run bench -- polls`: do status polls stay fast while a job parses pages?
//
// Ours: the real local service (bin/local.ts, jobs in worker threads) runs the 1,050-page crawl of the
// engine bench (bench/configs/books.yaml over nginx) while a client polls GET /jobs/{id}/status/ in a
// loop. Peer: the design the issue rules out, the same crawl run on the HTTP server's own event loop
// (runLightweight in the process that answers a status endpoint). Both also measure polls with no job
// running. Prints p50/p95/p99/max latency in ms for each and the ratio peer/ours of the p95 under load.
//
//   npm run bench -- polls [--polls-idle N (300)] [--concurrency N (8)]
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../lambdas/engine/config.ts';
import { runLightweight } from '../lambdas/engine/engines.ts';
import { findNginx } from './deps.ts';
import { startNginx } from './nginx.ts';
import { BENCH_DIR, ROOT, SITE_DIR } from './paths.ts';
import { latencyStats, listeningUrl, type LatencyStats } from './report.ts';
import { ensureSite, listingPath } from './site.ts';


const fmt = (x: LatencyStats) => `n=${String(x.n).padStart(4)}  p50 ${x.p50.toFixed(2).padStart(7)}  p95 ${x.p95.toFixed(2).padStart(7)}  p99 ${x.p99.toFixed(2).padStart(7)}  max ${x.max.toFixed(2).padStart(7)} ms`;

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET over a kept-alive connection; resolves with the latency in ms and the parsed body. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ ms: number; body: any }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http.get(url, { agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ ms: performance.now() - t0, body: text ? JSON.parse(text) : null }));
    }).on('error', reject);
  });
}

function post(url: string, body: unknown, headers: Record<string, string>): Promise<any> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then((r) => r.json());
}

async function pollIdle(url: string, n: number, headers: Record<string, string> = {}): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await get(url, headers)).ms);
  return out;
}

/** Our service: jobs in worker threads. */
/** Resident set of process `pid` (VmRSS, MB), or null when it cannot be read (gone, not Linux). */
function rssMb(pid: number | undefined): number | null {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}

/** The service's memory around the crawl, MB: before it (one small job done), its peak during it (sampled every 20 ms), just after. */
interface ServiceMemory { beforeMb: number | null; peakMb: number | null; afterMb: number | null }

async function measureOurs(yaml: string, idlePolls: number, concurrency: number): Promise<{ idle: LatencyStats; busy: LatencyStats; seconds: number; memory: ServiceMemory }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sai-bench-polls-'));
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', SAI_OUTBOUND_ALLOW: '127.0.0.0/8', SAI_ACCESS_LOG: '0', SAI_WORKERS: '1', SAI_MAX_PAGES: '2000', SAI_JOB_CONCURRENCY: String(concurrency) };
  const account = JSON.parse(execFileSync(process.execPath, [join(ROOT, 'bin/accounts.ts'), 'create', '--email', 'bench@example.com', '--password', 'bench-password', '--plan', 'pro', '--json'], { env, cwd: ROOT, encoding: 'utf8' })) as { api_key: string };
  const proc = spawn(process.execPath, [join(ROOT, 'bin/local.ts')], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await listeningUrl(proc);
    const auth = { authorization: `Bearer ${account.api_key}` };
    // Idle: polls of a finished one-row job (a status read as cheap as a running job's), before the crawl.
    const small = await post(`${url}/api/v1/run/`, { yaml_content: yaml.replace(/max_pages: \d+/, 'max_pages: 1') + '\noutput: { limit: 1 }\n' }, auth);
    const smallUrl = `${url}/api/v1/jobs/${small.id}/status/`;
    while (!['completed', 'failed'].includes((await get(smallUrl, auth)).body.status)) await new Promise((r) => setTimeout(r, 50));
    await pollIdle(smallUrl, 500, auth); // JIT warm-up, not counted
    const idle = await pollIdle(smallUrl, idlePolls, auth);
    const beforeMb = rssMb(proc.pid);
    let peakMb = beforeMb;
    const sampler = setInterval(() => { const m = rssMb(proc.pid); if (m !== null && (peakMb === null || m > peakMb)) peakMb = m; }, 20);
    const job = await post(`${url}/api/v1/run/`, { yaml_content: yaml }, auth);
    if (!job.id) throw new Error(`run refused: ${JSON.stringify(job)}`);
    const statusUrl = `${url}/api/v1/jobs/${job.id}/status/`;
    const busy: number[] = [];
    const t0 = performance.now();
    for (;;) {
      const r = await get(statusUrl, auth);
      if (r.body.status === 'running') busy.push(r.ms);
      if (r.body.status === 'completed' || r.body.status === 'failed') {
        if (r.body.status === 'failed' || r.body.results.row_count !== 1000) throw new Error(`job ended ${r.body.status}: ${r.body.status_message}`);
        break;
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    return { idle: latencyStats(idle), busy: latencyStats(busy), seconds, memory: { beforeMb, peakMb, afterMb: rssMb(proc.pid) } };
  } finally {
    proc.kill('SIGTERM');
  }
}

/** The peer: the crawl runs on the event loop of the process that answers the polls. */
async function measureInThread(yaml: string, idlePolls: number, concurrency: number): Promise<{ idle: LatencyStats; busy: LatencyStats; seconds: number }> {
  let state = { status: 'pending', progress: 0, items_found: 0, pages_scraped: 0 };
  const server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(state));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/status/`;
  try {
    await pollIdle(url, 500); // JIT warm-up, not counted
    const idle = await pollIdle(url, idlePolls);
    const busy: number[] = [];
    const t0 = performance.now();
    let done = false;
    const run = runLightweight(parseConfig(yaml), {
      concurrency,
      maxPages: 2000,
      outbound: { allow: ['127.0.0.0/8'] },
      onProgress: (p) => { state = { status: 'running', progress: p.progress, items_found: p.itemsFound, pages_scraped: p.pagesScraped }; },
    }).finally(() => { done = true; });
    while (!done) busy.push((await get(url)).ms);
    const result = await run;
    if (result.rows.length !== 1000) throw new Error(`in-thread run gave ${result.rows.length} rows`);
    return { idle: latencyStats(idle), busy: latencyStats(busy), seconds: (performance.now() - t0) / 1000 };
  } finally {
    server.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { 'polls-idle': { type: 'string', default: '300' }, concurrency: { type: 'string', default: '8' } } });
  const idlePolls = Number(values['polls-idle']);
  const concurrency = Number(values.concurrency);
  const nginxBin = findNginx();
  if (!nginxBin) throw new Error('nginx is missing: run `npm run bench -- engine` once (it installs it) or apt-get install -y nginx');
  ensureSite();
  const nginx = await startNginx({ nginx: nginxBin, root: SITE_DIR });
  try {
    const yaml = readFileSync(join(BENCH_DIR, 'configs', 'books.yaml'), 'utf8').replaceAll('127.0.0.1:PORT', new URL(nginx.origin).host);
    console.log(`crawl: ${nginx.origin}${listingPath(1)}, 1,050 pages, concurrency ${concurrency}; polls one at a time over a kept-alive connection\n`);
    const ours = await measureOurs(yaml, idlePolls, concurrency);
    const peer = await measureInThread(yaml, idlePolls, concurrency);
    console.log('status poll latency');
    console.log(`  ours, idle                       ${fmt(ours.idle)}`);
    console.log(`  ours, job running (${ours.seconds.toFixed(1)} s)      ${fmt(ours.busy)}`);
    console.log(`  peer (same thread), idle         ${fmt(peer.idle)}`);
    console.log(`  peer (same thread), job running  ${fmt(peer.busy)}`);
    const mb = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(0)} MB`);
    console.log(`\nservice RSS (one process; SAI_WORKERS=1, tool threads as npm start makes them): before the crawl ${mb(ours.memory.beforeMb)}, peak during it ${mb(ours.memory.peakMb)}, after it ${mb(ours.memory.afterMb)}`);
    console.log(`\nours: p95 under load / p95 idle = ${(ours.busy.p95 / ours.idle.p95).toFixed(2)}x`);
    console.log(`peer/ours p95 under load = ${(peer.busy.p95 / ours.busy.p95).toFixed(2)}x, p99 = ${(peer.busy.p99 / ours.busy.p99).toFixed(2)}x (higher: ours keeps polls faster)`);
    return 0;
  } finally {
    await nginx.stop();
  }
}
