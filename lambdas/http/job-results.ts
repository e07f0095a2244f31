/**
 * GET /api/v1/jobs/{id}/results/ (SPEC.md): `[{data, row_count}]` with every row of a completed job;
 * `[]` for a failed job; 409 `job_not_finished` while it is pending or running (docs/api.md).
 */
import { CodedError } from '../errors.ts';
import { rowsJson } from '../core/jobs.ts';
import { apiHandler, json, uuidParam } from './middleware.ts';

export const handler = apiHandler({}, async (event, { svc, account }) => {
  const id = uuidParam(event, 'Job');
  const job = await svc.store.getJob(account.id, id);
  if (!job) throw new CodedError('not_found', `Job ${id} not found`);
  if (job.status === 'failed') return json(200, []);
  if (job.status !== 'completed') {
    throw new CodedError('job_not_finished', `Job ${id} is ${job.status} (${job.progress}%); poll /api/v1/jobs/${id}/status/ until it is completed`, [{ status: job.status, progress: job.progress }]);
  }
  // The stored rows are already JSON: wrapped, not parsed and serialized again.
  const rows = (await rowsJson(svc, job)) ?? '[]';
  return { ...json(200, []), body: `[{"data":${rows},"row_count":${job.row_count}}]` };
});
