/**
 * The browser page loader: pages are tabs of one fresh browser context per job (BrowserHost), every request
 * of every page through the job's guard proxy. A tab is kept and reused URL after URL (opening a tab costs
 * more than loading a URL). The crawler reads the rendered DOM's HTML with the same cheerio code as over HTTP;
 * only `eval` fields run inside the page (in-page.ts). Actions, the wait for a page's content and the in-page
 * pagination steps are the browser steps of ../browser/steps.ts, shared with the extension's tab loader: this
 * loader gives them a puppeteer page with trusted input and the tab's network idle ({@link SERVICE_STEPS}).
 *
 * Per page: `goto` until DOMContentLoaded, then the page's ready condition (the config's `wait_selector`,
 * else the items' or the first detail field's selector, at most 5 s): pages rendered by script have their
 * content then, and no page waits for images, fonts, iframes or analytics to finish. Images, media and fonts
 * are never fetched unless a script may need them (`eval` fields, `script` actions): Blink's images are off
 * and the rest is aborted by request interception. The same rules as the fetcher's hold: its User-Agent
 * (BrowserHost), its redirect cap (a navigation with more hops is aborted), its body cap (the job's proxy cuts
 * plain-http bodies; a document over the cap fails with `response_too_large`), its time-out per page.
 *
 * Hostile pages: dialogs are answered (BrowserHost); a page that navigates itself while it is read (a script
 * redirect, a reload) is waited out until its new document is there, at most {@link PAGE_SETTLE_MS} per read,
 * then the read fails with `page_unsettled`; a renderer crash fails the run with `page_crashed`.
 */
import type { HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import { CodedError } from '../../errors.ts';
import type { ActionSpec } from '../config.ts';
import { BROWSER_GONE, type BrowserHost, type JobContext } from '../browser/host.ts';
import { documentHtml, isNavigationError, MAX_SELF_NAVIGATIONS, PAGE_SETTLE_MS, whenSettled } from '../browser/page-guard.ts';
import { evalFieldsInPage, type EvalField, type EvalOutcome, type ItemQuery } from '../browser/in-page.ts';
import { scriptInPage } from '../browser/in-page-steps.ts';
import { paginationStep, runActions, SERVICE_STEPS, waitForContent, type NavigationWatch, type StepPage } from '../browser/steps.ts';
import { sleep } from '../../sleep.ts';
import type { ProxyEvent } from '../../net/proxy.ts';
import type { ProxySession } from '../crawl/proxy-sessions.ts';
import type { BrowserSessionFeatures, CapturedResponse, LoadedDocument, LoadOptions, PageLoader, PageSession, ReadyCondition, StepOutcome } from './page-loader.ts';
import type { ApiAnswer, ApiRequest } from '../api/api-source.ts';
import { Fetcher } from '../../net/fetch.ts';
import { SessionFetchers } from '../crawl/session-fetchers.ts';
import { fetchApiWith } from './http-loader.ts';

/** Options of {@link BrowserPageLoader.open}. */
export interface BrowserLoaderOptions {
  host: BrowserHost;
  /** Load images (a script may measure or draw them). @default false */
  images?: boolean;
  /** Time-out of one navigation, ms (the fetcher's per-request time-out). @default 30000 */
  navigationTimeoutMs?: number;
  /** Redirects followed by one navigation (the fetcher's cap). @default 10 */
  maxRedirects?: number;
  /** Largest document accepted, bytes of its HTML (the fetcher's cap). @default 10485760 */
  maxBytes?: number;
  /** Record XHR/fetch JSON answers (API discovery). @default true */
  captureApi?: boolean;
  /** Aborting closes the context: whatever a page was doing stops at once. */
  signal?: AbortSignal;
  /**
   * The HTTP side of the run's proxy sessions: an API config's requests (target.api) go over HTTP through them, as on
   * the lightweight engine. Absent: a fetcher on the host's guard, made on first use.
   */
  apiFetchers?: SessionFetchers;
}

const BLOCKED_TYPES = new Set(['image', 'media', 'font']);

const ALLOWED_SCHEMES = new Set(['http', 'https', 'data', 'blob', 'about']);
const MAX_CAPTURES = 50;
const MAX_CAPTURE_BYTES = 2 * 1024 * 1024;

/** Strings inside a JSON value (bounded), to find the items of a page in an API's answer. */
function jsonStrings(text: string, out: Set<string>): void {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return;
  }
  const stack: unknown[] = [data];
  let seen = 0;
  while (stack.length && seen < 20_000) {
    const v = stack.pop();
    seen++;
    if (typeof v === 'string') { if (v.trim().length >= 3) out.add(v.trim()); }
    else if (typeof v === 'number') out.add(String(v));
    else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object') stack.push(...Object.values(v));
  }
}

