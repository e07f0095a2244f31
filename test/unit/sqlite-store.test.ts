/** The Store contract on the local SQLite store; races run in worker threads with their own connections. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';
import { storeContract } from '../contract/store.contract.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-store-'));
const file = path.join(dir, 'contract.db');
let store: SqliteStore | null = null;

storeContract('SQLite (node:sqlite, WAL)', {
  async makeStore() {
    store = new SqliteStore(file);
    return store;
  },
  race(n, script) {
    const startAt = Date.now() + 300;
    return Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
      const w = new Worker(new URL('../contract/sqlite-racer.ts', import.meta.url), { workerData: { file, script, startAt } });
      w.once('message', resolve);
      w.once('error', reject);
    })));
  },
  async cleanup() {
    store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  },
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';

describe('SQLite schema migrations', () => {
  it('upgrades a version 2 file in place: its jobs get a prompt column, null for the old ones', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-migrate-')), 'v2.db');
    const store = new SqliteStore(file);
    const a = await store.createAccount({ email: 'v2@x.test', first_name: '', last_name: '', plan: 'pro', password_hash: 'h', api_key_digest: null, api_key_sealed: null });
    store.db.exec(`ALTER TABLE jobs DROP COLUMN prompt; UPDATE meta SET value = '2' WHERE key = 'schema_version';`);
    store.db.prepare(`INSERT INTO jobs (id, account_id, job_type, status, target_url, yaml_content, created_at, updated_at) VALUES ('j1', ?, 'run', 'completed', 'https://e/', 'y', 'now', 'now')`).run(a.id);
    store.close();
    const upgraded = new SqliteStore(file);
    assert.equal((await upgraded.getJobById('j1'))?.prompt, null);
    assert.equal((upgraded.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string }).value, '8');
    upgraded.close();
  });

  it('upgrades a version 3 file in place: its jobs get a changes column, null for the old ones; the config_last_runs table is made', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-migrate-')), 'v3.db');
    const store = new SqliteStore(file);
    const a = await store.createAccount({ email: 'v3@x.test', first_name: '', last_name: '', plan: 'pro', password_hash: 'h', api_key_digest: null, api_key_sealed: null });
    store.db.exec(`ALTER TABLE jobs DROP COLUMN changes; DROP TABLE config_last_runs; UPDATE meta SET value = '3' WHERE key = 'schema_version';`);
    store.db.prepare(`INSERT INTO jobs (id, account_id, job_type, status, target_url, yaml_content, created_at, updated_at) VALUES ('j1', ?, 'run', 'completed', 'https://e/', 'y', 'now', 'now')`).run(a.id);
    store.close();
    const upgraded = new SqliteStore(file);
    assert.equal((await upgraded.getJobById('j1'))?.changes, null);
    assert.equal(await upgraded.setConfigLastRun(a.id, 'c1', { job_id: 'j1', completed_at: '2026-11-26T00:00:00.000Z' }), true);
    assert.equal((await upgraded.getConfigLastRun(a.id, 'c1'))?.job_id, 'j1');
    assert.equal((upgraded.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string }).value, '8');
    upgraded.close();
  });

  it('upgrades a version 4 file in place: its jobs get a schedule_id column, null for the old ones; the schedule and webhook tables are made', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-migrate-')), 'v4.db');
    const store = new SqliteStore(file);
    const a = await store.createAccount({ email: 'v4@x.test', first_name: '', last_name: '', plan: 'pro', password_hash: 'h', api_key_digest: null, api_key_sealed: null });
    store.db.exec(`ALTER TABLE jobs DROP COLUMN schedule_id; DROP TABLE schedules; DROP TABLE webhook_deliveries; DROP TABLE webhooks;
      UPDATE meta SET value = '4' WHERE key = 'schema_version';`);
    store.db.prepare(`INSERT INTO jobs (id, account_id, job_type, status, target_url, yaml_content, created_at, updated_at) VALUES ('j1', ?, 'run', 'completed', 'https://e/', 'y', 'now', 'now')`).run(a.id);
    store.close();
    const upgraded = new SqliteStore(file);
    assert.equal((await upgraded.getJobById('j1'))?.schedule_id, null);
    const now = new Date().toISOString();
    await upgraded.createSchedule({ id: 's1', account_id: a.id, config_id: 'c1', cron: '0 * * * *', timezone: 'UTC', enabled: true, next_run_at: now, last_fired_at: null,
      since: now, paused: null, fired_count: 0, skipped_count: 0, recent_jobs: [], created_at: now, updated_at: now });
    assert.deepEqual((await upgraded.listDueSchedules(now, 10)).map((s) => s.id), ['s1']);
    await upgraded.createWebhook({ id: 'w1', account_id: a.id, url: 'https://h.example/', events: ['job.failed'], secret_sealed: 'v1.x', created_at: now });
    assert.equal((await upgraded.listWebhooks(a.id)).length, 1);
    assert.equal((upgraded.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string }).value, '8');
    upgraded.close();
  });

  it('upgrades a version 5 file in place: its jobs get the run columns of a generate job that runs its config, null for the old ones', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-migrate-')), 'v5.db');
    const store = new SqliteStore(file);
    const a = await store.createAccount({ email: 'v5@x.test', first_name: '', last_name: '', plan: 'pro', password_hash: 'h', api_key_digest: null, api_key_sealed: null });
    store.db.exec(`ALTER TABLE jobs DROP COLUMN run_requested; ALTER TABLE jobs DROP COLUMN run_job_id; ALTER TABLE jobs DROP COLUMN run_error;
      UPDATE meta SET value = '5' WHERE key = 'schema_version';`);
    store.db.prepare(`INSERT INTO jobs (id, account_id, job_type, status, target_url, yaml_content, created_at, updated_at) VALUES ('j1', ?, 'generate', 'completed', 'https://e/', 'y', 'now', 'now')`).run(a.id);
    store.close();
    const upgraded = new SqliteStore(file);
    const old = await upgraded.getJobById('j1');
    assert.deepEqual([old?.run_requested, old?.run_job_id, old?.run_error], [null, null, null]);
    assert.equal((upgraded.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string }).value, '8');
    upgraded.close();
  });

  it('upgrades a version 6 file in place: its jobs get config_name and warnings columns, null for the old ones', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-migrate-')), 'v6.db');
    const store = new SqliteStore(file);
    const a = await store.createAccount({ email: 'v6@x.test', first_name: '', last_name: '', plan: 'pro', password_hash: 'h', api_key_digest: null, api_key_sealed: null });
    store.db.exec(`ALTER TABLE jobs DROP COLUMN config_name; ALTER TABLE jobs DROP COLUMN warnings; UPDATE meta SET value = '6' WHERE key = 'schema_version';`);
    store.db.prepare(`INSERT INTO jobs (id, account_id, job_type, status, target_url, yaml_content, created_at, updated_at) VALUES ('j1', ?, 'run', 'completed', 'https://e/', 'y', 'now', 'now')`).run(a.id);
    store.close();
    const upgraded = new SqliteStore(file);
    const old = await upgraded.getJobById('j1');
    assert.deepEqual([old?.config_name, old?.warnings], [null, null]);
    assert.equal((upgraded.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string }).value, '8');
    upgraded.close();
  });

  it('upgrades a version 7 file in place: its jobs get an example_urls column, null for the old ones (issue 36)', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-migrate-')), 'v7.db');
    const store = new SqliteStore(file);
    const a = await store.createAccount({ email: 'v7@x.test', first_name: '', last_name: '', plan: 'pro', password_hash: 'h', api_key_digest: null, api_key_sealed: null });
    store.db.exec(`ALTER TABLE jobs DROP COLUMN example_urls; UPDATE meta SET value = '7' WHERE key = 'schema_version';`);
    store.db.prepare(`INSERT INTO jobs (id, account_id, job_type, status, target_url, yaml_content, created_at, updated_at) VALUES ('j1', ?, 'generate', 'completed', 'https://e/', 'y', 'now', 'now')`).run(a.id);
    store.close();
    const upgraded = new SqliteStore(file);
    assert.equal((await upgraded.getJobById('j1'))?.example_urls, null);
    assert.equal((upgraded.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string }).value, '8');
    upgraded.close();
  });

  it('upgrades a version 1 file in place, keeping its accounts', async () => {
    const v1 = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-migrate-')), 'v1.db');
    const db = new DatabaseSync(v1);
    db.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO meta VALUES ('schema_version', '1');
      CREATE TABLE accounts (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL, email_lower TEXT NOT NULL UNIQUE,
        first_name TEXT NOT NULL DEFAULT '', last_name TEXT NOT NULL DEFAULT '', plan TEXT NOT NULL, password_hash TEXT NOT NULL,
        api_key_digest TEXT UNIQUE, api_key_sealed TEXT, created_at TEXT NOT NULL);
      INSERT INTO accounts (email, email_lower, plan, password_hash, created_at) VALUES ('Old@x.test', 'old@x.test', 'pro', 'h', '2026-01-01T00:00:00.000Z');`);
    db.close();
    const upgraded = new SqliteStore(v1);
    const a = await upgraded.getAccountByEmail('old@x.test');
    assert.equal(a?.plan, 'pro');
    assert.equal(a?.usage_key_id, null);
    assert.equal((await upgraded.updateAccount(a!.id, { usage_key_id: 'k1', usage_key_value: 'v1' }))?.usage_key_value, 'v1');
    assert.equal((upgraded.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string }).value, '8');
    upgraded.close();
  });
});
