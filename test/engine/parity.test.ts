/**
 * Parity of the two page loaders (issue 8; docs/crawler.md): every case runs the same config through the one
 * crawler over the HTTP loader and over the browser loader (real Chromium), and asserts identical rows, page
 * counts, item counts and warnings, plus what the fixture data says the rows must be (independent of the
 * engine: the fixture's quotes and authors, the books fixture's values, the pages' own structure). Failing
 * first pages must fail with the same code on both.
 *
 * The static fixture pages are what a browser renders too, so any difference is the crawler's or the parser's:
 * a mis-nested heading (`<h3>…</h2>`, every real quotes.toscrape.com author page) and a table without
 * `<tbody>` in its source (every real books.toscrape.com detail page) must read as a browser reads them.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allAuthors, allQuotes, authorSlug, quotesWithTag, topTags } from '../fixtures/site/quotes.ts';
import { bookDetails } from '../fixtures/site/books.ts';
import { tablefulConfigYaml } from '../fixtures/site/quotes-config.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runHeavy, runLightweight, type CrawlOptions, type CrawlResult } from '../../lambdas/engine/engines.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { DEFAULT_USER_AGENT, Fetcher } from '../../lambdas/net/fetch.ts';
import { homePods, serveInline, type InlinePage, type InlineServer } from './helpers.ts';

const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });

const QUOTES = `  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
    - { name: tags, selector: a.tag, multiple: true }
`;

interface Case {
  name: string;
  /** The config, given the fixture site's and the inline server's base URLs. */
  yaml: (site: string, inline: string) => string;
  options?: CrawlOptions;
  /** Independent expectations on the (shared) result. */
  expect?: (r: CrawlResult, site: string) => void;
  /** The code both loaders must fail with. */
  error?: string;
}

const text = (quotes = allQuotes()) => quotes.map((q) => q.text);

