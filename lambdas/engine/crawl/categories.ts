/**
 * Categories: the index page (target.url) is the run's first page; its category links (categories.link_selector,
 * within categories.container) become one listing each, crawled one after the other with `_category` and
 * `_category_url` on every row. The config's actions run on the index page (browser).
 */
import type { ScrapeConfig } from '../config.ts';
import { categoryLinks, documentBase, loadHtml } from '../extract.ts';
import { pageKey, type CrawlRequest, type RequestQueue } from '../request-queue.ts';
import { loadFirst } from './documents.ts';
import type { Listings } from './listings.ts';
import type { ProgressTracker } from './progress.ts';
import { indexReady } from './readiness.ts';
import type { Sessions } from './sessions.ts';
import type { Warnings } from './warnings.ts';

/** What {@link IndexPage} works with. */
export interface IndexPageDeps {
  queue: RequestQueue;
  sessions: Sessions;
  listings: Listings;
  warnings: Warnings;
  progress: ProgressTracker;
  /** The run's abort signal (the load stops with it). */
  signal: AbortSignal;
}

/**
 * Reads the categories' index page and starts the first category's listing.
 *
 * **Example usage:**
 * ```ts
 * queue.add({ label: 'index', url: config.target.url, uniqueKey: pageKey(config.target.url) }, 0);
 * await new IndexPage(config, { queue, sessions, listings, warnings, progress, signal }).handle(req);
 * ```
 */
export class IndexPage {
  private readonly config: ScrapeConfig;
  private readonly d: IndexPageDeps;

  constructor(config: ScrapeConfig, deps: IndexPageDeps) {
    this.config = config;
    this.d = deps;
  }

  /**
   * Loads the index page (a slot of the page budget; it is the run's first page), finds the category links
   * (none: a warning, and the run ends with no rows) and starts the first category.
   * @throws as the run's first page (`crawl`); `action_failed` and the browser's errors.
   */
  async handle(req: CrawlRequest): Promise<void> {
    const c = this.config;
    const { sessions, listings, progress } = this.d;
    const url = req.url!;
    listings.reserve();
    progress.indexStarted();
    const session = await sessions.listing();
    let doc = await loadFirst(session, url, { ready: indexReady(c), signal: this.d.signal, warnings: this.d.warnings });
    progress.pageRead('index');
    this.d.queue.markSeen(pageKey(doc.url));
    if (c.actions.length && session.browser) {
      await session.browser.runActions(c.actions);
      doc = await session.browser.current();
    }
    sessions.listingTabAtIndex = true;
    const $ = loadHtml(doc.html);
    const cat = c.categories!;
    const categories = categoryLinks($, cat, documentBase($, doc.url, doc.html));
    if (!categories.length) {
      this.d.warnings.add(`categories: no category links matched "${cat.container ? `${cat.container} ${cat.link_selector}` : cat.link_selector}" on ${doc.url}`);
    }
    listings.setCategories(doc, categories);
    progress.categoriesFound(categories.length);
    progress.report(`found ${categories.length} categories`);
    listings.startNext();
  }
}
