/**
 * Monitoring over HTTP on the local service (issue 26): schedules fired by the service's own loop with its clock moved
 * forward (SAI_CLOCK_FILE: no test waits for a real minute), and signed webhook deliveries to a receiver on loopback.
 *
 * - A schedule fires a metered run job; a restart (SIGKILL) neither fires that slot again nor loses the next one, and
 *   after downtime a missed schedule fires once, for its latest slot.
 * - A quota-exhausted account's schedule pauses with its reason; enabling it resumes it.
 * - A receiver verifies every signature with the `standardwebhooks` library; it gets job.completed, job.changed for a
 *   run whose rows changed, job.failed for a failed run; a 500 gets a retry (same webhook-id), a 2xx ends it.
 * - A private webhook URL is refused at creation, and at delivery when the guard no longer allows its address.
 * - Another account's schedules, webhooks and deliveries are 404.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { client, createAccount, startService, tempDataDir, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/until.ts';

/** {@link until} where null means "not yet". */
const waitFor = <T>(what: string, check: () => T | null | Promise<T | null>, timeoutMs: number): Promise<T> =>
  until(what, async () => (await check()) ?? undefined, timeoutMs);

/** The shop's products: tests change them between runs. */
let products: Array<{ name: string; price: string }> = [{ name: 'Alpha', price: '$1' }, { name: 'Beta', price: '$2' }];

function shop(): string {
  return `<!doctype html><html><body><ul>${products.map((p) => `<li class="p"><b>${p.name}</b> <i>${p.price}</i></li>`).join('')}</ul></body></html>`;
}

const yaml = (base: string) => `target: { url: "${base}/shop/", engine: lightweight }
extract:
  container: li.p
  fields:
    - { name: name, selector: b }
    - { name: price, selector: i }
output: { deduplicate_fields: [name] }
`;

/** A site on `host` serving the shop. */
async function startShop(host: string): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(shop());
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, base: `http://${host}:${(server.address() as AddressInfo).port}` };
}

/** Receivers to close after the tests (a failed test leaves its own open). */
const receivers: http.Server[] = [];

