/**
 * Stand-ins for the crawler's unit tests (test/unit/crawl-*.test.ts): a page loader that answers from a map of
 * URLs (no network), optionally with browser features, and the crawler's parts wired as crawl() wires them.
 */
import { CodedError } from '../../lambdas/errors.ts';
import type { ScrapeConfig } from '../../lambdas/engine/config.ts';
import type { BrowserSessionFeatures, LoadedDocument, LoadOptions, PageLoader, PageSession } from '../../lambdas/engine/loaders/page-loader.ts';
import { RequestQueue } from '../../lambdas/engine/request-queue.ts';
import { PageBudget } from '../../lambdas/engine/crawl/budget.ts';
import { IndexPage } from '../../lambdas/engine/crawl/categories.ts';
import { DetailPages } from '../../lambdas/engine/crawl/details.ts';
import { ListingPages } from '../../lambdas/engine/crawl/listing-pages.ts';
import { Listings } from '../../lambdas/engine/crawl/listings.ts';
import { INLINE_READERS, type PageReaders } from '../../lambdas/engine/crawl/page-reader.ts';
import { ProgressTracker } from '../../lambdas/engine/crawl/progress.ts';
import { Sessions } from '../../lambdas/engine/crawl/sessions.ts';
import type { RunProgress } from '../../lambdas/engine/crawl/types.ts';
import { Warnings } from '../../lambdas/engine/crawl/warnings.ts';

/** A page of the fake loader: HTML, or an answer with status, type, a redirect, or an error to throw. */
export type FakePage = string | { html?: string; status?: number; contentType?: string; redirectTo?: string; error?: unknown };

/** A loader answering from `pages` by URL; unknown URLs throw `fetch_failed`. */
export class FakeLoader implements PageLoader {
  readonly engine: 'lightweight' | 'heavy';
  /** URLs loaded, in order, with the ready condition's selector (or '-'). */
  readonly loads: string[] = [];
  readonly readies: Array<LoadOptions['ready']> = [];
  opened = 0;
  closed = 0;
  private readonly pages: Record<string, FakePage>;
  private readonly browser: BrowserSessionFeatures | undefined;

  constructor(pages: Record<string, FakePage>, browser?: BrowserSessionFeatures) {
    this.pages = pages;
    this.browser = browser;
    this.engine = browser ? 'heavy' : 'lightweight';
  }

  /** The document `url` gives (as a load would), or throws its error. */
  doc(url: string): LoadedDocument {
    const p = this.pages[url];
    if (p === undefined) throw new CodedError('fetch_failed', `connection refused: ${url}`);
    const page = typeof p === 'string' ? { html: p } : p;
    if (page.error) throw page.error;
    return { requestedUrl: url, url: page.redirectTo ?? url, status: page.status ?? 200, contentType: page.contentType ?? 'text/html', html: page.html ?? '' };
  }

  async openSession(): Promise<PageSession> {
    this.opened++;
    return {
      load: async (url: string, o?: LoadOptions) => {
        this.loads.push(url);
        this.readies.push(o?.ready);
        return this.doc(url);
      },
      close: async () => { this.closed++; },
      ...(this.browser ? { browser: this.browser } : {}),
    };
  }

  warnings(): string[] {
    return [];
  }

  apiCapture() {
    return { responses: [], values: new Set<string>() };
  }

  async close(): Promise<void> {}
}

/** The crawler's parts over `loader`, wired as crawl() wires them (no scheduler: tests call the handlers). */
export function parts(config: ScrapeConfig, loader: PageLoader, o: { maxPages?: number; readers?: PageReaders } = {}) {
  const perListingPages = config.pagination ? config.pagination.max_pages : 1;
  const queue = new RequestQueue();
  const warnings = new Warnings();
  const budget = new PageBudget(o.maxPages);
  const reports: RunProgress[] = [];
  const progress = new ProgressTracker({ perListingPages, withDetails: Boolean(config.detail_fields?.fields.length), pagesStarted: () => budget.started, onProgress: (p) => reports.push(p) });
  const sessions = new Sessions(loader);
  const listings = new Listings({ perListingPages, queue, budget, warnings, progress });
  const signal = new AbortController().signal;
  let wakes = 0;
  const reader = (o.readers ?? INLINE_READERS).forConfig(config);
  const details = new DetailPages(config, { queue, sessions, reader, warnings, progress, signal, wake: () => { wakes++; } });
  const listingPages = new ListingPages(config, { queue, sessions, listings, details, reader, warnings, progress, signal });
  const index = new IndexPage(config, { queue, sessions, listings, warnings, progress, signal });
  return { queue, warnings, budget, progress, reports, sessions, listings, details, listingPages, index, wakes: () => wakes };
}

/** A listing page: `li.item` items with a name and a link, then pager markup. */
export function listingHtml(items: Array<{ name: string; href?: string }>, pager = ''): string {
  return `<!DOCTYPE html><html><body><ul>${items.map((i) => `<li class="item"><span class="name">${i.name}</span>${i.href ? `<a href="${i.href}">more</a>` : ''}</li>`).join('')}</ul>${pager}</body></html>`;
}
