/**
 * The README walk-through over real HTTP against the started service: login, create a config, run it,
 * poll, fetch results; then the list endpoints and delete. The site scraped is the fixture site (a
 * quotes.toscrape.com look-alike over the fixture's own data, test/fixtures/site/quotes-data.ts).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allAuthors, allQuotes } from '../fixtures/site/quotes.ts';
import { client, createAccount, firstStartCredentials, startService, type TestService } from '../helpers/service.ts';

function quotesConfig(site: string, extra = ''): string {
  return `version: "2.0"
name: Quotes with their authors
target:
  url: "${site}/quotes/"
  engine: lightweight
extract:
  container: div.quote
  type: list
  fields:
    - { name: text, selector: span.text, type: text }
    - { name: author, selector: small.author }
    - { name: author_url, selector: "a[href*='/author/']", type: link }
    - { name: tags, selector: a.tag, multiple: true }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
pagination:
  type: click
  selector: li.next a
  max_pages: 3
${extra}`;
}

describe('walk-through over HTTP', () => {
  let site: FixtureSite;
  let svc: TestService;
  let account: Awaited<ReturnType<typeof createAccount>>;

  before(async () => {
    site = await startFixtureSite();
    svc = await startService();
    account = await createAccount(svc.dataDir, { email: 'walker@example.com', plan: 'growth' });
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('makes a first account on first start; off a terminal its credentials go to a 0600 file, not to stdout', async () => {
    const first = firstStartCredentials(svc);
    assert.match(svc.output(), new RegExp(`First start: created the account admin@localhost; its password and API key are in ${first.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(first.apiKey, /^sai_[A-Za-z0-9]{32,}$/);
    assert.ok(!svc.output().includes(first.apiKey) && !svc.output().includes(first.password), 'no secret on stdout');
    assert.equal(fs.statSync(first.file).mode & 0o777, 0o600);
    const login = await client(svc.url).post('/api/v1/auth/login/', { email: first.email, password: first.password });
    assert.equal(login.body.api_key, first.apiKey);
  });

  it('logs in, runs a saved config and returns the rows of the real data', async () => {
    const anon = client(svc.url);
    const login = await anon.post('/api/v1/auth/login/', { email: 'walker@example.com', password: account.password });
    assert.equal(login.status, 200);
    assert.deepEqual(Object.keys(login.body).sort(), ['api_key', 'email', 'plan']);
    assert.equal(login.body.api_key, account.api_key);
    assert.equal(login.body.plan, 'growth');
    assert.match(login.body.api_key, /^sai_[A-Za-z0-9]{32,}$/);

    const api = client(svc.url, login.body.api_key);
    const me = await api.get('/api/v1/me/');
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.user, { id: account.id, email: 'walker@example.com', first_name: '', last_name: '' });
    assert.deepEqual(me.body.subscription, { plan: 'growth', credits_remaining: 75, credits_per_month: 75, has_api_access: true, has_server_execution: true });

    const yaml = quotesConfig(site.url);
    const created = await api.post('/api/v1/configs/', { name: 'quotes', target_url: `${site.url}/quotes/`, yaml_content: yaml, prompt: 'quotes with author birth dates' });
    assert.equal(created.status, 201);
    assert.match(created.body.id, /^[0-9a-f-]{36}$/);
    assert.equal(created.body.yaml_content, yaml);
    assert.equal(created.body.prompt, 'quotes with author birth dates');

    const list = await api.get('/api/v1/configs/');
    assert.equal(list.status, 200);
    assert.equal(list.body.count, 1);
    assert.deepEqual(Object.keys(list.body.results[0]).sort(), ['created_at', 'id', 'name', 'target_url']);
    const one = await api.get(`/api/v1/configs/${created.body.id}/`);
    assert.equal(one.body.yaml_content, yaml);

    const run = await api.post('/api/v1/run/', { config_id: created.body.id });
    assert.equal(run.status, 202);
    assert.deepEqual(Object.keys(run.body).sort(), ['id', 'job_type', 'progress', 'status']);
    assert.equal(run.body.status, 'pending');
    assert.equal(run.body.progress, 0);
    assert.equal(run.body.job_type, 'run');

    const { job, progressSeen } = await api.waitForJob(run.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.progress, 100);
    for (let i = 1; i < progressSeen.length; i++) assert.ok(progressSeen[i]! >= progressSeen[i - 1]!, `progress went down: ${progressSeen}`);
    assert.equal(job.items_found, 30);
    const authorsOnPages = new Set(allQuotes().slice(0, 30).map((q) => q.authorSlug));
    assert.equal(job.pages_scraped, 3 + authorsOnPages.size, 'three listing pages and each author page once');
    assert.equal(job.api_discovered, false);
    assert.ok(Date.parse(job.completed_at) >= Date.parse(job.created_at));
    assert.deepEqual(job.yaml_config, { id: created.body.id, yaml_content: yaml });
    assert.equal(job.results.row_count, 30);
    assert.equal(job.results.data.length, 30);
    assert.match(job.status_message, /lightweight/);

    const results = await api.get(`/api/v1/jobs/${run.body.id}/results/`);
    assert.equal(results.status, 200);
    assert.equal(results.body.length, 1);
    assert.equal(results.body[0].row_count, 30);
    const expected = allQuotes().slice(0, 30);
    const authors = allAuthors();
    results.body[0].data.forEach((row: Record<string, unknown>, i: number) => {
      assert.equal(row.text, expected[i]!.text);
      assert.equal(row.author, expected[i]!.author);
      assert.deepEqual(row.tags, expected[i]!.tags);
      assert.equal(row.author_url, `${site.url}/quotes/author/${expected[i]!.authorSlug}/`);
      assert.equal(row.born, authors.get(expected[i]!.authorSlug)!.bornDate);
    });

    const jobs = await api.get('/api/v1/jobs/');
    assert.equal(jobs.status, 200);
    assert.equal(jobs.body.count, 1);
    assert.equal(jobs.body.results[0].id, run.body.id);
    assert.equal(jobs.body.results[0].status, 'completed');
    assert.equal(jobs.body.next_cursor, null);

    const after = await api.get('/api/v1/me/');
    assert.equal(after.body.subscription.credits_remaining, 74, 'one run costs one credit');

    assert.equal((await api.delete(`/api/v1/configs/${created.body.id}/`)).status, 204);
    assert.equal((await api.get(`/api/v1/configs/${created.body.id}/`)).status, 404);
    const status = await api.get(`/api/v1/jobs/${run.body.id}/status/`);
    assert.equal(status.body.yaml_config.yaml_content, yaml, 'a job keeps the YAML it ran after its config is deleted');
  });

  it('runs inline YAML with output limit and deduplication', async () => {
    const api = client(svc.url, account.api_key);
    const yaml = `target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
pagination: { type: url, url_pattern: "${site.url}/quotes/page/{page}/", max_pages: 2 }
output: { deduplicate: true, limit: 5 }
`;
    const run = await api.post('/api/v1/run/', { yaml_content: yaml });
    assert.equal(run.status, 202);
    const { job } = await api.waitForJob(run.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    const expected = [...new Set(allQuotes().slice(0, 20).map((q) => q.author))].slice(0, 5);
    assert.deepEqual(job.results.data.map((r: { author: string }) => r.author), expected);
    assert.equal(job.yaml_config.id, null);
  });

  it('generates a config with "run": true, as the README shows: the generate job names its run, whose results are every quote', async () => {
    const api = client(svc.url, account.api_key);
    const gen = await api.post('/api/v1/generate/', { url: `${site.url}/quotes/`, prompt: 'every quote with its author and tags', run: true });
    assert.equal(gen.status, 202, JSON.stringify(gen.body));
    assert.deepEqual([gen.body.status, gen.body.progress, gen.body.job_type, gen.body.target_url], ['pending', 0, 'generate', `${site.url}/quotes/`]);
    const { job } = await api.waitForJob(gen.body.id, 90_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /^Generated a config that found \d+ item\(s\) on 2 page\(s\) in its trial; saved as .* Running the saved config for all the rows: run job [0-9a-f-]{36}/);
    const { job: run } = await api.waitForJob(job.run_job_id, 90_000);
    assert.equal(run.status, 'completed', run.status_message);
    const results = await api.get(`/api/v1/jobs/${job.run_job_id}/results/`);
    assert.equal(results.status, 200);
    assert.equal(results.body[0].row_count, allQuotes().length, 'every quote of every page');
    const texts = new Set(results.body[0].data.flatMap((r: Record<string, unknown>) => Object.values(r)));
    assert.ok(allQuotes().every((q) => texts.has(q.text)), 'each quote of the fixture site is a row');
  });
});
