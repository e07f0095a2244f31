/**
 * The TypeScript client (clients/typescript, `@scrape-ai/client`):
 * - its types against the OpenAPI document (docs/openapi.json): for each operation, the keys a type-checked
 *   fixture object declares (tsc makes the fixture list exactly the type's required keys, or all its keys)
 *   equal the schema's `required` list, or its `properties`, so the hand-written types cannot drift;
 * - the client against the real local service over HTTP (the fixture site as the scraped site; a Pro, a Free
 *   and a one-tool-call account from a plans file), every error class raised by a real answer;
 * - the retry rules against a small scripted node:http stub on loopback.
 * The expected quotes come from the fixture site's own data (allQuotes()), not from a scrape.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { createAccount, startService, tempDataDir, type TestService } from '../helpers/service.ts';
import {
  AuthenticationError,
  ForbiddenError,
  JobTimeoutError,
  NetworkError,
  NotFoundError,
  QuotaExceededError,
  RateLimitError,
  ScrapeAIError,
  ServerError,
  ValidationError,
  ScrapeAI,
} from '../../clients/typescript/src/index.ts';
import type {
  Config, ConfigList, ConfigSummary, ContentReport, CreateConfigRequest, DnsWhoisReport, ErrorBody, GenerateRequest, Job,
  JobChanges, JobChangesSummary, JobList, JobStarted, JobSummary, LeadsReport, LinksReport, LoginRequest, LoginResponse, MeResponse, ScreenshotInfo,
  SeoReport, SslReport, TechReport, ToolRequests,
} from '../../clients/typescript/src/index.ts';
import { quotesConfigYaml } from '../fixtures/site/quotes-config.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

// ------------------------------------------------------------------------------------------------- types

/** The keys of T that are not optional. */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** An object literal of this type must name exactly T's required keys (excess-property check + completeness). */
type Req<T> = Record<RequiredKeys<T>, true>;
/** An object literal of this type must name exactly T's keys. */
type All<T> = Record<keyof T, true>;

type Schema = { $ref?: string; type?: unknown; required?: string[]; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[] };
const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8'));
const deref = (s: Schema): Schema => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()!] : s);
function responseSchema(method: string, p: string): Schema {
  const responses = doc.paths[p][method].responses;
  const ok = Object.keys(responses).find((s) => s.startsWith('2'))!;
  return deref(responses[ok].content['application/json'].schema);
}
const requestSchema = (method: string, p: string): Schema => deref(doc.paths[p][method].requestBody.content['application/json'].schema);
const sorted = (o: object) => Object.keys(o).sort();
function same(schema: Schema, required: object, all: object, what: string) {
  assert.deepEqual(sorted(required), [...(schema.required ?? [])].sort(), `${what}: required keys`);
  assert.deepEqual(sorted(all), Object.keys(schema.properties ?? {}).sort(), `${what}: all keys`);
}

