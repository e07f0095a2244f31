/**
 * The crawler: one crawl loop for every engine (ARCHITECTURE.md, idea 5; docs/crawler.md). It decides what
 * to load and in which order, and what the answers mean; a page loader (./loaders/) only loads, over HTTP or
 * in a browser. Categories, pagination, detail pages, the page budget, dedupe of pages, caps, progress,
 * warnings and error codes exist here once, so the same config gives the same rows on either loader.
 *
 * A run (docs/config-language.md, "How a run crawls"):
 * [categories: the index page, its category links] -> for each listing (the target, or each category in
 * turn): its first page -> [actions, on the run's first page] -> items -> the next step (a URL from
 * url_pattern or from a pagination link, or in a browser a click on a control that is not a link, a
 * scroll) -> … ; each item's detail page (its first link field) is queued as its listing page is read, and
 * detail pages load while the listing goes on, `concurrency` pages at a time in all.
 * Rows keep listing, page and item order whatever order pages finish in.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { CodedError, isCodedError } from '../errors.ts';
import { BrowserRequiredError, type FieldSpec, type ScrapeConfig } from './config.ts';
import { absoluteUrl, categoryLinks, compileFields, documentBase, extractDetail, extractItems, loadHtml, type CategoryLink, type CompiledField, type Row } from './extract.ts';
import { finalizeRows } from './output.ts';
import { sleep } from '../sleep.ts';
import { RequestQueue, pageKey, type CrawlRequest, type Listing } from './request-queue.ts';
import { pagerControl } from './pager.ts';
import { LOAD_FAILURE_CODES, type CapturedResponse, type LoadedDocument, type PageLoader, type PageSession, type ReadyCondition } from './loaders/page-loader.ts';
import type { EvalField, EvalOutcome, ItemQuery } from './browser/in-page.ts';

/** Progress of a run, reported as it goes. */
export interface RunProgress {
  /** 0-99 while running; never goes down. */
  progress: number;
  pagesScraped: number;
  itemsFound: number;
  message: string;
}

/** Options of {@link crawl}. */
export interface CrawlOptions {
  /** Pages loaded at once, all kinds together (a browser tab each). @default 4 */
  concurrency?: number;
  /** Most pages one run may load, all kinds together (docs/limits.md). @default 1000 */
  maxPages?: number;
  /** Aborts the run: loads stop and the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called after each page; cheap to call often (the caller throttles writes). */
  onProgress?: (p: RunProgress) => void;
  /**
   * Ends the run early and gracefully (the extension's stop button): once it fires no page starts, the pages
   * in flight finish, detail pages not loaded give their fields' defaults, and the run resolves with the rows
   * read so far and the warning "stopped by the user after N pages". Unlike `signal`, nothing is thrown.
   */
  stopSignal?: AbortSignal;
}

/** What a run produced. */
export interface CrawlResult {
  /** Rows after `output` (deduplicate, limit). */
  rows: Row[];
  /** Documents loaded and read (listing pages and in-page steps, detail pages, the categories' index page). */
  pagesScraped: number;
  /** Items kept from listing pages (before `output`). */
  itemsFound: number;
  /** Problems that did not fail the run (a detail page that 404ed, the page limit reached, …). */
  warnings: string[];
  engine: 'lightweight' | 'heavy';
  /** Whether an XHR/fetch JSON answer of the pages carried most rows' values (browser). */
  apiDiscovered: boolean;
  /** XHR/fetch JSON answers seen (browser; at most 50 kept). */
  apiCapture: CapturedResponse[];
}

/** Pages kept per run at most (docs/limits.md). */
const DEFAULT_MAX_PAGES = 1000;
/** Longest wait for content the config did not name a wait for (ms). */
const IMPLICIT_WAIT_MS = 5000;
/** Content types read as HTML (a server that calls its pages text/plain or XML still serves markup). */
const HTML_TYPES = /^(text\/html|application\/xhtml\+xml|text\/plain|application\/xml|text\/xml|)$/;
const MAX_WARNINGS = 200;

