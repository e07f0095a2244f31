/**
 * A run spread over reader threads (lambdas/adapters/local/reader-pool.ts) gives exactly what a run read on one thread
 * gives: the same rows in the same order, the same warnings, page counts, items found and final progress, for a
 * listing with detail pages, click pagination with detail pages shared between pages, numbered (url) pagination,
 * categories, and the page limit and output.limit cutting runs short (issue 42, item 1). Each config runs three ways
 * over the loopback fixture site: on the calling thread (no pool), spread (two reader threads that each hold at most
 * one page, so both threads and the calling thread read), and handed off (one reader thread that takes every page);
 * the pool's counts show where the pages were read. A reader thread that runs out of memory on a page loses nothing:
 * the page is read again on the calling thread.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { ReaderPool } from '../../lambdas/adapters/local/reader-pool.ts';
import type { CrawlResult, RunProgress } from '../../lambdas/engine/engines.ts';
import { BOOK_CONFIG, runYaml, serveInline } from './helpers.ts';

const BOOKS = BOOK_CONFIG;

const QUOTES = (url: string, rest: string) => `target: { url: "${url}" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
    - { name: tags, selector: a.tag, multiple: true }
${rest}`;

/** What a run gave, as compared between the ways of reading. */
interface Outcome {
  result: CrawlResult;
  last: RunProgress;
  /** Whether the progress never went down. */
  monotonic: boolean;
}

async function run(yaml: string, o: { readers?: ReaderPool; maxPages?: number } = {}): Promise<Outcome> {
  const reports: RunProgress[] = [];
  const result = await runYaml(yaml, { concurrency: 4, onProgress: (p) => reports.push(p), ...(o.readers ? { readers: o.readers } : {}), ...(o.maxPages ? { maxPages: o.maxPages } : {}) });
  assert.ok(reports.length > 0);
  return { result, last: reports.at(-1)!, monotonic: reports.every((p, i) => i === 0 || p.progress >= reports[i - 1]!.progress) };
}

/** Asserts two outcomes are the same in everything a user sees. */
function assertSame(actual: Outcome, expected: Outcome, label: string): void {
  assert.deepEqual(actual.result.rows, expected.result.rows, `${label}: rows, in order`);
  assert.deepEqual(actual.result.warnings, expected.result.warnings, `${label}: warnings`);
  assert.deepEqual(actual.result.pageCounts, expected.result.pageCounts, `${label}: page counts`);
  assert.equal(actual.result.pagesScraped, expected.result.pagesScraped, `${label}: pages scraped`);
  assert.equal(actual.result.itemsFound, expected.result.itemsFound, `${label}: items found`);
  assert.deepEqual(actual.last, expected.last, `${label}: the final progress`);
  assert.ok(actual.monotonic && expected.monotonic, `${label}: progress never goes down`);
}

