/**
 * The ports of the domain (docs/architecture.md, idea 3): small interfaces the domain talks to. The local
 * adapters (lambdas/adapters/local: SQLite, a durable queue, files) and the AWS adapters
 * (lambdas/adapters/aws: DynamoDB, SQS, S3) implement them; one contract suite (test/contract) runs
 * against every store.
 *
 * Every method that changes state is atomic on its own; the ones that can race (job transitions,
 * metering) are conditional writes that state their condition here.
 */

import type { ScrapeConfig } from '../engine/config.ts';
import type { ScheduleRuleCheck } from './schedule-times.ts';
import type { CellOptions, ExportFormat } from '../export/rows-export.ts';

/** docs/spec.md job states. */
export type JobStatus = 'pending' | 'analyzing' | 'generating' | 'validating' | 'running' | 'completed' | 'failed';
export type JobType = 'run' | 'generate';

/** An account as stored. Secrets are stored only as digests and sealed copies. */
export interface AccountRecord {
  /** docs/spec.md: user.id is an integer. */
  id: number;
  email: string;
  first_name: string;
  last_name: string;
  plan: string;
  /** scrypt hash in PHC-like form, see core/crypto.ts. */
  password_hash: string;
  /** SHA-256 of the API key, hex; the look-up key. Null until a key exists. */
  api_key_digest: string | null;
  /** The API key sealed with AES-256-GCM, so login can return it. Null until a key exists. */
  api_key_sealed: string | null;
  /** Id of the account's API Gateway API key (its usage-plan identity in the cloud); null locally. */
  usage_key_id: string | null;
  /** Value of that key, returned by the authorizer as `usageIdentifierKey`; never a credential of the caller. */
  usage_key_value: string | null;
  /** ISO 8601 UTC. */
  created_at: string;
}

/** The account fields that change after creation. */
export type AccountPatch = Partial<Pick<AccountRecord, 'plan' | 'api_key_digest' | 'api_key_sealed' | 'password_hash' | 'first_name' | 'last_name' | 'usage_key_id' | 'usage_key_value'>>;

/**
 * Per-account usage identities of the API gateway: in the cloud, an API Gateway API key per account in
 * the usage plan of its plan, so that throttling and quotas apply per account (the authorizer returns the
 * key as `usageIdentifierKey`). The local service has none.
 */
export interface UsageKeys {
  /**
   * Makes sure the account has a key and that the key is in `plan`'s usage plan only (creating the key,
   * or moving it from another plan's usage plan).
   * @returns the key's id and value, to store on the account.
   */
  assign(accountId: number, plan: string, currentKeyId: string | null): Promise<{ id: string; value: string }>;
}

/** A stored config (docs/spec.md, Config). */
export interface ConfigRecord {
  id: string;
  account_id: number;
  name: string;
  target_url: string;
  yaml_content: string;
  prompt: string | null;
  created_at: string;
}

/** A stored job. Rows are not here: they live in the blob store under `results_key`. */
export interface JobRecord {
  id: string;
  account_id: number;
  job_type: JobType;
  status: JobStatus;
  /** 0-100, never goes down. */
  progress: number;
  status_message: string;
  items_found: number;
  pages_scraped: number;
  api_discovered: boolean;
  target_url: string;
  /** The saved config that was run, or null for inline YAML; for a generate job, the config it saved. */
  config_id: string | null;
  /** The config run; for a generate job, the config it produced ('' until it has one). */
  yaml_content: string;
  /** The prompt of a generate job (docs/spec.md, POST /generate/); null for runs. */
  prompt: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** Times a worker has started this job (at-least-once delivery can start it more than once). */
  attempts: number;
  row_count: number;
  /** Blob key of the rows, once completed. */
  results_key: string | null;
  /**
   * A completed run of a saved config: what changed against that config's previous completed run (issue 26,
   * docs/monitoring.md); null or absent for other jobs and until the run completes.
   */
  changes?: JobChanges | null;
  /** The schedule whose firing created this run (issue 26), or null/absent for a run started by a call. */
  schedule_id?: string | null;
  /**
   * A generate job asked to run the config it saves (`run: true` on POST /generate/, issue 40; docs/api.md): on
   * completion it starts a run job of that config. False, null or absent otherwise.
   */
  run_requested?: boolean | null;
  /** The run job a generate job with `run_requested` started when it completed; null until then, or when none started. */
  run_job_id?: string | null;
  /** Why that run could not start (`code: message`, e.g. the quota was used up meanwhile); null otherwise. */
  run_error?: string | null;
  /**
   * The name of the config the job runs or made, as it was then (issue 40: the job list names it): a saved config's
   * name, an inline YAML's `name:`, a generate job's saved config; null when it has none (yet).
   */
  config_name?: string | null;
  /** A finished run's warnings (problems that did not fail it), in request order, at most 200; null or absent before. */
  warnings?: string[] | null;
  /**
   * A generate job's other pages of the target's template (`example_urls` of POST /generate/, issue 36; docs/generate.md
   * "Other pages of the template"): absolute URLs the guard allowed, at most 4; null or absent when none were given.
   */
  example_urls?: string[] | null;
}

