// Our heavy engine as the local service runs a browser job: bench/configs/browser-books.yaml (PORT replaced by
// the start URL's port) through parseConfig() and runHeavy() of lambdas/engine/, with a BrowserHost whose outbound
// guard allows 127.0.0.0/8 (so every request of every page goes through the guard proxy, as in the service),
// concurrency 4, maxPages 1,000, inside a worker thread with the job workers' V8 limits (JOB_WORKER_RESOURCE_LIMITS;
// the local service runs each job worker, and its browser host, in such a thread). `seconds` is runHeavy() alone,
// from the first browser launch (the host launches lazily) to the rows returned; closing the host afterwards is not
// counted (the service keeps its browser between jobs). The rows are fingerprinted exactly as returned.
//
//   node bench/contenders/browser-ours.ts --start URL [--concurrency 4] [--sample-url URL] [--main-thread]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type * as ConfigModule from '../../lambdas/engine/config.ts';
import type * as EnginesModule from '../../lambdas/engine/engines.ts';
import type * as HostModule from '../../lambdas/engine/browser/host.ts';
import type * as GuardModule from '../../lambdas/net/guard.ts';
import { JOB_WORKER_RESOURCE_LIMITS } from '../../lambdas/adapters/local/limits.ts';
import { BENCH_DIR } from '../paths.ts';
import { Fingerprint, type Row } from './common.ts';
import { browserContenderArgs, reportBrowser } from './browser-common.ts';

const MAX_PAGES = 1000;

interface Job { start: string; concurrency: number }
interface Outcome {
  rows: Record<string, unknown>[];
  pagesScraped: number;
  itemsFound: number;
  warnings: string[];
  apiCapture: number;
  launches: number;
  seconds: number;
}

async function runJob(job: Job): Promise<Outcome> {
  // Loaded here: with a worker thread, the main thread only waits, as the service's HTTP thread runs no engine.
  const { parseConfig } = (await import('../../lambdas/engine/config.ts')) as typeof ConfigModule;
  const { runHeavy } = (await import('../../lambdas/engine/engines.ts')) as typeof EnginesModule;
  const { BrowserHost } = (await import('../../lambdas/engine/browser/host.ts')) as typeof HostModule;
  const { OutboundGuard } = (await import('../../lambdas/net/guard.ts')) as typeof GuardModule;
  const start = new URL(job.start);
  const yamlText = readFileSync(join(BENCH_DIR, 'configs', 'browser-books.yaml'), 'utf8').replaceAll('127.0.0.1:PORT', start.host);
  const config = parseConfig(yamlText);
  const host = new BrowserHost({ guard: new OutboundGuard({ allow: ['127.0.0.0/8'] }) });
  try {
    const t0 = performance.now();
    const result = await runHeavy(config, { host, concurrency: job.concurrency, maxPages: MAX_PAGES });
    const seconds = (performance.now() - t0) / 1000;
    return {
      rows: result.rows, pagesScraped: result.pagesScraped, itemsFound: result.itemsFound, warnings: result.warnings,
      apiCapture: result.apiCapture.length, launches: host.launches, seconds,
    };
  } finally {
    await host.close();
  }
}

async function main(): Promise<void> {
  const args = browserContenderArgs(process.argv.slice(2).filter((a) => a !== '--main-thread'));
  const job: Job = { start: args.start, concurrency: args.concurrency };
  const inWorker = !process.argv.includes('--main-thread');
  const outcome = inWorker
    ? await new Promise<Outcome>((resolve, reject) => {
        const w = new Worker(new URL(import.meta.url), { workerData: job, resourceLimits: { ...JOB_WORKER_RESOURCE_LIMITS } });
        w.once('message', resolve);
        w.once('error', reject);
        w.once('exit', (code) => { if (code !== 0) reject(new Error(`engine worker exited with ${code}`)); });
      })
    : await runJob(job);

  const fingerprint = new Fingerprint();
  let sample: Row | null = null;
  for (const r of outcome.rows) {
    const row: Row = { url: r.url, title: r.title, price: r.price, rating: r.rating, upc: r.upc, description: r.description };
    fingerprint.add(row);
    if (row.url === args.sampleUrl) sample = row;
  }
  const notes = [
    `itemsFound ${outcome.itemsFound}`,
    `apiCapture ${outcome.apiCapture}`,
    inWorker ? `job-worker thread, V8 limits ${JSON.stringify(JOB_WORKER_RESOURCE_LIMITS)}` : 'main thread',
  ];
  if (outcome.warnings.length > 0) notes.push(`${outcome.warnings.length} warnings: ${outcome.warnings.slice(0, 3).join(' | ')}`);
  reportBrowser({ name: 'ours', pages: outcome.pagesScraped, rows: outcome.rows.length, seconds: outcome.seconds, fingerprint: fingerprint.hex(), sample, launches: outcome.launches, notes });
}

if (!isMainThread) {
  parentPort!.postMessage(await runJob(workerData as Job));
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
