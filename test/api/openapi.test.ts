/**
 * The answers of the running service match docs/openapi.json: every route of the route table is called over HTTP
 * (a small job runs on the fixture site), and each answer — success or error — is validated with ajv against the
 * schema the document gives for its path, method, status and media type. GET /api/v1/openapi.json serves the
 * checked-in file, with no key.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { routes } from '../../lambdas/routes.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

const root = path.resolve(import.meta.dirname, '../..');
const doc = JSON.parse(fs.readFileSync(path.join(root, 'docs/openapi.json'), 'utf8')) as Record<string, any>;
const ajv = new Ajv({ strict: false, allErrors: true, allowUnionTypes: true });

/** The routes whose answers were validated (each route must be, see the last test). */
const checked = new Set<string>();

/**
 * Asserts that an answer matches the document: its status is listed for the operation, and its body matches the
 * schema of its media type (the tools' `$ref`s resolve inside the document's components).
 */
function conforms(method: string, template: string, res: { status: number; body: unknown; headers: Headers }): void {
  const op = doc.paths[template]?.[method.toLowerCase()];
  assert.ok(op, `${method} ${template} is in the document`);
  const response = op.responses[String(res.status)];
  assert.ok(response, `${method} ${template}: status ${res.status} is documented (${JSON.stringify(res.body).slice(0, 300)})`);
  checked.add(`${method} ${template} ${res.status}`);
  if (res.status === 204) return;
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const media = response.content?.[type];
  assert.ok(media, `${method} ${template} ${res.status}: media type ${type} is documented`);
  const validate = ajv.compile({ ...media.schema, components: doc.components });
  assert.ok(validate(res.body), `${method} ${template} ${res.status}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`);
}

const yaml = (site: string) => `version: "2.0"
name: Quotes
target:
  url: "${site}/quotes/"
  engine: lightweight
extract:
  container: div.quote
  type: list
  fields:
    - { name: text, selector: span.text, type: text }
    - { name: author, selector: small.author }
`;

