/**
 * Listing pages: one step of a listing (its first page, a next page by URL, or in a browser an in-page click or
 * scroll), read into rows; then the listing's next step is queued (before this page's detail pages, so the listing
 * moves on while they load) and the page's detail pages. Failures of a later page end the listing with a warning;
 * the run's first page failing fails the run. Out-of-range pages redirected to an earlier page end the listing.
 */
import type { ScrapeConfig } from '../config.ts';
import type { EvalField, ItemQuery } from '../browser/in-page.ts';
import type { LoadedDocument } from '../loaders/page-loader.ts';
import { pageKey, type CrawlRequest, type RequestQueue } from '../request-queue.ts';
import { sleep } from '../../sleep.ts';
import type { DetailPages } from './details.ts';
import { isLoadFailure, loadFirst, messageOf, noteWait, pageWarning, unreadable } from './documents.ts';
import { evalFieldsOf, mergeEval } from './eval-fields.ts';
import type { Listings } from './listings.ts';
import type { PageReader } from './page-reader.ts';
import { capsReached, itemCaps, keepWithinCaps, nextStep, pauseBefore, stepWaitMs, type ItemCaps } from './pagination.ts';
import type { ProgressTracker } from './progress.ts';
import { listingReady } from './readiness.ts';
import type { Sessions } from './sessions.ts';
import type { Warnings } from './warnings.ts';

/** What {@link ListingPages} works with. */
export interface ListingPagesDeps {
  queue: RequestQueue;
  sessions: Sessions;
  listings: Listings;
  details: DetailPages;
  /** Reads each page into rows (./page-reader.ts), on this thread or another. */
  reader: PageReader;
  warnings: Warnings;
  progress: ProgressTracker;
  /** The run's abort signal (loads and pauses stop with it). */
  signal: AbortSignal;
}

/**
 * Reads the listing steps of a run.
 *
 * **Example usage:**
 * ```ts
 * const pages = new ListingPages(config, { queue, sessions, listings, details, reader, warnings, progress, signal });
 * await pages.handle(req); // req.label === 'listing'
 * ```
 */
export class ListingPages {
  private readonly evalFields: EvalField[];
  private readonly query: ItemQuery;
  private readonly caps: ItemCaps;

  private readonly config: ScrapeConfig;
  private readonly d: ListingPagesDeps;

  constructor(config: ScrapeConfig, deps: ListingPagesDeps) {
    this.config = config;
    this.d = deps;
    this.evalFields = evalFieldsOf(config.extract.fields);
    this.query = { type: config.extract.type, ...(config.extract.container ? { container: config.extract.container } : {}) };
    this.caps = itemCaps(config);
  }

