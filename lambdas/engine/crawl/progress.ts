/**
 * A run's counts (pages read, items kept, listing steps) and its progress figure. The figure is pages read
 * against the pages the run is expected to read: the index page, `max_pages` steps per listing (lowered as
 * listings end early) and, with detail fields, as many detail pages per listing step as the steps so far had
 * items. It never goes down and stays at most 99 until the run reports 'done'. Every report is passed on:
 * the caller throttles its writes.
 */
import type { PageCounts, RunProgress } from './types.ts';

/** What a {@link ProgressTracker} needs to know about the run. */
export interface ProgressOptions {
  /** Steps a listing takes at most: `pagination.max_pages`, 1 without pagination. */
  perListingPages: number;
  /** Whether listing items have detail pages to load (`detail_fields` with fields). */
  withDetails: boolean;
  /** Pages started so far (the page budget's count): the expected total is never below it. */
  pagesStarted: () => number;
  /** Receives every report; none is made without it. */
  onProgress?: (p: RunProgress) => void;
}

/**
 * Counts and progress of one run.
 *
 * **Example usage:**
 * ```ts
 * const p = new ProgressTracker({ perListingPages: 4, withDetails: false, pagesStarted: () => budget.started, onProgress });
 * p.pageRead('listing'); p.listingStepRead(20); p.report('listing page 1: 20 items'); // progress 24 (1 of 4 pages)
 * ```
 */
export class ProgressTracker {
  private scraped = 0;
  private readonly kinds: PageCounts = { listing: 0, detail: 0, index: 0 };
  private items = 0;
  private stepsDone = 0;
  /** Listing steps expected in all (max_pages per listing until a listing ends). */
  private planned: number;
  private indexPages = 0;
  private last = 0;

  private readonly o: ProgressOptions;

  constructor(o: ProgressOptions) {
    this.o = o;
    this.planned = o.perListingPages;
  }

  /** Documents loaded and read so far (listing pages and in-page steps, detail pages, the index page). */
  get pagesScraped(): number {
    return this.scraped;
  }

  /** Items kept from listing pages so far. */
  get itemsFound(): number {
    return this.items;
  }

  /** Listing steps read so far. */
  get listingStepsDone(): number {
    return this.stepsDone;
  }

  /** Listing steps expected in all, as now known. */
  get listingPlanned(): number {
    return this.planned;
  }

  /** The pages read so far by kind; they add up to {@link pagesScraped}. */
  get pageCounts(): PageCounts {
    return { ...this.kinds };
  }

  /** A document of `kind` was loaded and read (it counts in `pagesScraped`; docs/crawler.md, "What pages_scraped counts"). */
  pageRead(kind: keyof PageCounts): void {
    this.scraped++;
    this.kinds[kind]++;
  }

  /** The categories' index page is part of the run: one more page expected. */
  indexStarted(): void {
    this.indexPages = 1;
  }

  /** The index page named `count` categories: each a listing of up to `perListingPages` steps. */
  categoriesFound(count: number): void {
    this.planned = count * this.o.perListingPages;
  }

  /** A listing step was read and kept `items` items. */
  listingStepRead(items: number): void {
    this.items += items;
    this.stepsDone++;
  }

  /** A listing ended after step `lastIndex` (-1: before its first): its steps not taken are no longer expected. */
  listingEnded(lastIndex: number): void {
    this.planned = Math.max(this.stepsDone, this.planned - (this.o.perListingPages - (lastIndex + 1)));
  }

  /**
   * Reports progress to `onProgress` (nothing without it).
   * @param message '' for "N pages, M items".
   * @param force the figure to report instead of the estimate (99 when the run is done); still never lower than before.
   */
  report(message: string, force?: number): void {
    if (!this.o.onProgress) return;
    // Detail pages per listing step are estimated from the listing steps seen so far.
    const detailsPerStep = this.o.withDetails && this.stepsDone ? this.items / this.stepsDone : 0;
    const expected = Math.max(this.indexPages + this.planned * (1 + detailsPerStep), this.o.pagesStarted(), 1);
    const ratio = force !== undefined ? force : Math.floor((99 * this.scraped) / expected);
    this.last = Math.max(this.last, Math.min(99, ratio));
    this.o.onProgress({
      progress: this.last,
      pagesScraped: this.scraped,
      itemsFound: this.items,
      message: message || `${this.scraped} pages, ${this.items} items`,
    });
  }
}

/**
 * What `pages_scraped` counts, said the same way by every run's message (the service's, `sai run --local`'s, the
 * extension's; docs/crawler.md, "What pages_scraped counts"): `2 pages`, or `17 pages: 2 listing, 15 detail` when the
 * run read more than listing pages.
 */
export function describePages(counts: PageCounts): string {
  const total = counts.listing + counts.detail + counts.index;
  const noun = `${total} page${total === 1 ? '' : 's'}`;
  if (!counts.detail && !counts.index) return noun;
  const parts = [`${counts.listing} listing`, ...(counts.detail ? [`${counts.detail} detail`] : []), ...(counts.index ? [`${counts.index} categories index`] : [])];
  return `${noun}: ${parts.join(', ')}`;
}
