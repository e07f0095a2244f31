/**
 * The categories' index page (lambdas/engine/crawl/categories.ts) over a stand-in loader: its category links become
 * listings started one after the other with their metadata, a category that is the index page itself is read
 * again without a second load, no link is a warning, and the index page failing fails the run.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { pageKey } from '../../lambdas/engine/request-queue.ts';
import { FakeLoader, listingHtml, parts } from './crawl-fakes.ts';

const INDEX = 'https://shop.example/';
const NAV = (...links: string[]) => `<html><body><nav class="cats">${links.map((l) => `<a href="${l}">${l.replaceAll('/', '') || 'home'}</a>`).join('')}</nav></body></html>`;

const CONFIG = parseConfig(`target: { url: "${INDEX}" }
categories: { container: nav.cats, link_selector: a }
extract:
  container: li.item
  fields:
    - { name: name, selector: span.name }
pagination: { type: click, selector: "li.next a", max_pages: 3 }
`);

function indexRequest(p: ReturnType<typeof parts>) {
  p.queue.add({ label: 'index', url: INDEX, uniqueKey: pageKey(INDEX) }, 0);
  return p.queue.shift(0)!;
}

describe('crawl categories', () => {
  it('reads the index page, plans max_pages per category, and starts the first category only', async () => {
    const loader = new FakeLoader({ [INDEX]: NAV('/a/', '/b/') });
    const p = parts(CONFIG, loader);
    await p.index.handle(indexRequest(p));
    assert.equal(loader.readies[0]?.selector, 'nav.cats a');
    assert.deepEqual([p.budget.started, p.progress.pagesScraped, p.progress.listingPlanned], [1, 1, 6]);
    assert.equal(p.reports.at(-1)!.message, 'found 2 categories');
    assert.equal(p.sessions.listingTabAtIndex, true);
    assert.equal(p.listings.all.length, 1);
    assert.deepEqual(p.listings.all[0]!.meta, { _category: 'a', _category_url: 'https://shop.example/a/' });
    assert.equal(p.listings.pendingCategories(), true);
    assert.equal(p.queue.shift(0)!.url, 'https://shop.example/a/');
    p.listings.end(p.listings.all[0]!, 0);
    assert.deepEqual(p.listings.all[1]!.meta, { _category: 'b', _category_url: 'https://shop.example/b/' });
  });

  it('a category that is the index page itself is read from the index document, not loaded or counted again', async () => {
    const html = `${NAV('/', '/b/')}${listingHtml([{ name: 'x' }, { name: 'y' }])}`;
    const loader = new FakeLoader({ [INDEX]: html });
    const p = parts(CONFIG, loader);
    await p.index.handle(indexRequest(p));
    const req = p.queue.shift(0)!;
    assert.ok(req.reuse);
    await p.listingPages.handle(req);
    assert.deepEqual(loader.loads, [INDEX]);
    assert.equal(p.progress.pagesScraped, 1);
    assert.deepEqual(p.listings.all[0]!.pages[0]!.map((r) => r.name), ['x', 'y']);
    assert.equal(p.sessions.listingTabAtIndex, false);
  });

  it('no category link: a warning, and no listing', async () => {
    const p = parts(CONFIG, new FakeLoader({ [INDEX]: '<html><body><p>nothing</p></body></html>' }));
    await p.index.handle(indexRequest(p));
    assert.equal(p.listings.all.length, 0);
    assert.deepEqual(p.warnings.list(), [`categories: no category links matched "nav.cats a" on ${INDEX}`]);
  });

  it('the index page failing fails the run (target_failed)', async () => {
    const p = parts(CONFIG, new FakeLoader({ [INDEX]: { status: 503 } }));
    await assert.rejects(p.index.handle(indexRequest(p)), (e: Error & { code?: string }) => e.code === 'target_failed' && /answered HTTP 503/.test(e.message));
  });
});
