/**
 * Run jobs, the worker side: one delivery of a run message ({@link executeRun}). The job goes
 * `running`; the engine is chosen (engine/choose.ts) and runs with a progress callback; rows go to the
 * blob store (and the API capture of a browser run next to them); the job ends `completed` or `failed`
 * with a reason. Every state write is a transition of core/job-states.ts made by `run_worker`.
 */
import { isCodedError, CodedError } from '../errors.ts';
import { parseConfig, type ScrapeConfig } from '../engine/config.ts';
import { runHeavy, runLightweight, type CrawlResult, type RunProgress } from '../engine/engines.ts';
import { chooseEngine } from '../engine/choose.ts';
import type { BrowserHost } from '../engine/browser/host.ts';
import { Fetcher } from '../net/fetch.ts';
import { FINISHED, transitionJob, type TransitionActor } from './job-states.ts';
import { previewKey, resultsKey, STATUS_ROWS_PREVIEW } from './jobs.ts';
import { healConfig } from './self-healing.ts';
import { logger } from '../logger.ts';
import type { JobRecord } from './ports.ts';
import type { Services } from './services.ts';

/** Blob key of a browser run's captured XHR/fetch JSON answers (for the generator). */
export function captureKey(job: { account_id: number; id: string }): string {
  return `captures/${job.account_id}/${job.id}.json`;
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
export async function executeRun(
  svc: Services,
  jobId: string,
  delivery: { receiveCount: number; maxReceives: number },
  /** The worker's browser (one per worker, started on first use). */
  browser: () => BrowserHost,
): Promise<DeliveryOutcome> {
  const job = await svc.store.getJobById(jobId);
  if (!job || FINISHED.includes(job.status)) return 'done';
  const started = await transitionJob(svc, job, 'start', {
    status_message: job.status === 'running' ? `Running again (attempt ${job.attempts + 1}) after an interrupted attempt` : 'Running',
  }, { by: 'run_worker' });
  if (!started) return 'done';
  // Every later write names this attempt: a stale duplicate delivery cannot overwrite a newer one.
  const attempt = started.attempts;
  const worker: TransitionActor = { by: 'run_worker', attempt };

  let config: ScrapeConfig;
  try {
    config = parseConfig(job.yaml_content);
  } catch (err) {
    await fail(svc, job, err, worker);
    return 'done';
  }

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CodedError('job_timeout',
    `The run took longer than the limit of ${Math.round(svc.jobTimeoutMs / 1000)} s per job and was stopped`)), svc.jobTimeoutMs);
  let lastWrite = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const fetcher = new Fetcher(svc.guard, { perHostConcurrency: svc.jobConcurrency });
  try {
    const crawlWith = async (c: ScrapeConfig) => {
      const choice = await chooseEngine(c, fetcher, controller.signal);
      const firstPage = choice.page;
      const onProgress = (p: RunProgress) => {
        const t = Date.now();
        if (t - lastWrite < PROGRESS_WRITE_MS) return;
        lastWrite = t;
        writing = writing.then(() => transitionJob(svc, job, 'progress', {
          progress: p.progress, pages_scraped: p.pagesScraped, items_found: p.itemsFound, status_message: `${p.message} (${choice.engine} engine)`,
        }, worker)).catch(() => undefined);
      };
      const options = { concurrency: svc.jobConcurrency, maxPages: svc.maxPagesPerJob, signal: controller.signal, onProgress };
      const result: CrawlResult = choice.engine === 'heavy'
        ? await runHeavy(c, { ...options, host: browser() })
        : await runLightweight(c, { ...options, fetcher, ...(firstPage ? { preloaded: firstPage } : {}) });
      return { choice, result };
    };
    let { choice, result } = await crawlWith(config);
    let healed = '';
    if (!result.rows.length) {
      // Self-healing (core/self-healing.ts): a saved config that used to find items is regenerated once.
      await writing;
      const heal = await healConfig(svc, job, { fetcher, browser, signal: controller.signal });
      if (heal) {
        await transitionJob(svc, job, 'progress', { status_message: `${heal.message}; running it`, yaml_content: heal.yaml }, worker);
        ({ choice, result } = await crawlWith(heal.config));
        healed = `; ${heal.message}`;
      }
    }
    await writing;
    const key = resultsKey(job, attempt);
    await svc.blobs.put(key, JSON.stringify(result.rows), 'application/json');
    await svc.blobs.put(previewKey(key), JSON.stringify(result.rows.slice(0, STATUS_ROWS_PREVIEW)), 'application/json');
    if (result.apiCapture?.length) await svc.blobs.put(captureKey(job), JSON.stringify(result.apiCapture), 'application/json');
    const warn = result.warnings.length
      ? `; ${result.warnings.length} warning(s): ${result.warnings.slice(0, 3).join(' | ')}${result.warnings.length > 3 ? ' | …' : ''}`
      : '';
    await transitionJob(svc, job, 'complete', {
      progress: 100,
      row_count: result.rows.length,
      items_found: result.itemsFound,
      pages_scraped: result.pagesScraped,
      results_key: key,
      api_discovered: result.apiDiscovered ?? false,
      status_message: `Completed: ${result.rows.length} rows from ${result.pagesScraped} pages (${choice.engine} engine; ${choice.reason})${healed}${warn}`,
    }, worker);
    return 'done';
  } catch (err) {
    await writing;
    if (isCodedError(err) || controller.signal.aborted) {
      await fail(svc, job, controller.signal.aborted ? controller.signal.reason : err, worker);
      return 'done';
    }
    // An unexpected error is ours, not the caller's: its details go to the log, not to the job.
    logger.error('run attempt failed', { jobId, attempt, delivery: delivery.receiveCount, error: err });
    if (delivery.receiveCount >= delivery.maxReceives) {
      await fail(svc, job, new CodedError('internal_error', `Gave up after ${delivery.receiveCount} attempts, each ended by an internal error (logged with job id ${jobId})`), worker);
      return 'done';
    }
    await transitionJob(svc, job, 'retry', { status_message: `Attempt ${delivery.receiveCount} failed with an internal error; it will be retried` }, worker);
    return 'retry';
  } finally {
    clearTimeout(timer);
    await fetcher.close();
  }
}

/** Ends a job `failed` with the error's code and message as status_message. */
async function fail(svc: Services, job: JobRecord, err: unknown, worker: TransitionActor): Promise<void> {
  const e = err as { code?: string; message?: string };
  const message = isCodedError(err) ? `${e.code}: ${e.message}` : e.message ?? String(err);
  await transitionJob(svc, job, 'fail', { status_message: message }, worker);
}
