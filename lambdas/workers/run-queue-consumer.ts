/**
 * The run queue's consumer, the run-worker Lambda: an SQS event source mapping with
 * ReportBatchItemFailures delivers run messages (locally, the worker threads of the local service deliver
 * the same event shape, lambdas/adapters/local/worker-thread.ts). Each record's body is `{"job_id": "…"}`
 * and is one delivery for core/run-job-executor.ts; a record that should be delivered again is reported
 * in `batchItemFailures`.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { executeRun } from '../core/run-job-executor.ts';
import type { RunMessage } from '../core/run-jobs.ts';
import { services, type Services } from '../core/services.ts';
import { BrowserHost } from '../engine/browser/host.ts';
import { logger } from '../logger.ts';

/** This worker's browser: one per worker (Lambda instance, local worker thread), launched on first use. */
let host: BrowserHost | null = null;
const launchListeners: Array<(pid: number) => void> = [];
function browser(svc: Services): BrowserHost {
  host ??= new BrowserHost({ guard: svc.guard, onLaunch: (pid) => launchListeners.forEach((fn) => fn(pid)) });
  return host;
}

/** Subscribes to browser launches of this worker (pid of each Chromium started). */
export function onBrowserLaunch(fn: (pid: number) => void): void {
  launchListeners.push(fn);
}

/** Closes this worker's browser (local worker threads call it when they stop). */
export async function closeBrowser(): Promise<void> {
  await host?.close();
  host = null;
}

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const svc = await services();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    let jobId: string;
    try {
      jobId = (JSON.parse(record.body) as RunMessage).job_id;
    } catch {
      logger.error('unreadable run message dropped', { messageId: record.messageId });
      continue;
    }
    try {
      const outcome = await executeRun(svc, jobId, {
        receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
        maxReceives: svc.maxReceives,
      }, () => browser(svc));
      if (outcome === 'retry') failures.push({ itemIdentifier: record.messageId });
    } catch (err) {
      logger.error('run delivery failed', { jobId, messageId: record.messageId, error: err });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
