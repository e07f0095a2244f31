/**
 * Reading a loaded page into what the run keeps: a listing page's rows and its pagination control, a detail page's
 * row. Reading is a pure function of the config, the page's HTML and its URL ({@link PageReading}), so it can run on
 * another thread than the one that loads pages and keeps the request queue, the budget, the dedupe and the progress
 * (issue 42, item 1; docs/crawler.md, "Reading pages on more than one core"). The crawl asks a {@link PageReader};
 * {@link INLINE_READERS} reads on the calling thread, the local service's reader threads
 * (lambdas/adapters/local/reader-pool.ts) on spare cores. Both give the same rows: the same code reads.
 */
import type { ScrapeConfig } from '../config.ts';
import { compileFields, documentBase, extractDetail, extractItems, loadHtml, releaseDocument, type CompiledField, type Row } from '../extract.ts';
import { pagerControl, type PagerControl } from '../pager.ts';

/** What a listing page gave: its rows (every item, before the item caps), its document base, its pagination control. */
export interface ListingRead {
  rows: Row[];
  /** The document base (../extract.ts `documentBase`): an absolute URL. */
  base: string;
  /** The page's pagination control (../pager.ts), read only for `pagination.type: click`; null otherwise. */
  control: PagerControl | null;
}

/** Reads the pages of one run (one config). */
export interface PageReader {
  /** A listing page's rows and control. @throws what {@link PageReading.listing} throws. */
  readListing(html: string, url: string): Promise<ListingRead>;
  /** A detail page's row (its `detail_fields`). @throws what {@link PageReading.detail} throws. */
  readDetail(html: string, url: string): Promise<Row>;
  /** The run is over: whatever was kept for its config is let go. Reads after this are not allowed. */
  close(): void;
}

/** Where a run's pages are read: one {@link PageReader} per run. */
export interface PageReaders {
  forConfig(config: ScrapeConfig): PageReader;
}

/**
 * The reading of one config, compiled once (the fields' selectors, transforms and patterns): the one implementation
 * every reader runs, on whichever thread.
 */
export class PageReading {
  private readonly config: ScrapeConfig;
  private readonly listingFields: CompiledField[];
  private readonly detailFields: CompiledField[];

  constructor(config: ScrapeConfig) {
    this.config = config;
    this.listingFields = compileFields(config.extract.fields);
    this.detailFields = config.detail_fields ? compileFields(config.detail_fields.fields) : [];
  }

  /**
   * A listing page: parsed as a browser parses it (../extract.ts `loadHtml`, bounded by ../html/), the items of
   * `extract`, the document base, and for `click` pagination the control of `pagination.selector`.
   */
  listing(html: string, url: string): ListingRead {
    const $ = loadHtml(html);
    const base = documentBase($, url, html);
    const rows = extractItems($, this.config.extract, this.listingFields, url, base);
    const p = this.config.pagination;
    const control = p?.type === 'click' ? pagerControl($, p.selector!, base) : null;
    releaseDocument($);
    return { rows, base, control };
  }

  /** A detail page's row: `detail_fields` over the whole document (none: an empty row). */
  detail(html: string, url: string): Row {
    const $ = loadHtml(html);
    const row = extractDetail($, this.detailFields, url, documentBase($, url, html));
    releaseDocument($);
    return row;
  }
}

/** Reads on the calling thread (the extension, Lambda, the CLI, tests; the local service when reader threads are off). */
export const INLINE_READERS: PageReaders = {
  forConfig(config: ScrapeConfig): PageReader {
    const reading = new PageReading(config);
    return {
      readListing: async (html, url) => reading.listing(html, url),
      readDetail: async (html, url) => reading.detail(html, url),
      close() {},
    };
  },
};
