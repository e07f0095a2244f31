/**
 * The generate bench's ground truth (bench/generate-truth.ts) on the real records set of the corpus (records/, 300
 * pages of 100 sites): the first values of 289 of the pages appear in the page text, those of the other 11 were
 * written differently; and the split of the set by site (bench/generate-split.json) covers every site once. The
 * matching rules themselves: test/unit/generate-truth.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkPage, loadRecordsTruth } from '../../bench/generate-truth.ts';
import { corpusDir } from '../fixtures/corpus.ts';

describe('the records set', () => {
  it('has 289 pages written as shown and 11 written differently (records README)', () => {
    const dir = join(corpusDir(), 'records');
    const different: string[] = [];
    const folders = readdirSync(dir).filter((f) => f.includes('--'));
    assert.equal(folders.length, 300);
    for (const folder of folders) {
      const truth = loadRecordsTruth(dir, folder);
      const html = new TextDecoder(truth.charset ?? 'utf-8').decode(truth.html);
      if (!checkPage(truth, html).writtenAsShown) different.push(folder);
    }
    assert.deepEqual(different.sort(), [
      'business--forbes-com--business-cards-keyword',
      'business--forbes-com--fax-business-keyword',
      'news--usatoday-com--business-news-keyword',
      'news--usatoday-com--portland-news-keyword',
      'recreation--qatarairways-com--recreation-camp-keyword',
      'recreation--qatarairways-com--recreation-guide-keyword',
      'recreation--qatarairways-com--white-mountain-keyword',
      'regional--ebay-co-uk--television-keyword',
      'shopping--newegg-com--mobile-phones-keyword',
      'society--legacy-com--golden-key-society-keyword',
      'society--legacy-com--new-york-society-keyword',
    ]);
  });

  it('is split by site once: every site of the set on exactly one side, 30 test sites and 70 development sites', () => {
    const split = JSON.parse(readFileSync(new URL('../../bench/generate-split.json', import.meta.url), 'utf8')) as { test: string[]; develop: string[] };
    const sites = new Set(readdirSync(join(corpusDir(), 'records')).filter((f) => f.includes('--')).map((f) => f.split('--').slice(0, 2).join('--')));
    assert.equal(sites.size, 100);
    assert.equal(split.test.length, 30);
    assert.equal(split.develop.length, 70);
    assert.deepEqual([...split.test, ...split.develop].sort(), [...sites].sort());
  });
});
