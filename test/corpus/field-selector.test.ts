/**
 * Field selectors compiled once (lambdas/engine/field-selector.ts) find exactly what cheerio finds, on 42 real pages
 * of the corpus (records pages of 40 sites, the books.toscrape.com pages): the checks of
 * test/helpers/field-selector-checks.ts, which test/unit/field-selector.test.ts runs on the fixture site's pages.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { corpusPath } from '../fixtures/corpus.ts';
import { checkFieldSelectors, checkSiblingsSelectors, type NamedPage } from '../helpers/field-selector-checks.ts';

function pages(): NamedPage[] {
  const out: NamedPage[] = [];
  const records = corpusPath('records');
  for (const dir of readdirSync(records).filter((d) => d.includes('--')).sort().slice(0, 40)) {
    out.push({ name: dir, html: readFileSync(join(records, dir, 'page.html'), 'utf8') });
  }
  for (const f of ['books-toscrape-home.html', 'books-toscrape-book.html']) out.push({ name: f, html: readFileSync(corpusPath('listings', f), 'utf8') });
  return out;
}

describe('field selectors compiled once, on real pages', () => {
  it('find what cheerio finds inside each item, first match and all matches, on 42 real pages', () => {
    const compared = checkFieldSelectors(pages());
    assert.ok(compared > 10_000, `${compared} comparisons`);
  });

  it('find the document\'s matches that are in the item\'s elements for items spread over siblings, first and all, on 42 real pages', () => {
    const { compared, nonEmpty } = checkSiblingsSelectors(pages());
    assert.ok(compared > 10_000 && nonEmpty > compared / 4, `${compared} comparisons, ${nonEmpty} with matches`);
  });
});
