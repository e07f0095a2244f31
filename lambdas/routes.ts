/**
 * The route table (ARCHITECTURE.md, idea 2): the one list of the HTTP API. It drives the local router
 * (bin/local.ts), the API Gateway resources and per-route Lambdas (lib/), and the API docs. Adding an
 * endpoint is a line here plus its handler in lambdas/http/.
 *
 * Paths are SPEC.md's, with their trailing slash; `{id}` is a path parameter.
 */

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export interface RouteDef {
  method: HttpMethod;
  /** SPEC.md path, e.g. `/api/v1/jobs/{id}/status/`. */
  path: string;
  /** Handler module under lambdas/, exporting `handler`. */
  handler: string;
  /** Whether the route needs `Authorization: Bearer sai_…` (checked by lambdas/authorizer). */
  auth: boolean;
  /** Whether the call starts work (counted by the rate limit and the quota). */
  startsWork: boolean;
  summary: string;
}

export const routes: readonly RouteDef[] = [
  { method: 'POST', path: '/api/v1/auth/login/', handler: 'http/login.ts', auth: false, startsWork: false, summary: 'Exchange email and password for the API key' },
  { method: 'GET', path: '/api/v1/me/', handler: 'http/me.ts', auth: true, startsWork: false, summary: 'Account and subscription' },
  { method: 'GET', path: '/api/v1/configs/', handler: 'http/configs-list.ts', auth: true, startsWork: false, summary: 'List configs' },
  { method: 'POST', path: '/api/v1/configs/', handler: 'http/configs-create.ts', auth: true, startsWork: false, summary: 'Create a config' },
  { method: 'GET', path: '/api/v1/configs/{id}/', handler: 'http/configs-get.ts', auth: true, startsWork: false, summary: 'Read one config with its YAML' },
  { method: 'DELETE', path: '/api/v1/configs/{id}/', handler: 'http/configs-delete.ts', auth: true, startsWork: false, summary: 'Delete a config' },
  { method: 'POST', path: '/api/v1/run/', handler: 'http/run.ts', auth: true, startsWork: true, summary: 'Start a run job' },
  { method: 'GET', path: '/api/v1/jobs/', handler: 'http/jobs-list.ts', auth: true, startsWork: false, summary: 'List jobs' },
  { method: 'GET', path: '/api/v1/jobs/{id}/status/', handler: 'http/job-status.ts', auth: true, startsWork: false, summary: 'Job status and progress' },
  { method: 'GET', path: '/api/v1/jobs/{id}/results/', handler: 'http/job-results.ts', auth: true, startsWork: false, summary: 'Scraped rows' },
];

/** A compiled matcher for a route path: `/api/v1/jobs/{id}/status/` -> regex with named groups. */
export function pathMatcher(path: string): RegExp {
  const body = path.replace(/\/$/, '').split('/').map((seg) => {
    const m = /^\{(\w+)\}$/.exec(seg);
    return m ? `(?<${m[1]}>[^/]+)` : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('/');
  // API Gateway treats a path with and without its trailing slash alike; so does the local router.
  return new RegExp(`^${body}/?$`);
}
