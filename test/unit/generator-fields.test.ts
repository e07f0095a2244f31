/**
 * The generator's fields (lambdas/generator/fields.ts `findColumns` and `nameColumns`, through suggest.ts
 * `suggestConfig`; docs/generate.md "The generator without an LLM", step 5) on small hand-made pages, one rule
 * each: a value only some records have is still a field (null in the others); a text the same in every record
 * that labels the value after it ("Author:", "Tags:", a `dt`) is no field and names that value; a label at the
 * start of every value names the field and is cut off, one in the middle splits the text in two; "Read more"
 * links are no field; a list of like links in varying numbers is one `multiple` field; columns are named after
 * their class, itemprop, element and values (price, date, image, url; `_2` for a second of a kind); the prompt's
 * fields get the prompt's names, and every other column is kept only when the prompt asks for everything.
 *
 * The rows are what the written config extracts (the engine's own extraction), compared with what the page was
 * built from. Some of these first showed defects of the generator (tag lists with a single tag, a `<time>` right inside
 * the record, a value after a classed label of its tag, the title link's field taking other links); they are fixed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { suggestConfig, writeConfigYaml, type Suggestion } from '../../lambdas/generator/suggest.ts';
import { analyzePage, type PageAnalysis, type RecordCandidate } from '../../lambdas/generator/analyze.ts';
import { findColumns, nameColumns, recordLayout, type Column } from '../../lambdas/generator/fields.ts';
import { readPrompt } from '../../lambdas/generator/prompt.ts';
import { parseConfig, type FieldSpec } from '../../lambdas/engine/config.ts';
import { compileFields, extractItems, type Row } from '../../lambdas/engine/extract.ts';

const BASE = 'https://shop.example/lamps/';

/** A whole page: a header with the logo and a search form, the content in <main>, a footer. */
function page(title: string, content: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/static/site.css"></head>
<body>
<header class="site-header">
  <a class="logo" href="/"><img src="/static/logo.png" alt="Example"></a>
  <form action="/search"><input name="q"><button type="submit">Search</button></form>
</header>
<main>
<h1>${title}</h1>
${content}
</main>
<footer class="site-footer"><p>© 2026 Example Ltd.</p> <a href="/about">About us</a> <a href="/privacy">Privacy</a></footer>
</body>
</html>`;
}

const WORDS = ['amber', 'brass', 'cedar', 'dune', 'ember', 'fjord', 'granite', 'harbor', 'indigo', 'juniper', 'kestrel', 'linen', 'maple', 'nectar', 'opal', 'pewter'];
const PEOPLE = ['Jane Doe', 'Ann Lee', 'Tom Hardy', 'Mia Wong', 'Raj Patel', 'Eva Stone', 'Leo Marsh', 'Kim Park', 'Ola Berg', 'Sam Reed', 'Ida Holm', 'Noor Khan'];
const DATES = ['March 3, 2021', 'May 9, 2019', 'June 1, 2020', 'July 4, 2018', 'January 5, 2022', 'February 2, 2017', 'October 10, 2016', 'August 8, 2023'];
const cap = (w: string) => `${w[0]!.toUpperCase()}${w.slice(1)}`;
const w = (i: number) => WORDS[i % WORDS.length]!;

/** The suggestion for a page, with its YAML and first rows in assertion messages. */
function suggest(html: string): Suggestion {
  return suggestConfig(html, BASE);
}

function explain(s: Suggestion): string {
  return `fields ${JSON.stringify(s.fields)}\n${s.yaml}\nfirst rows: ${JSON.stringify(s.rows.slice(0, 3))}`;
}

/** A field of the suggested config, parsed. */
function spec(s: Suggestion, name: string): FieldSpec {
  const f = parseConfig(s.yaml).extract.fields.find((x) => x.name === name);
  assert.ok(f, `no field "${name}": ${explain(s)}`);
  return f;
}

const column = (rows: Row[], name: string): unknown[] => rows.map((r) => r[name]);

/** The name of the field whose values are exactly `expected`, row by row (null when none is). */
function fieldWithValues(s: Suggestion, expected: unknown[]): string | null {
  return s.fields.find((f) => { try { assert.deepEqual(column(s.rows, f), expected); return true; } catch { return false; } }) ?? null;
}

/** Every string value of the rows, lists flattened. */
function allValues(rows: Row[]): unknown[] {
  return rows.flatMap((r) => Object.values(r).flatMap((v) => (Array.isArray(v) ? v : [v])));
}

/** The page's best candidate and its columns (the heuristic generator's first steps). */
function columnsOf(html: string): { a: PageAnalysis; c: RecordCandidate; columns: Column[] } {
  const a = analyzePage(html, BASE);
  const c = a.candidates[0];
  assert.ok(c, 'no candidate');
  return { a, c, columns: findColumns(a.$, c.items, BASE, recordLayout(c)) };
}

/** The rows a config with these fields extracts from the page (written and parsed as the generator does). */
function rowsWith(a: PageAnalysis, c: RecordCandidate, fields: FieldSpec[]): Row[] {
  const yaml = writeConfigYaml({ version: '2.0', name: 'test', target: { url: BASE }, extract: { container: c.selector, type: 'list', ...(c.span ? { following_siblings: c.span } : {}), fields } });
  const config = parseConfig(yaml);
  return extractItems(a.$, config.extract, compileFields(config.extract.fields), BASE);
}

describe('fields: values only some records have', () => {
  it('a price on 3 of 12 products and a badge on 2 others are fields, null in the records without them', () => {
    const withPrice = new Set([1, 6, 10]);
    const withBadge = new Set([0, 7]);
    const items = Array.from({ length: 12 }, (_, i) => `
      <li class="product">
        <h3><a href="/p/${i + 1}">${cap(w(i))} desk lamp</a></h3>
        ${withPrice.has(i) ? `<span class="price">$${(12 + i * 3).toFixed(2)}</span>` : ''}
        ${withBadge.has(i) ? '<span class="badge">Bestseller</span>' : ''}
        <p class="desc">A ${w(i)} shade on a ${w(i + 3)} base, ${30 + i} cm tall.</p>
      </li>`).join('');
    const s = suggest(page('Desk lamps', `<ul class="products">${items}</ul>`));
    assert.equal(s.rows.length, 12, explain(s));
    const prices = Array.from({ length: 12 }, (_, i) => (withPrice.has(i) ? 12 + i * 3 : null));
    const badges = Array.from({ length: 12 }, (_, i) => (withBadge.has(i) ? 'Bestseller' : null));
    assert.ok(s.fields.includes('price'), explain(s));
    assert.deepEqual(column(s.rows, 'price'), prices, explain(s));
    assert.ok(fieldWithValues(s, badges), `a field holds the badge where there is one, null elsewhere: ${explain(s)}`);
    assert.ok(fieldWithValues(s, Array.from({ length: 12 }, (_, i) => `${cap(w(i))} desk lamp`)), explain(s));
  });
});

describe('fields: labels', () => {
  /** Books with "Author:" in its own span before the name, "Tags:" before the tag links, a dt "Published". */
  const books = (n: number) => Array.from({ length: n }, (_, i) => ({
    title: `The ${w(i)} ${['road', 'house', 'river', 'garden', 'letter', 'winter', 'island', 'harbour'][i % 8]}`,
    author: PEOPLE[i]!,
    tags: [w(i + 1), w(i + 5), w(i + 9)].slice(0, 2 + (i % 2)),
    published: DATES[i % DATES.length]!,
  }));

  it('"Author:" in its own element, "Tags:" before the tag links and a dt "Published" are no fields: they name the values after them', () => {
    const data = books(7);
    const html = page('Books', `<div class="books">${data.map((b, i) => `
      <div class="book">
        <h2><a href="/b/${i + 1}">${b.title}</a></h2>
        <p class="byline"><span class="label">Author:</span> <span class="value">${b.author}</span></p>
        <div class="meta">Tags: ${b.tags.map((t) => `<a href="/tag/${t}/">${t}</a>`).join(' ')}</div>
        <dl class="facts"><dt>Published</dt><dd>${b.published}</dd></dl>
      </div>`).join('')}</div>`);
    const s = suggest(html);
    assert.equal(s.rows.length, 7, explain(s));
    assert.deepEqual(column(s.rows, 'author'), data.map((b) => b.author), explain(s));
    assert.deepEqual(column(s.rows, 'tags'), data.map((b) => b.tags), explain(s));
    assert.equal(spec(s, 'tags').multiple, true);
    assert.deepEqual(column(s.rows, 'published'), data.map((b) => b.published), explain(s));
    const values = allValues(s.rows).map((v) => String(v).trim());
    for (const label of ['Author:', 'Author', 'Tags:', 'Tags', 'Published']) assert.ok(!values.includes(label), `"${label}" is no value: ${explain(s)}`);
    assert.ok(!values.some((v) => /^Tags:/.test(v)), explain(s));
  });

  it('"Price: $12.00" in one span: the label names the field and is cut from the value', () => {
    const html = page('Chairs', `<div class="list">${Array.from({ length: 8 }, (_, i) => `
      <div class="item">
        <h3><a href="/chair/${i + 1}">${cap(w(i))} chair</a></h3>
        <span>Price: $${(12 + i * 4).toFixed(2)}</span>
        <p>${cap(w(i))} wood, ${w(i + 5)} finish, seat height ${44 + i} cm.</p>
      </div>`).join('')}</div>`);
    const s = suggest(html);
    assert.deepEqual(column(s.rows, 'price'), Array.from({ length: 8 }, (_, i) => 12 + i * 4), explain(s));
    assert.ok(!allValues(s.rows).some((v) => /Price:/.test(String(v))), `the label is cut off everywhere: ${explain(s)}`);
  });

  it('a label in the middle of one text ("“Quote” Author: Jane Doe" in one td) gives two fields: the text before it and author', () => {
    const quotes = Array.from({ length: 8 }, (_, i) => `“The ${w(i)} is ${['quiet', 'bright', 'slow', 'deep', 'warm', 'cold', 'long', 'wide'][i]} tonight, and so am I.”`);
    const html = page('Quotes', `<table class="quotes"><tbody>${quotes.map((q, i) => `
      <tr><td>${q} Author: ${PEOPLE[i]}</td><td><a href="/q/${i + 1}">permalink</a></td></tr>`).join('')}</tbody></table>`);
    const s = suggest(html);
    assert.equal(s.rows.length, 8, explain(s));
    assert.deepEqual(column(s.rows, 'author'), PEOPLE.slice(0, 8), explain(s));
    const quoteField = fieldWithValues(s, quotes);
    assert.ok(quoteField, `a field holds the text before the label, without it: ${explain(s)}`);
    assert.ok(s.fields.indexOf(quoteField) < s.fields.indexOf('author'), 'the text before, then the author, as on the page');
  });

  it('"Read more" links, the same in every record, are no field', () => {
    const html = page('News', `<section class="news">${Array.from({ length: 6 }, (_, i) => `
      <article class="story">
        <h2>${cap(w(i))} market opens in spring</h2>
        <p>The ${w(i)} market on ${w(i + 2)} street opens with ${10 + i} stalls and a band.</p>
        <a class="more" href="/story/${i + 1}">Read more</a>
      </article>`).join('')}</section>`);
    const s = suggest(html);
    assert.equal(s.rows.length, 6, explain(s));
    assert.ok(!allValues(s.rows).some((v) => /read more/i.test(String(v))), explain(s));
    const config = parseConfig(s.yaml);
    assert.ok(!config.extract.fields.some((f) => f.type === 'text' && f.selector === 'a.more'), explain(s));
    assert.ok(fieldWithValues(s, Array.from({ length: 6 }, (_, i) => `${cap(w(i))} market opens in spring`)), explain(s));
  });
});

describe('fields: lists of like elements', () => {
  /** Quotes with a list of plain tag links each, `counts[i]` tags in quote i. */
  const quotesPage = (counts: number[]) => {
    const data = counts.map((k, i) => ({ text: `“The ${w(i)} keeps its promise to the ${w(i + 7)}.”`, author: PEOPLE[i]!, tags: Array.from({ length: k }, (_, j) => w(i + j * 3)) }));
    const html = page('Quotes', `<div class="quotes">${data.map((q) => `
      <div class="quote">
        <span class="text">${q.text}</span>
        <span class="by">${q.author}</span>
        <div class="keywords">${q.tags.map((t) => `<a href="/tag/${t}/">${t}</a>`).join(' ')}</div>
      </div>`).join('')}</div>`);
    return { data, html };
  };

  /** The fields of a suggestion that read the tag links (their selector finds the `a` elements in div.keywords). */
  const tagFields = (s: Suggestion): FieldSpec[] => parseConfig(s.yaml).extract.fields.filter((f) => f.selector !== undefined && /(^|\s|>)a$/.test(f.selector.trim()));

  it('a tag list of 2 to 4 plain links per record is one multiple field (a list per row), not one field per place', () => {
    const { data, html } = quotesPage([2, 3, 2, 4, 3, 2, 3, 4]);
    const s = suggest(html);
    assert.equal(s.rows.length, 8, explain(s));
    const name = fieldWithValues(s, data.map((q) => q.tags));
    assert.ok(name, `one field holds each quote's tags as a list: ${explain(s)}`);
    assert.equal(spec(s, name).multiple, true);
    assert.ok(!s.fields.some((f) => /_[3-9]$/.test(f)), `no field per place: ${explain(s)}`);
    assert.ok(tagFields(s).every((f) => f.multiple === true), `every field on the tag links takes them all: ${explain(s)}`);
    assert.ok(tagFields(s).length <= 2, `the tags' text and at most their links: ${explain(s)}`);
  });

  it('a tag list of 1 to 4 plain links per record (two records with one tag) is one multiple field for the texts and the links', () => {
    const { data, html } = quotesPage([1, 3, 2, 4, 1, 2, 3, 2]);
    const s = suggest(html);
    assert.equal(s.rows.length, 8, explain(s));
    const name = fieldWithValues(s, data.map((q) => q.tags));
    assert.ok(name, `one field holds each quote's tags as a list: ${explain(s)}`);
    assert.ok(!s.fields.some((f) => /_[3-9]$/.test(f)), `no field per place: ${explain(s)}`);
    // The links of the tags are a list as well (a record with one tag is no other column).
    assert.ok(tagFields(s).every((f) => f.multiple === true), `every field on the tag links takes them all: ${explain(s)}`);
  });

  it('with the prompt asking for the tags (not every column), a tag list of 1 to 4 links per record is the multiple field "tags" (plural: it takes every tag)', () => {
    const { data, html } = quotesPage([1, 3, 2, 4, 1, 2, 3, 2]);
    const { a, c, columns } = columnsOf(html);
    const intent = readPrompt('The quotes with their authors and tags');
    const { fields, missing } = nameColumns(columns, intent.fields, { everyColumn: intent.everyColumn });
    const names = fields.map((f) => f.name);
    assert.deepEqual(missing.map((m) => m.name), [], `every asked field is found: ${JSON.stringify(fields)}`);
    assert.ok(names.includes('tags') && !names.includes('tag'), JSON.stringify(fields));
    assert.equal(fields.find((f) => f.name === 'tags')?.multiple, true, JSON.stringify(fields));
    const rows = rowsWith(a, c, fields);
    assert.deepEqual(column(rows, 'tags'), data.map((q) => q.tags));
  });
});

