import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bookCategories, bookDetails, bookshopPage } from '../fixtures/site/books.ts';
import { CHARSET_TEXT } from '../fixtures/site/charset.ts';
import { escapeHtml } from '../fixtures/site/http.ts';
import { allQuotes, quotesWithTag, topTags } from '../fixtures/site/quotes.ts';
import { fixturePage, startFixtureSite } from '../fixtures/site/server.ts';
import { ARTICLE, articleHtml } from '../fixtures/site/article.ts';
import { MEMBER, READING_LIST } from '../fixtures/site/login.ts';
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
    const page = await get('/quotes/author/R-L-Ashdown/');
    assert.equal(page.status, 200);
    // The real site's markup error, kept: the heading is closed by </h2>.
    assert.ok(page.text.includes('<h3 class="author-title">R.L. Ashdown\n    </h2>'));
    assert.ok(page.text.includes('<span class="author-born-date">July 12, 1962</span>'));
    assert.ok(page.text.includes('<span class="author-born-location">in Hexham,'));
    // Accents folded, apostrophes dropped in the slug.
    assert.ok((await get('/quotes/author/Renee-Duval/')).text.includes('<h3 class="author-title">Renée Duval'));
    assert.ok((await get('/quotes/author/Siobhan-OConnell/')).text.includes('<h3 class="author-title">Siobhán O&#39;Connell'));
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

  it('serves the books home page: 20 books with the real site\'s markup, "Page 1 of 3", the category sidebar', async () => {
    const page = await get('/books/');
    assert.equal(page.status, 200);
    assert.equal(page.text, bookshopPage('/books/'));
    assert.equal((await get('/books/index.html')).text, page.text);
    assert.equal(count(page.text, '<article class="product_pod">'), 20);
    assert.ok(page.text.includes('<h3><a href="catalogue/a-lantern-for-the-lighthouse-keeper_20/index.html" title="A Lantern for the Lighthouse Keeper">A Lantern for the ...</a></h3>'));
    assert.ok(page.text.includes('title="It&#39;s Always Tuesday in Vellmar">It&#39;s Always Tuesday in ...</a>'));
    assert.ok(page.text.includes('title="Bread &amp; Circuits">Bread &amp; Circuits</a>'));
    assert.ok(page.text.includes('<p class="price_color">£51.20</p>'));
    assert.ok(page.text.includes('<p class="price_color">£10.00</p>'));
    assert.ok(page.text.includes('<p class="star-rating Three">'));
    assert.match(page.text, /<strong>60<\/strong> results - showing <strong>1<\/strong> to <strong>20<\/strong>\./);
    assert.match(page.text, /<li class="current">\s*Page 1 of 3\s*<\/li>\s*<li class="next"><a href="catalogue\/page-2\.html">next<\/a><\/li>/);
    assert.ok(!page.text.includes('class="previous"'));
    const categories = [...page.text.matchAll(/<a href="catalogue\/category\/books\/([^"]+)\/index\.html">\s*([^<]*?)\s*<\/a>/g)].map((m) => [m[2], `catalogue/category/books/${m[1]}/index.html`]);
    assert.deepEqual(categories, bookCategories().map((c) => [c.name, c.path]));
    assert.ok(!/(?:href|src)="(?:https?:)?\/\//.test(page.text), 'no link to another host');
  });

  it('serves catalogue pages relative to catalogue/', async () => {
    const page = await get('/books/catalogue/page-2.html');
    assert.equal(count(page.text, '<article class="product_pod">'), 20);
    assert.ok(page.text.includes('href="a-lantern-for-the-lighthouse-keeper_20/index.html"'));
    assert.ok(page.text.includes('src="../media/cache/'));
    assert.ok(page.text.includes('Page 2 of 3'));
    assert.ok(page.text.includes('<li class="next"><a href="page-3.html">next</a></li>'));
    assert.ok(page.text.includes('<li class="previous"><a href="page-1.html">previous</a></li>'));
    assert.ok(!(await get('/books/catalogue/page-3.html')).text.includes('class="next"'));
    assert.equal((await get('/books/catalogue/page-4.html')).status, 404);
  });

  it('serves category pages with their books, and Books with all of them', async () => {
    const total = bookCategories().reduce((n, c) => n + c.books.length, 0);
    assert.equal(total, 20);
    for (const c of bookCategories()) {
      const page = await get(`/books/${c.path}`);
      assert.equal(page.status, 200, c.path);
      assert.ok(page.text.includes(`<h1>${c.name}</h1>`));
      assert.equal(count(page.text, '<article class="product_pod">'), c.books.length, c.name);
      assert.ok(c.books.every((b) => page.text.includes(`href="../../../${b.slug}/index.html"`)), c.name);
      assert.ok(page.text.includes(`<strong>${c.books.length}</strong> results`));
      assert.ok(!page.text.includes('class="pager"'));
    }
    assert.equal(count((await get('/books/catalogue/category/books_1/index.html')).text, '<article class="product_pod">'), 20);
    assert.equal((await get('/books/catalogue/category/books/cookery_9/index.html')).status, 404);
  });

  it('serves detail pages matching bookDetails()', async () => {
    const books = bookDetails();
    assert.equal(books.length, 20);
    const first = books[0]!;
    assert.deepEqual([first.slug, first.upc, first.price, first.rating, first.category, first.stock], ['a-lantern-for-the-lighthouse-keeper_20', '6a31a6d75bb4e6de', 51.2, 'Three', 'Poetry', 22]);
    const firstPage = await get(`/books/catalogue/${first.slug}/index.html`);
    assert.ok(firstPage.text.includes('<h1>A Lantern for the Lighthouse Keeper</h1>'));
    assert.ok(firstPage.text.includes('<th>UPC</th><td>6a31a6d75bb4e6de</td>'));
    assert.ok(firstPage.text.includes('In stock (22 available)'));
    assert.match(firstPage.text, /<a href="\.\.\/category\/books\/poetry_2\/index\.html">Poetry<\/a>/);

    const bread = books.find((b) => b.slug === 'bread-circuits_11')!;
    const page = await get(`/books/catalogue/${bread.slug}/index.html`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`<th>UPC</th><td>${bread.upc}</td>`));
    assert.ok(page.text.includes('<h1>Bread &amp; Circuits</h1>'));
    assert.ok(page.text.includes('<p class="price_color">£55.55</p>'));
    assert.ok(page.text.includes(`<p class="star-rating ${bread.rating}">`));
    assert.ok(page.text.includes('In stock (1 available)'));
    assert.match(page.text, /<div id="product_description" class="sub-header">\s*<h2>Product Description<\/h2>\s*<\/div>\s*<p>What a bakery and a chip factory/);
    assert.equal(new Set(books.map((b) => b.upc)).size, 20);
    assert.equal((await get('/books/catalogue/no-such-book_0/index.html')).status, 404);
  });

  it('serves the news article, and /article/amp/ redirects to it; fixturePage() gives the same text without a server', async () => {
    const page = await get('/article/');
    assert.equal(page.status, 200);
    assert.equal(page.text, articleHtml());
    assert.equal(fixturePage('/article/'), page.text);
    assert.equal(fixturePage('/quotes/page/3/'), (await get('/quotes/page/3/')).text);
    assert.ok(page.text.includes(`<html lang="${ARTICLE.lang}">`));
    assert.ok(page.text.includes(`<meta property="og:site_name" content="${ARTICLE.siteName}">`));
    for (const p of ARTICLE.paragraphs) assert.ok(page.text.includes(escapeHtml(p).slice(0, 60)), p.slice(0, 40));
    const amp = await get('/article/amp/');
    assert.equal(amp.status, 301);
    assert.equal(amp.headers.get('location'), '/article/');
    assert.throws(() => fixturePage('/no/such/page'), /answers 404/);
  });

  it('signs in with a POSTed form: the session cookie opens the reading list, which without it redirects to the form', async () => {
    const away = await get('/members/reading-list/');
    assert.equal(away.status, 302);
    assert.equal(away.headers.get('location'), '/login/?next=%2Fmembers%2Freading-list%2F');
    const form = await get('/login/?next=/members/reading-list/');
    assert.match(form.text, /<form id="login" method="post" action="\/login\/">/);
    assert.ok(form.text.includes('<input type="hidden" name="next" value="/members/reading-list/">'));
    const post = (fields: Record<string, string>) => fetch(`${site.url}/login/`, { method: 'POST', redirect: 'manual', body: new URLSearchParams(fields) });
    const wrong = await post({ username: MEMBER.username, password: 'nope', next: '/members/reading-list/' });
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /<p class="error">Wrong name or password\.<\/p>/);
    assert.equal(wrong.headers.get('set-cookie'), null);
    const right = await post({ ...MEMBER, next: '/members/reading-list/' });
    assert.equal(right.status, 303);
    assert.equal(right.headers.get('location'), '/members/reading-list/');
    const cookie = right.headers.get('set-cookie')!.split(';')[0]!;
    assert.match(cookie, /^session=/);
    const list = await fetch(`${site.url}/members/reading-list/`, { headers: { cookie } });
    assert.equal(list.status, 200);
    const html = await list.text();
    assert.deepEqual([...html.matchAll(/<td class="title">([^<]*)<\/td>/g)].map((m) => m[1]), READING_LIST.map((r) => r.title));
    // An outside `next` is not followed.
    assert.equal((await post({ ...MEMBER, next: 'https://elsewhere.example/' })).headers.get('location'), '/members/reading-list/');
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
