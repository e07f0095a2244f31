/**
 * The crawler's detail pages (lambdas/engine/crawl/details.ts) over a stand-in loader: which links are queued (once,
 * http(s) only, the first single link field), a detail page read into its row, failures that give the fields'
 * defaults with a warning, failures that fail the run, a page dropped at the limit, one session per worker.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CodedError } from '../../lambdas/errors.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { FakeLoader, parts } from './crawl-fakes.ts';

const CONFIG = parseConfig(`target: { url: "https://shop.example/" }
extract:
  container: li.item
  fields:
    - { name: name, selector: span.name }
    - { name: tags, selector: a.tag, type: link, multiple: true }
    - { name: url, selector: a.more, type: link }
detail_fields:
  fields:
    - { name: price, selector: .price, transform: [to_number] }
    - { name: stock, selector: .stock, default: unknown }
`);

const DETAIL = '<html><body><h1>A</h1><p class="price">12.50</p></body></html>';

function queued(p: ReturnType<typeof parts>): string[] {
  const out: string[] = [];
  for (let r = p.queue.shift(1); r; r = p.queue.shift(1)) out.push(r.url!);
  return out;
}

describe('crawl detail pages', () => {
  it('queues each http(s) link of the first single link field once (fragments aside), and wakes the workers', () => {
    const p = parts(CONFIG, new FakeLoader({}));
    assert.equal(p.details.linkField, 'url');
    p.details.enqueue([
      { name: 'a', url: 'https://shop.example/a' },
      { name: 'a again', url: 'https://shop.example/a#reviews' },
      { name: 'b', url: 'http://shop.example/b' },
      { name: 'c', url: 'mailto:c@shop.example' },
      { name: 'd', url: null },
    ]);
    assert.equal(p.wakes(), 1);
    p.details.enqueue([{ name: 'a', url: 'https://shop.example/a' }]);
    assert.equal(p.wakes(), 1, 'nothing new: no wake');
    assert.deepEqual(queued(p), ['https://shop.example/a', 'http://shop.example/b']);
  });

  it('queues nothing without detail_fields', () => {
    const p = parts(parseConfig(`target: { url: "https://shop.example/" }
extract:
  container: li
  fields:
    - { name: url, selector: a, type: link }
`), new FakeLoader({}));
    assert.equal(p.details.linkField, undefined);
    p.details.enqueue([{ url: 'https://shop.example/a' }]);
    assert.deepEqual(queued(p), []);
  });

  it('reads a detail page into its row, waiting for its first field, and counts it', async () => {
    const loader = new FakeLoader({ 'https://shop.example/a': DETAIL });
    const p = parts(CONFIG, loader);
    p.details.enqueue([{ url: 'https://shop.example/a' }]);
    await p.details.handle(p.queue.shift(1)!, 0);
    assert.deepEqual(p.details.rowFor({ url: 'https://shop.example/a#x' }), { price: 12.5, stock: 'unknown' });
    assert.equal(p.progress.pagesScraped, 1);
    assert.equal(p.reports.length, 1);
    assert.equal(loader.readies[0]?.selector, '.price');
    assert.deepEqual(p.warnings.list(), []);
  });

  it('a 404, a page that is not HTML, or a load failure: the fields take their defaults, with a warning', async () => {
    const loader = new FakeLoader({
      'https://shop.example/404': { status: 404, html: 'gone' },
      'https://shop.example/pdf': { contentType: 'application/pdf' },
      'https://shop.example/dns': { error: new CodedError('dns_failed', 'no such host') },
    });
    const p = parts(CONFIG, loader);
    p.details.enqueue([{ url: 'https://shop.example/404' }, { url: 'https://shop.example/pdf' }, { url: 'https://shop.example/dns' }]);
    for (let r = p.queue.shift(1); r; r = p.queue.shift(1)) await p.details.handle(r, 0);
    for (const u of ['404', 'pdf', 'dns']) assert.equal(p.details.rowFor({ url: `https://shop.example/${u}` }), null);
    assert.equal(p.progress.pagesScraped, 0);
    assert.deepEqual(p.warnings.list(), [
      'detail page https://shop.example/404: answered HTTP 404',
      'detail page https://shop.example/pdf: is application/pdf, not an HTML page',
      'detail page https://shop.example/dns: no such host',
    ]);
  });

  it('a failure that is not a page load failure (a crashed page) fails the run', async () => {
    const p = parts(CONFIG, new FakeLoader({ 'https://shop.example/a': { error: new CodedError('page_crashed', 'tab crashed') } }));
    p.details.enqueue([{ url: 'https://shop.example/a' }]);
    await assert.rejects(p.details.handle(p.queue.shift(1)!, 0), (e: Error & { code?: string }) => e.code === 'page_crashed');
  });

  it('drop() gives the fields their defaults; a row without a link has none', () => {
    const p = parts(CONFIG, new FakeLoader({}));
    p.details.enqueue([{ url: 'https://shop.example/a' }]);
    p.details.drop(p.queue.shift(1)!);
    assert.equal(p.details.rowFor({ url: 'https://shop.example/a' }), null);
    assert.equal(p.details.rowFor({ name: 'x' }), null);
  });

  it('one session per worker, reused page after page', async () => {
    const pages = Object.fromEntries(['a', 'b', 'c', 'd'].map((n) => [`https://shop.example/${n}`, DETAIL]));
    const loader = new FakeLoader(pages);
    const p = parts(CONFIG, loader);
    p.details.enqueue(Object.keys(pages).map((url) => ({ url })));
    let w = 0;
    for (let r = p.queue.shift(1); r; r = p.queue.shift(1)) await p.details.handle(r, w++ % 2);
    assert.equal(loader.opened, 2);
    await p.sessions.closeAll();
    assert.equal(loader.closed, 2);
  });
});
