/**
 * Run jobs end to end (ARCHITECTURE.md, "Data through the house"):
 * POST /run/ -> {@link startRun} (validate, check the plan, meter, create `pending`, enqueue) -> queue ->
 * run worker -> {@link executeRun} (`running`, engine with progress, rows to the blob store,
 * `completed` or `failed`) -> status and results endpoints.
 */
import { randomUUID } from 'node:crypto';
import { CodedError, isCodedError } from '../errors.ts';
import { parseConfig, type ScrapeConfig } from '../engine/config.ts';
import { assertLightweight, runConfig } from '../engine/run.ts';
import { Fetcher } from '../net/fetch.ts';
import { meter, refund } from './metering.ts';
import { FINISHED, resultsKey } from './jobs.ts';
import type { AccountRecord, JobRecord } from './ports.ts';
import type { Services } from './services.ts';

/** Body of POST /api/v1/run/. Exactly one of the two. */
export interface RunRequest {
  config_id?: string;
  yaml_content?: string;
}

/** What a run message on the queue carries. */
export interface RunMessage {
  job_id: string;
}

/**
 * Starts a run job.
 * @returns the `pending` job.
 * @throws CodedError: `invalid_request` (not exactly one of config_id and yaml_content), `not_found`
 *   (config), `invalid_config`, `browser_required`, `target_forbidden`, `plan_required`, `rate_limited`,
 *   `quota_exceeded`, `queue_unavailable`. Nothing is charged when it throws.
 */
export async function startRun(svc: Services, account: AccountRecord, req: RunRequest): Promise<JobRecord> {
  const hasId = req.config_id !== undefined && req.config_id !== null;
  const hasYaml = req.yaml_content !== undefined && req.yaml_content !== null;
  if (hasId === hasYaml) {
    throw new CodedError('invalid_request', 'Give exactly one of config_id and yaml_content', [
      { path: hasId ? 'config_id, yaml_content' : 'config_id | yaml_content', message: hasId ? 'both given' : 'neither given' },
    ]);
  }
  let configId: string | null = null;
  let yaml: string;
  if (hasId) {
    const saved = await svc.store.getConfig(account.id, req.config_id!.toLowerCase());
    if (!saved) throw new CodedError('not_found', `Config ${req.config_id} not found`);
    configId = saved.id;
    yaml = saved.yaml_content;
  } else {
    yaml = req.yaml_content!;
  }
  const config = parseConfig(yaml);
  assertLightweight(config);
  svc.guard.checkUrl(config.target.url);

  const charge = await meter(svc, account, 'run');
  const now = svc.clock.now().toISOString();
  const job: JobRecord = {
    id: randomUUID(),
    account_id: account.id,
    job_type: 'run',
    status: 'pending',
    progress: 0,
    status_message: 'Queued',
    items_found: 0,
    pages_scraped: 0,
    api_discovered: false,
    target_url: config.target.url,
    config_id: configId,
    yaml_content: yaml,
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
    await svc.queue.send('run', JSON.stringify({ job_id: job.id } satisfies RunMessage));
  } catch (err) {
    // Without a message no worker would ever take the job: end it now and give the charge back.
    await svc.store.updateJob(job.id, ['pending'], { status: 'failed', status_message: `Could not queue the job: ${(err as Error).message}`, completed_at: svc.clock.now().toISOString() });
    await refund(svc, account, charge);
    throw new CodedError('queue_unavailable', 'The job queue is unavailable; nothing was charged, try again', []);
  }
  return job;
}

/** Outcome of one delivery of a run message, for the queue consumer. */
export type DeliveryOutcome = 'done' | 'retry';

/** How often progress is written while a job runs, at most (ms). */
const PROGRESS_WRITE_MS = 300;

/**
 * Runs a job's config (one delivery of its queue message). Deterministic failures (an invalid config,
 * a refused or failing target, a time-out) end the job `failed` with a reason and count as done;
 * unexpected errors return `retry` so that the queue delivers the message again, until the last
 * delivery, which ends the job `failed`.
 * @param delivery SQS-style receive count of this delivery and the queue's maximum.
 */
