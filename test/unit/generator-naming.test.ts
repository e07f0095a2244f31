/**
 * One naming and typing path for the generator without an LLM and Suggest (issue 40, item 8;
 * lambdas/generator/naming.ts, `nameColumns` in lambdas/generator/fields.ts; docs/generate.md, "How fields are named
 * and typed"): a list field has a plural name, no name is numbered (`url_2`), "In stock" is availability text and no
 * count, a price is a number on both paths, and generateHeuristic and suggestConfig give the same fields for the
 * same fixture pages.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { bookshopPage } from '../fixtures/site/books.ts';
import { suggestConfig } from '../../lambdas/generator/suggest.ts';
import { generateHeuristic } from '../../lambdas/generator/heuristic.ts';
import { isAvailabilityText, pluralName, singularName, uniqueName } from '../../lambdas/generator/naming.ts';
import type { FieldSpec } from '../../lambdas/engine/config.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';

const fieldsOf = (yaml: string): FieldSpec[] => parseConfig(yaml).extract.fields;
/** What a field is, without its selector: name, type, transforms, multiple. */
const shape = (f: FieldSpec) => ({ name: f.name, type: f.type, transform: (f as { transform?: string[] }).transform ?? [], multiple: !!(f as { multiple?: boolean }).multiple });

describe('naming: the word rules', () => {
  it('plurals and singulars of field names', () => {
    for (const [one, many] of [['tag', 'tags'], ['author', 'authors'], ['image', 'images'], ['tag_url', 'tag_urls'], ['category', 'categories'], ['address', 'addresses'], ['tags', 'tags'], ['availability', 'availability']]) {
      assert.equal(pluralName(one!), many, one);
    }
    assert.equal(singularName('tags'), 'tag');
    assert.equal(singularName('categories'), 'category');
    assert.equal(singularName('title'), 'title');
  });

  it('uniqueName takes the first free candidate, else an ordinal, never a number after an underscore', () => {
    const taken = new Set(['url']);
    assert.equal(uniqueName(['url', 'shop_url'], taken), 'shop_url');
    assert.equal(uniqueName(['url', 'shop_url'], taken), 'second_url');
    assert.equal(uniqueName(['url'], taken), 'third_url');
    assert.deepEqual([...taken], ['url', 'shop_url', 'second_url', 'third_url']);
  });

  it('"In stock", "Out of stock", "Available" are availability text; "12 in stock" is not', () => {
    assert.equal(isAvailabilityText(['In stock', 'Out of stock', 'In stock']), true);
    assert.equal(isAvailabilityText(['Available', 'Sold out']), true);
    assert.equal(isAvailabilityText(['12 in stock', '3 in stock']), false);
    assert.equal(isAvailabilityText(['A red lamp', 'A blue lamp']), false);
  });
});

