/**
 * PUT /api/v1/configs/{id}/ and POST /api/v1/configs/validate/ (docs/api.md, beyond docs/spec.md: the dashboard's and
 * the extension's "save" and "check"), and the dashboard's static files at / and /assets/ (lambdas/dashboard/
 * static.ts), over HTTP to the local service. The dashboard folder is a temporary one given with
 * SAI_DASHBOARD_DIR, so these tests do not depend on the dashboard's build.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { DASHBOARD_CSP } from '../../lambdas/dashboard/static.ts';

const yamlOf = (fields: string[]) => [
  'version: "2.0"',
  'name: edit-test',
  'target:',
  '  url: "https://example.com/"',
  'extract:',
  '  type: list',
  '  container: ".item"',
  '  fields:',
  ...fields.map((f) => `    - { name: ${f}, selector: ".${f}", type: text }`),
  '',
].join('\n');

describe('config edit and validate, and the dashboard files', () => {
  let svc: TestService;
  let dashDir: string;
  let a: Awaited<ReturnType<typeof createAccount>>;
  let b: Awaited<ReturnType<typeof createAccount>>;

  before(async () => {
    dashDir = mkdtempSync(join(tmpdir(), 'sai-dash-'));
    mkdirSync(join(dashDir, 'assets'));
    writeFileSync(join(dashDir, 'index.html'), '<!doctype html><title>scrape-ai</title><script src="/assets/app-ABCDEF12.js"></script>');
    writeFileSync(join(dashDir, 'assets', 'app-ABCDEF12.js'), 'console.log(1)');
    writeFileSync(join(dashDir, 'assets', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(dashDir, 'secret.txt'), 'not an asset');
    svc = await startService({ SAI_DASHBOARD_DIR: dashDir });
    a = await createAccount(svc.dataDir, { email: 'edit-a@example.com', plan: 'pro' });
    b = await createAccount(svc.dataDir, { email: 'edit-b@example.com', plan: 'pro' });
  });
  after(async () => {
    await svc?.stop();
    rmSync(dashDir, { recursive: true, force: true });
  });

  it('validate: the field names in order for a valid config; 400 invalid_config with line and column otherwise, storing nothing', async () => {
    const api = client(svc.url, a.api_key);
    const ok = await api.post('/api/v1/configs/validate/', { yaml_content: yamlOf(['title', 'price', 'author']) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(ok.body, { valid: true, fields: ['title', 'price', 'author'] });

    // Line 7 (1-based) gets a key the schema does not know.
    const lines = yamlOf(['title']).split('\n');
    lines.splice(6, 0, '  colour: red');
    const bad = await api.post('/api/v1/configs/validate/', { yaml_content: lines.join('\n') });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_config');
    const problem = bad.body.details.find((d: { path: string }) => d.path.includes('colour'));
    assert.ok(problem, JSON.stringify(bad.body.details));
    assert.equal(problem.line, 7);
    assert.equal(typeof problem.column, 'number');

    const broken = await api.post('/api/v1/configs/validate/', { yaml_content: 'version: "2.0"\nname: [unclosed\n' });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.code, 'invalid_config');
    assert.ok(broken.body.details[0].line >= 2);

    assert.equal((await api.post('/api/v1/configs/validate/', { yaml_content: yamlOf(['x']), name: 'extra' })).status, 400, 'closed body');
    assert.equal((await api.post('/api/v1/configs/validate/', {})).body.code, 'invalid_request');
    assert.equal((await client(svc.url).post('/api/v1/configs/validate/', { yaml_content: yamlOf(['x']) })).status, 401);
    assert.deepEqual((await api.get('/api/v1/configs/')).body, { count: 0, results: [] }, 'validate stores nothing');
  });

  it('PUT replaces the YAML only; a bad YAML, another account or an unknown id change nothing', async () => {
    const api = client(svc.url, a.api_key);
    const created = await api.post('/api/v1/configs/', { name: 'shop', target_url: 'https://example.com/', yaml_content: yamlOf(['title']), prompt: 'titles' });
    assert.equal(created.status, 201);
    const id = created.body.id as string;

    const put = await api.put(`/api/v1/configs/${id}/`, { yaml_content: yamlOf(['title', 'price']) });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.yaml_content, yamlOf(['title', 'price']));
    const read = await api.get(`/api/v1/configs/${id}/`);
    assert.deepEqual(read.body, { ...created.body, yaml_content: yamlOf(['title', 'price']) }, 'name, target_url, prompt, created_at kept');

    const bad = await api.put(`/api/v1/configs/${id}/`, { yaml_content: 'version: "2.0"\nname: x\n' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_config');
    assert.equal((await api.get(`/api/v1/configs/${id}/`)).body.yaml_content, yamlOf(['title', 'price']), 'an invalid YAML loses nothing');

    const other = await client(svc.url, b.api_key).put(`/api/v1/configs/${id}/`, { yaml_content: yamlOf(['stolen']) });
    assert.equal(other.status, 404);
    assert.equal((await api.get(`/api/v1/configs/${id}/`)).body.yaml_content, yamlOf(['title', 'price']), "another account's PUT changes nothing");

    assert.equal((await api.put('/api/v1/configs/00000000-0000-4000-8000-000000000000/', { yaml_content: yamlOf(['x']) })).status, 404);
    assert.equal((await api.put('/api/v1/configs/not-a-uuid/', { yaml_content: yamlOf(['x']) })).status, 404);
    const renamed = await api.put(`/api/v1/configs/${id}/`, { yaml_content: yamlOf(['x']), name: 'renamed' });
    assert.equal(renamed.status, 400, 'only yaml_content may be sent');
    assert.equal(renamed.body.code, 'invalid_request');
    assert.equal((await client(svc.url).put(`/api/v1/configs/${id}/`, { yaml_content: yamlOf(['x']) })).status, 401);

    const preflight = await fetch(`${svc.url}/api/v1/configs/${id}/`, { method: 'OPTIONS' });
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /\bPUT\b/);
  });

  it('the dashboard: / and /assets/ with the CSP and the right caching; nothing else of the folder; other methods 405', async () => {
    const index = await fetch(`${svc.url}/`);
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(index.headers.get('content-security-policy'), DASHBOARD_CSP);
    assert.match(DASHBOARD_CSP, /script-src 'self'(;|$)/);
    assert.doesNotMatch(DASHBOARD_CSP, /unsafe-inline|unsafe-eval|\*/);
    assert.equal(index.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(index.headers.get('cache-control'), 'no-cache');
    assert.match(await index.text(), /<title>scrape-ai<\/title>/);

    const js = await fetch(`${svc.url}/assets/app-ABCDEF12.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(js.headers.get('cache-control') ?? '', /immutable/);
    assert.equal(await js.text(), 'console.log(1)');
    const svg = await fetch(`${svc.url}/assets/logo.svg`);
    assert.equal(svg.headers.get('content-type'), 'image/svg+xml');
    assert.equal(svg.headers.get('cache-control'), 'no-cache', 'a name without a hash is revalidated');

    const head = await fetch(`${svc.url}/`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');

    for (const path of ['/assets/missing.js', '/assets/..%2fsecret.txt', '/assets/../secret.txt', '/assets/.hidden', '/assets/', '/assets/a/b.js', '/secret.txt']) {
      const r = await fetch(`${svc.url}${path}`);
      assert.equal(r.status, 404, path);
      assert.equal(((await r.json()) as { code: string }).code, 'not_found', path);
    }
    const post = await fetch(`${svc.url}/`, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  it('a dashboard that was never built: 404 saying how to build it, and the API still answers', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'sai-dash-empty-'));
    const other = await startService({ SAI_DASHBOARD_DIR: empty });
    try {
      const r = await fetch(`${other.url}/`);
      assert.equal(r.status, 404);
      assert.match(((await r.json()) as { error: string }).error, /npm run build:dashboard/);
      assert.equal((await fetch(`${other.url}/api/v1/openapi.json`)).status, 200);
    } finally {
      await other.stop();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
