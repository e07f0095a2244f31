/**
 * Field extraction (lambdas/engine/extract.ts) on the fixture site's pages: the books home page and a book's detail
 * page (books.toscrape.com's markup), the quotes table and the <base href> page, through loadHtml + extractItems /
 * extractDetail exactly as the engines call them. Expected values are read from the HTML with plain regexes
 * (test/engine/helpers.ts) or from the fixture's quotes data, never from the engine. Extraction on the real
 * books.toscrape.com pages: test/corpus/real-pages.test.ts.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { compileFields, documentBase, extractDetail, extractItems, loadHtml, type Row } from '../../lambdas/engine/extract.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes, QUOTES_PER_PAGE } from '../fixtures/site/quotes.ts';
import { decodeEntities } from '../fixtures/site/http.ts';
import { booksHomeHtml, homePods, poundsToNumber } from '../engine/helpers.ts';
import { bookshopPage } from '../fixtures/site/books.ts';

/** Where the pages are taken to live; links resolve against it. */
const HOME_URL = 'https://books.example/index.html';
const BOOK_URL = 'https://books.example/catalogue/a-lantern-for-the-lighthouse-keeper_20/index.html';

/** Runs the `extract` block of a config (YAML, target added here) over `html` as if fetched from `pageUrl`. */
function extract(html: string, extractYaml: string, pageUrl: string): Row[] {
  const config = parseConfig(`target: { url: "${pageUrl}" }\n${extractYaml}`);
  const $ = loadHtml(html);
  return extractItems($, config.extract, compileFields(config.extract.fields), pageUrl);
}

/** Runs fields (the YAML `fields:` block, indented two spaces) as detail fields over a whole page. */
function detail(html: string, fieldsYaml: string, pageUrl: string): Row {
  const c = parseConfig(`target: { url: "${pageUrl}" }\nextract:\n  type: single\n${fieldsYaml}`);
  const $ = loadHtml(html);
  return extractDetail($, compileFields(c.extract.fields), pageUrl);
}

const home = () => booksHomeHtml();
const book = () => bookshopPage('/books/catalogue/a-lantern-for-the-lighthouse-keeper_20/index.html')!;

