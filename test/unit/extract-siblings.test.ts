/**
 * Items spread over sibling elements (`extract.following_siblings`, lambdas/engine/extract.ts): each item is the
 * container match and up to N element siblings after it, stopping before the next container match; a field's
 * selector matches the whole document and keeps the elements that are one of the item's elements or inside one,
 * in document order. Inline pages whose expected rows are written by hand, and the fixture site's /tableful/
 * page (quotes.toscrape.com's table layout) fetched over loopback, checked against the fixture's quotes.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { compileFields, extractItems, loadHtml, type Row } from '../../lambdas/engine/extract.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes, QUOTES_PER_PAGE } from '../fixtures/site/quotes.ts';
import { tablefulConfigYaml } from '../fixtures/site/quotes-config.ts';

const URL_ = 'https://example.com/page/';

/** Runs an `extract` block (YAML, target added here) over `html`. */
function extract(html: string, extractYaml: string): Row[] {
  const config = parseConfig(`target: { url: "${URL_}" }\n${extractYaml}`);
  return extractItems(loadHtml(html), config.extract, compileFields(config.extract.fields), URL_);
}

/** A definition list whose terms have 1, 2, 0 and 3 definitions; comments and text between the elements. */
const DL = `<!DOCTYPE html><html><body>
<dl id="glossary">
  <dt>alpha</dt>
  <dd>first letter</dd>
  <dt>beta</dt>
  <!-- a comment between siblings -->
  <dd>second letter</dd> some text <dd class="note">also a fish</dd>
  <dt>gamma</dt>
  <dt>delta</dt>
  <dd>fourth</dd><dd>a river mouth</dd><dd class="note">a triangle</dd>
</dl>
<dd>outside the list</dd>
</body></html>`;

describe('following_siblings: dt/dd pairs', () => {
  it('N = 2: each term with its definitions, at most 2, never the next term\'s', () => {
    const rows = extract(DL, `extract:
  container: dt
  following_siblings: 2
  fields:
    - { name: term }
    - { name: first, selector: dd }
    - { name: defs, selector: dd, multiple: true }
    - { name: n, selector: dd, type: count }
    - { name: has, selector: dd, type: exists }
    - { name: note, selector: dd.note, default: none }
`);
    assert.deepEqual(rows, [
      { term: 'alpha', first: 'first letter', defs: ['first letter'], n: 1, has: true, note: 'none' },
      { term: 'beta', first: 'second letter', defs: ['second letter', 'also a fish'], n: 2, has: true, note: 'also a fish' },
      { term: 'gamma', first: null, defs: [], n: 0, has: false, note: 'none' },
      // Three definitions follow delta; the third is past N = 2.
      { term: 'delta', first: 'fourth', defs: ['fourth', 'a river mouth'], n: 2, has: true, note: 'none' },
    ]);
  });

  it('the selector reads the whole document: "dt + dd", ancestors outside the item, the item\'s own elements', () => {
    const rows = extract(DL, `extract:
  container: dt
  following_siblings: 3
  fields:
    - { name: adjacent, selector: "dt + dd" }
    - { name: in_list, selector: "dl#glossary dd", multiple: true }
    - { name: from_body, selector: "body > dl dt", type: count }
    - { name: term, selector: dt }
    - { name: after_note, selector: "dd.note ~ dd", multiple: true }
`);
    assert.deepEqual(rows, [
      { adjacent: 'first letter', in_list: ['first letter'], from_body: 1, term: 'alpha', after_note: [] },
      // "dt + dd" is the dd right after beta (the comment between them is no element).
      { adjacent: 'second letter', in_list: ['second letter', 'also a fish'], from_body: 1, term: 'beta', after_note: [] },
      { adjacent: null, in_list: [], from_body: 1, term: 'gamma', after_note: [] },
      // "dd.note ~ dd" reads the document: delta's definitions follow beta's dd.note in the same list.
      { adjacent: 'fourth', in_list: ['fourth', 'a river mouth', 'a triangle'], from_body: 1, term: 'delta', after_note: ['fourth', 'a river mouth', 'a triangle'] },
    ]);
    // The dd outside the list is never part of an item, even where the selector matches it.
    assert.ok(rows.every((r) => !(r.in_list as string[]).includes('outside the list')));
  });

  it('N = 0 (the default) is the list as before: each term alone, selectors inside it', () => {
    const fields = `  fields:
    - { name: term }
    - { name: dd, selector: dd, default: none }
    - { name: n, selector: "*", type: count }
`;
    const absent = extract(DL, `extract:\n  container: dt\n${fields}`);
    const zero = extract(DL, `extract:\n  container: dt\n  following_siblings: 0\n${fields}`);
    assert.deepEqual(zero, absent);
    assert.deepEqual(absent, ['alpha', 'beta', 'gamma', 'delta'].map((term) => ({ term, dd: 'none', n: 0 })));
    // With N = 1 the same fields see the item's dd; "*" counts the item's own elements too.
    const one = extract(DL, `extract:\n  container: dt\n  following_siblings: 1\n${fields}`);
    assert.deepEqual(one.map((r) => [r.dd, r.n]), [['first letter', 2], ['second letter', 2], ['none', 1], ['fourth', 2]]);
  });
});

