/**
 * Extraction on real pages from the corpus (books.toscrape.com, Wikipedia), with expected values read
 * independently from the same files (regular expressions over the raw HTML, the spidyquotes data).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { corpusPath } from '../fixtures/corpus.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { compileFields, extractDetail, extractItems, loadHtml } from '../../lambdas/engine/extract.ts';

const HOME = fs.readFileSync(corpusPath('listings', 'books-toscrape-home.html'), 'utf8');
const BOOK = fs.readFileSync(corpusPath('listings', 'books-toscrape-book.html'), 'utf8');
const PAGE_URL = 'https://books.toscrape.com/index.html';

/** Expected products, read from the raw HTML without a DOM. */
function productsByRegex(html: string): Array<{ title: string; href: string; price: number; rating: string; img: string }> {
  return html.split('<article class="product_pod">').slice(1).map((chunk) => ({
    title: /<h3><a href="[^"]+" title="([^"]+)"/.exec(chunk)![1]!.replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/&quot;/g, '"'),
    href: /<h3><a href="([^"]+)"/.exec(chunk)![1]!,
    price: Number(/<p class="price_color">£([\d.]+)<\/p>/.exec(chunk)![1]),
    rating: /<p class="star-rating (\w+)">/.exec(chunk)![1]!,
    img: /<img src="([^"]+)"/.exec(chunk)![1]!,
  }));
}

function run(yaml: string, html: string, url = PAGE_URL) {
  const c = parseConfig(yaml);
  return extractItems(loadHtml(html), c.extract, compileFields(c.extract.fields), url);
}

describe('books.toscrape.com home page (corpus)', () => {
  const expected = productsByRegex(HOME);

  it('has 20 products by the independent count', () => assert.equal(expected.length, 20));

  it('gives 20 rows: title, absolute link, price as a number, rating word, image URL, counts and flags', () => {
    const rows = run(`target: { url: "${PAGE_URL}" }
extract:
  container: article.product_pod
  fields:
    - { name: title, selector: h3 a, type: attribute, attribute: title }
    - { name: url, selector: h3 a, type: link }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number] }
    - { name: rating, selector: p.star-rating, type: attribute, attribute: class, transform: ["replace:star-rating:", strip] }
    - { name: image, selector: .image_container, type: image_url }
    - { name: stars, selector: p.star-rating i, type: count }
    - { name: in_stock, selector: .instock.availability, type: exists }
    - { name: on_sale, selector: .sale-badge, type: exists }
    - { name: short, selector: h3 a, type: text }
`, HOME);
    assert.equal(rows.length, 20);
    rows.forEach((row, i) => {
      const e = expected[i]!;
      assert.equal(row.title, e.title);
      assert.equal(row.url, new URL(e.href, PAGE_URL).href);
      assert.match(row.url as string, /^https:\/\/books\.toscrape\.com\/catalogue\/.+\/index\.html$/);
      assert.equal(row.price, e.price);
      assert.equal(typeof row.price, 'number');
      assert.equal(row.rating, e.rating);
      assert.equal(row.image, new URL(e.img, PAGE_URL).href);
      assert.equal(row.stars, 5, 'five star icons, styled by class');
      assert.equal(row.in_stock, true);
      assert.equal(row.on_sale, false);
      assert.ok((e.title.startsWith(String(row.short).replace(/\.\.\.$/, ''))), `${row.short} is a prefix of ${e.title}`);
    });
  });

  it('uses defaults (null allowed) when nothing is extracted, and multiple: true for every match', () => {
    const rows = run(`target: { url: "${PAGE_URL}" }
extract:
  container: article.product_pod
  fields:
    - { name: missing, selector: .nope }
    - { name: missing_default, selector: .nope, default: "n/a" }
    - { name: missing_null, selector: .nope, default: null }
    - { name: no_attr, selector: h3 a, type: attribute, attribute: data-x, default: 0 }
    - { name: empty_after, selector: h3 a, transform: ["regex:zzz"], default: "none" }
    - { name: links, selector: a, type: link, multiple: true }
    - { name: none, selector: .nope, multiple: true }
`, HOME);
    assert.deepEqual(rows[0], {
      missing: null, missing_default: 'n/a', missing_null: null, no_attr: 0, empty_after: 'none',
      links: [new URL(expected[0]!.href, PAGE_URL).href, new URL(expected[0]!.href, PAGE_URL).href], none: [],
    });
  });

  it('single with a container, single over the whole page, html and regex fields', () => {
    const rows = run(`target: { url: "${PAGE_URL}" }
extract:
  type: single
  fields:
    - { name: title, selector: title, transform: [trim_whitespace] }
    - { name: results, selector: form.form-horizontal strong, type: text, transform: [to_number] }
    - { name: page_of, selector: li.current, type: regex, pattern: "Page (\\\\d+) of (\\\\d+)" }
    - { name: pager_html, selector: ul.pager, type: html, transform: [strip_html, trim_whitespace] }
    - { name: next, selector: li.next a, type: link }
`, HOME);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.title, /<title>([\s\S]*?)<\/title>/.exec(HOME)![1]!.replace(/\s+/g, ' ').trim());
    assert.equal(rows[0]!.results, Number(/<strong>(\d+)<\/strong> results/.exec(HOME)![1]));
    assert.equal(rows[0]!.page_of, '1');
    assert.equal(rows[0]!.pager_html, 'Page 1 of 50 next');
    assert.equal(rows[0]!.next, 'https://books.toscrape.com/catalogue/page-2.html');
    const one = run(`target: { url: "${PAGE_URL}" }\nextract: { type: single, container: article.product_pod, fields: [{ name: t, selector: h3 a, type: attribute, attribute: title }] }`, HOME);
    assert.deepEqual(one, [{ t: expected[0]!.title }]);
  });

  it('resolves links against <base href> over the page URL', () => {
    const html = HOME.replace('<head>', '<head><base href="https://mirror.example/shop/">');
    const rows = run(`target: { url: "${PAGE_URL}" }\nextract: { container: article.product_pod, fields: [{ name: u, selector: h3 a, type: link }] }`, html);
    assert.equal(rows[0]!.u, new URL(expected[0]!.href, 'https://mirror.example/shop/').href);
  });
});

