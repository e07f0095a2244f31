/**
 * {@link Store} on one DynamoDB table (single-table design; keys and items in docs/dynamodb.md).
 *
 * Every race the contract names is a conditional write: email uniqueness (a guard item written in the
 * same transaction as the account), job transitions (`#status IN (...)`), progress that only goes up
 * (`progress <= :p`, retried without progress when a higher value is stored), and metering (the counter
 * is raised only while it stays within the limit), running-job slots (one item per slot number below the
 * account's limit, taken only while absent or past its lease), and the claim of a schedule's firing (`last_fired_at`
 * still the value the firer read). The same contract suite runs against this store on
 * DynamoDB Local and against the SQLite store.
 */
import { ConditionalCheckFailedException, DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand, DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, ScanCommand, TransactWriteCommand, UpdateCommand,
  type QueryCommandInput, type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  ConflictError, WEBHOOK_DELIVERIES_KEPT, type AccountPatch, type AccountRecord, type ConfigLastRun, type ConfigRecord, type JobRecord, type JobStatus, type JobUpdate,
  type Page, type SchedulePatch, type ScheduleRecord, type Store, type WebhookDeliveryRecord, type WebhookRecord,
} from '../../core/ports.ts';
import { GSI1, GSI2, KEYS } from './table.ts';

const FINISHED: readonly JobStatus[] = ['completed', 'failed'];

type Item = Record<string, unknown>;

/** Thrown for a list cursor that this store did not make; the HTTP layer answers 400 `invalid_cursor`. */
class BadCursorError extends Error {
  override name = 'BadCursorError';
}

const accountKey = (id: number) => ({ [KEYS.pk]: `ACCOUNT#${id}`, [KEYS.sk]: 'ACCOUNT' });
const emailKey = (email: string) => ({ [KEYS.pk]: `EMAIL#${email.toLowerCase()}`, [KEYS.sk]: 'EMAIL' });
const apiKeyKey = (digest: string) => ({ [KEYS.pk]: `APIKEY#${digest}`, [KEYS.sk]: 'APIKEY' });
const configKey = (accountId: number, id: string) => ({ [KEYS.pk]: `ACCOUNT#${accountId}`, [KEYS.sk]: `CONFIG#${id}` });
const jobKey = (id: string) => ({ [KEYS.pk]: `JOB#${id}`, [KEYS.sk]: 'JOB' });
const counterKey = (accountId: number, name: string) => ({ [KEYS.pk]: `ACCOUNT#${accountId}`, [KEYS.sk]: `COUNTER#${name}` });
const jobSlotKey = (accountId: number, slot: number) => ({ [KEYS.pk]: `ACCOUNT#${accountId}`, [KEYS.sk]: `JOBSLOT#${String(slot).padStart(4, '0')}` });
const jobsOf = (accountId: number) => `ACCOUNT#${accountId}#JOBS`;
const lastRunKey = (accountId: number, configId: string) => ({ [KEYS.pk]: `ACCOUNT#${accountId}`, [KEYS.sk]: `LASTRUN#${configId}` });
const scheduleKey = (accountId: number, id: string) => ({ [KEYS.pk]: `ACCOUNT#${accountId}`, [KEYS.sk]: `SCHEDULE#${id}` });
const webhookKey = (accountId: number, id: string) => ({ [KEYS.pk]: `ACCOUNT#${accountId}`, [KEYS.sk]: `WEBHOOK#${id}` });
/** A webhook's delivery attempts share its partition, sorted by time: a query newest first reads the latest. */
const deliveriesOf = (webhookId: string) => `WEBHOOK#${webhookId}`;
const deliveryKey = (d: WebhookDeliveryRecord) => ({ [KEYS.pk]: deliveriesOf(d.webhook_id), [KEYS.sk]: `DELIVERY#${d.attempted_at}#${d.id}` });
/** Days a delivery attempt is kept at most (DynamoDB's TTL); the newest WEBHOOK_DELIVERIES_KEPT are kept anyway until then. */
const DELIVERY_RETENTION_DAYS = 30;
/** Keys of delivery attempts beyond the kept ones that one trim reads (and deletes) at most. */
const DELIVERY_TRIM_BATCH = 50;

const ACCOUNT_FIELDS = ['id', 'email', 'first_name', 'last_name', 'plan', 'password_hash', 'api_key_digest', 'api_key_sealed', 'usage_key_id', 'usage_key_value', 'created_at'] as const;
const JOB_FIELDS = ['id', 'account_id', 'job_type', 'status', 'progress', 'status_message', 'items_found', 'pages_scraped', 'api_discovered', 'target_url',
  'config_id', 'yaml_content', 'created_at', 'updated_at', 'started_at', 'completed_at', 'attempts', 'row_count', 'results_key', 'prompt', 'changes', 'schedule_id',
  'run_requested', 'run_job_id', 'run_error', 'config_name', 'warnings', 'example_urls'] as const;

