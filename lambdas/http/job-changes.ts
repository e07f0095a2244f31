/**
 * GET /api/v1/jobs/{id}/changes/ (issue 26, docs/monitoring.md): what a completed run of a saved config changed
 * since the config's previous completed run. `?change=added|removed|changed`, `?offset=` (0) and `?limit=` (100, at
 * most 1000); 409 `job_not_finished` while the job is pending or running; another account's job is 404.
 */
import { CodedError } from '../errors.ts';
import { CHANGE_KINDS, jobChangesPage, type ChangeKind } from '../core/run-changes.ts';
import { apiHandler, intQueryParam, json, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

const MAX_LIMIT = 1000;

export const handler = apiHandler(route('GET', '/api/v1/jobs/{id}/changes/'), async (event, { svc, account }) => {
  const id = uuidParam(event, 'Job');
  const q = event.queryStringParameters ?? {};
  if (q.change !== undefined && !(CHANGE_KINDS as readonly string[]).includes(q.change)) {
    throw new CodedError('invalid_request', `change must be one of ${CHANGE_KINDS.join(', ')}; got "${q.change.slice(0, 20)}"`, [{ path: 'change', message: `must be one of ${CHANGE_KINDS.join(', ')}` }]);
  }
  const offset = intQueryParam(event, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const limit = intQueryParam(event, 'limit', 100, 1, MAX_LIMIT);
  const job = await svc.store.getJob(account.id, id);
  if (!job) throw new CodedError('not_found', `Job ${id} not found`);
  if (job.status !== 'completed' && job.status !== 'failed') {
    throw new CodedError('job_not_finished', `Job ${id} is ${job.status} (${job.progress}%); its changes are known once it is completed`, [{ status: job.status, progress: job.progress }]);
  }
  return json(200, await jobChangesPage(svc, job, { change: q.change as ChangeKind | undefined, offset, limit }));
});