describe('the service answers as docs/openapi.json says', () => {
  let site: FixtureSite;
  let svc: TestService;
  let account: Awaited<ReturnType<typeof createAccount>>;

  before(async () => {
    site = await startFixtureSite();
    svc = await startService();
    account = await createAccount(svc.dataDir, { email: 'openapi@example.com', plan: 'growth' });
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('serves the checked-in document at GET /api/v1/openapi.json without a key', async () => {
    const r = await client(svc.url).get('/api/v1/openapi.json');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, doc);
    conforms('GET', '/api/v1/openapi.json', r);
  });

  it('account, configs, a run job, its status, list and results, and their errors', async () => {
    const anon = client(svc.url);
    conforms('POST', '/api/v1/auth/login/', await anon.post('/api/v1/auth/login/', { email: account.email, password: account.password }));
    const bad = await anon.post('/api/v1/auth/login/', { email: account.email, password: 'wrong password' });
    assert.equal(bad.status, 401);
    conforms('POST', '/api/v1/auth/login/', bad);
    conforms('POST', '/api/v1/auth/login/', await anon.post('/api/v1/auth/login/', '{not json'));

    const api = client(svc.url, account.api_key);
    conforms('GET', '/api/v1/me/', await api.get('/api/v1/me/'));
    conforms('GET', '/api/v1/me/', await anon.get('/api/v1/me/'));
    const created = await api.post('/api/v1/configs/', { name: 'quotes', target_url: `${site.url}/quotes/`, yaml_content: yaml(site.url) });
    assert.equal(created.status, 201);
    conforms('POST', '/api/v1/configs/', created);
    conforms('POST', '/api/v1/configs/', await api.post('/api/v1/configs/', { name: 'broken', target_url: `${site.url}/`, yaml_content: 'version: "2.0"\nname: x\n' }));
    conforms('GET', '/api/v1/configs/', await api.get('/api/v1/configs/'));
    conforms('GET', '/api/v1/configs/{id}/', await api.get(`/api/v1/configs/${created.body.id}/`));
    conforms('GET', '/api/v1/configs/{id}/', await api.get('/api/v1/configs/00000000-0000-4000-8000-000000000000/'));
    const valid = await api.post('/api/v1/configs/validate/', { yaml_content: yaml(site.url) });
    assert.equal(valid.status, 200, JSON.stringify(valid.body));
    conforms('POST', '/api/v1/configs/validate/', valid);
    conforms('POST', '/api/v1/configs/validate/', await api.post('/api/v1/configs/validate/', { yaml_content: 'version: "2.0"\nname: x\n' }));
    const put = await api.put(`/api/v1/configs/${created.body.id}/`, { yaml_content: yaml(site.url) });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    conforms('PUT', '/api/v1/configs/{id}/', put);
    conforms('PUT', '/api/v1/configs/{id}/', await api.put(`/api/v1/configs/${created.body.id}/`, { yaml_content: 'version: "2.0"\nname: x\n' }));
    conforms('PUT', '/api/v1/configs/{id}/', await api.put('/api/v1/configs/00000000-0000-4000-8000-000000000000/', { yaml_content: yaml(site.url) }));

    const run = await api.post('/api/v1/run/', { config_id: created.body.id });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    conforms('POST', '/api/v1/run/', run);
    conforms('POST', '/api/v1/run/', await api.post('/api/v1/run/', { config_id: created.body.id, yaml_content: 'x' }));
    const early = await api.get(`/api/v1/jobs/${run.body.id}/results/`);
    if (early.status === 409) conforms('GET', '/api/v1/jobs/{id}/results/', early);
    const { job } = await api.waitForJob(run.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    conforms('GET', '/api/v1/jobs/{id}/status/', await api.get(`/api/v1/jobs/${run.body.id}/status/`));
    conforms('GET', '/api/v1/jobs/{id}/status/', await api.get('/api/v1/jobs/00000000-0000-4000-8000-000000000000/status/'));

    const gen = await api.post('/api/v1/generate/', { url: `${site.url}/quotes/`, prompt: 'quotes and their authors' });
    assert.equal(gen.status, 202, JSON.stringify(gen.body));
    conforms('POST', '/api/v1/generate/', gen);
    conforms('POST', '/api/v1/generate/', await api.post('/api/v1/generate/', { url: `${site.url}/quotes/` }));

    const page = await api.get('/api/v1/jobs/?limit=1');
    assert.equal(typeof page.body.next_cursor, 'string', 'two jobs, one a page: there is a next page');
    conforms('GET', '/api/v1/jobs/', page);
    conforms('GET', '/api/v1/jobs/', await api.get(`/api/v1/jobs/?limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`));
    conforms('GET', '/api/v1/jobs/', await api.get('/api/v1/jobs/?limit=1000'));
    conforms('GET', '/api/v1/jobs/', await api.get('/api/v1/jobs/?cursor=forged'));

    const results = await api.get(`/api/v1/jobs/${run.body.id}/results/`);
    assert.ok(results.body[0].row_count > 0);
    conforms('GET', '/api/v1/jobs/{id}/results/', results);
    conforms('GET', '/api/v1/jobs/{id}/results/', await api.get(`/api/v1/jobs/${run.body.id}/results/?format=json`));
    const csv = await api.get(`/api/v1/jobs/${run.body.id}/results/?format=csv`);
    assert.match(String(csv.body), /author/);
    conforms('GET', '/api/v1/jobs/{id}/results/', csv);
    conforms('GET', '/api/v1/jobs/{id}/results/', await api.get(`/api/v1/jobs/${run.body.id}/results/?format=pdf`));

    // Changes (issue 26): the first run had nothing to compare with; a second run of the config is compared with it.
    conforms('GET', '/api/v1/jobs/{id}/changes/', await api.get(`/api/v1/jobs/${run.body.id}/changes/`));
    const again = await api.post('/api/v1/run/', { config_id: created.body.id });
    const { job: second } = await api.waitForJob(again.body.id);
    assert.equal(second.changes.compared_with, run.body.id);
    conforms('GET', '/api/v1/jobs/{id}/status/', await api.get(`/api/v1/jobs/${again.body.id}/status/`));
    conforms('GET', '/api/v1/jobs/{id}/changes/', await api.get(`/api/v1/jobs/${again.body.id}/changes/?limit=5`));
    conforms('GET', '/api/v1/jobs/{id}/changes/', await api.get(`/api/v1/jobs/${again.body.id}/changes/?limit=0`));
    conforms('GET', '/api/v1/jobs/{id}/changes/', await api.get('/api/v1/jobs/00000000-0000-4000-8000-000000000000/changes/'));

    // Schedules and webhooks (issue 26): each route, a success and an error.
    const sched = await api.post('/api/v1/schedules/', { config_id: created.body.id, cron: '0 * * * *', timezone: 'Europe/Paris' });
    assert.equal(sched.status, 201, JSON.stringify(sched.body));
    conforms('POST', '/api/v1/schedules/', sched);
    conforms('POST', '/api/v1/schedules/', await api.post('/api/v1/schedules/', { config_id: created.body.id, cron: '*/5 * * * *' }));
    conforms('POST', '/api/v1/schedules/', await api.post('/api/v1/schedules/', { config_id: created.body.id, cron: '61 * * * *' }));
    conforms('GET', '/api/v1/schedules/', await api.get('/api/v1/schedules/'));
    conforms('GET', '/api/v1/schedules/{id}/', await api.get(`/api/v1/schedules/${sched.body.id}/`));
    conforms('GET', '/api/v1/schedules/{id}/', await api.get('/api/v1/schedules/00000000-0000-4000-8000-000000000000/'));
    conforms('PUT', '/api/v1/schedules/{id}/', await api.put(`/api/v1/schedules/${sched.body.id}/`, { enabled: false }));
    conforms('PUT', '/api/v1/schedules/{id}/', await api.put(`/api/v1/schedules/${sched.body.id}/`, {}));
    const hook = await api.post('/api/v1/webhooks/', { url: `${site.url}/hook`, events: ['job.completed'] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    conforms('POST', '/api/v1/webhooks/', hook);
    conforms('POST', '/api/v1/webhooks/', await api.post('/api/v1/webhooks/', { url: 'http://169.254.169.254/latest/', events: ['job.failed'] }));
    conforms('GET', '/api/v1/webhooks/', await api.get('/api/v1/webhooks/'));
    conforms('GET', '/api/v1/webhooks/{id}/', await api.get(`/api/v1/webhooks/${hook.body.id}/`));
    conforms('GET', '/api/v1/webhooks/{id}/deliveries/', await api.get(`/api/v1/webhooks/${hook.body.id}/deliveries/`));
    conforms('GET', '/api/v1/webhooks/{id}/deliveries/', await api.get(`/api/v1/webhooks/${hook.body.id}/deliveries/?limit=500`));
    conforms('DELETE', '/api/v1/webhooks/{id}/', await api.delete(`/api/v1/webhooks/${hook.body.id}/`));
    conforms('DELETE', '/api/v1/webhooks/{id}/', await api.delete(`/api/v1/webhooks/${hook.body.id}/`));
    conforms('DELETE', '/api/v1/schedules/{id}/', await api.delete(`/api/v1/schedules/${sched.body.id}/`));
    conforms('DELETE', '/api/v1/schedules/{id}/', await api.delete(`/api/v1/schedules/${sched.body.id}/`));

    const del = await api.delete(`/api/v1/configs/${created.body.id}/`);
    assert.equal(del.status, 204);
    conforms('DELETE', '/api/v1/configs/{id}/', del);
    conforms('DELETE', '/api/v1/configs/{id}/', await api.delete(`/api/v1/configs/${created.body.id}/`));
  });

  it('the tools answer their report schemas, and errors', async () => {
    const api = client(svc.url, account.api_key);
    const url = `${site.url}/quotes/`;
    for (const [tool, body] of [
      ['seo-analyzer', { url }], ['tech-detector', { url }], ['lead-generation', { url }], ['content-extractor', { url }], ['content-extractor', { url, format: 'markdown' }],
      ['broken-link-checker', { url, max_links: 5 }],
    ] as const) {
      const r = await api.post(`/api/v1/tools/${tool}/`, body);
      assert.equal(r.status, 200, `${tool}: ${JSON.stringify(r.body)}`);
      conforms('POST', `/api/v1/tools/${tool}/`, r);
    }
    // A closed port: the target cannot be reached (422), or the guard refuses it (400); both are documented.
    for (const tool of ['ssl-checker', 'dns-whois', 'screenshot']) {
      conforms('POST', `/api/v1/tools/${tool}/`, await api.post(`/api/v1/tools/${tool}/`, { url: 'http://127.0.0.1:1/', bogus: true }));
      conforms('POST', `/api/v1/tools/${tool}/`, await client(svc.url).post(`/api/v1/tools/${tool}/`, { url }));
    }
    // The MCP endpoint: an initialize request answered as an SSE stream; without a key, 401 as every keyed route.
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'openapi-test', version: '1' } } };
    const mcp = await api.post('/mcp', init, { accept: 'application/json, text/event-stream' });
    assert.equal(mcp.status, 200, String(mcp.body));
    assert.match(String(mcp.body), /"serverInfo":\{"name":"scrape-ai"/);
    conforms('POST', '/mcp', mcp);
    conforms('POST', '/mcp', await client(svc.url).post('/mcp', init, { accept: 'application/json, text/event-stream' }));
    const shot = await api.get('/api/v1/screenshots/not-an-id/');
    assert.equal(shot.status, 404);
    conforms('GET', '/api/v1/screenshots/{id}/', shot);
  });

  it('the check fails on answers that do not match (a missing field, a wrong tool report, an undocumented status)', () => {
    const json = new Headers({ 'content-type': 'application/json' });
    assert.throws(() => conforms('GET', '/api/v1/me/', { status: 200, body: { user: { id: 1 } }, headers: json }), /me\/ 200/);
    assert.throws(() => conforms('POST', '/api/v1/tools/seo-analyzer/', { status: 200, body: { url: 3 }, headers: json }), /seo-analyzer\/ 200/);
    assert.throws(() => conforms('GET', '/api/v1/me/', { status: 418, body: {}, headers: json }), /418 is documented/);
    assert.throws(() => conforms('GET', '/api/v1/me/', { status: 401, body: { error: 'x', code: 'quota_exceeded', details: [] }, headers: json }), /me\/ 401/);
  });

  it('every route was called', () => {
    for (const r of routes) assert.ok([...checked].some((c) => c.startsWith(`${r.method} ${r.path} `)), `${r.method} ${r.path}`);
  });
});
