/**
 * Job-worker threads started when needed and ended when idle (lambdas/adapters/local/worker-pool.ts, issue 42): an
 * idle service holds no job thread; jobs queued start threads (at most SAI_WORKERS), which run them; a thread with
 * no message for SAI_WORKER_IDLE_MS ends, and the next job starts one again. With SAI_WORKER_IDLE_MS=0 every thread
 * starts with the service and stays. Over real HTTP to the local service, threads read from /proc.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { waitUntil } from '../helpers/until.ts';

/** The names of the service process's threads whose name starts with `prefix` (job workers by default). */
function jobThreads(svc: TestService, prefix = 'job-worker'): string[] {
  const pid = svc.proc.pid!;
  return readdirSync(`/proc/${pid}/task`).map((tid) => { try { return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(); } catch { return ''; } }).filter((n) => n.startsWith(prefix)).sort();
}

let site: http.Server;
let origin = '';

before(async () => {
  site = http.createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    const detail = /^\/item\/(\d+)$/.exec(req.url ?? '');
    if (detail) return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<h1>Item ${detail[1]}</h1><p class="price">${Number(detail[1]) * 3}</p>`);
    if (req.url === '/items') return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<ul>${[1, 2, 3, 4, 5, 6].map((n) => `<li class="i"><a href="/item/${n}">item ${n}</a></li>`).join('')}</ul>`);
    res.writeHead(200, { 'Content-Type': 'text/html' }).end('<ul><li class="i">one</li><li class="i">two</li></ul>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => site.close(() => resolve())));

const config = () => `target: { url: "${origin}/list" }\nextract:\n  container: li.i\n  fields:\n    - { name: text, selector: ":scope", type: text }\n`;

describe('job workers started when needed, ended when idle', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ SAI_WORKERS: '2', SAI_WORKER_IDLE_MS: '1500' });
  });
  after(async () => {
    await svc?.stop();
  });

  it('no job thread at rest; jobs start them (at most SAI_WORKERS); idle ones end; the next job starts one again', async () => {
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(jobThreads(svc), [], 'an idle service holds no job-worker thread');
    const acc = await createAccount(svc.dataDir, { plan: 'pro' });
    const api = client(svc.url, acc.api_key);
    const ids: string[] = [];
    let most = 0;
    for (let i = 0; i < 4; i++) {
      const r = await api.post('/api/v1/run/', { yaml_content: config() });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      ids.push(r.body.id);
    }
    for (const id of ids) {
      const t0 = Date.now();
      let done = false;
      while (!done && Date.now() - t0 < 30_000) {
        most = Math.max(most, jobThreads(svc).length);
        const s = (await api.get(`/api/v1/jobs/${id}/status/`)).body;
        done = s.status === 'completed' || s.status === 'failed';
        if (!done) await new Promise((r) => setTimeout(r, 20));
      }
      const s = (await api.get(`/api/v1/jobs/${id}/status/`)).body;
      assert.equal(s.status, 'completed', s.status_message);
      assert.equal(s.results.row_count, 2);
    }
    assert.ok(most >= 1 && most <= 2, `job threads while the jobs ran: at most ${most}`);
    // Reader threads by default: two fewer than the cores (none on a 2-core machine).
    if (availableParallelism() <= 2) assert.deepEqual(jobThreads(svc, 'page-reader'), []);
    await waitUntil(() => jobThreads(svc).length === 0, 15_000, 'the idle job threads to end');
    const again = await api.post('/api/v1/run/', { yaml_content: config() });
    const { job } = await api.waitForJob(again.body.id, 30_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.results.row_count, 2);
  });
});

describe('SAI_WORKER_IDLE_MS=0: every job thread from the start, kept', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ SAI_WORKERS: '2', SAI_WORKER_IDLE_MS: '0' });
  });
  after(async () => {
    await svc?.stop();
  });

  it('both threads run at once and are still there after a job and a pause', async () => {
    await waitUntil(() => jobThreads(svc).length === 2, 10_000, 'two job threads');
    const acc = await createAccount(svc.dataDir, { plan: 'pro' });
    const api = client(svc.url, acc.api_key);
    const r = await api.post('/api/v1/run/', { yaml_content: config() });
    const { job } = await api.waitForJob(r.body.id, 30_000);
    assert.equal(job.status, 'completed', job.status_message);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.deepEqual(jobThreads(svc), ['job-worker-1', 'job-worker-2']);
  });
});

describe('SAI_READ_THREADS=1: a job\'s pages are read on a reader thread of its worker too', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ SAI_WORKERS: '1', SAI_WORKER_IDLE_MS: '1500', SAI_READ_THREADS: '1' });
  });
  after(async () => {
    await svc?.stop();
  });

  it('the job gives every row with its detail fields; the reader thread starts with the pages and ends when idle', async () => {
    assert.deepEqual(jobThreads(svc, 'page-reader'), []);
    const acc = await createAccount(svc.dataDir, { plan: 'pro' });
    const api = client(svc.url, acc.api_key);
    const yaml = `target: { url: "${origin}/items" }\nextract:\n  container: li.i\n  fields:\n    - { name: name, selector: a }\n    - { name: link, selector: a, type: link }\ndetail_fields:\n  fields:\n    - { name: heading, selector: h1 }\n    - { name: price, selector: p.price, transform: [to_number] }\n`;
    const r = await api.post('/api/v1/run/', { yaml_content: yaml });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    let readers = 0;
    const t0 = Date.now();
    let status = '';
    while (Date.now() - t0 < 30_000) {
      readers = Math.max(readers, jobThreads(svc, 'page-reader').length);
      status = (await api.get(`/api/v1/jobs/${r.body.id}/status/`)).body.status;
      if (status === 'completed' || status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(status, 'completed');
    readers = Math.max(readers, jobThreads(svc, 'page-reader').length);
    assert.equal(readers, 1, 'one reader thread while the job ran');
    const rows = (await api.get(`/api/v1/jobs/${r.body.id}/results/`)).body.flatMap((page: { data: unknown[] }) => page.data);
    assert.deepEqual(rows, [1, 2, 3, 4, 5, 6].map((n) => ({ name: `item ${n}`, link: `${origin}/item/${n}`, heading: `Item ${n}`, price: n * 3 })));
    await waitUntil(() => jobThreads(svc, 'page-reader').length === 0, 15_000, 'the idle reader thread to end');
  });
});
