/**
 * The listings of a run and their order: the target alone, or one listing per category, started one after the
 * other as the previous one ends (its last page, an error, a cap, a loop). The current listing and the categories
 * not started yet have first claim on the page budget; when the page limit or output.limit is reached every
 * listing stops and the categories left are dropped.
 */
import type { CategoryLink, Row } from '../extract.ts';
import type { LoadedDocument } from '../loaders/page-loader.ts';
import { pageKey, type CrawlRequest, type Listing, type RequestQueue } from '../request-queue.ts';
import type { PageBudget } from './budget.ts';
import type { ProgressTracker } from './progress.ts';
import type { Warnings } from './warnings.ts';

/** What {@link Listings} works with. */
export interface ListingsDeps {
  /** Steps a listing takes at most: `pagination.max_pages`, 1 without pagination. */
  perListingPages: number;
  queue: RequestQueue;
  budget: PageBudget;
  warnings: Warnings;
  progress: ProgressTracker;
}

/**
 * The run's listings, the one going on, and the categories waiting.
 *
 * **Example usage:**
 * ```ts
 * const l = new Listings({ perListingPages: 5, queue, budget, warnings, progress });
 * l.start({}, 'https://shop.example/list'); // queues its first page
 * l.reserved();                             // 5: pages kept for it
 * l.end(l.all[0]!, 1);                      // after 2 pages: the next category starts
 * ```
 */
export class Listings {
  /** Every listing started, in order (rows keep this order). */
  readonly all: Listing[] = [];
  private current: Listing | null = null;
  private pending: CategoryLink[] = [];
  private indexDoc: LoadedDocument | null = null;
  private stoppedAll = false;
  /** The first listing page robots.txt kept out or a bot-protection service blocked (a later page or a category's first). */
  private refused: unknown = null;

  private readonly d: ListingsDeps;

  constructor(deps: ListingsDeps) {
    this.d = deps;
  }

  /** True once output.limit or the page limit stops every listing. */
  get stopped(): boolean {
    return this.stoppedAll;
  }

  /** Stops every listing: no next step is taken and no category starts. */
  stop(): void {
    this.stoppedAll = true;
  }

  /**
   * Notes why a listing page was not read: a `robots_disallowed` or `blocked` one is kept, so that a run that then
   * has no rows fails with it ({@link refusal}) rather than completing with 0 rows.
   */
  noteFailure(err: unknown): void {
    const code = (err as { code?: string })?.code;
    if (!this.refused && (code === 'robots_disallowed' || code === 'blocked')) this.refused = err;
  }

  /** The first listing page refused by robots.txt or blocked, if any ({@link noteFailure}). */
  get refusal(): unknown {
    return this.refused;
  }

  /** Whether categories are waiting to start (and may still need pages). */
  pendingCategories(): boolean {
    return !this.stoppedAll && this.pending.length > 0;
  }

  /** Pages still reserved for listings: the current one's steps not started, and every waiting category's. */
  reserved(): number {
    let r = this.current?.open ? Math.max(0, this.d.perListingPages - this.current.reserved) : 0;
    if (!this.stoppedAll) r += this.pending.length * this.d.perListingPages;
    return r;
  }

  /** Items kept by every listing so far. */
  totalItems(): number {
    let n = 0;
    for (const l of this.all) n += l.items;
    return n;
  }

  /**
   * Takes a slot of the page budget for a listing step (or, without a listing, the index page). When the budget
   * is spent: warns, stops every listing and takes nothing.
   * @returns whether a slot was taken.
   */
  reserve(listing?: Listing): boolean {
    if (!this.d.budget.tryStart()) {
      this.d.warnings.add(this.d.budget.spentMessage());
      this.stoppedAll = true;
      return false;
    }
    if (listing) listing.reserved++;
    return true;
  }

  /** A listing step that loaded nothing (an in-page step that changed nothing) gives its budget slot back. */
  giveBack(listing: Listing): void {
    this.d.budget.giveBack();
    listing.reserved--;
  }

  /**
   * Starts a listing: its first page is queued, or, when it is the categories' index page, queued to be read
   * again from that document. A page already crawled is not: the listing ends at once with a warning.
   * @param api an API config's first request (its key and position) instead of the page `url`.
   */
  start(meta: Row, url: string, api?: Pick<CrawlRequest, 'uniqueKey' | 'api'>): void {
    const listing: Listing = { id: this.all.length, meta, start: url, pages: [], items: 0, reserved: 0, open: true };
    this.all.push(listing);
    this.current = listing;
    const key = pageKey(url);
    const index = this.indexDoc;
    const isIndex = index && (key === pageKey(index.requestedUrl) || key === pageKey(index.url));
    // An API config's listing starts with its first request (crawl/api-pages.ts), keyed by method, URL and body.
    const req: CrawlRequest = api
      ? { label: 'listing', url, uniqueKey: api.uniqueKey, listing, index: 0, ...(api.api ? { api: api.api } : {}) }
      : { label: 'listing', url, uniqueKey: isIndex ? `${key}#listing` : key, listing, index: 0, ...(isIndex ? { reuse: index } : {}) };
    if (!this.d.queue.add(req, 0)) {
      this.d.warnings.add(`category ${url}: its page was crawled already (as a page of an earlier listing); skipped`);
      this.end(listing, -1);
    }
  }

  /** The index page `doc` named these categories: they wait their turn ({@link startNext} starts the first). */
  setCategories(doc: LoadedDocument, categories: CategoryLink[]): void {
    this.indexDoc = doc;
    this.pending = categories;
  }

  /** Starts the next waiting category, if any and the listings are not stopped (then the waiting ones are dropped). */
  startNext(): void {
    if (this.stoppedAll) {
      this.pending = [];
      return;
    }
    const next = this.pending.shift();
    if (next) this.start({ _category: next.name, _category_url: next.url }, next.url);
  }

  /**
   * A listing ends after step `lastIndex` (-1: before its first): its unused budget is freed and the next
   * category starts. Ending a listing twice does nothing.
   */
  end(listing: Listing, lastIndex: number): void {
    if (!listing.open) return;
    listing.open = false;
    this.d.progress.listingEnded(lastIndex);
    if (this.current === listing) this.current = null;
    this.startNext();
  }
}
