/**
 * The broken-link checker (docs/spec.md, "Tool endpoints", `POST /api/v1/tools/broken-link-checker/`; docs/tools.md
 * "broken-link-checker"): checks every link of a page, and with `depth` ≥ 1 of the same-site pages it links
 * to, and says per link whether it works, redirects, is broken, timed out or was not checked.
 *
 * How a link is checked (linkinator's rules, JustinBeckwith/linkinator src/index.ts 8.1.0, so that verdicts
 * agree; the differences are listed in docs/tools.md):
 * 1. `HEAD`, redirects followed hop by hop (at most {@link MAX_REDIRECTS}), every hop through the outbound
 *    guard: the URL's scheme and IP literal by `guard.checkUrl` before anything is sent, host names by
 *    `guard.lookup` as the socket's lookup, so no socket ever connects to an address the guard refuses.
 * 2. When HEAD ends in anything but 2xx (a 405 or 501 from a server that does not do HEAD, a 403 or 404 from
 *    one that answers HEAD wrongly, a 5xx), or the connection fails in a way a GET could survive (reset,
 *    closed, a protocol error), the same URL is fetched with `GET`, and the GET's answer is the verdict. Only
 *    the headers of a GET are waited for: up to {@link GET_DRAIN_BYTES} of its body are read so that the
 *    connection stays open for the next request, a larger body closes it.
 * 3. `429 Too Many Requests` is retried after its `Retry-After` (1 s when absent), at most
 *    {@link MAX_429_RETRIES} times and never past the deadline; an origin that answers 429 again within a
 *    Retry-After gets half its connections until it has passed.
 * 4. A final 2xx is `ok`, or `redirect` when a redirect was followed; a final 4xx or 5xx is `broken`, and so
 *    is a failed connection (DNS, refused, reset, TLS), a redirect loop or a bad `Location`; no answer within
 *    the request time-out is `timeout`. A link the guard refuses, a scheme other than http(s), a persistent
 *    429, an answer that refuses robots (HTTP 999, a 403 with Cloudflare's `cf-mitigated`) and links not
 *    reached within the time budget are `skipped`, with the reason in `error`.
 *
 * Requests run at most {@link LinkCheckOptions.concurrency} at a time, at most
 * {@link LinkCheckOptions.perHostConcurrency} connections per origin (undici's `connections`, a hard cap), with
 * keep-alive connections reused for the whole check (HEAD included: undici closes the connection after a HEAD
 * unless told otherwise). The limits are p-queue's ({@link CheckQueues}: a queue per origin in front of one for
 * the whole check), and the origins with links waiting are served in turn, so one slow or large site does not
 * hold back the others. With `depth` ≥ 1 the same-site pages to read wait in the crawler's request queue
 * (engine/request-queue.ts: each page once by its key, a redirect's target marked seen, breadth-first) and are
 * read before the links waiting.
 */
import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import type { Dispatcher } from 'undici';
import { RequestQueue, pageKey, type QueuedRequest } from '../engine/request-queue.ts';
import { isCodedError } from '../errors.ts';
import { DEFAULT_USER_AGENT, Fetcher, guardedAgent, retryAfterMs } from '../net/fetch.ts';
import type { OutboundGuard } from '../net/guard.ts';
import { unreachableReason } from '../net/unreachable.ts';
// The host a crawl stays on: siteKey (lower case, `www.` dropped, http and https alike).
import { isHtmlResponse, mayBeHtml, siteKey } from '../engine/page-facts.ts';
import { extractLinks } from './links-extract.ts';
import type { FetchedText, PageFetch, ToolPage } from './page.ts';

/** What became of one link. */
export type LinkState = 'ok' | 'broken' | 'redirect' | 'timeout' | 'skipped';

