/**
 * suggestConfig (lambdas/generator/suggest.ts), the extension's "suggest": record detection on a page the
 * caller already has, checked on the fixture site's books listings against what the pages hold (read here with plain
 * selectors, not with the code under test), and on pages without records. The same checks on the real
 * books.toscrape.com listings: test/corpus/generator-suggest.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { load } from 'cheerio';
import { suggestConfig } from '../../lambdas/generator/suggest.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { isCodedError } from '../../lambdas/errors.ts';
import { bookshopPage } from '../fixtures/site/books.ts';

const BASE = 'http://books.example/';

for (const page of ['/books/', '/books/catalogue/page-2.html']) {
  describe(`suggestConfig on the books listing ${page}`, () => {
    const html = bookshopPage(page)!;
    const $ = load(html);
    const titles = $('article.product_pod h3 a').toArray().map((a) => $(a).attr('title')!);
    const prices = $('article.product_pod .price_color').toArray().map((p) => $(p).text().trim());

    it('finds the 20 products, with their titles and prices in page order', () => {
      const s = suggestConfig(html, BASE);
      assert.equal(titles.length, 20);
      assert.equal(s.rows.length, 20, s.notes.join('; '));
      const values = (name: string) => s.rows.map((r) => r[name]);
      const titleField = s.fields.find((f) => titles.every((t, i) => String(values(f)[i] ?? '').includes(t.slice(0, 20))));
      assert.ok(titleField, `a field holds the titles: ${JSON.stringify(s.rows[0])}`);
      const priceField = s.fields.find((f) => prices.every((p, i) => values(f)[i] === Number(p.replace(/^£/, ''))));
      assert.ok(priceField, `a field holds the prices as numbers: ${JSON.stringify(s.rows[0])}`);
    });

    it('writes a config that parses, targets the page, and keeps the next-page link as pagination', () => {
      const s = suggestConfig(html, BASE, { maxPages: 7 });
      const config = parseConfig(s.yaml);
      assert.equal(config.target.url, BASE);
      assert.equal(config.extract.type, 'list');
      assert.deepEqual(config.extract.fields.map((f) => f.name), s.fields);
      assert.equal($(config.extract.container!).length, 20);
      assert.equal(config.pagination?.max_pages, 7);
      assert.equal($(config.pagination!.selector!).first().text().trim(), 'next');
    });
  });
}

describe('suggestConfig without records', () => {
  for (const [name, html] of [['an empty page', ''], ['one paragraph', '<p>Hello there, nothing repeats here.</p>']] as const) {
    it(`refuses ${name} with generation_failed`, () => {
      assert.throws(() => suggestConfig(html, 'http://example.test/'), (e: unknown) => isCodedError(e) && e.code === 'generation_failed');
    });
  }
});
