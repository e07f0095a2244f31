/**
 * Generate jobs over real HTTP (docs/spec.md, POST /api/v1/generate/; docs/generate.md): the 202 answer, the
 * states a job goes through with progress and messages, the config saved with its prompt and run again,
 * the preview rows, metering in both plan variants, refusals, a page with nothing to find, a page drawn by
 * scripts with its JSON API found, and the Claude agent through a local Messages API stub, including the
 * fall-back to the heuristic config when Anthropic answers 429.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { bookDetails } from '../fixtures/site/books.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { httpError, reply, startAnthropicStub, toolUse, type AnthropicStub } from '../helpers/anthropic-stub.ts';

type Api = ReturnType<typeof client>;

/** Polls a job every 40 ms until it ends; returns it and every status seen, in order, without repeats. */
async function follow(api: Api, id: string, timeoutMs = 90_000): Promise<{ job: any; states: string[]; messages: string[] }> {
  const states: string[] = [];
  const messages: string[] = [];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await api.get(`/api/v1/jobs/${id}/status/`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    if (states.at(-1) !== r.body.status) states.push(r.body.status);
    if (messages.at(-1) !== r.body.status_message) messages.push(r.body.status_message);
    if (r.body.status === 'completed' || r.body.status === 'failed') return { job: r.body, states, messages };
    if (Date.now() > end) throw new Error(`job ${id} still ${r.body.status}: ${r.body.status_message}`);
    await new Promise((res) => setTimeout(res, 40));
  }
}

const ORDER = ['pending', 'analyzing', 'generating', 'validating', 'completed'];