describe('fields: names from classes, itemprops, elements and values', () => {
  it('an image, a link, a class "price", a <time> and a heading are named image, url, price, date and title; a second link is named by its class (shop_url), not url_2', () => {
    const n = 8;
    const html = page('Lamps', `<div class="grid">${Array.from({ length: n }, (_, i) => `
      <div class="card">
        <a class="thumb" href="/lamp/${i + 1}"><img src="/img/${w(i)}.jpg" alt=""></a>
        <h3>${cap(w(i))} table lamp</h3>
        <p class="price">$${(20 + i).toFixed(2)}</p>
        <p class="posted"><time datetime="2024-0${(i % 9) + 1}-0${(i % 9) + 1}">${DATES[i]}</time></p>
        <a class="shop" href="/shop/${w(i + 4)}/">${cap(w(i + 4))} studio</a>
      </div>`).join('')}</div>`);
    const s = suggest(html);
    assert.equal(s.rows.length, n, explain(s));
    assert.deepEqual(column(s.rows, 'image'), Array.from({ length: n }, (_, i) => `https://shop.example/img/${w(i)}.jpg`), explain(s));
    assert.deepEqual(column(s.rows, 'url'), Array.from({ length: n }, (_, i) => `https://shop.example/lamp/${i + 1}`), explain(s));
    assert.ok(!s.fields.includes('url_2'), explain(s));
    assert.deepEqual(column(s.rows, 'shop_url'), Array.from({ length: n }, (_, i) => `https://shop.example/shop/${w(i + 4)}/`), explain(s));
    assert.deepEqual(column(s.rows, 'price'), Array.from({ length: n }, (_, i) => 20 + i), explain(s));
    assert.deepEqual(column(s.rows, 'date'), DATES.slice(0, n), explain(s));
    assert.deepEqual(column(s.rows, 'title'), Array.from({ length: n }, (_, i) => `${cap(w(i))} table lamp`), explain(s));
    assert.equal(spec(s, 'image').type, 'image_url');
    assert.equal(spec(s, 'url').type, 'link');
  });

  it('a price marked only by itemprop="price" is named price', () => {
    const html = page('Vases', `<ul class="grid">${Array.from({ length: 8 }, (_, i) => `
      <li class="tile">
        <a href="/vase/${i + 1}">${cap(w(i))} glass vase</a>
        <div class="offer"><span itemprop="price" content="${(9 + i).toFixed(2)}">€${(9 + i).toFixed(2)}</span></div>
        <p>${cap(w(i + 3))} glass, ${20 + i} cm, hand blown.</p>
      </li>`).join('')}</ul>`);
    const s = suggest(html);
    assert.deepEqual(column(s.rows, 'price'), Array.from({ length: 8 }, (_, i) => 9 + i), explain(s));
  });

  it('two prices (was and now) are price and price_now (numbers); two texts of no kind text and paragraph_text, never numbered', () => {
    const html = page('Sale', `<div class="grid">${Array.from({ length: 8 }, (_, i) => `
      <div class="card">
        <h3><a href="/sale/${i + 1}">${cap(w(i))} floor lamp</a></h3>
        <span class="price-was">$${(60 + i).toFixed(2)}</span> <span class="price-now">$${(40 + i).toFixed(2)}</span>
        <p class="a">${cap(w(i + 2))} shade with a ${w(i + 6)} cord</p>
        <p class="b">Ships from the ${w(i + 9)} depot in ${2 + (i % 3)} days</p>
      </div>`).join('')}</div>`);
    const s = suggest(html);
    assert.deepEqual(column(s.rows, 'price'), Array.from({ length: 8 }, (_, i) => 60 + i), explain(s));
    assert.deepEqual(column(s.rows, 'price_now'), Array.from({ length: 8 }, (_, i) => 40 + i), explain(s));
    assert.ok(!s.fields.some((f) => /_\d+$/.test(f)), explain(s));
    assert.deepEqual(column(s.rows, 'text'), Array.from({ length: 8 }, (_, i) => `${cap(w(i + 2))} shade with a ${w(i + 6)} cord`), explain(s));
    assert.deepEqual(column(s.rows, 'paragraph_text'), Array.from({ length: 8 }, (_, i) => `Ships from the ${w(i + 9)} depot in ${2 + (i % 3)} days`), explain(s));
  });

  it('a <time> straight inside the record is the date alone, not the whole record\'s text', () => {
    const html = page('Lamps', `<div class="grid">${Array.from({ length: 8 }, (_, i) => `
      <article class="card">
        <h3><a href="/lamp/${i + 1}">${cap(w(i))} lamp</a></h3>
        <p>${cap(w(i))} glass shade, ${w(i + 5)} base.</p>
        <time datetime="2024-01-0${i + 1}">${DATES[i]}</time>
      </article>`).join('')}</div>`);
    const s = suggest(html);
    const date = fieldWithValues(s, DATES.slice(0, 8));
    assert.ok(date, `a field holds the dates alone: ${explain(s)}`);
    assert.equal(date, 'date', explain(s));
  });

  it('a value in a plain element after a classed label of the same tag (<span class="label">Author:</span> <span>…</span>) is read alone', () => {
    const html = page('Books', `<div class="books">${Array.from({ length: 7 }, (_, i) => `
      <div class="book">
        <h2>The ${w(i)} road</h2>
        <p><span class="label">Author:</span> <span>${PEOPLE[i]}</span></p>
        <p class="summary">A story of ${w(i)} and ${w(i + 4)} over ${i + 2} summers.</p>
      </div>`).join('')}</div>`);
    const s = suggest(html);
    assert.deepEqual(column(s.rows, 'author'), PEOPLE.slice(0, 7), explain(s));
  });

  it('the title link\'s field reads the title alone when other links follow it in the record', () => {
    const html = page('Books', `<div class="books">${Array.from({ length: 7 }, (_, i) => `
      <div class="book">
        <h2><a href="/b/${i + 1}">The ${w(i)} road</a></h2>
        <p>by <a href="/author/${i + 1}">${PEOPLE[i]}</a></p>
        <p class="summary">A story of ${w(i)} and ${w(i + 4)} over ${i + 2} summers.</p>
      </div>`).join('')}</div>`);
    const s = suggest(html);
    const titles = Array.from({ length: 7 }, (_, i) => `The ${w(i)} road`);
    assert.ok(fieldWithValues(s, titles), `a field holds the titles, one string per row: ${explain(s)}`);
    assert.ok(s.rows.every((r, i) => Object.values(r).every((v) => !Array.isArray(v) || !v.includes(titles[i]))), `no list mixes the title with other links: ${explain(s)}`);
  });
});

