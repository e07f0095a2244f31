/**
 * The crawler's page budget (lambdas/engine/crawl/budget.ts): n pages start, the n+1th is refused; slots held back
 * for listings; a slot given back; the user's stop lowers the limit to the pages started; the warnings it words.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MAX_PAGES, PageBudget } from '../../lambdas/engine/crawl/budget.ts';

describe('crawl page budget', () => {
  it('starts n pages and refuses the n+1th, taking nothing', () => {
    const b = new PageBudget(3);
    assert.deepEqual([b.tryStart(), b.tryStart(), b.tryStart()], [true, true, true]);
    assert.equal(b.tryStart(), false);
    assert.equal(b.started, 3);
    assert.equal(b.spentMessage(), 'stopped at the page limit of 3 pages per run');
  });

  it('defaults to 1000 pages when maxPages is undefined', () => {
    const b = new PageBudget(undefined);
    assert.equal(b.max, DEFAULT_MAX_PAGES);
    assert.equal(DEFAULT_MAX_PAGES, 1000);
    for (let i = 0; i < 1000; i++) assert.ok(b.tryStart());
    assert.equal(b.tryStart(), false);
  });

  it('a budget of 0 refuses the first page', () => {
    assert.equal(new PageBudget(0).tryStart(), false);
  });

  it('tryStartBeyond keeps the held-back slots for others', () => {
    const b = new PageBudget(5);
    assert.ok(b.tryStart());
    // 4 left, 3 held back: one may start, then none.
    assert.equal(b.tryStartBeyond(3), true);
    assert.equal(b.tryStartBeyond(3), false);
    assert.equal(b.started, 2);
    // The held-back slots are still there for tryStart.
    assert.deepEqual([b.tryStart(), b.tryStart(), b.tryStart(), b.tryStart()], [true, true, true, false]);
  });

  it('a slot given back can be taken again', () => {
    const b = new PageBudget(1);
    assert.ok(b.tryStart());
    assert.equal(b.tryStart(), false);
    b.giveBack();
    assert.equal(b.started, 0);
    assert.ok(b.tryStart());
  });

  it("the user's stop lowers the limit to the pages started, and the warning says so", () => {
    const b = new PageBudget(10);
    b.tryStart();
    b.tryStart();
    assert.equal(b.stoppedByUser, false);
    b.stopByUser();
    assert.equal(b.stoppedByUser, true);
    assert.equal(b.max, 2);
    assert.equal(b.tryStart(), false);
    assert.equal(b.tryStartBeyond(0), false);
    assert.equal(b.spentMessage(), 'stopped by the user after 2 page(s)');
  });

  it('a stop never raises the limit', () => {
    const b = new PageBudget(1);
    b.tryStart();
    b.giveBack();
    b.stopByUser();
    assert.equal(b.max, 0);
  });
});
