/**
 * suggestConfig (lambdas/generator/suggest.ts), the extension's "suggest", on the real books.toscrape.com listings of
 * the corpus: the checks test/unit/generator-suggest.test.ts makes on the fixture's books listings (record detection
 * against what the pages hold, read with plain selectors; the config written), on the pages the fixture imitates.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { load } from 'cheerio';
import { suggestConfig } from '../../lambdas/generator/suggest.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { corpusPath } from '../fixtures/corpus.ts';

const BASE = 'http://books.toscrape.com/';

for (const page of ['books-toscrape-home.html', 'books-toscrape-listing.html']) {
  describe(`suggestConfig on the corpus listing ${page}`, () => {
    const html = fs.readFileSync(corpusPath('listings', page), 'utf8');
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
      const priceField = s.fields.find((f) => prices.every((p, i) => String(values(f)[i] ?? '').includes(p.replace(/^£/, ''))));
      assert.ok(priceField, `a field holds the prices: ${JSON.stringify(s.rows[0])}`);
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