describe('generate jobs', () => {
  let site: FixtureSite;
  let svc: TestService;
  let pro: Awaited<ReturnType<typeof createAccount>>;

  before(async () => {
    site = await startFixtureSite();
    svc = await startService();
    pro = await createAccount(svc.dataDir, { plan: 'pro' });
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('generates, validates and saves a working config: states in order, the prompt kept, the config runs', async () => {
    const api = client(svc.url, pro.api_key);
    const url = `${site.url}/slow/150/books/`;
    const created = await api.post('/api/v1/generate/', { url, prompt: 'book titles, prices and ratings from every page' });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'job_type', 'progress', 'status', 'target_url']);
    assert.equal(created.body.status, 'pending');
    assert.equal(created.body.progress, 0);
    assert.equal(created.body.job_type, 'generate');
    assert.equal(created.body.target_url, url);

    const { job, states, messages } = await follow(api, created.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.deepEqual(states.filter((s) => !ORDER.includes(s)), []);
    assert.deepEqual([...states].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b)), states, `states in order: ${states.join(' -> ')}`);
    assert.ok(states.includes('analyzing') && states.includes('validating'), `the slow site lets the polls see the steps: ${states.join(' -> ')}`);
    assert.ok(messages.some((m) => /repeated block/.test(m)), messages.join(' | '));
    assert.equal(job.progress, 100);
    assert.ok(job.items_found >= 20);
    assert.equal(job.api_discovered, false);
    assert.match(job.status_message, /found \d+ item\(s\).*saved as/);
    const rows = job.results.data as Array<Record<string, unknown>>;
    assert.ok(rows.length >= 20, `preview rows: ${rows.length}`);
    const books = bookDetails();
    assert.equal(rows[0]!.title, books[0]!.title);
    assert.equal(rows[0]!.price, books[0]!.price);
    assert.equal(rows[0]!.rating, 'Three');

    const saved = await api.get(`/api/v1/configs/${job.yaml_config.id}/`);
    assert.equal(saved.status, 200);
    assert.equal(saved.body.yaml_content, job.yaml_config.yaml_content);
    assert.equal(saved.body.prompt, 'book titles, prices and ratings from every page');
    assert.match(saved.body.name, /^Book titles, prices and ratings/);
    assert.match(saved.body.yaml_content, /pagination:/);

    const run = await api.post('/api/v1/run/', { config_id: saved.body.id });
    assert.equal(run.status, 202);
    const done = await api.waitForJob(run.body.id, 90_000);
    assert.equal(done.job.status, 'completed', done.job.status_message);
    assert.equal(done.job.results.row_count, 60, 'three listing pages of 20 books');
  });

  it('is metered: a generation costs its credit; the jobs list and results know it', async () => {
    const acc = await createAccount(svc.dataDir, { plan: 'growth' });
    const api = client(svc.url, acc.api_key);
    const before = (await api.get('/api/v1/me/')).body.subscription.credits_remaining;
    const created = await api.post('/api/v1/generate/', { url: `${site.url}/quotes/`, prompt: 'quotes, authors and tags' });
    const { job } = await follow(api, created.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, before - 1);
    const results = await api.get(`/api/v1/jobs/${job.id}/results/`);
    assert.equal(results.status, 200);
    assert.deepEqual(Object.keys(results.body[0].data[0]).sort(), ['author', 'quote', 'tags']);
    assert.equal((await api.get('/api/v1/jobs/')).body.results[0].job_type, 'generate');
  });

  it('run: true runs the saved config as a normal, metered run job (run_job_id) that gives every row, where the trial gave the first pages', async () => {
    const acc = await createAccount(svc.dataDir, { plan: 'growth' });
    const api = client(svc.url, acc.api_key);
    const before = (await api.get('/api/v1/me/')).body.subscription.credits_remaining;
    const created = await api.post('/api/v1/generate/', { url: `${site.url}/quotes/`, prompt: 'every quote with its author', run: true });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const { job } = await follow(api, created.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.run_job_id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, JSON.stringify(job));
    assert.ok(job.results.row_count <= 30, `the generate job keeps its trial's rows: ${job.results.row_count}`);
    assert.ok(job.status_message.includes(`Running the saved config for all the rows: run job ${job.run_job_id}`), job.status_message);
    assert.equal(job.run_error, undefined);

    const run = await api.waitForJob(job.run_job_id, 90_000);
    assert.equal(run.job.status, 'completed', run.job.status_message);
    assert.equal(run.job.job_type, 'run');
    assert.equal(run.job.yaml_config.id, job.yaml_config.id, 'the run is of the config the generate job saved');
    assert.equal(run.job.results.row_count, allQuotes().length, 'every quote of every page, not the trial\'s');
    assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, before - 2, 'the generation and the run each cost their credit');
    const listed = (await api.get('/api/v1/jobs/')).body.results as Array<{ id: string; run_job_id?: string }>;
    assert.equal(listed.find((j) => j.id === job.id)?.run_job_id, job.run_job_id, 'the job list names the run too');
    assert.ok(listed.some((j) => j.id === job.run_job_id), 'the run is a job of the account like any other');
  });

  it('without run: true, the message says the rows are a trial of the first pages and how to get all of them', async () => {
    const api = client(svc.url, pro.api_key);
    const { job } = await follow(api, (await api.post('/api/v1/generate/', { url: `${site.url}/quotes/`, prompt: 'quotes and authors' })).body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /rows are a trial of the first pages only \(at most 2 listing pages and 30 rows\); for all the rows, run the saved config \(POST \/api\/v1\/run\/ with config_id [0-9a-f-]{36}\), or generate with "run": true/);
    assert.equal('run_job_id' in job, false, 'a generate job without run keeps docs/spec.md\'s shape');
  });

  it('a generate of the same URL and prompt says so: saved beside it as "<name> (2)", or over it with config_id', async () => {
    const acc = await createAccount(svc.dataDir, { plan: 'growth' });
    const api = client(svc.url, acc.api_key);
    const body = { url: `${site.url}/quotes/`, prompt: 'quotes and their authors' };
    const first = await follow(api, (await api.post('/api/v1/generate/', body)).body.id);
    assert.equal(first.job.status, 'completed', first.job.status_message);
    const original = (await api.get(`/api/v1/configs/${first.job.yaml_config.id}/`)).body;
    assert.doesNotMatch(first.job.status_message, /same URL and prompt/);

    // The same URL (written differently) and the same prompt (other spacing and case): the answer names the config.
    const again = await api.post('/api/v1/generate/', { url: `${site.url.replace('http://', 'HTTP://')}/quotes/`, prompt: '  Quotes and   their authors ' });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.deepEqual(again.body.existing_config, { id: original.id, name: original.name });
    const second = await follow(api, again.body.id);
    assert.equal(second.job.status, 'completed', second.job.status_message);
    const copy = (await api.get(`/api/v1/configs/${second.job.yaml_config.id}/`)).body;
    assert.notEqual(copy.id, original.id);
    assert.equal(copy.name, `${original.name} (2)`, 'a new name, not a look-alike');
    assert.ok(second.job.status_message.includes(`A config with the same URL and prompt exists: "${original.name}" (config ${original.id}); generate with "config_id": "${original.id}" to replace its YAML instead of saving another.`), second.job.status_message);
    const third = await follow(api, (await api.post('/api/v1/generate/', body)).body.id);
    assert.equal((await api.get(`/api/v1/configs/${third.job.yaml_config.id}/`)).body.name, `${original.name} (3)`);
    assert.match(third.job.status_message, /exists: .* and 1 more; generate with "config_id"/);

    // config_id: the generated YAML replaces that config's; no config is added; its name, id and creation time stay.
    const before = (await api.get('/api/v1/configs/')).body.count;
    const edited = 'version: "2.0"\nname: edited by hand\ntarget: { url: "' + site.url + '/quotes/" }\nextract:\n  container: div.quote\n  fields:\n    - { name: q, selector: span.text }\n';
    assert.equal((await api.put(`/api/v1/configs/${original.id}/`, { yaml_content: edited })).status, 200);
    const replace = await api.post('/api/v1/generate/', { ...body, prompt: 'every quote with its author', config_id: original.id });
    assert.equal(replace.status, 202, JSON.stringify(replace.body));
    assert.equal(replace.body.existing_config, undefined);
    const replaced = await follow(api, replace.body.id);
    assert.equal(replaced.job.status, 'completed', replaced.job.status_message);
    assert.equal(replaced.job.yaml_config.id, original.id);
    assert.ok(replaced.job.status_message.includes(`replaced the YAML of "${original.name}" (config ${original.id}), as config_id asked.`), replaced.job.status_message);
    const now = (await api.get(`/api/v1/configs/${original.id}/`)).body;
    assert.deepEqual([now.name, now.created_at, now.prompt], [original.name, original.created_at, 'every quote with its author']);
    assert.equal(now.yaml_content, replaced.job.yaml_config.yaml_content);
    assert.notEqual(now.yaml_content, edited);
    assert.equal((await api.get('/api/v1/configs/')).body.count, before, 'no config added');

    // Refusals, before anything is spent: another URL's config, an unknown or another account's config, a bad id.
    const credits = (await api.get('/api/v1/me/')).body.subscription.credits_remaining;
    const otherUrl = await api.post('/api/v1/generate/', { url: `${site.url}/books/`, prompt: 'books', config_id: original.id });
    assert.equal(otherUrl.status, 400, JSON.stringify(otherUrl.body));
    assert.equal(otherUrl.body.code, 'invalid_request');
    assert.match(otherUrl.body.error, /config_id names a config of another URL/);
    const stranger = client(svc.url, pro.api_key);
    assert.equal((await stranger.post('/api/v1/generate/', { ...body, config_id: original.id })).body.code, 'not_found', 'another account\'s config is not found');
    assert.equal((await api.post('/api/v1/generate/', { ...body, config_id: '00000000-0000-4000-8000-000000000000' })).status, 404);
    assert.equal((await api.post('/api/v1/generate/', { ...body, config_id: 'not-a-uuid' })).body.code, 'invalid_request');
    assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, credits, 'nothing spent on a refusal');
  });

  it('refuses bad requests with a clear 4xx and charges nothing', async () => {
    const acc = await createAccount(svc.dataDir, { plan: 'starter' });
    const api = client(svc.url, acc.api_key);
    const expect = async (body: unknown, status: number, code: string) => {
      const r = await api.post('/api/v1/generate/', body);
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(r.body.code, code, JSON.stringify(r.body));
    };
    await expect({ url: 'not a url', prompt: 'x' }, 400, 'invalid_url');
    await expect({ url: 'ftp://example.com/', prompt: 'titles' }, 400, 'invalid_url');
    await expect({ url: 'http://10.0.0.1/', prompt: 'titles' }, 400, 'target_forbidden');
    await expect({ url: `${site.url}/books/`, prompt: '   ' }, 400, 'invalid_request');
    await expect({ url: `${site.url}/books/` }, 400, 'invalid_request');
    await expect({ url: `${site.url}/books/`, prompt: 'x'.repeat(2001) }, 400, 'invalid_request');
    await expect({ url: `${site.url}/books/`, prompt: 'titles', run: 'yes' }, 400, 'invalid_request');
    // Other pages of the template (issue 36): each checked as the target is, at most 4, the bad one named.
    const forbidden = await api.post('/api/v1/generate/', { url: `${site.url}/books/`, prompt: 'titles', example_urls: [`${site.url}/books/catalogue/page-2.html`, 'http://169.254.169.254/latest/'] });
    assert.equal(forbidden.status, 400, JSON.stringify(forbidden.body));
    assert.equal(forbidden.body.code, 'target_forbidden');
    assert.match(forbidden.body.error, /^example_urls\[1\]: /);
    assert.equal(forbidden.body.details[0].path, 'example_urls/1');
    await expect({ url: `${site.url}/books/`, prompt: 'titles', example_urls: ['ftp://x/'] }, 400, 'invalid_url');
    await expect({ url: `${site.url}/books/`, prompt: 'titles', example_urls: Array.from({ length: 5 }, (_, i) => `${site.url}/books/catalogue/page-${i + 1}.html`) }, 400, 'invalid_request');
    await expect({ url: `${site.url}/books/`, prompt: 'titles', example_urls: `${site.url}/books/` }, 400, 'invalid_request');
    // Starter has no server execution: a generate that would run its config is refused before anything is spent.
    await expect({ url: `${site.url}/books/`, prompt: 'titles', run: true }, 403, 'plan_required');
    assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, 25);
  });

  it('reads the example URLs as other pages of the template and tries the config on them (issue 36)', async () => {
    const api = client(svc.url, pro.api_key);
    const created = await api.post('/api/v1/generate/', { url: `${site.url}/quotes/`, prompt: 'quotes and their authors on this page', example_urls: [`${site.url}/quotes/page/2/`, `${site.url}/quotes/page/3/`] });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const { job } = await follow(api, created.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /tried on 2 other page\(s\) of the template: \d+ row\(s\), \d+ row\(s\)/);
    assert.equal(job.results.data[0].author, allQuotes()[0]!.author);
  });

  it('fails, saying what it tried, when a page has nothing to find or cannot be loaded', async () => {
    const api = client(svc.url, pro.api_key);
    const empty = await follow(api, (await api.post('/api/v1/generate/', { url: `${site.url}/status/200/`, prompt: 'all products' })).body.id);
    assert.equal(empty.job.status, 'failed');
    assert.match(empty.job.status_message, /^generation_failed: /);
    const missing = await follow(api, (await api.post('/api/v1/generate/', { url: `${site.url}/status/404/`, prompt: 'all products' })).body.id);
    assert.equal(missing.job.status, 'failed');
    assert.match(missing.job.status_message, /^target_failed: .*404/);
  });

  it('renders a page drawn by scripts in the browser, finds the JSON API behind it and writes a config that reads it', async () => {
    const api = client(svc.url, pro.api_key);
    const { job } = await follow(api, (await api.post('/api/v1/generate/', { url: `${site.url}/js/quotes/`, prompt: 'quotes and their authors' })).body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.api_discovered, true);
    // The status says which source the config reads and why (issue 38).
    assert.match(job.status_message, /reads the site's JSON API instead of the page \(GET .*\/api\/quotes\/.*\): its trial gave the page's rows over plain HTTP/);
    assert.match(job.yaml_config.yaml_content, /api:\n\s+url: http:\/\/127\.0\.0\.1:\d+\/api\/quotes\/\n/);
    assert.doesNotMatch(job.yaml_config.yaml_content, /wait_selector/);
    assert.equal(job.results.data[0].author, 'Ada Whitmore');
  });
});

