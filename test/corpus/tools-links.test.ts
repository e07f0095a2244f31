/**
 * The broken-link checker's link extraction (lambdas/tools/links-extract.ts) on the two large real pages of the
 * corpus's links/ (lychee's benchmark fixtures: ArchWiki "List of applications", Wikipedia "Elvis Presley"), against a
 * count derived with cheerio from the documented table of link attributes (test/helpers/links-expected.ts). The rest of
 * the checker: test/unit/tools-links.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractLinks } from '../../lambdas/tools/links-extract.ts';
import { corpusDir } from '../fixtures/corpus.ts';
import { cheerioLinks } from '../helpers/links-expected.ts';

describe('extractLinks on real pages', () => {
  for (const [file, pageUrl] of [
    ['archwiki-list-of-applications.html', 'https://wiki.archlinux.org/title/List_of_applications'],
    ['wikipedia-elvis-presley.html', 'https://en.wikipedia.org/wiki/Elvis_Presley'],
  ] as const) {
    it(`finds the links of the corpus page ${file} that cheerio finds`, () => {
      const html = readFileSync(join(corpusDir(), 'links', file), 'utf8');
      const expected = cheerioLinks(html, pageUrl);
      const ours = extractLinks(html, pageUrl);
      assert.equal(new Set(ours.map((l) => l.url)).size, ours.length, 'duplicates');
      assert.deepEqual(ours.map((l) => l.url).sort(), [...expected].sort());
      assert.ok(ours.length > (file.startsWith('arch') ? 5000 : 1500), `${ours.length} links`);
    });
  }
});