const CASES: Case[] = [
  {
    name: 'click pagination with detail pages (author pages with the real <h3>…</h2> markup)',
    yaml: (s) => `target: { url: "${s}/quotes/" }
extract:
${QUOTES}    - { name: about, selector: "a[href*='/author/']", type: link }
detail_fields:
  fields:
    - { name: name, selector: h3.author-title, transform: [strip] }
    - { name: born, selector: span.author-born-date }
pagination: { type: click, selector: "li.next a", max_pages: 3 }
`,
    expect: (r) => {
      const quotes = allQuotes().slice(0, 30);
      assert.deepEqual(r.rows.map((row) => row.text), text(quotes));
      for (const [i, row] of r.rows.entries()) {
        const author = allAuthors().get(quotes[i]!.authorSlug)!;
        assert.equal(row.name, author.name, 'the heading ends at </h2>: the name only');
        assert.equal(row.born, author.bornDate);
      }
      assert.equal(r.pagesScraped, 3 + new Set(quotes.map((q) => q.authorSlug)).size, 'each author page once');
    },
  },
  {
    name: 'url pagination, absolute url_pattern, with detail pages',
    yaml: (s) => `target: { url: "${s}/quotes/" }
extract:
${QUOTES}    - { name: about, selector: "a[href*='/author/']", type: link }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
pagination: { type: url, url_pattern: "${s}/quotes/page/{page}/", max_pages: 4 }
`,
    expect: (r) => {
      assert.deepEqual(r.rows.map((row) => row.text), text(allQuotes().slice(0, 40)));
      assert.ok(r.rows.every((row) => row.born === allAuthors().get(authorSlug(row.author as string))!.bornDate));
    },
  },
  {
    name: 'categories with a relative url_pattern: each category paged from its own URL',
    yaml: (s) => `target: { url: "${s}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
pagination: { type: url, url_pattern: "page/{page}/" }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 3, wait_after: 0 }
`,
    expect: (r, s) => {
      const tags = topTags(3);
      assert.deepEqual(r.rows.map((row) => [row._category, row.text]), tags.flatMap((t) => quotesWithTag(t).map((q) => [t, q.text])));
      assert.equal(r.rows[0]!._category_url, `${s}/quotes/tag/${encodeURIComponent(tags[0]!)}/`);
    },
  },
  {
    name: 'categories with an absolute url_pattern: later pages are the target\'s, each loaded once',
    yaml: (s) => `target: { url: "${s}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
pagination: { type: url, url_pattern: "${s}/quotes/page/{page}/", max_pages: 3 }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 3, wait_after: 0 }
`,
    expect: (r) => {
      const [first, second, third] = topTags(3) as [string, string, string];
      // The first category reads its own page, then the target's pages 2 and 3; the others find those pages
      // crawled already, so their listings end after their own first page.
      const expected = [
        ...quotesWithTag(first).slice(0, 10).map((q) => [first, q.text]),
        ...allQuotes().slice(10, 30).map((q) => [first, q.text]),
        ...quotesWithTag(second).slice(0, 10).map((q) => [second, q.text]),
        ...quotesWithTag(third).slice(0, 10).map((q) => [third, q.text]),
      ];
      assert.deepEqual(r.rows.map((row) => [row._category, row.text]), expected);
      assert.equal(r.pagesScraped, 1 + 3 + 1 + 1);
    },
  },
  {
    name: 'categories with click pagination and stop_condition.max_items per category',
    yaml: (s) => `target: { url: "${s}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
pagination: { type: click, selector: "li.next a", stop_condition: { max_items: 12 } }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 2, wait_after: 0 }
`,
    expect: (r) => {
      const tags = topTags(2);
      assert.deepEqual(r.rows.map((row) => [row._category, row.text]), tags.flatMap((t) => quotesWithTag(t).slice(0, 12).map((q) => [t, q.text])));
    },
  },
  {
    name: 'output: deduplicate on a field, then limit',
    yaml: (s) => `target: { url: "${s}/quotes/" }
extract:
${QUOTES}pagination: { type: click, selector: "li.next a", max_pages: 3 }
output: { deduplicate_fields: [author], limit: 7 }
`,
    expect: (r) => {
      const firsts = [...new Map(allQuotes().slice(0, 30).map((q) => [q.author, q] as const)).values()];
      const seen = new Set<string>();
      const expected = allQuotes().slice(0, 30).filter((q) => (seen.has(q.author) ? false : (seen.add(q.author), true)));
      assert.equal(firsts.length, expected.length);
      assert.deepEqual(r.rows.map((row) => row.author), expected.slice(0, 7).map((q) => q.author));
    },
  },
  {
    name: 'output.limit without deduplication stops the crawl early',
    yaml: (s) => `target: { url: "${s}/quotes/" }
extract:
${QUOTES}pagination: { type: click, selector: "li.next a", max_pages: 10 }
output: { limit: 15 }
`,
    expect: (r) => {
      assert.deepEqual(r.rows.map((row) => row.text), text(allQuotes().slice(0, 15)));
      assert.equal(r.pagesScraped, 2);
    },
  },
  {
    name: 'every transform',
    yaml: (s) => `target: { url: "${s}/books/" }
extract:
  container: article.product_pod
  fields:
    - { name: title, selector: h3 a, type: attribute, attribute: title, transform: [strip] }
    - { name: lower, selector: h3 a, type: attribute, attribute: title, transform: [lowercase] }
    - { name: upper, selector: h3 a, type: attribute, attribute: title, transform: [uppercase] }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number] }
    - { name: price_n, selector: p.price_color, transform: [extract_number] }
    - { name: plain, selector: div.product_price, type: html, transform: [strip_html, trim_whitespace] }
    - { name: pounds, selector: p.price_color, transform: ["regex:(\\\\d+)\\\\."] }
    - { name: rating, selector: p.star-rating, type: attribute, attribute: class, transform: ["replace:star-rating:", strip] }
    - { name: first_word, selector: h3 a, type: attribute, attribute: title, transform: ["split: :0"] }
    - { name: head, selector: h3 a, type: attribute, attribute: title, transform: ["slice:0:5"] }
    - { name: label, selector: p.price_color, transform: ["template:Price {value}"] }
`,
    expect: (r) => {
      const pods = homePods();
      assert.equal(r.rows.length, pods.length);
      for (const [i, pod] of pods.entries()) {
        const row = r.rows[i]!;
        const pounds = Number(pod.priceText.slice(1));
        assert.equal(row.title, pod.title.trim());
        assert.equal(row.lower, pod.title.toLowerCase());
        assert.equal(row.upper, pod.title.toUpperCase());
        assert.equal(row.price, pounds);
        assert.equal(row.price_n, pounds);
        assert.match(row.plain as string, new RegExp(`^\\${pod.priceText} In stock Add to basket$`));
        assert.equal(row.pounds, String(Math.floor(pounds)));
        assert.equal(row.rating, pod.rating);
        assert.equal(row.first_word, pod.title.split(' ')[0]);
        assert.equal(row.head, Array.from(pod.title).slice(0, 5).join(''));
        assert.equal(row.label, `Price ${pod.priceText}`);
      }
    },
  },
  {
    name: 'every field type',
    yaml: (s) => `target: { url: "${s}/books/" }
extract:
  container: article.product_pod
  fields:
    - { name: link, selector: h3 a, type: link }
    - { name: image, selector: img, type: image_url }
    - { name: alt, selector: img, type: attribute, attribute: alt }
    - { name: stars, selector: p.star-rating i, type: count }
    - { name: in_stock, selector: .availability .icon-ok, type: exists }
    - { name: pence, selector: p.price_color, type: regex, pattern: "\\\\.(\\\\d+)" }
    - { name: price_html, selector: div.product_price, type: html, transform: [trim_whitespace] }
    - { name: classes, selector: "i", type: attribute, attribute: class, multiple: true }
    - { name: missing, selector: span.nothing-here, default: none }
`,
    expect: (r, s) => {
      const pods = homePods();
      for (const [i, pod] of pods.entries()) {
        const row = r.rows[i]!;
        assert.equal(row.link, new URL(pod.href, `${s}/books/`).href);
        assert.equal(row.image, new URL(pod.imgSrc, `${s}/books/`).href);
        assert.equal(row.stars, pod.stars);
        assert.equal(row.in_stock, pod.inStock);
        assert.equal(row.pence, pod.priceText.split('.')[1]);
        assert.ok((row.price_html as string).startsWith(`<p class="price_color">${pod.priceText}</p>`), row.price_html as string);
        assert.equal(row.missing, 'none');
      }
    },
  },
  {
    name: 'single on a detail page, the UPC by a devtools selector through the implicit <tbody>',
    yaml: (s) => `target: { url: "${s}/books/catalogue/${bookDetails()[3]!.slug}/index.html" }
extract:
  type: single
  fields:
    - { name: title, selector: div.product_main h1 }
    - { name: upc, selector: "table.table-striped > tbody > tr:first-child > td" }
    - { name: rows, selector: "table.table-striped > tbody > tr", type: count }
    - { name: description, selector: "#product_description + p" }
`,
    expect: (r) => {
      const book = bookDetails()[3]!;
      assert.deepEqual(r.rows, [{ title: book.title, upc: book.upc, rows: 7, description: book.description }]);
    },
  },
  {
    name: 'table without <tbody> in its source: a row per tr through tbody',
    yaml: (s) => `target: { url: "${s}/books/catalogue/${bookDetails()[5]!.slug}/index.html" }
extract:
  container: "table.table-striped > tbody > tr"
  fields:
    - { name: key, selector: th }
    - { name: value, selector: td }
`,
    expect: (r) => {
      assert.equal(r.rows.length, 7);
      assert.deepEqual(r.rows[0], { key: 'UPC', value: bookDetails()[5]!.upc });
    },
  },
  {
    name: 'table type, with fields and by header cells',
    yaml: (s) => `target: { url: "${s}/quotes-table/" }
extract:
  type: table
  container: table.quotes
`,
    expect: (r) => {
      assert.deepEqual(r.rows, allQuotes().slice(0, 10).map((q) => ({ Author: q.author, Quote: q.text, Tags: q.tags.join(', ') })));
    },
  },
  {
    name: 'records over two table rows (/tableful/, following_siblings: 1): click pagination through every page',
    yaml: (s) => tablefulConfigYaml(`${s}/tableful/`, { maxPages: 20 }),
    expect: (r) => {
      assert.deepEqual(r.rows, allQuotes().map((q) => ({ quote: q.text, author: q.author, tags: q.tags })));
      assert.equal(r.pagesScraped, 10, 'the last page has no Next link');
      assert.equal(r.itemsFound, 100, '10 items a page: the pager row is no item');
    },
  },
  {
    name: 'records over two table rows: url pagination on a tag\'s pages ends at the first empty page',
    yaml: (s) => tablefulConfigYaml(`${s}/tableful/tag/love/`, { pagination: 'url', maxPages: 5 }).replace('"/tableful/page/{page}/"', '"page/{page}/"'),
    expect: (r) => {
      assert.deepEqual(r.rows, quotesWithTag('love').map((q) => ({ quote: q.text, author: q.author, tags: q.tags })));
      assert.equal(r.rows.length, 14);
      assert.equal(r.pagesScraped, 3, '10 quotes, 4 quotes, none');
    },
  },
  {
    name: 'records over two table rows: max_items, deduplication and limit count items',
    yaml: (s) => `${tablefulConfigYaml(`${s}/tableful/`, { maxPages: 10 })}  stop_condition: { max_items: 25 }
output: { deduplicate_fields: [author], limit: 12 }
`,
    expect: (r) => {
      const seen = new Set<string>();
      const firsts = allQuotes().slice(0, 25).filter((q) => (seen.has(q.author) ? false : (seen.add(q.author), true)));
      assert.ok(firsts.length > 12);
      assert.deepEqual(r.rows.map((row) => [row.author, row.quote]), firsts.slice(0, 12).map((q) => [q.author, q.text]));
      assert.equal(r.itemsFound, 25, 'three pages read, the third cut at 25 items');
      assert.equal(r.pagesScraped, 3);
    },
  },
  {
    name: 'a mis-nested heading ends where a browser ends it',
    yaml: (s) => `target: { url: "${s}/quotes/author/Ada-Whitmore/" }
extract:
  type: single
  fields:
    - { name: name, selector: h3.author-title, transform: [strip] }
    - { name: headings_with_paragraphs, selector: "h3 p", type: count }
    - { name: born, selector: "div.author-details > p > span.author-born-date" }
`,
    expect: (r) => {
      const a = allAuthors().get('Ada-Whitmore')!;
      assert.deepEqual(r.rows, [{ name: a.name, headings_with_paragraphs: 0, born: a.bornDate }]);
    },
  },
  {
    name: 'the page limit: the listing has first claim, detail pages get what is left',
    options: { maxPages: 6 },
    yaml: (s) => `target: { url: "${s}/quotes/" }
extract:
${QUOTES}    - { name: about, selector: "a[href*='/author/']", type: link }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date, default: none }
pagination: { type: click, selector: "li.next a", max_pages: 2 }
`,
    expect: (r) => {
      assert.equal(r.rows.length, 20);
      assert.equal(r.pagesScraped, 6);
      // Two listing pages reserved, so four detail pages: the first four authors of page 1, in queue order.
      const firstAuthors = [...new Set(allQuotes().slice(0, 10).map((q) => q.author))].slice(0, 4);
      for (const row of r.rows) {
        const expected = firstAuthors.includes(row.author as string) ? allAuthors().get(authorSlug(row.author as string))!.bornDate : 'none';
        assert.equal(row.born, expected, `${row.author as string}`);
      }
      assert.ok(r.warnings.includes('stopped at the page limit of 6 pages per run'), r.warnings.join('\n'));
    },
  },
  {
    name: 'pages that fail after the first: warnings, defaults, the rows so far kept',
    yaml: (_s, i) => `target: { url: "${i}/list/1" }
extract:
  container: li.item
  fields:
    - { name: url, selector: a, type: link }
detail_fields:
  fields:
    - { name: h, selector: h1, default: none }
pagination: { type: click, selector: "a.next", max_pages: 3 }
`,
    expect: (r, _s) => {
      assert.deepEqual(r.rows.map((row) => row.h), ['detail ok', 'none', 'none', 'none']);
      assert.equal(r.pagesScraped, 2, 'the listing page and the one good detail page');
      const w = r.warnings.join('\n');
      assert.match(w, /detail page .*\/d\/404: .*answered HTTP 404/);
      assert.match(w, /detail page .*\/d\/json: .*is application\/json, not an HTML page/);
      assert.match(w, /detail page http:\/\/10\.0\.0\.1\/secret: Refused/);
      assert.match(w, /listing page .*\/list\/2: .*answered HTTP 404/);
    },
  },
  {
    name: 'a listing page redirected back to a crawled page ends the listing',
    yaml: (_s, i) => `target: { url: "${i}/loop/1" }
extract:
  container: li.item
  fields:
    - { name: t }
pagination: { type: click, selector: "a.next", max_pages: 5 }
`,
    expect: (r) => {
      assert.deepEqual(r.rows.map((row) => row.t), ['a', 'b']);
      assert.ok(r.warnings.some((w) => /redirected to .*\/loop\/1, already crawled; the listing ends there/.test(w)), r.warnings.join('\n'));
    },
  },
  { name: 'a first page that answers 404', yaml: (s) => `target: { url: "${s}/status/404/" }\nextract:\n${QUOTES}`, error: 'target_failed' },
  { name: 'an unreachable first page', yaml: () => `target: { url: "http://127.0.0.1:1/" }\nextract:\n${QUOTES}`, error: 'target_failed' },
  { name: 'a refused first page', yaml: () => `target: { url: "http://10.0.0.1/" }\nextract:\n${QUOTES}`, error: 'target_forbidden' },
];

