/**
 * The checks of the field selectors compiled once (lambdas/engine/field-selector.ts) against cheerio, run on the
 * fixture site's pages by test/unit/field-selector.test.ts and on real pages of the corpus by
 * test/corpus/field-selector.test.ts.
 */
import assert from 'node:assert/strict';
import type { AnyNode, Element } from 'domhandler';
import { loadHtml } from '../../lambdas/engine/extract.ts';
import { compileFieldSelector, compileSiblingsSelector } from '../../lambdas/engine/field-selector.ts';

/** A page to check on: a name for messages, and its HTML. */
export interface NamedPage {
  name: string;
  html: string;
}

/** The selectors checked: tags, classes, attributes, combinators, :not, :has, :nth-child, :contains. */
export const SELECTORS = [
  'a', 'img', 'span', 'div', 'p', 'li', 'td', 'h2, h3', 'a[href]', 'a[href^="http"]', 'img[alt]', '[class]',
  '[class*="title"]', '[class~="price"]', '.title', '.price', 'div > a', 'li > span', 'ul li a', 'div span a',
  'div a img', 'td + td', 'li ~ li', 'h3 + p', 'div:not(.x) > a', 'li:has(a)', 'div:has(> img)', 'tr:nth-child(2) td',
  'li:nth-child(odd)', 'li:first-child', 'li:last-child', 'p:empty', 'a:contains("More")', 'span:only-child',
  '*', 'div *', 'table tr:first-child td', '#product_description + p', 'h1',
];

/**
 * On each page, for the document and up to 30 elements of the kinds configs use as containers, every selector's
 * compiled form finds what cheerio's `.find()` finds (all matches in order, and the first).
 * @returns the number of comparisons made
 */
export function checkFieldSelectors(pages: NamedPage[]): number {
  let compared = 0;
  for (const page of pages) {
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
  return compared;
}

/**
 * On each page, for items of an element and up to 3 element siblings after it, every selector compiled for items
 * spread over siblings finds the document's matches that are one of the item's elements or inside one.
 * @returns the comparisons made, and how many of them had matches
 */
export function checkSiblingsSelectors(pages: NamedPage[]): { compared: number; nonEmpty: number } {
  let compared = 0;
  let nonEmpty = 0;
  for (const page of pages) {
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
  return { compared, nonEmpty };
}
