/**
 * What makes a Chromium page safe to drive when the page is hostile (issue 24; docs/crawler.md "Hostile pages in the
 * browser"): dialogs answered at once, a crashed renderer's page closed at once, reads that wait out a page
 * navigating itself, loads that stop a page navigating in a loop, and calls bounded by a deadline and the page's
 * life. BrowserHost (./host.ts) guards every page it opens; the browser loader and the screenshot use the rest.
 * Kept apart from host.ts so that modules that only need these (and their codes) do not bundle the browser.
 */
import type { Browser, BrowserContext, Dialog, HTTPRequest, HTTPResponse, Page, Target } from 'puppeteer-core';
import { CodedError } from '../../errors.ts';

/** Pages whose renderer crashed, with the error that says so. */
const crashedPages = new WeakMap<Page, CodedError>();

/** Answers a dialog the way a person who wants the page's content would: leave on beforeunload, else dismiss. */
function answerDialog(dialog: Dialog): void {
  void (dialog.type() === 'beforeunload' ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
}

/**
 * Makes a page safe to drive: its dialogs are answered at once (a dialog left open blocks the page's scripts,
 * and with them every evaluation and navigation), and a renderer crash closes it (pending calls fail at once).
 */
export function guardPage(page: Page): Page {
  page.on('dialog', answerDialog);
  page.on('error', (err: Error) => {
    if (!crashedPages.has(page)) {
      crashedPages.set(page, new CodedError('page_crashed', `The page crashed at ${page.url() || 'its first load'} (${err.message}): a page that allocates without bound or crashes its renderer fails, the next one gets a fresh renderer`, [{ url: page.url() }]));
    }
    void page.close().catch(() => undefined);
  });
  return page;
}

/** Guards every page opened in a context by its pages (window.open, target=_blank): popups answer dialogs too. */
export function guardPopups(source: Browser | BrowserContext): void {
  source.on('targetcreated', (target: Target) => {
    if (target.type() !== 'page' || !target.opener()) return;
    void target.page().then((p) => { if (p) guardPage(p); }, () => undefined);
  });
}

/** The crash of a page guarded by {@link guardPage}, or null. */
export function pageFailure(page: Page): CodedError | null {
  return crashedPages.get(page) ?? null;
}

/** Whether an error of a page call means the page's document went away under it (a navigation). */
export function isNavigationError(err: unknown): boolean {
  const msg = (err as Error)?.message ?? '';
  return /Execution context was destroyed|Cannot find context with specified id|Execution context is not available|frame (was|got) detached|Navigating frame was detached|Inspected target navigated or closed|Node is detached from document|Not attached to an active page/i.test(msg);
}

/**
 * What a failed call on a page means for the caller, as a CodedError where the page is the cause: its renderer
 * crashed (`page_crashed`), the browser went away (`browser_crashed`), or it kept navigating (`page_unsettled`).
 * Any other error is returned as it is.
 */
export function explainPageError(page: Page, err: unknown): unknown {
  const crash = pageFailure(page);
  if (crash) return crash;
  if (err instanceof CodedError) return err;
  const msg = (err as Error)?.message ?? String(err);
  if (!page.browser().connected || /browser has disconnected|Connection closed/i.test(msg)) {
    return new CodedError('browser_crashed', `The browser stopped while it rendered ${page.url()} (${msg.split('\n')[0]}); the next call starts a new browser`);
  }
  if (/Target crashed|Page crashed/i.test(msg)) {
    return new CodedError('page_crashed', `The page crashed at ${page.url()} (${msg.split('\n')[0]})`, [{ url: page.url() }]);
  }
  if (isNavigationError(err)) {
    return new CodedError('page_unsettled', `The page ${page.url()} navigated away while it was being read, and did not settle`, [{ url: page.url() }]);
  }
  return err;
}

/**
 * Watches whether the target answered a page's load: the main frame's document response (headers in, not a redirect)
 * seen since the call, or the page's target committed to a document (its URL, which the browser process reports,
 * is no longer about:blank: that still holds when the renderer is stuck in a script and its own events stop). A load
 * that then times out is the page's own doing (a script that never ends blocks the load event; a body still
 * arriving), not an unreachable target: {@link pageLoadTimeout} says so (issue 37).
 */
export function watchDocumentAnswer(page: Page): { answered(): boolean; stop(): void } {
  let answered = false;
  const onResponse = (res: HTTPResponse) => {
    const status = res.status();
    if (res.request().isNavigationRequest() && res.frame() === page.mainFrame() && !(status >= 300 && status < 400)) answered = true;
  };
  page.on('response', onResponse);
  const committed = () => {
    const url = page.target().url();
    return url !== '' && url !== 'about:blank' && !url.startsWith('chrome-error:');
  };
  return { answered: () => answered || committed(), stop: () => { page.off('response', onResponse); } };
}

/** The tools' 422 `page_load_timeout`: `url` answered, but its page did not finish loading within `timeoutMs`. */
export function pageLoadTimeout(url: string, timeoutMs: number): CodedError {
  const seconds = Math.round(timeoutMs / 100) / 10;
  return new CodedError('page_load_timeout', `${url} answered, but the page did not finish loading within ${seconds} s (a script that never ends, a body still arriving, or a resource its load waits for)`, [{ url, timeout_ms: Math.round(timeoutMs) }]);
}

/** Options of {@link whenSettled}. */
export interface SettleOptions {
  /** Longest time spent waiting for the page to stop navigating, ms. @default 5000 */
  maxWaitMs?: number;
  signal?: AbortSignal;
}

/**
 * Navigations a page may start by itself while one of its URLs loads (a script redirect, a reload; redirect
 * hops are not counted): past them the load stops with `page_unsettled` rather than at the navigation time-out.
 */
export const MAX_SELF_NAVIGATIONS = 10;

/**
 * Watches a page while one URL loads in it: `loop` rejects with `page_unsettled` once the page has started more
 * than {@link MAX_SELF_NAVIGATIONS} navigations of its own (the load's first one not counted, redirect hops
 * neither). Call `stop()` when the load is over. When the load failed otherwise (its time-out, or the navigation
 * aborted), `unsettled()` says whether the page had navigated itself meanwhile (twice or more: one script redirect
 * to a page that does not load is that page's failure): then the failure is the page's
 * restlessness (`page_unsettled`), not a target that could not be loaded (on a busy machine a page that reloads
 * itself every 40 ms ran out the load's time before its tenth reload).
 */
export function watchNavigationLoop(page: Page, url: string): { loop: Promise<never>; stop(): void; unsettled(): CodedError | null } {
  let navigations = 0;
  let fail: (err: unknown) => void = () => undefined;
  const loop = new Promise<never>((_, reject) => { fail = reject; });
  loop.catch(() => undefined);
  const onRequest = (req: HTTPRequest) => {
    if (!req.isNavigationRequest() || req.frame() !== page.mainFrame() || req.redirectChain().length) return;
    if (++navigations > MAX_SELF_NAVIGATIONS + 1) {
      page.off('request', onRequest);
      fail(new CodedError('page_unsettled', `${url} kept navigating itself while it loaded (more than ${MAX_SELF_NAVIGATIONS} times)`, [{ url, navigations: navigations - 1 }]));
    }
  };
  page.on('request', onRequest);
  return {
    loop,
    stop: () => page.off('request', onRequest),
    unsettled: () => (navigations > 2
      ? new CodedError('page_unsettled', `${url} navigated itself ${navigations - 1} time(s) while it loaded, and never finished loading`, [{ url, navigations: navigations - 1 }])
      : null),
  };
}

/** Longest a read waits for a page that navigates itself to settle, ms (docs/crawler.md). */
export const PAGE_SETTLE_MS = 5_000;

/**
 * Runs a call on a page (an evaluation, reading its HTML); when the page's document went away under it (the page
 * navigated itself: a redirect by script, a reload), waits for the new document and calls again, for at most
 * `maxWaitMs` in all. A crash or a closed browser ends the wait at once.
 * @throws CodedError `page_unsettled` when the page is still navigating at the end, `page_crashed`,
 *   `browser_crashed`; the call's own error otherwise.
 */
export async function whenSettled<T>(page: Page, call: () => Promise<T>, o: SettleOptions = {}): Promise<T> {
  const end = Date.now() + (o.maxWaitMs ?? PAGE_SETTLE_MS);
  let navigations = 0;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (o.signal?.aborted) throw o.signal.reason;
      if (pageFailure(page) || !isNavigationError(err)) throw explainPageError(page, err);
      navigations++;
      if (Date.now() >= end) {
        throw new CodedError('page_unsettled', `The page ${page.url()} kept navigating itself while it was being read (${navigations} times in ${o.maxWaitMs ?? PAGE_SETTLE_MS} ms)`, [{ url: page.url(), navigations }]);
      }
      // The new document: its DOM is there at DOMContentLoaded (at most what is left of the wait).
      await page.waitForFunction(() => document.readyState !== 'loading', { timeout: Math.max(100, end - Date.now()), polling: 50 })
        .catch(() => new Promise((r) => setTimeout(r, 50)));
    }
  }
}

