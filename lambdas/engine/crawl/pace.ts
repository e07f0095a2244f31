/**
 * The pace of a run per host (docs/crawler.md, "Pace"; `target.politeness`): the smallest gap between the starts of
 * two requests to one origin, kept for every page a run loads (listing, detail, category and index pages, the engine
 * probe; both engines), plus an automatic mode after Scrapy's AutoThrottle
 * (https://docs.scrapy.org/en/latest/topics/autothrottle.html): the gap follows the host's latency divided by a
 * target concurrency (requests in flight to the host on average), slows down on 429 and 503 answers and speeds up
 * again as answers come back well. A host's `Crawl-delay` (robots.txt) is a floor in both modes, and a
 * `Retry-After` pauses every request to that host until it has passed.
 *
 * One HostPace per run, shared by every worker of the crawl (state is per origin, in the crawler, not per page).
 */
import { sleep } from '../../sleep.ts';

/** The run's pace settings, from `target.politeness` (ms). */
export interface PaceSettings {
  /** `auto`: the gap adapts; `fixed`: it is `delayMs` (or the Crawl-delay) throughout. */
  mode: 'auto' | 'fixed';
  /** The smallest gap between two requests to one host, ms (fixed: the gap). */
  delayMs: number;
  /** auto: the largest gap it slows down to, ms. */
  maxDelayMs: number;
  /** auto: requests in flight to one host it aims at (AutoThrottle's target concurrency). */
  targetConcurrency: number;
}

/** The gap after a 429 or 503 in auto mode is at least this, ms (then doubled at each further one). */
export const SLOW_DOWN_MIN_MS = 1_000;

/** What an answer tells the pace. */
export interface PaceObservation {
  status: number;
  /** Time from the request's start to its answer, ms. */
  latencyMs: number;
  /** A `Retry-After` of the answer, ms. */
  retryAfterMs?: number;
}

interface HostState {
  /** The current gap, ms (auto: adapted; fixed: unused). */
  delay: number;
  /** The earliest start of the next request, ms since the epoch. */
  next: number;
  /** No request starts before this (a Retry-After), ms since the epoch. */
  pausedUntil: number;
}

/**
 * Per-host pace of one run.
 *
 * **Example usage:**
 * ```ts
 * const pace = new HostPace({ mode: 'auto', delayMs: 0, maxDelayMs: 30_000, targetConcurrency: 4 }, { floor: (o) => robots.crawlDelayMs(o) });
 * await pace.acquire('https://shop.example', signal);        // waits for the host's next slot
 * pace.observe('https://shop.example', { status: 429, latencyMs: 80 }); // slows down
 * ```
 */
export class HostPace {
  private readonly hosts = new Map<string, HostState>();
  private readonly s: PaceSettings;
  private readonly floor: (origin: string) => number | undefined;
  private readonly now: () => number;
  /** 429 and 503 answers seen (each slowed its host down in auto mode). */
  slowdowns = 0;

  /**
   * @param o.floor a host's own floor, ms (its robots.txt Crawl-delay), when it has one;
   * @param o.now the clock (tests), ms since the epoch.
   */
  constructor(settings: PaceSettings, o: { floor?: (origin: string) => number | undefined; now?: () => number } = {}) {
    this.s = settings;
    this.floor = o.floor ?? (() => undefined);
    this.now = o.now ?? Date.now;
  }

  private state(origin: string): HostState {
    let h = this.hosts.get(origin);
    if (!h) {
      h = { delay: this.s.delayMs, next: 0, pausedUntil: 0 };
      this.hosts.set(origin, h);
    }
    return h;
  }

  /** The smallest gap for a host: the settings' delay or its Crawl-delay, whichever is larger (ms). */
  private minimum(origin: string): number {
    return Math.max(this.s.delayMs, this.floor(origin) ?? 0);
  }

  /** The gap the host's next request keeps from the one before, ms. */
  gapOf(origin: string): number {
    const min = this.minimum(origin);
    return this.s.mode === 'fixed' ? min : Math.min(Math.max(min, this.state(origin).delay), Math.max(min, this.s.maxDelayMs));
  }

  /**
   * Waits until a request to `origin` may start, and books that start: the next one waits the host's gap after it.
   * @throws the signal's reason when aborted while waiting.
   */
  async acquire(origin: string, signal?: AbortSignal): Promise<void> {
    const h = this.state(origin);
    const now = this.now();
    const start = Math.max(now, h.next, h.pausedUntil);
    h.next = start + this.gapOf(origin);
    if (start > now) await sleep(start - now, signal);
    // A Retry-After that came while this request waited holds it too.
    for (let wait = h.pausedUntil - this.now(); wait > 0; wait = h.pausedUntil - this.now()) await sleep(wait, signal);
  }

  /**
   * Takes an answer into account: a Retry-After pauses the host; in auto mode a 429 or 503 doubles the gap (at
   * least {@link SLOW_DOWN_MIN_MS}, at most `maxDelayMs`), any other answer moves it halfway to latency / target
   * concurrency (AutoThrottle's rule, which does not let an error page's short latency speed the host up).
   */
  observe(origin: string, o: PaceObservation): void {
    const h = this.state(origin);
    if (o.retryAfterMs !== undefined && o.retryAfterMs > 0) h.pausedUntil = Math.max(h.pausedUntil, this.now() + o.retryAfterMs);
    const slow = o.status === 429 || o.status === 503;
    if (slow) this.slowdowns++;
    if (this.s.mode !== 'auto') return;
    const min = this.minimum(origin);
    const max = Math.max(min, this.s.maxDelayMs);
    if (slow) {
      h.delay = Math.min(max, Math.max(h.delay * 2, SLOW_DOWN_MIN_MS, o.retryAfterMs ?? 0));
      // The next request already waits the new gap, not the one booked before this answer.
      h.next = Math.max(h.next, this.now() + h.delay);
      return;
    }
    const target = Math.max(0, o.latencyMs) / this.s.targetConcurrency;
    const next = Math.min(max, Math.max(min, target, (h.delay + target) / 2));
    if (o.status !== 200 && next <= h.delay) return;
    h.delay = next;
  }
}