/**
 * Whether a puppeteer input error says the element cannot take input where it is: no box to click (hidden, no size;
 * puppeteer 24's `ElementHandle.clickablePoint`), or gone from the document before the input reached it
 * (`assertConnectedElement`). Other errors (a crash, a closed page) are the loader's to explain.
 */
function isUnusableElement(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return /^Node is (?:either not clickable or not an Element|either not visible or not an HTMLElement|detached from document|not of type HTMLElement)/.test(message);
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return '';
  }
}

/**
 * Loads pages in a browser. One per job: {@link BrowserPageLoader.open} makes the job's browser context,
 * {@link close} ends it.
 */
export class BrowserPageLoader implements PageLoader {
  readonly engine = 'heavy' as const;
  private readonly o: BrowserLoaderOptions;
  private readonly context: JobContext;
  private readonly captures: CapturedResponse[] = [];
  private readonly jsonValues = new Set<string>();
  private captureBytes = 0;
  /** Set by the first crash: every later operation fails with it. */
  crashed: CodedError | null = null;
  private readonly onAbort: () => void;
  private closed = false;
  /** Sequence of proxy events seen so far, so a failure is matched with events that happened during it. */
  private readonly proxyCountAtStart: number;

  private constructor(o: BrowserLoaderOptions, context: JobContext) {
    this.o = o;
    this.context = context;
    this.proxyCountAtStart = this.proxyEventCount();
    this.onAbort = () => { void this.context.close().catch(() => undefined); };
    o.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Opens the job's browser context. @throws the signal's reason when aborted meanwhile. */
  static async open(o: BrowserLoaderOptions): Promise<BrowserPageLoader> {
    const context = await o.host.newContext({ images: o.images ?? false });
    const loader = new BrowserPageLoader(o, context);
    if (o.signal?.aborted) {
      await loader.close();
      throw o.signal.reason;
    }
    return loader;
  }

  get host(): BrowserHost {
    return this.o.host;
  }

  get signal(): AbortSignal | undefined {
    return this.o.signal;
  }

  get options(): Readonly<BrowserLoaderOptions> {
    return this.o;
  }

  private proxyEventCount(): number {
    const c = this.context.proxyEvents.counts;
    return c.target_forbidden + c.dns_failed + c.fetch_failed + c.response_too_large;
  }

  /** The proxy's account of why a URL's host could not be reached, if it has one from after `since`. */
  proxyFailure(url: string, since: number): ProxyEvent | null {
    if (this.proxyEventCount() <= since) return null;
    return this.context.proxyEvents.byHost.get(hostOf(url)) ?? null;
  }

  proxyEventsSoFar(): number {
    return this.proxyEventCount();
  }

  /** The proxy session the context's guard proxy chains to now (null: direct). */
  private sessionId: string | null = null;

  /**
   * Makes `session` the context's (its proxy behind the job's guard proxy; a change forgets the cookies of the one
   * before). One session at a time for the whole context: its tabs share its cookies.
   */
  async useSession(session: ProxySession | undefined): Promise<void> {
    const id = session?.proxy ? session.id : null;
    if (id === this.sessionId) return;
    this.sessionId = id;
    await this.context.useUpstream(session?.proxy ? { proxy: session.proxy, sessionId: session.id } : null);
  }

  /** Turns low-level failures into the job's reasons: the abort's reason, a crash, a dead browser. */
  explain(err: unknown): unknown {
    if (this.o.signal?.aborted) return this.o.signal.reason;
    if (this.crashed) return this.crashed;
    if (err instanceof CodedError) return err;
    const msg = (err as Error)?.message ?? String(err);
    if (BROWSER_GONE.test(msg)) {
      return new CodedError('browser_crashed', `The browser stopped during the run (${msg.split('\n')[0]}); the job failed and the next one starts a new browser`);
    }
    if (isNavigationError(err)) {
      return new CodedError('page_unsettled', `A page navigated itself while it was being read and did not settle (${msg.split('\n')[0]})`);
    }
    return err;
  }

  /** Runs a read of a page, waited out while the page navigates itself ({@link whenSettled}). */
  settled<T>(page: Page, call: () => Promise<T>): Promise<T> {
    return whenSettled(page, call, { maxWaitMs: PAGE_SETTLE_MS, ...(this.o.signal ? { signal: this.o.signal } : {}) });
  }

  async openSession(): Promise<PageSession> {
    if (this.crashed) throw this.crashed;
    let page: Page;
    try {
      page = await this.context.newPage();
    } catch (err) {
      throw this.explain(err);
    }
    return new BrowserTab(this, page);
  }

  /** Prepares a new tab: time-outs, request interception, API capture, crash detection. */
  async setUp(tab: BrowserTab, page: Page): Promise<void> {
    page.setDefaultTimeout(this.o.navigationTimeoutMs ?? 30_000);
    await page.setBypassCSP(true);
    await page.setRequestInterception(true);
    const maxRedirects = this.o.maxRedirects ?? 10;
    page.on('request', (req: HTTPRequest) => {
      if (req.isInterceptResolutionHandled()) return;
      const url = req.url();
      const scheme = url.slice(0, url.indexOf(':'));
      if (!ALLOWED_SCHEMES.has(scheme)) {
        void req.abort('accessdenied');
        return;
      }
      if (!this.o.images && BLOCKED_TYPES.has(req.resourceType())) {
        void req.abort('blockedbyclient');
        return;
      }
      if (req.isNavigationRequest() && req.redirectChain().length > maxRedirects) {
        tab.redirectLimitHit = req.redirectChain()[0]?.url() ?? url;
        void req.abort('failed');
        return;
      }
      if (tab.loading && req.isNavigationRequest() && req.frame() === page.mainFrame() && req.redirectChain().length === 0 && ++tab.navigations > MAX_SELF_NAVIGATIONS + 1) {
        tab.navigationLoop = true;
        void req.abort('aborted');
        return;
      }
      const gate = tab.gate;
      if (gate && req.isNavigationRequest() && req.frame() === page.mainFrame()) {
        // The load's document request waits for the host's pace here, right before Chromium sends it.
        tab.gate = null;
        void gate().then(() => {
          tab.sentAt = Date.now();
          return req.continue();
        }, () => req.abort('aborted')).catch(() => undefined);
        return;
      }
      void req.continue();
    });
    if (this.o.captureApi ?? true) page.on('response', (res) => { void this.capture(res); });
    page.on('error', (err) => {
      this.crashed ??= new CodedError('page_crashed', `The page crashed at ${page.url() || tab.currentUrl} (${err.message}); a page that allocates without bound ends its job, not the worker`);
      // Whatever was waiting on the dead page fails now instead of at the protocol time-out.
      void page.close().catch(() => undefined);
    });
  }

  private async capture(res: HTTPResponse): Promise<void> {
    const req = res.request();
    const type = req.resourceType();
    if (type !== 'xhr' && type !== 'fetch') return;
    if (!/json/i.test(res.headers()['content-type'] ?? '')) return;
    // The first answers are enough to tell whether an API carries the rows; reading every body costs a CDP round trip each.
    if (this.captures.length >= MAX_CAPTURES || this.captureBytes > MAX_CAPTURE_BYTES) return;
    let text: string;
    try {
      text = await res.text();
    } catch {
      return;
    }
    this.captureBytes += text.length;
    const requestBody = req.method() === 'POST' ? req.postData()?.slice(0, 10_000) : undefined;
    if (this.captures.length < MAX_CAPTURES) this.captures.push({ url: res.url(), method: req.method(), status: res.status(), sample: text.slice(0, 2000), ...(requestBody ? { requestBody } : {}) });
    jsonStrings(text, this.jsonValues);
  }

  warnings(): string[] {
    const ev = this.context.proxyEvents;
    const refused = ev.counts.target_forbidden;
    if (!refused) return [];
    const examples = [...new Set(ev.first.filter((e) => e.code === 'target_forbidden').map((e) => e.target))].slice(0, 3);
    return [`the outbound guard refused ${refused} request(s) of the pages, e.g. ${examples.join(', ')}`];
  }

  apiCapture(): { responses: CapturedResponse[]; values: ReadonlySet<string> } {
    return { responses: this.captures, values: this.jsonValues };
  }

  /** The fetchers of API requests made here when the options gave none (closed with the loader). */
  private ownApiFetchers: SessionFetchers | null = null;

  /**
   * Sends an API config's request (target.api) over HTTP, as the lightweight engine does: through the run's session
   * fetchers (its proxy and cookies), the outbound guard and the fetcher's caps. A JSON endpoint needs no tab.
   * @throws as the fetcher: `target_forbidden`, `dns_failed`, `fetch_failed`, `response_too_large`.
   */
  async fetchApi(request: ApiRequest, o: Omit<LoadOptions, 'ready'> = {}): Promise<ApiAnswer> {
    const fetchers = this.o.apiFetchers ?? (this.ownApiFetchers ??= new SessionFetchers(new Fetcher(this.o.host.guard)));
    return fetchApiWith(fetchers, fetchers.base, request, o);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.o.signal?.removeEventListener('abort', this.onAbort);
    await this.context.close().catch(() => undefined);
    if (this.ownApiFetchers) {
      await this.ownApiFetchers.close();
      await this.ownApiFetchers.base.close();
    }
  }
}

/** One tab of a {@link BrowserPageLoader}. */
class BrowserTab implements PageSession, BrowserSessionFeatures {
  readonly browser: BrowserSessionFeatures = this;
  private readonly loader: BrowserPageLoader;
  private readonly page: Page;
  private ready: Promise<void> | null;
  /** The URL being loaded, for crash messages. */
  currentUrl = '';
  /** The pace of the load under way, waited for by its document request (LoadOptions.beforeRequest). */
  gate: (() => Promise<void>) | null = null;
  /** When the gated document request was let go, ms since the epoch (0: not gated). */
  sentAt = 0;
  /** Set by request interception when a navigation had more redirects than allowed. */
  redirectLimitHit: string | null = null;
  /** While a URL loads: navigations of the main frame since it started (the load's own first). */
  loading = false;
  navigations = 0;
  /** Set by request interception when the page navigated itself more than {@link MAX_SELF_NAVIGATIONS} times during a load. */
  navigationLoop = false;
  private lastStatus = 200;
  private lastContentType = 'text/html';

