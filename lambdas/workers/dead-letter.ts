/**
 * The dead-letter consumer: messages the run (or generate) queue gave up on after maxReceiveCount
 * deliveries. Their jobs end `failed` with the reason, so no job stays `running` for ever.
 */
import type { SQSEvent } from 'aws-lambda';
import { deadLetter } from '../core/jobs.ts';
import { services } from '../core/services.ts';

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
    await deadLetter(svc, jobId, Number(record.attributes.ApproximateReceiveCount) || svc.maxReceives);
  }
}
