/**
 * The page-loader port of the crawler (docs/crawler.md): how a page gets from a URL to HTML. The crawler
 * (../crawler.ts) decides what to load, in which order, how often and what to do with the answer; a page
 * loader only loads. Two implementations, as Crawlee's CheerioCrawler and PuppeteerCrawler over its
 * BasicCrawler:
 * - {@link HttpPageLoader} (./http-loader.ts): one HTTP request through the outbound guard, no browser;
 * - {@link BrowserPageLoader} (./browser-loader.ts): a tab of the job's browser context, which also runs
 *   the config's actions, clicks controls that are not links, scrolls, and runs `eval` fields in the page.
 */
import type { ActionSpec } from '../config.ts';
import type { EvalField, EvalOutcome, ItemQuery } from '../browser/in-page.ts';
import type { ProxySession } from '../crawl/proxy-sessions.ts';
import type { ApiAnswer, ApiRequest } from '../api/api-source.ts';

/** A document as a loader got it. */
export interface LoadedDocument {
  /** The URL asked for. */
  requestedUrl: string;
  /** The URL after redirects: the base for relative links (with `<base href>` on top). */
  url: string;
  /** HTTP status of the document's response (200 when a browser reports none, e.g. a same-document step). */
  status: number;
  /** MIME type without parameters, lower case; '' when the response named none. */
  contentType: string;
  /** The page's HTML: the body as served (HTTP), or the rendered DOM serialised (browser). */
  html: string;
  /** Set when the config's `target.browser.wait_selector` did not appear within its time-out (browser). */
  waitTimedOut?: { selector: string; timeoutMs: number };
  /** Response headers of the document, lower-case names (absent for an in-page step). */
  headers?: Record<string, string>;
  /** Time from the request to its answer, ms: the fetch (HTTP), the navigation to DOMContentLoaded (browser). */
  latencyMs?: number;
}

/** What a browser waits for after a page's DOMContentLoaded before it reads the page; ignored over HTTP. */
export interface ReadyCondition {
  /** CSS selector whose first match means the content is there. */
  selector: string;
  /** Longest wait, ms. */
  timeoutMs: number;
  /** True for the config's own `wait_selector` (a time-out is reported); false for an implicit wait. */
  explicit: boolean;
}

/** Options of one {@link PageSession.load}. */
export interface LoadOptions {
  /** What a browser waits for after DOMContentLoaded (at most `timeoutMs`). */
  ready?: ReadyCondition;
  /** Stops this load (the crawler aborts loads in flight when the run fails). */
  signal?: AbortSignal;
  /**
   * Whether the loader retries 429 and 5xx answers itself (the HTTP loader's fetcher does by default). The crawler
   * passes false: it retries them under the host's pace (crawl/access.ts). @default true
   */
  retryStatuses?: boolean;
  /**
   * Called once right before the request goes out (after a browser tab is ready): the crawler waits there for the
   * host's pace (crawl/access.ts), so that the gap it keeps is the gap the server sees.
   */
  beforeRequest?: () => Promise<void>;
  /** The proxy session to load in (crawl/proxy-sessions.ts): its proxy and its cookies. Absent: direct. */
  session?: ProxySession;
  /**
   * Browser: the HTML carries each element's rendered box (`data-sai-box`, browser/page-guard.ts documentHtml), for
   * the generator's layout signal. Ignored over HTTP. @default false
   */
  boxes?: boolean;
}

/** Outcome of an in-page pagination step (browser): new items in the same document, a new document, or nothing. */
export interface StepOutcome {
  outcome: 'more' | 'navigated' | 'end';
  /** Items in the document before the step: with `more`, the new items are those from this index on. */
  before: number;
}

/**
 * A place pages are loaded in: stateless over HTTP; a browser tab, kept and reused URL after URL, in a browser.
 * Load failures throw a CodedError whose code says why: `target_forbidden` (the outbound guard refused the URL,
 * a redirect hop or the address), `dns_failed`, `fetch_failed` (network error, time-out, too many redirects),
 * `response_too_large`; fatal ones (`page_crashed`, `browser_crashed`, the abort signal's reason) end the job.
 */
export interface PageSession {
  /**
   * Loads a URL.
   * @returns the document; a 4xx/5xx answer is returned, not thrown (the crawler decides what it means).
   */
  load(url: string, options?: LoadOptions): Promise<LoadedDocument>;
  /** Browser sessions: the extras only a page can do. */
  readonly browser?: BrowserSessionFeatures;
  /** Whether `load(url)` would answer from a page loaded already, with no request (the engine probe's page). */
  serves?(url: string): boolean;
  /** Gives the session back (a browser tab is closed). */
  close(): Promise<void>;
}

/** What a browser tab can do beyond loading a URL. */
export interface BrowserSessionFeatures {
  /** Runs the config's actions in order on the loaded page. @throws CodedError `action_failed` naming the action's index. */
  runActions(actions: readonly ActionSpec[]): Promise<void>;
  /** The current document (after actions or an in-page step). */
  current(ready?: ReadyCondition): Promise<LoadedDocument>;
  /**
   * One in-page pagination step: clicks `selector` (a control that is not a link: load more, a JS pager) or
   * scrolls to the bottom, then waits up to `waitMs` for the page to navigate or grow.
   */
  step(kind: 'click' | 'scroll', selector: string | undefined, query: ItemQuery, waitMs: number, ready?: ReadyCondition): Promise<StepOutcome>;
  /** Runs `eval` fields on the page's items from index `start` on (in-page.ts, evalFieldsInPage). */
  evalFields(query: ItemQuery, fields: EvalField[], start: number): Promise<EvalOutcome[][]>;
}

/** A recorded XHR/fetch JSON answer of a browser page (for the generator's API discovery). */
export interface CapturedResponse {
  url: string;
  method: string;
  status: number;
  /** The first 2,000 characters of the body. */
  sample: string;
  /** The request's body (a POST's), its first 10,000 characters: the generator writes an API config from it. */
  requestBody?: string;
}

/**
 * A page loader: opens sessions for the crawler and reports what it saw on the side.
 */
export interface PageLoader {
  /** The engine this loader is, as the job's status_message names it. */
  readonly engine: 'lightweight' | 'heavy';
  /** A new session (a slot of the crawler's concurrency). */
  openSession(): Promise<PageSession>;
  /** Problems seen on the side that did not fail a page (requests of a page the guard refused). */
  warnings(): string[];
  /** XHR/fetch JSON answers seen (browser), and the strings in them, to tell whether an API carried the rows. */
  apiCapture(): { responses: CapturedResponse[]; values: ReadonlySet<string> };
  /**
   * Sends one request of an API config (target.api; ../api/api-source.ts): over HTTP through the fetcher and the outbound
   * guard on both engines of the service, from the page's origin in the extension. Absent on a loader that cannot send
   * them (a test's fake): an API config's run fails at its first request with `target_failed`.
   * @returns the answer; a 4xx/5xx answer is returned, not thrown.
   * @throws as {@link PageSession.load}: `target_forbidden`, `dns_failed`, `fetch_failed`, `response_too_large`.
   */
  fetchApi?(request: ApiRequest, options?: Omit<LoadOptions, 'ready'>): Promise<ApiAnswer>;
  /** Releases what the loader holds (the job's browser context; an HTTP client it made). */
  close(): Promise<void>;
}

/** Codes of a page that could not be loaded, as the crawler reports them (docs/errors.md). */
export const LOAD_FAILURE_CODES = new Set(['target_forbidden', 'dns_failed', 'fetch_failed', 'response_too_large', 'robots_disallowed', 'blocked']);
