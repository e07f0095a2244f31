/**
 * Screenshots as an engine primitive (for the screenshot tool): a page rendered in a fresh context of the
 * worker's browser, through the guard proxy like every other page, images and fonts loaded.
 */
import { CodedError } from '../../errors.ts';
import type { BrowserHost } from './host.ts';
import { sleep } from '../../sleep.ts';

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
  /** Extra wait after the page loaded and its network went quiet, before the shot, ms (animations, lazy images). @default 0 */
  delayMs?: number;
  /** Load time-out, ms. @default 30000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Limits that keep one screenshot from exhausting the worker (docs/limits.md). */
export const SCREENSHOT_LIMITS = { minSize: 100, maxWidth: 3840, maxHeight: 2160, maxScale: 3, maxFullPageHeight: 16_384, maxDelayMs: 10_000 };

/** Longest wait for the network to go quiet after the load event, ms (pages that poll never do). */
const NETWORK_IDLE_WAIT_MS = 3_000;

/** A screenshot taken. */
export interface Screenshot {
  body: Buffer;
  /** `image/png`, `image/jpeg` or `image/webp`. */
  contentType: string;
  /** HTTP status of the page's document (a 404 page is photographed as it shows). */
  status: number;
  /** The page's URL after redirects. */
  url: string;
}

/**
 * Takes a screenshot of a URL: the page is loaded until its load event (at most `timeoutMs`), then given up to
 * 3 s for its network to go quiet, then `delayMs`.
 * @returns the image bytes, their MIME type, the document's status and final URL.
 * @throws CodedError `invalid_request` for sizes out of range, `target_failed` when the page does not load,
 *   `target_forbidden` or `dns_failed` when the guard proxy refused or could not resolve its host.
 */
export async function screenshot(host: BrowserHost, url: string, o: ScreenshotOptions = {}): Promise<Screenshot> {
  const width = o.width ?? 1366;
  const height = o.height ?? 900;
  const scale = o.deviceScaleFactor ?? 1;
  const type = o.type ?? 'png';
  const L = SCREENSHOT_LIMITS;
  if (!(width >= L.minSize && width <= L.maxWidth && height >= L.minSize && height <= L.maxHeight && scale > 0 && scale <= L.maxScale)) {
    throw new CodedError('invalid_request', `Screenshot size out of range: width ${L.minSize}-${L.maxWidth}, height ${L.minSize}-${L.maxHeight}, device scale factor up to ${L.maxScale}`);
  }
  const delay = o.delayMs ?? 0;
  if (!(delay >= 0 && delay <= L.maxDelayMs)) throw new CodedError('invalid_request', `Screenshot delay out of range: 0-${L.maxDelayMs} ms`);
  host.guardCheck(url);
  const context = await host.newContext({ images: true });
  try {
    const page = await context.newPage();
    await page.setViewport({ width, height, deviceScaleFactor: scale });
    let status = 0;
    try {
      const res = await page.goto(url, { waitUntil: 'load', timeout: o.timeoutMs ?? 30_000, signal: o.signal } as Parameters<typeof page.goto>[1]);
      status = res?.status() ?? 200;
    } catch (err) {
      const event = context.proxyEvents.byHost.get(new URL(url).hostname.replace(/^\[|\]$/g, ''));
      if (event?.code === 'target_forbidden' || event?.code === 'dns_failed') throw new CodedError(event.code, event.message, [{ url }]);
      throw new CodedError('target_failed', `${url} could not be loaded: ${(err as Error).message.split('\n')[0]}`, [{ url }]);
    }
    await page.waitForNetworkIdle({ idleTime: 500, timeout: NETWORK_IDLE_WAIT_MS }).catch(() => undefined);
    if (o.waitSelector) await page.waitForSelector(o.waitSelector, { timeout: o.timeoutMs ?? 30_000 }).catch(() => undefined);
    if (o.fullPage) {
      const full = await page.evaluate(() => document.documentElement.scrollHeight);
      if (full > SCREENSHOT_LIMITS.maxFullPageHeight) await page.setViewport({ width, height: Math.min(full, SCREENSHOT_LIMITS.maxFullPageHeight), deviceScaleFactor: scale });
    }
    if (delay) await sleep(delay, o.signal);
    const bytes = await page.screenshot({
      type,
      fullPage: Boolean(o.fullPage) && (await page.evaluate(() => document.documentElement.scrollHeight)) <= SCREENSHOT_LIMITS.maxFullPageHeight,
      ...(type === 'png' ? {} : { quality: o.quality ?? 80 }),
    });
    return { body: Buffer.from(bytes), contentType: `image/${type}`, status, url: page.url() };
  } finally {
    await context.close().catch(() => undefined);
  }
}
