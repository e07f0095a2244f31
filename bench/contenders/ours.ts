// Our engine as the service runs it: bench/configs/books.yaml (PORT replaced by the start URL's port)
// through parseConfig() and runLightweight() from lambdas/engine/, inside a worker thread with the V8 limits
// of the local service's job workers (JOB_WORKER_RESOURCE_LIMITS), with the outbound guard told to
// allow loopback and maxPages raised to 2,000 (the site has 1,050 pages; the engine stops at 1,000 by
// default). Peak RSS is the whole process's, both threads included. The rows runLightweight returns are
// fingerprinted exactly as given (no clean-up here: a price that is not a number, or a url that is not
// absolute, makes the runner fail loudly). Pages are read on the job thread and on reader threads as in the service
// (adapters/local/reader-pool.ts: two fewer than the cores, or SAI_READ_THREADS; 0 reads every page on the job thread).
// The notes give the CPU time each kind of thread took during the crawl (Linux, /proc/self/task).
//
//   node bench/contenders/ours.ts --start URL [--concurrency 8] [--sample-url URL]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type * as ConfigModule from '../../lambdas/engine/config.ts';
import type * as EnginesModule from '../../lambdas/engine/engines.ts';
import { availableParallelism } from 'node:os';
import { JOB_WORKER_RESOURCE_LIMITS } from '../../lambdas/adapters/local/limits.ts';
import { readerThreadCount } from '../../lambdas/adapters/local/reader-pool.ts';
import { BENCH_DIR } from '../paths.ts';
import { Fingerprint, contenderArgs, report, type Row } from './common.ts';

const MAX_PAGES = 2000;

interface Job { start: string; concurrency: number; readThreads: number }
interface Outcome { rows: Record<string, unknown>[]; pagesScraped: number; itemsFound: number; warnings: string[]; seconds: number; readCounts: { here: number; threads: number }; cpu: Record<string, number> }

/** The worker thread: one run, timed from the first fetch to the last row. */
async function runInWorker(job: Job): Promise<Outcome> {
  // Loaded here, not at the top: the main thread only waits, as the service's HTTP thread does not run engines.
  const { parseConfig } = (await import('../../lambdas/engine/config.ts')) as typeof ConfigModule;
  const { runLightweight } = (await import('../../lambdas/engine/engines.ts')) as typeof EnginesModule;
  const start = new URL(job.start);
  const yamlText = readFileSync(join(BENCH_DIR, 'configs', 'books.yaml'), 'utf8').replaceAll('127.0.0.1:PORT', start.host);
  const config = parseConfig(yamlText);
  // The reader threads of a job worker, as the local service makes them (adapters/local/worker-thread.ts).
  const { ReaderPool } = await import('../../lambdas/adapters/local/reader-pool.ts');
  const readers = new ReaderPool({ threads: job.readThreads });
  const before = threadCpu();
  const t0 = performance.now();
  const result = await runLightweight(config, { concurrency: job.concurrency, maxPages: MAX_PAGES, outbound: { allow: ['127.0.0.0/8'] }, readers });
  const seconds = (performance.now() - t0) / 1000;
  const cpu: Record<string, number> = {};
  for (const [t, v] of threadCpu()) cpu[v.comm] = (cpu[v.comm] ?? 0) + v.ms - (before.get(t)?.ms ?? 0);
  await readers.close();
  return { ...result, seconds, readCounts: readers.counts, cpu };
}

/** CPU time of each thread of the process so far (user + system, ms, in 10 ms ticks), by thread id; empty off Linux. */
function threadCpu(): Map<string, { comm: string; ms: number }> {
  const out = new Map<string, { comm: string; ms: number }>();
  if (process.platform !== 'linux') return out;
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(t, { comm: readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim(), ms: (Number(f[11]) + Number(f[12])) * 10 });
    } catch { /* ended */ }
  }
  return out;
}

async function main(): Promise<void> {
  const args = contenderArgs();
  const outcome = await new Promise<Outcome>((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), {
      workerData: { start: args.start, concurrency: args.concurrency, readThreads: readerThreadCount(availableParallelism(), process.env.SAI_READ_THREADS) } satisfies Job,
      resourceLimits: { ...JOB_WORKER_RESOURCE_LIMITS },
    });
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => { if (code !== 0) reject(new Error(`engine worker exited with ${code}`)); });
  });

  const fingerprint = new Fingerprint();
  let sample: Row | null = null;
  for (const r of outcome.rows) {
    const row: Row = { url: r.url, title: r.title, price: r.price, rating: r.rating, upc: r.upc, description: r.description };
    fingerprint.add(row);
    if (row.url === args.sampleUrl) sample = row;
  }
  const notes = [`itemsFound ${outcome.itemsFound}`, `job-worker thread, V8 limits ${JSON.stringify(JOB_WORKER_RESOURCE_LIMITS)}`,
    `pages read on the job thread ${outcome.readCounts.here}, on reader threads ${outcome.readCounts.threads}`,
    `CPU during the crawl, ms: ${Object.entries(outcome.cpu).filter(([, ms]) => ms > 0).map(([comm, ms]) => `${comm} ${ms}`).join(', ')}`];
  if (outcome.warnings.length > 0) notes.push(`${outcome.warnings.length} warnings: ${outcome.warnings.slice(0, 3).join(' | ')}`);
  report({ name: 'ours', pages: outcome.pagesScraped, rows: outcome.rows.length, seconds: outcome.seconds, fingerprint: fingerprint.hex(), sample, notes });
}

if (!isMainThread) {
  parentPort!.postMessage(await runInWorker(workerData as Job));
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