const ARTICLE = `<!DOCTYPE html><html><body><main>
<h2 id="a">Apples</h2>
<p>Red or green.</p>
<h2 id="b">Bananas</h2>
<p>Yellow.</p>
<p class="more">Curved.</p>
<p class="more">Sold in <a href="/hands">hands</a>.</p>
<h2 id="c">Cherries</h2>
<h2 id="d">Dates</h2>
<div class="card"><p>Sweet, <a href="/dates">dried</a>.</p></div>
</main></body></html>`;

describe('following_siblings: a heading followed by its paragraphs', () => {
  it('N = 1: the heading and the element right after it, if it is no heading', () => {
    const rows = extract(ARTICLE, `extract:
  container: h2
  following_siblings: 1
  fields:
    - { name: title }
    - { name: id, type: attribute, attribute: id }
    - { name: text, selector: p, default: "" }
    - { name: link, selector: a, type: link }
`);
    assert.deepEqual(rows, [
      { title: 'Apples', id: 'a', text: 'Red or green.', link: null },
      { title: 'Bananas', id: 'b', text: 'Yellow.', link: null },
      { title: 'Cherries', id: 'c', text: '', link: null },
      // The sibling is a div: the p and the link inside it belong to the item.
      { title: 'Dates', id: 'd', text: 'Sweet, dried.', link: 'https://example.com/dates' },
    ]);
  });

  it('N = 10 stops before the next heading: items never overlap', () => {
    const rows = extract(ARTICLE, `extract:
  container: h2
  following_siblings: 10
  fields:
    - { name: title }
    - { name: paragraphs, selector: p, multiple: true }
    - { name: more, selector: "h2 ~ p.more", type: count }
    - { name: link, selector: "p a", type: link }
    - { name: headings, selector: h2, type: count }
`);
    assert.deepEqual(rows, [
      { title: 'Apples', paragraphs: ['Red or green.'], more: 0, link: null, headings: 1 },
      { title: 'Bananas', paragraphs: ['Yellow.', 'Curved.', 'Sold in hands.'], more: 2, link: 'https://example.com/hands', headings: 1 },
      { title: 'Cherries', paragraphs: [], more: 0, link: null, headings: 1 },
      { title: 'Dates', paragraphs: ['Sweet, dried.'], more: 0, link: 'https://example.com/dates', headings: 1 },
    ]);
  });

  it('N = 2 caps a longer record', () => {
    const rows = extract(ARTICLE, `extract:
  container: h2
  following_siblings: 2
  fields:
    - { name: title }
    - { name: paragraphs, selector: p, multiple: true }
    - { name: last, selector: "p:last" }
`);
    assert.deepEqual(rows.map((r) => [r.title, r.paragraphs, r.last]), [
      ['Apples', ['Red or green.'], 'Red or green.'],
      ['Bananas', ['Yellow.', 'Curved.'], 'Curved.'],
      ['Cherries', [], null],
      ['Dates', ['Sweet, dried.'], 'Sweet, dried.'],
    ]);
  });

  it('positional filters pick among the item\'s matches; a leading combinator is relative to the item\'s elements', () => {
    const rows = extract(ARTICLE, `extract:
  container: h2
  following_siblings: 3
  fields:
    - { name: second, selector: "p:eq(1)", default: none }
    - { name: next, selector: "+ p", default: none }
    - { name: children, selector: "> p", type: count }
`);
    assert.deepEqual(rows, [
      { second: 'none', next: 'Red or green.', children: 0 },
      // "+ p" of each of the item's elements: Yellow. (after the h2), Curved., Sold in… (each after a p): the first counts.
      { second: 'Curved.', next: 'Yellow.', children: 0 },
      { second: 'none', next: 'none', children: 0 },
      { second: 'none', next: 'none', children: 1 },
    ]);
  });
});

