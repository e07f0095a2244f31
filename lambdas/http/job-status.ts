/** GET /api/v1/jobs/{id}/status/ (SPEC.md): the whole job, for polling; 404 when absent or another account's. */
import { CodedError } from '../errors.ts';
import { jobStatusView } from '../core/jobs.ts';
import { apiHandler, json, uuidParam } from './middleware.ts';

export const handler = apiHandler({}, async (event, { svc, account }) => {
  const id = uuidParam(event, 'Job');
  const job = await svc.store.getJob(account.id, id);
  if (!job) throw new CodedError('not_found', `Job ${id} not found`);
  return json(200, await jobStatusView(svc, job));
});
