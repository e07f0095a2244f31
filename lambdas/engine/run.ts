/**
 * The lightweight engine: runs a validated config over HTTP and cheerio, with no browser.
 *
 * One run is a small crawl (docs/config-language.md, "How a run crawls"):
 * categories (optional) -> for each listing: its first page, then pagination -> items -> detail pages.
 * Pages are fetched by a priority pool of `concurrency` slots: the next listing page goes before the
 * detail pages of the current one, so the listing chain never waits behind its own detail fetches and
 * the pool stays full. Rows keep the page order whatever order the fetches finish in.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { CodedError } from '../errors.ts';
import { Fetcher, type FetchedPage } from '../net/fetch.ts';
import { OutboundGuard, type GuardOptions } from '../net/guard.ts';
import { assertLightweight, BrowserRequiredError, type ScrapeConfig } from './config.ts';
import { absoluteUrl, categoryLinks, compileFields, documentBase, extractDetail, extractItems, loadHtml, type CompiledField, type Row } from './extract.ts';
import { finalizeRows } from './output.ts';
import { sleep } from '../sleep.ts';

export { assertLightweight, BrowserRequiredError };

/** Progress of a run, reported as it goes. */
export interface RunProgress {
  /** 0-99 while running; never goes down. */
  progress: number;
  pagesScraped: number;
  itemsFound: number;
  message: string;
}

/** Options of {@link runConfig}. */
export interface RunOptions {
  /** The HTTP client; when absent one is made from `outbound` and closed at the end. */
  fetcher?: Fetcher;
  /** Guard options for the fetcher made here (ignored with `fetcher`). */
  outbound?: GuardOptions;
  /** Pages fetched at once. @default 4 */
  concurrency?: number;
  /** Most pages one run may fetch, all kinds together. @default 1000 */
  maxPages?: number;
  /** Aborts the run: fetches stop and the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called after each page; cheap to call often (the caller throttles writes). */
  onProgress?: (p: RunProgress) => void;
  /** target.url, already fetched (engine auto probes it): used instead of fetching it again. */
  firstPage?: FetchedPage;
}

/** What a run produced. */
export interface RunResult {
  rows: Row[];
  pagesScraped: number;
  itemsFound: number;
  /** Problems that did not fail the run (a detail page that 404ed, a page limit reached). */
  warnings: string[];
  engine: 'lightweight';
}

/** Pages kept per run at most (docs/limits.md). */
export const DEFAULT_MAX_PAGES = 1000;

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml|text\/plain|application\/xml|text\/xml|)$/;


/** A URL without its fragment: two links that differ only by #part are the same page. */
function pageKey(url: string): string {
  const i = url.indexOf('#');
  return i === -1 ? url : url.slice(0, i);
}

/** Runs async tasks at most `limit` at a time, higher priority first, FIFO within a priority. */
class PriorityPool {
  private readonly queues: Array<Array<() => Promise<void>>> = [[], []];
  private active = 0;
  private failed: unknown = null;
  private idle: { resolve: () => void; reject: (e: unknown) => void } | null = null;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** priority 0 runs before priority 1. */
  push(priority: 0 | 1, task: () => Promise<void>): void {
    this.queues[priority]!.push(task);
    this.pump();
  }

  private pump(): void {
    while (this.active < this.limit && !this.failed) {
      const task = this.queues[0]!.shift() ?? this.queues[1]!.shift();
      if (!task) break;
      this.active++;
      task().then(() => {
        this.active--;
        this.pump();
      }, (err: unknown) => {
        this.active--;
        this.failed ??= err;
        this.settle();
      });
    }
    this.settle();
  }

  private settle(): void {
    if (!this.idle) return;
    if (this.failed) this.idle.reject(this.failed);
    else if (this.active === 0 && !this.queues[0]!.length && !this.queues[1]!.length) this.idle.resolve();
  }

  /** Resolves when every task (including tasks pushed meanwhile) is done; rejects on the first failure. */
  drain(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.idle = { resolve, reject };
      this.settle();
    });
  }
}

/** One listing chain: a category (or the target) with its pages in order. */
interface Listing {
  meta: Row;
  /** The listing's first page: target.url, or the category's URL. A relative url_pattern resolves against it. */
  start: string;
  /** Rows per listing page, in page order. */
  pages: Row[][];
  items: number;
  done: boolean;
}

/**
 * Runs a config with the lightweight engine.
 * @returns rows after `output` (deduplicate, limit), with counts and warnings.
 * @throws BrowserRequiredError for a config that needs a browser (also found at run time: a click
 *   pagination control that is not a link).
 * @throws TargetForbiddenError when the guard refuses the target; FetchError / CodedError `target_failed`
 *   when the first page cannot be fetched or is not HTML; the signal's reason when aborted.
 */
