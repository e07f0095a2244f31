/**
 * Parity of API configs (target.api, issue 38; docs/config-language.md, "Reading a JSON API") on the two engines:
 * each case runs the same config through the crawler over the HTTP loader and over the browser loader (real Chromium
 * for the detail pages; the API requests go over HTTP through the fetcher on both), and asserts identical rows, page
 * counts, item counts and warnings, and what the fixture's data says the rows must be. Failing first answers must fail
 * with the same code on both. Each pagination kind (page, offset, cursor, next_url), each stop condition (an empty
 * answer, max_pages, max_items, a total count, has-more), each error of an answer.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allAuthors, allQuotes } from '../fixtures/site/quotes.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runHeavy, runLightweight, type CrawlResult } from '../../lambdas/engine/engines.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';

const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });

interface Case {
  name: string;
  yaml: (site: string) => string;
  expect?: (r: CrawlResult, site: string) => void;
  /** The code both engines must fail with, and what its message says. */
  error?: [string, RegExp];
}

const QUOTE_FIELDS = `    - { name: text, path: text }
    - { name: author, path: author }
    - { name: tags, path: tags }
`;
const texts = (n: number, from = 0) => allQuotes().slice(from, from + n).map((q) => q.text);
const N = allQuotes().length;

const CASES: Case[] = [
  {
    name: 'page: {page} in the URL, has_more_path ends it, detail pages from a link made by a template',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/?page={page}", headers: { X-Requested-With: XMLHttpRequest } } }
extract:
  records: quotes
  fields:
${QUOTE_FIELDS}    - { name: about, path: author_slug, type: link, transform: ["template:/quotes/author/{value}/"] }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
pagination: { type: page, max_pages: 2, has_more_path: has_next }
`,
    expect: (r, s) => {
      const quotes = allQuotes().slice(0, 20);
      assert.deepEqual(r.rows.map((x) => x.text), quotes.map((q) => q.text));
      assert.deepEqual(r.rows.map((x) => x.tags), quotes.map((q) => q.tags));
      assert.equal(r.rows[0]!.about, `${s}/quotes/author/${quotes[0]!.authorSlug}/`);
      for (const [i, row] of r.rows.entries()) assert.equal(row.born, allAuthors().get(quotes[i]!.authorSlug)!.bornDate);
      assert.deepEqual(r.pageCounts, { listing: 2, detail: new Set(quotes.map((q) => q.authorSlug)).size, index: 0 });
    },
  },
  {
    name: 'page: an answer with no records ends the listing (one request past the end)',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/", query: { page: "{page}", tag: love } } }
extract: { records: quotes, fields: [{ name: text, path: text }] }
pagination: { type: page, max_pages: 50 }
`,
    expect: (r) => {
      const love = allQuotes().filter((q) => q.tags.includes('love'));
      assert.deepEqual(r.rows.map((x) => x.text), love.map((q) => q.text));
      assert.equal(r.pagesScraped, Math.ceil(love.length / 10) + 1, 'the pages, and the empty one after them');
    },
  },
  {
    name: 'offset: {offset} in the query, the step is the records of each answer, total_path ends it without a request past the end',
    yaml: (s) => `target: { url: "${s}/js/feed/", api: { url: "/api/feed/", query: { offset: "{offset}", limit: 30 } } }
extract:
  records: data.items
  fields:
    - { name: id, path: id }
    - { name: text, path: quote.body }
    - { name: author, path: quote.by.name }
pagination: { type: offset, max_pages: 100, total_path: meta.total }
`,
    expect: (r) => {
      assert.deepEqual(r.rows.map((x) => x.text), texts(N));
      assert.deepEqual(r.rows.slice(0, 3).map((x) => x.id), [1, 2, 3], 'numbers stay numbers');
      assert.equal(r.pagesScraped, Math.ceil(N / 30));
    },
  },
  {
    name: 'offset with a step and a start, max_pages',
    yaml: (s) => `target: { url: "${s}/js/feed/", api: { url: "/api/feed/?offset={offset}&limit=5" } }
extract: { records: data.items, fields: [{ name: text, path: quote.body }] }
pagination: { type: offset, start: 10, step: 20, max_pages: 3 }
`,
    expect: (r) => assert.deepEqual(r.rows.map((x) => x.text), [...texts(5, 10), ...texts(5, 30), ...texts(5, 50)]),
  },
  {
    name: 'POST with a JSON body: {page} becomes a number, total_path ends it',
    yaml: (s) => `target:
  url: "${s}/js/search-post/?q=life"
  api: { url: /api/search, method: POST, body: { query: life, page: "{page}", per_page: 4 } }
extract:
  records: results
  fields:
${QUOTE_FIELDS}pagination: { type: page, max_pages: 100, total_path: total }
`,
    expect: (r) => {
      const life = allQuotes().filter((q) => q.text.toLowerCase().includes('life') || q.tags.includes('life'));
      assert.deepEqual(r.rows.map((x) => x.text), life.map((q) => q.text));
      assert.equal(r.pagesScraped, Math.ceil(life.length / 4));
    },
  },
  {
    name: 'cursor: the first request without it, then each answer\'s end_cursor, until has_next_page is false',
    yaml: (s) => `target: { url: "${s}/js/cursor/", api: { url: "/api/cursor/", query: { first: 40, after: "{cursor}" } } }
extract:
  records: edges[].node
  fields:
${QUOTE_FIELDS}pagination: { type: cursor, cursor_path: page_info.end_cursor, has_more_path: page_info.has_next_page, max_pages: 20 }
`,
    expect: (r) => {
      assert.deepEqual(r.rows.map((x) => x.text), texts(N));
      assert.equal(r.pagesScraped, Math.ceil(N / 40));
    },
  },
  {
    name: 'next_url: a relative next URL read from each answer, until it is null',
    yaml: (s) => `target: { url: "${s}/js/quotes/", api: { url: "/api/links/?page=1" } }
extract: { records: items, fields: [{ name: text, path: text }] }
pagination: { type: next_url, next_url_path: links.next, max_pages: 20 }
`,
    expect: (r) => {
      assert.deepEqual(r.rows.map((x) => x.text), texts(N));
      assert.equal(r.pagesScraped, Math.ceil(N / 10));
    },
  },
  {
    name: 'stop_condition.max_items, then dedupe on a field and a limit',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/?page={page}" } }
extract: { records: quotes, fields: [{ name: author, path: author }, { name: text, path: text }] }
pagination: { type: page, max_pages: 10, stop_condition: { max_items: 25 } }
output: { deduplicate_fields: [author], limit: 6 }
`,
    expect: (r) => {
      const seen = new Set<string>();
      const firsts = allQuotes().slice(0, 25).filter((q) => !seen.has(q.author) && seen.add(q.author)).slice(0, 6);
      assert.deepEqual(r.rows.map((x) => x.author), firsts.map((q) => q.author));
      assert.equal(r.itemsFound, 25);
      assert.equal(r.pagesScraped, 3);
    },
  },
  {
    name: 'output.limit without dedupe stops the requests early',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/?page={page}" } }
extract: { records: quotes, fields: [{ name: text, path: text }] }
pagination: { type: page, max_pages: 10 }
output: { limit: 12 }
`,
    expect: (r) => {
      assert.deepEqual(r.rows.map((x) => x.text), texts(12));
      assert.equal(r.pagesScraped, 2);
    },
  },
  {
    name: 'field types and transforms on JSON values; single takes the first record',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/?page=2" } }
extract:
  type: single
  records: quotes
  fields:
    - { name: author, path: author, transform: [uppercase] }
    - { name: words, path: text, transform: ["split: :0", "replace:“:"] }
    - { name: tag_count, path: tags, type: count }
    - { name: has_tags, path: "tags[0]", type: exists }
    - { name: first_tag, path: "tags[0]", default: none }
    - { name: missing, path: nope, default: "n/a" }
    - { name: initial, path: author, type: regex, pattern: "^(\\\\w)" }
    - { name: slug_upper, path: "upper(author_slug)" }
    - { name: all_tags, path: "join(', ', tags)" }
    - { name: one, path: author, multiple: true }
`,
    expect: (r) => {
      const q = allQuotes()[10]!;
      assert.ok(q.tags.length > 0, 'the fixture quote has tags');
      assert.deepEqual(r.rows, [{
        author: q.author.toUpperCase(), words: q.text.split(' ')[0]!.replace('“', ''), tag_count: q.tags.length, has_tags: true,
        first_tag: q.tags[0], missing: 'n/a', initial: q.author[0], slug_upper: q.authorSlug.toUpperCase(), all_tags: q.tags.join(', '), one: [q.author],
      }]);
    },
  },
  {
    name: 'a later answer that is not JSON ends the listing with a warning; the rows so far are kept',
    yaml: (s) => `target: { url: "${s}/js/quotes/", api: { url: "/api/links/?page=1&broken=1" } }
extract: { records: items, fields: [{ name: text, path: text }] }
pagination: { type: next_url, next_url_path: links.next }
`,
    expect: (r, s) => {
      assert.deepEqual(r.rows.map((x) => x.text), texts(10));
      assert.equal(r.warnings.length, 1);
      assert.match(r.warnings[0]!, new RegExp(`^API request GET ${s}/api/not-json/: The API's answer from ${s}/api/not-json/ is not JSON: text/html, starting "<!DOCTYPE html>`));
    },
  },
  {
    name: 'a next request sent already ends the listing with a warning',
    yaml: (s) => `target: { url: "${s}/js/quotes/", api: { url: "/api/links/?page=1&loop=1" } }
extract: { records: items, fields: [{ name: text, path: text }] }
pagination: { type: next_url, next_url_path: links.next }
`,
    expect: (r, s) => {
      assert.deepEqual(r.rows.map((x) => x.text), texts(20));
      assert.deepEqual(r.warnings, [`pagination: the API's next request GET ${s}/api/links/?page=1&loop=1 was sent already; the listing ends there`]);
    },
  },
  {
    name: 'a first answer with an empty list completes with a warning, not silently',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/?page=99" } }
extract: { records: quotes, fields: [{ name: text, path: text }] }
`,
    expect: (r) => {
      assert.deepEqual(r.rows, []);
      assert.deepEqual(r.warnings, ['the API\'s first answer has no records at extract.records "quotes" (an empty list)']);
    },
  },
  {
    name: 'an answer that is not JSON',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/not-json/" } }\nextract: { records: quotes, fields: [{ name: text, path: text }] }\n`,
    error: ['api_not_json', /is not JSON: text\/html, starting "<!DOCTYPE html>/],
  },
  {
    name: 'an answer nested too deep',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/deep/" } }\nextract: { fields: [{ name: a, path: a }] }\n`,
    error: ['api_not_json', /nests deeper than 100 levels/],
  },
  {
    name: 'an answer too large',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/huge/?mb=11" } }\nextract: { records: items, fields: [{ name: a, path: a }] }\n`,
    error: ['response_too_large', /exceeds the limit of 10485760 bytes|is 1\d+ bytes, limit 10485760/],
  },
  {
    name: 'no records at the path',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/" } }\nextract: { records: data.quotes, fields: [{ name: text, path: text }] }\n`,
    error: ['api_no_records', /extract.records "data.quotes" gives nothing on the API's answer .*; the answer is an object with keys page, has_next, total, quotes/],
  },
  {
    name: 'a scalar at the path',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/" } }\nextract: { records: total, fields: [{ name: text, path: text }] }\n`,
    error: ['api_no_records', /gives a number \(100\)/],
  },
  {
    name: 'a first answer of 405',
    yaml: (s) => `target: { url: "${s}/js/search-post/", api: { url: "/api/search" } }\nextract: { records: results, fields: [{ name: text, path: text }] }\n`,
    error: ['target_failed', /answered HTTP 405/],
  },
  {
    name: 'a query past its bounds',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "/api/quotes/" } }\nextract: { records: "${Array.from({ length: 24 }, () => '[@,@][]').join(' | ')}", fields: [{ name: a, path: a }] }\n`,
    error: ['api_query_limit', /passed its bound \(an array of \d+ elements\)/],
  },
  {
    name: 'an endpoint the outbound guard refuses',
    yaml: (s) => `target: { url: "${s}/js/scroll/", api: { url: "http://169.254.169.254/latest/meta-data/" } }\nextract: { fields: [{ name: a, path: a }] }\n`,
    error: ['target_forbidden', /169\.254\.169\.254/],
  },
];

describe('parity: an API config gives the same rows on both engines', () => {
  let site: FixtureSite;
  let host: BrowserHost;
  before(async () => {
    site = await startFixtureSite();
    host = new BrowserHost({ guard });
  });
  after(async () => {
    await host?.close();
    await site?.close();
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const config = parseConfig(c.yaml(site.url));
      const http = runLightweight(config, { outbound: { allow: ['127.0.0.0/8'] } });
      const browser = runHeavy(config, { host });
      if (c.error) {
        const [h, b] = await Promise.allSettled([http, browser]);
        const reasons = [h, b].map((x) => (x.status === 'rejected' ? x.reason as Error & { code?: string } : null));
        assert.ok(reasons[0] && reasons[1], 'both engines failed');
        assert.deepEqual(reasons.map((e) => e!.code), [c.error[0], c.error[0]], reasons.map(String).join(' | '));
        for (const e of reasons) assert.match(e!.message, c.error[1]);
        return;
      }
      const [h, b] = await Promise.all([http, browser]);
      assert.equal(h.engine, 'lightweight');
      assert.equal(b.engine, 'heavy');
      assert.deepEqual(b.rows, h.rows, 'rows');
      assert.equal(b.pagesScraped, h.pagesScraped, 'pages scraped');
      assert.equal(b.itemsFound, h.itemsFound, 'items found');
      assert.deepEqual(b.warnings, h.warnings, 'warnings');
      c.expect?.(h, site.url);
    });
  }
});