/** One distinct link (fragment dropped) and its verdict. */
export interface LinkResult {
  /** The link's absolute URL without the fragment (the attribute's text when it is not a valid URL). */
  url: string;
  /** HTTP status of the last response (the final hop), null when there was none. */
  status: number | null;
  state: LinkState;
  /** `[]` without redirects; otherwise every URL requested, the link's URL first and the last hop's URL last. */
  redirect_chain: string[];
  /** The URLs of the checked pages the link appears on, in the order they were read. */
  parents: string[];
  /** Why the link is `broken`, `timeout` or `skipped`: `<reason>: <words>`, reason one of {@link LINK_ERROR_REASONS}; null otherwise. */
  error: string | null;
}

/** Counts of a {@link LinksReport}. */
interface LinksSummary {
  /** Links in the report (`links.length`). */
  total: number;
  ok: number;
  broken: number;
  redirect: number;
  timeout: number;
  skipped: number;
  /** Distinct links found on the crawled pages, the ones over `maxLinks` included. */
  found: number;
  /** Links found but left out of the report because of `maxLinks` (never checked). */
  over_limit: number;
  /** Pages whose links were read: the given page plus the same-site pages opened for `depth` ≥ 1. */
  pages_crawled: number;
  /** Wall time of the check, ms. */
  duration_ms: number;
}

/** The broken-link checker's answer. */
export interface LinksReport {
  /** The page checked (its final URL). */
  url: string;
  /** The links in the order they were found (document order, page by page breadth-first). */
  links: LinkResult[];
  summary: LinksSummary;
  /** The limits the check ran with, after defaults and clamping. */
  limits: { depth: number; max_links: number; deadline_ms: number; timeout_ms: number };
}

/** The words `error` starts with. */
const LINK_ERROR_REASONS = [
  'http_status', 'dns', 'refused', 'reset', 'tls', 'timeout', 'redirects', 'forbidden', 'scheme', 'invalid_url',
  'rate_limited', 'blocked', 'time_budget', 'network',
] as const;

type Reason = (typeof LINK_ERROR_REASONS)[number];

/** Options of {@link checkLinks}. Out-of-range numbers are clamped to the documented range. */
export interface LinkCheckOptions {
  /** Every connection goes through it (scheme, IP literals, resolved addresses, each redirect hop). */
  guard: OutboundGuard;
  /** Same-site pages followed from the page: 0 checks the page's links only. 0–3. @default 0 */
  depth?: number;
  /** Distinct links checked at most, over all pages; the rest is counted in `summary.over_limit`. 1–10000. @default 500 */
  maxLinks?: number;
  /** Aborts the check: links not done are `skipped` with `time_budget`, and the report is returned. */
  signal?: AbortSignal;
  /** Time budget of the whole check, ms: links not checked by then are `skipped` (`time_budget`). 100–20000. @default 20000 */
  deadlineMs?: number;
  /**
   * Fetches a same-site page to read its links (depth ≥ 1), through the guard. @default a Fetcher of this
   * module (2 MiB, the request time-out, no retry)
   */
  fetchPage?: PageFetch;
  /** Time one request may take until its response headers, ms. 100–15000. @default 10000 */
  timeoutMs?: number;
  /** Requests in flight at most. 1–64. @default 32 */
  concurrency?: number;
  /** Connections per origin at most. 1–16. @default 4 */
  perHostConcurrency?: number;
}

/**
 * The defaults and the upper bounds of {@link LinkCheckOptions} (ms for times): what a request that names no
 * option gets, and what larger values are clamped to. The route's parameter ranges come from here.
 */
export const LINK_CHECK_DEFAULTS = {
  depth: 0, maxDepth: 3,
  maxLinks: 500, maxMaxLinks: 10_000,
  deadlineMs: 20_000, maxDeadlineMs: 20_000,
  timeoutMs: 10_000, maxTimeoutMs: 15_000,
  concurrency: 32, maxConcurrency: 64,
  perHostConcurrency: 4, maxPerHostConcurrency: 16,
} as const;

