/**
 * What a loaded page means (lambdas/engine/crawl/documents.ts), when a browser's page is ready
 * (lambdas/engine/crawl/readiness.ts), eval fields merged into rows (eval-fields.ts), and the run's rows and API
 * discovery (result.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CodedError } from '../../lambdas/errors.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import type { LoadedDocument } from '../../lambdas/engine/loaders/page-loader.ts';
import type { Listing } from '../../lambdas/engine/request-queue.ts';
import { firstPageError, isLoadFailure, loadFirst, messageOf, unreadable } from '../../lambdas/engine/crawl/documents.ts';
import { evalFieldsOf, mergeEval } from '../../lambdas/engine/crawl/eval-fields.ts';
import { detailReady, indexReady, listingReady, IMPLICIT_WAIT_MS } from '../../lambdas/engine/crawl/readiness.ts';
import { apiCarriesItems, collectRows } from '../../lambdas/engine/crawl/result.ts';
import { Warnings } from '../../lambdas/engine/crawl/warnings.ts';
import { FakeLoader } from './crawl-fakes.ts';

const doc = (o: Partial<LoadedDocument>): LoadedDocument => ({ requestedUrl: 'https://x.example/', url: 'https://x.example/', status: 200, contentType: 'text/html', html: '', ...o });

describe('crawl documents', () => {
  it('reads HTML and the types servers give markup; refuses 4xx/5xx and other types', () => {
    for (const t of ['text/html', 'application/xhtml+xml', 'text/plain', 'application/xml', 'text/xml', '']) assert.equal(unreadable(doc({ contentType: t, html: '<!DOCTYPE html><html><body><p>x</p>' })), null, t);
    // The one rule of page-facts.ts (pageKind): plain text, JSON and a body with no type that is not markup are not read.
    assert.equal(unreadable(doc({ contentType: 'application/rss+xml', html: '<?xml version="1.0"?><rss><channel>' })), null, 'a feed is read with selectors');
    for (const [t, html] of [['text/plain', 'just words'], ['application/json', '{"a":1}'], ['', 'just words']]) {
      assert.match(unreadable(doc({ contentType: t!, html: html! }))?.message ?? '', /not an HTML page$/, `${t}: ${html}`);
    }
    assert.deepEqual(unreadable(doc({ status: 404 })), { message: 'https://x.example/ answered HTTP 404', status: 404 });
    assert.deepEqual(unreadable(doc({ contentType: 'image/png' })), { message: 'https://x.example/ is image/png, not an HTML page', contentType: 'image/png' });
    assert.equal(unreadable(doc({ status: 399 })), null);
  });

  it('load failures that only warn, and the first page error', () => {
    for (const code of ['target_forbidden', 'dns_failed', 'fetch_failed', 'response_too_large'] as const) assert.ok(isLoadFailure(new CodedError(code, 'x')), code);
    assert.equal(isLoadFailure(new CodedError('page_crashed', 'x')), false);
    assert.equal(isLoadFailure(new Error('x')), false);
    const e = firstPageError(new CodedError('fetch_failed', 'reset\nstack'), 'https://x.example/') as CodedError;
    assert.equal(e.code, 'target_failed');
    assert.equal(e.message, 'https://x.example/ could not be loaded: reset');
    const dns = new CodedError('dns_failed', 'no host');
    assert.equal(firstPageError(dns, 'https://x.example/'), dns);
    assert.equal(messageOf('plain'), 'plain');
  });

  it('loadFirst: target_failed with status or content type in the details; a wait_selector time-out warns', async () => {
    const loader = new FakeLoader({ 'https://x.example/a': { status: 500 }, 'https://x.example/b': { contentType: 'application/json' } });
    const session = await loader.openSession();
    const o = { ready: undefined, signal: new AbortController().signal, warnings: new Warnings() };
    await assert.rejects(loadFirst(session, 'https://x.example/a', o), (e: CodedError) => e.code === 'target_failed' && JSON.stringify(e.details) === JSON.stringify([{ url: 'https://x.example/a', status: 500 }]));
    await assert.rejects(loadFirst(session, 'https://x.example/b', o), (e: CodedError) => JSON.stringify(e.details) === JSON.stringify([{ url: 'https://x.example/b', content_type: 'application/json' }]));
    const timed = await loadFirst({ load: async () => doc({ waitTimedOut: { selector: '#app', timeoutMs: 900 } }), close: async () => undefined }, 'https://x.example/', o);
    assert.equal(timed.status, 200);
    assert.deepEqual(o.warnings.list(), ['target.browser.wait_selector "#app" did not appear within 900 ms on https://x.example/']);
  });
});

describe('crawl readiness', () => {
  const base = `target: { url: "https://x.example/" }
extract:
  container: li.item
  fields:
    - { name: n, selector: span }
`;
  it('the wait_selector when given (explicit); else the items, capped at the implicit wait', () => {
    const explicit = parseConfig(base.replace('target: { url: "https://x.example/" }', 'target: { url: "https://x.example/", engine: heavy, browser: { wait_selector: "#app", timeout: 20000 } }'));
    assert.deepEqual(listingReady(explicit), { selector: '#app', timeoutMs: 20000, explicit: true });
    const c = parseConfig(base);
    assert.deepEqual(listingReady(c), { selector: 'li.item', timeoutMs: Math.min(c.target.browser.timeout, IMPLICIT_WAIT_MS), explicit: false });
  });

  it('a detail page: its first field that must be there (not eval, exists or count); none without', () => {
    const c = parseConfig(`${base}    - { name: url, selector: a, type: link }
detail_fields:
  fields:
    - { name: has, selector: .badge, type: exists }
    - { name: reviews, selector: .reviews li, type: count }
    - { name: price, selector: .price }
`);
    assert.equal(detailReady(c)?.selector, '.price');
    assert.equal(detailReady(parseConfig(base)), undefined);
  });

  it('the index page: its category links', () => {
    const c = parseConfig(`${base}categories: { link_selector: "nav a" }\n`);
    assert.equal(indexReady(c)?.selector, 'nav a');
  });
});

describe('crawl eval fields', () => {
  const specs = parseConfig(`target: { url: "https://x.example/", engine: heavy }
extract:
  container: li
  fields:
    - { name: id, type: eval, script: "el.dataset.id", transform: [to_number] }
    - { name: tag, type: eval, script: "el.dataset.tag", default: none }
    - { name: text, selector: span }
`).extract.fields;

  it('values go through the transforms; empty values and failures take the default, failures warn', () => {
    const fields = evalFieldsOf(specs);
    assert.deepEqual(fields.map((f) => f.name), ['id', 'tag']);
    const rows = [{ text: 'a' }, { text: 'b' }] as Array<Record<string, unknown>>;
    const warnings: string[] = [];
    mergeEval(rows, [[{ ok: true, value: '42' }, { ok: true, value: '' }], [{ ok: false, error: 'boom' }, { ok: true, value: 'new' }]], fields, specs, (m) => warnings.push(m));
    assert.deepEqual(rows, [{ text: 'a', id: 42, tag: 'none' }, { text: 'b', id: null, tag: 'new' }]);
    assert.deepEqual(warnings, ['eval field "id": boom']);
  });

  it('a different item count warns, and rows past the outcomes take the defaults', () => {
    const fields = evalFieldsOf(specs);
    const rows = [{}, {}] as Array<Record<string, unknown>>;
    const warnings: string[] = [];
    mergeEval(rows, [[{ ok: true, value: 1 }, { ok: true, value: 't' }]], fields, specs, (m) => warnings.push(m));
    assert.deepEqual(rows[1], { id: null, tag: 'none' });
    assert.deepEqual(warnings, ['eval fields: the page has 1 items where the HTML had 2; values matched by position', 'eval field "id": no matching item in the page', 'eval field "tag": no matching item in the page']);
  });
});

describe('crawl result', () => {
  const listing = (id: number, pages: Array<Array<Record<string, unknown>>>, meta: Record<string, unknown> = {}): Listing => ({ id, meta, start: '', pages, items: 0, reserved: 0, open: false });
  const specs = parseConfig(`target: { url: "https://x.example/" }
extract:
  container: li
  fields:
    - { name: url, selector: a, type: link }
detail_fields:
  fields:
    - { name: born, selector: .born }
    - { name: place, selector: .place, default: "?" }
`).detail_fields!.fields;

  it('rows in listing, page and item order; detail fields then category metadata last; pages not read are skipped', () => {
    const pages: Array<Array<Record<string, unknown>>> = [];
    pages[2] = [{ url: 'u3' }];
    pages[0] = [{ url: 'u1' }, { url: 'u2' }];
    const l0 = listing(0, pages, { _category: 'a', _category_url: 'https://x.example/a' });
    const l1 = listing(1, [[{ url: 'u4' }]]);
    const details: Record<string, Record<string, unknown>> = { u1: { born: '1900', place: 'Ulm' } };
    const rows = collectRows([l0, l1], specs, (r) => details[r.url as string] ?? null);
    assert.deepEqual(rows, [
      { url: 'u1', born: '1900', place: 'Ulm', _category: 'a', _category_url: 'https://x.example/a' },
      { url: 'u2', born: null, place: '?', _category: 'a', _category_url: 'https://x.example/a' },
      { url: 'u3', born: null, place: '?', _category: 'a', _category_url: 'https://x.example/a' },
      { url: 'u4', born: null, place: '?' },
    ]);
    assert.deepEqual(Object.keys(rows[0]!), ['url', 'born', 'place', '_category', '_category_url']);
  });

  it('without detail fields or categories the rows are passed as they are', () => {
    const row = { a: 1 };
    assert.equal(collectRows([listing(0, [[row]])], [], () => null)[0], row);
  });

  it('the API carried the items when half or more of the first 20 rows have a value of 3+ characters it had', () => {
    const rows = [{ t: 'alpha' }, { t: 'beta' }, { t: 'x' }, { t: 'gamma ' }];
    assert.equal(apiCarriesItems(rows, new Set(['alpha', 'gamma'])), true);
    assert.equal(apiCarriesItems(rows, new Set(['alpha'])), false);
    assert.equal(apiCarriesItems(rows, new Set(['x'])), false, 'values under 3 characters do not count');
    assert.equal(apiCarriesItems([], new Set(['alpha'])), false);
    assert.equal(apiCarriesItems(rows, new Set()), false);
    const many = [...Array.from({ length: 20 }, (_, i) => ({ t: `row ${i}` })), ...Array.from({ length: 30 }, () => ({ t: 'hit' }))];
    assert.equal(apiCarriesItems(many, new Set(['hit'])), false, 'only the first 20 rows count');
  });
});