describe('generate jobs with the Claude agent (a local Messages API stub)', () => {
  let site: FixtureSite;
  let stub: AnthropicStub;
  let svc: TestService;
  let key: string;

  before(async () => {
    site = await startFixtureSite();
    const yaml = `version: "2.0"
name: Quotes by Claude
target: { url: "${site.url}/quotes/", engine: auto }
extract:
  container: div.quote
  type: list
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
`;
    stub = await startAnthropicStub([
      reply([toolUse('test_selector', { selector: 'div.quote small.author' })]),
      reply([toolUse('submit_config', { yaml })]),
      httpError(429, { retryAfter: 0.01 }),
      httpError(429, { retryAfter: 0.01 }),
      httpError(429, { retryAfter: 0.01 }),
      httpError(429, { retryAfter: 0.01 }),
    ]);
    svc = await startService({ ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: stub.url });
    key = (await createAccount(svc.dataDir, { plan: 'pro' })).api_key;
  });
  after(async () => {
    await svc?.stop();
    await stub?.close();
    await site?.close();
  });

  it('the agent starts from the heuristic config, tests a selector and submits a config that the trial accepts', async () => {
    const api = client(svc.url, key);
    const { job } = await follow(api, (await api.post('/api/v1/generate/', { url: `${site.url}/quotes/`, prompt: 'quotes and authors' })).body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /with Claude/);
    assert.match(job.yaml_config.yaml_content, /name: Quotes by Claude/);
    assert.equal(job.results.data[0].author, 'Ada Whitmore');
    const first = stub.requests[0]!;
    assert.match(JSON.stringify(first.body.messages), /div\.quote/, 'the heuristic config went to Claude');
    assert.ok(!/<html|<!doctype/i.test(JSON.stringify(stub.requests.map((r) => r.body))), 'no raw page was sent');
  });

  it('when Anthropic keeps answering 429, the heuristic config stands and the message says why', async () => {
    const api = client(svc.url, key);
    const { job } = await follow(api, (await api.post('/api/v1/generate/', { url: `${site.url}/books/`, prompt: 'book titles and prices' })).body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.doesNotMatch(job.status_message, /with Claude/);
    assert.match(job.status_message, /Claude could not improve it .*429/);
    assert.equal(job.results.data[0].price, bookDetails()[0]!.price);
  });
});
