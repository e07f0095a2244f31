/**
 * The local store: SQLite through `node:sqlite` (built into Node 22.13+), in WAL mode so that readers
 * (status polls on the HTTP thread) never wait for the writer (a worker thread saving progress).
 *
 * Each thread opens its own connection to the same file; SQLite serializes writers, and every
 * multi-statement change runs in `BEGIN IMMEDIATE`, so the conditional writes of the Store contract
 * (job transitions, metering) hold across threads and processes (the accounts CLI writes while the
 * service runs).
 *
 * `node:sqlite` rather than the better-sqlite3 add-on: the same SQLite with no
 * native add-on to compile (an add-on built against the machine's Node 20 headers would not load in
 * Node 24). See docs/decisions.md.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { createPrivateFile, DIR_MODE } from './data-dir.ts';
import { statementCache } from './statements.ts';
import {
  ConflictError, WEBHOOK_DELIVERIES_KEPT, type AccountPatch, type AccountRecord, type ConfigLastRun, type ConfigRecord, type JobChanges, type JobRecord, type JobStatus,
  type JobUpdate, type Page, type SchedulePatch, type ScheduleRecord, type Store, type WebhookDeliveryRecord, type WebhookRecord,
} from '../../core/ports.ts';

const SCHEMA_VERSION = 8;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  email TEXT NOT NULL,
  email_lower TEXT NOT NULL UNIQUE,
  first_name TEXT NOT NULL DEFAULT '',
  last_name TEXT NOT NULL DEFAULT '',
  plan TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  api_key_digest TEXT UNIQUE,
  api_key_sealed TEXT,
  usage_key_id TEXT,
  usage_key_value TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS configs (
  id TEXT PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  target_url TEXT NOT NULL,
  yaml_content TEXT NOT NULL,
  prompt TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS configs_by_account ON configs (account_id, created_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  job_type TEXT NOT NULL,
  status TEXT NOT NULL,
  progress INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  status_message TEXT NOT NULL DEFAULT '',
  items_found INTEGER NOT NULL DEFAULT 0,
  pages_scraped INTEGER NOT NULL DEFAULT 0,
  api_discovered INTEGER NOT NULL DEFAULT 0,
  target_url TEXT NOT NULL,
  config_id TEXT,
  yaml_content TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  row_count INTEGER NOT NULL DEFAULT 0,
  results_key TEXT,
  prompt TEXT,
  changes TEXT,
  schedule_id TEXT,
  run_requested INTEGER,
  run_job_id TEXT,
  run_error TEXT,
  config_name TEXT,
  warnings TEXT,
  example_urls TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_account ON jobs (account_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status);
CREATE TABLE IF NOT EXISTS counters (
  account_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  value INTEGER NOT NULL,
  expires_at TEXT,
  PRIMARY KEY (account_id, name)
);
CREATE TABLE IF NOT EXISTS config_last_runs (
  account_id INTEGER NOT NULL,
  config_id TEXT NOT NULL,
  job_id TEXT NOT NULL,
  completed_at TEXT NOT NULL,
  PRIMARY KEY (account_id, config_id)
);
CREATE TABLE IF NOT EXISTS job_slots (
  account_id INTEGER NOT NULL,
  holder TEXT NOT NULL,
  until TEXT NOT NULL,
  PRIMARY KEY (account_id, holder)
);
CREATE TABLE IF NOT EXISTS schedules (
  id TEXT PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  config_id TEXT NOT NULL,
  cron TEXT NOT NULL,
  timezone TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  next_run_at TEXT,
  last_fired_at TEXT,
  since TEXT NOT NULL,
  paused TEXT,
  fired_count INTEGER NOT NULL DEFAULT 0,
  skipped_count INTEGER NOT NULL DEFAULT 0,
  recent_jobs TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS schedules_by_account ON schedules (account_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS schedules_due ON schedules (enabled, next_run_at);
CREATE TABLE IF NOT EXISTS webhooks (
  id TEXT PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret_sealed TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_by_account ON webhooks (account_id, created_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  account_id INTEGER NOT NULL,
  message_id TEXT NOT NULL,
  event TEXT NOT NULL,
  job_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  attempted_at TEXT NOT NULL,
  status_code INTEGER,
  duration_ms REAL NOT NULL,
  error TEXT,
  outcome TEXT NOT NULL,
  next_attempt_at TEXT
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, attempted_at DESC, id DESC);
`;

/** Adds a column unless the table has it (a table the schema just made has every column already). */
function addColumn(db: DatabaseSync, table: string, column: string, type: string): void {
  const has = (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some((c) => c.name === column);
  if (!has) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
}

/** Changes from one schema version to the next, applied in order to older files. */
const MIGRATIONS: Record<number, (db: DatabaseSync) => void> = {
  // 1 -> 2: per-account API Gateway usage keys.
  2: (db) => { addColumn(db, 'accounts', 'usage_key_id', 'TEXT'); addColumn(db, 'accounts', 'usage_key_value', 'TEXT'); },
  // 2 -> 3: generate jobs keep their prompt.
  3: (db) => addColumn(db, 'jobs', 'prompt', 'TEXT'),
  // 3 -> 4: what a completed run changed (issue 26); the config_last_runs table is made by the schema.
  4: (db) => addColumn(db, 'jobs', 'changes', 'TEXT'),
  // 4 -> 5: schedules and webhooks (issue 26); their tables are made by the schema, a run job names its schedule.
  5: (db) => addColumn(db, 'jobs', 'schedule_id', 'TEXT'),
  // 5 -> 6: a generate job that runs the config it saves (issue 40).
  6: (db) => { addColumn(db, 'jobs', 'run_requested', 'INTEGER'); addColumn(db, 'jobs', 'run_job_id', 'TEXT'); addColumn(db, 'jobs', 'run_error', 'TEXT'); },
  // 6 -> 7: the job list names the config and counts a run's warnings (issue 40).
  7: (db) => { addColumn(db, 'jobs', 'config_name', 'TEXT'); addColumn(db, 'jobs', 'warnings', 'TEXT'); },
  // 7 -> 8: a generate job's other pages of the template (issue 36, `example_urls`).
  8: (db) => addColumn(db, 'jobs', 'example_urls', 'TEXT'),
};

/** Opens a SQLite database file with the settings every connection of this service uses. */
function openDatabase(file: string): DatabaseSync {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: DIR_MODE });
  // Made 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database file's mode.
  createPrivateFile(file);
  const db = new DatabaseSync(file, { timeout: 10_000 });
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;');
  return db;
}