function inlinePages(): Record<string, string | ((base: string) => string | InlinePage)> {
  return {
    '/list/1': (b) => `<!DOCTYPE html><html><body><ul>
<li class="item"><a href="/d/ok">ok</a></li><li class="item"><a href="/d/404">404</a></li>
<li class="item"><a href="/d/json">json</a></li><li class="item"><a href="http://10.0.0.1/secret">secret</a></li>
</ul><a class="next" href="${b}/list/2">next</a></body></html>`,
    '/d/ok': '<!DOCTYPE html><html><body><h1>detail ok</h1></body></html>',
    '/d/json': () => ({ status: 200, type: 'application/json', body: '{"h1":"not a page"}' }),
    '/loop/1': '<!DOCTYPE html><html><body><ul><li class="item">a</li><li class="item">b</li></ul><a class="next" href="/loop/2">next</a></body></html>',
    '/loop/2': (b) => ({ status: 302, headers: { location: `${b}/loop/1` }, body: '' }),
  };
}

describe('parity: the same config gives the same rows over HTTP and in a browser', () => {
  let site: FixtureSite;
  let inline: InlineServer;
  let host: BrowserHost;
  before(async () => {
    site = await startFixtureSite();
    inline = await serveInline(inlinePages());
    host = new BrowserHost({ guard });
  });
  after(async () => {
    await host?.close();
    await inline?.close();
    await site?.close();
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const config = parseConfig(c.yaml(site.url, inline.url));
      const http = runLightweight(config, { outbound: { allow: ['127.0.0.0/8'] }, ...c.options });
      const browser = runHeavy(config, { host, ...c.options });
      if (c.error) {
        const [h, b] = await Promise.allSettled([http, browser]);
        assert.equal(h.status, 'rejected', 'HTTP loader failed');
        assert.equal(b.status, 'rejected', 'browser loader failed');
        const codes = [h, b].map((x) => ((x as PromiseRejectedResult).reason as { code?: string }).code);
        assert.deepEqual(codes, [c.error, c.error], [h, b].map((x) => String((x as PromiseRejectedResult).reason)).join(' | '));
        return;
      }
      const [h, b] = await Promise.all([http, browser]);
      assert.deepEqual(b.rows, h.rows, 'rows');
      assert.equal(b.pagesScraped, h.pagesScraped, 'pages scraped');
      assert.equal(b.itemsFound, h.itemsFound, 'items found');
      assert.deepEqual(b.warnings, h.warnings, 'warnings');
      assert.ok(h.rows.length > 0 || c.expect, 'a case with rows');
      c.expect?.(h, site.url);
    });
  }
});