  constructor(loader: BrowserPageLoader, page: Page) {
    this.loader = loader;
    this.page = page;
    this.ready = loader.setUp(this, page);
  }

  private async alive(): Promise<void> {
    if (this.ready) {
      const r = this.ready;
      this.ready = null;
      try {
        await r;
      } catch (err) {
        throw this.loader.explain(err);
      }
    }
    if (this.loader.crashed) throw this.loader.crashed;
    if (this.loader.signal?.aborted) throw this.loader.signal.reason;
  }

  /**
   * Loads a URL in this tab.
   * @throws CodedError `target_forbidden` (the URL, a redirect hop or an address it resolves to is refused),
   *   `dns_failed`, `fetch_failed` (network error, time-out, too many redirects), `response_too_large`;
   *   `page_unsettled` (it navigated itself more than {@link MAX_SELF_NAVIGATIONS} times while it loaded),
   *   `page_crashed`, `browser_crashed` or the abort's reason.
   */
  async load(url: string, o: LoadOptions = {}): Promise<LoadedDocument> {
    await this.alive();
    // Scheme and IP literals are decided before the browser sees the URL; names are decided by the proxy.
    this.loader.host.guardCheck(url);
    this.currentUrl = url;
    this.redirectLimitHit = null;
    this.navigations = 0;
    this.navigationLoop = false;
    await this.loader.useSession(o.session);
    // The pace is waited for in request interception, when Chromium is about to send the document's request.
    this.gate = o.beforeRequest ?? null;
    const since = this.loader.proxyEventsSoFar();
    const timeout = this.loader.options.navigationTimeoutMs ?? 30_000;
    let res: HTTPResponse | null;
    let started = 0;
    let latencyMs = 0;
    try {
      const signal = o.signal && this.loader.signal ? AbortSignal.any([o.signal, this.loader.signal]) : o.signal ?? this.loader.signal;
      // While it loads, a page that keeps navigating itself has its navigations past MAX_SELF_NAVIGATIONS refused (setUp).
      this.loading = true;
      started = Date.now();
      this.sentAt = 0;
      res = await this.page.goto(url, { waitUntil: 'domcontentloaded', timeout, signal } as Parameters<Page['goto']>[1]);
      latencyMs = Date.now() - (this.sentAt || started);
    } catch (err) {
      if (o.signal?.aborted) throw o.signal.reason;
      if (!this.page.browser().connected) throw this.loader.explain(new Error('Target closed: browser has disconnected'));
      if (this.navigationLoop && !this.loader.crashed) {
        throw new CodedError('page_unsettled', `${url} kept navigating itself while it loaded (more than ${MAX_SELF_NAVIGATIONS} times)`, [{ url, navigations: this.navigations - 1 }]);
      }
      const explained = this.loader.explain(err);
      if (explained !== err || err instanceof CodedError) throw explained;
      if (this.redirectLimitHit) {
        throw new CodedError('fetch_failed', `Too many redirects (more than ${this.loader.options.maxRedirects ?? 10}) starting at ${url}`, [{ url }]);
      }
      const event = this.loader.proxyFailure(url, since);
      if (event?.proxyFailure) throw Object.assign(new CodedError('fetch_failed', event.message, [{ url }]), { proxyFailure: true });
      if (event) throw new CodedError(event.code, event.message, [{ url }]);
      throw new CodedError('fetch_failed', `${url} could not be loaded in the browser: ${(err as Error).message.split('\n')[0]}`, [{ url }]);
    } finally {
      this.loading = false;
      this.gate = null;
    }
    if (this.navigationLoop) {
      // Its last navigation was refused: what is left is a document cut short, not the page.
      throw new CodedError('page_unsettled', `${url} kept navigating itself while it loaded (more than ${MAX_SELF_NAVIGATIONS} times)`, [{ url, navigations: this.navigations - 1 }]);
    }
    const status = res?.status() ?? 200;
    // The proxy answers plain-http requests it refused or could not reach itself (403, 502), and cuts a body
    // over the cap (the browser may render what arrived): say why, as the fetcher would.
    const event = this.loader.proxyFailure(url, since);
    if (event && (status === 403 || status === 502 || (event.code === 'response_too_large' && event.target === res?.url()))) {
      if (event.proxyFailure) throw Object.assign(new CodedError('fetch_failed', event.message, [{ url }]), { proxyFailure: true });
      throw new CodedError(event.code, event.message, [{ url }]);
    }
    this.lastStatus = status;
    const headers = res?.headers() ?? {};
    this.lastContentType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (status >= 400) {
      // An error page is not waited for; its HTML is read so that a bot-protection page can be told (net/blocks.ts).
      let html = '';
      try {
        html = (await this.loader.settled(this.page, () => documentHtml(this.page))).slice(0, 512 * 1024);
      } catch (err) {
        const explained = this.loader.explain(err);
        if (explained !== err) throw explained;
      }
      return { requestedUrl: url, url: this.page.url(), status, contentType: this.lastContentType, html, headers, latencyMs };
    }
    return { ...await this.current(o.ready, url, o.boxes), headers, latencyMs };
  }