/** Thrown by {@link documentHtml} for a document still being parsed: {@link isNavigationError} takes it for a navigation. */
const STILL_LOADING = 'Execution context is not available: the document is still loading (a navigation of its own)';

/** Elements whose boxes {@link documentHtml} marks at most (in document order; the rest go unmarked). */
export const MAX_MARKED_BOXES = 20_000;
/** The attribute holding an element's box in HTML read with `boxes` (analysis only; never in a selector or a field). */
export const BOX_ATTRIBUTE = 'data-sai-box';
/** The attribute of `<html>` holding the viewport and the document's size in HTML read with `boxes`. */
export const VIEWPORT_ATTRIBUTE = 'data-sai-viewport';

/**
 * The page's HTML as `page.content()` gives it (every child of the document serialised), read in one evaluation and only
 * from a document past `loading`: a page that reloads itself is never read half parsed (its rows cut short). A
 * document still loading counts as a navigation for {@link whenSettled}, which waits for it and reads again.
 * Call it inside {@link whenSettled}.
 *
 * With `boxes`, the serialised HTML carries the layout the generator reads (docs/generate.md, "The layout"): every
 * element of the body (the first {@link MAX_MARKED_BOXES}) gets `data-sai-box="x,y,width,height"`, its border box in
 * CSS pixels from the document's top left (getBoundingClientRect plus the scroll offset, rounded), and `<html>` gets
 * `data-sai-viewport="width,height,documentWidth,documentHeight"`. The attributes are removed again in the same
 * evaluation: the page itself never keeps them.
 * @throws Error taken by {@link isNavigationError} while the document is loading; the evaluation's own errors.
 */