describe('following_siblings: the container', () => {
  it('only element siblings count; an element matching the container ends the item even right after it', () => {
    const html = '<ul><li class="r">1</li><li class="r">2</li><li>2a</li>text<li>2b</li><li class="r">3</li></ul><p>after</p>';
    const rows = extract(html, `extract:
  container: li.r
  following_siblings: 5
  fields:
    - { name: id }
    - { name: extra, selector: "li:not(.r)", multiple: true }
    - { name: size, selector: li, type: count }
    - { name: after, selector: p, default: none }
`);
    assert.deepEqual(rows, [
      { id: '1', extra: [], size: 1, after: 'none' },
      { id: '2', extra: ['2a', '2b'], size: 3, after: 'none' },
      { id: '3', extra: [], size: 1, after: 'none' },
    ]);
  });

  it('a container match nested in a sibling is still its own item (the sibling stays in the item before)', () => {
    const html = '<div><h3>A</h3><section><h3>B</h3><p>b</p></section></div>';
    const rows = extract(html, `extract:\n  container: h3\n  following_siblings: 1\n  fields:\n    - { name: h }\n    - { name: p, selector: p, default: none }\n`);
    assert.deepEqual(rows, [{ h: 'A', p: 'b' }, { h: 'B', p: 'b' }]);
  });
});

describe('following_siblings on the fixture /tableful/ page (quotes.toscrape.com\'s table layout)', () => {
  let site: FixtureSite;
  let page1 = '';
  let page10 = '';
  before(async () => {
    site = await startFixtureSite();
    page1 = await (await fetch(`${site.url}/tableful/`)).text();
    page10 = await (await fetch(`${site.url}/tableful/page/10/`)).text();
  });
  after(async () => {
    await site?.close();
  });

  /** The fixture config with `following_siblings: n` (and `extraFields`, YAML list items) run over `html`. */
  const run = (html: string, n: number, extraFields = '') => {
    const yaml = tablefulConfigYaml(`${site.url}/tableful/`, { pagination: 'none' })
      .replace('following_siblings: 1', `following_siblings: ${n}`)
      .replace('  fields:\n', `  fields:\n${extraFields}`);
    const config = parseConfig(yaml);
    assert.equal(config.extract.following_siblings, n);
    return extractItems(loadHtml(html), config.extract, compileFields(config.extract.fields), `${site.url}/tableful/`);
  };

  it('the table has 22 rows: the first one, 10 quote rows, 10 tag rows, the pager', () => {
    const $ = loadHtml(page1);
    assert.equal($('table > tbody > tr').length, 22);
    assert.equal($('tr[style]').length, QUOTES_PER_PAGE);
    assert.equal($('tr[class]').length, 0, 'no classes on the rows');
  });

  it('10 rows a page: the quote, its author and its tags, from the quotes data', () => {
    const expected = (quotes: ReturnType<typeof allQuotes>) => quotes.map((q) => ({ quote: q.text, author: q.author, tags: q.tags }));
    assert.deepEqual(run(page1, 1), expected(allQuotes().slice(0, 10)));
    assert.deepEqual(run(page10, 1), expected(allQuotes().slice(90, 100)));
    assert.ok(allQuotes().some((q) => q.tags.length === 0), 'the data has quotes without tags (an empty tags row)');
  });

  it('the last record takes at most N rows: with N = 1 not the pager row, with N = 2 it does', () => {
    const links = '    - { name: links, selector: a, type: count }\n';
    assert.deepEqual(run(page1, 1, links).map((r) => r.links), allQuotes().slice(0, 10).map((q) => q.tags.length));
    // N = 2: each quote row and its tags row only (the next quote row ends the item), but the last one also takes
    // the pager row and its Next link.
    assert.deepEqual(run(page1, 2, links).map((r) => r.links), allQuotes().slice(0, 10).map((q, i) => q.tags.length + (i === 9 ? 1 : 0)));
    // Without following_siblings the tags row is no part of an item.
    assert.deepEqual(run(page1, 0, links).map((r) => [r.links, r.tags]), allQuotes().slice(0, 10).map(() => [0, []]));
  });
});
