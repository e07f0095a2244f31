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
import { services } from '../core/services.ts';
import { logger } from '../logger.ts';
import { workerBrowser } from './worker-browser.ts';

export { closeBrowser, onBrowserLaunch } from './worker-browser.ts';

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
      }, () => workerBrowser(svc));
      if (outcome === 'retry') failures.push({ itemIdentifier: record.messageId });
    } catch (err) {
      logger.error('run delivery failed', { jobId, messageId: record.messageId, error: err });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
