/**
 * How a run may reach the sites it reads (docs/crawler.md, "robots.txt", "Pace"): one {@link SiteAccess} per run,
 * shared by every page the crawler loads (the engine probe of `engine: auto`, the index, listing, category and detail
 * pages) on either engine. For each page, in order:
 * 1. robots.txt (./robots.ts): a URL the rules disallow is not loaded (`robots_disallowed`), unless the config says
 *    `target.robots: ignore`;
 * 2. the host's pace (./pace.ts): the request waits for its slot;
 * 3. the load; its answer feeds the pace (latency, 429/503, Retry-After);
 * 4. a bot-protection page (lambdas/net/blocks.ts) or a failing proxy retires the proxy session and the request goes
 *    again on the next one (./proxy-sessions.ts), at most MAX_SESSION_ROTATIONS times; without another: `blocked`;
 * 5. 429 and 5xx answers are loaded again, as often as the run's fetcher would retry them (3 times by default), after
 *    its back-off with jitter (500 ms doubling) or the answer's Retry-After (at most 10 s a wait), each through the
 *    pace again: one implementation for both engines (the HTTP loader's fetcher leaves these retries to this module).
 *
 * The state lives here, in the crawler's one object, not in a page worker: what a host answered slows every request
 * to it, whichever worker makes it.
 */
import { CodedError, isCodedError } from '../../errors.ts';
import type { FetchedPage, Fetcher, FetchRequestOptions } from '../../net/fetch.ts';
// Not from fetch.ts or tunnel.ts: those load undici and node:net, and the extension bundles this module (its popup and
// service worker have no `process`).
import { retryAfterMs } from '../../net/retry-after.ts';
import { isProxyFailure } from '../../net/proxy-failure.ts';
import { MAX_SESSION_ROTATIONS, ProxySessionPool, type ProxySession } from './proxy-sessions.ts';
import { SessionFetchers } from './session-fetchers.ts';
import { blockMessage, detectBlock, type Block } from '../../net/blocks.ts';
import { sleep } from '../../sleep.ts';
import type { ScrapeConfig } from '../config.ts';
import { HostPace, type PaceSettings } from './pace.ts';
import { RobotsRules, type RobotsAnswer, type RobotsRefusal } from './robots.ts';


/** What {@link SiteAccess.load} reads of an answer. */
export interface AccessAnswer {
  status: number;
  /** Response headers, lower-case names. */
  headers?: Readonly<Record<string, string>>;
  /** Time the request took, ms (measured here when absent). */
  latencyMs?: number;
  /** The body (HTML), read for a bot-protection page (lambdas/net/blocks.ts); absent: not checked. */
  body?: string;
}

/** A bot-protection page instead of the page: code `blocked`, details `[{url, service, kind, status}]`. */
export class BlockedError extends CodedError {
  readonly block: Block;
  constructor(block: Block, url: string, advice: 'browser or proxy' | 'proxy' | 'none', sessionsTried = 0) {
    const tried = sessionsTried > 1 ? ` (on ${sessionsTried} proxy sessions)` : '';
    super('blocked', `${blockMessage(block, url, advice)}${tried}`, [{ url, service: block.service, kind: block.kind, status: block.status }]);
    this.name = 'BlockedError';
    this.block = block;
  }
}

/** A URL robots.txt disallows: code `robots_disallowed`, details `[{url, robots_url, rule, line}]`. */
export class RobotsDisallowedError extends CodedError {
  readonly refusal: RobotsRefusal;
  constructor(r: RobotsRefusal) {
    super('robots_disallowed', `${r.url} is disallowed by ${r.robotsUrl} (line ${r.line}: "${r.rule}"); robots.txt is obeyed unless the config says target.robots: ignore where the plan allows it`,
      [{ url: r.url, robots_url: r.robotsUrl, rule: r.rule, line: r.line }]);
    this.name = 'RobotsDisallowedError';
    this.refusal = r;
  }
}