/**
 * What a completed run changed against the previous completed run of the same config (issue 26): counts of rows
 * added, removed and changed, and the job compared with (null for a first run: nothing to compare with). The rows
 * themselves are in the blob store under `changes_key` (GET /api/v1/jobs/{id}/changes/).
 */
export interface JobChanges {
  added: number;
  removed: number;
  changed: number;
  /** The earlier job these rows were compared with, or null when there was none. */
  compared_with: string | null;
  /** The fields rows were matched on (`output.deduplicate_fields`), or null: matched on all values. */
  key_fields: string[] | null;
  /** Blob key of the changes' rows, or null when there was nothing to compare with. */
  changes_key: string | null;
}

/**
 * Why the service paused a schedule (issue 26): a firing refused for the plan or the quota, or its config gone. A
 * paused schedule is disabled (`enabled: false`) until the account enables it again.
 */
export interface SchedulePause {
  /** The error code of the refusal (lambdas/errors.ts): `quota_exceeded`, `plan_required`, `plan_unknown`, `not_found`, `rate_limited`. */
  code: string;
  message: string;
  /** ISO 8601 UTC, when it was paused. */
  at: string;
}

/** A run a schedule started: the job and the slot it fired for. */
export interface ScheduledRun {
  job_id: string;
  /** ISO 8601 UTC, the cron slot (a whole minute), not the clock time of the firing. */
  scheduled_for: string;
}

/** A stored schedule (issue 26, docs/monitoring.md): a saved config run on a 5-field cron rule in a time zone. */
export interface ScheduleRecord {
  id: string;
  account_id: number;
  config_id: string;
  /** Normalised by core/schedule-times.ts `parseScheduleTimes`. */
  cron: string;
  /** IANA name, `UTC` by default. */
  timezone: string;
  enabled: boolean;
  /** ISO 8601 UTC of the next slot while enabled; null when disabled, paused, or the rule never fires again. */
  next_run_at: string | null;
  /** ISO 8601 UTC of the slot it last fired for (fired or skipped), or null: the claim of a firing is conditional on it. */
  last_fired_at: string | null;
  /** ISO 8601 UTC: when it started counting (created, or last enabled); slots before it are never due. */
  since: string;
  /** Set when the service paused it (then `enabled` is false); null otherwise. */
  paused: SchedulePause | null;
  /** Firings that created a run job. */
  fired_count: number;
  /** Firings skipped because the schedule's previous job was still unfinished. */
  skipped_count: number;
  /** The jobs it started, newest first, at most {@link SCHEDULE_RECENT_JOBS}. */
  recent_jobs: ScheduledRun[];
  created_at: string;
  updated_at: string;
}

/** How many of a schedule's jobs its record keeps. */
export const SCHEDULE_RECENT_JOBS = 10;

/** The schedule fields that change after creation; fields left out are not changed. */
export type SchedulePatch = Partial<Omit<ScheduleRecord, 'id' | 'account_id' | 'config_id' | 'created_at'>>;

