/**
 * The crawler: one crawl loop for every engine (docs/architecture.md, idea 5; docs/crawler.md). It decides what
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
 *
 * This module is the crawler's entry; its parts, one concern each, are in ./crawl/ (crawl.ts lists them).
 */
export { crawl } from './crawl/crawl.ts';
export { describePages } from './crawl/progress.ts';
export type { CrawlOptions, CrawlResult, PageCounts, RunProgress } from './crawl/types.ts';
