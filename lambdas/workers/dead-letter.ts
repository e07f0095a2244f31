/**
 * The dead-letter consumer: messages the run (or generate) queue gave up on after maxReceiveCount
 * deliveries. Their jobs end `failed` with the reason, so no job stays `running` for ever, and the running-job
 * slot a job's dead worker held (AWS, ./job-queue-handler.ts) is given back at once rather than when its lease ends.
 */
import type { SQSEvent } from 'aws-lambda';
import { deadLetter } from '../core/jobs.ts';
import { services } from '../core/services.ts';
import { logger } from '../logger.ts';
import { releaseSlotOf, startedDeliveries } from './job-queue-handler.ts';

export async function handler(event: SQSEvent): Promise<void> {
  const svc = await services();
  for (const record of event.Records) {
    let jobId: string | undefined;
    try {
      jobId = (JSON.parse(record.body) as { job_id?: string }).job_id;
    } catch {
      jobId = undefined;
    }
    if (!jobId) continue;
    await deadLetter(svc, jobId, await startedDeliveries(svc, jobId, Number(record.attributes.ApproximateReceiveCount) || svc.maxReceives));
    await releaseSlotOf(svc, jobId).catch((err: unknown) => logger.error('job slot not given back; its lease frees it', { jobId, error: err }));
  }
}