describe('fields: the prompt\'s fields, and every other column when it asks for everything', () => {
  const products = Array.from({ length: 8 }, (_, i) => ({
    name: `${cap(w(i))} desk lamp`, price: `$${(12 + i * 3).toFixed(2)}`, rating: `${(3 + (i % 5) * 0.4).toFixed(1)} out of 5`,
    desc: `A ${w(i)} shade on a ${w(i + 3)} base, ${30 + i} cm tall.`, seller: `${cap(w(i + 6))} studio`,
  }));
  const html = page('Desk lamps', `<ul class="products">${products.map((p, i) => `
    <li class="product">
      <a class="thumb" href="/p/${i + 1}"><img src="/img/${w(i)}.jpg" alt=""></a>
      <h3><a href="/p/${i + 1}">${p.name}</a></h3>
      <p class="price">${p.price}</p>
      <p class="rating">${p.rating}</p>
      <p class="desc">${p.desc}</p>
      <span class="seller">${p.seller}</span>
    </li>`).join('')}</ul>`);

  it('asked fields with every column: the asked ones first with the prompt\'s names, then every other column', () => {
    const { a, c, columns } = columnsOf(html);
    const intent = readPrompt('the name and price of every product with all the details');
    assert.equal(intent.everyColumn, true);
    const { fields, missing } = nameColumns(columns, intent.fields, { everyColumn: true });
    assert.deepEqual(missing, []);
    const names = fields.map((f) => f.name);
    assert.deepEqual(names.slice(0, 2), ['name', 'price'], JSON.stringify(names));
    assert.ok(!names.includes('title'), `the title column is "name", once: ${JSON.stringify(names)}`);
    const rows = rowsWith(a, c, fields);
    assert.deepEqual(column(rows, 'name'), products.map((p) => p.name));
    assert.deepEqual(column(rows, 'price'), products.map((p) => Number(p.price.slice(1))), 'an asked price is a number');
    // Every other value the records show is in some other field.
    const rest = fields.slice(2).map((f) => f.name);
    for (const [what, values] of [['rating', products.map((p) => p.rating)], ['description', products.map((p) => p.desc)], ['seller', products.map((p) => p.seller)], ['image', products.map((_, i) => `https://shop.example/img/${w(i)}.jpg`)]] as const) {
      assert.ok(rest.some((n) => { try { assert.deepEqual(column(rows, n), values); return true; } catch { return false; } }), `the ${what} is kept: ${JSON.stringify(fields)}`);
    }
  });

  it('asked fields without every column: only the asked ones', () => {
    const { a, c, columns } = columnsOf(html);
    const intent = readPrompt('the name and price of each product');
    assert.equal(intent.everyColumn, false);
    const { fields } = nameColumns(columns, intent.fields, { everyColumn: false });
    assert.deepEqual(fields.map((f) => f.name), ['name', 'price']);
    const rows = rowsWith(a, c, fields);
    assert.deepEqual(column(rows, 'name'), products.map((p) => p.name));
    assert.deepEqual(column(rows, 'price'), products.map((p) => Number(p.price.slice(1))));
  });

  it('no asked field: every column, with descriptive names', () => {
    const { columns } = columnsOf(html);
    const { fields } = nameColumns(columns, []);
    const names = fields.map((f) => f.name);
    for (const n of ['title', 'url', 'image', 'price', 'rating']) assert.ok(names.includes(n), JSON.stringify(names));
    assert.ok(fields.length >= 7, JSON.stringify(names));
  });
});