/** Options of a {@link SiteAccess}. */
export interface SiteAccessOptions {
  /** Fetches robots.txt (through the guard). */
  fetcher: Fetcher;
  /** Pages the run loads at once (they bound the requests in flight to a host when the config names no target concurrency). */
  concurrency: number;
  /** robots.txt rules read already (a generation's, shared by its trial runs); absent: this run's own. */
  robots?: RobotsRules;
  /** The run's proxy sessions; absent: one direct session. */
  sessions?: ProxySessionPool;
  /** The HTTP side of the sessions (robots.txt goes through the current one); absent: `fetcher`, direct. */
  fetchers?: SessionFetchers;
}

/** robots.txt rules fetched with `fetcher` (through its guard; no retries; the limits of ./robots.ts). */
export function fetchedRobots(fetcher: Fetcher, warn: (message: string) => void, fetch?: (url: string, o: FetchRequestOptions) => Promise<FetchedPage>): RobotsRules {
  const get = fetch ?? ((url: string, o: FetchRequestOptions) => fetcher.fetch(url, o));
  return new RobotsRules({
    fetch: async (url, limits, signal): Promise<RobotsAnswer> => {
      try {
        const page = await get(url, { ...limits, retryStatuses: false, ...(signal ? { signal } : {}) });
        return { status: page.status, text: page.text };
      } catch (error) {
        return { error };
      }
    },
    warn,
  });
}