  /**
   * The browser steps' view of this tab (../browser/steps.ts): in-page calls with `page.evaluate`, trusted input,
   * the tab's network idle, navigations seen by the protocol.
   */
  private readonly steps: StepPage = {
    options: SERVICE_STEPS,
    run: (fn, args) => this.page.evaluate(fn as (...a: unknown[]) => unknown, ...args) as Promise<never>,
    read: (fn, args) => this.loader.settled(this.page, () => this.page.evaluate(fn as (...a: unknown[]) => unknown, ...args)) as Promise<never>,
    script: (script) => this.page.evaluate(scriptInPage, script),
    isNavigation: (err) => isNavigationError(err) && !this.loader.crashed,
    trustedInput: async (a) => {
      if (a.type === 'keyboard') {
        await this.page.keyboard.press(a.key as Parameters<Page['keyboard']['press']>[0]);
        return 'ok';
      }
      const el = await this.page.$(a.selector!);
      if (!el) return 'missing';
      try {
        if (a.type === 'click') await el.click();
        else if (a.type === 'hover') await el.hover();
        else {
          await el.click({ count: 3 });
          await el.type(a.value ?? '');
        }
      } catch (err) {
        if (isUnusableElement(err)) return 'unusable';
        throw err;
      } finally {
        void el.dispose().catch(() => undefined);
      }
      return 'ok';
    },
    networkIdle: (idleMs, timeoutMs) => this.page.waitForNetworkIdle({ idleTime: idleMs, timeout: timeoutMs }),
    watchNavigation: () => this.watchNavigation(),
    check: () => {
      if (this.loader.crashed) throw this.loader.crashed;
      if (this.loader.signal?.aborted) throw this.loader.signal.reason;
    },
    sleep: (ms) => sleep(ms, this.loader.signal),
    url: () => this.page.url(),
  };