function pick<T>(item: Item | undefined, fields: readonly string[]): T | null {
  if (!item) return null;
  const out: Item = {};
  for (const f of fields) out[f] = item[f] ?? null;
  return out as T;
}

const toAccount = (item: Item | undefined) => pick<AccountRecord>(item, ACCOUNT_FIELDS);
const toJob = (item: Item | undefined) => pick<JobRecord>(item, JOB_FIELDS);
const CONFIG_FIELDS = ['id', 'account_id', 'name', 'target_url', 'yaml_content', 'prompt', 'created_at'] as const;
const toConfig = (item: Item | undefined) => pick<ConfigRecord>(item, CONFIG_FIELDS);

/**
 * Schedules: a null field (`next_run_at`, `last_fired_at`, `paused`) is stored as an absent attribute, never NULL, so
 * that one condition form holds for it (`attribute_not_exists(last_fired_at)` is the claim of a never-fired
 * schedule) and the due filter's comparison skips it.
 */
const SCHEDULE_FIELDS = ['id', 'account_id', 'config_id', 'cron', 'timezone', 'enabled', 'next_run_at', 'last_fired_at', 'since', 'paused', 'fired_count',
  'skipped_count', 'recent_jobs', 'created_at', 'updated_at'] as const;
/** The schedule fields a patch may change. */
const SCHEDULE_PATCH_FIELDS = ['cron', 'timezone', 'enabled', 'next_run_at', 'last_fired_at', 'since', 'paused', 'fired_count', 'skipped_count', 'recent_jobs', 'updated_at'] as const;
// Every patchable field is listed: a field added to SchedulePatch fails to compile here until it is.
const _schedulePatchFieldsComplete: Exclude<keyof SchedulePatch, (typeof SCHEDULE_PATCH_FIELDS)[number]> extends never ? true : never = true;
const toSchedule = (item: Item | undefined) => {
  const s = pick<ScheduleRecord>(item, SCHEDULE_FIELDS);
  return s && { ...s, recent_jobs: s.recent_jobs ?? [] };
};
const WEBHOOK_FIELDS = ['id', 'account_id', 'url', 'events', 'secret_sealed', 'created_at'] as const;
const toWebhook = (item: Item | undefined) => pick<WebhookRecord>(item, WEBHOOK_FIELDS);
const DELIVERY_FIELDS = ['id', 'webhook_id', 'account_id', 'message_id', 'event', 'job_id', 'attempt', 'attempted_at', 'status_code', 'duration_ms', 'error',
  'outcome', 'next_attempt_at'] as const;
const toDelivery = (item: Item | undefined) => pick<WebhookDeliveryRecord>(item, DELIVERY_FIELDS);

/** Newest first by `created_at`, then id (the SQLite store's order). */
function newestFirst<T extends { created_at: string; id: string }>(a: T, b: T): number {
  return a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1;
}

function isConditionFailure(err: unknown): boolean {
  return err instanceof ConditionalCheckFailedException || (err as { name?: string }).name === 'ConditionalCheckFailedException';
}

/** The index keys of an unfinished job (GSI2); a finished job has none, so the index stays small. */
function statusIndex(status: JobStatus, createdAt: string, id: string): Item {
  return FINISHED.includes(status) ? {} : { [KEYS.gsi2pk]: `STATUS#${status}`, [KEYS.gsi2sk]: `${createdAt}#${id}` };
}

export interface DynamoStoreOptions {
  tableName: string;
  /** A client (tests point one at DynamoDB Local); by default one from the environment. */
  client?: DynamoDBClient;
  /** Days a job is kept before DynamoDB's TTL deletes it; unset keeps jobs for ever. */
  jobRetentionDays?: number;
}

/**
 * **Example usage:**
 * ```ts
 * const store = new DynamoStore({ tableName: process.env.TABLE_NAME! });
 * const job = await store.getJob(accountId, jobId);
 * ```
 */
export class DynamoStore implements Store {
  readonly tableName: string;
  private readonly doc: DynamoDBDocumentClient;
  private readonly retentionDays: number | undefined;