describe('TypeScript client types against docs/openapi.json', () => {
  it('every operation\'s request and response type has the schema\'s keys', () => {
    const login = responseSchema('post', '/api/v1/auth/login/');
    same(login, { api_key: true, email: true, plan: true } satisfies Req<LoginResponse>, { api_key: true, email: true, plan: true } satisfies All<LoginResponse>, 'login');
    same(requestSchema('post', '/api/v1/auth/login/'), { email: true, password: true } satisfies Req<LoginRequest>, { email: true, password: true } satisfies All<LoginRequest>, 'login body');

    const me = responseSchema('get', '/api/v1/me/');
    same(me, { user: true, subscription: true } satisfies Req<MeResponse>, { user: true, subscription: true } satisfies All<MeResponse>, 'me');
    type User = MeResponse['user'];
    same(me.properties!.user!, { id: true, email: true, first_name: true, last_name: true } satisfies Req<User>, { id: true, email: true, first_name: true, last_name: true } satisfies All<User>, 'me.user');
    type Sub = MeResponse['subscription'];
    same(me.properties!.subscription!, { plan: true, has_api_access: true, has_server_execution: true } satisfies Req<Sub>,
      { plan: true, credits_remaining: true, credits_per_month: true, yaml_generations_remaining: true, monthly_scrapes_remaining: true, has_api_access: true, has_server_execution: true } satisfies All<Sub>, 'me.subscription');

    const list = responseSchema('get', '/api/v1/configs/');
    same(list, { count: true, results: true } satisfies Req<ConfigList>, { count: true, results: true } satisfies All<ConfigList>, 'configs');
    // Inline literals throughout: tsc's excess-property check applies to object literals only.
    same(list.properties!.results!.items!, { id: true, name: true, target_url: true, created_at: true } satisfies Req<ConfigSummary>, { id: true, name: true, target_url: true, created_at: true } satisfies All<ConfigSummary>, 'configs item');
    const config = { id: true, name: true, target_url: true, created_at: true, yaml_content: true, prompt: true } satisfies Req<Config>;
    same(responseSchema('get', '/api/v1/configs/{id}/'), config, { id: true, name: true, target_url: true, created_at: true, yaml_content: true, prompt: true } satisfies All<Config>, 'config');
    same(responseSchema('post', '/api/v1/configs/'), config, config, 'created config');
    same(requestSchema('post', '/api/v1/configs/'), { name: true, target_url: true, yaml_content: true } satisfies Req<CreateConfigRequest>,
      { name: true, target_url: true, yaml_content: true, prompt: true } satisfies All<CreateConfigRequest>, 'config body');

    same(requestSchema('post', '/api/v1/generate/'), { url: true, prompt: true } satisfies Req<GenerateRequest>, { url: true, prompt: true } satisfies All<GenerateRequest>, 'generate body');
    assert.deepEqual(Object.keys(requestSchema('post', '/api/v1/run/').properties!).sort(), ['config_id', 'yaml_content'], 'run body');
    const started = { id: true, status: true, progress: true, job_type: true } satisfies Req<JobStarted>;
    const startedAll = { id: true, status: true, progress: true, job_type: true, target_url: true, created_at: true } satisfies All<JobStarted>;
    for (const p of ['/api/v1/generate/', '/api/v1/run/']) same(responseSchema('post', p), started, startedAll, p);

    const jobs = responseSchema('get', '/api/v1/jobs/');
    same(jobs, { count: true, next_cursor: true, results: true } satisfies Req<JobList>, { count: true, next_cursor: true, results: true } satisfies All<JobList>, 'jobs');
    same(jobs.properties!.results!.items!, { id: true, status: true, progress: true, job_type: true, target_url: true, status_message: true, items_found: true, pages_scraped: true, api_discovered: true, created_at: true } satisfies Req<JobSummary>, { id: true, status: true, progress: true, job_type: true, target_url: true, status_message: true, items_found: true, pages_scraped: true, api_discovered: true, created_at: true, completed_at: true } satisfies All<JobSummary>, 'jobs item');
    assert.deepEqual((doc.paths['/api/v1/jobs/'].get.parameters as Array<{ name: string }>).map((q) => q.name).sort(), ['cursor', 'limit']);
    same(responseSchema('get', '/api/v1/jobs/{id}/status/'), { id: true, status: true, progress: true, job_type: true, target_url: true, status_message: true, items_found: true, pages_scraped: true, api_discovered: true, created_at: true, results: true, yaml_config: true } satisfies Req<Job>,
      { id: true, status: true, progress: true, job_type: true, target_url: true, status_message: true, items_found: true, pages_scraped: true, api_discovered: true, created_at: true, results: true, yaml_config: true, completed_at: true, changes: true } satisfies All<Job>, 'job');
    const summary = responseSchema('get', '/api/v1/jobs/{id}/status/').properties!.changes!.anyOf![0]!;
    same(summary, { added: true, removed: true, changed: true, compared_with: true } satisfies Req<JobChangesSummary>, { added: true, removed: true, changed: true, compared_with: true } satisfies All<JobChangesSummary>, 'job.changes');
    const changesAll = { job_id: true, compared_with: true, key_fields: true, added: true, removed: true, changed: true, total: true, offset: true, limit: true, results: true, message: true } as const;
    same(responseSchema('get', '/api/v1/jobs/{id}/changes/'), changesAll satisfies Req<JobChanges>, changesAll satisfies All<JobChanges>, 'changes');
    const jobStatus = doc.paths['/api/v1/jobs/{id}/status/'].get.responses['200'].content['application/json'].schema.properties.status.enum;
    const statuses: Record<Job['status'], true> = { pending: true, analyzing: true, generating: true, validating: true, running: true, completed: true, failed: true };
    assert.deepEqual(sorted(statuses), [...jobStatus].sort(), 'job statuses');

    const error = doc.components.schemas.Error;
    same(error, { error: true, code: true, details: true } satisfies Req<ErrorBody>, { error: true, code: true, details: true } satisfies All<ErrorBody>, 'Error');

    // The tools: request options and the JSON report of each.
    const reports: Record<keyof ToolRequests, [object, object]> = {
      'seo-analyzer': [{ url: true, status: true, content_type: true, title: true, meta_description: true, canonical: true, robots: true, lang: true, viewport: true, hreflang: true, open_graph: true, twitter_card: true, structured_data: true, headings: true, word_count: true, links: true, images: true, robots_txt: true, audits: true, score: true, warnings: true } satisfies Req<SeoReport>, { url: true } satisfies All<ToolRequests['seo-analyzer']>],
      'tech-detector': [{ url: true, rendered: true, partial: true, technologies: true } satisfies Req<TechReport>, { url: true, render: true } satisfies All<ToolRequests['tech-detector']>],
      'lead-generation': [{ url: true, emails: true, phones: true, social: true, defaultCountry: true, pages: true } satisfies Req<LeadsReport>, { url: true, follow_contact_pages: true } satisfies All<ToolRequests['lead-generation']>],
      screenshot: [{ url: true, width: true, height: true, format: true, bytes: true, expires_at: true } satisfies Req<ScreenshotInfo>, { url: true, format: true, full_page: true, width: true, height: true, device_scale_factor: true, delay: true } satisfies All<ToolRequests['screenshot']>],
      'content-extractor': [{ title: true, byline: true, published_time: true, site_name: true, lang: true, excerpt: true, text: true, html: true, word_count: true, reading_time_minutes: true, images: true, readerable: true } satisfies Req<ContentReport>, { url: true } satisfies All<ToolRequests['content-extractor']>],
      'broken-link-checker': [{ url: true, links: true, summary: true, limits: true } satisfies Req<LinksReport>, { url: true, depth: true, max_links: true } satisfies All<ToolRequests['broken-link-checker']>],
      'dns-whois': [{ host: true, host_type: true, domain: true, dns: true, error: true, dns_errors: true, ips: true, whois: true } satisfies Req<DnsWhoisReport>, { url: true, servers: true } satisfies All<ToolRequests['dns-whois']>],
      'ssl-checker': [{ host: true, port: true, certificate: true, chain: true, hostname_match: true, authorized: true, authorization_error: true, trust_store: true, protocol: true, cipher: true, protocols: true, ciphers: true, hsts: true, ocsp_stapled: true, grade: true, grade_ignoring_trust: true, score: true, findings: true, handshakes: true } satisfies Req<SslReport>, { url: true, port: true } satisfies All<ToolRequests['ssl-checker']>],
    };
    const toolPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/tools/')).map((p) => p.split('/')[4]).sort();
    assert.deepEqual(toolPaths, Object.keys(reports).sort(), 'every tool of the document has types');
    for (const [name, [report, body]] of Object.entries(reports)) {
      const p = `/api/v1/tools/${name}/`;
      assert.deepEqual(sorted(report), [...(responseSchema('post', p).required ?? [])].sort(), `${name}: report keys`);
      assert.deepEqual(sorted(body), Object.keys(requestSchema('post', p).properties!).sort(), `${name}: options`);
    }
  });
});