export async function runConfig(config: ScrapeConfig, options: RunOptions = {}): Promise<RunResult> {
  assertLightweight(config);
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const fetcher = options.fetcher ?? new Fetcher(new OutboundGuard(options.outbound), { perHostConcurrency: concurrency });
  try {
    return await new Crawl(config, fetcher, concurrency, options).run();
  } finally {
    if (!options.fetcher) await fetcher.close();
  }
}

class Crawl {
  private readonly config: ScrapeConfig;
  private readonly fetcher: Fetcher;
  private readonly options: RunOptions;
  private readonly fields: CompiledField[];
  private readonly detailFields: CompiledField[];
  private readonly linkField: string | undefined;
  private readonly pool: PriorityPool;
  private readonly seen = new Set<string>();
  private readonly details = new Map<string, Promise<Row | null>>();
  private readonly warnings: string[] = [];
  private readonly listings: Listing[] = [];
  private readonly maxPages: number;
  private readonly totalItemCap: number | undefined;
  private pagesScraped = 0;
  private pagesStarted = 0;
  private itemsFound = 0;
  /** Listing pages expected in all (max_pages per listing until a listing ends), for progress. */
  private listingPlanned = 1;
  private listingDone = 0;
  private extraPages = 0;
  private lastProgress = 0;
  private stopped = false;
  /** With categories, the page they were found on: a category linking back to it is not fetched again. */
  private firstPage: FetchedPage | null = null;
  /** Aborted by the caller's signal, or by the run itself when it fails, to stop the fetches still in flight. */
  private readonly controller = new AbortController();
  private readonly signal: AbortSignal;

  constructor(config: ScrapeConfig, fetcher: Fetcher, concurrency: number, options: RunOptions) {
    this.config = config;
    this.fetcher = fetcher;
    this.options = options;
    this.signal = options.signal ? AbortSignal.any([options.signal, this.controller.signal]) : this.controller.signal;
    this.fields = compileFields(config.extract.fields);
    this.detailFields = config.detail_fields ? compileFields(config.detail_fields.fields) : [];
    this.linkField = config.extract.fields.find((f) => f.type === 'link' && !f.multiple)?.name;
    this.pool = new PriorityPool(concurrency);
    this.maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
    this.firstPage = options.firstPage ?? null;
    // Without deduplication, output.limit is reached as soon as that many items are found.
    this.totalItemCap = config.output.deduplicate ? undefined : config.output.limit;
  }

  async run(): Promise<RunResult> {
    try {
      return await this.crawl();
    } catch (err) {
      // One failure ends the run: the pages still in flight are not waited for.
      this.controller.abort(err);
      throw err;
    }
  }

  private async crawl(): Promise<RunResult> {
    const { config } = this;
    const perListingPages = config.pagination ? config.pagination.max_pages : 1;
    // The target's page is the first of the page limit.
    this.reserve();
    if (config.categories) {
      const first = this.firstPage ? this.accept(this.firstPage, config.target.url) : await this.fetchPage(config.target.url);
      this.firstPage = first;
      this.seen.add(pageKey(config.target.url)).add(pageKey(first.url));
      const $first = loadHtml(first.text);
      const categories = categoryLinks($first, config.categories, documentBase($first, first.url, first.text));
      if (!categories.length) {
        this.warnings.push(`categories: no category links matched "${this.categorySelector()}" on ${first.url}`);
      }
      this.extraPages = 1;
      this.listingPlanned = categories.length * perListingPages;
      this.report(`found ${categories.length} categories`);
      for (const c of categories) {
        // The page limit counts every page: a category's first page too, not only the pages after it.
        if (this.stopped || !this.reserve()) break;
        const listing: Listing = { meta: { _category: c.name, _category_url: c.url }, start: c.url, pages: [], items: 0, done: false };
        this.listings.push(listing);
        this.pool.push(0, () => this.listingPage(listing, c.url, 0, false));
        // Categories are crawled one after the other; wait_after spaces them out.
        await this.pool.drain();
        await sleep(config.categories.wait_after, this.signal);
      }
    } else {
      this.listingPlanned = perListingPages;
      const listing: Listing = { meta: {}, start: config.target.url, pages: [], items: 0, done: false };
      this.listings.push(listing);
      this.pool.push(0, () => this.listingPage(listing, config.target.url, 0, true));
      await this.pool.drain();
    }
    const collected: Row[] = [];
    for (const l of this.listings) for (const page of l.pages) for (const row of page ?? []) collected.push(row);
    const rows = finalizeRows(collected, config.output);
    this.report('done', 99);
    return { rows, pagesScraped: this.pagesScraped, itemsFound: this.itemsFound, warnings: this.warnings, engine: 'lightweight' };
  }