/**
 * Runs a validated config with a page loader.
 * @returns rows after `output`, with counts and warnings.
 * @throws CodedError for the run's first page: `target_forbidden`, `dns_failed`, `response_too_large`,
 *   `target_failed` (4xx/5xx, not HTML, or not reachable); `browser_required` (over HTTP, a config or a
 *   pagination control that needs a browser); `action_failed`, `page_crashed`, `browser_crashed` (browser);
 *   the signal's reason when aborted. Later pages that fail are warnings: the rows already read are kept.
 */
export async function crawl(config: ScrapeConfig, loader: PageLoader, options: CrawlOptions = {}): Promise<CrawlResult> {
  return new Crawler(config, loader, options).run();
}

function evalFieldsOf(fields: readonly FieldSpec[]): EvalField[] {
  return fields.filter((f) => f.type === 'eval').map((f) => ({ name: f.name, script: f.script!, ...(f.selector ? { selector: f.selector } : {}) }));
}

function messageOf(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).split('\n')[0]!;
}

/** A failure of one page that leaves the run going (warning), as opposed to one that ends it. */
function isLoadFailure(err: unknown): boolean {
  return isCodedError(err) && LOAD_FAILURE_CODES.has(err.code);
}

/** Wakes workers waiting for work. */
class Signal {
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

class Crawler {
  private readonly config: ScrapeConfig;
  private readonly loader: PageLoader;
  private readonly fields: CompiledField[];
  private readonly detailFields: CompiledField[];
  private readonly evalFields: EvalField[];
  private readonly detailEvalFields: EvalField[];
  private readonly linkField: string | undefined;
  private readonly query: ItemQuery;
  private readonly concurrency: number;
  /** The page budget; lowered to the pages started when the run is stopped (stopSignal). */
  private maxPages: number;
  private stoppedByUser = false;
  private readonly stopSignal: AbortSignal | undefined;
  private readonly perListingPages: number;
  /** Without deduplication, output.limit is reached as soon as that many items are kept. */
  private readonly totalItemCap: number | undefined;
  private readonly onProgress: CrawlOptions['onProgress'];

  private readonly queue = new RequestQueue();
  private readonly listings: Listing[] = [];
  /** Detail rows by page key (null: the page gave nothing; its fields take their defaults). */
  private readonly details = new Map<string, Row | null>();
  /** Warnings with the sequence number of the request they are about (page-limit and loader ones last). */
  private readonly warnings: Array<{ seq: number; message: string }> = [];
  private readonly warned = new Set<string>();
  private readonly changed = new Signal();
  /** Aborted by the caller's signal, or by the run itself when it fails, to stop the loads in flight. */
  private readonly controller = new AbortController();
  private readonly signal: AbortSignal;

  private current: Listing | null = null;
  private pendingCategories: CategoryLink[] = [];
  private indexDoc: LoadedDocument | null = null;
  /** Whether the listing tab still shows the index page (browser). */
  private tabAtIndex = false;
  private listingSessionPromise: Promise<PageSession> | null = null;
  private readonly detailSessions = new Map<number, Promise<PageSession>>();
  private inFlight = 0;
  private listingInFlight = 0;
  private failure: { error: unknown } | null = null;
  /** True once output.limit or the page limit stops every listing. */
  private stopped = false;

  private pagesStarted = 0;
  private pagesScraped = 0;
  private itemsFound = 0;
  private listingStepsDone = 0;
  /** Listing steps expected in all (max_pages per listing until a listing ends), for progress. */
  private listingPlanned: number;
  private indexPages = 0;
  private lastProgress = 0;

  constructor(config: ScrapeConfig, loader: PageLoader, o: CrawlOptions) {
    this.config = config;
    this.loader = loader;
    this.fields = compileFields(config.extract.fields);
    this.detailFields = config.detail_fields ? compileFields(config.detail_fields.fields) : [];
    this.evalFields = evalFieldsOf(config.extract.fields);
    this.detailEvalFields = config.detail_fields ? evalFieldsOf(config.detail_fields.fields) : [];
    this.linkField = config.detail_fields ? config.extract.fields.find((f) => f.type === 'link' && !f.multiple)?.name : undefined;
    this.query = { type: config.extract.type, ...(config.extract.container ? { container: config.extract.container } : {}) };
    this.concurrency = Math.max(1, o.concurrency ?? 4);
    this.maxPages = o.maxPages ?? DEFAULT_MAX_PAGES;
    this.perListingPages = config.pagination ? config.pagination.max_pages : 1;
    this.totalItemCap = config.output.deduplicate ? undefined : config.output.limit;
    this.onProgress = o.onProgress;
    this.signal = o.signal ? AbortSignal.any([o.signal, this.controller.signal]) : this.controller.signal;
    this.stopSignal = o.stopSignal;
    this.listingPlanned = this.perListingPages;
  }