describe('books.toscrape.com detail page (corpus)', () => {
  it('detail fields: UPC and the product table as a table', () => {
    const c = parseConfig(`target: { url: "${PAGE_URL}" }
extract: { container: article.product_pod, fields: [{ name: url, selector: h3 a, type: link }] }
detail_fields:
  fields:
    - { name: title, selector: h1 }
    - { name: upc, selector: "table tr:first-child td" }
    - { name: availability, selector: "table tr:contains('Availability') td", transform: [extract_number] }
    - { name: description, selector: "#product_description + p", transform: [strip] }
`);
    const row = extractDetail(loadHtml(BOOK), compileFields(c.detail_fields!.fields), 'https://books.toscrape.com/catalogue/a-light-in-the-attic_1000/index.html');
    assert.equal(row.title, 'A Light in the Attic');
    assert.equal(row.upc, /<th>UPC<\/th><td>([0-9a-f]+)<\/td>/.exec(BOOK)![1]);
    assert.equal(row.upc, 'a897fe39b1053632');
    assert.equal(row.availability, Number(/In stock \((\d+) available\)/.exec(BOOK)![1]));
    assert.match(row.description as string, /^It's hard to imagine a world without A Light in the Attic/);

    const table = run(`target: { url: "${PAGE_URL}" }\nextract: { type: table, container: table.table-striped }`, BOOK);
    const pairs = [...BOOK.matchAll(/<th>([^<]+)<\/th>\s*<td>([^<]+)<\/td>/g)].map((m) => ({ column_1: m[1]!.trim(), column_2: m[2]!.trim() }));
    assert.equal(pairs.length, 7);
    assert.deepEqual(table, pairs, 'a label/value table without a header row: a row per tr, cells by position');
    const rows = run(`target: { url: "${PAGE_URL}" }
extract:
  type: table
  container: table.table-striped
  fields:
    - { name: key, selector: th }
    - { name: value, selector: td }
`, BOOK);
    assert.deepEqual(rows, pairs.map((p) => ({ key: p.column_1, value: p.column_2 })));
  });
});

describe('tables and a large real page', () => {
  it('table type names keys from the header cells', () => {
    const html = `<table class="t"><thead><tr><th>Name</th><th> Born </th><th></th><th>Name</th></tr></thead>
      <tbody><tr><td>Ada</td><td>1815</td><td>x</td><td>A</td></tr><tr><td>Alan</td><td>1912</td><td>y</td><td>B</td></tr></tbody></table>`;
    assert.deepEqual(run('target: { url: "https://x.test/" }\nextract: { type: table, container: table.t }', html), [
      { Name: 'Ada', Born: '1815', column_3: 'x', Name_2: 'A' },
      { Name: 'Alan', Born: '1912', column_3: 'y', Name_2: 'B' },
    ]);
    const noHeader = '<div class="w"><table><tr><td>1</td><td>2</td></tr></table></div>';
    assert.deepEqual(run('target: { url: "https://x.test/" }\nextract: { type: table, container: div.w }', noHeader), [{ column_1: '1', column_2: '2' }]);
  });

  it('Wikipedia "Elvis Presley": every link of the article body, absolute, as the raw HTML has them', () => {
    const html = fs.readFileSync(corpusPath('links', 'wikipedia-elvis-presley.html'), 'utf8');
    const rows = run(`target: { url: "https://en.wikipedia.org/wiki/Elvis_Presley" }
extract:
  type: single
  fields:
    - { name: links, selector: "a[href]", type: link, multiple: true }
    - { name: n, selector: "a[href]", type: count }
`, html, 'https://en.wikipedia.org/wiki/Elvis_Presley');
    const raw = [...html.matchAll(/<a\b[^>]*?\shref="([^"]*)"/g)].map((m) => m[1]!);
    assert.equal(rows[0]!.n, raw.length, 'count matches an independent scan of <a href>');
    const links = rows[0]!.links as string[];
    assert.ok(links.length > 3000, `${links.length} links`);
    assert.ok(links.every((l) => /^(https?|mailto|tel|ftp):/.test(l)), 'all absolute');
    assert.ok(links.includes('https://en.wikipedia.org/wiki/Tupelo,_Mississippi'));
  });
});
