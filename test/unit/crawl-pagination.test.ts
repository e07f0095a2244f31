/**
 * A listing's pagination (lambdas/engine/crawl/pagination.ts): where the next step goes and every condition that
 * ends a listing (no pagination, max_pages, stopped listings, an empty numbered page, no or a disabled control, a
 * scroll that brought nothing, a control that is not a link over HTTP), the item caps, and the pauses.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../lambdas/engine/config.ts';
import type { Row } from '../../lambdas/engine/extract.ts';
import { PageReading } from '../../lambdas/engine/crawl/page-reader.ts';
import { capsReached, itemCaps, keepWithinCaps, nextStep, pauseBefore, stepWaitMs, type StepContext } from '../../lambdas/engine/crawl/pagination.ts';

const BASE = 'https://shop.example/list/';

function config(pagination: string, extra = '') {
  return parseConfig(`target: { url: "${BASE}" }
extract:
  container: li.item
  fields:
    - { name: name, selector: span }
${pagination ? `pagination: ${pagination}\n` : ''}${extra}`);
}

/** The step context of a page as the crawl makes it: its control read by the one page reader. */
function at(cfg: ReturnType<typeof config>, html: string, o: Partial<StepContext> = {}): StepContext {
  return { control: new PageReading(cfg).listing(html, BASE).control, pageUrl: BASE, start: BASE, index: 0, itemsOnPage: 3, browser: false, stopped: false, ...o };
}

function step(pagination: string, html: string, o: Partial<StepContext> = {}) {
  const warnings: string[] = [];
  const cfg = config(pagination);
  const next = nextStep(cfg.pagination, at(cfg, html, o), (m) => warnings.push(m));
  return { next, warnings };
}

const NEXT_LINK = '<ul class="pager"><li class="next"><a href="?page=2">next</a></li></ul>';

describe('crawl pagination: the next step', () => {
  it('none without pagination', () => {
    assert.equal(step('', NEXT_LINK).next, null);
  });

  it('none at max_pages: page index max_pages-1 is the last', () => {
    const p = '{ type: click, selector: "li.next a", max_pages: 3 }';
    assert.deepEqual(step(p, NEXT_LINK, { index: 1 }).next, { url: `${BASE}?page=2` });
    assert.equal(step(p, NEXT_LINK, { index: 2 }).next, null);
  });

  it('none once every listing is stopped', () => {
    assert.equal(step('{ type: click, selector: "li.next a" }', NEXT_LINK, { stopped: true }).next, null);
  });

  it('click: a link to follow; none when the control is absent or disabled (itself or an ancestor)', () => {
    const p = '{ type: click, selector: "li.next a" }';
    assert.deepEqual(step(p, NEXT_LINK).next, { url: `${BASE}?page=2` });
    assert.equal(step(p, '<ul><li class="previous"><a href="?page=1">prev</a></li></ul>').next, null);
    assert.equal(step(p, '<ul><li class="next disabled"><a href="?page=2">next</a></li></ul>').next, null);
    assert.equal(step('{ type: click, selector: "button.more" }', '<button class="more" disabled>more</button>').next, null);
  });

  it('click: a control that is not a link is clicked in a browser', () => {
    assert.deepEqual(step('{ type: click, selector: "button.more" }', '<button class="more">more</button>', { browser: true }).next, { step: 'click' });
  });

  it('click over HTTP: on the first page a control that is not a link needs a browser (browser_required)', () => {
    assert.throws(() => step('{ type: click, selector: "button.more" }', '<button class="more">more</button>'), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'browser_required');
      assert.match(e.message, /matches a <button> that is not a link/);
      return true;
    });
  });

  it('click over HTTP: on a later page it ends the listing with a warning', () => {
    const { next, warnings } = step('{ type: click, selector: "li.next a" }', '<ul><li class="next"><a href="#">next</a></li></ul>', { index: 2, pageUrl: `${BASE}?page=3` });
    assert.equal(next, null);
    assert.deepEqual(warnings, [`pagination: on ${BASE}?page=3 "li.next a" is a <a> without a usable href; the listing ends there`]);
  });

  it('url: the pattern with the next page number, relative to the listing start', () => {
    const p = '{ type: url, url_pattern: "page/{page}/", max_pages: 5 }';
    assert.deepEqual(step(p, '', { index: 0, start: 'https://shop.example/cat/shoes/' }).next, { url: 'https://shop.example/cat/shoes/page/2/' });
    assert.deepEqual(step(p, '', { index: 2, start: 'https://shop.example/cat/shoes/' }).next, { url: 'https://shop.example/cat/shoes/page/4/' });
  });

  it('url: an empty page ends the listing', () => {
    assert.equal(step('{ type: url, url_pattern: "?p={page}" }', '', { itemsOnPage: 0 }).next, null);
  });

  it('scroll_infinite: the first page always scrolls, a later one only if the last scroll brought items', () => {
    const p = '{ type: scroll_infinite, max_pages: 5 }';
    assert.deepEqual(step(p, '', { index: 0, itemsOnPage: 0, browser: true }).next, { step: 'scroll' });
    assert.deepEqual(step(p, '', { index: 1, itemsOnPage: 4, browser: true }).next, { step: 'scroll' });
    assert.equal(step(p, '', { index: 1, itemsOnPage: 0, browser: true }).next, null);
  });
});