describe('naming: Suggest on the fixture pages', () => {
  it('books: "In stock" is availability text (no count, no number), the price a number (its text as price_text), the second link title_url', () => {
    const s = suggestConfig(bookshopPage('/books/')!, 'http://books.example/books/');
    const fields = fieldsOf(s.yaml);
    assert.ok(!s.fields.includes('count'), s.yaml);
    const availability = fields.find((f) => f.name === 'availability');
    assert.ok(availability, s.yaml);
    assert.ok(!((availability as { transform?: string[] }).transform ?? []).some((t) => /number/.test(t)), s.yaml);
    assert.ok(s.rows.every((r) => r.availability === 'In stock'), JSON.stringify(s.rows[0]));
    assert.ok(s.rows.every((r) => typeof r.price === 'number' && r.price > 0), JSON.stringify(s.rows[0]));
    // Every column kept: the price as shown stays beside the number.
    assert.ok(s.rows.every((r) => r.price_text === `£${(r.price as number).toFixed(2)}`), JSON.stringify(s.rows[0]));
    assert.ok(s.fields.includes('title_url'), s.yaml);
    assert.ok(!s.fields.some((f) => /_\d+$/.test(f)), `no numbered names: ${s.fields.join(', ')}`);
    assert.equal(new Set(s.fields).size, s.fields.length);
  });

  it('a list of tags is `tags` and its links `tag_urls`: every multiple field has a plural name', async () => {
    const site = await startFixtureSite();
    try {
      const url = `${site.url}/quotes/`;
      const html = await (await fetch(url)).text();
      const s = suggestConfig(html, url);
      const fields = fieldsOf(s.yaml);
      const multiple = fields.filter((f) => (f as { multiple?: boolean }).multiple);
      assert.deepEqual(multiple.map((f) => f.name).sort(), ['tag_urls', 'tags'], s.yaml);
      assert.ok(!s.fields.some((f) => /_\d+$/.test(f)), s.yaml);
      assert.ok(Array.isArray(s.rows[0]!.tags) && (s.rows[0]!.tags as unknown[]).length > 0, JSON.stringify(s.rows[0]));
    } finally {
      await site.close();
    }
  });

  it('a stock count with digits ("12 in stock") stays a count', () => {
    const items = Array.from({ length: 8 }, (_, i) => `<li class="product"><h3><a href="/p/${i}">Lamp number ${i} of the shop</a></h3><span class="stock">${3 + i} in stock</span></li>`).join('');
    const s = suggestConfig(`<html><body><ul>${items}</ul></body></html>`, 'http://shop.example/');
    assert.ok(s.fields.includes('count'), s.yaml);
    assert.ok(!s.fields.includes('availability'), s.yaml);
  });

  it('two more links of a record are named by what they are (author_url, detail_url), not url_2', () => {
    const items = Array.from({ length: 8 }, (_, i) => `<div class="card"><a class="thumb" href="/p/${i}"><img src="/i/${i}.jpg"></a><h3>Lamp number ${i}</h3>
      <p class="author-box">by <a href="/who/${i}">Maker ${i}</a></p><a class="detail" href="/p/${i}/more">More about it</a></div>`).join('');
    const s = suggestConfig(`<html><body><div class="grid">${items}</div></body></html>`, 'http://shop.example/');
    const links = fieldsOf(s.yaml).filter((f) => f.type === 'link').map((f) => f.name);
    assert.equal(links.length, 3, s.yaml);
    assert.ok(!links.some((n) => /_\d+$/.test(n)), s.yaml);
    assert.ok(links.includes('detail_url'), s.yaml);
    assert.ok(links.some((n) => /^(author|maker)/.test(n)), s.yaml);
  });
});

describe('naming: generate and Suggest give the same fields for the same page (one path)', () => {
  let site: FixtureSite;
  before(async () => { site = await startFixtureSite(); });
  after(async () => { await site.close(); });

  for (const path of ['/books/catalogue/page-1.html', '/quotes/']) {
    it(`${path}: the same names, types, transforms and lists, with a prompt naming no field`, async () => {
      const url = `${site.url}${path}`;
      const html = await (await fetch(url)).text();
      const suggested = suggestConfig(html, url);
      const generated = await generateHeuristic({ url, prompt: 'all the records listed on this page' }, { outbound: { allow: ['127.0.0.0/8'] }, signal: AbortSignal.timeout(30_000) });
      assert.deepEqual(generated.config.extract.fields.map(shape), fieldsOf(suggested.yaml).map(shape), `generate:\n${generated.yaml}\nsuggest:\n${suggested.yaml}`);
    });
  }

  it('a price asked for by the prompt has the same transforms as Suggest\'s price', async () => {
    const url = `${site.url}/books/catalogue/page-1.html`;
    const html = await (await fetch(url)).text();
    const suggested = fieldsOf(suggestConfig(html, url).yaml).find((f) => f.name === 'price');
    const generated = (await generateHeuristic({ url, prompt: 'Titles and prices of the books on this page' }, { outbound: { allow: ['127.0.0.0/8'] }, signal: AbortSignal.timeout(30_000) })).config.extract.fields.find((f) => f.name === 'price');
    assert.ok(suggested && generated);
    assert.deepEqual(shape(generated), shape(suggested));
    assert.ok(shape(suggested).transform.includes('extract_number'));
  });
});
