/**
 * The extension's page loader: the crawler's PageLoader port (lambdas/engine/loaders/page-loader.ts) over the
 * user's own browser tabs, so that a config runs in the extension with the same crawler, request queue and
 * cheerio extraction as the service's engines (docs/architecture.md, ideas 4 and 5). The rendered DOM is read
 * with `browser.scripting.executeScript` and extracted by the crawler, as the browser loader reads
 * puppeteer's `page.content()`; only actions, in-page pagination steps and `eval` fields run inside the page.
 * Actions, the wait for a page's content and the in-page pagination steps are the browser steps of
 * lambdas/engine/browser/steps.ts, the service's own: this loader gives them a tab driven with
 * `browser.scripting` ({@link EXTENSION_STEPS}: DOM events for input, the page's own quiet for implicit waits).
 *
 * Sessions (one per crawler slot):
 * - the first is the **current tab**: its first load adopts the document already shown when the URL is the
 *   tab's (no reload: the run starts on the page as the user sees it); later loads navigate the tab
 *   (listing pages: same-origin navigations keep the `activeTab` grant);
 * - the others are **background tabs** (detail pages), opened inactive beside the current tab and closed
 *   at the end; reading them needs host access to their site (docs/extension.md, "Permissions").
 *
 * Differences from the service's browser loader (docs/extension.md): no outbound guard (the pages are the
 * user's own browsing, with the user's network and cookies); the two named options of EXTENSION_STEPS (clicks,
 * typing, hovering and keys are DOM events, not trusted input; an implicit wait ends on the page's quiet, not the
 * network's); `eval` fields and `script` actions run in the page's world and fail on pages whose CSP forbids eval.
 */
import { browser, type Browser } from 'wxt/browser';
import { CodedError } from '../../../../lambdas/errors.ts';
import type { ActionSpec } from '../../../../lambdas/engine/config.ts';
import { evalFieldsInPage, type EvalField, type EvalOutcome, type ItemQuery } from '../../../../lambdas/engine/browser/in-page.ts';
import { scriptInPage } from '../../../../lambdas/engine/browser/in-page-steps.ts';
import {
  EXTENSION_STEPS, paginationStep, runActions, waitForContent, type NavigationWatch, type StepPage,
} from '../../../../lambdas/engine/browser/steps.ts';
import type {
  BrowserSessionFeatures, CapturedResponse, LoadedDocument, LoadOptions, PageLoader, PageSession, ReadyCondition, StepOutcome,
} from '../../../../lambdas/engine/loaders/page-loader.ts';
import { sleep } from '../../../../lambdas/sleep.ts';
import { fetchInPage, snapshotInPage, type PageSnapshot } from './in-tab.ts';
import type { ApiAnswer, ApiRequest } from '../../../../lambdas/engine/api/api-source.ts';

/** Options of a {@link TabPageLoader}. */
export interface TabLoaderOptions {
  /** The tab the run starts in (the user's current tab). */
  tabId: number;
  /** Longest wait for a navigation to complete, ms. @default 30000 */
  navigationTimeoutMs?: number;
  /** Largest document accepted, characters of HTML. @default 10485760 */
  maxBytes?: number;
  /** Stops waits and loads at once. */
  signal?: AbortSignal;
}

/** Poll interval of the waits for a tab's loading to end, ms. */
const POLL_MS = 100;

/** A browser.scripting failure as the crawler's codes. */
function scriptingError(err: unknown, url: string): CodedError {
  const msg = (err as Error)?.message ?? String(err);
  if (/error page/i.test(msg)) return new CodedError('fetch_failed', `${url} could not be loaded in the tab (the browser shows its error page)`, [{ url }]);
  if (/permission|Cannot access/i.test(msg)) {
    return new CodedError('target_forbidden', `The extension may not read ${url}: open the page and click the scrape-ai button (it grants access to the current tab), or allow the site for detail pages`, [{ url }]);
  }
  if (/No tab with id|tab was closed/i.test(msg)) return new CodedError('page_crashed', `The tab of the run was closed (${msg})`, [{ url }]);
  return new CodedError('fetch_failed', `${url}: ${msg}`, [{ url }]);
}

