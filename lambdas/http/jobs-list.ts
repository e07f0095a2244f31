/**
 * GET /api/v1/jobs/: the caller's jobs, newest first, a page at a time (docs/api.md):
 * `?limit=1..100` (default 20) and `?cursor=` from the previous page's `next_cursor`.
 * Body: `{count, next_cursor, results}`; `count` is the caller's number of jobs in all.
 */
import { jobListItem } from '../core/jobs.ts';
import { apiHandler, intQueryParam, json } from './middleware.ts';
import { route } from '../routes.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const handler = apiHandler(route('GET', '/api/v1/jobs/'), async (event, { svc, account }) => {
  const limit = intQueryParam(event, 'limit', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
  const cursor = event.queryStringParameters?.cursor || undefined;
  const [page, count] = await Promise.all([svc.store.listJobs(account.id, limit, cursor), svc.store.countJobs(account.id)]);
  return json(200, { count, next_cursor: page.next_cursor, results: page.items.map(jobListItem) });
});