describe('reading pages on reader threads', () => {
  let site: FixtureSite;
  let spread: ReaderPool;
  let handedOff: ReaderPool;
  before(async () => {
    site = await startFixtureSite();
    spread = new ReaderPool({ threads: 2, depth: 1 });
    handedOff = new ReaderPool({ threads: 1, depth: 1_000 });
  });
  after(async () => {
    await spread.close();
    await handedOff.close();
    await site.close();
  });

  const cases: Array<[string, (url: string) => string, { maxPages?: number; rows: number; warnings?: RegExp }]> = [
    ['a listing with detail pages', (u) => BOOKS(`${u}/books/`), { rows: 20 }],
    ['click pagination, detail pages shared by every listing page', (u) => BOOKS(`${u}/books/`, 'pagination: { type: click, selector: "li.next a", max_pages: 10 }\n'), { rows: 60 }],
    ['numbered pagination (url_pattern)', (u) => QUOTES(`${u}/quotes/`, `pagination: { type: url, url_pattern: "${u}/quotes/page/{page}/", max_pages: 4 }\n`), { rows: 40 }],
    ['categories', (u) => QUOTES(`${u}/quotes/`, 'categories: { container: div.tags-box, link_selector: a.tag, max_categories: 4, wait_after: 0 }\n'), { rows: 0 }],
    ['the page limit cuts detail pages short', (u) => BOOKS(`${u}/books/`, 'pagination: { type: click, selector: "li.next a", max_pages: 10 }\n'), { maxPages: 12, rows: 60, warnings: /page limit of 12 pages/ }],
    ['output.limit stops the listings', (u) => BOOKS(`${u}/books/`, 'pagination: { type: click, selector: "li.next a", max_pages: 10 }\noutput: { limit: 30 }\n'), { rows: 30 }],
  ];

  for (const [name, yaml, expect] of cases) {
    it(`${name}: the same rows, order, warnings, page counts and progress on one thread, spread, and handed off`, async () => {
      const config = yaml(site.url);
      const opts = expect.maxPages ? { maxPages: expect.maxPages } : {};
      const one = await run(config, opts);
      if (expect.rows) assert.equal(one.result.rows.length, expect.rows);
      else assert.ok(one.result.rows.length > 10, 'categories give rows');
      if (expect.warnings) assert.ok(one.result.warnings.some((w) => expect.warnings!.test(w)), one.result.warnings.join(' | '));
      else assert.deepEqual(one.result.warnings, []);

      const before = { ...spread.counts };
      assertSame(await run(config, { ...opts, readers: spread }), one, 'spread');
      // The categories' index page is read where the categories are (engine/crawl/categories.ts), not by the reader.
      const pages = one.result.pageCounts.listing + one.result.pageCounts.detail;
      const spreadThreads = spread.counts.threads - before.threads;
      const spreadHere = spread.counts.here - before.here;
      assert.equal(spreadThreads + spreadHere, pages, 'every page read once');
      assert.ok(spreadThreads > 0, `some pages read on reader threads (${spreadThreads} of ${pages})`);

      const beforeOff = { ...handedOff.counts };
      assertSame(await run(config, { ...opts, readers: handedOff }), one, 'handed off');
      assert.equal(handedOff.counts.threads - beforeOff.threads, pages, 'every page read on the reader thread');
      assert.equal(handedOff.counts.here - beforeOff.here, 0);
    });
  }

  it('pages go to the calling thread as well when the reader threads are full, and the runs of a pool stay apart', async () => {
    const pool = new ReaderPool({ threads: 1, depth: 1 });
    try {
      const books = BOOKS(`${site.url}/slow/5/books/`);
      const quotes = QUOTES(`${site.url}/quotes/`, `pagination: { type: url, url_pattern: "${site.url}/quotes/page/{page}/", max_pages: 3 }\n`);
      const [alone, quotesAlone] = [await run(books), await run(quotes)];
      // Two runs at once on one pool: each reads with its own config.
      const [a, b] = await Promise.all([run(books, { readers: pool }), run(quotes, { readers: pool })]);
      assertSame(a, alone, 'books beside quotes');
      assertSame(b, quotesAlone, 'quotes beside books');
      assert.ok(pool.counts.here > 0 && pool.counts.threads > 0, JSON.stringify(pool.counts));
      assert.equal(pool.threadCount, 1);
    } finally {
      await pool.close();
    }
    const closed = new ReaderPool({ threads: 1 });
    const reader = closed.forConfig((await import('../../lambdas/engine/config.ts')).parseConfig(BOOKS(`${site.url}/books/`)));
    reader.close();
    await assert.rejects(reader.readDetail('<p>x</p>', `${site.url}/x`), /after its run ended/);
    await closed.close();
  });

  it('a reader thread that runs out of memory on a page loses nothing: the page is read on the calling thread', async () => {
    // 150,000 list items (about 4 MB): a tree far larger than a reader thread with a 24 MB heap can hold.
    const big = `<!DOCTYPE html><html><head><title>Big</title></head><body><ul>${Array.from({ length: 150_000 }, (_, i) => `<li class="i">item ${i}</li>`).join('')}</ul></body></html>`;
    const server = await serveInline({ '/big/': big });
    const small = new ReaderPool({ threads: 1, depth: 1_000, resourceLimits: { maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 4 } });
    try {
      const config = `target: { url: "${server.url}/big/" }\nextract:\n  type: single\n  fields:\n    - { name: title, selector: title }\n    - { name: last, selector: "li:last-child" }\n`;
      const one = await run(config);
      assert.deepEqual(one.result.rows, [{ title: 'Big', last: 'item 149999' }]);
      assertSame(await run(config, { readers: small }), one, 'with the reader thread dying');
      assert.deepEqual(small.counts, { here: 1, threads: 1 }, 'sent to the thread, read again here');
      assert.equal(small.threadCount, 0, 'the dead thread is gone');
      // The next page starts a new thread.
      const books = BOOKS(`${site.url}/books/`);
      assertSame(await run(books, { readers: small }), await run(books), 'after the thread died');
      assert.equal(small.threadCount, 1);
    } finally {
      await small.close();
      await server.close();
    }
  });
});