describe('parity: the browser obeys the fetcher\'s rules', () => {
  let site: FixtureSite;
  let host: BrowserHost;
  let agents: Set<string>;
  let server: import('node:http').Server;
  let base: string;
  before(async () => {
    site = await startFixtureSite();
    host = new BrowserHost({ guard, maxResponseBytes: 64 * 1024 });
    agents = new Set();
    const http = await import('node:http');
    // Records the User-Agent of every request.
    server = http.createServer((req, res) => {
      agents.add(req.headers['user-agent'] ?? '');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><html><body><ul><li class="item">one</li></ul></body></html>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    await host?.close();
    await site?.close();
    await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  });

  it('the same User-Agent on both loaders', async () => {
    const config = parseConfig(`target: { url: "${base}/ua" }\nextract: { container: li.item, fields: [{ name: t }] }\n`);
    await runLightweight(config, { outbound: { allow: ['127.0.0.0/8'] } });
    await runHeavy(config, { host });
    assert.deepEqual([...agents], [DEFAULT_USER_AGENT]);
  });

  it('the same redirect cap: 11 redirects fail the first page on both', async () => {
    const config = parseConfig(`target: { url: "${site.url}/redirect-chain/11/" }\nextract:\n${QUOTES}`);
    const h = await Promise.allSettled([runLightweight(config, { outbound: { allow: ['127.0.0.0/8'] } }), runHeavy(config, { host })]);
    for (const r of h) {
      assert.equal(r.status, 'rejected');
      const e = (r as PromiseRejectedResult).reason as Error & { code: string };
      assert.equal(e.code, 'target_failed', e.message);
      assert.match(e.message, /Too many redirects \(more than 10\)/);
    }
    const ok = parseConfig(`target: { url: "${site.url}/redirect-chain/10/" }\nextract:\n${QUOTES}`);
    const [a, b] = await Promise.all([runLightweight(ok, { outbound: { allow: ['127.0.0.0/8'] } }), runHeavy(ok, { host })]);
    assert.equal(a.rows.length, 10);
    assert.deepEqual(b.rows, a.rows);
  });

  it('the same size cap: a page over it is response_too_large on both', async () => {
    const fetcher = new Fetcher(guard, { maxBytes: 64 * 1024 });
    try {
      const big = parseConfig(`target: { url: "${site.url}/big/?kb=200" }\nextract: { type: single, fields: [{ name: title, selector: title }] }\n`);
      const r = await Promise.allSettled([runLightweight(big, { fetcher }), runHeavy(big, { host, maxBytes: 64 * 1024 })]);
      assert.deepEqual(r.map((x) => x.status === 'rejected' ? ((x as PromiseRejectedResult).reason as { code: string }).code : 'fulfilled'), ['response_too_large', 'response_too_large']);
      const small = parseConfig(`target: { url: "${site.url}/big/?kb=40" }\nextract: { type: single, fields: [{ name: title, selector: title }] }\n`);
      const [a, b] = await Promise.all([runLightweight(small, { fetcher }), runHeavy(small, { host, maxBytes: 64 * 1024 })]);
      assert.deepEqual(b.rows, a.rows);
      assert.equal(a.rows[0]!.title, 'Big page (40 KiB)');
    } finally {
      await fetcher.close();
    }
  });

  it('refusals are the job\'s own: after 150 refused requests a next page whose name resolves inside reads as refused on both loaders', async () => {
    // Names under .inside.test resolve to a private address: the guard decides on the address, in the proxy.
    const insideGuard = new OutboundGuard({
      allow: ['127.0.0.0/8'],
      resolve: async (name) => (name.endsWith('.inside.test') ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]),
    });
    const insideHost = new BrowserHost({ guard: insideGuard });
    const inside = await serveInline({
      '/noisy': `<!DOCTYPE html><html><body><ul><li class="item">one</li></ul>${Array.from({ length: 150 }, (_, i) => `<img src="http://img${i}.inside.test/x.png">`).join('')}<a class="next" href="http://next.inside.test/page/2">next</a></body></html>`,
    });
    try {
      const config = parseConfig(`target: { url: "${inside.url}/noisy", engine: heavy }
extract: { container: li.item, fields: [{ name: t }] }
actions: [{ type: script, script: "new Promise((r) => setTimeout(r, 500))" }]
pagination: { type: click, selector: a.next, max_pages: 2 }
`);
      const b = await runHeavy(config, { host: insideHost });
      assert.deepEqual(b.rows, [{ t: 'one' }]);
      const refusedNext = /^listing page http:\/\/next\.inside\.test\/page\/2: Refused next\.inside\.test: it resolves to a private address/;
      assert.ok(b.warnings.some((w) => refusedNext.test(w)), b.warnings.join('\n'));
      assert.ok(b.warnings.some((w) => /the outbound guard refused 1\d\d request\(s\) of the pages/.test(w)), b.warnings.join('\n'));
      const fetcher = new Fetcher(insideGuard);
      try {
        const h = await runLightweight(parseConfig(`target: { url: "${inside.url}/noisy" }\nextract: { container: li.item, fields: [{ name: t }] }\npagination: { type: click, selector: a.next, max_pages: 2 }\n`), { fetcher });
        assert.deepEqual(h.rows, b.rows);
        assert.ok(h.warnings.some((w) => refusedNext.test(w)), h.warnings.join('\n'));
      } finally {
        await fetcher.close();
      }
    } finally {
      await insideHost.close();
      await inside.close();
    }
  });
});