/** The pace settings of a config (`target.politeness`), ms. */
export function paceSettings(config: ScrapeConfig): PaceSettings {
  const p = config.target.politeness;
  // Without a target concurrency the run's own concurrency bounds the requests in flight: the gap has no latency
  // term then (a healthy host is crawled as fast as before) and only grows on 429/503, coming down again after.
  return { mode: p.mode, delayMs: p.delay, maxDelayMs: p.max_delay, targetConcurrency: p.target_concurrency ?? Number.POSITIVE_INFINITY };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * robots.txt and pace of one run.
 *
 * **Example usage:**
 * ```ts
 * const access = new SiteAccess(config, { fetcher, concurrency: 4 });
 * const doc = await access.load(url, (beforeRequest) => tab.load(url, { beforeRequest }), (d) => d, signal); // robots, pace, 429/5xx retries
 * for (const w of access.summary()) warnings.add(w);
 * ```
 */
export class SiteAccess {
  /** null with `target.robots: ignore`. */
  readonly robots: RobotsRules | null;
  readonly pace: HostPace;
  private readonly sideWarnings: string[] = [];
  /** Bot-protection pages met by the run, in order. */
  readonly blocks: Block[] = [];
  /** The run's proxy sessions (one direct session without a group). */
  readonly sessions: ProxySessionPool;
  /** Their fetchers and cookies over HTTP. */
  readonly fetchers: SessionFetchers;
  /** The retries of 429 and 5xx answers: the run's fetcher's policy. */
  private readonly retry: { retries: number; retryBaseMs: number; retryMaxMs: number };
  /** Pages skipped by robots.txt, by rule (robots URL and line). */
  private readonly skipped = new Map<string, { refusal: RobotsRefusal; count: number }>();

  constructor(config: ScrapeConfig, o: SiteAccessOptions) {
    const fetcher = o.fetcher;
    this.sessions = o.sessions ?? new ProxySessionPool(null);
    const fetchers = o.fetchers ?? new SessionFetchers(fetcher);
    this.fetchers = fetchers;
    this.robots = config.target.robots === 'ignore' ? null : o.robots ?? fetchedRobots(fetcher, (m) => this.sideWarnings.push(m), (url, opts) => fetchers.fetch(this.sessions.current, url, opts));
    this.retry = fetcher.retryPolicy;
    const robots = this.robots;
    this.pace = new HostPace(paceSettings(config), { floor: (origin) => robots?.crawlDelayMs(origin) });
  }

  /**
   * Loads one page under the run's rules: robots.txt, the host's pace, and the retries of 429 and 5xx answers.
   * @param attempt makes one load (no status retries of its own), calling `beforeRequest` right before its request
   *   (a load that makes none, a page loaded already, need not); @param read what the pace needs of its answer.
   * @returns the last answer (a 429 or 5xx after the last retry is returned, not thrown).
   * @throws RobotsDisallowedError (`robots_disallowed`) before anything is loaded; whatever `attempt` throws; the
   *   signal's reason.
   */
  async load<T>(url: string, attempt: (beforeRequest: () => Promise<void>, session: ProxySession) => Promise<T>, read: (answer: T) => AccessAnswer, signal?: AbortSignal,
    o: { engine?: 'lightweight' | 'heavy'; plainHttp?: boolean } = {}): Promise<T> {
    await this.checkRobots(url, signal);
    const origin = originOf(url);
    let rotations = 0;
    for (let retry = 0; ; retry++) {
      const session = this.sessions.current;
      let started = Date.now();
      // The loader calls this right before its request: the pace is kept where the server sees it.
      const beforeRequest = async () => {
        await this.pace.acquire(origin, signal);
        started = Date.now();
      };
      let answer: T;
      try {
        answer = await attempt(beforeRequest, session);
      } catch (err) {
        // The proxy itself failed (down, credentials refused): its session is retired, the request goes on the next.
        if (!signal?.aborted && isProxyFailure(err) && this.sessions.retire(session, 'proxy failed') && rotations < MAX_SESSION_ROTATIONS) {
          rotations++;
          retry--;
          continue;
        }
        throw err;
      }
      const a = read(answer);
      const wait = retryAfterMs(a.headers?.['retry-after']);
      this.pace.observe(origin, { status: a.status, latencyMs: a.latencyMs ?? Date.now() - started, ...(wait !== undefined ? { retryAfterMs: wait } : {}) });
      // A bot-protection page is not loaded again as it is: retrying a challenge only gets the challenge.
      const block = a.body !== undefined ? detectBlock({ status: a.status, ...(a.headers ? { headers: a.headers } : {}), body: a.body }) : null;
      if (block) {
        this.blocks.push(block);
        // Another session may get through: the same request goes again on it, a bounded number of times.
        if (this.sessions.retire(session, `${block.service} ${block.kind}`) && rotations < MAX_SESSION_ROTATIONS) {
          rotations++;
          retry--;
          continue;
        }
        // A browser cannot help a request the run sends over HTTP whatever the engine (an API config's).
        throw new BlockedError(block, url, o.engine === 'heavy' || o.plainHttp ? 'proxy' : 'browser or proxy', rotations + 1);
      }
      if ((a.status === 429 || a.status >= 500) && retry < this.retry.retries) {
        const base = this.retry.retryBaseMs * 2 ** retry;
        // A Retry-After already holds the host in the pace; the back-off spaces retries without one.
        await sleep(Math.min(this.retry.retryMaxMs, wait ?? base / 2 + Math.random() * base / 2), signal);
        continue;
      }
      return answer;
    }
  }

  /** @throws RobotsDisallowedError when robots.txt disallows `url`. */
  async checkRobots(url: string, signal?: AbortSignal): Promise<void> {
    const refusal = await this.robots?.check(url, signal);
    if (refusal) throw new RobotsDisallowedError(refusal);
  }

  /** Counts a page that robots.txt kept from being loaded (a detail page), for {@link summary}'s one warning per rule. */
  noteSkipped(err: unknown): void {
    if (!(err instanceof RobotsDisallowedError)) return;
    const r = err.refusal;
    const key = `${r.robotsUrl}#${r.line}`;
    const s = this.skipped.get(key);
    if (s) s.count++;
    else this.skipped.set(key, { refusal: r, count: 1 });
  }

  /** The run's warnings of this module: robots.txt files that could not be read, pages each rule kept out. */
  summary(): string[] {
    const out = [...this.sideWarnings];
    for (const { refusal: r, count } of this.skipped.values()) {
      out.push(`robots.txt: ${count} detail page(s) not loaded, disallowed by ${r.robotsUrl} line ${r.line} ("${r.rule}"), e.g. ${r.url}`);
    }
    return out;
  }
}

/** Whether an error is a page refused by robots.txt. */
export function isRobotsRefusal(err: unknown): err is RobotsDisallowedError {
  return isCodedError(err) && err.code === 'robots_disallowed';
}