/** Redirects followed per link; one more is `broken` (`redirects`). */
const MAX_REDIRECTS = 10;
/** Retries of a link answered 429. */
const MAX_429_RETRIES = 2;
/** Wait after a 429 without a usable `Retry-After`, ms. */
const DEFAULT_429_WAIT_MS = 1_000;
/** Body bytes of a GET read to keep its connection; past it the connection is closed instead. */
const GET_DRAIN_BYTES = 64 * 1024;
/** Largest same-site page read for its links when the module fetches it itself. */
const CRAWL_PAGE_MAX_BYTES = 2 * 1024 * 1024;

function clamp(value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.floor(value)));
}


/** The reason and words of a failed request (Node's, undici's or the guard's error, looking through `cause`). */
function failure(err: unknown): { reason: Reason; text: string } {
  for (let e = err as { cause?: unknown } | undefined, d = 0; e && d < 4; e = e.cause as typeof e, d++) {
    if (!isCodedError(e)) continue;
    if (e.code === 'target_forbidden') return { reason: 'forbidden', text: e.message };
    if (e.code === 'invalid_url') return { reason: 'invalid_url', text: e.message };
    break;
  }
  // The innermost message that names the failure (undici wraps the socket's error).
  let message = (err as Error)?.message ?? String(err);
  for (let e = err as { code?: unknown; cause?: unknown; message?: unknown } | undefined, d = 0; e && d < 4; e = e.cause as typeof e, d++) {
    if (typeof e.code === 'string' && typeof e.message === 'string') { message = e.message; break; }
  }
  const reason = unreachableReason(err);
  return { reason: reason === 'too_large' ? 'network' : reason, text: message };
}

/** Reasons a GET is tried after a HEAD that failed this way: the ones a server's HEAD handling can cause. */
const GET_AFTER_HEAD_FAILURE = new Set<Reason>(['reset', 'network']);

/** One request's outcome: the last response, or a failure; with the URLs requested. */
type Probe =
  | { kind: 'response'; status: number; contentType: string; retryAfter: string | undefined; blocked: boolean; chain: string[] }
  | { kind: 'failure'; reason: Reason; text: string; chain: string[] };

/** One link being checked. */
interface Entry {
  result: LinkResult;
  /** The origin its requests start at (its queue in {@link CheckQueues}). */
  origin: string;
  /** Pages away from the checked page: 0 for its own links. */
  depth: number;
  navigable: boolean;
  sameSite: boolean;
  retries: number;
}

/** A same-site page whose links are read (depth ≥ 1), as the link checker queues it in a {@link RequestQueue}. */
interface PageRequest extends QueuedRequest {
  url: string;
  /** The origin its request starts at (its queue in {@link CheckQueues}). */
  origin: string;
  /** Pages away from the checked page of the links found on it. */
  depth: number;
}

/** Thrown inside a check when the deadline passed or the caller aborted. */
const BUDGET = Symbol('time budget');

/** p-queue priorities (greater runs first): page reads and 429 retries go before the links waiting. */
const FIRST = 1;
const NEXT = 0;
const FIRST_OPTIONS = { priority: FIRST } as const;
const NEXT_OPTIONS = { priority: NEXT } as const;

/**
 * Where a check's work waits and runs (p-queue): one queue per origin, at most `perHost` tasks at a time (half of
 * it while the origin is throttled after repeated 429s), in front of one queue for the whole check, at most
 * `concurrency` at a time. A task holds its origin's slot while it waits for a slot of the whole, so each origin
 * has at most `perHost` tasks waiting there, and the whole queue, first in first out, serves the origins with
 * work in turn: one slow or large site does not hold back the others.
 */
class CheckQueues {
  private readonly all: PQueue;
  private readonly byOrigin = new Map<string, PQueue>();
  private readonly perHost: number;
  private readonly throttledLimit: number;
  /** The end of the latest Retry-After per origin. */
  private readonly limitedUntil = new Map<string, number>();
  private readonly throttledUntil = new Map<string, number>();
  private readonly throttleTimers = new Map<string, NodeJS.Timeout>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** Tasks queued, running or waiting for a retry. */
  private outstanding = 0;
  private stopped = false;
  private onIdle: (() => void) | undefined;

