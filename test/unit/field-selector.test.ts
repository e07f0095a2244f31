/**
 * Field selectors compiled once (lambdas/engine/field-selector.ts) find exactly what cheerio's `.find()` finds
 * inside an item, on the fixture site's pages (books listing, category and detail pages, quotes listing, tag, author,
 * table and tableful pages, the article), for a broad set of selectors (test/helpers/field-selector-checks.ts): tags,
 * classes, attributes, descendant and child combinators, sibling combinators inside the item, :not, :has,
 * :nth-child, :contains. Selectors cheerio treats specially are left to cheerio.
 * For items spread over sibling elements (`extract.following_siblings`), the selectors compiled for them find what
 * their definition says: the document's matches (`$(selector)`) that are one of the item's elements or inside one.
 * The same checks on real pages of the corpus: test/corpus/field-selector.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileFieldSelector } from '../../lambdas/engine/field-selector.ts';
import { bookDetails } from '../fixtures/site/books.ts';
import { fixturePage } from '../fixtures/site/server.ts';
import { checkFieldSelectors, checkSiblingsSelectors, type NamedPage } from '../helpers/field-selector-checks.ts';

function pages(): NamedPage[] {
  return ['/books/', '/books/catalogue/category/books/fiction_6/index.html', `/books/catalogue/${bookDetails()[12]!.slug}/index.html`, '/quotes/',
    '/quotes/tag/love/', '/quotes/author/Ada-Whitmore/', '/quotes-table/', '/tableful/', '/article/', '/base-href/']
    .map((path) => ({ name: path, html: fixturePage(path) }));
}

describe('field selectors compiled once', () => {
  it('find what cheerio finds inside each item, first match and all matches, on 10 fixture pages', () => {
    const compared = checkFieldSelectors(pages());
    assert.ok(compared > 2_000, `${compared} comparisons`);
  });

  it('leaves to cheerio what cheerio treats specially', () => {
    for (const selector of ['li:first', 'a:eq(1)', 'li:last', 'tr:even', 'div:not(:first) a', ':scope > a', '> a', '+ p', '~ li']) {
      assert.equal(compileFieldSelector(selector), null, selector);
    }
  });
});

describe('field selectors for items spread over sibling elements', () => {
  it('find the document\'s matches that are in the item\'s elements, first and all, on 10 fixture pages', () => {
    const { compared, nonEmpty } = checkSiblingsSelectors(pages());
    assert.ok(compared > 1_000 && nonEmpty > compared / 4, `${compared} comparisons, ${nonEmpty} with matches`);
  });
});
