/**
 * The crawl's scheduling: `concurrency` workers take requests from the request queue (../request-queue.ts) and
 * run them. Listing requests (and the index page) go first and take their own slot of the page budget when they
 * start; a detail page starts only when the budget has room beyond the pages the listings may still need, so the
 * listings are never starved by their own detail pages. Once the budget is spent and no listing page may come,
 * the detail pages left are dropped. The first error a request throws fails the run at once: loads in flight
 * are aborted, not awaited.
 */
import type { CrawlRequest, RequestQueue } from '../request-queue.ts';
import type { PageBudget } from './budget.ts';
import type { Warnings } from './warnings.ts';

/** Wakes workers waiting for work. */
class Wake {
  private waiters: Array<() => void> = [];
  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }
}

/** Options of a {@link Scheduler}. */
export interface SchedulerOptions {
  /** Workers, i.e. requests run at once (at least 1). */
  concurrency: number;
  queue: RequestQueue;
  budget: PageBudget;
  /** Gets the page-limit warning when detail pages are dropped. */
  warnings: Warnings;
  /** The caller's abort signal: the run fails with its reason. */
  signal?: AbortSignal;
  /** The user's stop: the budget is lowered to the pages started ({@link PageBudget.stopByUser}). */
  stopSignal?: AbortSignal;
}

/** What the scheduler asks of the rest of the crawl. */
export interface SchedulerHooks {
  /**
   * Runs one request on worker `worker` (0 to concurrency-1). An index or listing request takes its own budget
   * slot; a detail request's slot is taken already. A rejection fails the run.
   */
  handle(req: CrawlRequest, worker: number): Promise<void>;
  /** Whether listings not started yet (categories waiting) may still need pages. */
  listingsPending(): boolean;
  /** Budget slots held back for listing pages still to come. */
  reservedForListings(): number;
  /** A detail request dropped because the budget is spent: its fields take their defaults. */
  dropDetail(req: CrawlRequest): void;
  /** Called once every worker has ended, after a failure too (to close the sessions). */
  settled?(): void;
}

/**
 * Runs the request queue with a fixed number of workers.
 *
 * **Example usage:**
 * ```ts
 * const s = new Scheduler({ concurrency: 4, queue, budget, warnings, signal });
 * queue.add({ label: 'listing', url, uniqueKey: pageKey(url), listing, index: 0 }, 0);
 * await s.run({ handle, listingsPending: () => false, reservedForListings: () => 0, dropDetail });
 * ```
 */
export class Scheduler {
  /** Aborted by the caller's signal, or by the run itself when it fails, to stop the loads in flight. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly changed = new Wake();
  private inFlight = 0;
  private listingInFlight = 0;
  private failure: { error: unknown } | null = null;
  private failedPromise: Promise<never> | null = null;
  private rejectFailed: ((e: unknown) => void) | null = null;

  private readonly o: SchedulerOptions;

  constructor(o: SchedulerOptions) {
    this.o = o;
    this.signal = o.signal ? AbortSignal.any([o.signal, this.controller.signal]) : this.controller.signal;
  }

  /** Wakes the workers waiting for work (requests were added, or the budget changed). */
  wake(): void {
    this.changed.notify();
  }

  /** Fails the run with `error` (the first failure wins): loads in flight are aborted and the workers stop. */
  fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    this.rejectFailed?.(error);
    if (!this.controller.signal.aborted) this.controller.abort(error);
    this.changed.notify();
  }

  /**
   * Runs the workers until no request is queued or in flight.
   * @throws the first error a request threw, or the caller's signal's reason, as soon as it happens.
   */
  async run(hooks: SchedulerHooks): Promise<void> {
    const { budget, stopSignal } = this.o;
    const onStop = () => {
      budget.stopByUser();
      this.changed.notify();
    };
    if (stopSignal?.aborted) onStop();
    else stopSignal?.addEventListener('abort', onStop, { once: true });
    const workers = Array.from({ length: Math.max(1, this.o.concurrency) }, (_, i) => this.worker(i, hooks));
    const onAbort = () => this.fail(this.signal.reason);
    this.signal.addEventListener('abort', onAbort, { once: true });
    try {
      // The first failure ends the run at once: loads still in flight are aborted, not awaited.
      await Promise.race([Promise.all(workers), this.failed()]);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
      stopSignal?.removeEventListener('abort', onStop);
      void Promise.allSettled(workers).then(() => hooks.settled?.());
    }
  }

  private failed(): Promise<never> {
    this.failedPromise ??= new Promise<never>((_, reject) => { this.rejectFailed = reject; });
    if (this.failure) this.rejectFailed!(this.failure.error);
    return this.failedPromise;
  }

  private async worker(index: number, hooks: SchedulerHooks): Promise<void> {
    for (;;) {
      const next = this.take(hooks);
      if (next === 'done') return;
      if (next === 'wait') {
        await this.changed.wait();
        continue;
      }
      this.inFlight++;
      const isListing = next.label !== 'detail';
      if (isListing) this.listingInFlight++;
      try {
        await hooks.handle(next, index);
      } catch (err) {
        this.fail(err);
      } finally {
        this.inFlight--;
        if (isListing) this.listingInFlight--;
        this.changed.notify();
      }
      if (this.failure) return;
    }
  }

  /** Whether listing pages may still come: queued, in flight, or categories not started yet. */
  private listingWorkLeft(hooks: SchedulerHooks): boolean {
    return this.o.queue.size(0) > 0 || this.listingInFlight > 0 || hooks.listingsPending();
  }

  /**
   * The next request a worker may take: listing requests first; a detail page when the budget has room beyond
   * the pages the listings may still need; 'wait' while listings may still free or use the budget.
   */
  private take(hooks: SchedulerHooks): CrawlRequest | 'wait' | 'done' {
    const { queue, budget, warnings } = this.o;
    for (;;) {
      if (this.failure) return 'done';
      const listing = queue.shift(0);
      if (listing) return listing;
      if (queue.size(1) > 0) {
        const listingsLeft = this.listingWorkLeft(hooks);
        if (budget.tryStartBeyond(listingsLeft ? hooks.reservedForListings() : 0)) return queue.shift(1)!;
        if (!listingsLeft) {
          // The page limit is spent: the remaining detail pages give their fields' defaults.
          warnings.add(budget.spentMessage());
          for (let r = queue.shift(1); r; r = queue.shift(1)) hooks.dropDetail(r);
          continue;
        }
        return 'wait';
      }
      return this.inFlight === 0 ? 'done' : 'wait';
    }
  }
}
