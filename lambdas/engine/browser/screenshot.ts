/**
 * Screenshots as an engine primitive (for the screenshot tool): a page rendered in a fresh context of the
 * worker's browser, through the guard proxy like every other page, images and fonts loaded.
 *
 * A hostile page cannot hold the shot past its budget (`timeoutMs + delayMs`): dialogs are answered
 * (page-guard.ts), a page that navigates itself is waited out while it settles (at most 5 s per read), a renderer
 * that crashes ends the shot at once (`page_crashed`), one that stays busy ends it at the budget
 * (`render_timeout`); the context is closed whatever happened.
 */
import type { Page } from 'puppeteer-core';
import { CodedError, isCodedError } from '../../errors.ts';
import type { BrowserHost } from './host.ts';
import { documentHtml, explainPageError, pageFailure, pageLoadTimeout, watchDocumentAnswer, watchNavigationLoop, whenSettled, withinDeadline } from './page-guard.ts';
import { blockMessage, detectBlock, mayBeBlock } from '../../net/blocks.ts';
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
  /**
   * Load time-out, ms; with `delayMs`, also the budget of the whole shot (loading, settling, the capture).
   * @default 30000
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Limits that keep one screenshot from exhausting the worker (docs/limits.md). */
export const SCREENSHOT_LIMITS = { minSize: 100, maxWidth: 3840, maxHeight: 2160, maxScale: 3, maxFullPageHeight: 16_384, maxDelayMs: 10_000 };

/** Longest wait for the network to go quiet after the load event, ms (pages that poll never do). */
const NETWORK_IDLE_WAIT_MS = 3_000;
/** Longest wait for the browser context to close after a shot, ms (a renderer stuck in a loop is killed meanwhile). */
const CLOSE_WAIT_MS = 5_000;

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
 * 3 s for its network to go quiet, then `delayMs`; all of it within `timeoutMs + delayMs`.
 * @returns the image bytes, their MIME type, the document's status and final URL.
 * @throws CodedError `invalid_request` for sizes out of range, `target_failed` when the page does not load,
 *   `target_forbidden` or `dns_failed` when the guard proxy refused or could not resolve its host;
 *   `page_crashed` (its renderer crashed or ran out of memory), `browser_crashed`, `page_unsettled` (it kept
 *   navigating itself), `page_load_timeout` (it answered, but its load event did not come in time: a script that
 *   never ends), `render_timeout` (loaded, but not rendered within the budget).
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
  const timeoutMs = o.timeoutMs ?? 30_000;
  const budgetMs = timeoutMs + delay;
  const deadline = Date.now() + budgetMs;
  /** Navigations of the page's main frame after its first load (a page that keeps navigating is never captured). */
  let navigations = -1;
  const timeUp = () => navigations > 0
    ? new CodedError('page_unsettled', `${url} kept navigating itself (${navigations} times after it loaded) and could not be captured within ${budgetMs} ms`, [{ url, navigations }])
    : new CodedError('render_timeout', `${url} did not finish rendering within ${budgetMs} ms (a script kept the page busy, or the shot could not be taken in time)`, [{ url, budget_ms: budgetMs }]);
  const context = await host.newContext({ images: true });
  let page: Page | null = null;
  try {
    page = await context.newPage();
    const p = page;
    p.on('framenavigated', (frame) => { if (frame === p.mainFrame()) navigations++; });
    /** A step of the shot, within the budget and the page's life. */
    const step = <T>(call: Promise<T>) => withinDeadline(p, call, deadline, timeUp, o.signal);
    /** A read of the page, waited out while the page navigates itself. */
    const read = <T>(call: () => Promise<T>) => step(whenSettled(p, call, { maxWaitMs: Math.min(5_000, Math.max(100, deadline - Date.now())), ...(o.signal ? { signal: o.signal } : {}) }));
    await step(p.setViewport({ width, height, deviceScaleFactor: scale }));
    let status = 0;
    const watch = watchNavigationLoop(p, url);
    const answer = watchDocumentAnswer(p);
    const loadTimeout = Math.max(1_000, Math.min(timeoutMs, deadline - Date.now()));
    try {
      const res = await step(Promise.race([
        p.goto(url, { waitUntil: 'load', timeout: loadTimeout, signal: o.signal } as Parameters<Page['goto']>[1]),
        watch.loop,
      ]));
      status = res?.status() ?? 200;
      navigations = 0;
      // A bot-protection page is not the site: no shot of it (lambdas/net/blocks.ts).
      const headers = res?.headers() ?? {};
      const block = mayBeBlock(status, headers) ? detectBlock({ status, headers, body: await read(() => documentHtml(p)).catch((e: unknown) => { if (isCodedError(e)) throw e; return ''; }) }) : null;
      if (block) throw new CodedError('blocked', `${blockMessage(block, url, 'none')}; no screenshot was taken and the call is not charged`, [{ url, service: block.service, kind: block.kind, status }]);
    } catch (err) {
      if (isCodedError(err) && err.code !== 'render_timeout') throw err;
      const restless = watch.unsettled();
      if (restless) throw restless;
      const event = context.proxyEvents.byHost.get(new URL(url).hostname.replace(/^\[|\]$/g, ''));
      if (event?.code === 'target_forbidden' || event?.code === 'dns_failed') throw new CodedError(event.code, event.message, [{ url }]);
      // It answered and the load ran out of time: the page's doing, not an unreachable target.
      if (answer.answered() && (isCodedError(err) || (err as Error)?.name === 'TimeoutError')) throw pageLoadTimeout(url, loadTimeout);
      const message = isCodedError(err) ? `not loaded within ${timeoutMs} ms` : (err as Error).message.split('\n')[0];
      throw new CodedError('target_failed', `${url} could not be loaded: ${message}`, [{ url }]);
    } finally {
      watch.stop();
      answer.stop();
    }
    await step(p.waitForNetworkIdle({ idleTime: 500, timeout: Math.max(100, Math.min(NETWORK_IDLE_WAIT_MS, deadline - Date.now())) }).catch(() => undefined));
    if (o.waitSelector) {
      const selector = o.waitSelector;
      await read(() => p.waitForSelector(selector, { timeout: Math.max(100, deadline - Date.now()) })).catch((err: unknown) => {
        if (isCodedError(err)) throw err;
      });
    }
    const pageHeight = () => read(() => p.evaluate(() => document.documentElement.scrollHeight));
    if (o.fullPage) {
      const full = await pageHeight();
      if (full > SCREENSHOT_LIMITS.maxFullPageHeight) await step(p.setViewport({ width, height: Math.min(full, SCREENSHOT_LIMITS.maxFullPageHeight), deviceScaleFactor: scale }));
    }
    if (delay) await step(sleep(delay, o.signal));
    const fullPage = Boolean(o.fullPage) && (await pageHeight()) <= SCREENSHOT_LIMITS.maxFullPageHeight;
    const bytes = await read(() => p.screenshot({ type, fullPage, ...(type === 'png' ? {} : { quality: o.quality ?? 80 }) }));
    return { body: Buffer.from(bytes), contentType: `image/${type}`, status, url: p.url() };
  } catch (err) {
    if (page && !isCodedError(err)) throw explainPageError(page, err);
    throw (page && pageFailure(page)) ?? err;
  } finally {
    const stop = new AbortController();
    await Promise.race([context.close().catch(() => undefined), sleep(CLOSE_WAIT_MS, stop.signal).catch(() => undefined)]);
    stop.abort();
  }
}
