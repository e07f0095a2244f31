/**
 * The browser engine through the local service: jobs with `engine: auto` and `heavy` run in the worker
 * thread's Chromium, the status says which engine ran and why, api_discovered is set when the page's
 * items came from its JSON API, and `auto` fetches a static target page once.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { captureKey } from '../../lambdas/core/run-job-executor.ts';

const fields = `extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: tags, type: eval, script: "el.querySelectorAll('a.tag').length" }
`;

describe('browser engine through the API', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: ReturnType<typeof client>;
  let accountId: number;
  before(async () => {
    site = await startFixtureSite();
    svc = await startService({ SAI_WORKERS: '1' });
    const acc = await createAccount(svc.dataDir, { plan: 'pro' });
    accountId = acc.id;
    api = client(svc.url, acc.api_key);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('engine auto picks the browser for a config with eval fields on a script-rendered page', async () => {
    const r = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/js/quotes/", browser: { wait_selector: div.quote } }\n${fields}pagination: { type: click, selector: "li.next a", max_pages: 2 }\n` });
    assert.equal(r.status, 202);
    const { job, progressSeen } = await api.waitForJob(r.body.id, 90_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /\(heavy engine; auto: the config needs a browser \(extract\.fields\[1\]\)\)/);
    assert.equal(job.api_discovered, true);
    // The capture is kept for the generator, under the account's own prefix of the blob store.
    const capture = JSON.parse(readFileSync(join(svc.dataDir, 'blobs', captureKey({ account_id: accountId, id: job.id })), 'utf8')) as { url: string; method: string; status: number; sample: string }[];
    assert.ok(capture.some((c) => c.url.includes('/api/quotes/?page=2') && c.method === 'GET' && c.status === 200 && c.sample.startsWith('{') && c.sample.includes('"page":2')), JSON.stringify(capture).slice(0, 300));
    assert.equal(job.results.row_count, 20);
    assert.deepEqual(job.results.data.map((x: { tags: number }) => x.tags), allQuotes().slice(0, 20).map((q) => q.tags.length));
    for (let i = 1; i < progressSeen.length; i++) assert.ok(progressSeen[i]! >= progressSeen[i - 1]!);
  });

  it('engine auto picks the lightweight engine for a static page and fetches it once', async () => {
    const r = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/quotes/?once=1" }\nextract: { container: div.quote, fields: [{ name: text, selector: span.text }] }\n` });
    const { job } = await api.waitForJob(r.body.id, 30_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /lightweight engine; auto: the page as served has 10 item\(s\) matching "div\.quote"/);
    assert.equal(job.api_discovered, false);
    assert.equal(site.hits.get('/quotes/?once=1'), 1, 'the probe is the run\'s first page');
  });

  it('engine auto falls back to the browser when the served page has no items', async () => {
    const r = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/js/quotes/page/3/", browser: { wait_selector: div.quote } }\nextract: { container: div.quote, fields: [{ name: text, selector: span.text }] }\n` });
    const { job } = await api.waitForJob(r.body.id, 60_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /heavy engine; auto: the page as served has no item matching "div\.quote"; it renders them with JavaScript/);
    assert.deepEqual(job.results.data.map((x: { text: string }) => x.text), allQuotes().slice(20, 30).map((q) => q.text));
  });

  it('an eval script that throws gives the field\'s default and a warning (counted in status_message, listed in warnings); the job completes', async () => {
    const r = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/js/quotes/", engine: heavy, browser: { wait_selector: div.quote } }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: broken, type: eval, script: "el.querySelector('.nope').textContent", default: "n/a" }
` });
    assert.equal(r.status, 202);
    const { job } = await api.waitForJob(r.body.id, 60_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /; 1 warning \(listed in the job's warnings\)$/);
    assert.equal(job.warning_count, 1);
    assert.match(job.warnings[0], /eval field "broken": TypeError/);
    assert.equal(job.results.row_count, 10);
    assert.deepEqual(job.results.data.map((x: { broken: string }) => x.broken), Array(10).fill('n/a'));
    assert.deepEqual(job.results.data.map((x: { text: string }) => x.text), allQuotes().slice(0, 10).map((q) => q.text));
  });

  it('an action on a missing element fails the job, naming the action', async () => {
    const r = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/js/search/", engine: heavy }\n${fields}actions:\n  - { type: click, selector: "#missing" }\n` });
    const { job } = await api.waitForJob(r.body.id, 60_000);
    assert.equal(job.status, 'failed');
    assert.match(job.status_message, /^action_failed: actions\[0\] \(click "#missing"\): no element matches the selector "#missing"/);
  });
});

describe('the job time limit with the browser engine', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: ReturnType<typeof client>;
  before(async () => {
    site = await startFixtureSite();
    svc = await startService({ SAI_WORKERS: '1', SAI_JOB_TIMEOUT_MS: '3000' });
    api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('a heavy job past SAI_JOB_TIMEOUT_MS fails with job_timeout at once; the worker runs the next browser job', async () => {
    const slow = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/js/quotes/", engine: heavy }
${fields}actions: [{ type: script, script: "new Promise((r) => setTimeout(r, 60000))" }]
` });
    assert.equal(slow.status, 202);
    const t0 = Date.now();
    const { job } = await api.waitForJob(slow.body.id, 30_000);
    const took = Date.now() - t0;
    assert.equal(job.status, 'failed');
    // Stopped by the run's own abort (its browser context closed), not by the watchdog that restarts workers.
    assert.match(job.status_message, /^job_timeout: The run took longer than the limit of 3 s per job and was stopped/);
    assert.ok(took < 3000 + 4000, `failed ${took} ms after it was queued`);
    const next = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/js/quotes/", engine: heavy, browser: { wait_selector: div.quote } }\n${fields}` });
    const done = await api.waitForJob(next.body.id, 30_000);
    assert.equal(done.job.status, 'completed', done.job.status_message);
    assert.equal(done.job.results.row_count, 10);
  });
});
