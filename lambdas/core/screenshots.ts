/**
 * The screenshot tool's work (docs/tools.md "screenshot"): the call's checks and metering (core/tools.ts), a
 * reachability probe, the shot in the worker's browser, and, for a JSON answer, the image stored with a URL
 * that works for an hour.
 */
import type { BrowserHost } from '../engine/browser/host.ts';
import type { Screenshot } from '../engine/browser/screenshot.ts';
import { browserLoadError, inlineBrowserTools } from './browser-tools.ts';
import { imageSize, newScreenshotId, SCREENSHOT_PREFIX, SCREENSHOT_TTL_S, type ScreenshotBody, type ScreenshotFormat, type ScreenshotStored } from '../tools/screenshot.ts';
import type { AccountRecord } from './ports.ts';
import type { Services } from './services.ts';
import { probeTarget, startToolCall, withRefundOnUnreachable } from './tools.ts';

/**
 * Takes the screenshot a tool call asks for: checks and metering, a reachability probe, then the shot where
 * `svc.browserTools` says (the local service's browser thread), else in `host()`'s browser in this thread.
 * @param host the browser of this process (a worker's, or the local service's), made on first use.
 * @returns the image.
 * @throws CodedError as core/tools.ts `startToolCall`; `target_unreachable` (422) when the page cannot be
 *   loaded; `target_forbidden` when the guard refuses it or a request of its navigation; the page's own failures
 *   (`page_crashed`, `browser_crashed`, `page_unsettled`, `render_timeout`, `page_load_timeout`).
 */
export async function takeScreenshot(svc: Services, account: AccountRecord, host: () => BrowserHost, body: ScreenshotBody): Promise<Screenshot> {
  const call = await startToolCall(svc, account, 'screenshot', body.url);
  return withRefundOnUnreachable(svc, account, call, async () => {
    await probeTarget(svc, call);
    try {
      return await (svc.browserTools ?? inlineBrowserTools(host)).screenshot({
        url: call.url.href,
        options: {
          type: body.format ?? 'png',
          fullPage: body.full_page ?? false,
          width: body.width ?? 1366,
          height: body.height ?? 900,
          deviceScaleFactor: body.device_scale_factor ?? 1,
          delayMs: body.delay ?? 0,
          timeoutMs: Math.max(1_000, call.deadlineMs - 5_000 - (body.delay ?? 0)),
        },
        deadlineAt: call.startedAt + call.deadlineMs,
        owner: String(account.id),
      });
    } catch (err) {
      throw browserLoadError(call.url.href, err);
    }
  });
}

/**
 * Stores a screenshot for {@link SCREENSHOT_TTL_S} seconds and says where it is: a presigned URL where the blob
 * store has them (S3), else this service's GET /api/v1/screenshots/{id}/ under `baseUrl`.
 * @param baseUrl the service's origin as the caller reached it, e.g. `http://127.0.0.1:8787`.
 */
export async function storeScreenshot(svc: Services, shot: Screenshot, baseUrl: string): Promise<ScreenshotStored> {
  const format = shot.contentType.slice('image/'.length) as ScreenshotFormat;
  const { id, expiresAt } = newScreenshotId(format, svc.clock.now());
  const key = `${SCREENSHOT_PREFIX}${id}`;
  await svc.blobs.put(key, shot.body, shot.contentType);
  const url = svc.blobs.presignGet ? await svc.blobs.presignGet(key, SCREENSHOT_TTL_S) : `${baseUrl}/api/v1/screenshots/${id}/`;
  const { width, height } = imageSize(shot.body);
  return { url, width, height, format, bytes: shot.body.length, expires_at: expiresAt.toISOString() };
}