describe('fields: records spread over sibling rows', () => {
  it('a quote row ("TEXT Author: NAME") and the tags row after it give quote text, author and the tags as a list', () => {
    const data = Array.from({ length: 8 }, (_, i) => ({ text: `“The ${w(i)} road is ${w(i + 5)} at night.”`, author: PEOPLE[i]!, tags: Array.from({ length: 2 + (i % 3) }, (_, j) => w(i + j * 4)) }));
    const html = page('Quotes', `<table>
      <tr><td></td><td rowspan="5"><h3>Top tags</h3>${WORDS.slice(0, 6).map((t) => `<a href="/tag/${t}/">${t}</a> (${t.length}) <br>`).join('\n')}</td></tr>
      ${data.map((q) => `<tr style="border-bottom: 0px; "><td style="padding-top: 2em;">${q.text} Author: ${q.author}</td></tr>
      <tr><td style="padding-bottom: 2em;">Tags: ${q.tags.map((t) => `<a href="/tag/${t}/">${t}</a>`).join('\n')}</td></tr>`).join('\n')}
      <tr><td><a href="/page/2/">Next →</a></td></tr>
    </table>`);
    const s = suggest(html);
    const config = parseConfig(s.yaml);
    assert.equal(config.extract.following_siblings, 1, explain(s));
    assert.equal(s.rows.length, 8, explain(s));
    assert.deepEqual(column(s.rows, 'author'), data.map((q) => q.author), explain(s));
    assert.ok(fieldWithValues(s, data.map((q) => q.text)), `a field holds the quote alone: ${explain(s)}`);
    assert.deepEqual(column(s.rows, 'tags'), data.map((q) => q.tags), explain(s));
  });
});
