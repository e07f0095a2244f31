/**
 * The public shapes of a crawl (lambdas/engine/crawler.ts re-exports them): its options, its progress reports and
 * its result. Types only, so that every part of the crawler can name them without importing another part.
 */
import type { Row } from '../extract.ts';
import type { CapturedResponse } from '../loaders/page-loader.ts';
import type { SiteAccess } from './access.ts';
import type { PageReaders } from './page-reader.ts';

/** Progress of a run, reported as it goes. */
export interface RunProgress {
  /** 0-99 while running; never goes down. */
  progress: number;
  pagesScraped: number;
  itemsFound: number;
  message: string;
}

/** Options of `crawl` (./crawl.ts). */
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
  /**
   * The run's robots.txt and pace (./access.ts), shared with the engine probe; absent: none are kept (the
   * extension's runs on the tab the user has open). runLightweight and runHeavy make one when not given.
   */
  access?: SiteAccess;
  /**
   * Where the run's pages are read into rows (./page-reader.ts): the local service's reader threads
   * (lambdas/adapters/local/reader-pool.ts); absent: on the calling thread.
   */
  readers?: PageReaders;
}

/**
 * The pages a run loaded and read, by kind (docs/crawler.md, "What pages_scraped counts"): each listing page and each
 * in-page pagination step (a click or a scroll that showed more), each detail page, the categories' index page.
 * Pages that failed (no answer, an error status, not a document) are warnings, not counted.
 */
export interface PageCounts {
  listing: number;
  detail: number;
  index: number;
}

/** What a run produced. */
export interface CrawlResult {
  /** Rows after `output` (deduplicate, limit). */
  rows: Row[];
  /** Documents loaded and read (listing pages and in-page steps, detail pages, the categories' index page): the sum of {@link pageCounts}. */
  pagesScraped: number;
  /** {@link pagesScraped} by kind. */
  pageCounts: PageCounts;
  /** Items kept from listing pages (before `output`). */
  itemsFound: number;
  /** Problems that did not fail the run (a detail page that 404ed, the page limit reached, …). */
  warnings: string[];
  engine: 'lightweight' | 'heavy';
  /** Whether an XHR/fetch JSON answer of the pages carried most rows' values (browser). */
  apiDiscovered: boolean;
  /** XHR/fetch JSON answers seen (browser; at most 50 kept). */
  apiCapture: CapturedResponse[];
  /** The proxy sessions retired and why ("2 proxy session(s) retired (Cloudflare challenge ×2)"); '' when none was. */
  sessionsRetired?: string;
}