/** Whether two URLs name the same document (the fragment aside). */
function sameDocument(a: string, b: string | undefined): boolean {
  if (!b) return false;
  return a.split('#')[0] === b.split('#')[0];
}

/** Loads pages in the user's tabs: the current one and background ones. Close it when the run ends. */
export class TabPageLoader implements PageLoader {
  /** A browser: the heavy engine's rules hold (rendered DOM, actions, in-page steps, eval fields). */
  readonly engine = 'heavy' as const;
  readonly options: Required<Omit<TabLoaderOptions, 'signal'>> & { signal?: AbortSignal };
  private sessions = 0;
  private readonly opened: TabSession[] = [];

  constructor(o: TabLoaderOptions) {
    this.options = { navigationTimeoutMs: 30_000, maxBytes: 10 * 1024 * 1024, ...o };
  }

  async openSession(): Promise<PageSession> {
    const first = this.sessions++ === 0;
    let tabId = this.options.tabId;
    if (!first) {
      const current = await browser.tabs.get(this.options.tabId);
      const tab = await browser.tabs.create({ url: 'about:blank', active: false, index: current.index + 1, ...(current.windowId !== undefined ? { windowId: current.windowId } : {}) });
      tabId = tab.id!;
      // The blank page's own loading events must be over before the first load listens for its URL's: taken for
      // them, that load would read about:blank (which the extension may not script) instead of its page.
      const end = Date.now() + 5000;
      while ((await browser.tabs.get(tabId)).status !== 'complete' && Date.now() < end) await sleep(POLL_MS, this.options.signal);
    }
    const session = new TabSession(this, tabId, first);
    this.opened.push(session);
    return session;
  }

  warnings(): string[] {
    return [];
  }

  apiCapture(): { responses: CapturedResponse[]; values: ReadonlySet<string> } {
    return { responses: [], values: new Set() };
  }

  /**
   * Sends an API config's request (target.api) from the run's tab: a `fetch()` in the page, so from the page's origin
   * (the site's CORS rules and the extension's access to the site apply), without the user's cookies, at most
   * `maxBytes` characters read (docs/extension.md, "Runs"). The host's pace is awaited first (`beforeRequest`).
   * @returns the answer (a 4xx/5xx answer is returned, not thrown).
   * @throws CodedError `response_too_large` past the cap; `fetch_failed` when the fetch fails (the network, or CORS:
   *   the message says so); `target_forbidden` when the extension may not script the tab.
   */
  async fetchApi(request: ApiRequest, o: Omit<LoadOptions, 'ready'> = {}): Promise<ApiAnswer> {
    await o.beforeRequest?.();
    const started = Date.now();
    let a;
    try {
      a = await inTab(this.options.tabId, fetchInPage, [{ method: request.method, url: request.url, headers: request.headers, ...(request.body !== undefined ? { body: request.body } : {}) }, this.options.maxBytes]);
    } catch (err) {
      throw scriptingError(err, request.url);
    }
    if ('error' in a) {
      throw new CodedError('fetch_failed', `The API request ${request.method} ${request.url} failed in the tab (${a.error}): the site may not answer it from this page's origin (CORS), or it is unreachable`, [{ url: request.url }]);
    }
    if (a.tooLarge) throw new CodedError('response_too_large', `The API's answer from ${request.url} is over ${this.options.maxBytes} characters`, [{ url: request.url }]);
    return { requestedUrl: request.url, url: a.url, status: a.status, contentType: a.contentType, headers: a.headers, text: a.text, latencyMs: Date.now() - started };
  }

  async close(): Promise<void> {
    await Promise.all(this.opened.map((s) => s.close()));
  }
}

/** Runs a function of in-page.ts, in-page-steps.ts or in-tab.ts in a tab's page and returns its result. */
async function inTab<A extends unknown[], R>(tabId: number, func: (...args: A) => R, args: A, world: 'ISOLATED' | 'MAIN' = 'ISOLATED'): Promise<Awaited<R>> {
  const [result] = await browser.scripting.executeScript({ target: { tabId }, func: func as (...a: unknown[]) => unknown, args: args as unknown[], world });
  if (!result) throw new Error('the page gave no result');
  const withError = result as { result?: unknown; error?: unknown };
  if (withError.error !== undefined) throw new Error(String((withError.error as { message?: string })?.message ?? withError.error));
  return result.result as Awaited<R>;
}