  /**
   * Takes one listing step: a slot of the page budget (none left: the listing ends), the pause, the load or
   * in-page step, the config's actions on the run's first page (browser), the items and the next step.
   * @throws for the run's first page as `crawl` documents; BrowserRequiredError over HTTP for a first page
   *   whose pagination control is not a link; the loader's fatal errors; the signal's reason.
   */
  async handle(req: CrawlRequest): Promise<void> {
    const c = this.config;
    const { queue, sessions, listings, progress, signal } = this.d;
    const listing = req.listing!;
    const index = req.index!;
    const isTarget = !c.categories && index === 0;
    const session = await sessions.listing();
    const warn = (message: string) => this.d.warnings.add(message, req.seq);
    let doc: LoadedDocument;
    let start = 0;
    if (req.reuse) {
      // The category is the index page itself: read again, neither loaded nor counted again (a browser tab that
      // has moved on loads it again, still uncounted, so that in-page steps and eval fields act on it).
      doc = session.browser && !sessions.listingTabAtIndex ? await session.load(req.url!, { ready: listingReady(c), signal }) : req.reuse;
      listing.reserved++;
    } else {
      if (!listings.reserve(listing)) {
        listings.end(listing, index - 1);
        return;
      }
      // The pause between a page and the next step (pagination.wait_after; categories.wait_after before each
      // category), before the request, so a server sees the requests spaced out; a browser's pages then wait
      // for their content through the ready condition. Infinite scroll uses wait_after as its wait for more.
      const wait = pauseBefore(c, index, req.step);
      if (wait > 0) await sleep(wait, signal);
      if (req.step) {
        const b = session.browser!;
        await sessions.paceStep(listing.start, signal);
        const step = await b.step(req.step, c.pagination!.selector, this.query, stepWaitMs(c.pagination!), listingReady(c));
        if (step.outcome === 'end') {
          // Nothing changed: no page was loaded, the slot goes back.
          listings.giveBack(listing);
          listings.end(listing, index - 1);
          return;
        }
        doc = await b.current();
        // A click that navigated may stay at the same URL (a form posted back): no dedupe by URL here.
        if (step.outcome === 'more') start = step.before;
      } else if (isTarget) {
        doc = await loadFirst(session, req.url!, { ready: listingReady(c), signal, warnings: this.d.warnings });
      } else {
        const what = index === 0 ? 'category' : 'listing page';
        try {
          doc = await session.load(req.url!, { ready: listingReady(c), signal });
        } catch (err) {
          if (!isLoadFailure(err) || signal.aborted) throw err;
          listings.noteFailure(err);
          warn(pageWarning(what, req.url!, messageOf(err)));
          listings.end(listing, index - 1);
          return;
        }
        const bad = unreadable(doc);
        if (bad) {
          warn(pageWarning(what, req.url!, bad.message));
          listings.end(listing, index - 1);
          return;
        }
        noteWait(doc, this.d.warnings, req.seq);
        if (index > 0 && pageKey(doc.url) !== pageKey(req.url!) && queue.has(pageKey(doc.url))) {
          // Out-of-range pages are often redirected back to page 1: its rows are already in.
          progress.pageRead('listing');
          warn(`listing page ${req.url} redirected to ${doc.url}, already crawled; the listing ends there`);
          listings.end(listing, index - 1);
          return;
        }
      }
      progress.pageRead('listing');
    }
    queue.markSeen(pageKey(doc.url));
    sessions.listingTabAtIndex = false;

    if (isTarget && c.actions.length && session.browser) {
      await session.browser.runActions(c.actions);
      doc = await session.browser.current();
    }
    const read = await this.d.reader.readListing(doc.html, doc.url);
    let rows = read.rows.slice(start);
    if (this.evalFields.length && rows.length && session.browser) {
      mergeEval(rows, await session.browser.evalFields(this.query, this.evalFields, start), this.evalFields, c.extract.fields, (m) => this.d.warnings.add(m));
    }
    rows = keepWithinCaps(rows, this.caps, listing.items, listings.totalItems());
    listing.pages[index] = rows;
    listing.items += rows.length;
    progress.listingStepRead(rows.length);

    // The next step first, so the listing moves on while this page's detail pages load.
    const reached = capsReached(this.caps, listing.items, listings.totalItems());
    if (reached.total) listings.stop();
    const next = reached.listing ? null : nextStep(c.pagination, {
      control: read.control, pageUrl: doc.url, start: listing.start, index, itemsOnPage: rows.length, browser: Boolean(session.browser), stopped: listings.stopped,
    }, warn);
    if (next?.url !== undefined) {
      const key = pageKey(next.url);
      if (queue.has(key) || !queue.add({ label: 'listing', url: next.url, uniqueKey: key, listing, index: index + 1 }, 0)) listings.end(listing, index);
    } else if (next?.step) {
      queue.add({ label: 'listing', url: null, uniqueKey: `${listing.id}#step${index + 1}`, listing, index: index + 1, step: next.step }, 0);
    } else {
      listings.end(listing, index);
    }
    this.d.details.enqueue(rows);
    progress.report(`listing page ${index + 1}${listing.meta._category ? ` of category "${String(listing.meta._category)}"` : ''}: ${rows.length} items`);
  }
}
