import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { corpusPath } from '../fixtures/corpus.ts';
import { bookDetails } from '../fixtures/site/books.ts';
import { CHARSET_TEXT } from '../fixtures/site/charset.ts';
import { escapeHtml } from '../fixtures/site/http.ts';
import { allQuotes, quotesWithTag, topTags } from '../fixtures/site/quotes.ts';
import { startFixtureSite } from '../fixtures/site/server.ts';
import type { FixtureSite } from '../fixtures/site/server.ts';

let site: FixtureSite;

before(async () => {
  site = await startFixtureSite({ port: 0 });
});

after(async () => {
  await site.close();
});

async function get(path: string): Promise<{ status: number; headers: Headers; body: Buffer; text: string }> {
  const response = await fetch(site.url + path, { redirect: 'manual' });
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body, text: body.toString('utf8') };
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe('fixture site', () => {
  it('listens on loopback', () => {
    assert.match(site.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('serves quotes page 1 with 10 quotes, a next link and the top tags', async () => {
    const page = await get('/quotes/');
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(count(page.text, 'class="quote"'), 10);
    assert.match(page.text, /<li class="next"><a href="\/quotes\/page\/2\/">/);
    assert.match(page.text, /<h2>Top Ten tags<\/h2>\s*<span class="tag-item">\s*<a class="tag" href="\/quotes\/tag\/love\/">love<\/a>/);
  });

  it('has no next link on page 10 and "No quotes found!" past the end', async () => {
    const last = await get('/quotes/page/10/');
    assert.equal(count(last.text, 'class="quote"'), 10);
    assert.ok(!last.text.includes('class="next"'));
    assert.ok(last.text.includes('href="/quotes/page/9/"'));
    const past = await get('/quotes/page/11/');
    assert.equal(past.status, 200);
    assert.equal(count(past.text, 'class="quote"'), 0);
    assert.ok(past.text.includes('No quotes found!'));
  });

  it('serves tag pages with their own pager', async () => {
    const first = await get('/quotes/tag/love/');
    assert.equal(count(first.text, 'class="quote"'), 10);
    assert.ok(first.text.includes('href="/quotes/tag/love/page/2/"'));
    const second = await get('/quotes/tag/love/page/2/');
    assert.equal(count(second.text, 'class="quote"'), 4); // love has 14 quotes
    assert.ok(!second.text.includes('class="next"'));
  });

  it('serves author pages and 404s unknown authors', async () => {
    const page = await get('/quotes/author/J-K-Rowling/');
    assert.equal(page.status, 200);
    // The real site's markup error, kept: the heading is closed by </h2>.
    assert.ok(page.text.includes('<h3 class="author-title">J.K. Rowling\n    </h2>'));
    assert.ok(page.text.includes('<span class="author-born-date">July 31, 1965</span>'));
    assert.ok(page.text.includes('<span class="author-born-location">in Yate,'));
    assert.equal((await get('/quotes/author/Nobody-Here/')).status, 404);
  });

  it('keeps the /slow/MS prefix on every generated link', async () => {
    const started = performance.now();
    const page = await get('/slow/100/quotes/page/2/');
    assert.ok(performance.now() - started >= 90, 'the slow prefix delays the answer');
    assert.equal(count(page.text, 'class="quote"'), 10);
    const links = [...page.text.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    assert.ok(links.length > 30);
    for (const link of links) assert.ok(link.startsWith('/slow/100/'), `${link} lost the prefix`);
  });

  it('serves /tableful/ as quotes.toscrape.com lays it out: 22 table rows, no classes, quote row then tags row', async () => {
    const page = await get('/tableful/');
    assert.equal(page.status, 200);
    const table = page.text.slice(page.text.indexOf('<table>'), page.text.indexOf('</table>'));
    assert.equal(count(table, '<tr'), 22, 'the first row, 10 quote rows, 10 tag rows, the pager row');
    assert.equal(count(table, '<tr style="border-bottom: 0px; ">'), 10);
    assert.ok(!/<(tr|td|table|a)\b[^>]*\sclass=/.test(table), 'no classes in the table');
    const quotes = allQuotes().slice(0, 10);
    const cells = [...table.matchAll(/<td style="padding-top: 2em;">([^<]*)<\/td>/g)].map((m) => m[1]);
    assert.deepEqual(cells, quotes.map((q) => `${escapeHtml(q.text)} Author: ${escapeHtml(q.author)}`));
    // The second quote's tags row follows its quote row.
    const second = quotes[1]!;
    const tagLinks = second.tags.map((t) => `\\s*<a href="/tableful/tag/${t}/page/1/">${t}</a>`).join('');
    assert.match(table, new RegExp(`${escapeHtml(second.author)}</td>\\s*</tr>\\s*<tr>\\s*<td style="padding-bottom: 2em;">Tags:${tagLinks}\\s*</td>\\s*</tr>`));
    // The first row: no "Viewing tag:" on the main listing, the top ten tags with their counts in a cell spanning rows.
    assert.match(table, /^<table>\s*<tr>\s*<td><\/td>\s*<td rowspan="5" style="padding-left: 50px;">/);
    assert.ok(!table.includes('Viewing tag:'));
    const top = topTags(10).map((t) => `<a href="/tableful/tag/${t}/page/1/">${t}</a> (${quotesWithTag(t).length}) <br />`);
    assert.ok(top.every((line) => table.includes(line)), 'Top Ten tags with counts');
    // The pager row: an empty cell where Previous would be, then Next.
    assert.match(table, /<tr>\s*<td><\/td>\s*<td>\s*<a href="\/tableful\/page\/2\/">Next \s*<span aria-hidden="true">&rarr;<\/span>\s*<\/a>\s*<\/td>\s*<\/tr>\s*$/);
  });

  it('serves /tableful/ pages and tag pages with their own pagers, "No quotes found!" past the end', async () => {
    const last = await get('/tableful/page/10/');
    assert.equal(count(last.text, '<tr style='), 10);
    assert.ok(last.text.includes(`${escapeHtml(allQuotes()[99]!.text)} Author: ${escapeHtml(allQuotes()[99]!.author)}`));
    assert.ok(!last.text.includes('Next'));
    assert.match(last.text, /<a href="\/tableful\/page\/9\/">\s*<span aria-hidden="true">&larr;<\/span> Previous/);
    const past = await get('/tableful/page/11/');
    assert.equal(past.status, 200);
    assert.equal(count(past.text, '<tr style='), 0);
    assert.ok(past.text.includes('No quotes found!'));

    const love = await get('/tableful/tag/love/');
    assert.match(love.text, /<td>\s*Viewing tag: <a href="\/tableful\/tag\/love\/page\/1\/">love<\/a>\s*<\/td>/);
    assert.equal(count(love.text, '<tr style='), 10);
    assert.ok(love.text.includes('href="/tableful/tag/love/page/2/">Next'));
    const love2 = await get('/tableful/tag/love/page/2/');
    assert.equal(count(love2.text, '<tr style='), 4); // love has 14 quotes
    assert.ok(!love2.text.includes('Next'));
    assert.ok(love2.text.includes('href="/tableful/tag/love/page/1/">'));
    assert.equal((await get('/tableful/page/x/')).status, 404);
    assert.equal((await get('/tableful')).headers.get('location'), '/tableful/');
    // Links keep the /slow/MS prefix.
    const slow = await get('/slow/10/tableful/');
    const links = [...slow.text.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    assert.ok(links.length > 30 && links.every((l) => l.startsWith('/slow/10/')), links.join(' '));
  });

  it('serves the real books home page byte for byte', async () => {
    const page = await get('/books/');
    assert.ok(page.body.equals(readFileSync(corpusPath('listings', 'books-toscrape-home.html'))));
  });

  it('serves catalogue pages relative to catalogue/', async () => {
    const page = await get('/books/catalogue/page-2.html');
    assert.equal(count(page.text, '<article class="product_pod">'), 20);
    assert.ok(page.text.includes('href="a-light-in-the-attic_1000/index.html"'));
    assert.ok(page.text.includes('Page 2 of 3'));
    assert.ok(page.text.includes('<li class="next"><a href="page-3.html">next</a></li>'));
    assert.ok(page.text.includes('<li class="previous"><a href="page-1.html">previous</a></li>'));
    assert.ok(!(await get('/books/catalogue/page-3.html')).text.includes('class="next"'));
  });

  it('serves detail pages matching bookDetails()', async () => {
    const books = bookDetails();
    assert.equal(books.length, 20);
    const real = books.find((b) => b.slug === 'a-light-in-the-attic_1000')!;
    assert.deepEqual([real.upc, real.price, real.rating], ['a897fe39b1053632', 51.77, 'Three']);
    const realPage = await get('/books/catalogue/a-light-in-the-attic_1000/index.html');
    assert.ok(realPage.body.equals(readFileSync(corpusPath('listings', 'books-toscrape-book.html'))));

    const olio = books.find((b) => b.slug === 'olio_984')!;
    const page = await get(`/books/catalogue/${olio.slug}/index.html`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`<th>UPC</th><td>${olio.upc}</td>`));
    assert.ok(page.text.includes('<h1>Olio</h1>'));
    assert.ok(page.text.includes('<p class="price_color">£23.88</p>'));
    assert.ok(page.text.includes(`<p class="star-rating ${olio.rating}">`));
    assert.ok(olio.description.includes('Olio'));
    assert.equal(new Set(books.map((b) => b.upc)).size, 20);
  });

  it('serves images as JPEG', async () => {
    const image = await get('/books/media/cache/2c/da/2cdad67c44b002e7ead0cc35693c0e8b.jpg');
    assert.equal(image.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual([...image.body.subarray(0, 2)], [0xff, 0xd8]);
    assert.deepEqual([...image.body.subarray(-2)], [0xff, 0xd9]);
  });

  it('fails flaky pages N times, then succeeds', async () => {
    const path = '/flaky/smoke/?fail=2&code=429';
    assert.equal((await get(path)).status, 429);
    const second = await get(path);
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('retry-after'), '1');
    const third = await get(path);
    assert.equal(third.status, 200);
    assert.ok(third.text.includes('<p class="ok">ok smoke</p>'));
    assert.equal(site.hits.get(path), 3);
  });

  it('redirects and serves status codes', async () => {
    const hop = await get('/redirect-chain/2/');
    assert.equal(hop.status, 302);
    assert.equal(hop.headers.get('location'), '/redirect-chain/1/');
    assert.equal((await get('/redirect-chain/1/')).headers.get('location'), '/quotes/');
    const redirect = await get('/redirect/?to=/books/&code=301');
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), '/books/');
    assert.equal((await get('/status/503/')).status, 503);
  });

  it('serves legacy charsets', async () => {
    const latin1 = await get('/charset/latin1/');
    assert.equal(latin1.headers.get('content-type'), 'text/html; charset=ISO-8859-1');
    assert.ok(new TextDecoder('latin1').decode(latin1.body).includes(CHARSET_TEXT.latin1));
    const meta = await get('/charset/meta/');
    assert.equal(meta.headers.get('content-type'), 'text/html');
    assert.ok(new TextDecoder('windows-1252').decode(meta.body).includes(CHARSET_TEXT.meta));
    const sjis = await get('/charset/sjis/');
    assert.ok(new TextDecoder('shift_jis').decode(sjis.body).includes(CHARSET_TEXT.sjis));
  });

  it('serves big pages of the requested size', async () => {
    assert.equal((await get('/big/?kb=50')).body.length, 50 * 1024);
  });

  it('answers 404 for unknown paths', async () => {
    const page = await get('/no/such/page');
    assert.equal(page.status, 404);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
  });

  it('closes hanging requests on close()', async () => {
    const other = await startFixtureSite();
    const hanging = fetch(`${other.url}/hang/`).then(
      () => 'answered',
      () => 'aborted',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await other.close();
    assert.equal(await hanging, 'aborted');
  });
});
