/**
 * The lightweight engine over the fixture quotes site (a quotes.toscrape.com look-alike over the fixture's own data):
 * click and url pagination, max_pages, stop_condition.max_items, wait_after, detail pages from author
 * links, categories from the top-ten tags box, and the output block. Expected rows come from the fixture's data
 * (quotes-data.ts) through the fixture's data functions or read here directly.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes, quotesWithTag, topTags, QUOTES_PER_PAGE } from '../fixtures/site/quotes.ts';
import { AUTHOR_RECORDS } from '../fixtures/site/quotes-data.ts';
import { nameKey, runYaml } from './helpers.ts';

const QUOTE_FIELDS = `extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
    - { name: tags, selector: a.tag, multiple: true }
`;

/** Number of listing pages with quotes: 100 quotes, 10 a page. */
const PAGES = Math.ceil(allQuotes().length / QUOTES_PER_PAGE);

/** The quotes as rows of QUOTE_FIELDS. */
const expectedRows = (quotes = allQuotes()) => quotes.map((q) => ({ text: q.text, author: q.author, tags: q.tags }));

/** born_at per author, read from the fixture's records directly (not through quotes.ts). */
function bornDates(): Map<string, string> {
  return new Map(AUTHOR_RECORDS.map((a) => [nameKey(a.name), a.born_at]));
}

