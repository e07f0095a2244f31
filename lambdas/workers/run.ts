/**
 * The run worker: an SQS consumer (Lambda event source mapping with ReportBatchItemFailures; locally,
 * the worker threads of bin/local.ts deliver the same event shape). Each record's body is
 * `{"job_id": "…"}`; a record that should be delivered again is reported in `batchItemFailures`.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { executeRun } from '../core/run-worker.ts';
import type { RunMessage } from '../core/runs.ts';
import { services } from '../core/services.ts';

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const svc = await services();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    let jobId: string;
    try {
      jobId = (JSON.parse(record.body) as RunMessage).job_id;
    } catch {
      console.error(JSON.stringify({ level: 'error', message: 'unreadable run message dropped', messageId: record.messageId }));
      continue;
    }
    try {
      const outcome = await executeRun(svc, jobId, {
        receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
        maxReceives: svc.maxReceives,
      });
      if (outcome === 'retry') failures.push({ itemIdentifier: record.messageId });
    } catch (err) {
      console.error(JSON.stringify({ level: 'error', message: 'run delivery failed', jobId, error: (err as Error).stack }));
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
