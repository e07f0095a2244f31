/**
 * Plans per DATA_DIR over real HTTP and the real CLIs (docs/plans-and-metering.md, "One variant per
 * DATA_DIR"): the billing variant of a DATA_DIR's first start is kept, the accounts CLI uses it and refuses
 * plans it lacks, an account whose plan is not in the plans file gets 403 `plan_unknown` where the plan
 * matters, and the first-start account exists before the port accepts its first connection.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { client, createAccount, firstStartCredentials, runAccounts, startService, tempDataDir, type TestService } from '../helpers/service.ts';

function assertError(r: { status: number; body: any }, status: number, code: string): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code, JSON.stringify(r.body));
  assert.equal(typeof r.body.error, 'string');
  assert.ok(Array.isArray(r.body.details));
}

/** The first-start account's password, from the file bin/local.ts writes off a terminal. */
function firstPassword(svc: TestService): string {
  return firstStartCredentials(svc).password;
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves at the first accepted TCP connection to the port (tried every 2 ms). */
async function firstConnection(port: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`port ${port} accepted no connection in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('plans per DATA_DIR', () => {
  const services: TestService[] = [];
  after(async () => { for (const s of services) await s.stop(); });
  const start = async (env: NodeJS.ProcessEnv) => {
    const s = await startService(env);
    services.push(s);
    return s;
  };

  describe('a DATA_DIR first started with SAI_BILLING=scrapes', () => {
    const dataDir = tempDataDir();
    let svc: TestService;

    it('refuses a start with SAI_BILLING=credits (exit 2, saying how to go on); a start without SAI_BILLING keeps scrapes', async () => {
      const first = await start({ DATA_DIR: dataDir, SAI_BILLING: 'scrapes' });
      const password = firstPassword(first);
      await first.stop();
      await assert.rejects(startService({ DATA_DIR: dataDir, SAI_BILLING: 'credits' }), (err: Error) => {
        assert.match(err.message, /exited with 2/);
        assert.match(err.message, /first started with SAI_BILLING=scrapes/);
        assert.match(err.message, /Start without SAI_BILLING \(or with SAI_BILLING=scrapes\)/);
        return true;
      });
      svc = await start({ DATA_DIR: dataDir, SAI_BILLING: '' });
      assert.match(svc.output(), /billing: scrapes/);
      const login = await client(svc.url).post('/api/v1/auth/login/', { email: 'admin@localhost', password });
      assert.equal(login.status, 200, JSON.stringify(login.body));
      const me = await client(svc.url, login.body.api_key).get('/api/v1/me/');
      assert.equal(me.status, 200);
      assert.equal(me.body.subscription.monthly_scrapes_remaining, 100, 'the scrapes variant\'s pro plan');
      assert.equal(me.body.subscription.credits_remaining, undefined);
    });

    it('the accounts CLI refuses a plan the variant lacks (exit 2, listing the variant\'s plans), whatever SAI_BILLING says', async () => {
      for (const args of [
        ['create', '--email', 'g@example.com', '--password', 'long enough secret', '--plan', 'growth', '--json'],
        ['set-plan', '--email', 'admin@localhost', '--plan', 'growth'],
      ]) {
        const r = await runAccounts(dataDir, args, { SAI_BILLING: 'credits' });
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, /the scrapes variant has no plan "growth"; its plans: free, starter, pro/);
        assert.equal(r.stdout, '');
      }
      const list = await runAccounts(dataDir, ['list', '--json']);
      assert.deepEqual(JSON.parse(list.stdout).map((a: { email: string; plan: string }) => [a.email, a.plan]), [['admin@localhost', 'pro']], 'nothing created or changed');
    });

    it('the accounts CLI creates accounts of the DATA_DIR\'s variant although SAI_BILLING says credits', async () => {
      const r = await runAccounts(dataDir, ['create', '--email', 's@example.com', '--password', 'long enough secret', '--plan', 'starter', '--json'], { SAI_BILLING: 'credits' });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /SAI_BILLING=credits ignored: DATA_DIR .* is of the scrapes variant/);
      const created = JSON.parse(r.stdout) as { api_key: string; plan: string };
      assert.equal(created.plan, 'starter');
      const me = await client(svc.url, created.api_key).get('/api/v1/me/');
      assert.deepEqual(me.body.subscription, { plan: 'starter', yaml_generations_remaining: 20, monthly_scrapes_remaining: 20, has_api_access: true, has_server_execution: false });
    });
  });

  it('an account whose plan is not in the plans file: 403 plan_unknown where the plan is needed, the rest works', async () => {
    const dataDir = tempDataDir();
    const svc = await start({ DATA_DIR: dataDir });
    // The CLI sees a plans file with one more plan than the service: the account's plan is unknown to the service.
    const builtin = JSON.parse(fs.readFileSync(new URL('../../lambdas/core/plans.json', import.meta.url), 'utf8'));
    builtin.credits.plans.legacy = { label: 'Legacy', price_usd_month: 5, credits_per_month: 50, rate_limit_per_hour: 50, has_api_access: true, has_server_execution: true, priority_support: false };
    const plansFile = path.join(dataDir, 'plans-with-legacy.json');
    fs.writeFileSync(plansFile, JSON.stringify(builtin));
    const acc = await createAccount(dataDir, { plan: 'legacy' }, { SAI_PLANS_FILE: plansFile });
    const api = client(svc.url, acc.api_key);

    const me = await api.get('/api/v1/me/');
    assertError(me, 403, 'plan_unknown');
    assert.match(me.body.error, /"legacy"/);
    const run = await api.post('/api/v1/run/', { yaml_content: 'target: { url: "http://127.0.0.1:9/" }\nextract:\n  container: div\n  fields:\n    - { name: t, selector: p }\n' });
    assertError(run, 403, 'plan_unknown');

    const login = await client(svc.url).post('/api/v1/auth/login/', { email: acc.email, password: acc.password });
    assert.equal(login.status, 200);
    assert.equal(login.body.plan, 'legacy');
    assert.equal((await api.get('/api/v1/configs/')).status, 200);
    const jobs = await api.get('/api/v1/jobs/');
    assert.equal(jobs.status, 200);
    assert.equal(jobs.body.count, 0, 'the refused run made no job');
  });

  it('the first-start account exists before the port accepts its first connection', async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const starting = startService({ DATA_DIR: dataDir, PORT: String(port) });
    starting.then((s) => services.push(s), () => undefined);
    await firstConnection(port, 20_000);
    const db = new DatabaseSync(path.join(dataDir, 'scrape-ai.db'), { readOnly: true });
    try {
      const emails = (db.prepare('SELECT email FROM accounts').all() as Array<{ email: string }>).map((a) => a.email);
      assert.deepEqual(emails, ['admin@localhost']);
    } finally {
      db.close();
    }
    const svc = await starting;
    const login = await client(svc.url).post('/api/v1/auth/login/', { email: 'admin@localhost', password: firstPassword(svc) });
    assert.equal(login.status, 200);
  });
});
