/**
 * Reading the prompt (lambdas/generator/prompt.ts `readPrompt`, docs/generate.md "The generator without an LLM",
 * step 5): the fields a prompt names, whether it asks for every column of the records besides them ("the title
 * and details", "all its information", no field at all), for every page, and what the items are. The words that
 * say what the items are ("search result", "product") are never fields; "details page" is a page, not "details".
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readPrompt, type PromptIntent } from '../../lambdas/generator/prompt.ts';

const names = (i: PromptIntent): string[] => i.fields.map((f) => f.name);
const kinds = (i: PromptIntent): Record<string, string> => Object.fromEntries(i.fields.map((f) => [f.name, f.kind]));
const show = (i: PromptIntent): string => JSON.stringify({ ...i, fields: i.fields.map((f) => `${f.name}:${f.kind}`) });

describe('readPrompt: fields, every column, every page', () => {
  it('"the title and details of every search result": the title, then every other column; "search" is no field nor the item noun', () => {
    const i = readPrompt('the title and details of every search result');
    assert.deepEqual(names(i), ['title'], show(i));
    assert.equal(i.fields[0]!.kind, 'title');
    assert.equal(i.everyColumn, true, show(i));
    assert.notEqual(i.itemNoun, 'search', show(i));
    assert.ok(!i.fields.some((f) => /search|result|detail/.test(f.name)), show(i));
    assert.equal(i.detailPage, false, '"details" is not a detail page');
    assert.equal(i.allPages, false);
  });

  it('"Extract each search result with all its information": no field named, every column', () => {
    const i = readPrompt('Extract each search result with all its information');
    assert.deepEqual(i.fields, [], show(i));
    assert.equal(i.everyColumn, true, show(i));
    assert.notEqual(i.itemNoun, 'search', show(i));
    assert.equal(i.allPages, false, show(i));
  });

  it('"all the results listed on this page": every column, this page only', () => {
    const i = readPrompt('all the results listed on this page');
    assert.deepEqual(i.fields, [], show(i));
    assert.equal(i.everyColumn, true, show(i));
    assert.equal(i.allPages, false, '"all the results" starts the prompt, but "on this page" bounds it');
    assert.equal(i.allCategories, false);
  });

  it('"book titles, prices and ratings from every page": title, price, rating only, every page, items are books', () => {
    const i = readPrompt('book titles, prices and ratings from every page');
    assert.deepEqual(names(i), ['title', 'price', 'rating'], show(i));
    assert.deepEqual(kinds(i), { title: 'title', price: 'price', rating: 'rating' });
    assert.equal(i.everyColumn, false, show(i));
    assert.equal(i.allPages, true, show(i));
    assert.equal(i.itemNoun, 'book');
    assert.equal(i.detailPage, false);
  });

  it('"every product with its name, price and rating": "product" is what the items are, not a field', () => {
    const i = readPrompt('every product with its name, price and rating');
    assert.ok(!names(i).includes('product'), show(i));
    assert.equal(i.itemNoun, 'product', show(i));
    assert.deepEqual(names(i), ['name', 'price', 'rating'], show(i));
    assert.deepEqual(kinds(i), { name: 'title', price: 'price', rating: 'rating' });
    assert.equal(i.everyColumn, false, show(i));
  });

  it('"Search results: title, link, snippet and date": the four fields after the colon, of their kinds', () => {
    const i = readPrompt('Search results: title, link, snippet and date');
    assert.deepEqual(names(i), ['title', 'link', 'snippet', 'date'], show(i));
    assert.deepEqual(kinds(i), { title: 'title', link: 'url', snippet: 'description', date: 'date' });
    assert.equal(i.everyColumn, false, show(i));
    assert.ok(!names(i).some((n) => /search|result/.test(n)), show(i));
  });

  for (const page of ['detail page', 'details page']) {
    it(`"the title and the UPC from each book's ${page}": a ${page} is a page, not "details": the two fields only`, () => {
      const i = readPrompt(`the title and the UPC from each book's ${page}`);
      assert.deepEqual(names(i), ['title', 'upc'], show(i));
      assert.equal(i.fields[1]!.kind, 'text', 'UPC is of no known kind');
      assert.equal(i.everyColumn, false, show(i));
      assert.equal(i.detailPage, true, show(i));
      assert.equal(i.itemNoun, 'book', show(i));
    });
  }

  it('"The quotes in this table with their authors and tags": the quote text, the author and the tags', () => {
    const i = readPrompt('The quotes in this table with their authors and tags');
    assert.deepEqual(kinds(i), { quote: 'description', author: 'author', tag: 'tags' }, show(i));
    assert.equal(i.everyColumn, false, show(i));
    assert.equal(i.allPages, false, show(i));
  });
});