  async run(): Promise<CrawlResult> {
    const c = this.config;
    if (this.signal.aborted) throw this.signal.reason;
    if (c.categories) {
      this.queue.add({ label: 'index', url: c.target.url, uniqueKey: pageKey(c.target.url) }, 0);
    } else {
      this.startListing({}, c.target.url);
    }
    const onStop = () => {
      this.stoppedByUser = true;
      this.maxPages = Math.min(this.maxPages, this.pagesStarted);
      this.changed.notify();
    };
    if (this.stopSignal?.aborted) onStop();
    else this.stopSignal?.addEventListener('abort', onStop, { once: true });
    const workers = Array.from({ length: this.concurrency }, (_, i) => this.worker(i));
    const onAbort = () => this.fail(this.signal.reason);
    this.signal.addEventListener('abort', onAbort, { once: true });
    try {
      // The first failure ends the run at once: loads still in flight are aborted, not awaited.
      await Promise.race([Promise.all(workers), this.failed()]);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
      this.stopSignal?.removeEventListener('abort', onStop);
      void Promise.allSettled(workers).then(() => this.closeSessions());
    }
    return this.result();
  }

  private failedPromise: Promise<never> | null = null;
  private rejectFailed: ((e: unknown) => void) | null = null;
  private failed(): Promise<never> {
    this.failedPromise ??= new Promise<never>((_, reject) => { this.rejectFailed = reject; });
    if (this.failure) this.rejectFailed!(this.failure.error);
    return this.failedPromise;
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    this.rejectFailed?.(error);
    if (!this.controller.signal.aborted) this.controller.abort(error);
    this.changed.notify();
  }

  private async closeSessions(): Promise<void> {
    const sessions = await Promise.allSettled([this.listingSessionPromise, ...this.detailSessions.values()]);
    const seen = new Set<PageSession>();
    for (const s of sessions) {
      if (s.status !== 'fulfilled' || !s.value || seen.has(s.value)) continue;
      seen.add(s.value);
      await s.value.close().catch(() => undefined);
    }
  }

  // ---- scheduling ----------------------------------------------------------------------------------------

