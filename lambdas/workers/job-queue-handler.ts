/**
 * The one shape of a job queue's consumer (SQS with ReportBatchItemFailures; locally the worker threads
 * deliver the same event shape, lambdas/adapters/local/worker-thread.ts): each record's body is
 * `{"job_id": "…"}` and is one delivery for the job type's executor; a record that should be delivered
 * again (the executor says `retry`, or it throws) is reported in `batchItemFailures`; an unreadable body is
 * logged and dropped (no delivery could ever read it).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { QueueName } from '../core/ports.ts';
import type { DeliveryOutcome } from '../core/run-job-executor.ts';
import { services, type Services } from '../core/services.ts';
import { logger } from '../logger.ts';

/** One delivery of a job: the receive count of its message and the most a message gets. */
export interface Delivery {
  receiveCount: number;
  maxReceives: number;
}

/**
 * A queue consumer handler for one job type.
 * @param queue the queue's name, for the log lines.
 * @param deliver runs one delivery of the job with that id.
 */
export function jobQueueHandler(queue: QueueName, deliver: (svc: Services, jobId: string, delivery: Delivery) => Promise<DeliveryOutcome>): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const svc = await services();
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      let jobId: string;
      try {
        jobId = (JSON.parse(record.body) as { job_id: string }).job_id;
      } catch {
        logger.error(`unreadable ${queue} message dropped`, { messageId: record.messageId });
        continue;
      }
      try {
        const outcome = await deliver(svc, jobId, { receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1, maxReceives: svc.maxReceives });
        if (outcome === 'retry') failures.push({ itemIdentifier: record.messageId });
      } catch (err) {
        logger.error(`${queue} delivery failed`, { jobId, messageId: record.messageId, error: err });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };
}
