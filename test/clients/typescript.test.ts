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
import { Webhook as StandardWebhook } from 'standardwebhooks';
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
  WEBHOOK_EVENTS,
} from '../../clients/typescript/src/index.ts';
import type {
  Config, ConfigList, ConfigSummary, ContentReport, CreateConfigRequest, CreateScheduleRequest, CreateWebhookRequest, DnsWhoisReport, ErrorBody, GenerateRequest, Job,
  JobChanges, JobChangesSummary, JobList, JobStarted, JobSummary, LeadsReport, LinksReport, LoginRequest, LoginResponse, MeResponse, Schedule, ScheduledJob,
  ScheduleList, SchedulePause, ScreenshotInfo, SeoReport, SslReport, TechReport, ToolRequests, UpdateScheduleRequest, Webhook, WebhookCreated, WebhookDeliveries,
  WebhookDelivery, WebhookDeliveryOutcome, WebhookEvent, WebhookList,
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

    same(requestSchema('post', '/api/v1/generate/'), { url: true, prompt: true } satisfies Req<GenerateRequest>, { url: true, prompt: true, run: true, config_id: true, example_urls: true } satisfies All<GenerateRequest>, 'generate body');
    assert.deepEqual(Object.keys(requestSchema('post', '/api/v1/run/').properties!).sort(), ['config_id', 'yaml_content'], 'run body');
    const started = { id: true, status: true, progress: true, job_type: true } satisfies Req<JobStarted>;
    const startedAll = { id: true, status: true, progress: true, job_type: true, target_url: true, created_at: true, existing_config: true } satisfies All<JobStarted>;
    for (const p of ['/api/v1/generate/', '/api/v1/run/']) same(responseSchema('post', p), started, startedAll, p);

    const jobs = responseSchema('get', '/api/v1/jobs/');
    same(jobs, { count: true, next_cursor: true, results: true } satisfies Req<JobList>, { count: true, next_cursor: true, results: true } satisfies All<JobList>, 'jobs');
    same(jobs.properties!.results!.items!, { id: true, status: true, progress: true, job_type: true, target_url: true, status_message: true, items_found: true, pages_scraped: true, api_discovered: true, created_at: true, config_id: true, config_name: true, warning_count: true } satisfies Req<JobSummary>, { id: true, status: true, progress: true, job_type: true, target_url: true, status_message: true, items_found: true, pages_scraped: true, api_discovered: true, created_at: true, completed_at: true, config_id: true, config_name: true, warning_count: true, run_job_id: true, run_error: true } satisfies All<JobSummary>, 'jobs item');
    assert.deepEqual((doc.paths['/api/v1/jobs/'].get.parameters as Array<{ name: string }>).map((q) => q.name).sort(), ['cursor', 'limit']);
    same(responseSchema('get', '/api/v1/jobs/{id}/status/'), { id: true, status: true, progress: true, job_type: true, target_url: true, status_message: true, items_found: true, pages_scraped: true, api_discovered: true, created_at: true, results: true, yaml_config: true, config_id: true, config_name: true, warning_count: true, warnings: true } satisfies Req<Job>,
      { id: true, status: true, progress: true, job_type: true, target_url: true, status_message: true, items_found: true, pages_scraped: true, api_discovered: true, created_at: true, results: true, yaml_config: true, completed_at: true, changes: true, config_id: true, config_name: true, warning_count: true, warnings: true, run_job_id: true, run_error: true } satisfies All<Job>, 'job');
    const summary = responseSchema('get', '/api/v1/jobs/{id}/status/').properties!.changes!.anyOf![0]!;
    same(summary, { added: true, removed: true, changed: true, compared_with: true } satisfies Req<JobChangesSummary>, { added: true, removed: true, changed: true, compared_with: true } satisfies All<JobChangesSummary>, 'job.changes');
    const changesAll = { job_id: true, compared_with: true, key_fields: true, added: true, removed: true, changed: true, total: true, offset: true, limit: true, results: true, message: true } as const;
    same(responseSchema('get', '/api/v1/jobs/{id}/changes/'), changesAll satisfies Req<JobChanges>, changesAll satisfies All<JobChanges>, 'changes');
    const jobStatus = doc.paths['/api/v1/jobs/{id}/status/'].get.responses['200'].content['application/json'].schema.properties.status.enum;
    const statuses: Record<Job['status'], true> = { pending: true, analyzing: true, generating: true, validating: true, running: true, completed: true, failed: true };
    assert.deepEqual(sorted(statuses), [...jobStatus].sort(), 'job statuses');

    // Schedules: the create and update bodies, the schedule (every answer that carries one), its parts, the list.
    same(requestSchema('post', '/api/v1/schedules/'), { config_id: true, cron: true } satisfies Req<CreateScheduleRequest>,
      { config_id: true, cron: true, timezone: true, enabled: true } satisfies All<CreateScheduleRequest>, 'schedule body');
    same(requestSchema('put', '/api/v1/schedules/{id}/'), {} satisfies Req<UpdateScheduleRequest>, { cron: true, timezone: true, enabled: true } satisfies All<UpdateScheduleRequest>, 'schedule update body');
    // Every key of a schedule is required: the literal is checked against both Req and All (inline, for the excess check).
    const schedule = { id: true, config_id: true, cron: true, timezone: true, enabled: true, next_run_at: true, last_fired_at: true, paused: true, fired_count: true, skipped_count: true, recent_jobs: true, created_at: true, updated_at: true } satisfies Req<Schedule>;
    const scheduleAll = { id: true, config_id: true, cron: true, timezone: true, enabled: true, next_run_at: true, last_fired_at: true, paused: true, fired_count: true, skipped_count: true, recent_jobs: true, created_at: true, updated_at: true } satisfies All<Schedule>;
    for (const [method, p] of [['post', '/api/v1/schedules/'], ['get', '/api/v1/schedules/{id}/'], ['put', '/api/v1/schedules/{id}/']] as const) {
      same(responseSchema(method, p), schedule, scheduleAll, `${method} ${p}`);
    }
    const scheduleSchema = responseSchema('get', '/api/v1/schedules/{id}/');
    same(scheduleSchema.properties!.paused!.anyOf![0]!, { code: true, message: true, at: true } satisfies Req<SchedulePause>, { code: true, message: true, at: true } satisfies All<SchedulePause>, 'schedule.paused');
    same(scheduleSchema.properties!.recent_jobs!.items!, { job_id: true, scheduled_for: true } satisfies Req<ScheduledJob>, { job_id: true, scheduled_for: true } satisfies All<ScheduledJob>, 'schedule.recent_jobs item');
    const schedules = responseSchema('get', '/api/v1/schedules/');
    same(schedules, { schedules: true } satisfies Req<ScheduleList>, { schedules: true } satisfies All<ScheduleList>, 'schedules');
    same(schedules.properties!.schedules!.items!, schedule, scheduleAll, 'schedules item');

    // Webhooks: the body, the webhook (no secret), the created one (with it), the list, the deliveries and their enums.
    same(requestSchema('post', '/api/v1/webhooks/'), { url: true, events: true } satisfies Req<CreateWebhookRequest>, { url: true, events: true } satisfies All<CreateWebhookRequest>, 'webhook body');
    const webhook = { id: true, url: true, events: true, created_at: true } satisfies Req<Webhook>;
    const webhookAll = { id: true, url: true, events: true, created_at: true } satisfies All<Webhook>;
    same(responseSchema('get', '/api/v1/webhooks/{id}/'), webhook, webhookAll, 'webhook');
    same(responseSchema('post', '/api/v1/webhooks/'), { id: true, url: true, events: true, created_at: true, secret: true } satisfies Req<WebhookCreated>, { id: true, url: true, events: true, created_at: true, secret: true } satisfies All<WebhookCreated>, 'created webhook');
    const webhooks = responseSchema('get', '/api/v1/webhooks/');
    same(webhooks, { webhooks: true } satisfies Req<WebhookList>, { webhooks: true } satisfies All<WebhookList>, 'webhooks');
    same(webhooks.properties!.webhooks!.items!, webhook, webhookAll, 'webhooks item');
    const deliveries = responseSchema('get', '/api/v1/webhooks/{id}/deliveries/');
    same(deliveries, { deliveries: true } satisfies Req<WebhookDeliveries>, { deliveries: true } satisfies All<WebhookDeliveries>, 'deliveries');
    same(deliveries.properties!.deliveries!.items!, { id: true, message_id: true, event: true, job_id: true, attempt: true, attempted_at: true, status_code: true, duration_ms: true, error: true, outcome: true, next_attempt_at: true } satisfies Req<WebhookDelivery>,
      { id: true, message_id: true, event: true, job_id: true, attempt: true, attempted_at: true, status_code: true, duration_ms: true, error: true, outcome: true, next_attempt_at: true } satisfies All<WebhookDelivery>, 'delivery');
    assert.deepEqual((doc.paths['/api/v1/webhooks/{id}/deliveries/'].get.parameters as Array<{ name: string; in: string }>).filter((q) => q.in === 'query').map((q) => q.name), ['limit']);
    const enumOf = (x: Schema) => [...(x as { enum: string[] }).enum].sort();
    const events: Record<WebhookEvent, true> = { 'job.completed': true, 'job.failed': true, 'job.changed': true };
    assert.deepEqual(sorted(events), enumOf(requestSchema('post', '/api/v1/webhooks/').properties!.events!.items!), 'webhook events');
    assert.deepEqual([...WEBHOOK_EVENTS].sort(), sorted(events), 'WEBHOOK_EVENTS');
    const outcomes: Record<WebhookDeliveryOutcome, true> = { delivered: true, will_retry: true, given_up: true };
    assert.deepEqual(sorted(outcomes), enumOf(deliveries.properties!.deliveries!.items!.properties!.outcome!), 'delivery outcomes');

    const error = doc.components.schemas.Error;
    same(error, { error: true, code: true, details: true } satisfies Req<ErrorBody>, { error: true, code: true, details: true } satisfies All<ErrorBody>, 'Error');

    // The tools: request options and the JSON report of each.
    const reports: Record<keyof ToolRequests, [object, object]> = {
      'seo-analyzer': [{ url: true, status: true, content_type: true, title: true, meta_description: true, canonical: true, robots: true, lang: true, viewport: true, hreflang: true, open_graph: true, twitter_card: true, structured_data: true, headings: true, word_count: true, links: true, images: true, robots_txt: true, audits: true, score: true, warnings: true } satisfies Req<SeoReport>, { url: true } satisfies All<ToolRequests['seo-analyzer']>],
      'tech-detector': [{ url: true, rendered: true, partial: true, technologies: true } satisfies Req<TechReport>, { url: true, render: true } satisfies All<ToolRequests['tech-detector']>],
      'lead-generation': [{ url: true, emails: true, phones: true, social: true, default_country: true, pages: true } satisfies Req<LeadsReport>, { url: true, follow_contact_pages: true } satisfies All<ToolRequests['lead-generation']>],
      screenshot: [{ url: true, width: true, height: true, format: true, bytes: true, expires_at: true } satisfies Req<ScreenshotInfo>, { url: true, format: true, full_page: true, width: true, height: true, device_scale_factor: true, delay: true } satisfies All<ToolRequests['screenshot']>],
      'content-extractor': [{ url: true, title: true, byline: true, published_time: true, site_name: true, lang: true, excerpt: true, text: true, html: true, word_count: true, reading_time_minutes: true, images: true, readerable: true } satisfies Req<ContentReport>, { url: true, format: true } satisfies All<ToolRequests['content-extractor']>],
      'broken-link-checker': [{ url: true, links: true, summary: true, limits: true } satisfies Req<LinksReport>, { url: true, depth: true, max_links: true } satisfies All<ToolRequests['broken-link-checker']>],
      'dns-whois': [{ url: true, host: true, host_type: true, domain: true, dns: true, error: true, dns_errors: true, ips: true, whois: true } satisfies Req<DnsWhoisReport>, { url: true, servers: true } satisfies All<ToolRequests['dns-whois']>],
      'ssl-checker': [{ url: true, host: true, port: true, certificate: true, chain: true, hostname_match: true, authorized: true, authorization_error: true, trust_store: true, protocol: true, cipher: true, protocols: true, ciphers: true, hsts: true, ocsp_stapled: true, grade: true, grade_ignoring_trust: true, score: true, findings: true, handshakes: true } satisfies Req<SslReport>, { url: true, port: true } satisfies All<ToolRequests['ssl-checker']>],
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
  let growth: Awaited<ReturnType<typeof createAccount>>;
  /** A Pro account for the webhook tests alone: no other test's job ends in it (each would be delivered). */
  let hooks: Awaited<ReturnType<typeof createAccount>>;
  let client: ScrapeAI;

  before(async () => {
    // The built-in plans plus one whose month holds a single tool call (0.1 credit), for quota_exceeded.
    const builtin = JSON.parse(fs.readFileSync(path.join(ROOT, 'lambdas/core/plans.json'), 'utf8'));
    builtin.credits.plans.onecall = { ...builtin.credits.plans.pro, label: 'One call', credits_per_month: 0.1 };
    fs.writeFileSync(plansFile, JSON.stringify(builtin));
    site = await startFixtureSite();
    svc = await startService({ DATA_DIR: dataDir, SAI_PLANS_FILE: plansFile });
    const env = { SAI_PLANS_FILE: plansFile };
    [pro, free, onecall, growth, hooks] = await Promise.all([
      createAccount(dataDir, { plan: 'pro' }, env),
      createAccount(dataDir, { plan: 'free' }, env),
      createAccount(dataDir, { plan: 'onecall' }, env),
      createAccount(dataDir, { plan: 'growth' }, env),
      createAccount(dataDir, { plan: 'pro' }, env),
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

  it('schedules: create (next run on the rule, in its time zone), list, get, disable, enable, change, delete', async () => {
    const config = await client.createConfig({ name: 'Quotes scheduled', target_url: `${site.url}/quotes/`, yaml_content: quotesConfigYaml(`${site.url}/quotes/`) });
    // Mondays at 06:00 in Paris: it does not fire during the test.
    const created = await client.createSchedule({ config_id: config.id, cron: '0 6 * * 1', timezone: 'Europe/Paris' });
    assert.equal(created.config_id, config.id);
    assert.equal(created.cron, '0 6 * * 1');
    assert.equal(created.timezone, 'Europe/Paris');
    assert.equal(created.enabled, true);
    assert.equal(created.paused, null);
    assert.equal(created.last_fired_at, null);
    assert.deepEqual([created.fired_count, created.skipped_count, created.recent_jobs], [0, 0, []]);
    assert.ok(created.next_run_at && Date.parse(created.next_run_at) > Date.now(), String(created.next_run_at));
    const paris = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    assert.equal(paris.format(new Date(created.next_run_at)), 'Mon 06:00');
    assert.ok(Date.parse(created.next_run_at) - Date.now() <= 7 * 86_400_000 + 3_600_000, 'within the week');

    const list = await client.listSchedules();
    assert.deepEqual(list.schedules.map((s) => s.id), [created.id]);
    assert.deepEqual(await client.getSchedule(created.id), created);

    const disabled = await client.updateSchedule(created.id, { enabled: false });
    assert.equal(disabled.enabled, false);
    assert.equal(disabled.next_run_at, null, 'a disabled schedule has no next run');
    assert.equal(disabled.cron, created.cron);
    const enabled = await client.updateSchedule(created.id, { enabled: true });
    assert.equal(enabled.enabled, true);
    assert.equal(enabled.next_run_at, created.next_run_at);
    const changed = await client.updateSchedule(created.id, { cron: '30 7 1 * *', timezone: 'UTC' });
    assert.deepEqual([changed.cron, changed.timezone, changed.enabled], ['30 7 1 * *', 'UTC', true]);
    assert.match(changed.next_run_at ?? '', /^\d{4}-\d{2}-01T07:30:00(\.000)?Z$/);
    assert.equal((await client.getSchedule(created.id)).cron, '30 7 1 * *');

    // Refusals: a rule that is not cron, an unknown zone, nothing to change, another id.
    const badCron = await client.updateSchedule(created.id, { cron: 'every monday' }).then(() => null, (e: unknown) => e);
    assert.ok(badCron instanceof ValidationError && badCron.status === 400 && badCron.code === 'invalid_request', String(badCron));
    assert.ok(badCron.details.some((d) => (d as { path?: string }).path === 'cron'), JSON.stringify(badCron.details));
    const badZone = await client.createSchedule({ config_id: config.id, cron: '0 6 * * *', timezone: 'Mars/Olympus_Mons' }).then(() => null, (e: unknown) => e);
    assert.ok(badZone instanceof ValidationError && badZone.code === 'invalid_request', String(badZone));
    assert.ok(badZone.details.some((d) => (d as { path?: string }).path === 'timezone'), JSON.stringify(badZone.details));
    await assert.rejects(client.updateSchedule(created.id, {}), (e) => e instanceof ValidationError && e.code === 'invalid_request');
    await assert.rejects(client.createSchedule({ config_id: '00000000-0000-4000-8000-000000000000', cron: '0 6 * * *' }), (e) => e instanceof NotFoundError && e.code === 'not_found');

    await client.deleteSchedule(created.id);
    await assert.rejects(client.getSchedule(created.id), (e) => e instanceof NotFoundError && e.status === 404);
    await assert.rejects(client.deleteSchedule(created.id), NotFoundError);
    assert.deepEqual((await client.listSchedules()).schedules, []);
    // A disabled schedule, then its config deleted: the schedule goes with it.
    const off = await client.createSchedule({ config_id: config.id, cron: '@daily', enabled: false });
    assert.deepEqual([off.enabled, off.next_run_at], [false, null]);
    await client.deleteConfig(config.id);
    await assert.rejects(client.getSchedule(off.id), NotFoundError);
  });

  it('schedules: plan_required (ForbiddenError) on Free, and on Growth for a rule more often than every 15 minutes', async () => {
    const f = new ScrapeAI({ apiKey: free.api_key, baseUrl: svc.url });
    const freeConfig = await f.createConfig({ name: 'Free quotes', target_url: `${site.url}/quotes/`, yaml_content: quotesConfigYaml(`${site.url}/quotes/`) });
    const refused = await f.createSchedule({ config_id: freeConfig.id, cron: '0 6 * * *' }).then(() => null, (e: unknown) => e);
    assert.ok(refused instanceof ForbiddenError && refused instanceof ScrapeAIError, String(refused));
    assert.equal(refused.status, 403);
    assert.equal(refused.code, 'plan_required');
    assert.deepEqual((refused.details[0] as { plan: string; required: string }), { ...(refused.details[0] as object), plan: 'free', required: 'has_server_execution' });
    assert.deepEqual((await f.listSchedules()).schedules, []);
    await f.deleteConfig(freeConfig.id);

    const g = new ScrapeAI({ apiKey: growth.api_key, baseUrl: svc.url });
    const config = await g.createConfig({ name: 'Growth quotes', target_url: `${site.url}/quotes/`, yaml_content: quotesConfigYaml(`${site.url}/quotes/`) });
    const tooOften = await g.createSchedule({ config_id: config.id, cron: '*/5 * * * *' }).then(() => null, (e: unknown) => e);
    assert.ok(tooOften instanceof ForbiddenError && tooOften.code === 'plan_required', String(tooOften));
    const d = tooOften.details[0] as { plan: string; required: string; min_interval_minutes: number; shortest_interval_minutes: number; plans_with_it: string[] };
    assert.deepEqual([d.plan, d.required, d.min_interval_minutes, d.shortest_interval_minutes], ['growth', 'schedule_min_interval_minutes', 15, 5]);
    assert.ok(d.plans_with_it.includes('Pro') && !d.plans_with_it.includes('Growth'), JSON.stringify(d.plans_with_it));
    const ok = await g.createSchedule({ config_id: config.id, cron: '*/15 * * * *', enabled: false });
    await assert.rejects(g.updateSchedule(ok.id, { cron: '* * * * *' }), (e) => e instanceof ForbiddenError && e.code === 'plan_required');
    await g.deleteSchedule(ok.id);
    await g.deleteConfig(config.id);
  });

  it('webhooks: create shows the secret once; list and get without it; no deliveries; delete; a metadata address is target_forbidden', async () => {
    const h = new ScrapeAI({ apiKey: hooks.api_key, baseUrl: svc.url });
    const url = `${site.url}/webhook-receiver`;
    const created = await h.createWebhook({ url, events: ['job.completed', 'job.failed'] });
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/=]{20,}$/);
    assert.equal(created.url, url);
    assert.deepEqual(created.events, ['job.completed', 'job.failed']);
    const { secret: _secret, ...shown } = created;
    const list = await h.listWebhooks();
    assert.deepEqual(list.webhooks, [shown]);
    assert.ok(!('secret' in list.webhooks[0]!));
    const got = await h.getWebhook(created.id);
    assert.deepEqual(got, shown);
    assert.ok(!('secret' in got));
    assert.deepEqual(await h.listWebhookDeliveries(created.id), { deliveries: [] });
    assert.deepEqual(await h.listWebhookDeliveries(created.id, { limit: 5 }), { deliveries: [] });
    await assert.rejects(h.listWebhookDeliveries(created.id, { limit: 0 }), (e) => e instanceof ValidationError && e.code === 'invalid_request');
    await h.deleteWebhook(created.id);
    await assert.rejects(h.getWebhook(created.id), (e) => e instanceof NotFoundError && e.code === 'not_found');
    await assert.rejects(h.listWebhookDeliveries(created.id), NotFoundError);
    await assert.rejects(h.deleteWebhook(created.id), NotFoundError);
    assert.deepEqual(await h.listWebhooks(), { webhooks: [] });

    const metadata = await h.createWebhook({ url: 'http://169.254.169.254/latest/meta-data/', events: ['job.completed'] }).then(() => null, (e: unknown) => e);
    assert.ok(metadata instanceof ValidationError && metadata instanceof ScrapeAIError, String(metadata));
    assert.equal(metadata.status, 400);
    assert.equal(metadata.code, 'target_forbidden');
    await assert.rejects(h.createWebhook({ url: 'http://[::ffff:a9fe:a9fe]/', events: ['job.failed'] }), (e) => e instanceof ValidationError && e.code === 'target_forbidden');
    assert.deepEqual(await h.listWebhooks(), { webhooks: [] }, 'nothing stored for a refused URL');
  });

  it('webhooks: a run that completes is delivered, signed with the secret; listWebhookDeliveries shows the attempt', async () => {
    const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => { received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }); res.writeHead(204).end(); });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const h = new ScrapeAI({ apiKey: hooks.api_key, baseUrl: svc.url });
    try {
      const hook = await h.createWebhook({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?token=t`, events: ['job.completed'] });
      const job = await h.waitForJob((await h.run({ yaml_content: quotesConfigYaml(`${site.url}/quotes/`, 1) })).id, { intervalMs: 100, timeoutMs: 120_000 });
      assert.equal(job.status, 'completed');
      let deliveries = await h.listWebhookDeliveries(hook.id);
      for (const end = Date.now() + 30_000; deliveries.deliveries.length === 0 && Date.now() < end;) {
        await new Promise((r) => setTimeout(r, 100));
        deliveries = await h.listWebhookDeliveries(hook.id);
      }
      assert.equal(deliveries.deliveries.length, 1, JSON.stringify(deliveries));
      const d = deliveries.deliveries[0]!;
      assert.deepEqual([d.event, d.job_id, d.attempt, d.status_code, d.outcome, d.error, d.next_attempt_at], ['job.completed', job.id, 1, 204, 'delivered', null, null]);
      assert.ok(Number.isInteger(d.duration_ms) && d.duration_ms >= 0);
      assert.equal(received.length, 1);
      const { headers, body } = received[0]!;
      assert.equal(headers['webhook-id'], d.message_id);
      // The receiver's check (Standard Webhooks): the signature verifies with the secret shown at creation.
      const payload = new StandardWebhook(hook.secret).verify(body, headers as Record<string, string>) as { type: string; data: { job_id: string; status: string } };
      assert.equal(payload.type, 'job.completed');
      assert.deepEqual([payload.data.job_id, payload.data.status], [job.id, 'completed']);
      assert.throws(() => new StandardWebhook(`whsec_${Buffer.from('another secret of 24 bytes!').toString('base64')}`).verify(body, headers as Record<string, string>));
      await h.deleteWebhook(hook.id);
    } finally {
      await new Promise<void>((r) => { receiver.closeAllConnections(); receiver.close(() => r()); });
    }
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

  it('generate({run: true}) waits for the generation and the run of the saved config and resolves with every row; without run, a started job', async () => {
    const seen: string[] = [];
    const done = await client.generate({ url: `${site.url}/quotes/`, prompt: 'every quote with its author', run: true }, { intervalMs: 100, timeoutMs: 120_000, onProgress: (j) => { seen.push(`${j.job_type}:${j.status}`); } });
    assert.equal(done.rows.length, allQuotes().length, 'every quote of every page, not the trial\'s');
    assert.equal(done.generate_job.status, 'completed');
    assert.ok(done.generate_job.results.row_count <= 30, 'the generate job\'s own rows are the trial\'s');
    assert.equal(done.generate_job.run_job_id, done.run_job.id);
    assert.deepEqual([done.run_job.job_type, done.run_job.status, done.run_job.yaml_config.id], ['run', 'completed', done.config_id]);
    assert.equal((await client.getConfig(done.config_id)).prompt, 'every quote with its author');
    assert.ok(seen.includes('generate:completed') && seen.at(-1) === 'run:completed', seen.join(' '));
    const started = await client.generate({ url: `${site.url}/quotes/`, prompt: 'quotes' });
    assert.deepEqual([started.status, started.job_type], ['pending', 'generate']);
    const trial = await client.waitForJob(started.id, { intervalMs: 100, timeoutMs: 90_000 });
    assert.match(trial.status_message, /rows are a trial of the first pages only/);
    assert.equal(trial.run_job_id, undefined);
    const f = new ScrapeAI({ apiKey: free.api_key, baseUrl: svc.url });
    await assert.rejects(f.generate({ url: `${site.url}/quotes/`, prompt: 'quotes', run: true }), (e) => e instanceof ForbiddenError && e.code === 'plan_required');
  });

  it('generate({example_urls}) reads and tries those other pages of the template; a forbidden one is target_forbidden naming it', async () => {
    const url = `${site.url}/quotes/`;
    // Pages 3 and 4, not the next page (2), which the generator reads anyway: 3 other pages in all, 1 without them.
    const examples = [`${site.url}/quotes/page/3/`, `${site.url}/quotes/page/4/`];
    const started = await client.generate({ url, prompt: 'quotes and their authors on this page', example_urls: examples });
    const job = await client.waitForJob(started.id, { intervalMs: 100, timeoutMs: 90_000 });
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /tried on 3 other page\(s\) of the template: \d+ row\(s\), \d+ row\(s\), \d+ row\(s\)/);
    assert.equal(job.results.data[0]!.author, allQuotes()[0]!.author);
    const forbidden = await client.generate({ url, prompt: 'quotes', example_urls: [examples[0]!, 'http://169.254.169.254/latest/'] }).then(() => null, (e: unknown) => e);
    assert.ok(forbidden instanceof ValidationError, String(forbidden));
    assert.deepEqual([forbidden.status, forbidden.code, (forbidden.details[0] as { path: string }).path], [400, 'target_forbidden', 'example_urls/1']);
    assert.match(forbidden.message, /^example_urls\[1\]: /);
    const five = Array.from({ length: 5 }, (_, i) => `${site.url}/quotes/page/${i + 2}/`);
    await assert.rejects(client.generate({ url, prompt: 'quotes', example_urls: five }), (e) => e instanceof ValidationError && e.code === 'invalid_request');
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

/** A loopback server answering each "METHOD /path" from a script (in order; the last reply repeats) and logging the times and bodies. */
async function stubServer(script: Record<string, Reply[]>) {
  const calls: Array<{ key: string; at: number; body: string }> = [];
  const server = http.createServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    const call = { key, at: Date.now(), body: '' };
    calls.push(call);
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => { call.body += chunk; });
    req.on('end', () => {
      const replies = script[key];
      const reply = replies ? (replies.length > 1 ? replies.shift()! : replies[0]!) : { status: 404, body: { error: 'no script', code: 'not_found', details: [] } };
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
    });
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

  it('generate sends example_urls (and config_id) as given, and neither when not given', async () => {
    const stub = await stubServer({ 'POST /api/v1/generate/': [{ status: 202, body: { id: 'j1', status: 'pending', progress: 0, job_type: 'generate' } }] });
    try {
      const c = new ScrapeAI({ ...options, baseUrl: stub.url });
      const pages = ['https://example.com/list?page=2', 'https://example.com/search?q=b'];
      assert.equal((await c.generate({ url: 'https://example.com/list', prompt: 'items', config_id: 'c1', example_urls: pages })).id, 'j1');
      await c.startGenerate({ url: 'https://example.com/list', prompt: 'items' });
      assert.deepEqual(stub.calls.map((x) => JSON.parse(x.body)), [
        { url: 'https://example.com/list', prompt: 'items', config_id: 'c1', example_urls: pages },
        { url: 'https://example.com/list', prompt: 'items' },
      ]);
    } finally { await stub.close(); }
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
