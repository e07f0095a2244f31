/**
 * Field selectors compiled once (lambdas/engine/field-selector.ts) find exactly what cheerio's `.find()` finds
 * inside an item, on real pages of the corpus (records pages of 100 sites, the books pages), for a broad set of
 * selectors: tags, classes, attributes, descendant and child combinators, sibling combinators inside the item,
 * :not, :has, :nth-child, :contains. Selectors cheerio treats specially are left to cheerio.
 * For items spread over sibling elements (`extract.following_siblings`), the selectors compiled for them find what
 * their definition says: the document's matches (`$(selector)`) that are one of the item's elements or inside one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnyNode, Element } from 'domhandler';
import { loadHtml } from '../../lambdas/engine/extract.ts';
import { compileFieldSelector, compileSiblingsSelector } from '../../lambdas/engine/field-selector.ts';
import { corpusPath } from '../fixtures/corpus.ts';

const SELECTORS = [
  'a', 'img', 'span', 'div', 'p', 'li', 'td', 'h2, h3', 'a[href]', 'a[href^="http"]', 'img[alt]', '[class]',
  '[class*="title"]', '[class~="price"]', '.title', '.price', 'div > a', 'li > span', 'ul li a', 'div span a',
  'div a img', 'td + td', 'li ~ li', 'h3 + p', 'div:not(.x) > a', 'li:has(a)', 'div:has(> img)', 'tr:nth-child(2) td',
  'li:nth-child(odd)', 'li:first-child', 'li:last-child', 'p:empty', 'a:contains("More")', 'span:only-child',
  '*', 'div *', 'table tr:first-child td', '#product_description + p', 'h1',
];

function pages(): Array<{ name: string; html: string }> {
  const out: Array<{ name: string; html: string }> = [];
  const records = corpusPath('records');
  for (const dir of readdirSync(records).filter((d) => d.includes('--')).sort().slice(0, 40)) {
    out.push({ name: dir, html: readFileSync(join(records, dir, 'page.html'), 'utf8') });
  }
  for (const f of ['books-toscrape-home.html', 'books-toscrape-book.html']) out.push({ name: f, html: readFileSync(corpusPath('listings', f), 'utf8') });
  return out;
}

describe('field selectors compiled once', () => {
  it('find what cheerio finds inside each item, first match and all matches, on 42 real pages', () => {
    let compared = 0;
    for (const page of pages()) {
      const $ = loadHtml(page.html);
      // Items: the document itself, and up to 30 elements of the kinds configs use as containers.
      const items: AnyNode[] = [$.root()[0]!, ...$('article, li, tr, div').toArray().filter((_, i) => i % 7 === 0).slice(0, 30)];
      for (const selector of SELECTORS) {
        const compiled = compileFieldSelector(selector);
        assert.ok(compiled, `${selector} is compiled`);
        for (const item of items) {
          const expectedAll = $(item).find(selector).toArray();
          const expectedFirst = $(item)._findBySelector(selector, 1).toArray()[0] ?? null;
          const all = compiled.all(item as Element);
          assert.equal(all.length, expectedAll.length, `${page.name}: ${selector}: all`);
          assert.ok(all.every((el, i) => el === expectedAll[i]), `${page.name}: ${selector}: all, in order`);
          assert.equal(compiled.first(item as Element), expectedFirst, `${page.name}: ${selector}: first`);
          compared++;
        }
      }
    }
    assert.ok(compared > 10_000, `${compared} comparisons`);
  });

  it('leaves to cheerio what cheerio treats specially', () => {
    for (const selector of ['li:first', 'a:eq(1)', 'li:last', 'tr:even', 'div:not(:first) a', ':scope > a', '> a', '+ p', '~ li']) {
      assert.equal(compileFieldSelector(selector), null, selector);
    }
  });
});

describe('field selectors for items spread over sibling elements', () => {
  it('find the document\'s matches that are in the item\'s elements, first and all, on 42 real pages', () => {
    let compared = 0;
    let nonEmpty = 0;
    for (const page of pages()) {
      const $ = loadHtml(page.html);
      // Items: an element and up to 3 element siblings after it, for up to 20 elements of the kinds containers are.
      const items = $('article, li, tr, div, h2, h3, dt').toArray().filter((_, i) => i % 11 === 0).slice(0, 20).map((el) => {
        const elements = [el as Element];
        for (let n = el.nextSibling; n && elements.length < 4; n = n.nextSibling) if (n.type === 'tag') elements.push(n as Element);
        return elements;
      });
      for (const selector of SELECTORS) {
        const compiled = compileSiblingsSelector(selector);
        const everywhere = $(selector).toArray();
        for (const elements of items) {
          const inItem = new Set<AnyNode>(elements);
          const inside = (n: AnyNode) => { for (let x: AnyNode | null = n; x; x = x.parent) if (inItem.has(x)) return true; return false; };
          const expected = everywhere.filter(inside);
          const all = compiled.all($, elements);
          assert.equal(all.length, expected.length, `${page.name}: ${selector}: all`);
          assert.ok(all.every((el, i) => el === expected[i]), `${page.name}: ${selector}: all, in document order`);
          assert.equal(compiled.first($, elements), expected[0] ?? null, `${page.name}: ${selector}: first`);
          compared++;
          if (expected.length) nonEmpty++;
        }
      }
    }
    assert.ok(compared > 10_000 && nonEmpty > compared / 4, `${compared} comparisons, ${nonEmpty} with matches`);
  });
});