const rows = (n: number): Row[] => Array.from({ length: n }, (_, i) => ({ i }));

describe('crawl pagination: item caps', () => {
  it('stop_condition.max_items per listing; output.limit only without deduplication', () => {
    assert.deepEqual(itemCaps(config('{ type: url, url_pattern: "?p={page}", stop_condition: { max_items: 7 } }', 'output: { limit: 5 }\n')), { perListing: 7, total: 5 });
    assert.deepEqual(itemCaps(config('', 'output: { limit: 5, deduplicate: true }\n')), {});
    assert.deepEqual(itemCaps(config('')), {});
  });

  it('keeps the first rows that fit the listing cap and the run cap', () => {
    assert.equal(keepWithinCaps(rows(10), { perListing: 7 }, 4, 0).length, 3);
    assert.equal(keepWithinCaps(rows(10), { total: 12 }, 0, 5).length, 7);
    assert.equal(keepWithinCaps(rows(10), { perListing: 7, total: 12 }, 0, 10).length, 2);
    assert.equal(keepWithinCaps(rows(10), { perListing: 7 }, 9, 0).length, 0);
    assert.deepEqual(keepWithinCaps(rows(3), {}, 100, 100), rows(3));
    assert.deepEqual(keepWithinCaps(rows(5), { perListing: 3 }, 0, 0), rows(3));
  });

  it('reports which cap is reached: the run cap ends the listing too', () => {
    assert.deepEqual(capsReached({ perListing: 5 }, 5, 5), { listing: true, total: false });
    assert.deepEqual(capsReached({ perListing: 5 }, 4, 40), { listing: false, total: false });
    assert.deepEqual(capsReached({ total: 10 }, 3, 10), { listing: true, total: true });
    assert.deepEqual(capsReached({}, 1000, 1000), { listing: false, total: false });
  });
});

describe('crawl pagination: pauses', () => {
  it('before a first page: categories.wait_after, else none; later: pagination.wait_after, none before a scroll', () => {
    const c = config('{ type: click, selector: "a.next", wait_after: 700 }');
    assert.equal(pauseBefore(c, 0), 0);
    assert.equal(pauseBefore(c, 1), 700);
    assert.equal(pauseBefore(c, 1, 'click'), 700);
    assert.equal(pauseBefore(c, 1, 'scroll'), 0);
    const cat = config('{ type: click, selector: "a.next" }', 'categories: { link_selector: "nav a", wait_after: 300 }\n');
    assert.equal(pauseBefore(cat, 0), 300);
  });

  it('an in-page step waits wait_after (2,000 if 0) for a scroll, at least 3,000 for a click', () => {
    assert.equal(stepWaitMs(config('{ type: scroll_infinite, wait_after: 0 }').pagination!), 2000);
    assert.equal(stepWaitMs(config('{ type: scroll_infinite, wait_after: 500 }').pagination!), 500);
    assert.equal(stepWaitMs(config('{ type: click, selector: "b", wait_after: 500 }').pagination!), 3000);
    assert.equal(stepWaitMs(config('{ type: click, selector: "b", wait_after: 4500 }').pagination!), 4500);
  });
});
