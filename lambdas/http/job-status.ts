/**
 * GET /api/v1/jobs/{id}/status/ (docs/spec.md): the whole job, for polling; 404 when absent or another account's.
 * A finished job's answer never changes: it is served from the process's copy (core/jobs.ts `cachedFinishedStatus`)
 * without reading the store, with an `ETag`; a request whose `If-None-Match` names it gets a 304 without a body.
 */
import { CodedError } from '../errors.ts';
import { cachedFinishedStatus, jobStatusAnswer } from '../core/jobs.ts';
import { apiHandler, jsonText, requestHeader, uuidParam, type ApiEvent, type ApiResult } from './middleware.ts';
import { route } from '../routes.ts';

/** Whether an `If-None-Match` value names `etag` (a list of tags, weak ones compared weakly, or `*`; RFC 9110 13.1.2). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

function answer(event: ApiEvent, text: string, etag: string | undefined): ApiResult {
  if (!etag) return jsonText(200, text);
  if (matches(requestHeader(event, 'if-none-match'), etag)) {
    return { statusCode: 304, headers: { ETag: etag, 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'ETag' }, body: '' };
  }
  const res = jsonText(200, text);
  res.headers = { ...res.headers, ETag: etag, 'Access-Control-Expose-Headers': 'ETag' };
  return res;
}

export const handler = apiHandler(route('GET', '/api/v1/jobs/{id}/status/'), async (event, { svc, account }) => {
  const id = uuidParam(event, 'Job');
  const cached = cachedFinishedStatus(account.id, id);
  if (cached) return answer(event, cached.text, cached.etag);
  const job = await svc.store.getJob(account.id, id);
  if (!job) throw new CodedError('not_found', `Job ${id} not found`);
  const a = await jobStatusAnswer(svc, job);
  return answer(event, a.text, a.etag);
});
