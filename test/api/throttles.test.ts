/**
 * Throttles on refused calls over real HTTP (core/throttles.ts): a plan that cannot run on the server is
 * refused before its YAML is read; refused calls with a body count against a per-account limit, past
 * which the account's calls with a body get 429 while its reads and other accounts go on; failed logins
 * are throttled per email with Retry-After, and a correct login resets the count.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

const VALID = `target: { url: "http://127.0.0.1:9/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
`;

/** The large-mapping body of the hardening issue: 25,000 keys, about 175 KB. */
const LARGE_MAPPING = Array.from({ length: 25_000 }, (_, i) => `k${i}: 1\n`).join('');

describe('throttles over HTTP', () => {
  let svc: TestService;
  let pro: Awaited<ReturnType<typeof createAccount>>;
  let other: Awaited<ReturnType<typeof createAccount>>;
  let free: Awaited<ReturnType<typeof createAccount>>;

  before(async () => {
    svc = await startService({ SAI_BAD_REQUEST_LIMIT: '5', SAI_FAILED_LOGINS_PER_EMAIL: '3' });
    [pro, other, free] = await Promise.all([
      createAccount(svc.dataDir, { plan: 'pro' }),
      createAccount(svc.dataDir, { plan: 'pro' }),
      createAccount(svc.dataDir, { plan: 'free' }),
    ]);
  });
  after(async () => { await svc?.stop(); });

  it('a plan without server execution is refused before its YAML is read (plan_required, not invalid_config)', async () => {
    const r = await client(svc.url, free.api_key).post('/api/v1/run/', { yaml_content: LARGE_MAPPING });
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.equal(r.body.code, 'plan_required');
  });

  it('past 5 refused calls with a body, the account gets 429 with Retry-After; its reads and other accounts go on', async () => {
    const api = client(svc.url, pro.api_key);
    const refusals = [
      await api.post('/api/v1/configs/', { name: 'x', target_url: 'http://127.0.0.1:9/', yaml_content: LARGE_MAPPING }),
      await api.post('/api/v1/run/', { yaml_content: 'target: [' }),
      await api.post('/api/v1/run/', '{not json'),
      await api.post('/api/v1/configs/', { name: 'x' }),
      await api.post('/api/v1/run/', { yaml_content: VALID, config_id: '00000000-0000-4000-8000-000000000000' }),
    ];
    assert.deepEqual(refusals.map((r) => r.status), [400, 400, 400, 400, 400]);
    assert.equal(refusals[0]!.body.code, 'invalid_config');
    assert.match(refusals[0]!.body.error, /too long/);

    const limited = await api.post('/api/v1/configs/', { name: 'ok', target_url: 'http://127.0.0.1:9/', yaml_content: VALID });
    assert.equal(limited.status, 429, JSON.stringify(limited.body));
    assert.equal(limited.body.code, 'rate_limited');
    assert.equal(limited.body.details[0].reason, 'bad_requests');
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 900, `Retry-After ${retryAfter}`);
    assert.equal((await api.post('/api/v1/run/', { yaml_content: VALID })).status, 429);

    assert.equal((await api.get('/api/v1/me/')).status, 200, 'reads are not throttled');
    assert.equal((await api.get('/api/v1/configs/')).body.count, 0, 'nothing was stored');
    const created = await client(svc.url, other.api_key).post('/api/v1/configs/', { name: 'ok', target_url: 'http://127.0.0.1:9/', yaml_content: VALID });
    assert.equal(created.status, 201, 'another account is not throttled');
  });

  it('refused calls sent at once cannot all be parsed: 5 slots, 5 answers 400, the rest 429', async () => {
    const racer = await createAccount(svc.dataDir, { plan: 'pro' });
    const api = client(svc.url, racer.api_key);
    const answers = await Promise.all(Array.from({ length: 30 }, () => api.post('/api/v1/configs/', { name: 'x', target_url: 'http://127.0.0.1:9/', yaml_content: 'target: [' })));
    const statuses = answers.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 400).length, 5, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 429).length, 25);
  });

  it('failed logins: 3 for an email, then 429 with Retry-After even with the right password', async () => {
    const anon = client(svc.url);
    for (let i = 0; i < 2; i++) assert.equal((await anon.post('/api/v1/auth/login/', { email: other.email, password: 'wrong' })).status, 401);
    assert.equal((await anon.post('/api/v1/auth/login/', { email: other.email, password: other.password })).status, 200, 'a correct login resets the count');
    for (let i = 0; i < 3; i++) assert.equal((await anon.post('/api/v1/auth/login/', { email: other.email, password: 'wrong' })).status, 401);
    const r = await anon.post('/api/v1/auth/login/', { email: other.email, password: other.password });
    assert.equal(r.status, 429, JSON.stringify(r.body));
    assert.equal(r.body.code, 'rate_limited');
    assert.equal(r.body.details[0].reason, 'failed_logins');
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    assert.equal((await anon.post('/api/v1/auth/login/', { email: pro.email, password: pro.password })).status, 200, 'other emails log in');
  });
});