/** One tab of a {@link TabPageLoader}: the current tab (kept open at the end) or a background tab (closed). */
class TabSession implements PageSession, BrowserSessionFeatures {
  readonly browser: BrowserSessionFeatures = this;
  private readonly loader: TabPageLoader;
  private readonly tabId: number;
  private readonly isCurrentTab: boolean;
  /** The current tab's first load may adopt the document it shows. */
  private mayAdopt: boolean;
  private lastStatus = 200;
  private closed = false;

  constructor(loader: TabPageLoader, tabId: number, isCurrentTab: boolean) {
    this.loader = loader;
    this.tabId = tabId;
    this.isCurrentTab = isCurrentTab;
    this.mayAdopt = isCurrentTab;
  }

  private get signal(): AbortSignal | undefined {
    return this.loader.options.signal;
  }

  private alive(): void {
    if (this.signal?.aborted) throw this.signal.reason;
  }

  /**
   * Loads a URL in this tab; the current tab's first load of the URL it already shows reads that document.
   * @throws CodedError `fetch_failed` (the browser's error page, a time-out), `target_forbidden` (no access to
   *   the site), `response_too_large`, `page_crashed` (the tab was closed), or the abort's reason.
   */
  async load(url: string, o: LoadOptions = {}): Promise<LoadedDocument> {
    this.alive();
    const adopt = this.mayAdopt && sameDocument(url, (await browser.tabs.get(this.tabId)).url);
    this.mayAdopt = false;
    if (!adopt) await this.navigate(url, o.signal);
    const doc = await this.current(o.ready, url);
    this.lastStatus = doc.status;
    if (doc.status >= 400) return { ...doc, html: '' };
    return doc;
  }