// ----------------------------------------------------------------------------------------- live service


describe('TypeScript client against the local service', () => {
  let site: FixtureSite;
  let svc: TestService;
  const dataDir = tempDataDir();
  const plansFile = path.join(dataDir, 'plans.json');
  let pro: Awaited<ReturnType<typeof createAccount>>;
  let free: Awaited<ReturnType<typeof createAccount>>;
  let onecall: Awaited<ReturnType<typeof createAccount>>;
  let client: ScrapeAI;

  before(async () => {
    // The built-in plans plus one whose month holds a single tool call (0.1 credit), for quota_exceeded.
    const builtin = JSON.parse(fs.readFileSync(path.join(ROOT, 'lambdas/core/plans.json'), 'utf8'));
    builtin.credits.plans.onecall = { ...builtin.credits.plans.pro, label: 'One call', credits_per_month: 0.1 };
    fs.writeFileSync(plansFile, JSON.stringify(builtin));
    site = await startFixtureSite();
    svc = await startService({ DATA_DIR: dataDir, SAI_PLANS_FILE: plansFile });
    const env = { SAI_PLANS_FILE: plansFile };
    [pro, free, onecall] = await Promise.all([
      createAccount(dataDir, { plan: 'pro' }, env),
      createAccount(dataDir, { plan: 'free' }, env),
      createAccount(dataDir, { plan: 'onecall' }, env),
    ]);
    client = new ScrapeAI({ apiKey: pro.api_key, baseUrl: svc.url });
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('login gives a client whose me() is the account; a wrong password and a bad key are AuthenticationError', async () => {
    const logged = await ScrapeAI.login(pro.email, pro.password, { baseUrl: `${svc.url}/api/v1/` });
    assert.equal(logged.apiKey, pro.api_key);
    assert.equal(logged.account?.plan, 'pro');
    const me = await logged.me();
    assert.equal(me.user.email, pro.email);
    assert.equal(me.subscription.plan, 'pro');
    await assert.rejects(ScrapeAI.login(pro.email, 'wrong password', { baseUrl: svc.url }), (e) => e instanceof AuthenticationError && e.status === 401 && e.code === 'invalid_credentials');
    await assert.rejects(new ScrapeAI({ apiKey: 'sai_not_a_real_key', baseUrl: svc.url }).me(), (e) => e instanceof AuthenticationError && e.status === 401);
    // No key at all: refused before sending.
    await assert.rejects(new ScrapeAI({ apiKey: '', baseUrl: 'http://127.0.0.1:1' }).me(), AuthenticationError);
    const openapi = await new ScrapeAI({ apiKey: '', baseUrl: svc.url }).openapi();
    assert.equal(String(openapi.openapi).slice(0, 3), '3.1');
  });

  it('configs: create, list, get, delete, then NotFoundError', async () => {
    const yaml = quotesConfigYaml(`${site.url}/quotes/`);
    const created = await client.createConfig({ name: 'Quotes TS', target_url: `${site.url}/quotes/`, yaml_content: yaml, prompt: 'quotes' });
    assert.equal(created.name, 'Quotes TS');
    assert.equal(created.yaml_content, yaml);
    assert.equal(created.prompt, 'quotes');
    const list = await client.listConfigs();
    assert.ok(list.results.some((c) => c.id === created.id), JSON.stringify(list));
    assert.equal(list.count, list.results.length);
    const got = await client.getConfig(created.id);
    assert.deepEqual(got, created);
    await client.deleteConfig(created.id);
    await assert.rejects(client.getConfig(created.id), (e) => e instanceof NotFoundError && e.status === 404 && e.code === 'not_found');
    await assert.rejects(client.deleteConfig(created.id), NotFoundError);
    await assert.rejects(client.getJob('no-such-job'), NotFoundError);
  });

  it('invalid YAML is a ValidationError whose details give line and column', async () => {
    const yaml = 'version: "2.0"\ntarget:\n  url: https://example.com/\nextract:\n  contianer: div.quote\n  fields:\n    - { name: a, selector: b }\n';
    const err = await client.createConfig({ name: 'bad', target_url: 'https://example.com/', yaml_content: yaml }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof ValidationError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'invalid_config');
    const problem = err.details.find((d) => String((d as { message?: unknown }).message).includes('contianer')) as { line: number; column: number } | undefined;
    assert.ok(problem, JSON.stringify(err.details));
    assert.equal(problem.line, 5);
    assert.ok(Number.isInteger(problem.column) && problem.column >= 1, JSON.stringify(problem));
  });

  it('a saved config run twice: the second job\'s changes against the first (getChanges), paged', async () => {
    const created = await client.createConfig({ name: 'Quotes changes', target_url: `${site.url}/quotes/`, yaml_content: quotesConfigYaml(`${site.url}/quotes/`) });
    const first = await client.waitForJob((await client.run({ config_id: created.id })).id, { intervalMs: 100, timeoutMs: 120_000 });
    assert.deepEqual(first.changes, { added: 0, removed: 0, changed: 0, compared_with: null });
    const firstChanges = await client.getChanges(first.id);
    assert.equal(firstChanges.compared_with, null);
    const second = await client.waitForJob((await client.run({ config_id: created.id })).id, { intervalMs: 100, timeoutMs: 120_000 });
    assert.deepEqual(second.changes, { added: 0, removed: 0, changed: 0, compared_with: first.id }, 'the same site twice: nothing changed');
    const page = await client.getChanges(second.id, { change: 'added', offset: 0, limit: 10 });
    assert.equal(page.compared_with, first.id);
    assert.deepEqual(page.results, []);
    await assert.rejects(client.getChanges(second.id, { limit: 0 }), (e) => e instanceof ValidationError && e.code === 'invalid_request');
    await client.deleteConfig(created.id);
  });

  it('run an inline config, waitForJob with increasing progress, rows, CSV with a BOM, XLSX, job list', async () => {
    const started = await client.run({ yaml_content: quotesConfigYaml(`${site.url}/quotes/`) });
    assert.equal(started.job_type, 'run');
    const seen: number[] = [];
    const job = await client.waitForJob(started.id, { intervalMs: 100, timeoutMs: 120_000, onProgress: (j) => { seen.push(j.progress); } });
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.ok(seen.length >= 1);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! >= seen[i - 1]!, `progress went down: ${seen.join(',')}`);
    assert.equal(seen.at(-1), 100);

    const expected = allQuotes().slice(0, 30).map((q) => ({ text: q.text, author: q.author }));
    const rows = await client.getResults(started.id);
    assert.equal(rows.length, expected.length);
    assert.deepEqual(rows.map((r) => ({ text: r.text, author: r.author })), expected);

    const csv = await client.getResultsFile(started.id, 'csv');
    assert.ok(csv instanceof Uint8Array);
    assert.deepEqual([...csv.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 byte-order mark');
    const text = new TextDecoder().decode(csv.subarray(3));
    assert.equal(text.split(/\r\n/).filter(Boolean).length, expected.length + 1, 'header and one line per row');
    const xlsx = await client.getResultsFile(started.id, 'xlsx');
    assert.equal(new TextDecoder().decode(xlsx.subarray(0, 2)), 'PK', 'an XLSX is a ZIP file');
    const json = JSON.parse(new TextDecoder().decode(await client.getResultsFile(started.id, 'json')));
    assert.equal(json.length, expected.length);

    const page = await client.listJobs({ limit: 1 });
    assert.equal(page.results.length, 1);
    assert.equal(page.results[0]!.id, started.id);
  });

  it('a tool call (seo-analyzer) returns its audits', async () => {
    const report = await client.tool('seo-analyzer', { url: `${site.url}/quotes/` });
    assert.ok(report.url.startsWith(site.url), report.url);
    assert.ok(Array.isArray(report.audits) && report.audits.length > 0, JSON.stringify(report.audits));
    assert.ok(report.audits.every((a) => typeof a.id === 'string'));
    await assert.rejects(client.tool('seo-analyzer', { url: 'not a url' }), ValidationError);
    assert.throws(() => client.tool('../me', { url: site.url }), TypeError);
  });

  it('a spent month is QuotaExceededError', async () => {
    const one = new ScrapeAI({ apiKey: onecall.api_key, baseUrl: svc.url });
    await one.tool('content-extractor', { url: `${site.url}/quotes/` });
    await assert.rejects(one.tool('content-extractor', { url: `${site.url}/quotes/` }), (e) => e instanceof QuotaExceededError && e.status === 429 && e.code === 'quota_exceeded');
  });

  it('a Free account: run is plan_required; the 11th tool call of the hour is RateLimitError with retryAfterSeconds', async () => {
    const f = new ScrapeAI({ apiKey: free.api_key, baseUrl: svc.url });
    const err = await f.run({ yaml_content: quotesConfigYaml(`${site.url}/quotes/`) }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof ForbiddenError && err instanceof ScrapeAIError, String(err));
    assert.equal(err.status, 403);
    assert.equal(err.code, 'plan_required');
    const hour = new Date().toISOString().slice(0, 13);
    let accepted = 0;
    let limited: RateLimitError | null = null;
    for (let i = 0; i < 21 && !limited; i++) {
      try {
        const report = await f.tool('content-extractor', { url: `${site.url}/quotes/` });
        assert.equal(typeof report.text, 'string');
        accepted++;
      } catch (e) {
        if (!(e instanceof RateLimitError)) throw e;
        limited = e;
      }
    }
    assert.ok(limited, 'the Free plan\'s hourly limit was never reached');
    if (new Date().toISOString().slice(0, 13) === hour) assert.equal(accepted, 10);
    assert.equal(limited.status, 429);
    assert.equal(limited.code, 'rate_limited');
    assert.ok(limited.retryAfterSeconds !== null && limited.retryAfterSeconds >= 1 && limited.retryAfterSeconds <= 3600, String(limited.retryAfterSeconds));
  });
});

// ------------------------------------------------------------------------------------------- retry stub

type Reply = { status: number; headers?: Record<string, string>; body?: unknown };

/** A loopback server answering each "METHOD /path" from a script (in order; the last reply repeats) and logging the times. */
async function stubServer(script: Record<string, Reply[]>) {
  const calls: Array<{ key: string; at: number }> = [];
  const server = http.createServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    calls.push({ key, at: Date.now() });
    req.resume();
    const replies = script[key];
    const reply = replies ? (replies.length > 1 ? replies.shift()! : replies[0]!) : { status: 404, body: { error: 'no script', code: 'not_found', details: [] } };
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, calls, count: (key: string) => calls.filter((c) => c.key === key).length, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

const ME: MeResponse = { user: { id: 1, email: 'a@example.com', first_name: '', last_name: '' }, subscription: { plan: 'pro', has_api_access: true, has_server_execution: true } };
const err = (status: number, code: string, headers?: Record<string, string>, details: unknown[] = []): Reply => ({ status, headers, body: { error: code, code, details } });

describe('TypeScript client retries (stub server)', () => {
  const options = { apiKey: 'sai_test', backoffBaseMs: 20 };

  it('a GET answered 503 then 200 is retried; a POST answered 503 is not', async () => {
    const stub = await stubServer({
      'GET /api/v1/me/': [err(503, 'service_busy'), { status: 200, body: ME }],
      'POST /api/v1/run/': [err(503, 'queue_unavailable'), { status: 202, body: {} }],
    });
    try {
      const c = new ScrapeAI({ ...options, baseUrl: stub.url });
      assert.deepEqual(await c.me(), ME);
      assert.equal(stub.count('GET /api/v1/me/'), 2);
      await assert.rejects(c.run({ yaml_content: 'x' }), (e) => e instanceof ServerError && e.status === 503 && e.code === 'queue_unavailable');
      assert.equal(stub.count('POST /api/v1/run/'), 1);
    } finally { await stub.close(); }
  });

  it('gives up after maxRetries: 1 + 3 requests, then the 5xx error', async () => {
    const stub = await stubServer({ 'DELETE /api/v1/configs/x/': [err(500, 'internal_error')] });
    try {
      await assert.rejects(new ScrapeAI({ ...options, baseUrl: stub.url }).deleteConfig('x'), ServerError);
      assert.equal(stub.count('DELETE /api/v1/configs/x/'), 4);
      await assert.rejects(new ScrapeAI({ ...options, baseUrl: stub.url, maxRetries: 0 }).deleteConfig('x'), ServerError);
      assert.equal(stub.count('DELETE /api/v1/configs/x/'), 5);
    } finally { await stub.close(); }
  });

  it('a 429 rate_limited with Retry-After: 1 is retried after at least a second; Retry-After: 3600 is thrown at once', async () => {
    const stub = await stubServer({
      'GET /api/v1/me/': [err(429, 'rate_limited', { 'retry-after': '1' }, [{ retry_after_seconds: 1 }]), { status: 200, body: ME }],
      'GET /api/v1/configs/': [err(429, 'rate_limited', { 'retry-after': '3600' })],
      'GET /api/v1/jobs/': [err(429, 'quota_exceeded')],
    });
    try {
      const c = new ScrapeAI({ ...options, baseUrl: stub.url });
      assert.deepEqual(await c.me(), ME);
      const [first, second] = stub.calls.filter((x) => x.key === 'GET /api/v1/me/');
      assert.ok(second && second.at - first!.at >= 1000, `waited ${second!.at - first!.at} ms`);
      await assert.rejects(c.listConfigs(), (e) => e instanceof RateLimitError && e.retryAfterSeconds === 3600);
      assert.equal(stub.count('GET /api/v1/configs/'), 1);
      await assert.rejects(c.listJobs(), QuotaExceededError);
      assert.equal(stub.count('GET /api/v1/jobs/'), 1, 'a spent quota is not retried');
    } finally { await stub.close(); }
  });

  it('network errors: a GET is retried, a POST is not, both end in NetworkError', async () => {
    const stub = await stubServer({});
    const url = stub.url;
    await stub.close(); // nothing listens there any more: connection refused
    let fetches = 0;
    const counting: typeof fetch = (input, init) => { fetches++; return fetch(input, init); };
    const c = new ScrapeAI({ ...options, baseUrl: url, fetch: counting, maxRetries: 2 });
    await assert.rejects(c.me(), (e) => e instanceof NetworkError && e.status === null);
    assert.equal(fetches, 3);
    await assert.rejects(c.generate({ url: 'https://example.com/', prompt: 'x' }), NetworkError);
    assert.equal(fetches, 4);
  });

  it('waitForJob: resolves with the finished job, rejects on time-out and on abort', async () => {
    const job = (status: Job['status'], progress: number) => ({ status: 200, body: { id: 'j', status, progress } });
    const stub = await stubServer({
      'GET /api/v1/jobs/j/status/': [job('running', 10), job('running', 60), job('completed', 100)],
      'GET /api/v1/jobs/k/status/': [job('running', 5)],
    });
    try {
      const c = new ScrapeAI({ ...options, baseUrl: stub.url });
      const seen: number[] = [];
      const done = await c.waitForJob('j', { intervalMs: 10, onProgress: (j) => { seen.push(j.progress); } });
      assert.equal(done.status, 'completed');
      assert.deepEqual(seen, [10, 60, 100]);
      await assert.rejects(c.waitForJob('k', { intervalMs: 20, timeoutMs: 150 }), JobTimeoutError);
      const abort = new AbortController();
      setTimeout(() => abort.abort(new Error('stop')), 100);
      await assert.rejects(c.waitForJob('k', { intervalMs: 20, signal: abort.signal }), /stop/);
    } finally { await stub.close(); }
  });
});