  private async worker(index: number): Promise<void> {
    for (;;) {
      const next = this.take();
      if (next === 'done') return;
      if (next === 'wait') {
        await this.changed.wait();
        continue;
      }
      this.inFlight++;
      const isListing = next.label !== 'detail';
      if (isListing) this.listingInFlight++;
      try {
        if (next.label === 'detail') await this.handleDetail(next, index);
        else if (next.label === 'index') await this.handleIndex(next);
        else await this.handleListing(next);
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
  private listingWorkLeft(): boolean {
    return this.queue.size(0) > 0 || this.listingInFlight > 0 || (!this.stopped && this.pendingCategories.length > 0);
  }

  /** Pages still reserved for listings: the listing pages have first claim on the page budget. */
  private reservedForListings(): number {
    let r = this.current?.open ? Math.max(0, this.perListingPages - this.current.reserved) : 0;
    if (!this.stopped) r += this.pendingCategories.length * this.perListingPages;
    return r;
  }

  /**
   * The next request a worker may take: listing requests first; a detail page when the budget has room beyond
   * the pages the listings may still need; 'wait' while listings may still free or use the budget.
   */
  private take(): CrawlRequest | 'wait' | 'done' {
    for (;;) {
      if (this.failure) return 'done';
      const listing = this.queue.shift(0);
      if (listing) return listing;
      if (this.queue.size(1) > 0) {
        const listingsLeft = this.listingWorkLeft();
        const room = this.pagesStarted + (listingsLeft ? this.reservedForListings() : 0) < this.maxPages;
        if (room) {
          this.pagesStarted++;
          return this.queue.shift(1)!;
        }
        if (!listingsLeft) {
          // The page limit is spent: the remaining detail pages give their fields' defaults.
          this.warnPageLimit();
          for (let r = this.queue.shift(1); r; r = this.queue.shift(1)) this.details.set(pageKey(r.url!), null);
          continue;
        }
        return 'wait';
      }
      return this.inFlight === 0 ? 'done' : 'wait';
    }
  }

  /** Takes a slot of the page budget for a listing step. */
  private reserve(listing?: Listing): boolean {
    if (this.pagesStarted >= this.maxPages) {
      this.warnPageLimit();
      this.stopped = true;
      return false;
    }
    this.pagesStarted++;
    if (listing) listing.reserved++;
    return true;
  }

  private warnPageLimit(): void {
    if (this.stoppedByUser) return this.warn(`stopped by the user after ${this.pagesStarted} page(s)`);
    this.warn(`stopped at the page limit of ${this.maxPages} pages per run`);
  }

  private warn(message: string, seq = Number.MAX_SAFE_INTEGER): void {
    if (this.warned.has(message) || this.warnings.length >= MAX_WARNINGS) return;
    this.warned.add(message);
    this.warnings.push({ seq, message });
  }

  private listingSession(): Promise<PageSession> {
    this.listingSessionPromise ??= this.loader.openSession();
    return this.listingSessionPromise;
  }

  private detailSession(worker: number): Promise<PageSession> {
    let s = this.detailSessions.get(worker);
    if (!s) {
      s = this.loader.openSession();
      this.detailSessions.set(worker, s);
    }
    return s;
  }

  // ---- readiness (browser) -------------------------------------------------------------------------------

  private implicit(selector: string | undefined): ReadyCondition | undefined {
    if (!selector) return undefined;
    return { selector, timeoutMs: Math.min(this.config.target.browser.timeout, IMPLICIT_WAIT_MS), explicit: false };
  }

  /** A listing page is ready when the config's wait_selector is there, else its items (or first field). */
  private listingReady(): ReadyCondition | undefined {
    const b = this.config.target.browser;
    if (b.wait_selector) return { selector: b.wait_selector, timeoutMs: b.timeout, explicit: true };
    const ex = this.config.extract;
    if (ex.container) return this.implicit(ex.container);
    return this.implicit(this.firstWaitableSelector(ex.fields));
  }

  private indexReady(): ReadyCondition | undefined {
    const b = this.config.target.browser;
    if (b.wait_selector) return { selector: b.wait_selector, timeoutMs: b.timeout, explicit: true };
    const cat = this.config.categories!;
    return this.implicit(cat.container ? `${cat.container} ${cat.link_selector}` : cat.link_selector);
  }

  /** A detail page is ready when its first field's element is there: scripts may render it after load. */
  private detailReady(): ReadyCondition | undefined {
    return this.implicit(this.firstWaitableSelector(this.config.detail_fields?.fields ?? []));
  }

  private firstWaitableSelector(fields: readonly FieldSpec[]): string | undefined {
    return fields.find((f) => f.selector && f.type !== 'eval' && f.type !== 'exists' && f.type !== 'count')?.selector;
  }

  // ---- pages ---------------------------------------------------------------------------------------------

  /**
   * The run's first page failed: the job fails with the reason as the HTTP loader and the browser both name it.
   */
  private firstPageError(err: unknown, url: string): unknown {
    if (!isCodedError(err) || err.code !== 'fetch_failed') return err;
    return new CodedError('target_failed', `${url} could not be loaded: ${messageOf(err)}`, [{ url }]);
  }

  /** Why a loaded document cannot be read, or null when it can. */
  private unreadable(doc: LoadedDocument): { message: string; status?: number; contentType?: string } | null {
    if (doc.status >= 400) return { message: `${doc.requestedUrl} answered HTTP ${doc.status}`, status: doc.status };
    if (!HTML_TYPES.test(doc.contentType)) return { message: `${doc.requestedUrl} is ${doc.contentType}, not an HTML page`, contentType: doc.contentType };
    return null;
  }

  /** Loads the run's first page (the target, or the categories' index): any failure fails the run. */
  private async loadFirst(session: PageSession, url: string, ready: ReadyCondition | undefined): Promise<LoadedDocument> {
    let doc: LoadedDocument;
    try {
      doc = await session.load(url, { ready, signal: this.signal });
    } catch (err) {
      throw this.firstPageError(err, url);
    }
    const bad = this.unreadable(doc);
    if (bad) throw new CodedError('target_failed', bad.message, [{ url, ...(bad.status ? { status: bad.status } : {}), ...(bad.contentType !== undefined ? { content_type: bad.contentType } : {}) }]);
    this.noteWait(doc);
    return doc;
  }

  private noteWait(doc: LoadedDocument, seq?: number): void {
    if (doc.waitTimedOut) this.warn(`target.browser.wait_selector "${doc.waitTimedOut.selector}" did not appear within ${doc.waitTimedOut.timeoutMs} ms on ${doc.url}`, seq);
  }

  private async handleIndex(req: CrawlRequest): Promise<void> {
    const url = req.url!;
    this.reserve();
    this.indexPages = 1;
    const session = await this.listingSession();
    let doc = await this.loadFirst(session, url, this.indexReady());
    this.pagesScraped++;
    this.queue.markSeen(pageKey(doc.url));
    if (this.config.actions.length && session.browser) {
      await session.browser.runActions(this.config.actions);
      doc = await session.browser.current();
    }
    this.indexDoc = doc;
    this.tabAtIndex = true;
    const $ = loadHtml(doc.html);
    const categories = categoryLinks($, this.config.categories!, documentBase($, doc.url, doc.html));
    if (!categories.length) {
      const c = this.config.categories!;
      this.warn(`categories: no category links matched "${c.container ? `${c.container} ${c.link_selector}` : c.link_selector}" on ${doc.url}`);
    }
    this.pendingCategories = categories;
    this.listingPlanned = categories.length * this.perListingPages;
    this.report(`found ${categories.length} categories`);
    this.startNextCategory();
  }

  /** Starts a listing: its first page is queued (or reuses the index page when it is that page). */
  private startListing(meta: Row, url: string): void {
    const listing: Listing = { id: this.listings.length, meta, start: url, pages: [], items: 0, reserved: 0, open: true };
    this.listings.push(listing);
    this.current = listing;
    const key = pageKey(url);
    const index = this.indexDoc;
    const isIndex = index && (key === pageKey(index.requestedUrl) || key === pageKey(index.url));
    const req: CrawlRequest = { label: 'listing', url, uniqueKey: isIndex ? `${key}#listing` : key, listing, index: 0, ...(isIndex ? { reuse: index } : {}) };
    if (!this.queue.add(req, 0)) {
      this.warn(`category ${url}: its page was crawled already (as a page of an earlier listing); skipped`);
      this.endListing(listing, -1);
    }
  }

  private startNextCategory(): void {
    if (this.stopped) {
      this.pendingCategories = [];
      return;
    }
    const next = this.pendingCategories.shift();
    if (next) this.startListing({ _category: next.name, _category_url: next.url }, next.url);
  }

  /** A listing ends (last page, error, limit, loop): its unused budget is freed and the next category starts. */
  private endListing(listing: Listing, lastIndex: number): void {
    if (!listing.open) return;
    listing.open = false;
    this.listingPlanned = Math.max(this.listingStepsDone, this.listingPlanned - (this.perListingPages - (lastIndex + 1)));
    if (this.current === listing) this.current = null;
    this.startNextCategory();
  }

  private totalItems(): number {
    let n = 0;
    for (const l of this.listings) n += l.items;
    return n;
  }

  private async handleListing(req: CrawlRequest): Promise<void> {
    const c = this.config;
    const listing = req.listing!;
    const index = req.index!;
    const isTarget = !c.categories && index === 0;
    const where = req.url ?? listing.start;
    const session = await this.listingSession();
    let doc: LoadedDocument;
    let start = 0;
    if (req.reuse) {
      // The category is the index page itself: read again, neither loaded nor counted again (a browser tab that
      // has moved on loads it again, still uncounted, so that in-page steps and eval fields act on it).
      doc = session.browser && !this.tabAtIndex ? await session.load(req.url!, { ready: this.listingReady(), signal: this.signal }) : req.reuse;
      listing.reserved++;
    } else {
      if (!this.reserve(listing)) {
        this.endListing(listing, index - 1);
        return;
      }
      // The pause between a page and the next step (pagination.wait_after; categories.wait_after before each
      // category), before the request, so a server sees the requests spaced out; a browser's pages then wait
      // for their content through the ready condition. Infinite scroll uses wait_after as its wait for more.
      const wait = index === 0 ? (c.categories ? c.categories.wait_after : 0) : req.step === 'scroll' ? 0 : c.pagination!.wait_after;
      if (wait > 0) await sleep(wait, this.signal);
      if (req.step) {
        const b = session.browser!;
        const p = c.pagination!;
        const waitMs = p.type === 'scroll_infinite' ? p.wait_after || 2000 : Math.max(3000, p.wait_after);
        const step = await b.step(req.step, p.selector, this.query, waitMs, this.listingReady());
        if (step.outcome === 'end') {
          // Nothing changed: no page was loaded, the slot goes back.
          this.pagesStarted--;
          listing.reserved--;
          this.endListing(listing, index - 1);
          return;
        }
        doc = await b.current();
        // A click that navigated may stay at the same URL (a form posted back): no dedupe by URL here.
        if (step.outcome === 'more') start = step.before;
      } else if (isTarget) {
        doc = await this.loadFirst(session, req.url!, this.listingReady());
      } else {
        try {
          doc = await session.load(req.url!, { ready: this.listingReady(), signal: this.signal });
        } catch (err) {
          if (!isLoadFailure(err) || this.signal.aborted) throw err;
          this.warn(`${index === 0 ? 'category' : 'listing page'} ${req.url}: ${messageOf(err)}`, req.seq);
          this.endListing(listing, index - 1);
          return;
        }
        const bad = this.unreadable(doc);
        if (bad) {
          this.warn(`${index === 0 ? 'category' : 'listing page'} ${req.url}: ${bad.message}`, req.seq);
          this.endListing(listing, index - 1);
          return;
        }
        this.noteWait(doc, req.seq);
        if (index > 0 && pageKey(doc.url) !== pageKey(req.url!) && this.queue.has(pageKey(doc.url))) {
          // Out-of-range pages are often redirected back to page 1: its rows are already in.
          this.pagesScraped++;
          this.warn(`listing page ${req.url} redirected to ${doc.url}, already crawled; the listing ends there`, req.seq);
          this.endListing(listing, index - 1);
          return;
        }
      }
      this.pagesScraped++;
    }
    this.queue.markSeen(pageKey(doc.url));
    this.tabAtIndex = false;

    if (isTarget && c.actions.length && session.browser) {
      await session.browser.runActions(c.actions);
      doc = await session.browser.current();
    }
    const $ = loadHtml(doc.html);
    const base = documentBase($, doc.url, doc.html);
    let rows = extractItems($, c.extract, this.fields, doc.url, base).slice(start);
    if (this.evalFields.length && rows.length && session.browser) {
      this.mergeEval(rows, await session.browser.evalFields(this.query, this.evalFields, start), this.evalFields, c.extract.fields);
    }
    const maxItems = c.pagination?.stop_condition.max_items;
    if (maxItems !== undefined && listing.items + rows.length > maxItems) rows = rows.slice(0, Math.max(0, maxItems - listing.items));
    if (this.totalItemCap !== undefined) {
      const room = this.totalItemCap - this.totalItems();
      if (rows.length > room) rows = rows.slice(0, Math.max(0, room));
    }
    listing.pages[index] = rows;
    listing.items += rows.length;
    this.itemsFound += rows.length;
    this.listingStepsDone++;

    // The next step first, so the listing moves on while this page's detail pages load.
    const capped = (maxItems !== undefined && listing.items >= maxItems) || (this.totalItemCap !== undefined && this.totalItems() >= this.totalItemCap);
    if (this.totalItemCap !== undefined && this.totalItems() >= this.totalItemCap) this.stopped = true;
    const next = capped ? null : this.nextStep($, doc, base, listing, index, rows.length, Boolean(session.browser), req.seq);
    if (next?.url !== undefined) {
      const key = pageKey(next.url);
      if (this.queue.has(key) || !this.queue.add({ label: 'listing', url: next.url, uniqueKey: key, listing, index: index + 1 }, 0)) this.endListing(listing, index);
    } else if (next?.step) {
      this.queue.add({ label: 'listing', url: null, uniqueKey: `${listing.id}#step${index + 1}`, listing, index: index + 1, step: next.step }, 0);
    } else {
      this.endListing(listing, index);
    }
    this.queueDetails(rows);
    this.report(`page ${index + 1}${listing.meta._category ? ` of category "${String(listing.meta._category)}"` : ''}: ${rows.length} items`);
  }

  /**
   * The next step of a listing: a URL (url_pattern; a pagination control that is a link), an in-page step
   * (a browser clicks a control that is not a link, or scrolls), or null at the end of the listing.
   * @throws BrowserRequiredError over HTTP when the first page's control is not a link.
   */
  private nextStep($: CheerioAPI, doc: LoadedDocument, base: string, listing: Listing, index: number, itemsOnPage: number, browser: boolean, seq?: number): { url: string } | { step: 'click' | 'scroll'; url?: undefined } | null {
    const p = this.config.pagination;
    if (!p || index + 1 >= p.max_pages || this.stopped) return null;
    if (p.type === 'scroll_infinite') return itemsOnPage || index === 0 ? { step: 'scroll' } : null;
    if (p.type === 'url') {
      // An empty page ends a numbered listing: there is nothing after it.
      if (itemsOnPage === 0) return null;
      // Relative to the listing's first page, so "page/{page}/" pages each category, not the target again.
      const url = absoluteUrl(p.url_pattern!.replaceAll('{page}', String(index + 2)), listing.start);
      return url ? { url } : null;
    }
    const control = pagerControl($, p.selector!, base);
    if (control.kind === 'none' || control.kind === 'disabled') return null;
    if (control.kind === 'link') return { url: control.url };
    if (browser) return { step: 'click' };
    const tag = control.tag;
    if (index > 0) {
      // Rows are already in: a control that stopped being a link (href="#") ends the listing.
      this.warn(`pagination: on ${doc.url} "${p.selector}" is a <${tag}> without a usable href; the listing ends there`, seq);
      return null;
    }
    throw new BrowserRequiredError(
      `pagination.selector "${p.selector}" matches a <${tag}> that is not a link; clicking it needs a browser: set target.engine to heavy or auto`,
      [{ path: 'pagination.selector', reason: `matches <${tag}> without href on ${doc.url}` }],
    );
  }

  private queueDetails(rows: Row[]): void {
    if (!this.linkField) return;
    let added = false;
    for (const row of rows) {
      const url = row[this.linkField];
      if (typeof url !== 'string' || !/^https?:/i.test(url)) continue;
      const key = pageKey(url);
      if (this.queue.add({ label: 'detail', url, uniqueKey: `detail:${key}` }, 1)) added = true;
    }
    if (added) this.changed.notify();
  }

  private async handleDetail(req: CrawlRequest, worker: number): Promise<void> {
    const url = req.url!;
    const key = pageKey(url);
    const session = await this.detailSession(worker);
    let doc: LoadedDocument;
    try {
      doc = await session.load(url, { ready: this.detailReady(), signal: this.signal });
    } catch (err) {
      if (!isLoadFailure(err) || this.signal.aborted) throw err;
      this.warn(`detail page ${url}: ${messageOf(err)}`, req.seq);
      this.details.set(key, null);
      this.report('');
      return;
    }
    const bad = this.unreadable(doc);
    if (bad) {
      this.warn(`detail page ${url}: ${bad.message}`, req.seq);
      this.details.set(key, null);
      this.report('');
      return;
    }
    this.pagesScraped++;
    const $ = loadHtml(doc.html);
    const row = extractDetail($, this.detailFields, doc.url, documentBase($, doc.url, doc.html));
    if (this.detailEvalFields.length && session.browser) {
      this.mergeEval([row], await session.browser.evalFields({ type: 'single' }, this.detailEvalFields, 0), this.detailEvalFields, this.config.detail_fields!.fields);
    }
    this.details.set(key, row);
    this.report('');
  }

  /** Puts the values `eval` fields got in the page into the rows, through the fields' transforms. */
  private mergeEval(rows: Row[], outcomes: EvalOutcome[][], evalFields: EvalField[], specs: readonly FieldSpec[]): void {
    if (outcomes.length !== rows.length) this.warn(`eval fields: the page has ${outcomes.length} items where the HTML had ${rows.length}; values matched by position`);
    const compiled = evalFields.map((f) => compileFields([specs.find((s) => s.name === f.name)!])[0]!);
    rows.forEach((row, i) => evalFields.forEach((f, j) => {
      const spec = compiled[j]!.spec;
      const out = outcomes[i]?.[j];
      if (out?.ok) {
        let v = out.value;
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null) {
          for (const t of compiled[j]!.transforms) v = t(v as string | number | boolean | null);
        }
        row[f.name] = v === null || v === undefined || v === '' ? ('default' in spec ? spec.default : null) : v;
      } else {
        row[f.name] = 'default' in spec ? spec.default : null;
        this.warn(`eval field "${f.name}": ${out ? out.error : 'no matching item in the page'}`);
      }
    }));
  }

  // ---- result --------------------------------------------------------------------------------------------

  private result(): CrawlResult {
    const collected: Row[] = [];
    const detailSpecs = this.config.detail_fields?.fields ?? [];
    for (const l of this.listings) {
      const hasMeta = l.meta._category_url !== undefined;
      for (const page of l.pages) {
        for (const row of page ?? []) {
          if (!detailSpecs.length && !hasMeta) {
            collected.push(row);
            continue;
          }
          const merged: Row = { ...row };
          if (detailSpecs.length) {
            const url = this.linkField ? row[this.linkField] : undefined;
            const d = typeof url === 'string' ? this.details.get(pageKey(url)) ?? null : null;
            for (const f of detailSpecs) merged[f.name] = d ? d[f.name] : 'default' in f ? f.default : null;
          }
          // Category metadata stays last, after the detail fields.
          if (hasMeta) Object.assign(merged, l.meta);
          collected.push(merged);
        }
      }
    }
    const rows = finalizeRows(collected, this.config.output);
    for (const w of this.loader.warnings()) this.warn(w);
    const warnings = this.warnings.sort((a, b) => a.seq - b.seq).map((w) => w.message);
    const capture = this.loader.apiCapture();
    this.report('done', 99);
    return {
      rows,
      pagesScraped: this.pagesScraped,
      itemsFound: this.itemsFound,
      warnings,
      engine: this.loader.engine,
      apiDiscovered: apiCarriesItems(rows, capture.values),
      apiCapture: capture.responses,
    };
  }

  private report(message: string, force?: number): void {
    if (!this.onProgress) return;
    // Detail pages per listing step are estimated from the listing steps seen so far.
    const detailsPerStep = this.detailFields.length && this.listingStepsDone ? this.itemsFound / this.listingStepsDone : 0;
    const expected = Math.max(this.indexPages + this.listingPlanned * (1 + detailsPerStep), this.pagesStarted, 1);
    const ratio = force !== undefined ? force : Math.floor((99 * this.pagesScraped) / expected);
    this.lastProgress = Math.max(this.lastProgress, Math.min(99, ratio));
    this.onProgress({
      progress: this.lastProgress,
      pagesScraped: this.pagesScraped,
      itemsFound: this.itemsFound,
      message: message || `${this.pagesScraped} pages, ${this.itemsFound} items`,
    });
  }
}

/**
 * True when most of the first rows have a value that an XHR/fetch JSON answer carried: the page's data API. The
 * loader keeps the first answers only, which carry the first pages' rows.
 */
function apiCarriesItems(all: Row[], values: ReadonlySet<string>): boolean {
  const rows = all.slice(0, 20);
  if (!rows.length || !values.size) return false;
  const hits = rows.filter((r) => Object.values(r).some((v) => (typeof v === 'string' || typeof v === 'number') && String(v).trim().length >= 3 && values.has(String(v).trim())));
  return hits.length / rows.length >= 0.5;
}
