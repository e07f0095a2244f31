/**
 * The lightweight engine crawling the fixture site (books.toscrape.com and quotes.toscrape.com look-alikes over
 * the fixture's own data): detail pages, every kind of pagination, categories, output, and how a run
 * behaves when pages fail, limits are reached or it is aborted. Expected values come from the fixture's data.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { bookDetails } from '../fixtures/site/books.ts';
import { allAuthors, allQuotes, quotesWithTag, topTags } from '../fixtures/site/quotes.ts';
import { CHARSET_TEXT } from '../fixtures/site/charset.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runLightweight as runConfig, type LightweightOptions as RunOptions, type RunProgress } from '../../lambdas/engine/engines.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';

const allow = { outbound: { allow: ['127.0.0.0/8'] } };
const run = (yaml: string, opts: RunOptions = {}) => runConfig(parseConfig(yaml), { ...allow, ...opts });

const quoteFields = `extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
`;

describe('lightweight engine on the fixture site', () => {
  let site: FixtureSite;
  before(async () => { site = await startFixtureSite(); });
  after(async () => { await site.close(); });

  it('books: 20 rows with title, absolute link, price number, rating; detail pages add UPC and description', async () => {
    const r = await run(`target: { url: "${site.url}/books/" }
extract:
  container: article.product_pod
  fields:
    - { name: title, selector: h3 a, type: attribute, attribute: title }
    - { name: url, selector: h3 a, type: link }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number] }
    - { name: rating, selector: p.star-rating, type: attribute, attribute: class, transform: ["replace:star-rating:", strip] }
detail_fields:
  fields:
    - { name: upc, selector: "table tr:first-child td" }
    - { name: description, selector: "#product_description + p", transform: [strip] }
`);
    const books = bookDetails();
    assert.equal(r.rows.length, 20);
    assert.equal(r.pagesScraped, 21);
    assert.deepEqual(r.warnings, []);
    r.rows.forEach((row, i) => {
      const b = books[i]!;
      assert.deepEqual(row, {
        title: b.title, url: `${site.url}/books/catalogue/${b.slug}/index.html`, price: b.price, rating: b.rating, upc: b.upc, description: b.description,
      });
    });
    assert.equal(r.rows[0]!.upc, '6a31a6d75bb4e6de');
  });

  it('click pagination follows next links to the end: 100 quotes in order, each page fetched once', async () => {
    const r = await run(`target: { url: "${site.url}/quotes/" }\n${quoteFields}pagination: { type: click, selector: "li.next a", max_pages: 50 }\n`);
    assert.deepEqual(r.rows.map((x) => [x.text, x.author]), allQuotes().map((q) => [q.text, q.author]));
    assert.equal(r.pagesScraped, 10);
    for (let p = 2; p <= 10; p++) assert.equal(site.hits.get(`/quotes/page/${p}/`), 1, `page ${p}`);
  });

  it('url pagination: target.url is page 1, {page} counts from 2, an empty page ends the listing', async () => {
    const r = await run(`target: { url: "${site.url}/quotes/" }\n${quoteFields}pagination: { type: url, url_pattern: "/quotes/page/{page}/", max_pages: 30 }\n`);
    assert.equal(r.rows.length, 100);
    assert.equal(r.pagesScraped, 11, '10 pages with quotes and the empty 11th');
    assert.equal(site.hits.get('/quotes/page/12/'), undefined);
    assert.equal(site.hits.get('/quotes/page/1/'), undefined, 'page 1 is target.url');
  });

  it('max_pages counts the first page; stop_condition.max_items and output.limit stop early', async () => {
    const two = await run(`target: { url: "${site.url}/quotes/" }\n${quoteFields}pagination: { type: click, selector: "li.next a", max_pages: 2 }\n`);
    assert.equal(two.rows.length, 20);
    assert.equal(two.pagesScraped, 2);
    const items = await run(`target: { url: "${site.url}/quotes/" }\n${quoteFields}pagination: { type: click, selector: "li.next a", max_pages: 10, stop_condition: { max_items: 25 } }\n`);
    assert.deepEqual(items.rows.map((x) => x.text), allQuotes().slice(0, 25).map((q) => q.text));
    assert.equal(items.pagesScraped, 3);
    const limit = await run(`target: { url: "${site.url}/quotes/" }\n${quoteFields}pagination: { type: click, selector: "li.next a", max_pages: 10 }\noutput: { limit: 12 }\n`);
    assert.equal(limit.rows.length, 12);
    assert.equal(limit.pagesScraped, 2, 'stops crawling once the limit is reached');
  });

  it('wait_after delays each next page', async () => {
    const t0 = performance.now();
    await run(`target: { url: "${site.url}/quotes/" }\n${quoteFields}pagination: { type: click, selector: "li.next a", max_pages: 3, wait_after: 300 }\n`);
    assert.ok(performance.now() - t0 >= 600, 'two waits of 300 ms');
  });

  it('detail pages from author links: each author page fetched once although many quotes share it', async () => {
    const r = await run(`target: { url: "${site.url}/slow/1/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
    - { name: about, selector: "a[href*='/author/']", type: link }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
    - { name: where, selector: span.author-born-location, transform: ["replace:in :", strip] }
pagination: { type: click, selector: "li.next a", max_pages: 3 }
`);
    const authors = allAuthors();
    const expected = allQuotes().slice(0, 30);
    assert.equal(r.rows.length, 30);
    r.rows.forEach((row, i) => {
      const a = authors.get(expected[i]!.authorSlug)!;
      assert.equal(row.born, a.bornDate);
      assert.equal(row.where, a.bornLocation.replace(/^in /, '').trim());
    });
    const slugs = new Set(expected.map((q) => q.authorSlug));
    for (const slug of slugs) assert.equal(site.hits.get(`/slow/1/quotes/author/${slug}/`), 1, slug);
    assert.equal(r.pagesScraped, 3 + slugs.size);
  });

  it('categories: the top-ten tags, each paginated, rows carry _category and _category_url', async () => {
    const r = await run(`target: { url: "${site.url}/quotes/" }
${quoteFields}categories: { container: div.tags-box, link_selector: a.tag, max_categories: 4, wait_after: 0 }
pagination: { type: click, selector: "li.next a", max_pages: 5 }
`);
    const tags = topTags().slice(0, 4);
    const expected = tags.flatMap((tag) => quotesWithTag(tag).map((q) => ({ text: q.text, author: q.author, _category: tag, _category_url: `${site.url}/quotes/tag/${tag}/` })));
    assert.deepEqual(r.rows, expected);
    assert.ok(quotesWithTag(tags[0]!).length > 10, 'the first category spans two pages');
    assert.equal(site.hits.get(`/quotes/tag/${tags[4] ?? topTags()[4]}/`), undefined, 'max_categories respected');
  });

  it('output: deduplicate the whole row or by fields, then limit', async () => {
    const base = `target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
pagination: { type: click, selector: "li.next a", max_pages: 10 }
`;
    const authorsInOrder = [...new Set(allQuotes().map((q) => q.author))];
    assert.deepEqual((await run(`${base}output: { deduplicate: true }\n`)).rows.map((x) => x.author), authorsInOrder);
    assert.deepEqual((await run(`${base}output: { deduplicate_fields: [author], limit: 3 }\n`)).rows.map((x) => x.author), authorsInOrder.slice(0, 3));
  });

  it('reports progress that never goes down and reaches 99 before returning', async () => {
    const seen: RunProgress[] = [];
    await run(`target: { url: "${site.url}/quotes/" }\n${quoteFields}pagination: { type: click, selector: "li.next a", max_pages: 10 }\n`, { onProgress: (p) => seen.push(p) });
    assert.ok(seen.length >= 10);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.progress >= seen[i - 1]!.progress);
    assert.equal(seen.at(-1)!.progress, 99);
    assert.equal(seen.at(-1)!.itemsFound, 100);
    assert.ok(seen.some((p) => p.progress > 0 && p.progress < 99), 'intermediate values');
  });

  it('decodes charsets from the header, <meta charset> and http-equiv', async () => {
    for (const [path, text] of [['/charset/latin1/', CHARSET_TEXT.latin1], ['/charset/meta/', CHARSET_TEXT.meta], ['/charset/sjis/', CHARSET_TEXT.sjis]] as const) {
      const r = await run(`target: { url: "${site.url}${path}" }\nextract: { type: single, fields: [{ name: t, selector: p.text, transform: [strip] }] }\n`);
      assert.equal(r.rows[0]!.t, text, path);
    }
  });

  it('resolves links against <base href> during a crawl', async () => {
    const r = await run(`target: { url: "${site.url}/base-href/" }
extract:
  container: a.rel
  fields: [{ name: u, type: link }]
`);
    assert.deepEqual(r.rows.map((x) => x.u), [
      `${site.url}/books/catalogue/a-lantern-for-the-lighthouse-keeper_20/index.html`,
      `${site.url}/books/catalogue/salt-and-cedar_19/index.html`,
      `${site.url}/books/catalogue/page-2.html`,
    ]);
  });

  it('a detail page that fails gives the defaults and a warning, not a failed run', async () => {
    const r = await run(`target: { url: "${site.url}/base-href/" }
extract:
  container: a
  fields: [{ name: u, type: link }]
detail_fields:
  fields: [{ name: h1, selector: h1, default: "none" }]
`);
    assert.equal(r.rows.length, 4);
    assert.equal(r.rows.find((x) => String(x.u).endsWith('/books/index.html'))?.h1, 'All products');
    assert.equal(r.rows.find((x) => String(x.u).endsWith('a-lantern-for-the-lighthouse-keeper_20/index.html'))?.h1, 'A Lantern for the Lighthouse Keeper');
    const missing = await run(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields: [{ name: u, selector: "a[href*='/author/']", type: link, transform: ["replace:/author/:/author/nobody-"] }]
detail_fields:
  fields: [{ name: born, selector: span.author-born-date, default: "?" }]
`);
    assert.equal(missing.rows.length, 10);
    assert.ok(missing.rows.every((x) => x.born === '?'));
    assert.ok(missing.warnings.length >= 1 && missing.warnings.every((w) => /404/.test(w)), missing.warnings.join('\n'));
  });

  it('fails with target_failed when the first page answers 404 and when it is unreachable', async () => {
    await assert.rejects(run(`target: { url: "${site.url}/status/404/" }\n${quoteFields}`), { code: 'target_failed' });
    const fetcher = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8'] }), { retries: 0 });
    try {
      await assert.rejects(run(`target: { url: "http://127.0.0.1:1/" }\n${quoteFields}`, { fetcher }), (err: Error & { code?: string }) => err.code === 'target_failed' && /ECONNREFUSED/.test(err.message));
    } finally {
      await fetcher.close();
    }
  });

  it('retries a flaky first page and succeeds', async () => {
    const r = await run(`target: { url: "${site.url}/flaky/engine/?fail=2&code=503" }\nextract: { type: single, fields: [{ name: ok, selector: p.ok }] }\n`);
    assert.equal(r.rows[0]!.ok, 'ok engine');
  });

  it('stops at the page limit of a run with a warning', async () => {
    const r = await run(`target: { url: "${site.url}/quotes/" }\n${quoteFields}pagination: { type: click, selector: "li.next a", max_pages: 10 }\n`, { maxPages: 4 });
    assert.equal(r.rows.length, 40);
    assert.ok(r.warnings.some((w) => /page limit of 4 pages/.test(w)), r.warnings.join('\n'));
  });

  it('the page limit is exact: queued pages count, so no extra fetch slips through', async () => {
    for (const max of [1, 2, 3, 5]) {
      // Pages only: robots.txt is read once per run and is not a page of the budget.
      const pages = () => [...site.hits].reduce((a, [path, n]) => (path === '/robots.txt' ? a : a + n), 0);
      const before = pages();
      const r = await run(`target: { url: "${site.url}/books/?limit=${max}" }
extract:
  container: article.product_pod
  fields: [{ name: url, selector: h3 a, type: link }]
detail_fields:
  fields: [{ name: upc, selector: "table tr:first-child td" }]
pagination: { type: click, selector: "li.next a", max_pages: 3 }
`, { maxPages: max, concurrency: 4 });
      const requests = pages() - before;
      assert.equal(requests, max, `maxPages ${max}: ${requests} requests`);
      assert.equal(r.pagesScraped, max);
      assert.ok(r.warnings.some((w) => /page limit/.test(w)));
    }
  });

  it('a listing page that redirects back to a page already crawled ends the listing without repeating rows', async () => {
    const r = await run(`target: { url: "${site.url}/quotes/" }
${quoteFields}pagination: { type: url, url_pattern: "/redirect/?to=%2Fquotes%2F&n={page}", max_pages: 5 }
`);
    assert.deepEqual(r.rows.map((x) => x.text), allQuotes().slice(0, 10).map((q) => q.text));
    assert.ok(r.warnings.some((w) => /already crawled; the listing ends there/.test(w)), r.warnings.join('\n'));
    assert.equal(site.hits.get('/redirect/?to=%2Fquotes%2F&n=3'), undefined, 'no further pages');
  });

  it('progress keeps moving when a numbered listing ends early with an error', async () => {
    const seen: RunProgress[] = [];
    await run(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields: [{ name: about, selector: "a[href*='/author/']", type: link }]
detail_fields:
  fields: [{ name: born, selector: span.author-born-date }]
pagination: { type: url, url_pattern: "/status/404/?p={page}", max_pages: 10 }
`, { onProgress: (p) => seen.push(p) });
    const mid = seen.filter((p) => p.progress > 0 && p.progress < 99).map((p) => p.progress);
    assert.ok(Math.max(...mid) >= 50, `progress went up to ${Math.max(...mid)} before the end (${mid.join(',')})`);
  });

  it('refuses browser-only configs before fetching anything', async () => {
    const before = site.hits.size;
    for (const extra of [
      `${quoteFields}    - { name: x, type: eval, script: "1" }\n`,
      `${quoteFields}actions: [{ type: click, selector: button }]\n`,
      `${quoteFields}pagination: { type: scroll_infinite }\n`,
    ]) {
      await assert.rejects(run(`target: { url: "${site.url}/browser-only/" }\n${extra}`), { code: 'browser_required' });
    }
    assert.equal(site.hits.size, before);
    assert.equal(site.hits.get('/browser-only/'), undefined);
  });

  it('aborts promptly through its signal', async () => {
    const controller = new AbortController();
    const t0 = performance.now();
    setTimeout(() => controller.abort(new Error('stop now')), 200);
    await assert.rejects(run(`target: { url: "${site.url}/hang/" }\n${quoteFields}`, { signal: controller.signal }), /stop now/);
    assert.ok(performance.now() - t0 < 2000);
  });
});

describe('pages made for edge cases', () => {
  let server: http.Server;
  let url: string;
  before(async () => {
    server = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (req.url === '/hang') return; // never answers
      if (req.url === '/to-private') {
        res.writeHead(302, { location: 'http://10.0.0.1/' });
        res.end();
        return;
      }
      if (req.url === '/listing') {
        res.end('<html><body>' + [1, 2, 3].map((i) => `<div class="item"><a href="/detail?${i}">item ${i}</a></div>`).join('') + '<a class="next" href="/to-private">next</a></body></html>');
        return;
      }
      if (req.url?.startsWith('/detail?')) {
        res.end(`<html><body><h1>detail ${req.url.slice(8)}</h1></body></html>`);
        return;
      }
      res.end('<html><body><div class="item">one</div><button class="more">Load more</button></body></html>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));

  it('a later listing page that redirects to a refused address ends the listing with a warning; the rows so far are kept', async () => {
    const r = await run(`target: { url: "${url}listing" }
extract: { container: div.item, fields: [{ name: u, selector: a, type: link }] }
detail_fields: { fields: [{ name: h, selector: h1 }] }
pagination: { type: click, selector: a.next, max_pages: 2 }
`, { concurrency: 4 });
    assert.deepEqual(r.rows.map((row) => row.h), ['detail 1', 'detail 2', 'detail 3']);
    assert.ok(r.warnings.some((w) => /listing page .*\/to-private: .*10\.0\.0\.1/.test(w)), r.warnings.join('\n'));
  });

  it('fails with browser_required naming the selector and the element', async () => {
    await assert.rejects(
      run(`target: { url: "${url}" }\nextract: { container: div.item, fields: [{ name: t }] }\npagination: { type: click, selector: button.more, max_pages: 3 }\n`),
      (err: Error & { code?: string }) => err.code === 'browser_required' && /button\.more/.test(err.message) && /<button>/.test(err.message),
    );
  });
});