  /**
   * Watches for a navigation of the main frame (a request for a new document: not a same-document one); its new
   * document is there at DOMContentLoaded, and its response gives the status and content type of what is read next.
   */
  private watchNavigation(): NavigationWatch {
    const page = this.page;
    const stop = new AbortController();
    let started = false;
    let start: () => void = () => undefined;
    const starting = new Promise<void>((resolve) => { start = resolve; });
    const onRequest = (req: HTTPRequest) => {
      if (!req.isNavigationRequest() || req.frame() !== page.mainFrame()) return;
      started = true;
      start();
    };
    page.on('request', onRequest);
    const timeout = this.loader.options.navigationTimeoutMs ?? 30_000;
    const done = page.waitForNavigation({ waitUntil: 'domcontentloaded', timeout, signal: stop.signal }).then((r) => {
      if (r) {
        this.lastStatus = r.status();
        this.lastContentType = (r.headers()['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      }
    }, () => undefined);
    return {
      started: () => started,
      starting,
      done: () => done,
      stop: () => {
        page.off('request', onRequest);
        stop.abort();
      },
    };
  }

  /** Waits for the ready condition ({@link waitForContent}); returns the time-out of an explicit one that did not appear. */
  private async waitReady(ready: ReadyCondition | undefined): Promise<LoadedDocument['waitTimedOut']> {
    if (!ready) return undefined;
    try {
      return await waitForContent(this.steps, ready);
    } catch (err) {
      if (this.loader.crashed) throw this.loader.crashed;
      if (this.loader.signal?.aborted) throw this.loader.signal.reason;
      const explained = this.loader.explain(err);
      if (explained !== err) throw explained;
      if (ready.explicit) return { selector: ready.selector, timeoutMs: ready.timeoutMs };
    }
    return undefined;
  }

  async current(ready?: ReadyCondition, requestedUrl?: string, boxes = false): Promise<LoadedDocument> {
    await this.alive();
    const waitTimedOut = await this.waitReady(ready);
    let html: string;
    try {
      html = await this.loader.settled(this.page, () => documentHtml(this.page, { boxes }));
    } catch (err) {
      throw this.loader.explain(err);
    }
    const max = this.loader.options.maxBytes ?? 10 * 1024 * 1024;
    if (html.length > max) {
      throw new CodedError('response_too_large', `The page ${this.page.url()} is larger than ${max} bytes of HTML`, [{ url: this.page.url() }]);
    }
    const url = this.page.url();
    return { requestedUrl: requestedUrl ?? url, url, status: this.lastStatus, contentType: this.lastContentType, html, ...(waitTimedOut ? { waitTimedOut } : {}) };
  }

  async runActions(actions: readonly ActionSpec[]): Promise<void> {
    await this.alive();
    try {
      await runActions(this.steps, actions);
    } catch (err) {
      throw this.loader.explain(err);
    }
  }

  async step(kind: 'click' | 'scroll', selector: string | undefined, query: ItemQuery, waitMs: number, ready?: ReadyCondition): Promise<StepOutcome> {
    await this.alive();
    try {
      return await paginationStep(this.steps, kind, selector, query, waitMs, ready);
    } catch (err) {
      throw this.loader.explain(err);
    }
  }

  async evalFields(query: ItemQuery, fields: EvalField[], start: number): Promise<EvalOutcome[][]> {
    await this.alive();
    try {
      return await this.loader.settled(this.page, () => this.page.evaluate(evalFieldsInPage, query, fields, start));
    } catch (err) {
      throw this.loader.explain(err);
    }
  }

  async close(): Promise<void> {
    await this.ready?.catch(() => undefined);
    await this.page.close().catch(() => undefined);
  }
}
