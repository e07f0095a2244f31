/**
 * Jobs: a new job stored and queued, the views of docs/spec.md ("Job"), where a job's rows are kept, and the end of a job the queue gave
 * up on. The state machine, which every change of a job's state goes through, is core/job-states.ts.
 */
import { createHash, randomUUID } from 'node:crypto';
import { FINISHED, transitionJob } from './job-states.ts';
import type { AccountRecord, JobRecord, JobType } from './ports.ts';
import { refund, type Charge } from './metering.ts';
import { CodedError } from '../errors.ts';
import type { Services } from './services.ts';
import type { Row } from '../engine/extract.ts';

/** Rows included in the status response's `results.data`; all rows are at /results/ (docs/api.md). */
export const STATUS_ROWS_PREVIEW = 100;

/** Blob key of a job's rows: one per attempt, so a stale attempt never overwrites the winner's rows. */
export function resultsKey(job: Pick<JobRecord, 'account_id' | 'id'>, attempt: number): string {
  return `results/${job.account_id}/${job.id}/${attempt}.json`;
}

/** Blob key of the first {@link STATUS_ROWS_PREVIEW} rows, next to the rows: status polls read only this (once per process and job). */
export function previewKey(resultsKey: string): string {
  return resultsKey.replace(/\.json$/, '.preview.json');
}

/** The 202 body of POST /run/ and /generate/ (docs/spec.md). */
export function jobCreatedView(job: JobRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { id: job.id, status: job.status, progress: job.progress, job_type: job.job_type };
  if (job.job_type === 'generate') Object.assign(out, { target_url: job.target_url, created_at: job.created_at });
  return out;
}

function summary(job: JobRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: job.id,
    status: job.status,
    progress: job.progress,
    job_type: job.job_type as JobType,
    target_url: job.target_url,
    status_message: job.status_message,
    items_found: job.items_found,
    pages_scraped: job.pages_scraped,
    api_discovered: job.api_discovered,
    created_at: job.created_at,
    // Beyond docs/spec.md (issue 40, docs/api.md "Jobs"): what the job list shows of each job.
    config_id: job.config_id,
    config_name: job.config_name ?? null,
    warning_count: job.warnings?.length ?? 0,
  };
  if (job.completed_at) out.completed_at = job.completed_at;
  // A generate job with `run: true` names its run (null until it completes), or says why none started (issue 40).
  if (job.job_type === 'generate' && job.run_requested) {
    out.run_job_id = job.run_job_id ?? null;
    if (job.run_error) out.run_error = job.run_error;
  }
  return out;
}

/** A GET /jobs/ item: the job without results and YAML. */
export function jobListItem(job: JobRecord): Record<string, unknown> {
  return summary(job);
}

/** A completed job's rows as the stored JSON text (no parsing: /results/ passes it through); null when none. */
export async function rowsJson(svc: Services, job: JobRecord): Promise<string | null> {
  if (job.status !== 'completed' || !job.results_key) return null;
  return (await svc.blobs.get(job.results_key))?.toString('utf8') ?? null;
}

/** Most characters of finished jobs' status answers kept in memory per process (about 32 MB). */
const STATUS_CACHE_CHARS = 16 * 1024 * 1024;

/** A finished job's status answer, serialized once: its JSON text and its entity tag. */
interface FinishedStatus {
  text: string;
  /** A strong entity tag of the text (`"…"`, RFC 9110 8.8.3), for `If-None-Match`. */
  etag: string;
}

/**
 * Status answers of finished jobs by `<account id>/<job id>`, oldest first. A finished job never changes again (no
 * transition leaves `completed` or `failed`, core/job-states.ts; its preview has one key per attempt and only the
 * winning attempt's key is on the job), so every process may keep its answer: a finished job polled again costs no
 * store read, no blob read and no serialization. The account is part of the key: another account's poll of the
 * same id misses and is refused by the store as before.
 */
const finishedStatuses = new Map<string, FinishedStatus>();
let finishedChars = 0;

const statusCacheKey = (accountId: number, jobId: string): string => `${accountId}/${jobId}`;

function rememberFinished(key: string, answer: FinishedStatus): void {
  if (answer.text.length > STATUS_CACHE_CHARS / 4) return;
  // Two first polls of one job build it twice: count it once.
  const before = finishedStatuses.get(key);
  if (before !== undefined) finishedChars -= before.text.length;
  finishedStatuses.set(key, answer);
  finishedChars += answer.text.length;
  for (const [k, a] of finishedStatuses) {
    if (finishedChars <= STATUS_CACHE_CHARS) break;
    finishedStatuses.delete(k);
    finishedChars -= a.text.length;
  }
}

/** The status answer of a finished job of the account, when this process has it; undefined otherwise. */
export function cachedFinishedStatus(accountId: number, jobId: string): FinishedStatus | undefined {
  return finishedStatuses.get(statusCacheKey(accountId, jobId));
}

/**
 * The first rows of a completed job as JSON text, for the status response: the preview blob as stored
 * (checked once to be a JSON array), or the first rows of the rows blob for jobs older than previews.
 */