export async function documentHtml(page: Page, options: { boxes?: boolean } = {}): Promise<string> {
  const html = await page.evaluate((boxes: boolean, max: number, boxAttr: string, viewAttr: string) => {
    if (document.readyState === 'loading') return null;
    const marked: Element[] = [];
    const root = document.documentElement;
    if (boxes && document.body) {
      const sx = window.scrollX;
      const sy = window.scrollY;
      const all = document.body.getElementsByTagName('*');
      const n = Math.min(all.length, max);
      // Read every box first, then write: one layout, not one per element.
      const rects: DOMRect[] = [];
      for (let i = 0; i < n; i++) rects.push(all[i]!.getBoundingClientRect());
      for (let i = 0; i < n; i++) {
        const r = rects[i]!;
        all[i]!.setAttribute(boxAttr, `${Math.round(r.left + sx)},${Math.round(r.top + sy)},${Math.round(r.width)},${Math.round(r.height)}`);
        marked.push(all[i]!);
      }
      root.setAttribute(viewAttr, `${window.innerWidth},${window.innerHeight},${root.scrollWidth},${root.scrollHeight}`);
    }
    // As puppeteer's Frame.content(): every child of the document, the <html> element by its outerHTML.
    let content = '';
    const nodes = document.childNodes;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      content += node === document.documentElement ? document.documentElement.outerHTML : new XMLSerializer().serializeToString(node);
    }
    if (boxes) {
      for (const el of marked) el.removeAttribute(boxAttr);
      root.removeAttribute(viewAttr);
    }
    return content;
  }, !!options.boxes, MAX_MARKED_BOXES, BOX_ATTRIBUTE, VIEWPORT_ATTRIBUTE);
  if (html === null) throw new Error(STILL_LOADING);
  return html;
}

/**
 * Waits for a call on a page, but no longer than `deadline` (ms since the epoch), the page's life (a crash
 * closes it; a closed page or a dead browser ends the wait at once) and `signal`: a call on a page whose
 * renderer is stuck or gone may otherwise wait for the protocol time-out (2 minutes).
 * @param timeUp the error for a deadline passed or a signal aborted.
 * @throws what {@link explainPageError} makes of the call's failure, or `timeUp()`.
 */
export function withinDeadline<T>(page: Page, call: Promise<T>, deadline: number, timeUp: () => unknown, signal?: AbortSignal): Promise<T> {
  call.catch(() => undefined);
  const ms = deadline - Date.now();
  if (ms <= 0 || signal?.aborted) return Promise.reject(timeUp());
  return new Promise<T>((resolve, reject) => {
    const browser = page.browser();
    const onTime = () => { done(); reject(timeUp()); };
    const onGone = () => {
      done();
      reject(pageFailure(page) ?? explainPageError(page, new Error(browser.connected ? 'Target closed: the page was closed' : 'Connection closed: browser has disconnected')));
    };
    const timer = setTimeout(onTime, ms);
    signal?.addEventListener('abort', onTime, { once: true });
    page.once('close', onGone);
    page.once('error', onGone);
    browser.once('disconnected', onGone);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onTime);
      page.off('close', onGone);
      page.off('error', onGone);
      browser.off('disconnected', onGone);
    }
    call.then((v) => { done(); resolve(v); }, (err: unknown) => { done(); reject(explainPageError(page, err)); });
  });
}