describe('quotes site', () => {
  let site: FixtureSite;
  before(async () => { site = await startFixtureSite(); });
  after(async () => { await site.close(); });
  beforeEach(() => { site.hits.clear(); });

  const listingHits = () => [...site.hits.keys()].filter((k) => /^\/quotes\/(page\/\d+\/)?$/.test(k)).sort();

  it('sanity: the fixture has 100 quotes, 10 listing pages', () => {
    assert.equal(allQuotes().length, 100);
    assert.equal(PAGES, 10);
  });

  describe('stopSignal (the extension\'s stop button)', () => {
    it('ends a 10-page run after the pages started when it fires: their rows are kept, nothing more is loaded, and a warning says so', async () => {
      const stop = new AbortController();
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination:\n  type: click\n  selector: li.next a\n  max_pages: 50\n`, {
        concurrency: 1,
        stopSignal: stop.signal,
        onProgress: (p) => { if (p.pagesScraped >= 2) stop.abort(); },
      });
      assert.ok(r.rows.length >= 20 && r.rows.length <= 30, `rows of 2 or 3 pages, got ${r.rows.length}`);
      assert.deepEqual(r.rows, expectedRows().slice(0, r.rows.length));
      assert.equal(listingHits().length, r.pagesScraped, 'no page loaded after the stop beyond those read');
      assert.ok(r.pagesScraped < PAGES);
      assert.deepEqual(r.warnings, [`stopped by the user after ${r.pagesScraped} page(s)`]);
    });

    it('a signal stopped before the run starts gives no rows and the warning, without throwing', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}`, { stopSignal: AbortSignal.abort() });
      assert.deepEqual(r.rows, []);
      assert.equal(r.pagesScraped, 0);
      assert.deepEqual(r.warnings, ['stopped by the user after 0 page(s)']);
    });
  });

  describe('click pagination', () => {
    it('follows li.next a over all 10 pages: 100 rows with text, author and tags in the fixture order', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination:\n  type: click\n  selector: li.next a\n  max_pages: 50\n`);
      assert.equal(r.rows.length, 100);
      assert.deepEqual(r.rows, expectedRows());
      assert.equal(r.pagesScraped, PAGES);
      assert.equal(r.itemsFound, 100);
      assert.deepEqual(r.warnings, []);
      assert.equal(r.engine, 'lightweight');
      for (let p = 2; p <= PAGES; p++) assert.equal(site.hits.get(`/quotes/page/${p}/`), 1, `page ${p} once`);
      assert.equal(site.hits.get('/quotes/'), 1);
      assert.equal(site.hits.get(`/quotes/page/${PAGES + 1}/`), undefined, 'no next link on the last page');
    });

    it('max_pages counts the first page', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination: { type: click, selector: "li.next a", max_pages: 3 }\n`);
      assert.deepEqual(r.rows, expectedRows(allQuotes().slice(0, 30)));
      assert.equal(r.pagesScraped, 3);
      assert.deepEqual(listingHits(), ['/quotes/', '/quotes/page/2/', '/quotes/page/3/']);
    });

    it('without pagination only target.url is scraped', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}`);
      assert.deepEqual(r.rows, expectedRows(allQuotes().slice(0, QUOTES_PER_PAGE)));
      // Each run reads robots.txt first (docs/crawler.md, "robots.txt"), once; of pages, only target.url.
      assert.deepEqual(Object.fromEntries(site.hits), { '/robots.txt': 1, '/quotes/': 1 });
    });

    it('stop_condition.max_items stops mid-page and fetches no page after it', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination:\n  type: click\n  selector: li.next a\n  stop_condition: { max_items: 25 }\n`);
      assert.deepEqual(r.rows, expectedRows(allQuotes().slice(0, 25)));
      assert.equal(r.itemsFound, 25);
      assert.deepEqual(listingHits(), ['/quotes/', '/quotes/page/2/', '/quotes/page/3/']);
    });

    it('stop_condition.max_items on a page boundary does not fetch the next page', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination:\n  type: click\n  selector: li.next a\n  stop_condition: { max_items: 20 }\n`);
      assert.equal(r.rows.length, 20);
      assert.deepEqual(listingHits(), ['/quotes/', '/quotes/page/2/']);
    });

    it('wait_after waits before each next page', async () => {
      const wait = 200;
      const started = Date.now();
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination: { type: click, selector: "li.next a", max_pages: 3, wait_after: ${wait} }\n`);
      const elapsed = Date.now() - started;
      assert.equal(r.rows.length, 30);
      // Two waits: before page 2 and before page 3. Only a lower bound: load makes a run slower, never
      // faster, so this cannot flake (comparing against a run without waits could; timing is bench/'s).
      assert.ok(elapsed >= 2 * wait - 5, `took ${elapsed} ms, expected at least ${2 * wait}`);
    });
  });

  describe('url pagination', () => {
    it('{page} counts from 2: target.url is page 1, then the pattern with 2..max_pages', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination:\n  type: url\n  url_pattern: "${site.url}/quotes/page/{page}/"\n  max_pages: 4\n`);
      assert.deepEqual(r.rows, expectedRows(allQuotes().slice(0, 40)));
      assert.deepEqual(listingHits(), ['/quotes/', '/quotes/page/2/', '/quotes/page/3/', '/quotes/page/4/']);
      assert.equal(site.hits.get('/quotes/page/1/'), undefined, 'page 1 is target.url, not the pattern with 1');
      assert.equal(r.pagesScraped, 4);
    });

    it('stops at the first page without items (the real site says "No quotes found!")', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination:\n  type: url\n  url_pattern: "${site.url}/quotes/page/{page}/"\n  max_pages: 50\n`);
      assert.deepEqual(r.rows, expectedRows());
      assert.equal(r.pagesScraped, PAGES + 1, 'the ten pages and the empty one after them');
      assert.equal(site.hits.get(`/quotes/page/${PAGES + 1}/`), 1);
      assert.equal(site.hits.get(`/quotes/page/${PAGES + 2}/`), undefined);
    });

    it('a relative url_pattern resolves against target.url', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination: { type: url, url_pattern: "page/{page}/", max_pages: 2 }\n`);
      assert.deepEqual(r.rows, expectedRows(allQuotes().slice(0, 20)));
      assert.deepEqual(listingHits(), ['/quotes/', '/quotes/page/2/']);
    });

    it('max_items applies to url pagination too', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination:\n  type: url\n  url_pattern: "/quotes/page/{page}/"\n  stop_condition: { max_items: 12 }\n`);
      assert.deepEqual(r.rows, expectedRows(allQuotes().slice(0, 12)));
      assert.deepEqual(listingHits(), ['/quotes/', '/quotes/page/2/']);
    });
  });

  describe('detail_fields from author pages', () => {
    it('adds born date and place to every quote; each author page is fetched once', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
    - { name: about, selector: 'a[href*="/author/"]', type: link }
detail_fields:
  fields:
    - { name: name, selector: h3.author-title }
    - { name: born, selector: .author-born-date }
    - { name: born_in, selector: .author-born-location, transform: ["replace:in :", strip] }
pagination: { type: click, selector: "li.next a" }
`);
      const born = bornDates();
      const authors = new Set(allQuotes().map((q) => q.author));
      assert.equal(r.rows.length, 100);
      r.rows.forEach((row, i) => {
        const q = allQuotes()[i]!;
        assert.equal(row.text, q.text);
        assert.equal(row.author, q.author);
        assert.equal(nameKey(row.name as string), nameKey(q.author), 'the detail page is that author');
        assert.equal(row.born, born.get(nameKey(q.author)), `born date of ${q.author}`);
        assert.ok(typeof row.born_in === 'string' && row.born_in.length > 0 && !row.born_in.startsWith('in '));
        assert.deepEqual(Object.keys(row), ['text', 'author', 'about', 'name', 'born', 'born_in'], 'detail fields after the item fields');
      });
      assert.equal(r.rows[0]!.born, 'March 3, 1881', 'Ada Whitmore, as in quotes-data.ts');
      const authorHits = [...site.hits.entries()].filter(([k]) => k.startsWith('/quotes/author/'));
      assert.equal(authorHits.length, authors.size);
      assert.ok(authorHits.every(([, n]) => n === 1), 'every author page fetched once');
      assert.equal(r.pagesScraped, PAGES + authors.size);
      assert.deepEqual(r.warnings, []);
    });
  });

  describe('categories over the top-ten tags box', () => {
    it('crawls each tag with its pagination; rows carry _category and _category_url; counts match the fixture data', async () => {
      const progress: number[] = [];
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
pagination: { type: click, selector: "li.next a" }
categories:
  container: div.tags-box
  link_selector: a.tag
  wait_after: 0
`, { onProgress: (p) => progress.push(p.progress) });
      const tags = topTags(10);
      assert.equal(tags.length, 10);
      const expected = tags.flatMap((tag) => quotesWithTag(tag).map((q) => ({
        text: q.text,
        _category: tag,
        _category_url: `${site.url}/quotes/tag/${encodeURIComponent(tag)}/`,
      })));
      assert.deepEqual(r.rows, expected);
      for (const tag of tags) {
        assert.equal(r.rows.filter((row) => row._category === tag).length, quotesWithTag(tag).length, tag);
      }
      // Some top tags have more than one page: pagination ran inside the category.
      const paged = tags.filter((t) => quotesWithTag(t).length > QUOTES_PER_PAGE);
      assert.ok(paged.length > 0);
      for (const tag of paged) assert.equal(site.hits.get(`/quotes/tag/${encodeURIComponent(tag)}/page/2/`), 1, tag);
      assert.equal(progress.at(-1), 99);
    });

    it('max_categories keeps the first N links in page order', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
pagination: { type: click, selector: "li.next a" }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 3, wait_after: 0 }
`);
      const tags = topTags(10);
      assert.deepEqual([...new Set(r.rows.map((row) => row._category))], tags.slice(0, 3));
      assert.equal(r.rows.length, tags.slice(0, 3).reduce((n, t) => n + quotesWithTag(t).length, 0));
      for (const tag of tags.slice(3)) {
        assert.equal(site.hits.get(`/quotes/tag/${encodeURIComponent(tag)}/`), undefined, `${tag} not crawled`);
      }
    });

    it('a relative url_pattern pages each category from its own URL', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
pagination: { type: url, url_pattern: "page/{page}/" }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 2, wait_after: 0 }
`);
      const tags = topTags(2);
      assert.deepEqual(r.rows.map((row) => [row._category, row.text]), tags.flatMap((t) => quotesWithTag(t).map((q) => [t, q.text])));
      assert.equal(site.hits.get('/quotes/page/2/'), undefined, 'not the target listing');
    });

    it('stop_condition.max_items applies to each category, not to the run', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
pagination: { type: click, selector: "li.next a", stop_condition: { max_items: 4 } }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 3, wait_after: 0 }
`);
      const tags = topTags(3);
      assert.deepEqual(r.rows.map((row) => [row._category, row.text]), tags.flatMap((t) => quotesWithTag(t).slice(0, 4).map((q) => [t, q.text])));
    });

    it('categories wait_after spaces the categories out', async () => {
      const wait = 150;
      const started = Date.now();
      await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 3, wait_after: ${wait} }
`);
      assert.ok(Date.now() - started >= 2 * wait, 'at least the waits between the three categories');
    });
  });

  describe('output', () => {
    it('deduplicate: the whole row, first occurrence kept, in order', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
pagination: { type: click, selector: "li.next a" }
output: { deduplicate: true }
`);
      const firstSeen = [...new Set(allQuotes().map((q) => q.author))];
      assert.ok(firstSeen.length < 100, 'authors repeat in the fixture quotes');
      assert.deepEqual(r.rows, firstSeen.map((author) => ({ author })));
      assert.equal(r.itemsFound, 100, 'items found counts before deduplication');
    });

    it('deduplicate_fields compares only those fields; other fields of the first row are kept', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
pagination: { type: click, selector: "li.next a" }
output: { deduplicate_fields: [author] }
`);
      const firsts = new Map<string, string>();
      for (const q of allQuotes()) if (!firsts.has(q.author)) firsts.set(q.author, q.text);
      assert.deepEqual(r.rows, [...firsts].map(([author, text]) => ({ text, author })));
    });

    it('limit after deduplication', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
pagination: { type: click, selector: "li.next a" }
output: { deduplicate: true, limit: 5 }
`);
      assert.deepEqual(r.rows, [...new Set(allQuotes().map((q) => q.author))].slice(0, 5).map((author) => ({ author })));
    });

    it('limit without deduplication stops the crawl once reached', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTE_FIELDS}pagination: { type: click, selector: "li.next a" }\noutput: { limit: 15 }\n`);
      assert.deepEqual(r.rows, expectedRows(allQuotes().slice(0, 15)));
      assert.deepEqual(listingHits(), ['/quotes/', '/quotes/page/2/']);
    });
  });
});
