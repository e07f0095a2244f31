/**
 * Screenshots as an engine primitive (for the screenshot tool): a page rendered in a fresh context of the
 * worker's browser, through the guard proxy like every other page, images and fonts loaded.
 */
import { CodedError } from '../../errors.ts';
import type { BrowserHost } from './host.ts';

/** Options of {@link screenshot}. Sizes in CSS pixels. */
export interface ScreenshotOptions {
  /** Viewport width. @default 1366 */
  width?: number;
  /** Viewport height. @default 900 */
  height?: number;
  /** Device scale factor (2 for "retina"). @default 1 */
  deviceScaleFactor?: number;
  /** The whole page instead of the viewport. @default false */
  fullPage?: boolean;
  /** @default 'png' */
  type?: 'png' | 'jpeg' | 'webp';
  /** 0-100 for jpeg and webp. @default 80 */
  quality?: number;
  /** A CSS selector awaited before the shot. */
  waitSelector?: string;
  /** Load time-out, ms. @default 30000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Limits that keep one screenshot from exhausting the worker (docs/limits.md). */
const SCREENSHOT_LIMITS = { maxWidth: 3840, maxHeight: 2160, maxScale: 3, maxFullPageHeight: 16_384 };

/**
 * Takes a screenshot of a URL.
 * @returns the image bytes and their MIME type.
 * @throws CodedError `invalid_request` for sizes out of range, `target_failed` when the page does not load,
 *   `target_forbidden` when the guard refuses it.
 */
export async function screenshot(host: BrowserHost, url: string, o: ScreenshotOptions = {}): Promise<{ body: Buffer; contentType: string }> {
  const width = o.width ?? 1366;
  const height = o.height ?? 900;
  const scale = o.deviceScaleFactor ?? 1;
  const type = o.type ?? 'png';
  if (!(width >= 100 && width <= SCREENSHOT_LIMITS.maxWidth && height >= 100 && height <= SCREENSHOT_LIMITS.maxHeight && scale > 0 && scale <= SCREENSHOT_LIMITS.maxScale)) {
    throw new CodedError('invalid_request', `Screenshot size out of range: width 100-${SCREENSHOT_LIMITS.maxWidth}, height 100-${SCREENSHOT_LIMITS.maxHeight}, device scale factor up to ${SCREENSHOT_LIMITS.maxScale}`);
  }
  host.guardCheck(url);
  const context = await host.newContext({ images: true });
  try {
    const page = await context.newPage();
    await page.setViewport({ width, height, deviceScaleFactor: scale });
    let status = 0;
    try {
      const res = await page.goto(url, { waitUntil: 'networkidle2', timeout: o.timeoutMs ?? 30_000, signal: o.signal } as Parameters<typeof page.goto>[1]);
      status = res?.status() ?? 200;
    } catch (err) {
      const event = context.proxyEvents.byHost.get(new URL(url).hostname.replace(/^\[|\]$/g, ''));
      if (event?.code === 'target_forbidden' || event?.code === 'dns_failed') throw new CodedError(event.code, event.message, [{ url }]);
      throw new CodedError('target_failed', `${url} could not be loaded: ${(err as Error).message.split('\n')[0]}`, [{ url }]);
    }
    if (status >= 400) throw new CodedError('target_failed', `${url} answered HTTP ${status}`, [{ url, status }]);
    if (o.waitSelector) await page.waitForSelector(o.waitSelector, { timeout: o.timeoutMs ?? 30_000 }).catch(() => undefined);
    if (o.fullPage) {
      const full = await page.evaluate(() => document.documentElement.scrollHeight);
      if (full > SCREENSHOT_LIMITS.maxFullPageHeight) await page.setViewport({ width, height: Math.min(full, SCREENSHOT_LIMITS.maxFullPageHeight), deviceScaleFactor: scale });
    }
    const bytes = await page.screenshot({
      type,
      fullPage: Boolean(o.fullPage) && (await page.evaluate(() => document.documentElement.scrollHeight)) <= SCREENSHOT_LIMITS.maxFullPageHeight,
      ...(type === 'png' ? {} : { quality: o.quality ?? 80 }),
    });
    return { body: Buffer.from(bytes), contentType: `image/${type}` };
  } finally {
    await context.close().catch(() => undefined);
  }
}
