/**
 * GET /api/v1/jobs/: the caller's jobs, newest first, a page at a time (docs/api.md):
 * `?limit=1..100` (default 20) and `?cursor=` from the previous page's `next_cursor`.
 * Body: `{count, next_cursor, results}`; `count` is the caller's number of jobs in all.
 */
import { CodedError } from '../errors.ts';
import { jobListItem } from '../core/jobs.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const handler = apiHandler(route('GET', '/api/v1/jobs/'), async (event, { svc, account }) => {
  const q = event.queryStringParameters ?? {};
  const limit = q.limit === undefined ? DEFAULT_PAGE_SIZE : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new CodedError('invalid_request', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}; got "${q.limit}"`, [{ path: 'limit', message: 'out of range' }]);
  }
  const [page, count] = await Promise.all([svc.store.listJobs(account.id, limit, q.cursor || undefined), svc.store.countJobs(account.id)]);
  return json(200, { count, next_cursor: page.next_cursor, results: page.items.map(jobListItem) });
});