/** Runs `fn` in a write transaction taken at once (BEGIN IMMEDIATE), so read-then-write is atomic. */
export function immediate<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const out = fn();
    db.exec('COMMIT');
    return out;
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

type SqlRow = Record<string, SQLInputValue>;

function toJob(r: SqlRow | undefined): JobRecord | null {
  if (!r) return null;
  return {
    ...(r as unknown as JobRecord), api_discovered: r.api_discovered === 1, changes: typeof r.changes === 'string' ? JSON.parse(r.changes) as JobChanges : null,
    run_requested: r.run_requested === null || r.run_requested === undefined ? null : r.run_requested === 1,
    warnings: typeof r.warnings === 'string' ? JSON.parse(r.warnings) as string[] : null,
    example_urls: typeof r.example_urls === 'string' ? JSON.parse(r.example_urls) as string[] : null,
  };
}

/** The schedule fields a patch may change, and their columns (booleans as 0/1, structured fields as JSON text). */
const SCHEDULE_PATCH_FIELDS = ['cron', 'timezone', 'enabled', 'next_run_at', 'last_fired_at', 'since', 'paused', 'fired_count', 'skipped_count', 'recent_jobs', 'updated_at'] as const;
// Every patchable field is listed: a field added to SchedulePatch fails to compile here until it is.
const _schedulePatchFieldsComplete: Exclude<keyof SchedulePatch, (typeof SCHEDULE_PATCH_FIELDS)[number]> extends never ? true : never = true;

function scheduleColumn(field: (typeof SCHEDULE_PATCH_FIELDS)[number], value: SchedulePatch[keyof SchedulePatch]): SQLInputValue {
  if (field === 'enabled') return value ? 1 : 0;
  if (field === 'paused') return value == null ? null : JSON.stringify(value);
  if (field === 'recent_jobs') return JSON.stringify(value ?? []);
  return (value ?? null) as SQLInputValue;
}