async function previewJson(svc: Services, job: JobRecord): Promise<string> {
  if (job.status !== 'completed' || !job.results_key) return '[]';
  const key = previewKey(job.results_key);
  const preview = await svc.blobs.get(key);
  if (preview) {
    const text = preview.toString('utf8');
    if (!Array.isArray(JSON.parse(text))) throw new Error(`preview ${key} is not a JSON array`);
    return text;
  }
  const rows = await svc.blobs.get(job.results_key);
  return rows ? JSON.stringify((JSON.parse(rows.toString('utf8')) as Row[]).slice(0, STATUS_ROWS_PREVIEW)) : '[]';
}

/**
 * GET /jobs/{id}/status/: every field of docs/spec.md's job, as the JSON text of the response body, with an entity tag
 * for a finished job. The rows of `results.data` are spliced in as stored, never parsed and written again. A
 * finished job's answer is built once per process and kept ({@link cachedFinishedStatus}).
 */
export async function jobStatusAnswer(svc: Services, job: JobRecord): Promise<{ text: string; etag?: string }> {
  const finished = FINISHED.includes(job.status);
  const key = statusCacheKey(job.account_id, job.id);
  if (finished) {
    const cached = finishedStatuses.get(key);
    if (cached) return cached;
  }
  const rows = await previewJson(svc, job);
  const head = JSON.stringify(summary(job));
  const rowCount = job.status === 'completed' ? job.row_count : 0;
  // A completed run of a saved config also says what changed (issue 26); other jobs keep docs/spec.md's shape exactly.
  const c = job.status === 'completed' ? job.changes : null;
  const changes = c ? `,"changes":${JSON.stringify({ added: c.added, removed: c.removed, changed: c.changed, compared_with: c.compared_with })}` : '';
  const warnings = `,"warnings":${JSON.stringify(job.warnings ?? [])}`;
  const text = `${head.slice(0, -1)},"results":{"data":${rows},"row_count":${rowCount}},"yaml_config":${JSON.stringify({ id: job.config_id, yaml_content: job.yaml_content })}${changes}${warnings}}`;
  if (!finished) return { text };
  const answer = { text, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"` };
  rememberFinished(key, answer);
  return answer;
}

/** The JSON text of {@link jobStatusAnswer}. */
export async function jobStatusJson(svc: Services, job: JobRecord): Promise<string> {
  return (await jobStatusAnswer(svc, job)).text;
}

/**
 * A message the queue gave up on (it reached the maximum receives: the worker crashed, timed out or ran
 * out of memory each time). Ends its job `failed` with that reason (the `dead_letter` transition).
 */
export async function deadLetter(svc: Services, jobId: string, receiveCount: number): Promise<void> {
  const job = await svc.store.getJobById(jobId);
  if (!job || FINISHED.includes(job.status)) return;
  await transitionJob(svc, job, 'dead_letter', {
    status_message: `worker_lost: the job was attempted ${receiveCount} time(s) and the worker stopped before finishing each time (crash, time-out or out of memory); it was moved to the dead-letter queue`,
  }, { by: 'dead_letter_consumer' });
}

/**
 * Creates a new job `pending` (id, times and counters filled in), stores it and queues its message
 * (`{job_id}`) on the queue of its type; the charge is given back when either fails, and a job whose message
 * could not be queued ends `failed` at once (no worker would ever take it).
 * @param what the job's type and what it works on; `id` when the caller names the job (a schedule's firing: one id
 *   per slot, so the store refuses a second job of the same firing; a generate job's run), `schedule_id` for such a firing,
 *   `run_requested` for a generate job that runs its config, `config_name` the name of its config (issue 40),
 *   `example_urls` a generate job's other pages of the template (issue 36).
 * @returns the job as stored.
 * @throws the store's error (nothing stored, charge refunded); CodedError `queue_unavailable` (the job ended
 *   `failed`, charge refunded).
 */
export async function createAndQueueJob(svc: Services, account: AccountRecord, what: Pick<JobRecord, 'job_type' | 'target_url' | 'config_id' | 'yaml_content' | 'prompt'> & { job_type: JobType; schedule_id?: string | null; run_requested?: boolean; config_name?: string | null; example_urls?: string[] | null; id?: string }, charge: Charge | null): Promise<JobRecord> {
  const now = svc.clock.now().toISOString();
  const job: JobRecord = {
    id: randomUUID(),
    account_id: account.id,
    ...what,
    status: 'pending',
    progress: 0,
    status_message: 'Queued',
    items_found: 0,
    pages_scraped: 0,
    api_discovered: false,
    created_at: now,
    updated_at: now,
    started_at: null,
    completed_at: null,
    attempts: 0,
    row_count: 0,
    results_key: null,
  };
  try {
    await svc.store.createJob(job);
  } catch (err) {
    await refund(svc, account, charge);
    throw err;
  }
  try {
    await svc.queue.send(what.job_type, JSON.stringify({ job_id: job.id }));
  } catch (err) {
    await transitionJob(svc, job, 'queue_failed', { status_message: `Could not queue the job: ${(err as Error).message}` }, { by: 'api' });
    await refund(svc, account, charge);
    throw new CodedError('queue_unavailable', 'The job queue is unavailable; nothing was charged, try again', []);
  }
  return job;
}