describe('list extraction on the books home page', () => {
  const pods = homePods();

  it('the independent reading finds the 20 books of the catalogue', () => {
    assert.equal(pods.length, 20);
    assert.equal(pods[0]!.title, 'A Lantern for the Lighthouse Keeper');
    assert.ok(pods.every((p) => /^£\d+\.\d\d$/.test(p.priceText)));
  });

  it('20 rows: full title from the title attribute, absolute link, price as a number, rating word', () => {
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: title, selector: h3 a, type: attribute, attribute: title }
    - { name: url, selector: h3 a, type: link }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number] }
    - { name: rating, selector: p.star-rating, type: attribute, attribute: class, transform: ["replace:star-rating:", strip] }
`, HOME_URL);
    assert.equal(rows.length, 20);
    rows.forEach((row, i) => {
      const pod = pods[i]!;
      assert.deepEqual(row, {
        title: pod.title,
        url: new URL(pod.href, HOME_URL).href,
        price: poundsToNumber(pod.priceText),
        rating: pod.rating,
      }, `product ${i + 1}`);
      assert.equal(typeof row.price, 'number');
      assert.match(row.url as string, /^https:\/\/books\.example\/catalogue\/[^/]+\/index\.html$/);
    });
    // Titles with entities come out decoded (the page writes It&#39;s Always Tuesday in Vellmar, Bread &amp; Circuits).
    assert.ok(rows.some((r) => r.title === "It's Always Tuesday in Vellmar"));
    assert.ok(rows.some((r) => r.title === 'Bread & Circuits'));
  });

  it('text of a truncated link differs from the title attribute; text is not trimmed without strip', () => {
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: shown, selector: h3 a }
    - { name: avail, selector: p.availability }
    - { name: avail_clean, selector: p.availability, transform: [trim_whitespace] }
`, HOME_URL);
    rows.forEach((row, i) => assert.equal(row.shown, pods[i]!.linkText));
    assert.equal(rows[0]!.shown, 'A Lantern for the ...');
    assert.notEqual(rows[0]!.avail, 'In stock');
    assert.match(rows[0]!.avail as string, /^\s+In stock\s+$/);
    assert.ok(rows.every((r) => r.avail_clean === 'In stock'));
  });

  it('the link resolves against the page URL passed in, wherever the page came from', () => {
    const elsewhere = 'http://mirror.example:8080/shop/books/index.html';
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: url, selector: h3 a, type: link }
`, elsewhere);
    assert.deepEqual(rows.map((r) => r.url), pods.map((p) => `http://mirror.example:8080/shop/books/${p.href}`));
  });

  it('the rating word also comes out of the regex field type and the regex transform', () => {
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: rating, selector: p.star-rating, type: attribute, attribute: class, transform: ["regex:star-rating (\\\\w+)", lowercase] }
    - { name: pence, selector: .product_price, type: regex, pattern: "£\\\\d+\\\\.(\\\\d\\\\d)" }
    - { name: whole, selector: .product_price, type: regex, pattern: "£\\\\d+" }
`, HOME_URL);
    rows.forEach((row, i) => {
      const pod = pods[i]!;
      assert.equal(row.rating, pod.rating.toLowerCase());
      assert.equal(row.pence, pod.priceText.slice(-2), 'the group of the pattern, as text');
      assert.equal(row.whole, pod.priceText.slice(0, pod.priceText.indexOf('.')), 'no group: the whole match');
    });
  });

  it('image_url from src, absolute; on a wrapper it takes the img inside', () => {
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: img, selector: img.thumbnail, type: image_url }
    - { name: via_wrapper, selector: .image_container, type: image_url }
    - { name: via_pod, type: image_url }
`, HOME_URL);
    rows.forEach((row, i) => {
      const expected = new URL(pods[i]!.imgSrc, HOME_URL).href;
      assert.equal(row.img, expected);
      assert.equal(row.via_wrapper, expected);
      assert.equal(row.via_pod, expected, 'without a selector the item itself is the element');
    });
  });

  it('count and exists always have a value, transforms apply to them', () => {
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: stars, selector: p.star-rating i.icon-star, type: count }
    - { name: stars_label, selector: p.star-rating i.icon-star, type: count, transform: ["template:{value} icons"] }
    - { name: buttons, selector: button, type: count }
    - { name: none, selector: .no-such-thing, type: count }
    - { name: in_stock, selector: .instock .icon-ok, type: exists }
    - { name: on_sale, selector: .sale-badge, type: exists }
`, HOME_URL);
    rows.forEach((row, i) => {
      const pod = pods[i]!;
      assert.equal(row.stars, pod.stars);
      assert.equal(row.stars_label, `${pod.stars} icons`);
      assert.equal(row.buttons, 1);
      assert.equal(row.none, 0);
      assert.equal(row.in_stock, pod.inStock);
      assert.equal(row.on_sale, false);
    });
    // The star count does not tell ratings apart (every pod has five icons): the class does.
    assert.ok(new Set(pods.map((p) => p.rating)).size > 1);
  });

  it('html is the inner HTML, characters as the page has them', () => {
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: price_html, selector: p.price_color, type: html }
    - { name: h3, selector: h3, type: html }
    - { name: h3_text, selector: h3, type: html, transform: [strip_html] }
`, HOME_URL);
    rows.forEach((row, i) => {
      const pod = pods[i]!;
      assert.equal(row.price_html, pod.priceText, 'the £ sign stays a character, not &#xa3;');
      assert.match(row.h3 as string, new RegExp(`^<a href="${pod.href.replace(/[.]/g, '\\.')}" title="[^"]+">`));
      assert.equal(row.h3_text, pod.linkText);
    });
  });

  it('count over the whole page with type single and no container', () => {
    const [row] = extract(home(), `extract:
  type: single
  fields:
    - { name: products, selector: article.product_pod, type: count }
    - { name: heading, selector: h1 }
    - { name: results, selector: form strong, transform: [to_number] }
    - { name: pager, selector: li.current, transform: [trim_whitespace] }
    - { name: next, selector: li.next a, type: link }
`, HOME_URL);
    const pageText = home();
    assert.deepEqual(row, {
      products: (pageText.match(/<article class="product_pod">/g) ?? []).length,
      heading: /<h1>([^<]*)<\/h1>/.exec(pageText)![1],
      results: Number(/<strong>(\d+)<\/strong> results/.exec(pageText)![1]),
      pager: /<li class="current">\s*([^<]*?)\s*<\/li>/.exec(pageText)![1],
      next: new URL(/<li class="next"><a href="([^"]+)"/.exec(pageText)![1]!, HOME_URL).href,
    });
    assert.equal(row!.results, 60);
  });

  it('multiple: true gives every match in page order, transforms applied to each, blanks dropped', () => {
    const [row] = extract(home(), `extract:
  type: single
  fields:
    - { name: categories, selector: ".side_categories ul li ul li a", multiple: true, transform: [strip] }
    - { name: prices, selector: p.price_color, multiple: true, transform: [strip_currency, to_number] }
    - { name: none, selector: .no-such-thing, multiple: true }
    - { name: none_default, selector: .no-such-thing, multiple: true, default: "no tags" }
`, HOME_URL);
    const sidebar = home().slice(home().indexOf('<div class="side_categories">'));
    const inner = sidebar.slice(sidebar.indexOf('<ul>'), sidebar.indexOf('</aside>') === -1 ? undefined : sidebar.indexOf('</aside>'));
    const names = [...inner.matchAll(/<a href="catalogue\/category\/books\/[^"]+">\s*([^<]*?)\s*<\/a>/g)].map((m) => decodeEntities(m[1]!));
    assert.equal(names.length, 6);
    assert.deepEqual(row!.categories, names);
    assert.deepEqual(row!.prices, pods.map((p) => poundsToNumber(p.priceText)));
    assert.deepEqual(row!.none, []);
    assert.equal(row!.none_default, 'no tags');
  });
});