  constructor(concurrency: number, perHost: number) {
    this.all = new PQueue({ concurrency });
    this.perHost = perHost;
    this.throttledLimit = Math.max(1, perHost >> 1);
  }

  /**
   * Queues `task` behind its origin's waiting tasks of the same or a higher priority. A task settles its own
   * failures (a check makes them its link's verdict); a throw is dropped.
   */
  run(origin: string, task: () => Promise<void>, priority = NEXT): void {
    this.outstanding++;
    let q = this.byOrigin.get(origin);
    if (!q) {
      q = new PQueue({ concurrency: this.perHost });
      this.byOrigin.set(origin, q);
    }
    const options = priority === FIRST ? FIRST_OPTIONS : NEXT_OPTIONS;
    q.add(() => this.all.add(task, options), options).then(this.settled, this.settled);
  }

  /** A task ended. */
  private readonly settled = (): void => {
    this.outstanding--;
    this.checkIdle();
  };

  /**
   * Queues `task` again at `at` (ms since the epoch), first of its origin, after a 429. A second 429 from the
   * origin while an earlier one's Retry-After runs shows the origin limits the whole client, not one URL: it then
   * gets half its connections (at least one; a multiplicative decrease, as TCP's congestion control does) until
   * the later Retry-After has passed.
   */
  later(origin: string, task: () => Promise<void>, at: number): void {
    if (this.stopped) return;
    const now = Date.now();
    const limited = this.limitedUntil.get(origin) ?? 0;
    if (limited > now) this.throttle(origin, Math.max(at, this.throttledUntil.get(origin) ?? 0));
    this.limitedUntil.set(origin, Math.max(at, limited));
    this.outstanding++;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.run(origin, task, FIRST);
      this.outstanding--;
    }, Math.max(0, at - Date.now()));
    this.retryTimers.add(timer);
  }

  /** Half the origin's connections until `until`: tasks running go on, fewer start (p-queue's concurrency). */
  private throttle(origin: string, until: number): void {
    this.throttledUntil.set(origin, until);
    const q = this.byOrigin.get(origin);
    if (!q) return;
    q.concurrency = this.throttledLimit;
    clearTimeout(this.throttleTimers.get(origin));
    this.throttleTimers.set(
      origin,
      setTimeout(() => {
        this.throttleTimers.delete(origin);
        q.concurrency = this.perHost;
      }, Math.max(0, until - Date.now())),
    );
  }

  private checkIdle(): void {
    if (this.outstanding === 0) this.onIdle?.();
  }

  /** Resolves when no task is queued, running or waiting for a retry. */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.onIdle = resolve;
      this.checkIdle();
    });
  }

  /**
   * Starts nothing more: the tasks waiting behind their origin are dropped (p-queue's `clear()`: their promises
   * never settle, so they are counted out here) and retries are not queued; their links stay as they were
   * (`skipped`, no error yet). The few tasks already waiting for a slot of the whole check still run, and a check
   * or a page read started after the time budget ends at once.
   */
  stop(): void {
    this.stopped = true;
    for (const q of this.byOrigin.values()) {
      this.outstanding -= q.size;
      q.clear();
    }
    for (const t of this.retryTimers) clearTimeout(t);
    this.outstanding -= this.retryTimers.size;
    this.retryTimers.clear();
    for (const t of this.throttleTimers.values()) clearTimeout(t);
    this.throttleTimers.clear();
    this.checkIdle();
  }
}

const crawlFetchers = new WeakMap<OutboundGuard, Fetcher>();

/** The module's own page fetch for a crawl (depth ≥ 1) when the caller gave none. */
function defaultPageFetch(guard: OutboundGuard, timeoutMs: number): PageFetch {
  let fetcher = crawlFetchers.get(guard);
  if (!fetcher) {
    fetcher = new Fetcher(guard, { timeoutMs, maxBytes: CRAWL_PAGE_MAX_BYTES, retries: 0 });
    crawlFetchers.set(guard, fetcher);
  }
  const f = fetcher;
  return async (url: string): Promise<FetchedText | null> => {
    try {
      const p = await f.fetch(url);
      return { url: p.url, status: p.status, headers: p.headers, contentType: p.contentType, text: p.text };
    } catch {
      return null;
    }
  };
}


