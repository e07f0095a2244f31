/**
 * Every error case of the API over real HTTP: authentication, bodies, configs, runs, plans, metering.
 * Each answer is a 4xx with `{error, code, details}` and nothing is stored or charged by a refused call.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { client, createAccount, startService, tempDataDir, type TestService } from '../helpers/service.ts';

function assertError(r: { status: number; body: any }, status: number, code: string): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code, JSON.stringify(r.body));
  assert.equal(typeof r.body.error, 'string');
  assert.ok(r.body.error.length > 10, 'a human message');
  assert.ok(Array.isArray(r.body.details));
}

const simple = (url: string) => `target: { url: "${url}" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
`;

describe('API errors', () => {
  let site: FixtureSite;
  let svc: TestService;
  let pro: Awaited<ReturnType<typeof createAccount>>;
  let free: Awaited<ReturnType<typeof createAccount>>;
  let other: Awaited<ReturnType<typeof createAccount>>;

  before(async () => {
    site = await startFixtureSite();
    svc = await startService();
    [pro, free, other] = await Promise.all([
      createAccount(svc.dataDir, { plan: 'pro' }),
      createAccount(svc.dataDir, { plan: 'free' }),
      createAccount(svc.dataDir, { plan: 'pro' }),
    ]);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  describe('authentication', () => {
    it('401 without a key, with an unknown key, a malformed header, and a key of the wrong shape', async () => {
      const anon = client(svc.url);
      assertError(await anon.get('/api/v1/me/'), 401, 'unauthorized');
      assertError(await client(svc.url, 'sai_' + 'x'.repeat(40)).get('/api/v1/me/'), 401, 'unauthorized');
      assertError(await anon.get('/api/v1/me/', { authorization: `Token ${pro.api_key}` }), 401, 'unauthorized');
      assertError(await anon.get('/api/v1/me/', { authorization: `Bearer ${pro.api_key.slice(0, -1)}` }), 401, 'unauthorized');
      assertError(await client(svc.url, 'not-a-key').get('/api/v1/configs/'), 401, 'unauthorized');
      assert.equal((await anon.get('/api/v1/me/', { authorization: `bearer ${pro.api_key}` })).status, 200, 'the scheme is case-insensitive');
    });

    it('login: 401 {error} for a wrong password or unknown email, 400 for a bad body', async () => {
      const anon = client(svc.url);
      const wrong = await anon.post('/api/v1/auth/login/', { email: pro.email, password: 'wrong password' });
      assertError(wrong, 401, 'invalid_credentials');
      const unknown = await anon.post('/api/v1/auth/login/', { email: 'nobody@example.com', password: 'whatever1' });
      assertError(unknown, 401, 'invalid_credentials');
      assert.equal(wrong.body.error, unknown.body.error, 'the answer does not tell which part was wrong');
      assertError(await anon.post('/api/v1/auth/login/', { email: pro.email }), 400, 'invalid_request');
      assertError(await anon.post('/api/v1/auth/login/', '{"email": '), 400, 'invalid_json');
      const ok = await anon.post('/api/v1/auth/login/', { email: pro.email.toUpperCase(), password: pro.password });
      assert.equal(ok.status, 200, 'emails are case-insensitive');
    });
  });

  describe('routing and bodies', () => {
    it('404 for an unknown route, 405 for a wrong method, 413 for a huge body', async () => {
      const api = client(svc.url, pro.api_key);
      assertError(await api.get('/api/v1/nothing/'), 404, 'not_found');
      const m = await api.call('PUT', '/api/v1/configs/');
      assertError(m, 405, 'method_not_allowed');
      assert.equal(m.headers.get('allow'), 'GET, POST');
      const huge = await api.post('/api/v1/configs/', { name: 'x', target_url: 'https://a.example/', yaml_content: 'x'.repeat(1_100_000) });
      assertError(huge, 413, 'payload_too_large');
      assert.equal((await api.get('/api/v1/configs')).status, 200, 'the trailing slash is optional, as on API Gateway');
    });

    it('query parameters and headers named after Object.prototype members are plain names', async () => {
      const api = client(svc.url, pro.api_key);
      const query = '?constructor=1&__proto__=2&toString=3&hasOwnProperty=4&valueOf=5';
      const jobs = await api.get(`/api/v1/jobs/${query}`, { constructor: 'x', 'hasOwnProperty': 'y' });
      assert.equal(jobs.status, 200, JSON.stringify(jobs.body));
      assert.equal(typeof jobs.body.count, 'number');
      const me = await api.get(`/api/v1/me/${query}`);
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.user.email, pro.email);
      assertError(await api.get(`/api/v1/jobs/${query}&limit=0`), 400, 'invalid_request');
    });

    it('explains a JSON body sent with a form content type', async () => {
      const api = client(svc.url, pro.api_key);
      const r = await api.post('/api/v1/configs/', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' });
      assertError(r, 400, 'invalid_json');
      assert.match(r.body.error, /Content-Type: application\/json/);
    });
  });

  describe('configs', () => {
    it('400 invalid_config with the path, line and column of each problem; nothing stored', async () => {
      const api = client(svc.url, pro.api_key);
      const yaml = `target:
  url: "${site.url}/quotes/"
extract:
  container: div.quote
  fields:
    - name: text
      selector: span.text
      transform: [strip, "slice:a:b"]
    - name: author
      type: attribut
`;
      const r = await api.post('/api/v1/configs/', { name: 'bad', target_url: `${site.url}/quotes/`, yaml_content: yaml });
      assertError(r, 400, 'invalid_config');
      const enumProblem = r.body.details.find((d: { path: string }) => d.path === 'extract.fields[1].type');
      assert.ok(enumProblem, JSON.stringify(r.body.details));
      assert.equal(enumProblem.line, 10);
      assert.equal(enumProblem.column, 7);
      assert.match(enumProblem.message, /must be one of/);
      const syntax = await api.post('/api/v1/configs/', { name: 'bad', target_url: `${site.url}/`, yaml_content: 'target: {url: "x"\nextract: [' });
      assertError(syntax, 400, 'invalid_config');
      assert.equal(typeof syntax.body.details[0].line, 'number');
      const transform = await api.post('/api/v1/configs/', { name: 'bad', target_url: `${site.url}/`, yaml_content: yaml.replace('attribut', 'text') });
      assertError(transform, 400, 'invalid_config');
      assert.equal(transform.body.details[0].path, 'extract.fields[0].transform[1]');
      assert.equal(transform.body.details[0].line, 8);
      assert.equal((await api.get('/api/v1/configs/')).body.count, 0, 'nothing was stored');
    });

    it('400 for missing or bad fields', async () => {
      const api = client(svc.url, pro.api_key);
      const r = await api.post('/api/v1/configs/', { name: '', target_url: 'ftp://x', yaml_content: 1 });
      assertError(r, 400, 'invalid_request');
      const paths = r.body.details.map((d: { path: string }) => d.path).sort();
      assert.deepEqual(paths, ['name', 'target_url', 'yaml_content']);
      assertError(await api.post('/api/v1/configs/', { name: 'x', target_url: `${site.url}/`, yaml_content: simple(site.url), extra: 1 }), 400, 'invalid_request');
    });

    it('404 for an absent config, a malformed id, and another account\'s config (read, delete, run)', async () => {
      const mine = client(svc.url, pro.api_key);
      const theirs = client(svc.url, other.api_key);
      const c = await theirs.post('/api/v1/configs/', { name: 'theirs', target_url: `${site.url}/quotes/`, yaml_content: simple(`${site.url}/quotes/`) });
      assert.equal(c.status, 201);
      assertError(await mine.get(`/api/v1/configs/${c.body.id}/`), 404, 'not_found');
      assertError(await mine.delete(`/api/v1/configs/${c.body.id}/`), 404, 'not_found');
      assertError(await mine.post('/api/v1/run/', { config_id: c.body.id }), 404, 'not_found');
      assertError(await mine.get('/api/v1/configs/00000000-0000-4000-8000-000000000000/'), 404, 'not_found');
      assertError(await mine.get('/api/v1/configs/not-a-uuid/'), 404, 'not_found');
      assert.equal((await theirs.get(`/api/v1/configs/${c.body.id}/`)).status, 200, 'the owner still has it');
      assert.equal((await mine.get('/api/v1/configs/')).body.results.some((x: { id: string }) => x.id === c.body.id), false);
    });
  });

  describe('run', () => {
    it('400 with both or neither of config_id and yaml_content', async () => {
      const api = client(svc.url, pro.api_key);
      assertError(await api.post('/api/v1/run/', {}), 400, 'invalid_request');
      assertError(await api.post('/api/v1/run/', { config_id: '00000000-0000-4000-8000-000000000000', yaml_content: simple(site.url) }), 400, 'invalid_request');
      assertError(await api.post('/api/v1/run/', { config_id: 'nope' }), 400, 'invalid_request');
    });

    it('400 invalid_config, and browser_required for browser features with engine lightweight; nothing charged', async () => {
      const api = client(svc.url, pro.api_key);
      const before = (await api.get('/api/v1/me/')).body.subscription.credits_remaining;
      const bad = await api.post('/api/v1/run/', { yaml_content: 'target: {}\nextract: {container: x}' });
      assertError(bad, 400, 'invalid_config');
      const light = simple(site.url).replace('target: {', 'target: { engine: lightweight,');
      const browserConfigs = [
        `${light}    - { name: x, type: eval, script: "el.textContent" }\n`,
        `${light}actions:\n  - { type: click, selector: button.more }\n`,
        `${light}pagination: { type: scroll_infinite, max_pages: 3 }\n`,
      ];
      for (const yaml of browserConfigs) {
        const r = await api.post('/api/v1/run/', { yaml_content: yaml });
        assertError(r, 400, 'browser_required');
        assert.ok(r.body.details.length >= 1 && typeof r.body.details[0].path === 'string', JSON.stringify(r.body));
      }
      assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, before);
      assert.equal((await api.get('/api/v1/jobs/')).body.count, 0, 'no job was created');
    });

    it('400 target_forbidden for metadata, private and non-http targets, in any notation', async () => {
      const api = client(svc.url, pro.api_key);
      for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://0xa9fea9fe/', 'http://[::ffff:169.254.169.254]/', 'http://192.168.0.1/', 'file:///etc/passwd', 'ftp://example.com/x']) {
        const r = await api.post('/api/v1/run/', { yaml_content: simple(url) });
        if (url.startsWith('http')) assertError(r, 400, 'target_forbidden');
        else assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
      }
    });

    it('a run that fails at the target ends failed with the reason', async () => {
      const api = client(svc.url, pro.api_key);
      const r = await api.post('/api/v1/run/', { yaml_content: simple(`${site.url}/status/404/`) });
      assert.equal(r.status, 202);
      const { job } = await api.waitForJob(r.body.id);
      assert.equal(job.status, 'failed');
      assert.match(job.status_message, /target_failed: .*404/);
      assert.ok(job.completed_at);
      const results = await api.get(`/api/v1/jobs/${r.body.id}/results/`);
      assert.equal(results.status, 200);
      assert.deepEqual(results.body, []);
    });

    it('409 job_not_finished for results of a running job; 404 for another account\'s job', async () => {
      const api = client(svc.url, pro.api_key);
      const r = await api.post('/api/v1/run/', { yaml_content: simple(`${site.url}/slow/1500/quotes/`) });
      assert.equal(r.status, 202);
      assertError(await api.get(`/api/v1/jobs/${r.body.id}/results/`), 409, 'job_not_finished');
      const theirs = client(svc.url, other.api_key);
      assertError(await theirs.get(`/api/v1/jobs/${r.body.id}/status/`), 404, 'not_found');
      assertError(await theirs.get(`/api/v1/jobs/${r.body.id}/results/`), 404, 'not_found');
      assert.equal((await theirs.get('/api/v1/jobs/')).body.results.some((j: { id: string }) => j.id === r.body.id), false);
      const { job } = await api.waitForJob(r.body.id);
      assert.equal(job.status, 'completed');
    });

    it('403 plan_required for a plan without server execution, nothing charged', async () => {
      const api = client(svc.url, free.api_key);
      const r = await api.post('/api/v1/run/', { yaml_content: simple(`${site.url}/quotes/`) });
      assertError(r, 403, 'plan_required');
      assert.match(r.body.error, /server execution/);
      assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, 5);
    });
  });

  describe('job list', () => {
    it('pages with limit and cursor; bad values are 400', async () => {
      const api = client(svc.url, pro.api_key);
      const all = await api.get('/api/v1/jobs/?limit=100');
      assert.ok(all.body.count >= 2, `count ${all.body.count}`);
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { results: Array<{ id: string }>; next_cursor: string | null } } = await api.get(`/api/v1/jobs/?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        ids.push(...page.body.results.map((j) => j.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual(ids, all.body.results.map((j: { id: string }) => j.id));
      const times = all.body.results.map((j: { created_at: string }) => j.created_at);
      assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
      assertError(await api.get('/api/v1/jobs/?limit=0'), 400, 'invalid_request');
      assertError(await api.get('/api/v1/jobs/?limit=abc'), 400, 'invalid_request');
      assertError(await api.get('/api/v1/jobs/?cursor=garbage'), 400, 'invalid_cursor');
    });
  });
});

describe('metering', () => {
  let site: FixtureSite;
  let svc: TestService;
  const dataDir = tempDataDir();
  const plansFile = path.join(dataDir, 'plans.json');

  before(async () => {
    const builtin = JSON.parse(fs.readFileSync(new URL('../../lambdas/core/plans.json', import.meta.url), 'utf8'));
    builtin.credits.plans.five = { label: 'Five', price_usd_month: 0, credits_per_month: 5, rate_limit_per_hour: 1000, has_api_access: true, has_server_execution: true, priority_support: false };
    builtin.credits.plans.slow = { label: 'Slow', price_usd_month: 0, credits_per_month: 100, rate_limit_per_hour: 3, has_api_access: true, has_server_execution: true, priority_support: false };
    fs.writeFileSync(plansFile, JSON.stringify(builtin));
    site = await startFixtureSite();
    svc = await startService({ DATA_DIR: dataDir, SAI_PLANS_FILE: plansFile });
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('20 parallel runs against 5 remaining credits: exactly 5 accepted, 15 quota_exceeded', async () => {
    const acc = await createAccount(dataDir, { plan: 'five' }, { SAI_PLANS_FILE: plansFile });
    const api = client(svc.url, acc.api_key);
    const yaml = simple(`${site.url}/quotes/`);
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.post('/api/v1/run/', { yaml_content: yaml })));
    const accepted = answers.filter((a) => a.status === 202);
    const refused = answers.filter((a) => a.status === 429);
    assert.equal(accepted.length, 5);
    assert.equal(refused.length, 15);
    for (const r of refused) assertError(r, 429, 'quota_exceeded');
    assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, 0);
    assert.equal((await api.get('/api/v1/jobs/')).body.count, 5, 'one job per accepted run, none for refused ones');
  });

  it('the hourly rate limit: 429 rate_limited with Retry-After once the plan\'s calls are spent', async () => {
    const acc = await createAccount(dataDir, { plan: 'slow' }, { SAI_PLANS_FILE: plansFile });
    const api = client(svc.url, acc.api_key);
    const yaml = simple(`${site.url}/quotes/`);
    for (let i = 0; i < 3; i++) assert.equal((await api.post('/api/v1/run/', { yaml_content: yaml })).status, 202);
    const r = await api.post('/api/v1/run/', { yaml_content: yaml });
    assertError(r, 429, 'rate_limited');
    const retry = Number(r.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 3600, `Retry-After ${retry}`);
    assert.equal(r.body.details[0].retry_after_seconds, retry);
    // Reads and polls are not counted.
    for (let i = 0; i < 5; i++) assert.equal((await api.get('/api/v1/jobs/')).status, 200);
    assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, 97, 'a rate-limited call is not charged');
  });
});

describe('plans, variant A (SAI_BILLING=scrapes)', () => {
  let site: FixtureSite;
  let svc: TestService;
  before(async () => {
    site = await startFixtureSite();
    svc = await startService({ SAI_BILLING: 'scrapes' });
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('/me returns the scrapes subscription and a run spends a scrape', async () => {
    const acc = await createAccount(svc.dataDir, { plan: 'pro' }, { SAI_BILLING: 'scrapes' });
    const api = client(svc.url, acc.api_key);
    const me = await api.get('/api/v1/me/');
    assert.deepEqual(me.body.subscription, { plan: 'pro', yaml_generations_remaining: 100, monthly_scrapes_remaining: 100, has_api_access: true, has_server_execution: true });
    assert.equal((await api.post('/api/v1/run/', { yaml_content: simple(`${site.url}/quotes/`) })).status, 202);
    assert.equal((await api.get('/api/v1/me/')).body.subscription.monthly_scrapes_remaining, 99);
  });

  it('starter has no server execution in variant A: 403', async () => {
    const acc = await createAccount(svc.dataDir, { plan: 'starter' }, { SAI_BILLING: 'scrapes' });
    assertError(await client(svc.url, acc.api_key).post('/api/v1/run/', { yaml_content: simple(`${site.url}/quotes/`) }), 403, 'plan_required');
  });
});