  constructor(o: DynamoStoreOptions) {
    this.tableName = o.tableName;
    this.doc = DynamoDBDocumentClient.from(o.client ?? new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.retentionDays = o.jobRetentionDays;
  }

  private async get(key: Item): Promise<Item | undefined> {
    return (await this.doc.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
  }

  private async queryAll(input: Omit<QueryCommandInput, 'TableName'>): Promise<Item[]> {
    const out: Item[] = [];
    let start: Item | undefined;
    do {
      const r = await this.doc.send(new QueryCommand({ ...input, TableName: this.tableName, ExclusiveStartKey: start }));
      out.push(...(r.Items ?? []));
      start = r.LastEvaluatedKey;
    } while (start);
    return out;
  }

  async createAccount(a: Omit<AccountRecord, 'id' | 'created_at' | 'usage_key_id' | 'usage_key_value'>): Promise<AccountRecord> {
    if (await this.get(emailKey(a.email))) throw new ConflictError(`email ${a.email} exists`);
    // docs/spec.md wants integer user ids: a sequence item hands them out atomically.
    const seq = await this.doc.send(new UpdateCommand({
      TableName: this.tableName, Key: { [KEYS.pk]: 'SEQUENCE', [KEYS.sk]: 'ACCOUNT' },
      UpdateExpression: 'ADD #v :one', ExpressionAttributeNames: { '#v': 'value' }, ExpressionAttributeValues: { ':one': 1 }, ReturnValues: 'UPDATED_NEW',
    }));
    const id = Number(seq.Attributes!.value);
    const account: AccountRecord = { ...a, id, usage_key_id: null, usage_key_value: null, created_at: new Date().toISOString() };
    const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [
      { Put: { TableName: this.tableName, Item: { ...emailKey(a.email), account_id: id }, ConditionExpression: 'attribute_not_exists(PK)' } },
      { Put: { TableName: this.tableName, Item: { ...accountKey(id), ...account, [KEYS.gsi1pk]: 'ACCOUNTS', [KEYS.gsi1sk]: String(id).padStart(12, '0') }, ConditionExpression: 'attribute_not_exists(PK)' } },
    ];
    if (a.api_key_digest) items.push({ Put: { TableName: this.tableName, Item: { ...apiKeyKey(a.api_key_digest), account_id: id }, ConditionExpression: 'attribute_not_exists(PK)' } });
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (err) {
      if (err instanceof TransactionCanceledException && err.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed') {
        throw new ConflictError(`email ${a.email} exists`);
      }
      throw err;
    }
    return account;
  }

  async getAccount(id: number): Promise<AccountRecord | null> {
    return toAccount(await this.get(accountKey(id)));
  }

  async getAccountByEmail(email: string): Promise<AccountRecord | null> {
    const guard = await this.get(emailKey(email));
    return guard ? this.getAccount(Number(guard.account_id)) : null;
  }

  async getAccountByKeyDigest(digest: string): Promise<AccountRecord | null> {
    const guard = await this.get(apiKeyKey(digest));
    if (!guard) return null;
    const account = await this.getAccount(Number(guard.account_id));
    // A stale guard (a key replaced concurrently) never resolves to the account.
    return account && account.api_key_digest === digest ? account : null;
  }

  async listAccounts(): Promise<AccountRecord[]> {
    const items = await this.queryAll({ IndexName: GSI1, KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': KEYS.gsi1pk }, ExpressionAttributeValues: { ':pk': 'ACCOUNTS' } });
    return items.map((i) => toAccount(i)!);
  }

  async updateAccount(id: number, patch: AccountPatch): Promise<AccountRecord | null> {
    const keys = Object.keys(patch) as Array<keyof AccountPatch>;
    const current = await this.getAccount(id);
    if (!current) return null;
    if (!keys.length) return current;
    const names: Record<string, string> = {};
    const values: Item = {};
    const sets = keys.map((k, i) => {
      names[`#f${i}`] = k;
      values[`:v${i}`] = patch[k] ?? null;
      return `#f${i} = :v${i}`;
    });
    const update = {
      TableName: this.tableName, Key: accountKey(id), UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: 'attribute_exists(PK)', ExpressionAttributeNames: names, ExpressionAttributeValues: values,
    };
    const newDigest = patch.api_key_digest;
    if (newDigest !== undefined && newDigest !== current.api_key_digest) {
      // The look-up item moves with the key, in the same transaction.
      const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [{ Update: update }];
      if (newDigest) items.push({ Put: { TableName: this.tableName, Item: { ...apiKeyKey(newDigest), account_id: id }, ConditionExpression: 'attribute_not_exists(PK)' } });
      if (current.api_key_digest) items.push({ Delete: { TableName: this.tableName, Key: apiKeyKey(current.api_key_digest) } });
      await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
      return this.getAccount(id);
    }
    try {
      const r = await this.doc.send(new UpdateCommand({ ...update, ReturnValues: 'ALL_NEW' }));
      return toAccount(r.Attributes);
    } catch (err) {
      if (isConditionFailure(err)) return null;
      throw err;
    }
  }

  async createConfig(c: ConfigRecord): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...configKey(c.account_id, c.id), ...c }, ConditionExpression: 'attribute_not_exists(PK)' }));
  }

  async getConfig(accountId: number, id: string): Promise<ConfigRecord | null> {
    return toConfig(await this.get(configKey(accountId, id)));
  }

  async listConfigs(accountId: number): Promise<ConfigRecord[]> {
    const items = await this.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': KEYS.pk, '#sk': KEYS.sk },
      ExpressionAttributeValues: { ':pk': `ACCOUNT#${accountId}`, ':prefix': 'CONFIG#' },
    });
    return items
      .map((i) => toConfig(i)!)
      .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1));
  }

  async updateConfigYaml(accountId: number, id: string, yaml: string, prompt?: string | null): Promise<ConfigRecord | null> {
    try {
      const withPrompt = prompt !== undefined;
      const r = await this.doc.send(new UpdateCommand({
        TableName: this.tableName, Key: configKey(accountId, id), UpdateExpression: withPrompt ? 'SET yaml_content = :y, prompt = :p' : 'SET yaml_content = :y',
        ConditionExpression: 'attribute_exists(PK)', ExpressionAttributeValues: { ':y': yaml, ...(withPrompt ? { ':p': prompt } : {}) }, ReturnValues: 'ALL_NEW',
      }));
      return toConfig(r.Attributes);
    } catch (err) {
      if (isConditionFailure(err)) return null;
      throw err;
    }
  }

  async deleteConfig(accountId: number, id: string): Promise<boolean> {
    await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: lastRunKey(accountId, id) }));
    try {
      await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: configKey(accountId, id), ConditionExpression: 'attribute_exists(PK)' }));
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  async createJob(j: JobRecord): Promise<void> {
    const ttl = this.retentionDays ? { [KEYS.ttl]: Math.floor(Date.parse(j.created_at) / 1000) + this.retentionDays * 86400 } : {};
    // Absent rather than NULL, so that `if_not_exists(started_at, …)` sees an unset value.
    const set = Object.fromEntries(Object.entries(j).filter(([, v]) => v !== null));
    await this.doc.send(new PutCommand({
      TableName: this.tableName,
      Item: { ...jobKey(j.id), ...set, [KEYS.gsi1pk]: jobsOf(j.account_id), [KEYS.gsi1sk]: `${j.created_at}#${j.id}`, ...statusIndex(j.status, j.created_at, j.id), ...ttl },
      ConditionExpression: 'attribute_not_exists(PK)',
    }));
  }

  async getJob(accountId: number, id: string): Promise<JobRecord | null> {
    const job = await this.getJobById(id);
    return job && job.account_id === accountId ? job : null;
  }

  async getJobById(id: string): Promise<JobRecord | null> {
    return toJob(await this.get(jobKey(id)));
  }

  async listJobs(accountId: number, limit: number, cursor?: string): Promise<Page<JobRecord>> {
    let start: Item | undefined;
    if (cursor) {
      try {
        const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
        if (typeof createdAt !== 'string' || typeof id !== 'string') throw new Error('shape');
        start = { ...jobKey(id), [KEYS.gsi1pk]: jobsOf(accountId), [KEYS.gsi1sk]: `${createdAt}#${id}` };
      } catch {
        throw new BadCursorError('invalid cursor');
      }
    }
    // One more than asked, so that the last page says so (DynamoDB's own LastEvaluatedKey cannot).
    const items: Item[] = [];
    while (items.length < limit + 1) {
      const r = await this.doc.send(new QueryCommand({
        TableName: this.tableName, IndexName: GSI1, ScanIndexForward: false, Limit: limit + 1 - items.length, ExclusiveStartKey: start,
        KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': KEYS.gsi1pk }, ExpressionAttributeValues: { ':pk': jobsOf(accountId) },
      }));
      items.push(...(r.Items ?? []));
      start = r.LastEvaluatedKey;
      if (!start) break;
    }
    const page = items.slice(0, limit).map((i) => toJob(i)!);
    const last = page[page.length - 1];
    return { items: page, next_cursor: items.length > limit && last ? Buffer.from(JSON.stringify([last.created_at, last.id])).toString('base64url') : null };
  }

  async countJobs(accountId: number): Promise<number> {
    let n = 0;
    let start: Item | undefined;
    do {
      const r = await this.doc.send(new QueryCommand({
        TableName: this.tableName, IndexName: GSI1, Select: 'COUNT', ExclusiveStartKey: start,
        KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': KEYS.gsi1pk }, ExpressionAttributeValues: { ':pk': jobsOf(accountId) },
      }));
      n += r.Count ?? 0;
      start = r.LastEvaluatedKey;
    } while (start);
    return n;
  }

  async updateJob(id: string, fromStatuses: readonly JobStatus[], u: JobUpdate, attempt?: number): Promise<JobRecord | null> {
    const withProgress = await this.tryUpdateJob(id, fromStatuses, u, true, attempt);
    if (withProgress !== 'condition_failed') return withProgress;
    if (u.progress === undefined) return null;
    // The status condition held but a higher progress is stored: apply the rest, keep the progress.
    const rest = await this.tryUpdateJob(id, fromStatuses, { ...u, progress: undefined }, false, attempt);
    return rest === 'condition_failed' ? null : rest;
  }

  private async tryUpdateJob(id: string, fromStatuses: readonly JobStatus[], u: JobUpdate, raiseProgress: boolean, attempt?: number): Promise<JobRecord | null | 'condition_failed'> {
    const names: Record<string, string> = { '#status': 'status' };
    const values: Item = { ':now': new Date().toISOString() };
    const sets: string[] = ['updated_at = :now'];
    const removes: string[] = [];
    const plain = ['status_message', 'items_found', 'pages_scraped', 'completed_at', 'row_count', 'results_key', 'api_discovered', 'config_id', 'yaml_content', 'changes', 'run_job_id', 'run_error', 'config_name', 'warnings'] as const;
    plain.forEach((k, i) => {
      if (u[k] === undefined) return;
      names[`#p${i}`] = k;
      values[`:p${i}`] = u[k];
      sets.push(`#p${i} = :p${i}`);
    });
    if (u.started_at !== undefined) {
      values[':started'] = u.started_at;
      sets.push('started_at = if_not_exists(started_at, :started)');
    }
    if (u.status !== undefined) {
      values[':newStatus'] = u.status;
      sets.push('#status = :newStatus');
      if (FINISHED.includes(u.status)) removes.push(KEYS.gsi2pk, KEYS.gsi2sk);
      else {
        values[':gsi2pk'] = `STATUS#${u.status}`;
        sets.push(`${KEYS.gsi2pk} = :gsi2pk`);
      }
    }
    let progressCondition = '';
    if (u.progress !== undefined && raiseProgress) {
      values[':progress'] = Math.max(0, Math.min(100, Math.round(u.progress)));
      sets.push('progress = :progress');
      progressCondition = ' AND progress <= :progress';
    }
    if (u.increment_attempts) {
      values[':one'] = 1;
      sets.push('attempts = attempts + :one');
    }
    fromStatuses.forEach((s, i) => { values[`:from${i}`] = s; });
    let attemptCondition = '';
    if (attempt !== undefined) {
      values[':attempt'] = attempt;
      attemptCondition = ' AND attempts = :attempt';
    }
    const condition = `#status IN (${fromStatuses.map((_, i) => `:from${i}`).join(', ')})${attemptCondition}${progressCondition}`;
    try {
      const r = await this.doc.send(new UpdateCommand({
        TableName: this.tableName,
        Key: jobKey(id),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: `attribute_exists(PK) AND ${condition}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }));
      return toJob(r.Attributes);
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // The document client does not unmarshall the item returned with a failed condition.
      const raw = (err as ConditionalCheckFailedException).Item;
      const old = raw ? unmarshall(raw) : undefined;
      // Distinguish "wrong status or attempt" (null) from "progress lower than stored" (retry without progress).
      if (!old || !fromStatuses.includes(old.status as JobStatus)) return null;
      if (attempt !== undefined && Number(old.attempts) !== attempt) return null;
      return progressCondition ? 'condition_failed' : null;
    }
  }

  async listJobsByStatus(statuses: readonly JobStatus[]): Promise<JobRecord[]> {
    const out: JobRecord[] = [];
    for (const s of statuses) {
      if (FINISHED.includes(s)) throw new Error(`listJobsByStatus indexes unfinished jobs only, not "${s}"`);
      const items = await this.queryAll({ IndexName: GSI2, KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': KEYS.gsi2pk }, ExpressionAttributeValues: { ':pk': `STATUS#${s}` } });
      out.push(...items.map((i) => toJob(i)!));
    }
    return out.sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
  }

  async consume(accountId: number, counter: string, amount: number, limit: number, expiresAt?: string): Promise<{ ok: boolean; used: number }> {
    if (amount > limit) return { ok: false, used: await this.getCounter(accountId, counter) };
    const ttl = expiresAt ? Math.floor(Date.parse(expiresAt) / 1000) : undefined;
    try {
      const r = await this.doc.send(new UpdateCommand({
        TableName: this.tableName,
        Key: counterKey(accountId, counter),
        UpdateExpression: `SET #v = if_not_exists(#v, :zero) + :amt${ttl ? ', #ttl = :ttl' : ''}`,
        // Only while the total stays within the limit: concurrent callers cannot both take the last unit.
        ConditionExpression: 'attribute_not_exists(#v) OR #v <= :max',
        ExpressionAttributeNames: { '#v': 'value', ...(ttl ? { '#ttl': KEYS.ttl } : {}) },
        ExpressionAttributeValues: { ':zero': 0, ':amt': amount, ':max': limit - amount, ...(ttl ? { ':ttl': ttl } : {}) },
        ReturnValues: 'UPDATED_NEW',
      }));
      return { ok: true, used: Number(r.Attributes!.value) };
    } catch (err) {
      if (isConditionFailure(err)) return { ok: false, used: await this.getCounter(accountId, counter) };
      throw err;
    }
  }

  async refund(accountId: number, counter: string, amount: number): Promise<void> {
    try {
      await this.doc.send(new UpdateCommand({
        TableName: this.tableName, Key: counterKey(accountId, counter), UpdateExpression: 'SET #v = #v - :amt',
        ConditionExpression: '#v >= :amt', ExpressionAttributeNames: { '#v': 'value' }, ExpressionAttributeValues: { ':amt': amount },
      }));
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // Less than the amount is left (or nothing): never below zero.
      await this.doc.send(new UpdateCommand({
        TableName: this.tableName, Key: counterKey(accountId, counter), UpdateExpression: 'SET #v = :zero',
        ConditionExpression: 'attribute_exists(#v)', ExpressionAttributeNames: { '#v': 'value' }, ExpressionAttributeValues: { ':zero': 0 },
      })).catch((e: unknown) => { if (!isConditionFailure(e)) throw e; });
    }
  }

  async getCounter(accountId: number, counter: string): Promise<number> {
    const item = await this.get(counterKey(accountId, counter));
    return item ? Number(item.value) : 0;
  }

  /** The account's slot items (`JOBSLOT#<n>`: holder and lease end in epoch ms), read consistently. */
  private async jobSlots(accountId: number): Promise<Array<{ slot: number; holder: string; until: number }>> {
    const items = await this.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)', ConsistentRead: true,
      ExpressionAttributeNames: { '#pk': KEYS.pk, '#sk': KEYS.sk }, ExpressionAttributeValues: { ':pk': `ACCOUNT#${accountId}`, ':prefix': 'JOBSLOT#' },
    });
    return items.map((i) => ({ slot: Number(String(i[KEYS.sk]).slice('JOBSLOT#'.length)), holder: String(i.holder), until: Number(i.until_ms) }));
  }

  /**
   * Slots are items numbered 0 to limit-1: one is taken with a put whose condition is that it is absent or its
   * lease has ended, so two callers can never take the same one, and no more than `limit` are live. A DynamoDB
   * TTL removes items of leases long over; no read relies on it.
   */
  async acquireJobSlot(accountId: number, holder: string, limit: number, until: string, now: string): Promise<{ ok: boolean; running: number }> {
    const nowMs = Date.parse(now);
    const untilMs = Date.parse(until);
    const ttl = Math.floor(untilMs / 1000) + 86_400;
    const slots = await this.jobSlots(accountId);
    const live = slots.filter((s) => s.until > nowMs);
    const mine = live.find((s) => s.holder === holder);
    if (mine) {
      try {
        await this.doc.send(new UpdateCommand({
          TableName: this.tableName, Key: jobSlotKey(accountId, mine.slot), UpdateExpression: 'SET until_ms = :until, #ttl = :ttl',
          ConditionExpression: 'holder = :holder', ExpressionAttributeNames: { '#ttl': KEYS.ttl },
          ExpressionAttributeValues: { ':until': untilMs, ':ttl': ttl, ':holder': holder },
        }));
        return { ok: true, running: live.length };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        // Its lease ran out and another holder took the slot meanwhile: take a free one like anybody else.
      }
    }
    const others = live.filter((s) => s.holder !== holder).length;
    if (others >= limit) return { ok: false, running: others };
    const taken = new Set(live.filter((s) => s.holder !== holder).map((s) => s.slot));
    for (let slot = 0; slot < limit; slot++) {
      if (taken.has(slot)) continue;
      try {
        await this.doc.send(new PutCommand({
          TableName: this.tableName,
          Item: { ...jobSlotKey(accountId, slot), account_id: accountId, holder, until_ms: untilMs, [KEYS.ttl]: ttl },
          ConditionExpression: 'attribute_not_exists(PK) OR until_ms <= :now OR holder = :holder',
          ExpressionAttributeValues: { ':now': nowMs, ':holder': holder },
        }));
        return { ok: true, running: others + 1 };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        // Another caller took this one first: try the next.
      }
    }
    return { ok: false, running: limit };
  }

  async releaseJobSlot(accountId: number, holder: string): Promise<void> {
    for (const s of await this.jobSlots(accountId)) {
      if (s.holder !== holder) continue;
      await this.doc.send(new DeleteCommand({
        TableName: this.tableName, Key: jobSlotKey(accountId, s.slot), ConditionExpression: 'holder = :holder', ExpressionAttributeValues: { ':holder': holder },
      })).catch((err: unknown) => { if (!isConditionFailure(err)) throw err; });
    }
  }

  async countJobSlots(accountId: number, now: string): Promise<number> {
    const nowMs = Date.parse(now);
    return (await this.jobSlots(accountId)).filter((s) => s.until > nowMs).length;
  }

  async getConfigLastRun(accountId: number, configId: string): Promise<ConfigLastRun | null> {
    const r = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: lastRunKey(accountId, configId), ConsistentRead: true }));
    return r.Item ? { job_id: r.Item.job_id as string, completed_at: r.Item.completed_at as string } : null;
  }

  async setConfigLastRun(accountId: number, configId: string, run: ConfigLastRun): Promise<boolean> {
    try {
      await this.doc.send(new UpdateCommand({
        TableName: this.tableName,
        Key: lastRunKey(accountId, configId),
        UpdateExpression: 'SET job_id = :job, completed_at = :at',
        ConditionExpression: 'attribute_not_exists(completed_at) OR completed_at <= :at',
        ExpressionAttributeValues: { ':job': run.job_id, ':at': run.completed_at },
      }));
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  async createSchedule(s: ScheduleRecord): Promise<void> {
    // Null fields absent (see SCHEDULE_FIELDS).
    const set = Object.fromEntries(Object.entries(s).filter(([, v]) => v !== null));
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...scheduleKey(s.account_id, s.id), ...set }, ConditionExpression: 'attribute_not_exists(PK)' }));
  }

  async getSchedule(accountId: number, id: string): Promise<ScheduleRecord | null> {
    return toSchedule(await this.get(scheduleKey(accountId, id)));
  }

  async listSchedules(accountId: number): Promise<ScheduleRecord[]> {
    const items = await this.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)', ConsistentRead: true,
      ExpressionAttributeNames: { '#pk': KEYS.pk, '#sk': KEYS.sk },
      ExpressionAttributeValues: { ':pk': `ACCOUNT#${accountId}`, ':prefix': 'SCHEDULE#' },
    });
    return items.map((i) => toSchedule(i)!).sort(newestFirst);
  }

  async updateSchedule(accountId: number, id: string, patch: SchedulePatch, ifLastFiredAt?: string | null): Promise<ScheduleRecord | null> {
    const fields = SCHEDULE_PATCH_FIELDS.filter((k) => patch[k] !== undefined);
    if (!fields.length) {
      // Nothing to write: the schedule as it is, if the condition holds.
      const current = await this.getSchedule(accountId, id);
      return current && (ifLastFiredAt === undefined || current.last_fired_at === ifLastFiredAt) ? current : null;
    }
    const names: Record<string, string> = {};
    const values: Item = {};
    const sets: string[] = [];
    const removes: string[] = [];
    fields.forEach((k, i) => {
      names[`#f${i}`] = k;
      // A null is stored as an absent attribute (see SCHEDULE_FIELDS).
      if (patch[k] === null) removes.push(`#f${i}`);
      else {
        values[`:v${i}`] = patch[k];
        sets.push(`#f${i} = :v${i}`);
      }
    });
    // The claim of a firing: one conditional write, so of two firers of one slot only one writes.
    let condition = 'attribute_exists(PK)';
    if (ifLastFiredAt !== undefined) {
      names['#lastFired'] = 'last_fired_at';
      if (ifLastFiredAt === null) condition += ' AND attribute_not_exists(#lastFired)';
      else {
        values[':ifLastFired'] = ifLastFiredAt;
        condition += ' AND #lastFired = :ifLastFired';
      }
    }
    try {
      const r = await this.doc.send(new UpdateCommand({
        TableName: this.tableName,
        Key: scheduleKey(accountId, id),
        UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : ''].filter(Boolean).join(' '),
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        ReturnValues: 'ALL_NEW',
      }));
      return toSchedule(r.Attributes);
    } catch (err) {
      if (isConditionFailure(err)) return null;
      throw err;
    }
  }

  async deleteSchedule(accountId: number, id: string): Promise<boolean> {
    try {
      await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: scheduleKey(accountId, id), ConditionExpression: 'attribute_exists(PK)' }));
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /**
   * A Scan of the whole table with a filter, sorted here: on AWS, EventBridge Scheduler fires schedules (one trigger per
   * schedule, ScheduleTriggers), so nothing there reads this on a hot path and no index is kept for it. It is here for
   * the contract and for a local firing loop pointed at DynamoDB.
   */
  async listDueSchedules(now: string, limit: number): Promise<ScheduleRecord[]> {
    const out: ScheduleRecord[] = [];
    let start: Item | undefined;
    do {
      const r = await this.doc.send(new ScanCommand({
        TableName: this.tableName, ExclusiveStartKey: start, ConsistentRead: true,
        FilterExpression: 'begins_with(#sk, :prefix) AND #enabled = :true AND #next <= :now',
        ExpressionAttributeNames: { '#sk': KEYS.sk, '#enabled': 'enabled', '#next': 'next_run_at' },
        ExpressionAttributeValues: { ':prefix': 'SCHEDULE#', ':true': true, ':now': now },
      }));
      out.push(...(r.Items ?? []).map((i) => toSchedule(i)!));
      start = r.LastEvaluatedKey;
    } while (start);
    out.sort((a, b) => (a.next_run_at === b.next_run_at ? (a.id < b.id ? -1 : 1) : a.next_run_at! < b.next_run_at! ? -1 : 1));
    return out.slice(0, Math.max(0, limit));
  }

  async createWebhook(w: WebhookRecord): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...webhookKey(w.account_id, w.id), ...w }, ConditionExpression: 'attribute_not_exists(PK)' }));
  }

  async getWebhook(accountId: number, id: string): Promise<WebhookRecord | null> {
    return toWebhook(await this.get(webhookKey(accountId, id)));
  }

  async listWebhooks(accountId: number): Promise<WebhookRecord[]> {
    const items = await this.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)', ConsistentRead: true,
      ExpressionAttributeNames: { '#pk': KEYS.pk, '#sk': KEYS.sk },
      ExpressionAttributeValues: { ':pk': `ACCOUNT#${accountId}`, ':prefix': 'WEBHOOK#' },
    });
    return items.map((i) => toWebhook(i)!).sort(newestFirst);
  }

  /** The webhook first (it decides the answer), then its attempts; any left by a failure there expire by TTL and are never listed. */
  async deleteWebhook(accountId: number, id: string): Promise<boolean> {
    try {
      await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: webhookKey(accountId, id), ConditionExpression: 'attribute_exists(PK)' }));
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
    const keys = await this.queryAll({
      KeyConditionExpression: '#pk = :pk', ConsistentRead: true, ProjectionExpression: '#pk, #sk',
      ExpressionAttributeNames: { '#pk': KEYS.pk, '#sk': KEYS.sk }, ExpressionAttributeValues: { ':pk': deliveriesOf(id) },
    });
    await this.deleteKeys(keys);
    return true;
  }

  /** Deletes items by key, 25 a request (BatchWriteItem), retrying what DynamoDB leaves unprocessed. */
  private async deleteKeys(keys: Item[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 25) {
      let requests = keys.slice(i, i + 25).map((k) => ({ DeleteRequest: { Key: { [KEYS.pk]: k[KEYS.pk], [KEYS.sk]: k[KEYS.sk] } } }));
      for (let round = 0; requests.length; round++) {
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** round)));
        const r = await this.doc.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }));
        requests = (r.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
        if (round >= 8 && requests.length) throw new Error(`DynamoDB left ${requests.length} deletes unprocessed`);
      }
    }
  }

  /**
   * Stores the attempt (kept DELIVERY_RETENTION_DAYS at most, by TTL), then trims the webhook's attempts to the newest
   * WEBHOOK_DELIVERIES_KEPT, best effort: a query newest first reads the keys past them (at most DELIVERY_TRIM_BATCH a
   * time) and deletes them. Concurrent attempts may leave a few extra for a while; the list reads the newest only.
   */
  async addWebhookDelivery(d: WebhookDeliveryRecord): Promise<void> {
    const ttl = Math.floor(Date.parse(d.attempted_at) / 1000) + DELIVERY_RETENTION_DAYS * 86400;
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...deliveryKey(d), ...d, [KEYS.ttl]: ttl } }));
    const r = await this.doc.send(new QueryCommand({
      TableName: this.tableName, ScanIndexForward: false, ConsistentRead: true, Limit: WEBHOOK_DELIVERIES_KEPT + DELIVERY_TRIM_BATCH,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)', ProjectionExpression: '#pk, #sk',
      ExpressionAttributeNames: { '#pk': KEYS.pk, '#sk': KEYS.sk }, ExpressionAttributeValues: { ':pk': deliveriesOf(d.webhook_id), ':prefix': 'DELIVERY#' },
    }));
    const beyond = (r.Items ?? []).slice(WEBHOOK_DELIVERIES_KEPT);
    if (beyond.length) await this.deleteKeys(beyond);
  }

  async listWebhookDeliveries(accountId: number, webhookId: string, limit: number): Promise<WebhookDeliveryRecord[]> {
    // The partition is the webhook's, not the account's: only the owner of the webhook reads it.
    if (limit < 1 || !(await this.getWebhook(accountId, webhookId))) return [];
    const r = await this.doc.send(new QueryCommand({
      TableName: this.tableName, ScanIndexForward: false, ConsistentRead: true, Limit: limit,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': KEYS.pk, '#sk': KEYS.sk }, ExpressionAttributeValues: { ':pk': deliveriesOf(webhookId), ':prefix': 'DELIVERY#' },
    }));
    return (r.Items ?? []).map((i) => toDelivery(i)!);
  }
}
