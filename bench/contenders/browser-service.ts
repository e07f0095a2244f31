// Our heavy engine through the local service, as a user runs it: a fresh DATA_DIR, the service started in this
// process (startLocalService: HTTP, SQLite, the durable queue, one job-worker thread with its browser, the guard
// allowing 127.0.0.0/8, SAI_JOB_CONCURRENCY = --concurrency), one account, then POST /api/v1/run/ with
// bench/configs/browser-books.yaml and GET /api/v1/jobs/{id}/status/ every 50 ms until the job is completed; the
// rows come from GET /jobs/{id}/results/. `seconds`: from the POST to the status poll that saw `completed`, so it
// holds job pickup, the browser's first launch (the worker launches it lazily), the crawl, the progress and
// result writes. The process tree measured by the runner holds the service, its worker thread and its Chromium.
//
//   node bench/contenders/browser-service.ts --start URL [--concurrency 4] [--sample-url URL]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalService } from '../../lambdas/adapters/local/server.ts';
import { settingsFromEnv } from '../../lambdas/adapters/local/runtime.ts';
import { createAccount } from '../../lambdas/core/accounts.ts';
import { BENCH_DIR } from '../paths.ts';
import { Fingerprint, type Row } from './common.ts';
import { browserContenderArgs, reportBrowser } from './browser-common.ts';

const args = browserContenderArgs();
const dataDir = mkdtempSync(join(tmpdir(), 'sai-bench-'));
process.env.LOG_LEVEL ??= 'ERROR';
const settings = settingsFromEnv({
  DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', SAI_OUTBOUND_ALLOW: '127.0.0.0/8', SAI_ACCESS_LOG: '0',
  SAI_WORKERS: '1', SAI_JOB_CONCURRENCY: String(args.concurrency), SAI_MAX_PAGES: '1000', SAI_BILLING: 'credits',
});
const service = await startLocalService(settings);
try {
  const { apiKey } = await createAccount(service.local.services, { email: 'bench@localhost', password: 'bench password 1234', plan: 'pro' });
  const api = `${service.url}/api/v1`;
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const start = new URL(args.start);
  const yaml = readFileSync(join(BENCH_DIR, 'configs', 'browser-books.yaml'), 'utf8').replaceAll('127.0.0.1:PORT', start.host);

  const t0 = performance.now();
  const created = await fetch(`${api}/run/`, { method: 'POST', headers, body: JSON.stringify({ yaml_content: yaml }) });
  if (created.status !== 202) throw new Error(`POST /run/ answered ${created.status}: ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  let status: { status: string; status_message: string; pages_scraped: number; items_found: number };
  let polls = 0;
  for (;;) {
    const res = await fetch(`${api}/jobs/${id}/status/`, { headers });
    status = (await res.json()) as typeof status;
    polls++;
    if (status.status === 'completed' || status.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const seconds = (performance.now() - t0) / 1000;
  if (status.status !== 'completed') throw new Error(`the job failed: ${status.status_message}`);
  // Where the time went: queued -> picked up by the worker (started_at) -> completed_at, from the job's record.
  const job = await service.local.store.getJobById(id);
  const ms = (a?: string | null, b?: string | null) => (a && b ? Date.parse(b) - Date.parse(a) : NaN);
  const phases = job ? `queued ${ms(job.created_at, job.started_at)} ms, running ${ms(job.started_at, job.completed_at)} ms` : 'no job record';
  const results = (await (await fetch(`${api}/jobs/${id}/results/`, { headers })).json()) as Array<{ data: Record<string, unknown>[] }>;
  const rows = results.flatMap((r) => r.data);
  const fingerprint = new Fingerprint();
  let sample: Row | null = null;
  for (const r of rows) {
    const row: Row = { url: r.url, title: r.title, price: r.price, rating: r.rating, upc: r.upc, description: r.description };
    fingerprint.add(row);
    if (row.url === args.sampleUrl) sample = row;
  }
  reportBrowser({
    name: 'service', pages: status.pages_scraped, rows: rows.length, seconds, fingerprint: fingerprint.hex(), sample, launches: 1,
    notes: [`POST /run/ to completed, ${polls} status polls; ${phases}`, status.status_message.slice(0, 200)],
  });
} finally {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