  /** Navigates the tab and waits until it has completed loading (browser.tabs.onUpdated `complete`). */
  private async navigate(url: string, signal?: AbortSignal): Promise<void> {
    const timeoutMs = this.loader.options.navigationTimeoutMs;
    await new Promise<void>((resolve, reject) => {
      let started = false;
      const done = (err?: unknown) => {
        browser.tabs.onUpdated.removeListener(onUpdated);
        browser.tabs.onRemoved.removeListener(onRemoved);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const onUpdated = (tabId: number, change: Browser.tabs.OnUpdatedInfo) => {
        if (tabId !== this.tabId) return;
        // A new background tab's own about:blank may still report its loading: not this navigation's.
        if (change.status === 'loading') {
          if (change.url !== 'about:blank' || url === 'about:blank') started = true;
        } else if (change.status === 'complete' && started) done();
      };
      const onRemoved = (tabId: number) => { if (tabId === this.tabId) done(new CodedError('page_crashed', `The tab of the run was closed while loading ${url}`, [{ url }])); };
      const onAbort = () => done((signal?.aborted ? signal.reason : this.signal?.reason) as unknown);
      const timer = setTimeout(() => done(new CodedError('fetch_failed', `${url} did not finish loading within ${timeoutMs} ms`, [{ url }])), timeoutMs);
      browser.tabs.onUpdated.addListener(onUpdated);
      browser.tabs.onRemoved.addListener(onRemoved);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.signal?.addEventListener('abort', onAbort, { once: true });
      browser.tabs.update(this.tabId, { url }).catch((err: unknown) => done(scriptingError(err, url)));
    });
  }

  /**
   * The browser steps' view of this tab (lambdas/engine/browser/steps.ts): in-page calls with
   * `browser.scripting.executeScript` (the isolated world; `script` actions in the page's own), DOM events for
   * input, navigations seen as the tab's loading status.
   */
  private readonly steps: StepPage = {
    options: EXTENSION_STEPS,
    run: (fn, args) => inTab(this.tabId, fn, args),
    read: (fn, args) => inTab(this.tabId, fn, args),
    script: (script) => inTab(this.tabId, scriptInPage, [script], 'MAIN'),
    // executeScript has no error for a document that went away: its call never settles (the steps bound it).
    isNavigation: () => false,
    watchNavigation: () => this.watchNavigation(),
    check: () => this.alive(),
    sleep: (ms) => sleep(ms, this.signal),
    url: async () => (await browser.tabs.get(this.tabId)).url ?? '',
  };

  /**
   * Watches the tab for a navigation: its status turns `loading` (also for a same-document navigation, which the
   * steps tell apart by the document's marker); it is done once the status is no longer `loading`.
   */
  private watchNavigation(): NavigationWatch {
    let started = false;
    let start: () => void = () => undefined;
    const starting = new Promise<void>((resolve) => { start = resolve; });
    const onUpdated = (tabId: number, change: Browser.tabs.OnUpdatedInfo) => {
      if (tabId !== this.tabId || change.status !== 'loading') return;
      started = true;
      start();
    };
    browser.tabs.onUpdated.addListener(onUpdated);
    return {
      started: () => started,
      starting,
      done: () => this.settle(0),
      stop: () => browser.tabs.onUpdated.removeListener(onUpdated),
    };
  }

  /** Waits for the ready condition ({@link waitForContent}); returns the time-out of an explicit wait that did not appear. */
  private async waitReady(ready: ReadyCondition | undefined, url: string): Promise<LoadedDocument['waitTimedOut']> {
    try {
      return await waitForContent(this.steps, ready);
    } catch (err) {
      if (err instanceof CodedError || this.signal?.aborted) throw err;
      throw scriptingError(err, url);
    }
  }

  async current(ready?: ReadyCondition, requestedUrl?: string): Promise<LoadedDocument> {
    this.alive();
    const tab = await browser.tabs.get(this.tabId);
    const url = tab.url || requestedUrl || '';
    if (url.startsWith('chrome-error:')) throw new CodedError('fetch_failed', `${requestedUrl ?? url} could not be loaded in the tab (the browser shows its error page)`, [{ url: requestedUrl ?? url }]);
    const waitTimedOut = await this.waitReady(ready, url);
    let snap: PageSnapshot;
    try {
      snap = await inTab(this.tabId, snapshotInPage, []);
    } catch (err) {
      throw scriptingError(err, requestedUrl ?? url);
    }
    if (snap.html.length > this.loader.options.maxBytes) {
      throw new CodedError('response_too_large', `The page ${snap.url} is larger than ${this.loader.options.maxBytes} characters of HTML`, [{ url: snap.url }]);
    }
    return {
      requestedUrl: requestedUrl ?? snap.url, url: snap.url, status: snap.status || this.lastStatus, contentType: snap.contentType, html: snap.html,
      ...(waitTimedOut ? { waitTimedOut } : {}),
    };
  }

  async runActions(actions: readonly ActionSpec[]): Promise<void> {
    this.alive();
    try {
      await runActions(this.steps, actions);
    } catch (err) {
      if (err instanceof CodedError || this.signal?.aborted) throw err;
      throw scriptingError(err, (await browser.tabs.get(this.tabId).catch(() => null))?.url ?? '');
    }
  }

  /** Waits `ms`, then for a navigation going on to complete (the tab's status). */
  private async settle(ms: number): Promise<void> {
    await sleep(ms, this.signal);
    const end = Date.now() + this.loader.options.navigationTimeoutMs;
    while ((await browser.tabs.get(this.tabId)).status === 'loading' && Date.now() < end) await sleep(POLL_MS, this.signal);
  }

  async step(kind: 'click' | 'scroll', selector: string | undefined, query: ItemQuery, waitMs: number, ready?: ReadyCondition): Promise<StepOutcome> {
    this.alive();
    try {
      return await paginationStep(this.steps, kind, selector, query, waitMs, ready);
    } catch (err) {
      if (err instanceof CodedError || this.signal?.aborted) throw err;
      throw scriptingError(err, (await browser.tabs.get(this.tabId).catch(() => null))?.url ?? '');
    }
  }

  async evalFields(query: ItemQuery, fields: EvalField[], start: number): Promise<EvalOutcome[][]> {
    this.alive();
    try {
      return await inTab(this.tabId, evalFieldsInPage, [query, fields, start], 'MAIN');
    } catch (err) {
      throw scriptingError(err, (await browser.tabs.get(this.tabId)).url ?? '');
    }
  }

  async close(): Promise<void> {
    if (this.closed || this.isCurrentTab) return;
    this.closed = true;
    await browser.tabs.remove(this.tabId).catch(() => undefined);
  }
}
