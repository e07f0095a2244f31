/**
 * The crawler's counts and progress figure (lambdas/engine/crawl/progress.ts): pages read against pages expected
 * (index page, max_pages per listing, detail pages per step as seen so far, pages started), never down, at most 99
 * until forced, every report passed on (the caller throttles), none without a callback.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProgressTracker } from '../../lambdas/engine/crawl/progress.ts';
import type { RunProgress } from '../../lambdas/engine/crawl/types.ts';

function tracker(o: { perListingPages: number; withDetails?: boolean; started?: () => number }) {
  const seen: RunProgress[] = [];
  const p = new ProgressTracker({ perListingPages: o.perListingPages, withDetails: o.withDetails ?? false, pagesStarted: o.started ?? (() => 0), onProgress: (r) => seen.push(r) });
  return { p, seen, last: () => seen.at(-1)! };
}

describe('crawl progress', () => {
  it('is pages read against max_pages listing steps, with the default message', () => {
    const { p, last } = tracker({ perListingPages: 4 });
    p.pageRead('listing');
    p.listingStepRead(10);
    p.report('');
    assert.deepEqual(last(), { progress: 24, pagesScraped: 1, itemsFound: 10, message: '1 pages, 10 items' });
    p.pageRead('listing');
    p.listingStepRead(10);
    p.report('listing page 2: 10 items');
    assert.deepEqual(last(), { progress: 49, pagesScraped: 2, itemsFound: 20, message: 'listing page 2: 10 items' });
  });

  it('counts detail pages per listing step from the steps seen so far', () => {
    const { p, last } = tracker({ perListingPages: 2, withDetails: true });
    p.pageRead('listing');
    p.listingStepRead(3);
    p.report('');
    // Expected: 2 steps × (1 + 3 details) = 8 pages; 1 read.
    assert.equal(last().progress, Math.floor(99 / 8));
    for (let i = 0; i < 3; i++) p.pageRead('listing');
    p.report('');
    assert.equal(last().progress, Math.floor((99 * 4) / 8));
  });

  it('a listing that ends early lowers the pages expected, never below the steps done', () => {
    const { p, last } = tracker({ perListingPages: 10 });
    p.pageRead('listing');
    p.listingStepRead(1);
    p.listingEnded(0);
    assert.equal(p.listingPlanned, 1);
    p.report('');
    assert.equal(last().progress, 99);
    p.listingEnded(-1);
    assert.equal(p.listingPlanned, 1, 'not below the one step done');
  });

  it('categories: the index page plus max_pages per category', () => {
    const { p, last } = tracker({ perListingPages: 3 });
    p.indexStarted();
    p.pageRead('listing');
    p.categoriesFound(4);
    assert.equal(p.listingPlanned, 12);
    p.report('found 4 categories');
    assert.equal(last().progress, Math.floor(99 / 13));
    assert.equal(last().message, 'found 4 categories');
  });

  it('never goes down, even when the expected total grows', () => {
    let started = 0;
    const { p, seen } = tracker({ perListingPages: 2, started: () => started });
    p.pageRead('listing');
    p.listingStepRead(1);
    p.report('');
    assert.equal(seen[0]!.progress, 49);
    // Many pages started (the total is at least that): the estimate drops, the figure does not.
    started = 50;
    p.report('');
    assert.equal(seen[1]!.progress, 49);
  });

  it('stays at most 99; a forced figure is reported, but never one lower than before', () => {
    const { p, seen } = tracker({ perListingPages: 1 });
    for (let i = 0; i < 5; i++) p.pageRead('listing');
    p.report('');
    assert.equal(seen[0]!.progress, 99);
    p.report('done', 150);
    assert.equal(seen[1]!.progress, 99);
    const t = tracker({ perListingPages: 10 });
    t.p.pageRead('listing');
    t.p.report('');
    t.p.report('x', 0);
    assert.equal(t.seen[1]!.progress, t.seen[0]!.progress);
    t.p.report('done', 99);
    assert.equal(t.last().progress, 99);
  });

  it('passes on every report (no throttling here) and makes none without a callback', () => {
    const { p, seen } = tracker({ perListingPages: 1 });
    for (let i = 0; i < 100; i++) p.report('');
    assert.equal(seen.length, 100);
    let calls = 0;
    const silent = new ProgressTracker({ perListingPages: 1, withDetails: false, pagesStarted: () => { calls++; return 0; } });
    silent.pageRead('listing');
    silent.report('');
    assert.equal(calls, 0);
    assert.equal(silent.pagesScraped, 1);
  });
});