  private categorySelector(): string {
    const c = this.config.categories!;
    return c.container ? `${c.container} ${c.link_selector}` : c.link_selector;
  }

  /** Fetches a page (its slot of the page limit reserved beforehand); a 4xx/5xx answer or a non-HTML body throws. */
  private async fetchPage(url: string): Promise<FetchedPage> {
    return this.accept(await this.fetcher.fetch(url, { signal: this.signal }), url);
  }

  /** Checks a fetched page and counts it as scraped. @throws CodedError `target_failed`. */
  private accept(page: FetchedPage, url: string): FetchedPage {
    if (page.status >= 400) {
      throw new CodedError('target_failed', `${url} answered HTTP ${page.status}`, [{ url, status: page.status }]);
    }
    if (!HTML_TYPES.test(page.contentType)) {
      throw new CodedError('target_failed', `${url} is ${page.contentType}, not an HTML page`, [{ url, content_type: page.contentType }]);
    }
    this.pagesScraped++;
    return page;
  }

  /**
   * Takes a slot of the page limit for a page about to be queued (not when it runs: queued pages would
   * otherwise all see room left and overshoot the limit).
   */
  private reserve(): boolean {
    if (this.pagesStarted < this.maxPages) {
      this.pagesStarted++;
      return true;
    }
    if (!this.stopped) this.warnings.push(`stopped at the page limit of ${this.maxPages} pages per run`);
    this.stopped = true;
    return false;
  }

  /** A listing ends (last page, error, limit, loop): plan no more of its pages, for progress. */
  private endListing(listing: Listing, index: number): void {
    if (listing.done) return;
    listing.done = true;
    const planned = this.config.pagination ? this.config.pagination.max_pages : 1;
    this.listingPlanned = Math.max(this.listingDone, this.listingPlanned - (planned - (index + 1)));
  }

  private totalItems(): number {
    let n = 0;
    for (const l of this.listings) n += l.items;
    return n;
  }

  private async listingPage(listing: Listing, url: string, index: number, isTarget: boolean): Promise<void> {
    const { config } = this;
    this.seen.add(pageKey(url));
    const first = this.firstPage;
    const reuse = first && index === 0 && (pageKey(url) === pageKey(config.target.url) || pageKey(url) === pageKey(first.url)) ? first : null;
    let page: FetchedPage;
    try {
      if (reuse && config.categories) this.pagesStarted--; // the slot reserved for it is not needed: no second fetch
      page = reuse ? (reuse === this.options.firstPage && !config.categories ? this.accept(reuse, url) : reuse) : await this.fetchPage(url);
    } catch (err) {
      if (isTarget && index === 0) throw err;
      if (err instanceof CodedError && err.code === 'target_forbidden') throw err;
      if (this.signal?.aborted) throw err;
      this.warnings.push(`listing page ${url}: ${(err as Error).message}`);
      this.endListing(listing, index - 1);
      return;
    }
    if (index > 0 && pageKey(page.url) !== pageKey(url) && this.seen.has(pageKey(page.url))) {
      // Out-of-range pages are often redirected back to page 1: its rows are already in.
      this.warnings.push(`listing page ${url} redirected to ${page.url}, already crawled; the listing ends there`);
      this.endListing(listing, index - 1);
      return;
    }
    this.seen.add(pageKey(page.url));
    const $ = loadHtml(page.text);
    const base = documentBase($, page.url, page.text);
    let rows = extractItems($, config.extract, this.fields, page.url, base);
    const p = config.pagination;
    const maxItems = p?.stop_condition.max_items;
    if (maxItems !== undefined && listing.items + rows.length > maxItems) rows = rows.slice(0, Math.max(0, maxItems - listing.items));
    if (this.totalItemCap !== undefined) {
      const room = this.totalItemCap - this.totalItems();
      if (rows.length > room) rows = rows.slice(0, Math.max(0, room));
    }
    if (listing.meta._category_url !== undefined) rows = rows.map((r) => ({ ...r, ...listing.meta }));
    listing.pages[index] = rows;
    this.listingDone++;
    listing.items += rows.length;
    this.itemsFound += rows.length;

    // The next listing page first, so the chain keeps moving while this page's details are fetched.
    const next = this.nextPageUrl($, page, base, listing, index, rows.length);
    const capped = (maxItems !== undefined && listing.items >= maxItems)
      || (this.totalItemCap !== undefined && this.totalItems() >= this.totalItemCap);
    if (next && !capped && !this.stopped && !this.seen.has(pageKey(next)) && this.reserve()) {
      const wait = p!.wait_after;
      this.seen.add(pageKey(next));
      this.pool.push(0, async () => {
        await sleep(wait, this.signal);
        await this.listingPage(listing, next, index + 1, false);
      });
    } else {
      this.endListing(listing, index);
    }
    if (this.detailFields.length && this.linkField) {
      rows.forEach((row, i) => this.pool.push(1, () => this.detailFor(listing, index, i, row)));
    }
    this.report(`page ${index + 1}${listing.meta._category ? ` of category "${listing.meta._category}"` : ''}: ${rows.length} items`);
  }

