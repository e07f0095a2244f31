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
import type { JobRecord, Store } from '../../lambdas/core/ports.ts';

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
  | { op: 'slot'; accountId: number; limit: number; until: string; now: string };

function newJob(accountId: number, over: Partial<JobRecord> = {}): JobRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(), account_id: accountId, job_type: 'run', status: 'pending', progress: 0, status_message: 'Queued',
    items_found: 0, pages_scraped: 0, api_discovered: false, target_url: 'https://example.com/', config_id: null,
    yaml_content: 'target: {url: "https://example.com/"}', created_at: now, updated_at: now, started_at: null,
    completed_at: null, attempts: 0, row_count: 0, results_key: null, prompt: null, ...over,
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
  return (await store.updateJob(s.jobId, ['running'], { status: s.status, completed_at: new Date().toISOString() })) ? 1 : 0;
}
