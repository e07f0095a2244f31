/**
 * GET /api/v1/screenshots/{id}/ (docs/tools.md "screenshot"): a screenshot stored by the screenshot tool, for an
 * hour after it was taken. No API key: the id is the capability (128 random bits and its expiry), as a presigned
 * S3 URL is in the cloud, so the URL works in an `<img src>`.
 */
import { readScreenshot } from '../tools/screenshot.ts';
import { apiHandler, binary } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/screenshots/{id}/'), async (event, { svc }) => {
  const { body, contentType } = await readScreenshot(svc, event.pathParameters?.id ?? '');
  return binary(200, body, contentType, { 'Cache-Control': 'private, max-age=3600' });
});