function toSchedule(r: SqlRow | undefined): ScheduleRecord | null {
  if (!r) return null;
  return {
    ...(r as unknown as ScheduleRecord),
    enabled: r.enabled === 1,
    paused: typeof r.paused === 'string' ? JSON.parse(r.paused) as ScheduleRecord['paused'] : null,
    recent_jobs: typeof r.recent_jobs === 'string' ? JSON.parse(r.recent_jobs) as ScheduleRecord['recent_jobs'] : [],
  };
}

function toWebhook(r: SqlRow | undefined): WebhookRecord | null {
  if (!r) return null;
  return { ...(r as unknown as WebhookRecord), events: JSON.parse(String(r.events)) as WebhookRecord['events'] };
}

function toAccount(r: SqlRow | undefined): AccountRecord | null {
  if (!r) return null;
  const { email_lower: _omit, ...rest } = r;
  return rest as unknown as AccountRecord;
}

/** Opaque list cursor: base64url of `created_at|id` of the last item of the previous page. */
function encodeCursor(j: JobRecord): string {
  return Buffer.from(`${j.created_at}|${j.id}`).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] | null {
  const s = Buffer.from(cursor, 'base64url').toString('utf8');
  const i = s.lastIndexOf('|');
  if (i <= 0 || !/^\d{4}-\d\d-\d\dT/.test(s)) return null;
  return [s.slice(0, i), s.slice(i + 1)];
}

/** Thrown for a cursor that this store did not make; the HTTP layer answers 400. */
class BadCursorError extends Error {
  override name = 'BadCursorError';
}

/**
 * {@link Store} on SQLite.
 *
 * **Example usage:**
 * ```ts
 * const store = new SqliteStore('./data/scrape-ai.db');
 * const account = await store.getAccountByEmail('a@example.com');
 * ```
 */
export class SqliteStore implements Store {
  readonly db: DatabaseSync;
  private readonly q: (sql: string) => StatementSync;

  /** @param file the database file (created with its schema when absent), or `:memory:`. */
  constructor(file: string) {
    this.db = file === ':memory:' ? new DatabaseSync(':memory:') : openDatabase(file);
    this.q = statementCache(this.db);
    immediate(this.db, () => {
      this.db.exec(SCHEMA);
      const v = this.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as { value: string } | undefined;
      if (v && Number(v.value) > SCHEMA_VERSION) {
        throw new Error(`The database ${file} has schema version ${v.value}, newer than this code (${SCHEMA_VERSION}); upgrade scrape-ai`);
      }
      for (let next = (v ? Number(v.value) : SCHEMA_VERSION) + 1; next <= SCHEMA_VERSION; next++) MIGRATIONS[next]!(this.db);
      this.db.prepare(`INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)`).run(String(SCHEMA_VERSION));
    });
  }

  close(): void {
    this.db.close();
  }