/** The job events a webhook can subscribe to (issue 26): a job ended `completed` or `failed`; a completed run with any change. */
export const WEBHOOK_EVENTS = ['job.completed', 'job.failed', 'job.changed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A stored webhook endpoint (issue 26). Its signing secret is stored sealed (core/crypto.ts KeySealer), like API keys. */
export interface WebhookRecord {
  id: string;
  account_id: number;
  /** An http(s) URL the outbound guard allowed when it was created (and checks again at each delivery). */
  url: string;
  events: WebhookEvent[];
  /** The `whsec_…` secret sealed with AES-256-GCM; shown to the account once, at creation. */
  secret_sealed: string;
  created_at: string;
}

/** What follows one delivery attempt. */
export type WebhookAttemptOutcome = 'delivered' | 'will_retry' | 'given_up';

/** One attempt to deliver one message to one webhook (GET /api/v1/webhooks/{id}/deliveries/). */
export interface WebhookDeliveryRecord {
  /** Unique per attempt. */
  id: string;
  webhook_id: string;
  account_id: number;
  /** The `webhook-id` header: the same on every attempt of a message (Standard Webhooks: the idempotency key). */
  message_id: string;
  event: WebhookEvent;
  job_id: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** ISO 8601 UTC. */
  attempted_at: string;
  /** The receiver's HTTP status, or null when there was no answer (refused, unreachable, timed out). */
  status_code: number | null;
  /** ms from the request to the answer's headers (or the failure). */
  duration_ms: number;
  /** Why the attempt failed (`code: message`), or null for a 2xx. */
  error: string | null;
  outcome: WebhookAttemptOutcome;
  /** ISO 8601 UTC of the next attempt when `outcome` is `will_retry`, else null. */
  next_attempt_at: string | null;
}

/** How many delivery attempts a webhook keeps, newest first (older ones are dropped). */
export const WEBHOOK_DELIVERIES_KEPT = 100;

/** The last completed run of a config that the next run's changes are computed against (issue 26). */
export interface ConfigLastRun {
  job_id: string;
  /** ISO 8601, the job's `completed_at`. */
  completed_at: string;
}

/** A conditional change of a job. Fields left out are not changed. */
export interface JobUpdate {
  status?: JobStatus;
  /** Raised only: the stored progress becomes max(stored, this). */
  progress?: number;
  status_message?: string;
  items_found?: number;
  pages_scraped?: number;
  api_discovered?: boolean;
  started_at?: string;
  completed_at?: string;
  row_count?: number;
  results_key?: string;
  /** The config a generate job produced (saved as `config_id`), or a self-healed run's new config. */
  config_id?: string;
  yaml_content?: string;
  /** Adds one to attempts. */
  increment_attempts?: boolean;
  /** What a completed run changed (issue 26). */
  changes?: JobChanges;
  /** The run job a generate job started on completion (issue 40). */
  run_job_id?: string;
  /** Why a generate job's run could not start (issue 40). */
  run_error?: string;
  /** The config's name (a generate job's saved config, issue 40). */
  config_name?: string;
  /** A finished run's warnings (issue 40). */
  warnings?: string[];
}

/** A page of a list, newest first, with an opaque cursor for the next page. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Thrown by stores for a unique-key clash (an email already used). */
export class ConflictError extends Error {
  override name = 'ConflictError';
}

/** Persistent state: accounts, configs, jobs, usage counters. */
export interface Store {
  /** @throws ConflictError when the email (compared case-insensitively) exists. */
  createAccount(a: Omit<AccountRecord, 'id' | 'created_at' | 'usage_key_id' | 'usage_key_value'>): Promise<AccountRecord>;
  getAccount(id: number): Promise<AccountRecord | null>;
  getAccountByEmail(email: string): Promise<AccountRecord | null>;
  getAccountByKeyDigest(digest: string): Promise<AccountRecord | null>;
  listAccounts(): Promise<AccountRecord[]>;
  /** @returns the updated account, or null when absent. */
  updateAccount(id: number, patch: AccountPatch): Promise<AccountRecord | null>;

  createConfig(c: ConfigRecord): Promise<void>;
  /** Another account's config is null, exactly like an absent one. */
  getConfig(accountId: number, id: string): Promise<ConfigRecord | null>;
  /** Newest first. */
  listConfigs(accountId: number): Promise<ConfigRecord[]>;
  /** @returns false when absent (or another account's). */
  deleteConfig(accountId: number, id: string): Promise<boolean>;
  /**
   * Replaces a config's YAML (a self-healed config's new version, an edit), and its prompt when `prompt` is given (a
   * generate that replaces the config, issue 40).
   * @returns the updated config, or null when absent (or another account's).
   */
  updateConfigYaml(accountId: number, id: string, yaml: string, prompt?: string | null): Promise<ConfigRecord | null>;

  createJob(j: JobRecord): Promise<void>;
  /** Another account's job is null. */
  getJob(accountId: number, id: string): Promise<JobRecord | null>;
  /** For workers, which act for the job's account. */
  getJobById(id: string): Promise<JobRecord | null>;
  /** Newest first; `cursor` from the previous page. `limit` 1-100. */
  listJobs(accountId: number, limit: number, cursor?: string): Promise<Page<JobRecord>>;
  countJobs(accountId: number): Promise<number>;
  /**
   * Changes a job if its status is one of `fromStatuses` (and, with `attempt`, if `attempts` still equals
   * it: a stale delivery of the same job cannot overwrite a newer one), atomically. Progress is raised,
   * never lowered.
   * @returns the updated job, or null when the condition failed or the job is absent.
   */
  updateJob(id: string, fromStatuses: readonly JobStatus[], update: JobUpdate, attempt?: number): Promise<JobRecord | null>;
  /** Jobs in any of these statuses, across accounts (recovery after a crash). */
  listJobsByStatus(statuses: readonly JobStatus[]): Promise<JobRecord[]>;

  /**
   * Adds `amount` to a counter if the result stays within `limit`, atomically: concurrent callers never
   * take more than is left.
   * @returns `{ok: true, used}` with the new total, or `{ok: false, used}` with the unchanged total.
   */
  consume(accountId: number, counter: string, amount: number, limit: number, expiresAt?: string): Promise<{ ok: boolean; used: number }>;
  /** Gives back an amount taken by consume (never below zero). */
  refund(accountId: number, counter: string, amount: number): Promise<void>;
  /** The counter's total, 0 when absent. */
  getCounter(accountId: number, counter: string): Promise<number>;

  /**
   * Takes one of an account's `limit` running-job slots for `holder` (a job id) until `until` (a lease: a
   * holder that dies without releasing frees its slot when the lease runs out), atomically: concurrent
   * callers never hold more than `limit` live slots of one account between them. A holder that already holds
   * a live slot renews it (whatever the limit). Leases that ended before `now` count for nothing.
   * @param now, until ISO 8601 UTC.
   * @returns `{ok: true, running}` with the account's live slots including this one, or `{ok: false, running}`.
   */
  acquireJobSlot(accountId: number, holder: string, limit: number, until: string, now: string): Promise<{ ok: boolean; running: number }>;
  /** Gives back `holder`'s slot; nothing when it holds none. */
  releaseJobSlot(accountId: number, holder: string): Promise<void>;
  /** The account's live slots at `now` (ISO 8601 UTC). */
  countJobSlots(accountId: number, now: string): Promise<number>;
  /** The config's last completed run recorded by {@link Store.setConfigLastRun}, or null (issue 26). */
  getConfigLastRun(accountId: number, configId: string): Promise<ConfigLastRun | null>;
  /**
   * Records `run` as the config's last completed run, unless one that completed later is recorded already (two runs
   * of a config that end together leave the later one).
   * @returns whether it was recorded.
   */
  setConfigLastRun(accountId: number, configId: string, run: ConfigLastRun): Promise<boolean>;

  /** Stores a new schedule (issue 26). */
  createSchedule(s: ScheduleRecord): Promise<void>;
  /** Another account's schedule is null, exactly like an absent one. */
  getSchedule(accountId: number, id: string): Promise<ScheduleRecord | null>;
  /** The account's schedules, newest first. */
  listSchedules(accountId: number): Promise<ScheduleRecord[]>;
  /**
   * Changes the given fields of a schedule (and `updated_at` when the patch has it).
   * @param ifLastFiredAt when given (null included), the write happens only if the stored `last_fired_at` still
   *   equals it: the claim of a firing, so that two firers of one slot (a restart, a duplicate message) fire once.
   * @returns the updated schedule, or null when absent (or another account's) or the condition failed.
   */
  updateSchedule(accountId: number, id: string, patch: SchedulePatch, ifLastFiredAt?: string | null): Promise<ScheduleRecord | null>;
  /** @returns false when absent (or another account's). */
  deleteSchedule(accountId: number, id: string): Promise<boolean>;
  /**
   * Enabled schedules whose `next_run_at` is at or before `now`, across accounts, earliest first, at most `limit`
   * (the local service's firing loop; on AWS EventBridge Scheduler fires them).
   */
  listDueSchedules(now: string, limit: number): Promise<ScheduleRecord[]>;

  /** Stores a new webhook (issue 26). */
  createWebhook(w: WebhookRecord): Promise<void>;
  /** Another account's webhook is null. */
  getWebhook(accountId: number, id: string): Promise<WebhookRecord | null>;
  /** The account's webhooks, newest first. */
  listWebhooks(accountId: number): Promise<WebhookRecord[]>;
  /** Deletes the webhook and its delivery attempts. @returns false when absent (or another account's). */
  deleteWebhook(accountId: number, id: string): Promise<boolean>;
  /** Records one delivery attempt; the webhook keeps its newest {@link WEBHOOK_DELIVERIES_KEPT}. */
  addWebhookDelivery(d: WebhookDeliveryRecord): Promise<void>;
  /** A webhook's delivery attempts, newest first, at most `limit` (1-100); another account's webhook has none. */
  listWebhookDeliveries(accountId: number, webhookId: string, limit: number): Promise<WebhookDeliveryRecord[]>;
}

/** A message on a queue, as a consumer sees it. */
export interface QueueMessage {
  id: string;
  body: string;
  /** Deliveries so far, this one included (SQS ApproximateReceiveCount). */
  receiveCount: number;
  /** Handle for delete/changeVisibility of this delivery. */
  receipt: string;
}

/** One delivery of a job message to its executor: the receive count of the message (this one included) and the most a message gets. */
export interface Delivery {
  receiveCount: number;
  maxReceives: number;
}

/**
 * Outcome of one delivery of a job message, for the queue consumer: `done` deletes the message (the job ended,
 * or there is nothing to do), `retry` leaves it to be delivered again (an internal error before the last delivery).
 */
export type DeliveryOutcome = 'done' | 'retry';

/** Queue names of the service: one per job type, each with its dead-letter queue, and the webhook deliveries' queue (issue 26). */
export type QueueName = 'run' | 'generate' | 'webhook';

/** Options of {@link JobQueue.send}. */
export interface SendOptions {
  /**
   * The tenant the message belongs to (the account id): the local queue hands out messages of the groups
   * in turn and never one of a group at its limit; SQS gets it as the MessageGroupId of a fair queue.
   */
  group?: string;
  /** Seconds before the message can be received (SQS DelaySeconds, at most 900). */
  delaySeconds?: number;
}

/**
 * The producer side of a queue (SQS SendMessage), and what a consumer may do with a delivery it holds beyond
 * deleting it (done per platform, by the event source mapping or the local workers).
 */
export interface JobQueue {
  send(queue: QueueName, body: string, options?: SendOptions): Promise<void>;
  /**
   * Gives a delivery back to be received again after `seconds` (SQS ChangeMessageVisibility): a job whose
   * account is at its limit waits. SQS counts the receive anyway; the local queue does not.
   * @param receipt the delivery's receipt handle.
   */
  deferDelivery?(queue: QueueName, receipt: string, seconds: number): Promise<void>;
}

/** The message group of an account's jobs ({@link SendOptions.group}). */
export function accountGroup(accountId: number): string {
  return String(accountId);
}

/**
 * A queue that sends every message in the group of one account (fair scheduling across accounts,
 * docs/plans-and-metering.md): what the API side queues a job with.
 */
export function groupedQueue(queue: JobQueue, accountId: number): JobQueue {
  const group = accountGroup(accountId);
  return {
    send: (name, body, options) => queue.send(name, body, { ...options, group }),
    ...(queue.deferDelivery ? { deferDelivery: queue.deferDelivery.bind(queue) } : {}),
  };
}

/**
 * What fires schedules where the platform does (issue 26): on AWS one EventBridge Scheduler schedule per stored
 * schedule, which puts a firing message on the run queue. The local service has none (null): its firing loop reads
 * the store (adapters/local/schedule-loop.ts).
 */
export interface ScheduleTriggers {
  /**
   * Creates or replaces the platform's trigger of the schedule (a disabled schedule's trigger is disabled).
   * @param options.onlyIfExists only update an existing trigger (re-arming after a firing: a schedule deleted meanwhile
   *   must not get its trigger back).
   */
  put(s: ScheduleRecord, options?: { onlyIfExists?: boolean }): Promise<void>;
  /** Deletes the trigger; nothing when there is none. */
  remove(scheduleId: string): Promise<void>;
}

/** Stored bytes: results and screenshots (S3, or files). */
export interface BlobStore {
  put(key: string, body: Uint8Array | string, contentType: string): Promise<void>;
  /** @returns null when absent. */
  get(key: string): Promise<Buffer | null>;
  delete(key: string): Promise<void>;
  /**
   * A URL that reads the object without credentials for `expiresInSeconds` (a presigned S3 GET URL). Absent where
   * the store has no such URLs (local files): the service then serves the object itself.
   */
  presignGet?(key: string, expiresInSeconds: number): Promise<string>;
}

/**
 * Parses and validates the YAML text of a config (engine/config.ts `parseConfig`) where it holds up no
 * other request: inline on Lambda (one request per instance) and in job workers; on the local service's
 * HTTP thread, large texts go to a worker thread (adapters/local/config-parser.ts).
 */
export interface ConfigParser {
  /**
   * @returns the normalized config.
   * @throws CodedError `invalid_config` with details `[{path, line, column, message}]`.
   */
  parse(yamlText: string): Promise<ScrapeConfig>;
  /**
   * Checks a schedule's rule (core/schedule-times.ts `checkScheduleRule`), which may take up to about 2 s of CPU for
   * the worst expressions. Absent: checked inline.
   * @throws CodedError `invalid_request` (the rule, or a check past its time-out), `service_busy`.
   */
  checkSchedule?(input: { cron: unknown; timezone?: unknown }, opts: { minIntervalMinutes: number; now: Date }): Promise<ScheduleRuleCheck>;
}

/** Time, injectable for tests of windows and periods. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** What an export is made from: the job's stored rows (JSON text) and how to write them. */
export interface ExportRequest {
  /** The stored rows: a JSON array, UTF-8 (the bytes of the job's results blob). */
  rowsJson: Uint8Array;
  format: ExportFormat;
  /** How cells are written: CSV cells exactly as scraped (`raw`), lists as JSON or joined (docs/exports.md). */
  cells: CellOptions;
  /** Whose export it is (an account's id): builders serve accounts fairly. */
  owner: number;
}

/**
 * Where exports are made (`Services.exportBuilder`; made in core/exports.ts): a stream of the file's bytes, made as the builder goes. The
 * stream's consumer may cancel it (the client went away): the builder then stops.
 */
export interface ExportBuilder {
  /** @throws CodedError `service_busy` (503) when the builder has too many exports waiting. */
  build(request: ExportRequest): Promise<ReadableStream<Uint8Array>>;
}