describe('defaults: when nothing is extracted', () => {
  it('a missing element, a missing attribute or a blank result take the default; null and no default give null', () => {
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: discount, selector: .discount, default: "none" }
    - { name: discount_null, selector: .discount, default: null }
    - { name: discount_zero, selector: .discount, type: count }
    - { name: no_default, selector: .discount }
    - { name: no_attr, selector: h3 a, type: attribute, attribute: data-sku, default: "n/a" }
    - { name: no_match, selector: p.price_color, transform: ["regex:(\\\\$\\\\d+)"], default: 0 }
    - { name: blank, selector: .image_container, default: "blank" }
    - { name: regex_miss, selector: h3 a, type: regex, pattern: "\\\\d{6}", default: false }
`, HOME_URL);
    for (const row of rows) {
      assert.deepEqual(row, {
        discount: 'none', discount_null: null, discount_zero: 0, no_default: null, no_attr: 'n/a', no_match: 0, blank: 'blank', regex_miss: false,
      });
    }
  });

  it('a found value wins over the default', () => {
    const rows = extract(home(), `extract:
  container: article.product_pod
  fields:
    - { name: price, selector: p.price_color, default: "unknown" }
`, HOME_URL);
    rows.forEach((row, i) => assert.equal(row.price, homePods()[i]!.priceText));
  });
});

describe('a single value is the first match in document order', () => {
  it('plain, positional (:last, :eq) and sibling selectors give the same value as the full match list would', () => {
    const html = home();
    const $ = loadHtml(html);
    const pods = homePods();
    const row = detail(html, `  fields:
    - { name: first_title, selector: "article.product_pod h3 a", type: attribute, attribute: title }
    - { name: last_title, selector: "article.product_pod h3 a:last", type: attribute, attribute: title }
    - { name: third_price, selector: "p.price_color:eq(2)" }
    - { name: sibling, selector: "div.image_container + p", type: attribute, attribute: class }
    - { name: all_titles, selector: "article.product_pod h3 a", type: attribute, attribute: title, multiple: true }
`, HOME_URL);
    assert.equal(row.first_title, pods[0]!.title);
    assert.equal(row.last_title, pods[pods.length - 1]!.title);
    assert.equal(row.third_price, pods[2]!.priceText);
    assert.equal(row.sibling, $('div.image_container + p').first().attr('class'));
    assert.match(String(row.sibling), /^star-rating /);
    assert.deepEqual(row.all_titles, pods.map((p) => p.title));
  });
});

describe('single extraction on a book\'s page', () => {
  const page = () => book();
  const description = () => decodeEntities(/<div id="product_description"[\s\S]*?<\/div>\s*<p>([\s\S]*?)<\/p>/.exec(page())![1]!);

  it('with a container: the first match only', () => {
    const rows = extract(page(), `extract:
  type: single
  container: div.product_main
  fields:
    - { name: title, selector: h1 }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number] }
    - { name: available, selector: p.availability, transform: [extract_number] }
    - { name: rating, selector: p.star-rating, type: attribute, attribute: class, transform: ["split: :-1"] }
    - { name: crumbs, selector: ".breadcrumb a", type: count }
`, BOOK_URL);
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0], {
      title: /<h1>([^<]*)<\/h1>/.exec(page())![1],
      price: poundsToNumber(/<p class="price_color">([^<]*)<\/p>/.exec(page())![1]!),
      available: Number(/In stock \((\d+) available\)/.exec(page())![1]),
      rating: /<p class="star-rating (\w+)">/.exec(page())![1],
      crumbs: 0, // the breadcrumb is outside div.product_main
    });
  });

  it('without a container: the whole document', () => {
    const [row] = extract(page(), `extract:
  type: single
  fields:
    - { name: crumbs, selector: ".breadcrumb a", type: count }
    - { name: home, selector: ".breadcrumb a", type: link }
    - { name: description, selector: "#product_description + p" }
`, BOOK_URL);
    assert.equal(row!.crumbs, (page().slice(page().indexOf('<ul class="breadcrumb">'), page().indexOf('</ul>', page().indexOf('<ul class="breadcrumb">'))).match(/<a href/g) ?? []).length);
    assert.equal(row!.home, 'https://books.example/index.html');
    assert.equal(row!.description, description());
  });

  it('a container that matches nothing gives no row', () => {
    assert.deepEqual(extract(page(), 'extract:\n  type: single\n  container: div.no-such-box\n  fields:\n    - { name: a, selector: h1 }\n', BOOK_URL), []);
  });

  it('extractDetail applies detail fields to the whole page: UPC and description', () => {
    const row = detail(page(), `  fields:
    - { name: upc, selector: "table tr:first-child td" }
    - { name: description, selector: "#product_description + p", transform: [strip] }
    - { name: reviews, selector: "table tr:last-child td", transform: [to_number] }
`, BOOK_URL);
    assert.deepEqual(row, {
      upc: /<th>UPC<\/th><td>([^<]*)<\/td>/.exec(page())![1],
      description: description().trim(),
      reviews: Number(/<th>Number of reviews<\/th>\s*<td>(\d+)<\/td>/.exec(page())![1]),
    });
    assert.equal(row.upc, '6a31a6d75bb4e6de');
  });
});

describe('table extraction', () => {
  let site: FixtureSite;
  let quotesTable = '';
  before(async () => {
    site = await startFixtureSite();
    const res = await fetch(`${site.url}/quotes-table/`);
    assert.equal(res.status, 200);
    quotesTable = await res.text();
  });
  after(async () => { await site.close(); });

  it('without fields, the header cells name the keys (/quotes-table/)', () => {
    const rows = extract(quotesTable, 'extract:\n  type: table\n  container: table.quotes\n', `${site.url}/quotes-table/`);
    const expected = allQuotes().slice(0, QUOTES_PER_PAGE);
    assert.equal(rows.length, expected.length);
    rows.forEach((row, i) => {
      const q = expected[i]!;
      assert.deepEqual(row, { Author: q.author, Quote: q.text, Tags: q.tags.join(', ') });
    });
  });

  it('with fields, each selector applies inside the row', () => {
    const rows = extract(quotesTable, `extract:
  type: table
  container: table.quotes
  fields:
    - { name: author, selector: "td:nth-child(1)" }
    - { name: first_tag, selector: "td:nth-child(3)", transform: ["split:, :0"] }
    - { name: tags_piped, selector: "td:nth-child(3)", transform: ["replace:, :|"] }
`, `${site.url}/quotes-table/`);
    const expected = allQuotes().slice(0, QUOTES_PER_PAGE);
    assert.deepEqual(rows.map((r) => r.author), expected.map((q) => q.author));
    assert.deepEqual(rows.map((r) => r.first_tag), expected.map((q) => q.tags[0] ?? null));
    assert.deepEqual(rows.map((r) => r.tags_piped), expected.map((q) => q.tags.join('|') || null));
  });

  it('a container naming an element around the table finds the table inside', () => {
    const rows = extract(quotesTable, 'extract:\n  type: table\n  container: div.container\n', `${site.url}/quotes-table/`);
    assert.equal(rows.length, QUOTES_PER_PAGE);
    assert.equal(rows[0]!.Author, allQuotes()[0]!.author);
  });

  it('the book page product table: th/td rows with fields, column_N keys without a header row', () => {
    const expected = [...book().matchAll(/<th>([^<]*)<\/th>\s*<td>([^<]*)<\/td>/g)].map((m) => [decodeEntities(m[1]!), decodeEntities(m[2]!)]);
    assert.equal(expected.length, 7);
    const withFields = extract(book(), `extract:
  type: table
  container: table.table-striped
  fields:
    - { name: key, selector: th }
    - { name: value, selector: td }
`, BOOK_URL);
    assert.deepEqual(withFields.map((r) => [r.key, r.value]), expected);
    const bare = extract(book(), 'extract:\n  type: table\n  container: table.table-striped\n', BOOK_URL);
    assert.deepEqual(bare.map((r) => [r.column_1, r.column_2]), expected);
    assert.equal(bare[0]!.column_2, '6a31a6d75bb4e6de');
  });

  it('inline table: repeated and empty header names, nested tables not mixed in', () => {
    const html = `<table id="t">
<tr><th>Name</th><th></th><th>Name</th></tr>
<tr><td>a</td><td> 1 </td><td>b<table><tr><td>inner</td></tr></table></td></tr>
<tr><td>c</td><td>2</td><td>d</td></tr>
</table>`;
    const rows = extract(html, 'extract:\n  type: table\n  container: "#t"\n', 'https://example.com/');
    assert.equal(rows.length, 2);
    assert.deepEqual(Object.keys(rows[0]!), ['Name', 'column_2', 'Name_2']);
    assert.equal(rows[0]!.column_2, '1');
    assert.equal(rows[1]!.Name_2, 'd');
  });
});

describe('URLs: <base href>, lazy images, odd links', () => {
  let site: FixtureSite;
  before(async () => { site = await startFixtureSite(); });
  after(async () => { await site.close(); });

  it('the fixture /base-href/ page: links and lazy images resolve against <base href>, not the page URL', async () => {
    const pageUrl = `${site.url}/base-href/`;
    const html = await (await fetch(pageUrl)).text();
    const baseHref = /<base href="([^"]+)"/.exec(html)![1]!;
    const base = new URL(baseHref, pageUrl).href;
    assert.equal(base, `${site.url}/books/catalogue/`);
    const $ = loadHtml(html);
    assert.equal(documentBase($, pageUrl), base);
    const [row] = extract(html, `extract:
  type: single
  fields:
    - { name: links, selector: a.rel, type: link, multiple: true }
    - { name: up, selector: a.up, type: link }
    - { name: image, selector: img, type: image_url }
`, pageUrl);
    const hrefs = [...html.matchAll(/<a class="rel" href="([^"]+)"/g)].map((m) => new URL(m[1]!, base).href);
    assert.deepEqual(row!.links, hrefs);
    assert.equal(row!.up, `${site.url}/books/index.html`);
    assert.equal(row!.image, `${site.url}/books/media/x.jpg`);
    // The links work on the fixture site, which they would not against the page URL.
    for (const url of row!.links as string[]) assert.equal((await fetch(url)).status, 200, url);
  });

  it('inline: a relative <base href> resolves against the page URL first', () => {
    const html = '<html><head><base href="/shop/"></head><body><a href="item/1">x</a></body></html>';
    const [row] = extract(html, 'extract:\n  type: single\n  fields:\n    - { name: u, selector: a, type: link }\n', 'https://example.com/deep/page.html');
    assert.equal(row!.u, 'https://example.com/shop/item/1');
    const none = '<html><body><a href="item/1">x</a></body></html>';
    const [plain] = extract(none, 'extract:\n  type: single\n  fields:\n    - { name: u, selector: a, type: link }\n', 'https://example.com/deep/page.html');
    assert.equal(plain!.u, 'https://example.com/deep/item/1');
  });

  it('image_url: data-src when src is missing or a data: placeholder; a real src wins', () => {
    const html = `<ul>
<li><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="/img/lazy-1.jpg"></li>
<li><img data-src="img/lazy-2.jpg"></li>
<li><img src="/img/real.jpg" data-src="/img/other.jpg"></li>
<li><a href="/p/4"><img data-lazy-src="//cdn.example.net/4.jpg"></a></li>
<li><span>no image</span></li>
</ul>`;
    const rows = extract(html, 'extract:\n  container: li\n  fields:\n    - { name: img, type: image_url, default: null }\n', 'https://example.com/gallery/');
    assert.deepEqual(rows.map((r) => r.img), [
      'https://example.com/img/lazy-1.jpg',
      'https://example.com/gallery/img/lazy-2.jpg',
      'https://example.com/img/real.jpg',
      'https://cdn.example.net/4.jpg',
      null,
    ]);
  });

  it('link: javascript: and empty hrefs give the default; a selector on a card takes the link inside', () => {
    const html = `<div class="card"><h2><a href="/a">A</a></h2></div>
<div class="card"><h2><a href="javascript:void(0)">B</a></h2></div>
<div class="card"><h2><a href="  ">C</a></h2></div>
<div class="card"><h2><a href="#reviews">D</a></h2></div>`;
    const rows = extract(html, 'extract:\n  container: div.card\n  fields:\n    - { name: u, selector: h2, type: link, default: "none" }\n', 'https://example.com/list?p=1');
    assert.deepEqual(rows.map((r) => r.u), ['https://example.com/a', 'none', 'none', 'https://example.com/list?p=1#reviews']);
  });
});
