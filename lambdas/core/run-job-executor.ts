/**
 * Run jobs, the worker side: one delivery of a run message ({@link executeRun}), on the skeleton of
 * ./job-delivery.ts. The job goes `running`; the config runs with {@link runConfig} (the engine chosen by
 * engine/choose.ts) and a progress callback; rows go to the blob store (and the API capture of a browser run
 * next to them); a saved config that used to find items and now finds none is regenerated once
 * (./self-healing.ts); a run of a saved config is compared with the config's last completed run (./run-changes.ts);
 * the job ends `completed` or `failed` with a reason.
 */
import { parseConfig, type ScrapeConfig } from '../engine/config.ts';
import { runConfig } from '../engine/engines.ts';
import type { BrowserHost } from '../engine/browser/host.ts';
import { executeJobDelivery, type JobAttempt } from './job-delivery.ts';
import { NO_PROXIES, proxyGroupFor } from '../net/upstream.ts';
import { healConfig } from './self-healing.ts';
import { computeRunChanges, recordLastRun } from './run-changes.ts';
import type { Delivery, DeliveryOutcome } from './ports.ts';
import { describePages, type PageCounts } from '../engine/crawler.ts';
import type { Services } from './services.ts';

/** Blob key of a browser run's captured XHR/fetch JSON answers (for the generator). */
export function captureKey(job: { account_id: number; id: string }): string {
  return `captures/${job.account_id}/${job.id}.json`;
}

/**
 * Runs a job's config (one delivery of its queue message). Deterministic failures (an invalid config,
 * a refused or failing target, a time-out) end the job `failed` with a reason and count as done;
 * unexpected errors return `retry` so that the queue delivers the message again, until the last
 * delivery, which ends the job `failed`.
 * @param delivery SQS-style receive count of this delivery and the queue's maximum.
 * @param browser the worker's browser (one per worker, started on first use).
 */
export function executeRun(svc: Services, jobId: string, delivery: Delivery, browser: () => BrowserHost): Promise<DeliveryOutcome> {
  return executeJobDelivery(svc, jobId, delivery, {
    jobType: 'run',
    actor: 'run_worker',
    noun: 'run',
    startMessage: (job) => (job.status === 'running' ? `Running again (attempt ${job.attempts + 1}) after an interrupted attempt` : 'Running'),
    body: (a) => runBody(svc, a, browser),
    afterComplete: (job) => recordLastRun(svc, job),
  });
}

async function runBody(svc: Services, a: JobAttempt, browser: () => BrowserHost) {
  const { job, fetcher, signal } = a;
  const groups = (await svc.proxies?.()) ?? NO_PROXIES;
  const crawl = (config: ScrapeConfig) => runConfig(config, {
    fetcher, browser, signal, concurrency: svc.jobConcurrency, maxPages: svc.maxPagesPerJob, proxies: proxyGroupFor(config.target.proxy, groups),
    ...(svc.pageReaders ? { readers: svc.pageReaders } : {}),
    onProgress: (p, choice) => a.progress({ progress: p.progress, pages_scraped: p.pagesScraped, items_found: p.itemsFound, status_message: `${p.message} (${choice.engine} engine)` }),
  });
  let config = parseConfig(job.yaml_content);
  let { choice, result } = await crawl(config);
  let healed = '';
  /** Pages the first crawl read when the config was healed and run again: the run read them too. */
  let before: PageCounts = { listing: 0, detail: 0, index: 0 };
  if (!result.rows.length) {
    // Self-healing (core/self-healing.ts): a saved config that used to find items is regenerated once.
    await a.settled();
    const heal = await healConfig(svc, job, { fetcher, browser, signal });
    if (heal) {
      a.progress({ status_message: `${heal.message}; running it`, yaml_content: heal.yaml }, { force: true });
      await a.settled();
      config = heal.config;
      before = result.pageCounts;
      ({ choice, result } = await crawl(config));
      healed = `; ${heal.message}`;
    }
  }
  const key = await a.saveRows(result.rows);
  // A run of a saved config: what changed since its last completed run (./run-changes.ts, issue 26).
  const changes = job.config_id ? await computeRunChanges(svc, job, result.rows, config.output?.deduplicate_fields) : undefined;
  if (result.apiCapture?.length) await svc.blobs.put(captureKey(job), JSON.stringify(result.apiCapture), 'application/json');
  const warnings = storedWarnings(result.warnings);
  const pageCounts = { listing: before.listing + result.pageCounts.listing, detail: before.detail + result.pageCounts.detail, index: before.index + result.pageCounts.index };
  const pagesScraped = pageCounts.listing + pageCounts.detail + pageCounts.index;
  const warn = warnings.length ? `; ${warnings.length} warning${warnings.length === 1 ? '' : 's'} (listed in the job's warnings)` : '';
  return {
    row_count: result.rows.length,
    items_found: result.itemsFound,
    pages_scraped: pagesScraped,
    results_key: key,
    api_discovered: result.apiDiscovered ?? false,
    warnings,
    ...(changes ? { changes } : {}),
    status_message: `Completed: ${result.rows.length} rows from ${describePages(pageCounts)} (${choice.engine} engine; ${choice.reason})${healed}${result.sessionsRetired ? `; ${result.sessionsRetired}` : ''}${warn}`,
  };
}

/** Longest warning kept on a job, characters; the whole list at most {@link MAX_WARNINGS_CHARS} (a job is one DynamoDB item). */
const MAX_WARNING_CHARS = 500;
const MAX_WARNINGS_CHARS = 40_000;

/** A run's warnings as the job keeps them: each cut at {@link MAX_WARNING_CHARS}, the list cut at {@link MAX_WARNINGS_CHARS}. */
function storedWarnings(warnings: readonly string[]): string[] {
  const out: string[] = [];
  let chars = 0;
  for (const w of warnings) {
    const cut = w.length > MAX_WARNING_CHARS ? `${w.slice(0, MAX_WARNING_CHARS - 1)}…` : w;
    if (chars + cut.length > MAX_WARNINGS_CHARS) break;
    out.push(cut);
    chars += cut.length;
  }
  return out;
}
