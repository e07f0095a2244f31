/**
 * The Store contract (lambdas/core/ports.ts): one suite that every store adapter passes unchanged.
 * test/unit/sqlite-store.test.ts runs it on SQLite; the DynamoDB store runs it on DynamoDB Local.
 *
 * `makeStore` returns a fresh, empty store; `raceStores` returns N independent handles on one shared
 * store (separate connections or clients) for the concurrency tests.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WEBHOOK_DELIVERIES_KEPT, type JobRecord, type ScheduleRecord, type Store, type WebhookDeliveryRecord, type WebhookRecord } from '../../lambdas/core/ports.ts';

export interface ContractOptions {
  makeStore(): Promise<Store>;
  /** Runs `fn` concurrently against one shared store from `n` separate handles (threads, clients). */
  race(n: number, fn: RaceScript): Promise<unknown[]>;
  cleanup?(): Promise<void>;
}

/** A script run by each racer: `consume` or `transition`, with its arguments. */
export type RaceScript =
  | { op: 'consume'; accountId: number; counter: string; amount: number; limit: number; times: number }
  | { op: 'finish'; jobId: string; status: 'completed' | 'failed' }
  | { op: 'slot'; accountId: number; limit: number; until: string; now: string }
  | { op: 'claim'; accountId: number; scheduleId: string; ifLastFiredAt: string | null; firedAt: string };

function newJob(accountId: number, over: Partial<JobRecord> = {}): JobRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(), account_id: accountId, job_type: 'run', status: 'pending', progress: 0, status_message: 'Queued',
    items_found: 0, pages_scraped: 0, api_discovered: false, target_url: 'https://example.com/', config_id: null,
    yaml_content: 'target: {url: "https://example.com/"}', created_at: now, updated_at: now, started_at: null,
    completed_at: null, attempts: 0, row_count: 0, results_key: null, prompt: null, ...over,
  };
}

function newSchedule(accountId: number, over: Partial<ScheduleRecord> = {}): ScheduleRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(), account_id: accountId, config_id: randomUUID(), cron: '*/5 * * * *', timezone: 'UTC', enabled: true,
    next_run_at: '2026-11-26T10:05:00.000Z', last_fired_at: null, since: now, paused: null, fired_count: 0, skipped_count: 0, recent_jobs: [],
    created_at: now, updated_at: now, ...over,
  };
}

function newWebhook(accountId: number, over: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    id: randomUUID(), account_id: accountId, url: 'https://hooks.example.com/scrape', events: ['job.completed', 'job.changed'],
    secret_sealed: 'v1.sealed-secret', created_at: new Date().toISOString(), ...over,
  };
}

/** Delivery attempt `i` of a webhook, `i` seconds after 10:00. */
function newDelivery(w: WebhookRecord, i: number, over: Partial<WebhookDeliveryRecord> = {}): WebhookDeliveryRecord {
  return {
    id: randomUUID(), webhook_id: w.id, account_id: w.account_id, message_id: `msg_${i}`, event: 'job.completed', job_id: randomUUID(), attempt: 1,
    attempted_at: new Date(Date.UTC(2026, 10, 26, 10, 0, i)).toISOString(), status_code: 200, duration_ms: 12, error: null, outcome: 'delivered',
    next_attempt_at: null, ...over,
  };
}

/** Creates a run job and returns its id. */
async function newJobId(store: Store, accountId: number): Promise<string> {
  const j = newJob(accountId);
  await store.createJob(j);
  return j.id;
}

async function newAccount(store: Store, email = `u-${randomUUID()}@example.com`) {
  return store.createAccount({ email, first_name: 'A', last_name: 'B', plan: 'pro', password_hash: 'h', api_key_digest: null, api_key_sealed: null });
}

