/**
 * The skeleton of one delivery of a job message, shared by the run and generate executors
 * (./run-job-executor.ts, ./generate-job-executor.ts): the job looked up and started, the per-job time-out,
 * the job's HTTP client through the outbound guard, throttled progress writes, the rows' blob and preview,
 * and what an error means. Deterministic failures (a CodedError, the time-out) end the job `failed` with
 * `code: message` and count as done; any other error is ours: logged, and the message is delivered again
 * (`retry`) until the last delivery, which ends the job `failed` as `internal_error`. Every state write is a
 * transition of ./job-states.ts made by the executor's actor with this attempt's number, so a stale duplicate
 * delivery cannot overwrite a newer one.
 */
import { CodedError, isCodedError } from '../errors.ts';
import { Fetcher } from '../net/fetch.ts';
import { logger } from '../logger.ts';
import { FINISHED, transitionJob, type JobPatch, type JobActor, type TransitionActor } from './job-states.ts';
import { previewKey, resultsKey, STATUS_ROWS_PREVIEW } from './jobs.ts';
import { announceJobEnd } from './webhook-events.ts';
import type { Delivery, DeliveryOutcome, JobRecord, JobType } from './ports.ts';
import type { Services } from './services.ts';

/** How often progress is written while a job runs, at most (ms). */
export const PROGRESS_WRITE_MS = 300;
/** Longest status_message written by an executor, characters. */
const MAX_STATUS_MESSAGE = 2000;

/** What an executor's body gets for its one attempt. */
export interface JobAttempt {
  /** The job as it was when this delivery started it. */
  job: JobRecord;
  /** The job's `attempts` after this delivery started it (names every write of this attempt). */
  attempt: number;
  actor: TransitionActor;
  /** Aborted with CodedError `job_timeout` when the job's time is up. */
  signal: AbortSignal;
  /** The job's HTTP client (outbound guard, the service's per-host concurrency); closed after the body. */
  fetcher: Fetcher;
  /**
   * Queues a progress write (a `progress` transition, or `advance` to a later state). Writes closer together
   * than {@link PROGRESS_WRITE_MS} are dropped unless `force` is set; writes are made in order, and a failed
   * write is dropped (progress is advisory).
   */
  progress(patch: JobPatch, options?: { transition?: 'progress' | 'advance'; force?: boolean }): void;
  /** Resolves when the queued progress writes are made. */
  settled(): Promise<void>;
  /**
   * Writes the rows (JSON) under this attempt's results key, and their first {@link STATUS_ROWS_PREVIEW}
   * rows next to it for status polls.
   * @returns the results key, for the job's `results_key`.
   */
  saveRows(rows: readonly unknown[]): Promise<string>;
}

/** What an executor is: its job type and actor, and its body. */
export interface JobExecutor {
  jobType: JobType;
  actor: Extract<JobActor, 'run_worker' | 'generate_worker'>;
  /** The status_message written when the delivery starts the job. */
  startMessage(job: JobRecord): string;
  /** Names the work in the time-out message: "The {noun} took longer than …". */
  noun: string;
  /**
   * Does the job's work. Resolves with the `complete` transition's patch (results_key, counts, message),
   * or throws: a CodedError fails the job, anything else is retried.
   */
  body(a: JobAttempt): Promise<JobPatch>;
  /** Runs once the job is `completed` (with the completed record); an error here is logged, the job stays completed. */
  afterComplete?(job: JobRecord): Promise<void>;
}

/**
 * Runs one delivery of a job message with `executor`'s body.
 * @returns `done` when the job ended (or was finished, unknown or of another type already), `retry` when the
 *   message should be delivered again.
 */
export async function executeJobDelivery(svc: Services, jobId: string, delivery: Delivery, executor: JobExecutor): Promise<DeliveryOutcome> {
  const job = await svc.store.getJobById(jobId);
  if (!job || job.job_type !== executor.jobType) return 'done';
  if (FINISHED.includes(job.status)) {
    // A delivery of a finished job: the worker that finished it may have stopped before it told the webhooks (a crash
    // between the job's write and the queue). Told again; the messages' ids are the same, so receivers dedupe.
    await announceJobEnd(svc, job);
    return 'done';
  }
  const started = await transitionJob(svc, job, 'start', { status_message: executor.startMessage(job) }, { by: executor.actor });
  if (!started) return 'done';
  const attempt = started.attempts;
  const actor: TransitionActor = { by: executor.actor, attempt };

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CodedError('job_timeout',
    `The ${executor.noun} took longer than the limit of ${Math.round(svc.jobTimeoutMs / 1000)} s per job and was stopped`)), svc.jobTimeoutMs);
  const fetcher = new Fetcher(svc.guard, { perHostConcurrency: svc.jobConcurrency });
  let lastWrite = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const ctx: JobAttempt = {
    job, attempt, actor, signal: controller.signal, fetcher,
    progress(patch, options = {}) {
      const t = Date.now();
      if (!options.force && t - lastWrite < PROGRESS_WRITE_MS) return;
      lastWrite = t;
      writing = writing.then(() => transitionJob(svc, job, options.transition ?? 'progress', patch, actor)).catch(() => undefined);
    },
    settled: () => writing.then(() => undefined),
    async saveRows(rows) {
      const key = resultsKey(job, attempt);
      await svc.blobs.put(key, JSON.stringify(rows), 'application/json');
      await svc.blobs.put(previewKey(key), JSON.stringify(rows.slice(0, STATUS_ROWS_PREVIEW)), 'application/json');
      return key;
    },
  };
  try {
    const completion = await executor.body(ctx);
    await writing;
    const completed = await transitionJob(svc, job, 'complete', { progress: 100, ...completion, status_message: completion.status_message?.slice(0, MAX_STATUS_MESSAGE) }, actor);
    if (completed && executor.afterComplete) {
      await executor.afterComplete(completed).catch((err: unknown) => logger.error(`${executor.jobType} completed, but what follows its completion failed`, { jobId, error: err }));
    }
    return 'done';
  } catch (err) {
    await writing;
    if (isCodedError(err) || controller.signal.aborted) {
      await failJob(svc, job, controller.signal.aborted ? controller.signal.reason : err, actor);
      return 'done';
    }
    // An unexpected error is ours, not the caller's: its details go to the log, not to the job.
    logger.error(`${executor.jobType} attempt failed`, { jobId, attempt, delivery: delivery.receiveCount, error: err });
    if (delivery.receiveCount >= delivery.maxReceives) {
      await failJob(svc, job, new CodedError('internal_error', `Gave up after ${delivery.receiveCount} attempts, each ended by an internal error (logged with job id ${jobId})`), actor);
      return 'done';
    }
    await transitionJob(svc, job, 'retry', { status_message: `Attempt ${delivery.receiveCount} failed with an internal error; it will be retried` }, actor);
    return 'retry';
  } finally {
    clearTimeout(timer);
    await fetcher.close();
  }
}

/** Ends a job `failed` with `code: message` of a CodedError (the message alone otherwise) as status_message. */
async function failJob(svc: Services, job: JobRecord, err: unknown, actor: TransitionActor): Promise<void> {
  const e = err as { code?: string; message?: string };
  const message = isCodedError(err) ? `${e.code}: ${e.message}` : e.message ?? String(err);
  await transitionJob(svc, job, 'fail', { status_message: message.slice(0, MAX_STATUS_MESSAGE) }, actor);
}