const REQUEST_HEADERS = {
  'user-agent': DEFAULT_USER_AGENT,
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
  'accept-language': 'en-US,en;q=0.9',
};

/**
 * Checks the links of a page (and, with `depth`, of the same-site pages it links to, breadth-first).
 *
 * **Example usage:**
 * ```ts
 * const report = await checkLinks(page, { guard: svc.guard, depth: 1, maxLinks: 1000, signal: call.signal, fetchPage });
 * report.links.filter((l) => l.state === 'broken'); // [{url, status: 404, state: 'broken', parents: [...], error: 'http_status: HTTP 404', ...}]
 * ```
 * @param page the page, already fetched through the guard; its links are read when its content type is HTML
 *   (or none), else the report has no links.
 * @returns the report, always: every failure of a link is that link's verdict, and when the deadline passes or
 *   `signal` aborts, the links not done are `skipped` (`time_budget`).
 */
export async function checkLinks(page: ToolPage, options: LinkCheckOptions): Promise<LinksReport> {
  const t0 = performance.now();
  const d = LINK_CHECK_DEFAULTS;
  const depth = clamp(options.depth, d.depth, 0, d.maxDepth);
  const maxLinks = clamp(options.maxLinks, d.maxLinks, 1, d.maxMaxLinks);
  const deadlineMs = clamp(options.deadlineMs, d.deadlineMs, 100, d.maxDeadlineMs);
  const timeoutMs = clamp(options.timeoutMs, d.timeoutMs, 100, d.maxTimeoutMs);
  const concurrency = clamp(options.concurrency, d.concurrency, 1, d.maxConcurrency);
  const perHost = clamp(options.perHostConcurrency, d.perHostConcurrency, 1, d.maxPerHostConcurrency);
  const { guard } = options;
  const fetchPage = depth > 0 ? (options.fetchPage ?? defaultPageFetch(guard, timeoutMs)) : undefined;

  // One controller ends everything: the deadline or the caller's signal. Requests in flight are aborted through
  // the set below (one listener, not one per request).
  const budget = new AbortController();
  setMaxListeners(0, budget.signal);
  const deadlineAt = Date.now() + deadlineMs;
  const inFlight = new Set<AbortController>();
  budget.signal.addEventListener('abort', () => { for (const c of inFlight) c.abort(BUDGET); }, { once: true });
  const deadlineTimer = setTimeout(() => budget.abort(BUDGET), deadlineMs);
  const onCallerAbort = () => budget.abort(BUDGET);
  if (options.signal?.aborted) budget.abort(BUDGET);
  else options.signal?.addEventListener('abort', onCallerAbort, { once: true });

  const agent = guardedAgent(guard, { connections: perHost, timeoutMs, connectTimeoutMs: timeoutMs });
  const entries = new Map<string, Entry>();
  const order: Entry[] = [];
  let found = 0;
  let pagesCrawled = 0;
  /** Pages whose links are read, each once by its key: the given page under both its URLs is seen from the start. */
  const pages = new RequestQueue<PageRequest>();
  for (const u of [page.url, page.requestedUrl]) pages.markSeen(pageKey(u));
  let startSite = '';
  try {
    startSite = siteKey(new URL(page.url));
  } catch {
    startSite = '';
  }

  const finish = (e: Entry, state: LinkState, status: number | null, chain: string[], error: string | null): void => {
    e.result.state = state;
    e.result.status = status;
    e.result.redirect_chain = chain.length > 1 ? chain : [];
    e.result.error = error;
  };

  /** One request and its redirects: the last response's status and headers, or why it failed. */
  const request = async (method: 'HEAD' | 'GET', start: string): Promise<Probe> => {
    const chain = [start];
    let url: URL;
    try {
      url = guard.checkUrl(start);
    } catch (err) {
      return { kind: 'failure', ...failure(err), chain };
    }
    const controller = new AbortController();
    inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    try {
      for (let hop = 0; ; hop++) {
        let res: Dispatcher.ResponseData;
        try {
          // `reset: false`: undici closes the connection after every HEAD (a guard against servers that send a
          // body anyway) unless told otherwise; it still does when the response does not say `keep-alive`.
          res = await agent.request({ origin: url.origin, path: url.pathname + url.search, method, headers: REQUEST_HEADERS, signal: controller.signal, reset: false });
        } catch (err) {
          if (controller.signal.reason === BUDGET) throw BUDGET;
          if (controller.signal.aborted) return { kind: 'failure', reason: 'timeout', text: `no answer within ${timeoutMs} ms`, chain };
          return { kind: 'failure', ...failure(err), chain };
        }
        const h = res.headers;
        const location = typeof h.location === 'string' ? h.location : undefined;
        if (method === 'GET') await res.body.dump({ limit: GET_DRAIN_BYTES }).catch(() => undefined);
        else await res.body.dump().catch(() => undefined);
        if (res.statusCode >= 300 && res.statusCode < 400 && location !== undefined) {
          if (hop >= MAX_REDIRECTS) return { kind: 'failure', reason: 'redirects', text: `more than ${MAX_REDIRECTS} redirects`, chain };
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            return { kind: 'failure', reason: 'redirects', text: `bad Location "${location.slice(0, 200)}" from ${url.href}`, chain };
          }
          next.hash = '';
          chain.push(next.href);
          try {
            url = guard.checkUrl(next);
          } catch (err) {
            return { kind: 'failure', ...failure(err), chain };
          }
          continue;
        }
        const type = typeof h['content-type'] === 'string' ? h['content-type'] : '';
        return {
          kind: 'response',
          status: res.statusCode,
          contentType: type.split(';')[0]!.trim().toLowerCase(),
          retryAfter: typeof h['retry-after'] === 'string' ? h['retry-after'] : undefined,
          // A status LinkedIn and others answer robots with, and Cloudflare's challenge: not a verdict on the URL.
          blocked: res.statusCode === 999 || (res.statusCode === 403 && h['cf-mitigated'] !== undefined),
          chain,
        };
      }
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
    }
  };

  /** Queues the same-site page a link names for its links (depth ≥ 1), unless it was queued before; reads first. */
  const queuePage = (e: Entry): void => {
    if (!pages.add({ url: e.result.url, uniqueKey: pageKey(e.result.url), origin: e.origin, depth: e.depth + 1 }, 0)) return;
    for (let req = pages.shift(0); req; req = pages.shift(0)) {
      const next = req;
      queues.run(next.origin, () => readPage(next), FIRST);
    }
  };

  /** Reads a page's links and queues the new ones; a page reached by a redirect is read once too. */
  const readPage = async (req: PageRequest): Promise<void> => {
    if (budget.signal.aborted) return;
    const fetched = await Promise.race([
      fetchPage!(req.url).catch(() => null),
      new Promise<null>((resolve) => {
        if (budget.signal.aborted) resolve(null);
        else budget.signal.addEventListener('abort', () => resolve(null), { once: true });
      }),
    ]);
    if (!fetched || budget.signal.aborted || fetched.status < 200 || fetched.status >= 300 || !isHtmlResponse(fetched.contentType, fetched.text)) return;
    const key = pageKey(fetched.url);
    if (key !== req.uniqueKey && pages.has(key)) return;
    pages.markSeen(key);
    pagesCrawled++;
    addLinks(fetched.text, fetched.url, req.depth);
  };

  const check = async (e: Entry): Promise<void> => {
    if (budget.signal.aborted) return;
    try {
      let probe = await request('HEAD', e.result.url);
      if (probe.kind === 'response' && probe.status === 429) return retry429(e, probe);
      const headOk = probe.kind === 'response' && probe.status >= 200 && probe.status < 300;
      const getAfter = probe.kind === 'response' ? !headOk && !probe.blocked : GET_AFTER_HEAD_FAILURE.has(probe.reason);
      if (getAfter) {
        const got = await request('GET', e.result.url);
        if (got.kind === 'response' && got.status === 429) return retry429(e, got);
        // A GET that fails outright says less than the HEAD's HTTP answer: keep that.
        if (got.kind === 'response' || probe.kind === 'failure') probe = got;
      }
      if (probe.kind === 'failure') {
        const state: LinkState = probe.reason === 'timeout' ? 'timeout' : probe.reason === 'forbidden' ? 'skipped' : 'broken';
        finish(e, state, null, probe.chain, `${probe.reason}: ${probe.text}`);
        return;
      }
      if (probe.blocked) {
        finish(e, 'skipped', probe.status, probe.chain, `blocked: the server refuses automated checks (HTTP ${probe.status})`);
      } else if (probe.status >= 200 && probe.status < 300) {
        finish(e, probe.chain.length > 1 ? 'redirect' : 'ok', probe.status, probe.chain, null);
        if (fetchPage && e.navigable && e.sameSite && e.depth < depth && mayBeHtml(probe.contentType)) queuePage(e);
      } else {
        const words = probe.status >= 300 && probe.status < 400 ? `HTTP ${probe.status} without a Location` : `HTTP ${probe.status}`;
        finish(e, 'broken', probe.status, probe.chain, `http_status: ${words}`);
      }
    } catch (err) {
      // BUDGET: the deadline or the caller stopped it (the report says so). Anything else is a bug here, and
      // stays that link's verdict rather than an unhandled rejection that would end the process.
      if (err !== BUDGET) finish(e, 'broken', null, [], `network: ${(err as Error)?.message ?? String(err)}`);
    }
  };

  /**
   * After a 429 (RFC 6585: too many requests in a given time): the link is checked again after its Retry-After,
   * at most MAX_429_RETRIES times and only when that is within the budget. The origin gets half its connections
   * when a second 429 arrives within a Retry-After (see CheckQueues.later): a single 429 may be one URL's limit,
   * and stopping the origin on every 429 would serialise its links, each further 429 costing a full wait.
   */
  const retry429 = (e: Entry, probe: Extract<Probe, { kind: 'response' }>): void => {
    const wait = Math.min(retryAfterMs(probe.retryAfter) ?? DEFAULT_429_WAIT_MS, deadlineMs);
    const at = Date.now() + wait;
    if (e.retries >= MAX_429_RETRIES || at >= deadlineAt) {
      const why = e.retries >= MAX_429_RETRIES ? `still HTTP 429 after ${e.retries} retries` : `HTTP 429, Retry-After ${Math.ceil(wait / 1000)} s is past the time budget`;
      finish(e, 'skipped', 429, probe.chain, `rate_limited: ${why}`);
      return;
    }
    e.retries++;
    queues.later(e.origin, () => check(e), at);
  };

  const queues = new CheckQueues(concurrency, perHost);

  /** Adds a page's links: new ones are queued (up to maxLinks), known ones get the page as a parent. */
  const addLinks = (html: string, pageUrl: string, linkDepth: number): void => {
    for (const link of extractLinks(html, pageUrl)) {
      const known = entries.get(link.url);
      if (known) {
        if (!known.result.parents.includes(pageUrl)) known.result.parents.push(pageUrl);
        if (link.navigable) known.navigable = true;
        continue;
      }
      let u: URL | null = null;
      if (link.valid) {
        u = new URL(link.url);
        // data: and javascript: carry their content or code inline: they name nothing to check or report.
        if (u.protocol === 'data:' || u.protocol === 'javascript:') continue;
      }
      found++;
      if (order.length >= maxLinks) continue;
      const result: LinkResult = { url: link.url, status: null, state: 'skipped', redirect_chain: [], parents: [pageUrl], error: null };
      const e: Entry = { result, origin: '', depth: linkDepth, navigable: link.navigable, sameSite: false, retries: 0 };
      entries.set(link.url, e);
      order.push(e);
      if (!u) {
        finish(e, 'broken', null, [], 'invalid_url: not a valid URL');
        continue;
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') {
        finish(e, 'skipped', null, [], `scheme: ${u.protocol.slice(0, -1)} links are not checked`);
        continue;
      }
      e.origin = u.origin;
      e.sameSite = startSite !== '' && siteKey(u) === startSite;
      if (budget.signal.aborted) {
        finish(e, 'skipped', null, [], 'time_budget: not checked within the time budget');
        continue;
      }
      queues.run(e.origin, () => check(e));
    }
  };

  try {
    if (page.html && isHtmlResponse(page.contentType, page.html)) {
      pagesCrawled = 1;
      addLinks(page.html, page.url, 0);
    }
    await Promise.race([
      queues.idle(),
      new Promise<void>((resolve) => {
        if (budget.signal.aborted) resolve();
        else budget.signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    ]);
    queues.stop();
    await queues.idle();
  } finally {
    clearTimeout(deadlineTimer);
    options.signal?.removeEventListener('abort', onCallerAbort);
    agent.destroy().catch(() => undefined);
  }

  const summary: LinksSummary = {
    total: order.length, ok: 0, broken: 0, redirect: 0, timeout: 0, skipped: 0,
    found, over_limit: found - order.length, pages_crawled: pagesCrawled, duration_ms: 0,
  };
  for (const e of order) {
    // Not started, or cut off in flight: the budget ran out before its verdict.
    if (e.result.state === 'skipped' && e.result.error === null) {
      e.result.error = 'time_budget: not checked within the time budget';
      e.result.status = null;
      e.result.redirect_chain = [];
    }
    summary[e.result.state]++;
  }
  summary.duration_ms = Math.round(performance.now() - t0);
  return {
    url: page.url,
    links: order.map((e) => e.result),
    summary,
    limits: { depth, max_links: maxLinks, deadline_ms: deadlineMs, timeout_ms: timeoutMs },
  };
}

const count = { type: 'integer', minimum: 0 } as const;

/**
 * JSON Schema of {@link LinksReport}: keywords common to drafts 07 and 2020-12 only (no `$schema`; ajv 8's
 * default class compiles it in strict mode with `allowUnionTypes`), closed objects throughout.
 */
export const linksReportSchema = {
  $id: 'https://scrape-ai.dev/schemas/tools/links-report.json',
  title: 'Broken-link checker response',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'links', 'summary', 'limits'],
  properties: {
    url: { type: 'string' },
    links: {
      type: 'array',
      maxItems: LINK_CHECK_DEFAULTS.maxMaxLinks,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['url', 'status', 'state', 'redirect_chain', 'parents', 'error'],
        properties: {
          url: { type: 'string' },
          status: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 100, maximum: 999 }] },
          state: { enum: ['ok', 'broken', 'redirect', 'timeout', 'skipped'] },
          redirect_chain: { type: 'array', items: { type: 'string' } },
          parents: { type: 'array', minItems: 1, items: { type: 'string' } },
          error: { anyOf: [{ type: 'null' }, { type: 'string', pattern: `^(${LINK_ERROR_REASONS.join('|')}): ` }] },
        },
      },
    },
    summary: {
      type: 'object',
      additionalProperties: false,
      required: ['total', 'ok', 'broken', 'redirect', 'timeout', 'skipped', 'found', 'over_limit', 'pages_crawled', 'duration_ms'],
      properties: {
        total: count, ok: count, broken: count, redirect: count, timeout: count, skipped: count,
        found: count, over_limit: count, pages_crawled: count, duration_ms: count,
      },
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      required: ['depth', 'max_links', 'deadline_ms', 'timeout_ms'],
      properties: {
        depth: { type: 'integer', minimum: 0, maximum: LINK_CHECK_DEFAULTS.maxDepth },
        max_links: { type: 'integer', minimum: 1, maximum: LINK_CHECK_DEFAULTS.maxMaxLinks },
        deadline_ms: { type: 'integer', minimum: 1 },
        timeout_ms: { type: 'integer', minimum: 1 },
      },
    },
  },
} as const;
