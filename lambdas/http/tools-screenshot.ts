/**
 * POST /api/v1/tools/screenshot/ (docs/spec.md, "Tool endpoints"; docs/tools.md): the page as an image (`image/png` by default),
 * or with `Accept: application/json` the stored image's `{url, width, height, format, bytes, expires_at}`.
 */
import { storeScreenshot, takeScreenshot } from '../core/screenshots.ts';
import type { ScreenshotBody } from '../tools/screenshot.ts';
import { workerBrowser } from '../workers/worker-browser.ts';
import { acceptsJson, apiHandler, binary, json, requestHeader } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<ScreenshotBody>(route('POST', '/api/v1/tools/screenshot/'), async (event, { svc, account, body }) => {
  const shot = await takeScreenshot(svc, account, () => workerBrowser(svc), body);
  if (!acceptsJson(event)) return binary(200, shot.body, shot.contentType, { 'Content-Disposition': `inline; filename="screenshot.${body.format ?? 'png'}"` });
  const origin = `${requestHeader(event, 'x-forwarded-proto') ?? 'http'}://${requestHeader(event, 'host') ?? '127.0.0.1'}`;
  return json(200, await storeScreenshot(svc, shot, origin));
});