/** Registers the contract suite. */
export function storeContract(name: string, opts: ContractOptions): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    before(async () => { store = await opts.makeStore(); });
    after(async () => { await opts.cleanup?.(); });

    it('creates accounts with integer ids and refuses a duplicate email in any case', async () => {
      const a = await newAccount(store, 'Case@Example.com');
      assert.equal(typeof a.id, 'number');
      assert.ok(Number.isInteger(a.id) && a.id > 0);
      assert.match(a.created_at, /^\d{4}-\d\d-\d\dT/);
      await assert.rejects(newAccount(store, 'case@example.COM'), { name: 'ConflictError' });
      assert.equal((await store.getAccountByEmail('CASE@example.com'))?.id, a.id);
      const b = await newAccount(store);
      assert.notEqual(b.id, a.id);
    });

    it('finds accounts by key digest and updates plan and key', async () => {
      const a = await newAccount(store);
      assert.equal(await store.getAccountByKeyDigest('00'.repeat(32)), null);
      const digest = 'ab'.repeat(32);
      const u = await store.updateAccount(a.id, { api_key_digest: digest, api_key_sealed: 'v1.x', plan: 'growth' });
      assert.equal(u?.plan, 'growth');
      assert.equal((await store.getAccountByKeyDigest(digest))?.id, a.id);
      assert.equal(await store.updateAccount(999_999, { plan: 'free' }), null);
      const all = await store.listAccounts();
      assert.ok(all.some((x) => x.id === a.id && x.plan === 'growth'));
    });

    it('keeps configs per account: another account sees 404-null and cannot delete', async () => {
      const a = await newAccount(store);
      const b = await newAccount(store);
      const c1 = { id: randomUUID(), account_id: a.id, name: 'one', target_url: 'https://a/', yaml_content: 'y1', prompt: null, created_at: '2026-01-01T00:00:00.000Z' };
      const c2 = { ...c1, id: randomUUID(), name: 'two', created_at: '2026-01-02T00:00:00.000Z' };
      await store.createConfig(c1);
      await store.createConfig(c2);
      assert.deepEqual((await store.listConfigs(a.id)).map((c) => c.name), ['two', 'one']);
      assert.deepEqual(await store.listConfigs(b.id), []);
      assert.equal(await store.getConfig(b.id, c1.id), null);
      assert.equal(await store.deleteConfig(b.id, c1.id), false);
      assert.equal((await store.getConfig(a.id, c1.id))?.yaml_content, 'y1');
      assert.equal(await store.updateConfigYaml(b.id, c1.id, 'stolen'), null, 'another account cannot change it');
      assert.equal((await store.updateConfigYaml(a.id, c1.id, 'y1 healed'))?.yaml_content, 'y1 healed');
      assert.equal((await store.getConfig(a.id, c1.id))?.yaml_content, 'y1 healed');
      assert.equal(await store.updateConfigYaml(a.id, randomUUID(), 'x'), null);
      const regenerated = await store.updateConfigYaml(a.id, c1.id, 'y1 regenerated', 'a new prompt');
      assert.deepEqual([regenerated?.yaml_content, regenerated?.prompt, regenerated?.name], ['y1 regenerated', 'a new prompt', 'one'], 'with a prompt, the prompt too');
      assert.equal((await store.getConfig(a.id, c1.id))?.prompt, 'a new prompt');
      assert.equal(await store.deleteConfig(a.id, c1.id), true);
      assert.equal(await store.deleteConfig(a.id, c1.id), false);
      assert.equal(await store.getConfig(a.id, c1.id), null);
    });

    it('moves jobs only from the expected status; finished jobs never move again', async () => {
      const a = await newAccount(store);
      const j = newJob(a.id);
      await store.createJob(j);
      assert.equal(await store.updateJob(j.id, ['running'], { status: 'completed' }), null, 'pending is not running');
      const r = await store.updateJob(j.id, ['pending'], { status: 'running', started_at: '2026-01-01T00:00:00.000Z', increment_attempts: true });
      assert.equal(r?.status, 'running');
      assert.equal(r?.attempts, 1);
      const again = await store.updateJob(j.id, ['pending', 'running'], { status: 'running', started_at: '2027-01-01T00:00:00.000Z', increment_attempts: true });
      assert.equal(again?.attempts, 2);
      assert.equal(again?.started_at, '2026-01-01T00:00:00.000Z', 'started_at keeps the first attempt');
      const done = await store.updateJob(j.id, ['running'], { status: 'completed', progress: 100, row_count: 7, results_key: 'k', completed_at: '2026-01-01T00:01:00.000Z' });
      assert.equal(done?.status, 'completed');
      assert.equal(await store.updateJob(j.id, ['pending', 'running'], { status: 'failed' }), null);
      assert.equal((await store.getJobById(j.id))?.status, 'completed');
      assert.equal((await store.getJobById(j.id))?.row_count, 7);
    });

    it('keeps a generate job\'s run: requested at creation, its run job or its error written at completion (issue 40)', async () => {
      const a = await newAccount(store);
      const plain = newJob(a.id);
      await store.createJob(plain);
      assert.ok(!(await store.getJobById(plain.id))?.run_requested, 'not requested unless asked');
      const j = { ...newJob(a.id), job_type: 'generate' as const, run_requested: true };
      await store.createJob(j);
      assert.equal((await store.getJobById(j.id))?.run_requested, true);
      assert.equal((await store.getJobById(j.id))?.run_job_id ?? null, null);
      const runId = randomUUID();
      const done = await store.updateJob(j.id, ['pending'], { status: 'completed', run_job_id: runId });
      assert.deepEqual([done?.run_requested, done?.run_job_id, done?.run_error ?? null], [true, runId, null]);
      const k = { ...newJob(a.id), job_type: 'generate' as const, run_requested: true };
      await store.createJob(k);
      assert.equal((await store.updateJob(k.id, ['pending'], { status: 'completed', run_error: 'quota_exceeded: used up' }))?.run_error, 'quota_exceeded: used up');
    });

    it('keeps a job\'s config name from its creation and a run\'s warnings from its completion (issue 40)', async () => {
      const a = await newAccount(store);
      const j = { ...newJob(a.id), config_name: 'Quotes' };
      await store.createJob(j);
      assert.equal((await store.getJobById(j.id))?.config_name, 'Quotes');
      assert.equal((await store.getJobById(j.id))?.warnings ?? null, null);
      const warnings = ['detail page https://x/1: answered HTTP 404', 'stopped at the page limit'];
      const done = await store.updateJob(j.id, ['pending'], { status: 'completed', warnings });
      assert.deepEqual(done?.warnings, warnings);
      assert.deepEqual((await store.listJobs(a.id, 10)).items.find((x) => x.id === j.id)?.warnings, warnings);
      const g = { ...newJob(a.id), job_type: 'generate' as const };
      await store.createJob(g);
      assert.equal((await store.updateJob(g.id, ['pending'], { status: 'completed', config_name: 'Generated' }))?.config_name, 'Generated');
      const none = await store.updateJob((await (async () => { const k = newJob(a.id); await store.createJob(k); return k.id; })()), ['pending'], { status: 'completed', warnings: [] });
      assert.deepEqual(none?.warnings, []);
    });

    it('keeps a generate job\'s example URLs in order; none is null (issue 36)', async () => {
      const a = await newAccount(store);
      const urls = ['https://shop.test/search?q=b', 'https://shop.test/search?q=a'];
      const g = { ...newJob(a.id), job_type: 'generate' as const, example_urls: urls };
      await store.createJob(g);
      assert.deepEqual((await store.getJobById(g.id))?.example_urls, urls);
      assert.deepEqual((await store.updateJob(g.id, ['pending'], { status: 'analyzing' }))?.example_urls, urls);
      const plain = newJob(a.id);
      await store.createJob(plain);
      assert.equal((await store.getJobById(plain.id))?.example_urls ?? null, null);
    });

    it('with an attempt, only that attempt may change the job (a stale delivery cannot)', async () => {
      const a = await newAccount(store);
      const j = newJob(a.id);
      await store.createJob(j);
      const first = await store.updateJob(j.id, ['pending'], { status: 'running', increment_attempts: true });
      const second = await store.updateJob(j.id, ['running'], { status: 'running', increment_attempts: true });
      assert.equal(first?.attempts, 1);
      assert.equal(second?.attempts, 2);
      assert.equal(await store.updateJob(j.id, ['running'], { progress: 50 }, 1), null, 'attempt 1 is stale');
      assert.equal(await store.updateJob(j.id, ['running'], { status: 'completed', row_count: 5 }, 1), null);
      assert.equal((await store.updateJob(j.id, ['running'], { progress: 60 }, 2))?.progress, 60);
      assert.equal((await store.updateJob(j.id, ['running'], { progress: 10, status_message: 'x' }, 2))?.status_message, 'x', 'a lower progress still applies the rest');
      assert.equal((await store.updateJob(j.id, ['running'], { status: 'completed', row_count: 7 }, 2))?.row_count, 7);
    });

    it('never lowers progress and keeps booleans as booleans', async () => {
      const a = await newAccount(store);
      const j = newJob(a.id, { status: 'running' });
      await store.createJob(j);
      await store.updateJob(j.id, ['running'], { progress: 40, api_discovered: true });
      const low = await store.updateJob(j.id, ['running'], { progress: 10, items_found: 3 });
      assert.equal(low?.progress, 40);
      assert.equal(low?.items_found, 3);
      assert.equal(low?.api_discovered, true);
      const high = await store.updateJob(j.id, ['running'], { progress: 250 });
      assert.equal(high?.progress, 100, 'clamped to 100');
    });

    it('keeps a generate job\'s prompt, and the config it produced once written', async () => {
      const a = await newAccount(store);
      const j = newJob(a.id, { job_type: 'generate', yaml_content: '', prompt: 'book titles and prices' });
      await store.createJob(j);
      assert.equal((await store.getJob(a.id, j.id))?.prompt, 'book titles and prices');
      const configId = randomUUID();
      const done = await store.updateJob(j.id, ['pending'], { status: 'analyzing', config_id: configId, yaml_content: 'extract: {}' });
      assert.equal(done?.config_id, configId);
      assert.equal(done?.yaml_content, 'extract: {}');
      assert.equal(done?.prompt, 'book titles and prices');
      assert.equal((await store.getJob(a.id, await newJobId(store, a.id)))?.prompt ?? null, null);
    });

    it('keeps what a completed run changed, as written, and nothing for a job without it (issue 26)', async () => {
      const a = await newAccount(store);
      const j = newJob(a.id, { status: 'running' });
      await store.createJob(j);
      assert.equal((await store.getJob(a.id, j.id))?.changes ?? null, null);
      const changes = { added: 3, removed: 1, changed: 2, compared_with: randomUUID(), key_fields: ['url'], changes_key: `changes/${a.id}/${j.id}.json` };
      const done = await store.updateJob(j.id, ['running'], { status: 'completed', changes, row_count: 5 });
      assert.deepEqual(done?.changes, changes);
      assert.deepEqual((await store.getJob(a.id, j.id))?.changes, changes);
      const first = { added: 5, removed: 0, changed: 0, compared_with: null, key_fields: null, changes_key: null };
      const k = newJob(a.id, { status: 'running' });
      await store.createJob(k);
      assert.deepEqual((await store.updateJob(k.id, ['running'], { status: 'completed', changes: first }))?.changes, first);
    });

    it("records a config's last completed run, never moving it back to an earlier one, per account (issue 26)", async () => {
      const a = await newAccount(store);
      const b = await newAccount(store);
      const configId = randomUUID();
      assert.equal(await store.getConfigLastRun(a.id, configId), null);
      assert.equal(await store.setConfigLastRun(a.id, configId, { job_id: 'j2', completed_at: '2026-11-26T10:00:02.000Z' }), true);
      assert.equal(await store.setConfigLastRun(a.id, configId, { job_id: 'j1', completed_at: '2026-11-26T10:00:01.000Z' }), false, 'an earlier run does not replace a later one');
      assert.deepEqual(await store.getConfigLastRun(a.id, configId), { job_id: 'j2', completed_at: '2026-11-26T10:00:02.000Z' });
      assert.equal(await store.setConfigLastRun(a.id, configId, { job_id: 'j3', completed_at: '2026-11-26T10:00:03.000Z' }), true);
      assert.equal((await store.getConfigLastRun(a.id, configId))?.job_id, 'j3');
      assert.equal(await store.getConfigLastRun(b.id, configId), null, "another account's config of the same id has none");
      // Deleting the config forgets its last run.
      await store.createConfig({ id: configId, account_id: a.id, name: 'c', target_url: 'https://example.com/', yaml_content: 'y', prompt: null, created_at: new Date().toISOString() });
      assert.equal(await store.deleteConfig(a.id, configId), true);
      assert.equal(await store.getConfigLastRun(a.id, configId), null);
    });

    it('isolates jobs per account and lists them newest first with a cursor', async () => {
      const a = await newAccount(store);
      const b = await newAccount(store);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const j = newJob(a.id, { created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() });
        ids.push(j.id);
        await store.createJob(j);
      }
      await store.createJob(newJob(b.id));
      assert.equal(await store.getJob(b.id, ids[0]!), null);
      assert.equal((await store.getJob(a.id, ids[0]!))?.id, ids[0]);
      assert.equal(await store.countJobs(a.id), 5);
      const p1 = await store.listJobs(a.id, 2);
      assert.deepEqual(p1.items.map((j) => j.id), [ids[4], ids[3]]);
      assert.ok(p1.next_cursor);
      const p2 = await store.listJobs(a.id, 2, p1.next_cursor!);
      assert.deepEqual(p2.items.map((j) => j.id), [ids[2], ids[1]]);
      const p3 = await store.listJobs(a.id, 2, p2.next_cursor!);
      assert.deepEqual(p3.items.map((j) => j.id), [ids[0]]);
      assert.equal(p3.next_cursor, null);
      await assert.rejects(store.listJobs(a.id, 2, 'not-a-cursor'));
    });

    it('lists unfinished jobs across accounts', async () => {
      const a = await newAccount(store);
      const p = newJob(a.id, { status: 'pending' });
      const r = newJob(a.id, { status: 'running' });
      const c = newJob(a.id, { status: 'completed' });
      for (const j of [p, r, c]) await store.createJob(j);
      const found = (await store.listJobsByStatus(['pending', 'running'])).map((j) => j.id);
      assert.ok(found.includes(p.id) && found.includes(r.id));
      assert.ok(!found.includes(c.id));
    });

    it('consumes counters within their limit and refunds', async () => {
      const a = await newAccount(store);
      assert.equal(await store.getCounter(a.id, 'credits:2026-11'), 0);
      assert.deepEqual(await store.consume(a.id, 'credits:2026-11', 3000, 5000), { ok: true, used: 3000 });
      assert.deepEqual(await store.consume(a.id, 'credits:2026-11', 3000, 5000), { ok: false, used: 3000 });
      assert.deepEqual(await store.consume(a.id, 'credits:2026-11', 2000, 5000), { ok: true, used: 5000 });
      assert.deepEqual(await store.consume(a.id, 'other', 6, 5), { ok: false, used: 0 }, 'a first spend larger than the limit');
      await store.refund(a.id, 'credits:2026-11', 1000);
      assert.equal(await store.getCounter(a.id, 'credits:2026-11'), 4000);
      await store.refund(a.id, 'credits:2026-11', 99_999);
      assert.equal(await store.getCounter(a.id, 'credits:2026-11'), 0, 'never below zero');
    });

    it('race: concurrent consumers never spend more than the limit', async () => {
      const a = await newAccount(store);
      const results = await opts.race(4, { op: 'consume', accountId: a.id, counter: 'race:credits', amount: 1, limit: 5, times: 10 });
      const accepted = (results as number[]).reduce((s, n) => s + n, 0);
      assert.equal(accepted, 5, `4 racers x 10 attempts against 5 units: ${accepted} accepted`);
      assert.equal(await store.getCounter(a.id, 'race:credits'), 5);
    });

    it('job slots: at most `limit` live per account, renewed by their holder, given back, and free once the lease ends', async () => {
      const a = await newAccount(store);
      const b = await newAccount(store);
      const now = '2026-11-22T14:00:00.000Z';
      const until = '2026-11-22T14:16:00.000Z';
      assert.equal(await store.countJobSlots(a.id, now), 0);
      assert.deepEqual(await store.acquireJobSlot(a.id, 'job-1', 2, until, now), { ok: true, running: 1 });
      assert.deepEqual(await store.acquireJobSlot(a.id, 'job-2', 2, until, now), { ok: true, running: 2 });
      assert.deepEqual(await store.acquireJobSlot(a.id, 'job-3', 2, until, now), { ok: false, running: 2 }, 'the third job of the account waits');
      assert.deepEqual(await store.acquireJobSlot(b.id, 'job-9', 2, until, now), { ok: true, running: 1 }, 'another account is not held up');
      assert.deepEqual(await store.acquireJobSlot(a.id, 'job-1', 2, '2026-11-22T14:30:00.000Z', now), { ok: true, running: 2 }, 'a redelivery of a running job renews its slot');
      assert.deepEqual(await store.acquireJobSlot(a.id, 'job-1', 1, '2026-11-22T14:30:00.000Z', now), { ok: true, running: 2 }, 'renewed even under a lower limit');
      assert.equal(await store.countJobSlots(a.id, now), 2);
      await store.releaseJobSlot(a.id, 'job-2');
      await store.releaseJobSlot(a.id, 'no-such-job');
      assert.equal(await store.countJobSlots(a.id, now), 1);
      assert.deepEqual(await store.acquireJobSlot(a.id, 'job-3', 2, until, now), { ok: true, running: 2 }, 'the slot given back is taken');
      // job-3's lease ends at 14:16; job-1's (renewed) at 14:30. A holder that died frees its slot when its lease ends.
      const later = '2026-11-22T14:20:00.000Z';
      assert.equal(await store.countJobSlots(a.id, later), 1);
      assert.deepEqual(await store.acquireJobSlot(a.id, 'job-4', 2, '2026-11-22T14:40:00.000Z', later), { ok: true, running: 2 });
      assert.deepEqual(await store.acquireJobSlot(a.id, 'job-3', 2, '2026-11-22T14:40:00.000Z', later), { ok: false, running: 2 }, 'an expired lease is no claim: its holder queues like any other');
      await store.releaseJobSlot(a.id, 'job-1');
      await store.releaseJobSlot(a.id, 'job-4');
      assert.equal(await store.countJobSlots(a.id, later), 0);
      assert.equal(await store.countJobSlots(b.id, now), 1);
    });

    it('race: concurrent takers never hold more job slots than the limit', async () => {
      const a = await newAccount(store);
      const now = new Date().toISOString();
      const until = new Date(Date.now() + 600_000).toISOString();
      const results = await opts.race(6, { op: 'slot', accountId: a.id, limit: 3, until, now });
      assert.equal((results as number[]).reduce((s, n) => s + n, 0), 3, '6 racers, 3 slots');
      assert.equal(await store.countJobSlots(a.id, now), 3);
    });

    it('race: a job is finished exactly once', async () => {
      const a = await newAccount(store);
      const j = newJob(a.id, { status: 'running' });
      await store.createJob(j);
      const results = await opts.race(4, { op: 'finish', jobId: j.id, status: 'completed' });
      assert.equal((results as number[]).reduce((s, n) => s + n, 0), 1, 'exactly one racer moved running -> completed');
    });

    it('keeps the schedule that started a run job, and null for a job without one (issue 26)', async () => {
      const a = await newAccount(store);
      const scheduleId = randomUUID();
      const j = newJob(a.id, { schedule_id: scheduleId });
      await store.createJob(j);
      assert.equal((await store.getJob(a.id, j.id))?.schedule_id, scheduleId);
      assert.equal((await store.getJobById(j.id))?.schedule_id, scheduleId);
      assert.equal((await store.updateJob(j.id, ['pending'], { status: 'running' }))?.schedule_id, scheduleId);
      assert.equal((await store.listJobs(a.id, 10)).items.find((x) => x.id === j.id)?.schedule_id, scheduleId);
      const plain = newJob(a.id);
      assert.ok(!('schedule_id' in plain));
      await store.createJob(plain);
      assert.equal((await store.getJob(a.id, plain.id))?.schedule_id, null, 'absent is stored as null');
      const explicit = newJob(a.id, { schedule_id: null });
      await store.createJob(explicit);
      assert.equal((await store.getJobById(explicit.id))?.schedule_id, null);
    });

    describe('schedules (issue 26)', () => {
      it('keeps schedules per account, newest first, as written; another account sees null and changes nothing', async () => {
        const a = await newAccount(store);
        const b = await newAccount(store);
        const s1 = newSchedule(a.id, { created_at: '2026-01-01T00:00:00.000Z' });
        const s2 = newSchedule(a.id, {
          created_at: '2026-01-02T00:00:00.000Z', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', enabled: false, next_run_at: null,
          last_fired_at: '2026-01-02T08:00:00.000Z', paused: { code: 'quota_exceeded', message: 'Monthly credits used up', at: '2026-01-02T08:00:01.000Z' },
          fired_count: 4, skipped_count: 1, recent_jobs: [{ job_id: randomUUID(), scheduled_for: '2026-01-02T08:00:00.000Z' }, { job_id: randomUUID(), scheduled_for: '2026-01-01T08:00:00.000Z' }],
        });
        await store.createSchedule(s1);
        await store.createSchedule(s2);
        assert.deepEqual(await store.getSchedule(a.id, s1.id), s1);
        assert.deepEqual(await store.getSchedule(a.id, s2.id), s2);
        assert.deepEqual((await store.listSchedules(a.id)).map((s) => s.id), [s2.id, s1.id]);
        assert.deepEqual((await store.listSchedules(a.id))[0], s2);
        assert.deepEqual(await store.listSchedules(b.id), []);
        assert.equal(await store.getSchedule(b.id, s1.id), null);
        assert.equal(await store.updateSchedule(b.id, s1.id, { enabled: false }), null, 'another account cannot change it');
        assert.equal(await store.updateSchedule(b.id, s1.id, { last_fired_at: '2026-11-26T10:05:00.000Z' }, null), null, 'nor claim its firing');
        assert.equal(await store.deleteSchedule(b.id, s1.id), false);
        assert.deepEqual(await store.getSchedule(a.id, s1.id), s1, 'unchanged');
        assert.equal(await store.getSchedule(b.id, s1.id), null, 'no schedule was made for the other account');
        assert.equal(await store.updateSchedule(a.id, randomUUID(), { enabled: false }), null);
        assert.equal(await store.deleteSchedule(a.id, s2.id), true);
        assert.equal(await store.deleteSchedule(a.id, s2.id), false);
        assert.equal(await store.getSchedule(a.id, s2.id), null);
        assert.deepEqual((await store.listSchedules(a.id)).map((s) => s.id), [s1.id]);
      });

      it('changes only the fields a patch gives', async () => {
        const a = await newAccount(store);
        const s = newSchedule(a.id);
        await store.createSchedule(s);
        const paused = { code: 'plan_required', message: 'The plan has no schedules', at: '2026-11-26T10:05:01.000Z' };
        const p1 = { enabled: false, next_run_at: null, paused, updated_at: '2026-11-26T10:05:01.000Z' };
        assert.deepEqual(await store.updateSchedule(a.id, s.id, p1), { ...s, ...p1 });
        const recent_jobs = [{ job_id: randomUUID(), scheduled_for: '2026-11-26T10:05:00.000Z' }];
        assert.deepEqual(await store.updateSchedule(a.id, s.id, { recent_jobs, fired_count: 3, skipped_count: 2 }), { ...s, ...p1, recent_jobs, fired_count: 3, skipped_count: 2 });
        const p3 = { enabled: true, paused: null, next_run_at: '2026-11-26T10:10:00.000Z', since: '2026-11-26T10:06:00.000Z', cron: '*/10 * * * *', timezone: 'Asia/Tokyo' };
        const expected = { ...s, ...p1, recent_jobs, fired_count: 3, skipped_count: 2, ...p3 };
        assert.deepEqual(await store.updateSchedule(a.id, s.id, p3), expected);
        assert.deepEqual(await store.updateSchedule(a.id, s.id, {}), expected, 'an empty patch changes nothing');
        assert.deepEqual(await store.getSchedule(a.id, s.id), expected);
      });

      it('claims a firing once: the write is conditional on last_fired_at, null included', async () => {
        const a = await newAccount(store);
        const s = newSchedule(a.id);
        await store.createSchedule(s);
        const slot1 = '2026-11-26T10:05:00.000Z';
        const slot2 = '2026-11-26T10:10:00.000Z';
        const first = await store.updateSchedule(a.id, s.id, { last_fired_at: slot1, fired_count: 1 }, null);
        assert.equal(first?.last_fired_at, slot1);
        assert.equal(first?.fired_count, 1);
        assert.equal(await store.updateSchedule(a.id, s.id, { last_fired_at: slot1, fired_count: 99 }, null), null, 'a second claim of the slot, from the stale null');
        assert.equal((await store.getSchedule(a.id, s.id))?.fired_count, 1, 'the failed claim changed nothing');
        assert.equal((await store.updateSchedule(a.id, s.id, { last_fired_at: slot2, fired_count: 2 }, slot1))?.last_fired_at, slot2);
        assert.equal(await store.updateSchedule(a.id, s.id, { last_fired_at: slot2, fired_count: 99 }, slot1), null, 'stale value');
        assert.equal(await store.updateSchedule(a.id, s.id, {}, slot1), null, 'an empty patch is conditional too');
        assert.equal((await store.updateSchedule(a.id, s.id, {}, slot2))?.fired_count, 2);
        assert.equal(await store.updateSchedule(a.id, randomUUID(), { last_fired_at: slot1 }, null), null, 'an absent schedule is not created');
        // Concurrent firers of one slot: exactly one claims it, and its write is the one kept.
        const slot3 = '2026-11-26T10:15:00.000Z';
        const jobs = Array.from({ length: 6 }, () => randomUUID());
        const claims = await Promise.all(jobs.map((job_id) => store.updateSchedule(a.id, s.id, { last_fired_at: slot3, recent_jobs: [{ job_id, scheduled_for: slot3 }] }, slot2)));
        const won = claims.filter((c) => c !== null);
        assert.equal(won.length, 1, `6 concurrent claims: ${won.length} won`);
        assert.deepEqual((await store.getSchedule(a.id, s.id))?.recent_jobs, won[0]!.recent_jobs);
        // The firing of a never-fired schedule can be cleared again (null is a value like any other).
        assert.equal((await store.updateSchedule(a.id, s.id, { last_fired_at: null }, slot3))?.last_fired_at, null);
        assert.equal((await store.updateSchedule(a.id, s.id, { fired_count: 7 }, null))?.fired_count, 7);
      });

      it('race: concurrent firers from separate handles claim a slot exactly once', async () => {
        const a = await newAccount(store);
        const s = newSchedule(a.id);
        await store.createSchedule(s);
        const results = await opts.race(4, { op: 'claim', accountId: a.id, scheduleId: s.id, ifLastFiredAt: null, firedAt: '2026-11-26T10:05:00.000Z' });
        assert.equal((results as number[]).reduce((sum, n) => sum + n, 0), 1, 'exactly one racer claimed the slot');
        assert.equal((await store.getSchedule(a.id, s.id))?.fired_count, 1);
      });

      it('lists due schedules across accounts: enabled, due at or before now, earliest first, at most limit', async () => {
        // 1990: earlier than any other schedule of this suite, so only these are due.
        const a = await newAccount(store);
        const b = await newAccount(store);
        const at = (minute: number) => new Date(Date.UTC(1990, 0, 1, 0, minute)).toISOString();
        const due3 = newSchedule(a.id, { next_run_at: at(3) });
        const due1 = newSchedule(a.id, { next_run_at: at(1) });
        const due2 = newSchedule(b.id, { next_run_at: at(2) });
        const dueNow = newSchedule(b.id, { next_run_at: at(5) });
        const later = newSchedule(a.id, { next_run_at: at(6) });
        const disabled = newSchedule(a.id, { next_run_at: at(0), enabled: false });
        const never = newSchedule(a.id, { next_run_at: null });
        const all = [due3, due1, due2, dueNow, later, disabled, never];
        for (const s of all) await store.createSchedule(s);
        const now = at(5);
        assert.deepEqual((await store.listDueSchedules(now, 10)).map((s) => s.id), [due1.id, due2.id, due3.id, dueNow.id]);
        assert.deepEqual((await store.listDueSchedules(now, 2)).map((s) => s.id), [due1.id, due2.id], 'at most limit, the earliest');
        assert.deepEqual((await store.listDueSchedules(now, 1))[0], due1, 'as stored');
        assert.deepEqual(await store.listDueSchedules(at(0), 10), [], 'a disabled schedule is never due');
        await store.updateSchedule(a.id, due1.id, { enabled: false, next_run_at: null });
        await store.updateSchedule(b.id, due2.id, { next_run_at: at(7) });
        assert.equal(await store.deleteSchedule(a.id, due3.id), true);
        assert.deepEqual((await store.listDueSchedules(now, 10)).map((s) => s.id), [dueNow.id]);
        for (const s of all) await store.deleteSchedule(s.account_id, s.id);
        assert.deepEqual(await store.listDueSchedules(at(59), 10), []);
      });
    });

    describe('webhooks (issue 26)', () => {
      it('keeps webhooks per account, newest first; another account sees null, cannot delete, and lists no deliveries', async () => {
        const a = await newAccount(store);
        const b = await newAccount(store);
        const w1 = newWebhook(a.id, { created_at: '2026-01-01T00:00:00.000Z' });
        const w2 = newWebhook(a.id, { created_at: '2026-01-02T00:00:00.000Z', events: ['job.failed'], url: 'http://other.example.org:8080/h?x=1' });
        await store.createWebhook(w1);
        await store.createWebhook(w2);
        assert.deepEqual(await store.getWebhook(a.id, w1.id), w1);
        assert.deepEqual(await store.listWebhooks(a.id), [w2, w1]);
        assert.deepEqual(await store.listWebhooks(b.id), []);
        assert.equal(await store.getWebhook(b.id, w1.id), null);
        const failed = newDelivery(w1, 1, {
          status_code: null, error: 'fetch_failed: connection refused', outcome: 'will_retry', next_attempt_at: '2026-11-26T10:00:06.000Z', event: 'job.changed', attempt: 2, duration_ms: 3,
        });
        await store.addWebhookDelivery(failed);
        assert.deepEqual(await store.listWebhookDeliveries(a.id, w1.id, 10), [failed]);
        assert.deepEqual(await store.listWebhookDeliveries(b.id, w1.id, 10), [], "another account's webhook has none");
        assert.equal(await store.deleteWebhook(b.id, w1.id), false);
        assert.deepEqual(await store.getWebhook(a.id, w1.id), w1);
        assert.equal((await store.listWebhookDeliveries(a.id, w1.id, 10)).length, 1);
        assert.equal(await store.deleteWebhook(a.id, w2.id), true);
        assert.equal(await store.deleteWebhook(a.id, w2.id), false);
        assert.equal(await store.getWebhook(a.id, w2.id), null);
        assert.deepEqual(await store.listWebhooks(a.id), [w1]);
        assert.deepEqual(await store.listWebhookDeliveries(a.id, randomUUID(), 10), []);
      });

      it(`lists delivery attempts newest first, at most limit; keeps the newest ${WEBHOOK_DELIVERIES_KEPT}; deletes them with the webhook`, async () => {
        const a = await newAccount(store);
        const w = newWebhook(a.id);
        const other = newWebhook(a.id);
        await store.createWebhook(w);
        await store.createWebhook(other);
        const attempts = Array.from({ length: WEBHOOK_DELIVERIES_KEPT + 5 }, (_, i) => newDelivery(w, i));
        for (const d of attempts) await store.addWebhookDelivery(d);
        await store.addWebhookDelivery(newDelivery(other, 0));
        // A limit past the API's 1-100, to see everything kept, not just the newest page.
        const kept = await store.listWebhookDeliveries(a.id, w.id, WEBHOOK_DELIVERIES_KEPT + 50);
        assert.equal(kept.length, WEBHOOK_DELIVERIES_KEPT, 'the older attempts are dropped');
        assert.deepEqual(await store.listWebhookDeliveries(a.id, w.id, 100), kept.slice(0, 100));
        assert.deepEqual(kept.map((d) => d.id), attempts.slice(5).reverse().map((d) => d.id), 'the newest, newest first');
        assert.deepEqual(await store.listWebhookDeliveries(a.id, w.id, 3), attempts.slice(-3).reverse());
        assert.equal((await store.listWebhookDeliveries(a.id, other.id, 100)).length, 1, "another webhook's attempts are its own");
        assert.equal(await store.deleteWebhook(a.id, w.id), true);
        assert.deepEqual(await store.listWebhookDeliveries(a.id, w.id, 100), []);
        // The attempts are gone, not just hidden: a webhook made again with the same id has none.
        await store.createWebhook(w);
        assert.deepEqual(await store.listWebhookDeliveries(a.id, w.id, 100), []);
        assert.equal((await store.listWebhookDeliveries(a.id, other.id, 100)).length, 1);
      });
    });
  });
}

/** Runs one race script against a store; returns the number of successful operations. */
export async function runRaceScript(store: Store, s: RaceScript): Promise<number> {
  if (s.op === 'consume') {
    let ok = 0;
    for (let i = 0; i < s.times; i++) if ((await store.consume(s.accountId, s.counter, s.amount, s.limit)).ok) ok++;
    return ok;
  }
  if (s.op === 'slot') return (await store.acquireJobSlot(s.accountId, randomUUID(), s.limit, s.until, s.now)).ok ? 1 : 0;
  if (s.op === 'claim') {
    return (await store.updateSchedule(s.accountId, s.scheduleId, { last_fired_at: s.firedAt, fired_count: 1 }, s.ifLastFiredAt)) ? 1 : 0;
  }
  return (await store.updateJob(s.jobId, ['running'], { status: s.status, completed_at: new Date().toISOString() })) ? 1 : 0;
}
