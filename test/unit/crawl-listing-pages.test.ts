/**
 * One listing step (lambdas/engine/crawl/listing-pages.ts) over a stand-in loader: rows read and the next page and
 * the detail pages queued; the page budget, the item caps and output.limit ending listings; a later page that fails
 * or redirects to a crawled page ending its listing with a warning; the run's first page failing the run; in a
 * browser, an in-page step that changed nothing giving its budget slot back, and the actions on the first page.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CodedError } from '../../lambdas/errors.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import type { BrowserSessionFeatures, LoadedDocument } from '../../lambdas/engine/loaders/page-loader.ts';
import { FakeLoader, listingHtml, parts } from './crawl-fakes.ts';

const URL = 'https://shop.example/list';
const NEXT = (n: number) => `<ul class="pager"><li class="next"><a href="?page=${n}">next</a></li></ul>`;
const items = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ name: `item ${from + i}`, href: `/item/${from + i}` }));

function config(extra = '', pagination = '{ type: click, selector: "li.next a", max_pages: 5 }') {
  return parseConfig(`target: { url: "${URL}" }
extract:
  container: li.item
  fields:
    - { name: name, selector: span.name }
    - { name: url, selector: a, type: link }
pagination: ${pagination}
${extra}`);
}

const DETAILS = `detail_fields:
  fields:
    - { name: title, selector: h1 }
`;

describe('crawl listing pages', () => {
  it('reads the first page into rows, queues the next page before its detail pages, and reports', async () => {
    const loader = new FakeLoader({ [URL]: listingHtml(items(1, 3), NEXT(2)) });
    const p = parts(config(DETAILS), loader);
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    const l = p.listings.all[0]!;
    assert.deepEqual(l.pages[0]!.map((r) => r.name), ['item 1', 'item 2', 'item 3']);
    assert.equal(l.items, 3);
    assert.equal(l.reserved, 1);
    const next = p.queue.shift(0)!;
    assert.deepEqual([next.url, next.index, next.listing], [`${URL}?page=2`, 1, l]);
    assert.ok(next.seq! < p.queue.peek(1)!.seq!, 'the next page was queued before the detail pages');
    assert.equal(p.queue.size(1), 3);
    assert.deepEqual([p.progress.pagesScraped, p.progress.itemsFound, p.budget.started], [1, 3, 1]);
    assert.equal(p.reports.at(-1)!.message, 'listing page 1: 3 items');
    assert.equal(loader.readies[0]?.selector, 'li.item');
  });

  it('the last page (no next link) ends the listing', async () => {
    const p = parts(config(), new FakeLoader({ [URL]: listingHtml(items(1, 2)) }));
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    assert.equal(p.listings.all[0]!.open, false);
    assert.equal(p.queue.size(0), 0);
  });

  it('with the page budget spent, the step loads nothing and the listing ends with the page-limit warning', async () => {
    const loader = new FakeLoader({ [URL]: listingHtml(items(1, 2)) });
    const p = parts(config(), loader, { maxPages: 0 });
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    assert.deepEqual(loader.loads, []);
    assert.equal(p.listings.all[0]!.open, false);
    assert.equal(p.listings.stopped, true);
    assert.deepEqual(p.warnings.list(), ['stopped at the page limit of 0 pages per run']);
  });

  it('the run\'s first page failing fails the run: target_failed for a 404 and for a page that could not be loaded', async () => {
    for (const [page, message] of [[{ status: 404 }, /answered HTTP 404/], [{ error: new CodedError('fetch_failed', 'timed out') }, /could not be loaded: timed out/]] as const) {
      const p = parts(config(), new FakeLoader({ [URL]: page }));
      p.listings.start({}, URL);
      await assert.rejects(p.listingPages.handle(p.queue.shift(0)!), (e: Error & { code?: string }) => e.code === 'target_failed' && message.test(e.message));
    }
  });

  it('a later page that fails ends its listing with a warning; the rows so far stay', async () => {
    const p = parts(config(), new FakeLoader({ [URL]: listingHtml(items(1, 2), NEXT(2)), [`${URL}?page=2`]: { status: 500 } }));
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    await p.listingPages.handle(p.queue.shift(0)!);
    const l = p.listings.all[0]!;
    assert.equal(l.open, false);
    assert.equal(l.items, 2);
    assert.deepEqual(p.warnings.list(), [`listing page ${URL}?page=2: answered HTTP 500`]);
  });

  it('a later page redirected to a page already crawled ends the listing (counted, no rows)', async () => {
    const p = parts(config(), new FakeLoader({ [URL]: listingHtml(items(1, 2), NEXT(9)), [`${URL}?page=9`]: { redirectTo: URL, html: listingHtml(items(1, 2)) } }));
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    await p.listingPages.handle(p.queue.shift(0)!);
    assert.equal(p.listings.all[0]!.open, false);
    assert.equal(p.progress.itemsFound, 2);
    assert.equal(p.progress.pagesScraped, 2);
    assert.deepEqual(p.warnings.list(), [`listing page ${URL}?page=9 redirected to ${URL}, already crawled; the listing ends there`]);
  });

  it('a next link to a page already crawled ends the listing', async () => {
    const p = parts(config(), new FakeLoader({ [URL]: listingHtml(items(1, 2), '<li class="next"><a href="/list#top">next</a></li>') }));
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    assert.equal(p.listings.all[0]!.open, false);
    assert.equal(p.queue.size(0), 0);
  });

  it('stop_condition.max_items cuts the page and ends the listing', async () => {
    const p = parts(config('', '{ type: click, selector: "li.next a", stop_condition: { max_items: 2 } }'), new FakeLoader({ [URL]: listingHtml(items(1, 5), NEXT(2)) }));
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    assert.equal(p.listings.all[0]!.pages[0]!.length, 2);
    assert.equal(p.listings.all[0]!.open, false);
    assert.equal(p.listings.stopped, false);
  });

  it('output.limit (without deduplication) cuts the page and stops every listing', async () => {
    const p = parts(config('output: { limit: 4 }\n'), new FakeLoader({ [URL]: listingHtml(items(1, 5), NEXT(2)) }));
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    assert.equal(p.listings.all[0]!.pages[0]!.length, 4);
    assert.equal(p.listings.stopped, true);
    assert.equal(p.queue.size(0), 0);
  });

  it('in a browser: the actions run on the first page; an in-page step that changed nothing gives its slot back', async () => {
    const calls: string[] = [];
    let html = listingHtml(items(1, 2), '<button class="more">more</button>');
    const current = async (): Promise<LoadedDocument> => ({ requestedUrl: URL, url: URL, status: 200, contentType: 'text/html', html });
    const browser: BrowserSessionFeatures = {
      runActions: async (a) => { calls.push(`actions ${a.length}`); html = listingHtml(items(1, 3), '<button class="more">more</button>'); },
      current,
      step: async (kind) => { calls.push(`step ${kind}`); return { outcome: 'end', before: 3 }; },
      evalFields: async () => [],
    };
    const c = config('actions:\n  - { type: click, selector: "#go" }\n', '{ type: click, selector: "button.more", max_pages: 5 }');
    const p = parts(c, new FakeLoader({ [URL]: html }, browser));
    p.listings.start({}, URL);
    await p.listingPages.handle(p.queue.shift(0)!);
    assert.equal(p.listings.all[0]!.items, 3, 'items read after the actions');
    const step = p.queue.shift(0)!;
    assert.equal(step.step, 'click');
    assert.equal(step.url, null);
    await p.listingPages.handle(step);
    assert.deepEqual(calls, ['actions 1', 'step click']);
    assert.equal(p.budget.started, 1, 'the step gave its slot back');
    assert.equal(p.listings.all[0]!.reserved, 1);
    assert.equal(p.listings.all[0]!.open, false);
    assert.equal(p.progress.pagesScraped, 1);
  });
});
