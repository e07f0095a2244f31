/** GET /api/v1/jobs/{id}/status/ (SPEC.md): the whole job, for polling; 404 when absent or another account's. */
import { CodedError } from '../errors.ts';
import { jobStatusJson } from '../core/jobs.ts';
import { apiHandler, jsonText, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/jobs/{id}/status/'), async (event, { svc, account }) => {
  const id = uuidParam(event, 'Job');
  const job = await svc.store.getJob(account.id, id);
  if (!job) throw new CodedError('not_found', `Job ${id} not found`);
  return jsonText(200, await jobStatusJson(svc, job));
});