  /**
   * A setting that belongs to the data, not to one start (the billing variant, runtime.ts): the stored
   * value, or `value` when none was stored yet, which is stored then. Atomic across processes: of two
   * first starts, one value wins and both get it.
   */
  /** A setting of the `meta` table, or null. */
  getSetting(key: string): string | null {
    return (this.q('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value ?? null;
  }

  /** Writes a setting of the `meta` table. */
  setSetting(key: string, value: string): void {
    this.q('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  pinSetting(key: string, value: string): string {
    return immediate(this.db, () => {
      this.q('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING').run(key, value);
      return (this.q('SELECT value FROM meta WHERE key = ?').get(key) as { value: string }).value;
    });
  }

  async createAccount(a: Omit<AccountRecord, 'id' | 'created_at' | 'usage_key_id' | 'usage_key_value'>): Promise<AccountRecord> {
    const created_at = new Date().toISOString();
    try {
      const r = this.q(`INSERT INTO accounts (email, email_lower, first_name, last_name, plan, password_hash, api_key_digest, api_key_sealed, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`).get(
        a.email, a.email.toLowerCase(), a.first_name, a.last_name, a.plan, a.password_hash, a.api_key_digest, a.api_key_sealed, created_at) as SqlRow;
      return toAccount(r)!;
    } catch (err) {
      if (/UNIQUE constraint failed: accounts.email_lower/.test((err as Error).message)) throw new ConflictError(`email ${a.email} exists`);
      throw err;
    }
  }

  async getAccount(id: number): Promise<AccountRecord | null> {
    return toAccount(this.q('SELECT * FROM accounts WHERE id = ?').get(id) as SqlRow | undefined);
  }

  async getAccountByEmail(email: string): Promise<AccountRecord | null> {
    return toAccount(this.q('SELECT * FROM accounts WHERE email_lower = ?').get(email.toLowerCase()) as SqlRow | undefined);
  }

  async getAccountByKeyDigest(digest: string): Promise<AccountRecord | null> {
    return toAccount(this.q('SELECT * FROM accounts WHERE api_key_digest = ?').get(digest) as SqlRow | undefined);
  }

  /** The plan name of an account, or null when there is no such account (synchronous: the local queue's group limits). */
  planOf(accountId: number): string | null {
    return (this.q('SELECT plan FROM accounts WHERE id = ?').get(accountId) as { plan: string } | undefined)?.plan ?? null;
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return (this.q('SELECT * FROM accounts ORDER BY id').all() as SqlRow[]).map((r) => toAccount(r)!);
  }

  async updateAccount(id: number, patch: AccountPatch): Promise<AccountRecord | null> {
    const keys = Object.keys(patch) as Array<keyof typeof patch>;
    if (!keys.length) return this.getAccount(id);
    const sql = `UPDATE accounts SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ? RETURNING *`;
    return toAccount(this.q(sql).get(...keys.map((k) => patch[k] as SQLInputValue), id) as SqlRow | undefined);
  }

  async createConfig(c: ConfigRecord): Promise<void> {
    this.q(`INSERT INTO configs (id, account_id, name, target_url, yaml_content, prompt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
      .run(c.id, c.account_id, c.name, c.target_url, c.yaml_content, c.prompt, c.created_at);
  }

  async getConfig(accountId: number, id: string): Promise<ConfigRecord | null> {
    return (this.q('SELECT * FROM configs WHERE id = ? AND account_id = ?').get(id, accountId) as unknown as ConfigRecord | undefined) ?? null;
  }

  async listConfigs(accountId: number): Promise<ConfigRecord[]> {
    return this.q('SELECT * FROM configs WHERE account_id = ? ORDER BY created_at DESC, id DESC').all(accountId) as unknown as ConfigRecord[];
  }

  async updateConfigYaml(accountId: number, id: string, yaml: string, prompt?: string | null): Promise<ConfigRecord | null> {
    if (prompt !== undefined) {
      return (this.q('UPDATE configs SET yaml_content = ?, prompt = ? WHERE id = ? AND account_id = ? RETURNING *').get(yaml, prompt, id, accountId) as unknown as ConfigRecord | undefined) ?? null;
    }
    return (this.q('UPDATE configs SET yaml_content = ? WHERE id = ? AND account_id = ? RETURNING *').get(yaml, id, accountId) as unknown as ConfigRecord | undefined) ?? null;
  }

  async deleteConfig(accountId: number, id: string): Promise<boolean> {
    this.q('DELETE FROM config_last_runs WHERE account_id = ? AND config_id = ?').run(accountId, id);
    return Number(this.q('DELETE FROM configs WHERE id = ? AND account_id = ?').run(id, accountId).changes) > 0;
  }

  async createJob(j: JobRecord): Promise<void> {
    this.q(`INSERT INTO jobs (id, account_id, job_type, status, progress, status_message, items_found, pages_scraped, api_discovered,
        target_url, config_id, yaml_content, created_at, updated_at, started_at, completed_at, attempts, row_count, results_key, prompt, schedule_id, run_requested, config_name, example_urls)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
      j.id, j.account_id, j.job_type, j.status, j.progress, j.status_message, j.items_found, j.pages_scraped, j.api_discovered ? 1 : 0,
      j.target_url, j.config_id, j.yaml_content, j.created_at, j.updated_at, j.started_at, j.completed_at, j.attempts, j.row_count, j.results_key, j.prompt ?? null, j.schedule_id ?? null,
      j.run_requested === undefined || j.run_requested === null ? null : j.run_requested ? 1 : 0, j.config_name ?? null,
      j.example_urls?.length ? JSON.stringify(j.example_urls) : null);
  }

  async getJob(accountId: number, id: string): Promise<JobRecord | null> {
    return toJob(this.q('SELECT * FROM jobs WHERE id = ? AND account_id = ?').get(id, accountId) as SqlRow | undefined);
  }

  async getJobById(id: string): Promise<JobRecord | null> {
    return toJob(this.q('SELECT * FROM jobs WHERE id = ?').get(id) as SqlRow | undefined);
  }

  async listJobs(accountId: number, limit: number, cursor?: string): Promise<Page<JobRecord>> {
    let rows: SqlRow[];
    if (cursor) {
      const c = decodeCursor(cursor);
      if (!c) throw new BadCursorError('invalid cursor');
      rows = this.q(`SELECT * FROM jobs WHERE account_id = ? AND (created_at < ? OR (created_at = ? AND id < ?))
        ORDER BY created_at DESC, id DESC LIMIT ?`).all(accountId, c[0], c[0], c[1], limit + 1) as SqlRow[];
    } else {
      rows = this.q('SELECT * FROM jobs WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?').all(accountId, limit + 1) as SqlRow[];
    }
    const items = rows.slice(0, limit).map((r) => toJob(r)!);
    return { items, next_cursor: rows.length > limit ? encodeCursor(items[items.length - 1]!) : null };
  }

  async countJobs(accountId: number): Promise<number> {
    return Number((this.q('SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?').get(accountId) as { n: number }).n);
  }

  async updateJob(id: string, fromStatuses: readonly JobStatus[], u: JobUpdate, attempt?: number): Promise<JobRecord | null> {
    const sets: string[] = ['updated_at = ?'];
    const args: SQLInputValue[] = [new Date().toISOString()];
    const plain = ['status', 'status_message', 'items_found', 'pages_scraped', 'completed_at', 'row_count', 'results_key', 'config_id', 'yaml_content', 'run_job_id', 'run_error', 'config_name'] as const;
    for (const k of plain) {
      if (u[k] !== undefined) {
        sets.push(`${k} = ?`);
        args.push(u[k] as SQLInputValue);
      }
    }
    if (u.started_at !== undefined) {
      // started_at is kept from the first attempt.
      sets.push('started_at = COALESCE(started_at, ?)');
      args.push(u.started_at);
    }
    if (u.api_discovered !== undefined) {
      sets.push('api_discovered = ?');
      args.push(u.api_discovered ? 1 : 0);
    }
    if (u.progress !== undefined) {
      sets.push('progress = MAX(progress, ?)');
      args.push(Math.max(0, Math.min(100, Math.round(u.progress))));
    }
    if (u.increment_attempts) sets.push('attempts = attempts + 1');
    if (u.changes !== undefined) {
      sets.push('changes = ?');
      args.push(JSON.stringify(u.changes));
    }
    if (u.warnings !== undefined) {
      sets.push('warnings = ?');
      args.push(JSON.stringify(u.warnings));
    }
    const sql = `UPDATE jobs SET ${sets.join(', ')}
      WHERE id = ? AND status IN (${fromStatuses.map(() => '?').join(', ')})${attempt === undefined ? '' : ' AND attempts = ?'} RETURNING *`;
    const where: SQLInputValue[] = attempt === undefined ? [id, ...fromStatuses] : [id, ...fromStatuses, attempt];
    return toJob(this.q(sql).get(...args, ...where) as SqlRow | undefined);
  }

  async listJobsByStatus(statuses: readonly JobStatus[]): Promise<JobRecord[]> {
    const sql = `SELECT * FROM jobs WHERE status IN (${statuses.map(() => '?').join(', ')}) ORDER BY created_at`;
    return (this.q(sql).all(...statuses) as SqlRow[]).map((r) => toJob(r)!);
  }

  async consume(accountId: number, counter: string, amount: number, limit: number, expiresAt?: string): Promise<{ ok: boolean; used: number }> {
    // One statement: insert-or-add under the limit. SQLite runs it atomically, so no two callers
    // can both see "room left" for the same unit.
    const r = this.q(`INSERT INTO counters (account_id, name, value, expires_at) SELECT ?, ?, ?, ? WHERE ? <= ?
        ON CONFLICT (account_id, name) DO UPDATE SET value = value + excluded.value WHERE value + excluded.value <= ?
        RETURNING value`).get(accountId, counter, amount, expiresAt ?? null, amount, limit, limit) as { value: number } | undefined;
    if (r) return { ok: true, used: Number(r.value) };
    return { ok: false, used: await this.getCounter(accountId, counter) };
  }

  async refund(accountId: number, counter: string, amount: number): Promise<void> {
    this.q('UPDATE counters SET value = MAX(0, value - ?) WHERE account_id = ? AND name = ?').run(amount, accountId, counter);
  }

  /** Deletes counters whose period is over (hourly rate windows, past months). @returns how many. */
  deleteExpiredCounters(now = new Date()): number {
    return Number(this.q('DELETE FROM counters WHERE expires_at IS NOT NULL AND expires_at < ?').run(now.toISOString()).changes);
  }

  async getCounter(accountId: number, counter: string): Promise<number> {
    const r = this.q('SELECT value FROM counters WHERE account_id = ? AND name = ?').get(accountId, counter) as { value: number } | undefined;
    return r ? Number(r.value) : 0;
  }

  async acquireJobSlot(accountId: number, holder: string, limit: number, until: string, now: string): Promise<{ ok: boolean; running: number }> {
    // One write transaction: the count and the insert cannot interleave with another connection's.
    return immediate(this.db, () => {
      this.q('DELETE FROM job_slots WHERE account_id = ? AND until <= ?').run(accountId, now);
      const live = Number((this.q('SELECT COUNT(*) AS n FROM job_slots WHERE account_id = ?').get(accountId) as { n: number }).n);
      if (Number(this.q('UPDATE job_slots SET until = ? WHERE account_id = ? AND holder = ?').run(until, accountId, holder).changes) > 0) {
        return { ok: true, running: live };
      }
      if (live >= limit) return { ok: false, running: live };
      this.q('INSERT INTO job_slots (account_id, holder, until) VALUES (?, ?, ?)').run(accountId, holder, until);
      return { ok: true, running: live + 1 };
    });
  }

  async releaseJobSlot(accountId: number, holder: string): Promise<void> {
    this.q('DELETE FROM job_slots WHERE account_id = ? AND holder = ?').run(accountId, holder);
  }

  async countJobSlots(accountId: number, now: string): Promise<number> {
    return Number((this.q('SELECT COUNT(*) AS n FROM job_slots WHERE account_id = ? AND until > ?').get(accountId, now) as { n: number }).n);
  }

  async getConfigLastRun(accountId: number, configId: string): Promise<ConfigLastRun | null> {
    const r = this.q('SELECT job_id, completed_at FROM config_last_runs WHERE account_id = ? AND config_id = ?').get(accountId, configId) as ConfigLastRun | undefined;
    return r ? { job_id: r.job_id, completed_at: r.completed_at } : null;
  }

  async setConfigLastRun(accountId: number, configId: string, run: ConfigLastRun): Promise<boolean> {
    const r = this.q(`INSERT INTO config_last_runs (account_id, config_id, job_id, completed_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (account_id, config_id) DO UPDATE SET job_id = excluded.job_id, completed_at = excluded.completed_at
      WHERE excluded.completed_at >= config_last_runs.completed_at`).run(accountId, configId, run.job_id, run.completed_at);
    return Number(r.changes) > 0;
  }

  async createSchedule(s: ScheduleRecord): Promise<void> {
    this.q(`INSERT INTO schedules (id, account_id, config_id, cron, timezone, enabled, next_run_at, last_fired_at, since, paused, fired_count, skipped_count,
        recent_jobs, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
      s.id, s.account_id, s.config_id, s.cron, s.timezone, s.enabled ? 1 : 0, s.next_run_at, s.last_fired_at, s.since, scheduleColumn('paused', s.paused),
      s.fired_count, s.skipped_count, scheduleColumn('recent_jobs', s.recent_jobs), s.created_at, s.updated_at);
  }

  async getSchedule(accountId: number, id: string): Promise<ScheduleRecord | null> {
    return toSchedule(this.q('SELECT * FROM schedules WHERE id = ? AND account_id = ?').get(id, accountId) as SqlRow | undefined);
  }

  async listSchedules(accountId: number): Promise<ScheduleRecord[]> {
    return (this.q('SELECT * FROM schedules WHERE account_id = ? ORDER BY created_at DESC, id DESC').all(accountId) as SqlRow[]).map((r) => toSchedule(r)!);
  }

  async updateSchedule(accountId: number, id: string, patch: SchedulePatch, ifLastFiredAt?: string | null): Promise<ScheduleRecord | null> {
    const fields = SCHEDULE_PATCH_FIELDS.filter((k) => patch[k] !== undefined);
    // One statement, so the claim of a firing is atomic; `IS` compares NULL with NULL as equal (`=` would not).
    const condition = ifLastFiredAt === undefined ? '' : ' AND last_fired_at IS ?';
    const where: SQLInputValue[] = ifLastFiredAt === undefined ? [id, accountId] : [id, accountId, ifLastFiredAt];
    if (!fields.length) return toSchedule(this.q(`SELECT * FROM schedules WHERE id = ? AND account_id = ?${condition}`).get(...where) as SqlRow | undefined);
    const sql = `UPDATE schedules SET ${fields.map((k) => `${k} = ?`).join(', ')} WHERE id = ? AND account_id = ?${condition} RETURNING *`;
    return toSchedule(this.q(sql).get(...fields.map((k) => scheduleColumn(k, patch[k])), ...where) as SqlRow | undefined);
  }

  async deleteSchedule(accountId: number, id: string): Promise<boolean> {
    return Number(this.q('DELETE FROM schedules WHERE id = ? AND account_id = ?').run(id, accountId).changes) > 0;
  }

  async listDueSchedules(now: string, limit: number): Promise<ScheduleRecord[]> {
    // Served by the schedules_due index (enabled, next_run_at).
    return (this.q('SELECT * FROM schedules WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at, id LIMIT ?')
      .all(now, limit) as SqlRow[]).map((r) => toSchedule(r)!);
  }

  async createWebhook(w: WebhookRecord): Promise<void> {
    this.q('INSERT INTO webhooks (id, account_id, url, events, secret_sealed, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(w.id, w.account_id, w.url, JSON.stringify(w.events), w.secret_sealed, w.created_at);
  }

  async getWebhook(accountId: number, id: string): Promise<WebhookRecord | null> {
    return toWebhook(this.q('SELECT * FROM webhooks WHERE id = ? AND account_id = ?').get(id, accountId) as SqlRow | undefined);
  }

  async listWebhooks(accountId: number): Promise<WebhookRecord[]> {
    return (this.q('SELECT * FROM webhooks WHERE account_id = ? ORDER BY created_at DESC, id DESC').all(accountId) as SqlRow[]).map((r) => toWebhook(r)!);
  }

  async deleteWebhook(accountId: number, id: string): Promise<boolean> {
    return immediate(this.db, () => {
      if (Number(this.q('DELETE FROM webhooks WHERE id = ? AND account_id = ?').run(id, accountId).changes) === 0) return false;
      this.q('DELETE FROM webhook_deliveries WHERE webhook_id = ?').run(id);
      return true;
    });
  }

  /** An attempt for a webhook that is gone (deleted while the attempt ran) is not kept: nothing would ever trim it. */
  async addWebhookDelivery(d: WebhookDeliveryRecord): Promise<void> {
    immediate(this.db, () => {
      const added = this.q(`INSERT INTO webhook_deliveries (id, webhook_id, account_id, message_id, event, job_id, attempt, attempted_at, status_code, duration_ms,
          error, outcome, next_attempt_at) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND account_id = ?)`).run(
        d.id, d.webhook_id, d.account_id, d.message_id, d.event, d.job_id, d.attempt, d.attempted_at, d.status_code, d.duration_ms,
        d.error, d.outcome, d.next_attempt_at, d.webhook_id, d.account_id);
      if (Number(added.changes) === 0) return;
      this.q(`DELETE FROM webhook_deliveries WHERE webhook_id = ? AND id NOT IN
        (SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY attempted_at DESC, id DESC LIMIT ?)`).run(d.webhook_id, d.webhook_id, WEBHOOK_DELIVERIES_KEPT);
    });
  }

  async listWebhookDeliveries(accountId: number, webhookId: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    const rows = this.q(`SELECT d.* FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.webhook_id = ? AND w.account_id = ? ORDER BY d.attempted_at DESC, d.id DESC LIMIT ?`).all(webhookId, accountId, limit) as SqlRow[];
    return rows.map((r) => ({ ...r }) as unknown as WebhookDeliveryRecord);
  }
}