export async function executeRun(svc: Services, jobId: string, delivery: { receiveCount: number; maxReceives: number }): Promise<DeliveryOutcome> {
  const job = await svc.store.getJobById(jobId);
  if (!job || FINISHED.includes(job.status)) return 'done';
  const now = () => svc.clock.now().toISOString();
  const started = await svc.store.updateJob(jobId, ['pending', 'running'], {
    status: 'running',
    started_at: now(),
    increment_attempts: true,
    status_message: job.status === 'running' ? `Running again (attempt ${job.attempts + 1}) after an interrupted attempt` : 'Running',
  });
  if (!started) return 'done';

  let config: ScrapeConfig;
  try {
    config = parseConfig(job.yaml_content);
  } catch (err) {
    await fail(svc, jobId, err);
    return 'done';
  }

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CodedError('job_timeout',
    `The run took longer than the limit of ${Math.round(svc.jobTimeoutMs / 1000)} s per job and was stopped`)), svc.jobTimeoutMs);
  let lastWrite = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const fetcher = new Fetcher(svc.guard, { perHostConcurrency: svc.jobConcurrency });
  try {
    const result = await runConfig(config, {
      fetcher,
      concurrency: svc.jobConcurrency,
      maxPages: svc.maxPagesPerJob,
      signal: controller.signal,
      onProgress: (p) => {
        const t = Date.now();
        if (t - lastWrite < PROGRESS_WRITE_MS) return;
        lastWrite = t;
        writing = writing.then(() => svc.store.updateJob(jobId, ['running'], {
          progress: p.progress, pages_scraped: p.pagesScraped, items_found: p.itemsFound, status_message: p.message,
        })).catch(() => undefined);
      },
    });
    await writing;
    const key = resultsKey(job);
    await svc.blobs.put(key, JSON.stringify(result.rows), 'application/json');
    const warn = result.warnings.length
      ? `; ${result.warnings.length} warning(s): ${result.warnings.slice(0, 3).join(' | ')}${result.warnings.length > 3 ? ' | …' : ''}`
      : '';
    await svc.store.updateJob(jobId, ['running'], {
      status: 'completed',
      progress: 100,
      row_count: result.rows.length,
      items_found: result.itemsFound,
      pages_scraped: result.pagesScraped,
      results_key: key,
      completed_at: now(),
      status_message: `Completed: ${result.rows.length} rows from ${result.pagesScraped} pages (lightweight engine: the config needs no browser)${warn}`,
    });
    return 'done';
  } catch (err) {
    await writing;
    if (isCodedError(err) || controller.signal.aborted) {
      await fail(svc, jobId, controller.signal.aborted ? controller.signal.reason : err);
      return 'done';
    }
    if (delivery.receiveCount >= delivery.maxReceives) {
      await fail(svc, jobId, new Error(`Gave up after ${delivery.receiveCount} attempts; last error: ${(err as Error).message}`));
      return 'done';
    }
    await svc.store.updateJob(jobId, ['running'], { status_message: `Attempt ${delivery.receiveCount} failed (${(err as Error).message}); it will be retried` });
    return 'retry';
  } finally {
    clearTimeout(timer);
    await fetcher.close();
  }
}

/** Ends a job `failed` with the error's message (and code) as status_message. */
async function fail(svc: Services, jobId: string, err: unknown): Promise<void> {
  const e = err as { code?: string; message?: string };
  const message = isCodedError(err) ? `${e.code}: ${e.message}` : e.message ?? String(err);
  await svc.store.updateJob(jobId, ['pending', 'running'], { status: 'failed', status_message: message, completed_at: svc.clock.now().toISOString() });
}

/**
 * A message the queue gave up on (it reached the maximum receives: the worker crashed, timed out or ran
 * out of memory each time). Ends its job `failed` with that reason.
 */
export async function deadLetter(svc: Services, jobId: string, receiveCount: number): Promise<void> {
  const job = await svc.store.getJobById(jobId);
  if (!job || FINISHED.includes(job.status)) return;
  await svc.store.updateJob(jobId, ['pending', 'running', 'analyzing', 'generating', 'validating'], {
    status: 'failed',
    status_message: `worker_lost: the job was attempted ${receiveCount} time(s) and the worker stopped before finishing each time (crash, time-out or out of memory); it was moved to the dead-letter queue`,
    completed_at: svc.clock.now().toISOString(),
  });
}