  /** The next listing page's URL, or null at the end of the listing. */
  private nextPageUrl($: CheerioAPI, page: FetchedPage, base: string, listing: Listing, index: number, itemsOnPage: number): string | null {
    const p = this.config.pagination;
    if (!p || index + 1 >= p.max_pages) return null;
    if (p.type === 'url') {
      // An empty page ends a numbered listing: there is nothing after it.
      if (itemsOnPage === 0) return null;
      const pattern = p.url_pattern!.replaceAll('{page}', String(index + 2));
      // Relative to the listing's first page, so "page/{page}/" pages each category, not the target again.
      return absoluteUrl(pattern, listing.start);
    }
    // click: the control must be a link for the lightweight engine to follow it.
    const control = $(p.selector!).first();
    if (!control.length) return null;
    // Pagers often mark the item around the link (Bootstrap 3: <li class="next disabled"><a href="#">),
    // so a disabled ancestor ends the listing too, instead of failing on a control that is not a link.
    if (control.closest('[disabled], .disabled, [aria-disabled="true"]').length) return null;
    const href = control.attr('href') ?? control.find('a[href]').first().attr('href') ?? control.closest('a[href]').attr('href');
    if (href === undefined || /^\s*(#|javascript:)/i.test(href)) {
      const tag = (control.get(0) as { tagName?: string } | undefined)?.tagName ?? 'element';
      if (index > 0) {
        // Rows are already in: a control that stopped being a link (href="#") ends the listing.
        this.warnings.push(`pagination: on ${page.url} "${p.selector}" is a <${tag}> without a usable href; the listing ends there`);
        return null;
      }
      throw new BrowserRequiredError(
        `pagination.selector "${p.selector}" matches a <${tag}> that is not a link; clicking it needs a browser: set target.engine to heavy or auto`,
        [{ path: 'pagination.selector', reason: `matches <${tag}> without href on ${page.url}` }],
      );
    }
    return absoluteUrl(href, base);
  }

  private async detailFor(listing: Listing, pageIndex: number, rowIndex: number, row: Row): Promise<void> {
    const url = row[this.linkField!];
    if (typeof url !== 'string' || !/^https?:/.test(url)) {
      this.mergeDetail(listing, pageIndex, rowIndex, null);
      return;
    }
    const key = pageKey(url);
    let pending = this.details.get(key);
    if (!pending) {
      if (!this.reserve()) {
        this.mergeDetail(listing, pageIndex, rowIndex, null);
        return;
      }
      pending = this.fetchDetail(url);
      this.details.set(key, pending);
    }
    this.mergeDetail(listing, pageIndex, rowIndex, await pending);
  }

  private async fetchDetail(url: string): Promise<Row | null> {
    try {
      const page = await this.fetchPage(url);
      const $ = loadHtml(page.text);
      return extractDetail($, this.detailFields, page.url, documentBase($, page.url, page.text));
    } catch (err) {
      if (this.signal?.aborted) throw err;
      this.warnings.push(`detail page ${url}: ${(err as Error).message}`);
      return null;
    } finally {
      this.report('');
    }
  }

  private mergeDetail(listing: Listing, pageIndex: number, rowIndex: number, detail: Row | null): void {
    const rows = listing.pages[pageIndex]!;
    const merged: Row = { ...rows[rowIndex]! };
    for (const f of this.detailFields) {
      const name = f.spec.name;
      merged[name] = detail ? detail[name] : 'default' in f.spec ? f.spec.default : null;
    }
    // Category metadata stays last, after the detail fields.
    if (listing.meta._category_url !== undefined) Object.assign(merged, listing.meta);
    rows[rowIndex] = merged;
  }

  private report(message: string, force?: number): void {
    if (!this.options.onProgress) return;
    // Detail pages per listing page are estimated from the listing pages seen so far.
    const detailsPerPage = this.detailFields.length && this.listingDone ? this.itemsFound / this.listingDone : 0;
    const expected = Math.max(this.extraPages + this.listingPlanned * (1 + detailsPerPage), this.pagesStarted, 1);
    const ratio = force !== undefined ? force : Math.floor((99 * this.pagesScraped) / expected);
    this.lastProgress = Math.max(this.lastProgress, Math.min(99, ratio));
    this.options.onProgress({
      progress: this.lastProgress,
      pagesScraped: this.pagesScraped,
      itemsFound: this.itemsFound,
      message: message || `${this.pagesScraped} pages, ${this.itemsFound} items`,
    });
  }
}