/** A webhook receiver on 127.0.0.1 that records every request; `answer` picks the status of each. */
async function startReceiver(answer: (body: any, n: number) => number = () => 204) {
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string; status: number }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      let parsed: unknown = null;
      try { parsed = JSON.parse(body); } catch { /* recorded as is */ }
      const status = answer(parsed, received.length);
      received.push({ headers: req.headers, body, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receivers.push(server);
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

describe('monitoring: schedules and webhooks over HTTP (issue 26)', () => {
  let site: Awaited<ReturnType<typeof startShop>>;
  let clockFile: string;
  const services: TestService[] = [];

  /** Moves the service's clock so that it reads `iso` now (plus the real time that passes). */
  function setClock(iso: string): void {
    fs.writeFileSync(clockFile, String(Date.parse(iso) - Date.now()));
  }

  async function start(env: NodeJS.ProcessEnv = {}): Promise<TestService> {
    const svc = await startService({ SAI_CLOCK_FILE: clockFile, ...env });
    services.push(svc);
    return svc;
  }

  before(async () => {
    site = await startShop('127.0.0.2');
    clockFile = path.join(tempDataDir(), 'clock-offset');
  });
  after(async () => {
    for (const s of services) await s.stop();
    await new Promise((r) => site.server.close(r));
    for (const r of receivers) if (r.listening) r.closeAllConnections(), r.close();
  });

  it('a schedule fires a metered run job; a restart neither fires the slot again nor loses the next; a missed schedule fires once', async () => {
    setClock('2030-01-10T09:59:50.000Z');
    const dataDir = tempDataDir();
    let svc = await start({ DATA_DIR: dataDir });
    const account = await createAccount(dataDir, { plan: 'pro' });
    let api = client(svc.url, account.api_key);
    const config = await api.post('/api/v1/configs/', { name: 'shop', target_url: `${site.base}/shop/`, yaml_content: yaml(site.base) });
    assert.equal(config.status, 201, JSON.stringify(config.body));
    // Ten seconds before the hour again: starting the service and making the account may take longer than that.
    setClock('2030-01-10T09:59:50.000Z');
    const created = await api.post('/api/v1/schedules/', { config_id: config.body.id, cron: '0 * * * *' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.next_run_at, '2030-01-10T10:00:00.000Z');
    const creditsBefore = (await api.get('/api/v1/me/')).body.subscription.credits_remaining;

    setClock('2030-01-10T10:00:01.000Z');
    const fired = await waitFor('the first firing', async () => {
      const s = (await api.get(`/api/v1/schedules/${created.body.id}/`)).body;
      return s.recent_jobs.length === 1 ? s : null;
    }, 20_000);
    assert.equal(fired.fired_count, 1);
    assert.equal(fired.recent_jobs[0].scheduled_for, '2030-01-10T10:00:00.000Z');
    assert.equal(fired.next_run_at, '2030-01-10T11:00:00.000Z');
    const { job } = await api.waitForJob(fired.recent_jobs[0].job_id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.items_found, 2);
    assert.equal((await api.get('/api/v1/me/')).body.subscription.credits_remaining, creditsBefore - 1, 'metered as POST /run/');

    // A crash and a restart within the same slot: nothing fires again.
    await svc.kill();
    svc = await start({ DATA_DIR: dataDir });
    api = client(svc.url, account.api_key);
    await new Promise((r) => setTimeout(r, 2500)); // more than two ticks of the loop
    const afterRestart = (await api.get(`/api/v1/schedules/${created.body.id}/`)).body;
    assert.equal(afterRestart.fired_count, 1);
    assert.equal((await api.get('/api/v1/jobs/')).body.results.length, 1);

    // Down across three slots: on start it fires once, for the latest.
    await svc.stop();
    setClock('2030-01-10T13:20:00.000Z');
    svc = await start({ DATA_DIR: dataDir });
    api = client(svc.url, account.api_key);
    const caughtUp = await waitFor('the missed firing', async () => {
      const s = (await api.get(`/api/v1/schedules/${created.body.id}/`)).body;
      return s.fired_count === 2 ? s : null;
    }, 20_000);
    assert.equal(caughtUp.recent_jobs[0].scheduled_for, '2030-01-10T13:00:00.000Z');
    await api.waitForJob(caughtUp.recent_jobs[0].job_id);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await api.get(`/api/v1/schedules/${created.body.id}/`)).body.fired_count, 2, 'once, not once per missed slot');
    assert.equal((await api.get('/api/v1/jobs/')).body.results.length, 2);

    // Another account sees none of it.
    const other = client(svc.url, (await createAccount(dataDir, { plan: 'pro' })).api_key);
    assert.equal((await other.get(`/api/v1/schedules/${created.body.id}/`)).status, 404);
    assert.equal((await other.put(`/api/v1/schedules/${created.body.id}/`, { enabled: false })).status, 404);
    assert.equal((await other.delete(`/api/v1/schedules/${created.body.id}/`)).status, 404);
    assert.deepEqual((await other.get('/api/v1/schedules/')).body, { schedules: [] });
    assert.equal((await other.get(`/api/v1/jobs/${caughtUp.recent_jobs[0].job_id}/changes/`)).status, 404);
    assert.equal((await api.delete(`/api/v1/schedules/${created.body.id}/`)).status, 204);
    await svc.stop();
  });

  it('a quota-exhausted account: its schedule pauses with the reason; enabling it again resumes it', async () => {
    setClock('2030-02-10T09:59:50.000Z');
    const dataDir = tempDataDir();
    const plans = JSON.parse(fs.readFileSync(new URL('../../lambdas/core/plans.json', import.meta.url), 'utf8'));
    plans.credits.plans.pro.credits_per_month = 1;
    const plansFile = path.join(dataDir, 'plans-one-credit.json');
    fs.writeFileSync(plansFile, JSON.stringify(plans));
    const svc = await start({ DATA_DIR: dataDir, SAI_PLANS_FILE: plansFile });
    const account = await createAccount(dataDir, { plan: 'pro' }, { SAI_PLANS_FILE: plansFile });
    const api = client(svc.url, account.api_key);
    const config = await api.post('/api/v1/configs/', { name: 'shop', target_url: `${site.base}/shop/`, yaml_content: yaml(site.base) });
    const run = await api.post('/api/v1/run/', { config_id: config.body.id });
    assert.equal(run.status, 202, 'the month\'s one credit is spent by a run');
    // Ten seconds before the hour again: starting the service and making the account may take longer than that
    // (then the schedule, made past 10:00, would first fire at 11:00 and never meet the pause).
    setClock('2030-02-10T09:59:50.000Z');
    const created = await api.post('/api/v1/schedules/', { config_id: config.body.id, cron: '0 * * * *' });
    assert.equal(created.status, 201);
    setClock('2030-02-10T10:00:01.000Z');
    const paused = await waitFor('the pause', async () => {
      const s = (await api.get(`/api/v1/schedules/${created.body.id}/`)).body;
      return s.paused ? s : null;
    }, 20_000);
    assert.equal(paused.enabled, false);
    assert.equal(paused.next_run_at, null);
    assert.equal(paused.paused.code, 'quota_exceeded');
    assert.match(paused.paused.message, /quota/i);
    assert.equal(paused.fired_count, 0);
    const resumed = await api.put(`/api/v1/schedules/${created.body.id}/`, { enabled: true });
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.paused, null);
    assert.equal(resumed.body.enabled, true);
    assert.equal(resumed.body.next_run_at, '2030-02-10T11:00:00.000Z');
    await svc.stop();
  });

  it('a rule whose check takes a second of CPU (every time in a DST gap) is checked off the HTTP thread: another request is answered first; it is refused', async () => {
    const dataDir = tempDataDir();
    const svc = await start({ DATA_DIR: dataDir });
    const api = client(svc.url, (await createAccount(dataDir, { plan: 'pro' })).api_key);
    const config = await api.post('/api/v1/configs/', { name: 'shop', target_url: `${site.base}/shop/`, yaml_content: yaml(site.base) });
    const order: string[] = [];
    const slow = api.post('/api/v1/schedules/', { config_id: config.body.id, cron: '* 2 * 3 0#L', timezone: 'Europe/Paris' }).then((r) => { order.push('schedule'); return r; });
    await new Promise((r) => setTimeout(r, 50));
    const me = await api.get('/api/v1/me/');
    order.push('me');
    const refused = await slow;
    assert.equal(me.status, 200);
    assert.deepEqual(order, ['me', 'schedule']);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'invalid_request');
    // Refused as never firing; on a loaded machine the check may instead pass its 5 s time-out and be refused for that.
    assert.match(refused.body.error, /never fires.*DST gap of Europe\/Paris|took longer than 5000 ms to check/);
    assert.equal(refused.body.details[0].path, 'cron');
    await svc.stop();
  });

  it('webhooks: every delivery verifies with the library; completed, changed and failed events; a 500 is retried under the same webhook-id, a 2xx ends it; another account sees nothing', async () => {
    // Signatures carry the service's time, and receivers refuse one more than 5 minutes off theirs: real time here.
    fs.writeFileSync(clockFile, '0');
    const dataDir = tempDataDir();
    const svc = await start({ DATA_DIR: dataDir });
    const account = await createAccount(dataDir, { plan: 'pro' });
    const api = client(svc.url, account.api_key);
    // The first message of each id is answered 500, later ones 204.
    const seen = new Set<string>();
    const receiver = await startReceiver(() => 204);
    const flaky = await startReceiver(() => 204);
    flaky.server.removeAllListeners('request');
    flaky.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        const status = seen.has(id) ? 204 : 500;
        seen.add(id);
        flaky.received.push({ headers: req.headers, body, status });
        res.writeHead(status).end();
      });
    });
    const all = await api.post('/api/v1/webhooks/', { url: receiver.url, events: ['job.completed', 'job.failed', 'job.changed'] });
    assert.equal(all.status, 201, JSON.stringify(all.body));
    assert.match(all.body.secret, /^whsec_/);
    const failedOnly = await api.post('/api/v1/webhooks/', { url: flaky.url, events: ['job.failed'] });
    assert.equal(failedOnly.status, 201);
    const listed = await api.get('/api/v1/webhooks/');
    assert.equal(listed.body.webhooks.length, 2);
    assert.ok(listed.body.webhooks.every((w: any) => !('secret' in w)), 'the secret is shown only at creation');

    const config = await api.post('/api/v1/configs/', { name: 'shop', target_url: `${site.base}/shop/`, yaml_content: yaml(site.base) });
    products = [{ name: 'Alpha', price: '$1' }, { name: 'Beta', price: '$2' }];
    const first = await api.post('/api/v1/run/', { config_id: config.body.id });
    await api.waitForJob(first.body.id);
    products = [{ name: 'Alpha', price: '$1' }, { name: 'Beta', price: '$3' }, { name: 'Gamma', price: '$4' }];
    const second = await api.post('/api/v1/run/', { config_id: config.body.id });
    const { job: secondJob } = await api.waitForJob(second.body.id);
    assert.deepEqual({ ...secondJob.changes }, { added: 1, removed: 0, changed: 1, compared_with: first.body.id });
    const failing = await api.post('/api/v1/run/', { yaml_content: yaml('http://127.0.0.2:1') });
    const { job: failedJob } = await api.waitForJob(failing.body.id);
    assert.equal(failedJob.status, 'failed');

    await waitFor('four deliveries', () => receiver.received.length >= 4 ? true : null, 20_000);
    const wh = new Webhook(all.body.secret);
    const events = receiver.received.map((r) => {
      const payload = wh.verify(r.body, r.headers as Record<string, string>) as any;
      return `${payload.type} ${payload.data.job_id}`;
    }).sort();
    assert.deepEqual(events, [`job.changed ${second.body.id}`, `job.completed ${first.body.id}`, `job.completed ${second.body.id}`, `job.failed ${failing.body.id}`].sort());
    const changed = JSON.parse(receiver.received.find((r) => JSON.parse(r.body).type === 'job.changed')!.body);
    assert.deepEqual(changed.data.changes, { added: 1, removed: 0, changed: 1, compared_with: first.body.id });
    assert.match(changed.data.links.changes, new RegExp(`/api/v1/jobs/${second.body.id}/changes/$`));
    assert.throws(() => new Webhook(failedOnly.body.secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>), 'another webhook\'s secret does not verify it');

    // The flaky receiver: 500, then the retry (back-off 5 s) under the same webhook-id gets 204, and nothing after.
    await waitFor('the retry', () => flaky.received.length >= 2 ? true : null, 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(flaky.received.length, 2, 'no delivery after the 2xx');
    assert.equal(flaky.received[0]!.headers['webhook-id'], flaky.received[1]!.headers['webhook-id']);
    assert.equal(flaky.received[0]!.body, flaky.received[1]!.body, 'every attempt sends the same payload');
    for (const r of flaky.received) assert.equal((new Webhook(failedOnly.body.secret).verify(r.body, r.headers as Record<string, string>) as any).type, 'job.failed');
    const deliveries = await waitFor('two recorded attempts', async () => {
      const d = (await api.get(`/api/v1/webhooks/${failedOnly.body.id}/deliveries/`)).body.deliveries;
      return d.length === 2 ? d : null;
    }, 10_000);
    assert.deepEqual(deliveries.map((d: any) => [d.attempt, d.status_code, d.outcome]), [[2, 204, 'delivered'], [1, 500, 'will_retry']]);
    assert.equal(deliveries[1].error, 'http_status: 500');
    assert.ok(deliveries[1].next_attempt_at);

    const other = client(svc.url, (await createAccount(dataDir, { plan: 'pro' })).api_key);
    assert.equal((await other.get(`/api/v1/webhooks/${all.body.id}/`)).status, 404);
    assert.equal((await other.get(`/api/v1/webhooks/${all.body.id}/deliveries/`)).status, 404);
    assert.equal((await other.delete(`/api/v1/webhooks/${all.body.id}/`)).status, 404);
    assert.deepEqual((await other.get('/api/v1/webhooks/')).body, { webhooks: [] });
    assert.equal((await other.get(`/api/v1/jobs/${second.body.id}/changes/`)).status, 404);
    await svc.stop();
  });

  it('one webhook\'s slow receiver holds at most two delivery slots: another webhook\'s deliveries go on meanwhile', async () => {
    fs.writeFileSync(clockFile, '0');
    const dataDir = tempDataDir();
    const svc = await start({ DATA_DIR: dataDir });
    const api = client(svc.url, (await createAccount(dataDir, { plan: 'pro' })).api_key);
    // The slow receiver answers after 8 s (under the 10 s attempt time-out); the fast one at once.
    let slowSeen = 0;
    const slow = http.createServer((req, res) => { req.resume(); slowSeen++; setTimeout(() => res.writeHead(204).end(), 8000); });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    receivers.push(slow);
    const fast = await startReceiver();
    const fastAt: number[] = [];
    fast.server.on('request', () => fastAt.push(Date.now()));
    assert.equal((await api.post('/api/v1/webhooks/', { url: `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`, events: ['job.completed'] })).status, 201);
    assert.equal((await api.post('/api/v1/webhooks/', { url: fast.url, events: ['job.completed'] })).status, 201);
    const runs = await Promise.all(Array.from({ length: 10 }, () => api.post('/api/v1/run/', { yaml_content: yaml(site.base) })));
    for (const r of runs) assert.equal((await api.waitForJob(r.body.id)).job.status, 'completed');
    const done = Date.now();
    await waitFor('the fast receiver\'s ten deliveries', () => fast.received.length >= 10 ? true : null, 30_000);
    // Without the per-webhook limit the slow receiver's messages fill all 8 slots for 8 s at a time.
    assert.ok(Math.max(...fastAt) - done < 6000, `the last fast delivery ${Math.max(...fastAt) - done} ms after the last job`);
    assert.ok(slowSeen <= 2 + 2, `the slow receiver had ${slowSeen} requests at once or in turn, not all its 10`);
    await svc.stop();
  });

  it('one account\'s ten webhooks whose receivers hang hold half of the delivery slots: another account\'s deliveries are made meanwhile', async () => {
    fs.writeFileSync(clockFile, '0');
    const dataDir = tempDataDir();
    const svc = await start({ DATA_DIR: dataDir });
    const noisy = client(svc.url, (await createAccount(dataDir, { plan: 'pro' })).api_key);
    const quiet = client(svc.url, (await createAccount(dataDir, { plan: 'pro' })).api_key);
    // Receivers that never answer: each attempt holds its slot for the attempt's whole 10 s time-out.
    let open = 0;
    let mostOpen = 0;
    const hung = http.createServer((req) => {
      req.resume();
      mostOpen = Math.max(mostOpen, ++open);
      req.socket.once('close', () => { open--; });
    });
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    receivers.push(hung);
    for (let i = 0; i < 10; i++) {
      const r = await noisy.post('/api/v1/webhooks/', { url: `http://127.0.0.1:${(hung.address() as AddressInfo).port}/hook/${i}`, events: ['job.completed'] });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    const fast = await startReceiver();
    assert.equal((await quiet.post('/api/v1/webhooks/', { url: fast.url, events: ['job.completed'] })).status, 201);
    // Two runs of the noisy account: 20 deliveries that hang.
    for (const r of await Promise.all([1, 2].map(() => noisy.post('/api/v1/run/', { yaml_content: yaml(site.base) })))) {
      assert.equal((await noisy.waitForJob(r.body.id)).job.status, 'completed');
    }
    await waitFor('the hanging receivers\' first attempts', () => (open >= 4 ? true : null), 20_000);
    // The quiet account's runs, one after another: each delivery is made while the noisy account's attempts hang.
    const latencies: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const run = await quiet.post('/api/v1/run/', { yaml_content: yaml(site.base) });
      assert.equal((await quiet.waitForJob(run.body.id)).job.status, 'completed');
      const seenDone = Date.now();
      await waitFor(`the quiet account's delivery ${i}`, () => (fast.received.length >= i ? true : null), 30_000);
      latencies.push(Date.now() - seenDone);
    }
    // With a limit per webhook only, the noisy account's attempts held all 8 slots (2 a webhook) for 10 s at a time.
    assert.ok(mostOpen <= 4, `the noisy account had ${mostOpen} attempts at once; its share is 4 of the 8 slots`);
    assert.ok(Math.max(...latencies) < 5_000, `the quiet account's deliveries came ${latencies.join(', ')} ms after its jobs were seen completed`);
    hung.closeAllConnections();
    await svc.stop();
  });

  it('a private webhook URL is refused at creation (400 target_forbidden) and again at delivery when the guard no longer allows it', async () => {
    const dataDir = tempDataDir();
    let svc = await start({ DATA_DIR: dataDir });
    const account = await createAccount(dataDir, { plan: 'pro' });
    let api = client(svc.url, account.api_key);
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/hook', 'http://[::1]:8080/hook', 'http://user:pw@example.com/hook', 'ftp://example.com/']) {
      const r = await api.post('/api/v1/webhooks/', { url, events: ['job.completed'] });
      assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
      assert.ok(['target_forbidden', 'invalid_url', 'invalid_request'].includes(r.body.code), url);
    }
    assert.equal((await api.post('/api/v1/webhooks/', { url: 'http://169.254.169.254/', events: ['job.completed'] })).body.code, 'target_forbidden');
    // A name written with a trailing dot must resolve at creation (some resolvers give localhost. the loopback address);
    // a name without one that does not resolve yet is accepted, and checked at each delivery.
    for (const url of ['http://localhost./hook', 'http://metadata.google.internal./computeMetadata/v1/', 'http://no-such-name.invalid./hook']) {
      const r = await api.post('/api/v1/webhooks/', { url, events: ['job.completed'] });
      assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 'target_forbidden', url);
      assert.match(r.body.error, /does not resolve; a host name written with a trailing dot must resolve/);
    }
    const later = await api.post('/api/v1/webhooks/', { url: 'http://hooks.not-created-yet.invalid/hook', events: ['job.completed'] });
    assert.equal(later.status, 201, JSON.stringify(later.body));
    assert.equal((await api.delete(`/api/v1/webhooks/${later.body.id}/`)).status, 204);
    assert.equal((await api.post('/api/v1/webhooks/', { url: 'http://127.0.0.1:9/', events: ['job.paused'] })).status, 400, 'an unknown event');

    // Allowed now (loopback is allowlisted for this start) ...
    const receiver = await startReceiver();
    const hook = await api.post('/api/v1/webhooks/', { url: receiver.url, events: ['job.completed'] });
    assert.equal(hook.status, 201);
    // ... and no longer at the next start, which allows only the shop's address.
    await svc.stop();
    svc = await start({ DATA_DIR: dataDir, SAI_OUTBOUND_ALLOW: '127.0.0.2' });
    api = client(svc.url, account.api_key);
    const run = await api.post('/api/v1/run/', { yaml_content: yaml(site.base) });
    const { job } = await api.waitForJob(run.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    const [attempt] = await waitFor('the refused attempt', async () => {
      const d = (await api.get(`/api/v1/webhooks/${hook.body.id}/deliveries/`)).body.deliveries;
      return d.length ? d : null;
    }, 20_000);
    assert.equal(attempt.outcome, 'given_up', 'a refused address is not retried');
    assert.match(attempt.error, /^target_forbidden: /);
    assert.equal(attempt.status_code, null);
    assert.equal(receiver.received.length, 0, 'no request reached the receiver');
    await svc.stop();
  });
});
