/**
 * The crawler's listings (lambdas/engine/crawl/listings.ts): a listing's first page queued, categories started one
 * after the other as listings end, the page budget they hold back, reserve() at the page limit stopping them all,
 * a category whose page was crawled already, a category that is the index page itself.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestQueue, pageKey } from '../../lambdas/engine/request-queue.ts';
import type { LoadedDocument } from '../../lambdas/engine/loaders/page-loader.ts';
import { PageBudget } from '../../lambdas/engine/crawl/budget.ts';
import { Listings } from '../../lambdas/engine/crawl/listings.ts';
import { ProgressTracker } from '../../lambdas/engine/crawl/progress.ts';
import { Warnings } from '../../lambdas/engine/crawl/warnings.ts';

function setup(perListingPages = 3, maxPages = 100) {
  const queue = new RequestQueue();
  const budget = new PageBudget(maxPages);
  const warnings = new Warnings();
  const progress = new ProgressTracker({ perListingPages, withDetails: false, pagesStarted: () => budget.started });
  const listings = new Listings({ perListingPages, queue, budget, warnings, progress });
  return { queue, budget, warnings, progress, listings };
}

const cats = (...names: string[]) => names.map((n) => ({ name: n, url: `https://shop.example/${n}/` }));
const indexDoc = (url: string): LoadedDocument => ({ requestedUrl: url, url, status: 200, contentType: 'text/html', html: '' });

describe('crawl listings', () => {
  it("start() queues the listing's first page at priority 0 and holds back max_pages for it", () => {
    const { queue, listings } = setup(3);
    listings.start({}, 'https://shop.example/list#top');
    const req = queue.shift(0)!;
    assert.equal(req.label, 'listing');
    assert.equal(req.uniqueKey, 'https://shop.example/list');
    assert.equal(req.index, 0);
    assert.equal(req.listing, listings.all[0]);
    assert.equal(listings.reserved(), 3);
    assert.ok(listings.reserve(req.listing));
    assert.equal(listings.reserved(), 2);
  });

  it('categories start one at a time, each when the previous listing ends, with their metadata', () => {
    const { queue, listings, progress } = setup(2);
    progress.categoriesFound(3);
    listings.setCategories(indexDoc('https://shop.example/'), cats('a', 'b', 'c'));
    assert.equal(listings.pendingCategories(), true);
    listings.startNext();
    assert.equal(listings.all.length, 1);
    assert.deepEqual(listings.all[0]!.meta, { _category: 'a', _category_url: 'https://shop.example/a/' });
    // The current listing's 2 pages and 2 waiting categories' 2 each.
    assert.equal(listings.reserved(), 6);
    listings.end(listings.all[0]!, 0);
    assert.equal(listings.all.length, 2);
    assert.equal(listings.all[0]!.open, false);
    assert.equal(progress.listingPlanned, 5, 'the step a did not take is no longer expected');
    assert.deepEqual(queue.shift(0)!.listing, listings.all[0]);
    assert.deepEqual(queue.shift(0)!.listing, listings.all[1]);
    listings.end(listings.all[1]!, 1);
    listings.end(listings.all[2]!, 1);
    assert.equal(listings.pendingCategories(), false);
    assert.equal(listings.reserved(), 0);
  });

  it('ending a listing twice does nothing the second time', () => {
    const { listings, progress } = setup(4);
    listings.start({}, 'https://shop.example/');
    listings.end(listings.all[0]!, 0);
    assert.equal(progress.listingPlanned, 1);
    listings.end(listings.all[0]!, -1);
    assert.equal(progress.listingPlanned, 1);
  });

  it('at the page limit reserve() refuses, warns once and stops every listing: waiting categories are dropped', () => {
    const { listings, warnings } = setup(2, 1);
    listings.setCategories(indexDoc('https://shop.example/'), cats('a', 'b'));
    listings.startNext();
    const a = listings.all[0]!;
    assert.equal(listings.reserve(a), true);
    assert.equal(listings.reserve(a), false);
    assert.equal(listings.reserve(a), false);
    assert.equal(a.reserved, 1);
    assert.equal(listings.stopped, true);
    assert.equal(listings.pendingCategories(), false);
    assert.equal(listings.reserved(), 1, "only the current listing's own, no category's");
    listings.end(a, 0);
    assert.equal(listings.all.length, 1, 'b never starts');
    assert.deepEqual(warnings.list(), ['stopped at the page limit of 1 pages per run']);
  });

  it('giveBack() returns a slot to the budget and to the listing', () => {
    const { listings, budget } = setup(2, 1);
    listings.start({}, 'https://shop.example/');
    const l = listings.all[0]!;
    assert.ok(listings.reserve(l));
    listings.giveBack(l);
    assert.equal(budget.started, 0);
    assert.equal(l.reserved, 0);
    assert.ok(listings.reserve(l));
  });

  it('a category whose page was crawled already is skipped with a warning, and the next one starts', () => {
    const { queue, listings, warnings } = setup(1);
    queue.markSeen(pageKey('https://shop.example/a/'));
    listings.setCategories(indexDoc('https://shop.example/'), cats('a', 'b'));
    listings.startNext();
    assert.equal(listings.all.length, 2);
    assert.equal(listings.all[0]!.open, false);
    assert.equal(queue.shift(0)!.listing, listings.all[1]);
    assert.deepEqual(warnings.list(), ['category https://shop.example/a/: its page was crawled already (as a page of an earlier listing); skipped']);
  });

  it('a category that is the index page itself is queued to be read again from that document', () => {
    const { queue, listings } = setup(1);
    const doc = indexDoc('https://shop.example/');
    queue.markSeen(pageKey(doc.url));
    listings.setCategories(doc, [{ name: 'all', url: 'https://shop.example/#all' }]);
    listings.startNext();
    const req = queue.shift(0)!;
    assert.equal(req.uniqueKey, 'https://shop.example/#listing');
    assert.equal(req.reuse, doc);
  });

  it('totalItems() adds every listing', () => {
    const { listings } = setup(1);
    listings.start({}, 'https://a.example/');
    listings.start({}, 'https://b.example/');
    listings.all[0]!.items = 4;
    listings.all[1]!.items = 5;
    assert.equal(listings.totalItems(), 9);
  });
});
