/**
 * Crash recovery over real HTTP: kill the service (SIGKILL) with jobs in flight, start it again on the
 * same DATA_DIR, and every job ends `completed` (with the right rows, no duplicates) or `failed` with a
 * reason. Also the queue's maximum receives: a job whose deliveries all die ends `failed` (dead letter).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { startHostileServer } from '../helpers/hostile-server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { client, createAccount, startService, tempDataDir, type TestService } from '../helpers/service.ts';
import { waitUntil } from '../helpers/until.ts';

const slowQuotes = (site: string, pages: number, delayMs = 250) => `target: { url: "${site}/slow/${delayMs}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
pagination: { type: click, selector: "li.next a", max_pages: ${pages} }
`;


describe('recovery after a crash', () => {
  let site: FixtureSite;
  const services: TestService[] = [];
  before(async () => { site = await startFixtureSite(); });
  after(async () => {
    for (const s of services) await s.stop();
    await site?.close();
  });

  it('every job in flight at a SIGKILL ends completed or failed with a reason after a restart', async () => {
    const dataDir = tempDataDir();
    const first = await startService({ DATA_DIR: dataDir, SAI_WORKERS: '2' });
    services.push(first);
    const acc = await createAccount(dataDir, { plan: 'pro' });
    let api = client(first.url, acc.api_key);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await api.post('/api/v1/run/', { yaml_content: slowQuotes(site.url, 6) });
      assert.equal(r.status, 202);
      ids.push(r.body.id);
    }
    // Two running (2 workers), two pending, some progress made.
    await waitUntil(async () => {
      const list = await api.get('/api/v1/jobs/');
      return list.body.results.filter((j: { status: string; progress: number }) => j.status === 'running' && j.progress > 0).length >= 1;
    }, 20_000, 'a job to make progress');
    const before = (await api.get('/api/v1/jobs/')).body.results as Array<{ id: string; status: string; progress: number }>;
    assert.ok(before.some((j) => j.status === 'running'), JSON.stringify(before));
    assert.ok(before.every((j) => j.status !== 'completed'), 'the crash hits jobs mid-way');
    await first.kill();

    const second = await startService({ DATA_DIR: dataDir, SAI_WORKERS: '2' });
    services.push(second);
    assert.match(second.output(), /recovered: \d+ job message\(s\) in flight/);
    api = client(second.url, acc.api_key);
    const expected = allQuotes().slice(0, 60).map((q) => q.text);
    for (const id of ids) {
      const { job, progressSeen } = await api.waitForJob(id, 60_000);
      assert.ok(job.status === 'completed' || (job.status === 'failed' && job.status_message.length > 0), JSON.stringify(job));
      assert.equal(job.status, 'completed', `with a healthy site every job completes: ${job.status_message}`);
      const prior = before.find((j) => j.id === id)!;
      assert.ok(progressSeen[0]! >= prior.progress, `progress did not go down across the restart (${prior.progress} -> ${progressSeen[0]})`);
      const rows = (await api.get(`/api/v1/jobs/${id}/results/`)).body[0].data as Array<{ text: string }>;
      assert.deepEqual(rows.map((r) => r.text), expected, 'a re-run job has exactly its rows, once');
    }
  });

  it('a clean stop (SIGTERM) is not a failed attempt: a job survives more restarts than SAI_MAX_RECEIVES', async () => {
    const dataDir = tempDataDir();
    const env = { DATA_DIR: dataDir, SAI_WORKERS: '1', SAI_MAX_RECEIVES: '2' };
    let svc = await startService(env);
    services.push(svc);
    const acc = await createAccount(dataDir, { plan: 'pro' });
    let api = client(svc.url, acc.api_key);
    // Pages of 2 s each: an attempt lasts 8 s, far longer than a stop takes on a loaded machine, so every stop
    // ends an attempt in flight (with 250 ms pages, a slow stop let the second attempt finish the job).
    const r = await api.post('/api/v1/run/', { yaml_content: slowQuotes(site.url, 4, 2000) });
    const firstPage = '/slow/2000/quotes/';
    for (let stop = 1; stop <= 3; stop++) {
      await waitUntil(async () => (site.hits.get(firstPage) ?? 0) >= stop, 20_000, `attempt ${stop}`);
      await svc.stop();
      svc = await startService(env);
      services.push(svc);
      api = client(svc.url, acc.api_key);
    }
    const { job } = await api.waitForJob(r.body.id, 30_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.results.row_count, 40);
  });

  it('a worker stuck past the job time limit (one page whose extraction takes minutes) is restarted and its job fails', async () => {
    const dataDir = tempDataDir();
    const svc = await startService({ DATA_DIR: dataDir, SAI_WORKERS: '1', SAI_JOB_TIMEOUT_MS: '2000' });
    services.push(svc);
    const acc = await createAccount(dataDir, { plan: 'pro' });
    const api = client(svc.url, acc.api_key);
    // A count of every div under every div of 30,000 nested ones: one page's extraction, synchronous, of about
    // 30,000 x 512 element visits (the parse nests no deeper than 512), far past the 2 s limit. (Regular
    // expressions can no longer hold a thread: they run on RE2.)
    const hostile = await startHostileServer();
    try {
      const evil = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${hostile.url('nested', { depth: 30000 })}" }
extract:
  container: div
  fields:
    - { name: n, selector: div, type: count }
` });
      assert.equal(evil.status, 202);
      const { job } = await api.waitForJob(evil.body.id, 30_000);
      assert.equal(job.status, 'failed');
      assert.match(job.status_message, /^job_timeout: the run did not stop at the limit of 2 s/);
    } finally {
      await hostile.close();
    }
    // The service and its (new) worker go on.
    const ok = await api.post('/api/v1/run/', { yaml_content: slowQuotes(site.url, 1, 0).replace('/slow/0/quotes/', '/quotes/') });
    assert.equal((await api.waitForJob(ok.body.id, 20_000)).job.status, 'completed');
  });

  it('an unfinished job without a message (lost between creating the job and queueing it) is queued again at start and completes', async () => {
    const dataDir = tempDataDir();
    const env = { DATA_DIR: dataDir, SAI_WORKERS: '1' };
    const first = await startService(env);
    services.push(first);
    const acc = await createAccount(dataDir, { plan: 'pro' });
    await first.stop();
    const store = new SqliteStore(path.join(dataDir, 'scrape-ai.db'));
    const id = randomUUID();
    const now = new Date().toISOString();
    await store.createJob({
      id, account_id: acc.id, job_type: 'run', status: 'pending', progress: 0, status_message: 'Queued', items_found: 0, pages_scraped: 0,
      api_discovered: false, target_url: `${site.url}/quotes/`, config_id: null, yaml_content: slowQuotes(site.url, 2, 0).replace('/slow/0/quotes/', '/quotes/'),
      created_at: now, updated_at: now, started_at: null, completed_at: null, attempts: 0, row_count: 0, results_key: null, prompt: null,
    });
    store.close();
    const second = await startService(env);
    services.push(second);
    assert.match(second.output(), /recovered: 0 job message\(s\) in flight at the last stop released, 1 job\(s\) queued again/);
    const { job } = await client(second.url, acc.api_key).waitForJob(id, 20_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.results.row_count, 20);
  });

  it('a job whose deliveries all die ends failed once the queue gives up (SAI_MAX_RECEIVES)', async () => {
    const dataDir = tempDataDir();
    const env = { DATA_DIR: dataDir, SAI_WORKERS: '1', SAI_MAX_RECEIVES: '2' };
    let svc = await startService(env);
    services.push(svc);
    const acc = await createAccount(dataDir, { plan: 'pro' });
    let api = client(svc.url, acc.api_key);
    // Pages of 2 s each (an attempt lasts 8 s): every kill lands during an attempt, even on a loaded machine (with
    // 251 ms pages a late kill let an attempt complete the job).
    const r = await api.post('/api/v1/run/', { yaml_content: slowQuotes(site.url, 4, 2001) });
    assert.equal(r.status, 202);
    // Kill the service during each delivery: the worker never finishes the job.
    // Each delivery fetches the first listing page once: the site's hit count tells attempts apart.
    const firstPage = '/slow/2001/quotes/';
    for (let attempt = 1; attempt <= 2; attempt++) {
      await waitUntil(async () => (site.hits.get(firstPage) ?? 0) >= attempt, 20_000, `attempt ${attempt} to fetch its first page`);
      await svc.kill();
      svc = await startService(env);
      services.push(svc);
      api = client(svc.url, acc.api_key);
    }
    const { job } = await api.waitForJob(r.body.id, 20_000);
    assert.equal(job.status, 'failed');
    assert.match(job.status_message, /worker_lost: the job was attempted 2 time\(s\)/);
    assert.ok(job.completed_at);
    assert.equal(site.hits.get(firstPage), 2, 'no third attempt');
  });
});
