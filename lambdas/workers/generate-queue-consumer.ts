/**
 * The generate queue's consumer, the generate-worker Lambda (locally, the worker threads deliver the same
 * event shape): each record's body is `{"job_id": "…"}` and is one delivery for
 * core/generate-job-executor.ts; a record that should be delivered again is reported in `batchItemFailures`.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { executeGenerate } from '../core/generate-job-executor.ts';
import type { GenerateMessage } from '../core/generate-jobs.ts';
import { services } from '../core/services.ts';
import { logger } from '../logger.ts';
import { workerBrowser } from './worker-browser.ts';

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const svc = await services();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    let jobId: string;
    try {
      jobId = (JSON.parse(record.body) as GenerateMessage).job_id;
    } catch {
      logger.error('unreadable generate message dropped', { messageId: record.messageId });
      continue;
    }
    try {
      const outcome = await executeGenerate(svc, jobId, {
        receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
        maxReceives: svc.maxReceives,
      }, { browser: () => workerBrowser(svc) });
      if (outcome === 'retry') failures.push({ itemIdentifier: record.messageId });
    } catch (err) {
      logger.error('generate delivery failed', { jobId, messageId: record.messageId, error: err });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
