/**
 * `crawl`: wires the crawler's parts for one run (docs/crawler.md). Each part is a module of this folder:
 * - scheduler.ts: the workers over the request queue (../request-queue.ts), and which request goes next;
 * - budget.ts: the page budget (`maxPages`, the user's stop);
 * - listings.ts: the listings and their order, categories waiting their turn, the budget they hold back;
 * - listing-pages.ts and pagination.ts: one listing step read into rows, and where the listing goes next;
 * - api-pages.ts (../api/): an API config's listing, one JSON request a step;
 * - details.ts (and eval-fields.ts): detail pages;
 * - page-reader.ts: a loaded page read into rows, on this thread or a reader thread (`options.readers`);
 * - categories.ts: the categories' index page;
 * - documents.ts, readiness.ts, sessions.ts: what a loaded page means, when a browser's page is ready, the tabs;
 * - access.ts (robots.ts, pace.ts): robots.txt, the pace per host and the retries of 429/5xx answers, for every load;
 * - progress.ts, warnings.ts, result.ts: the counts and progress, the warnings, the rows.
 */
import type { ScrapeConfig } from '../config.ts';
import { finalizeRows } from '../output.ts';
import type { PageLoader } from '../loaders/page-loader.ts';
import { RequestQueue, pageKey } from '../request-queue.ts';
import { PageBudget } from './budget.ts';
import { IndexPage } from './categories.ts';
import { DetailPages } from './details.ts';
import { ListingPages } from './listing-pages.ts';
import { ApiPages } from './api-pages.ts';
import { Listings } from './listings.ts';
import { INLINE_READERS, type PageReader } from './page-reader.ts';
import { ProgressTracker } from './progress.ts';
import { apiCarriesItems, collectRows } from './result.ts';
import { Scheduler } from './scheduler.ts';
import { Sessions } from './sessions.ts';
import type { CrawlOptions, CrawlResult } from './types.ts';
import { Warnings } from './warnings.ts';

/**
 * Runs a validated config with a page loader.
 * @returns rows after `output`, with counts and warnings.
 * @throws CodedError for the run's first page: `target_forbidden`, `dns_failed`, `response_too_large`,
 *   `target_failed` (4xx/5xx, not HTML, or not reachable); `browser_required` (over HTTP, a config or a
 *   pagination control that needs a browser); `action_failed`, `page_crashed`, `browser_crashed` (browser);
 *   the signal's reason when aborted. Later pages that fail are warnings: the rows already read are kept.
 */
export async function crawl(config: ScrapeConfig, loader: PageLoader, options: CrawlOptions = {}): Promise<CrawlResult> {
  const reader = (options.readers ?? INLINE_READERS).forConfig(config);
  try {
    return await crawlWith(config, loader, options, reader);
  } finally {
    reader.close();
  }
}

/** {@link crawl} with its page reader. */
async function crawlWith(config: ScrapeConfig, loader: PageLoader, options: CrawlOptions, reader: PageReader): Promise<CrawlResult> {
  const perListingPages = config.pagination ? config.pagination.max_pages : 1;
  const queue = new RequestQueue();
  const warnings = new Warnings();
  const budget = new PageBudget(options.maxPages);
  const scheduler = new Scheduler({ concurrency: Math.max(1, options.concurrency ?? 4), queue, budget, warnings, signal: options.signal, stopSignal: options.stopSignal });
  const signal = scheduler.signal;
  const progress = new ProgressTracker({ perListingPages, withDetails: Boolean(config.detail_fields?.fields.length), pagesStarted: () => budget.started, onProgress: options.onProgress });
  const sessions = new Sessions(loader, options.access);
  const listings = new Listings({ perListingPages, queue, budget, warnings, progress });
  const details = new DetailPages(config, { queue, sessions, reader, warnings, progress, signal, wake: () => scheduler.wake(), giveBack: () => budget.giveBack() });
  const listingPages = new ListingPages(config, { queue, sessions, listings, details, reader, warnings, progress, signal });
  const index = new IndexPage(config, { queue, sessions, listings, warnings, progress, signal });
  // An API config (target.api) reads its listing from a JSON endpoint instead of pages.
  const apiPages = config.target.api ? new ApiPages(config, { queue, sessions, listings, details, warnings, progress, signal }) : null;

  if (signal.aborted) throw signal.reason;
  if (config.categories) queue.add({ label: 'index', url: config.target.url, uniqueKey: pageKey(config.target.url) }, 0);
  else if (apiPages) {
    const first = apiPages.firstRequest();
    listings.start({}, first.url!, first);
  } else listings.start({}, config.target.url);
  await scheduler.run({
    handle: (req, worker) => req.label === 'detail' ? details.handle(req, worker) : req.label === 'index' ? index.handle(req) : apiPages ? apiPages.handle(req) : listingPages.handle(req),
    listingsPending: () => listings.pendingCategories(),
    reservedForListings: () => listings.reserved(),
    dropDetail: (req) => details.drop(req),
    settled: () => void sessions.closeAll(),
  });

  const rows = finalizeRows(collectRows(listings.all, config.detail_fields?.fields ?? [], (row) => details.rowFor(row)), config.output);
  // A run whose listing pages robots.txt or a bot-protection service kept out never completes with 0 rows.
  if (!rows.length && listings.refusal) throw listings.refusal;
  for (const w of loader.warnings()) warnings.add(w);
  for (const w of options.access?.summary() ?? []) warnings.add(w);
  const capture = loader.apiCapture();
  progress.report('done', 99);
  return {
    rows,
    pagesScraped: progress.pagesScraped,
    pageCounts: progress.pageCounts,
    itemsFound: progress.itemsFound,
    warnings: warnings.list(),
    engine: loader.engine,
    apiDiscovered: apiCarriesItems(rows, capture.values),
    apiCapture: capture.responses,
    sessionsRetired: options.access?.sessions.summary() ?? '',
  };
}
