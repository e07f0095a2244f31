/**
 * The content extractor (lambdas/tools/content.ts) on the 130 Mozilla Readability test pages of the corpus
 * (articles/readability/<name>/: source.html, expected.html, expected-metadata.json). Its rules one by one on inline
 * pages, and the fixture's article: test/unit/tools-content.test.ts.
 *
 * The corpus's expected output is Readability's own (its test harness, a newer Readability over its JSDOMParser,
 * URL http://fakehost/test/page.html): agreement with it is what the thresholds below hold. They were set a
 * little under the figures measured when this file was written (stated beside each), so that a regression fails.
 * Texts are compared by token F1 (content-score.ts) with the expected HTML read by the same text layout
 * (htmlText), metadata after folding whitespace, '' and a missing value counting as null, times as ISO 8601.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { contentReportSchema, countWords, extractContent, htmlText, normaliseTime, readingTimeMinutes, type ContentReport } from '../../lambdas/tools/content.ts';
import { tokenF1 } from '../../lambdas/tools/content-score.ts';
import { corpusDir } from '../fixtures/corpus.ts';
import { toolPage } from '../helpers/tool-page.ts';

/** The URL the corpus's expected output was made with (Readability's test harness). */
const CORPUS_URL = 'http://fakehost/test/page.html';

const validate = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true }).compile(contentReportSchema);

function assertValid(report: ContentReport, label: string): void {
  assert.ok(validate(report), `${label}: ${JSON.stringify(validate.errors)}`);
}

interface Expected {
  title?: string | null;
  byline?: string | null;
  lang?: string | null;
  excerpt?: string | null;
  siteName?: string | null;
  publishedTime?: string | null;
  readerable: boolean;
}

interface PageResult {
  name: string;
  report: ContentReport;
  expected: Expected;
  f1: number;
}

/** Whitespace folded; '', undefined and null all null. */
function norm(v: string | null | undefined): string | null {
  if (typeof v !== 'string') return null;
  return v.replace(/[ \t\n\f\r\u00a0]+/g, ' ').trim() || null;
}

type Verdict = 'agree' | 'filled' | 'conflict';

/** agree: the same (both null included); filled: expected none, ours one; conflict: expected one, ours other or none. */
function verdict(ours: string | null, expected: string | null): Verdict {
  if (ours === expected) return 'agree';
  return expected === null ? 'filled' : 'conflict';
}

const FIELDS = {
  title: (r: PageResult) => verdict(norm(r.report.title), norm(r.expected.title)),
  byline: (r: PageResult) => verdict(norm(r.report.byline), norm(r.expected.byline)),
  lang: (r: PageResult) => verdict(norm(r.report.lang), norm(r.expected.lang)),
  excerpt: (r: PageResult) => verdict(norm(r.report.excerpt), norm(r.expected.excerpt)),
  siteName: (r: PageResult) => verdict(norm(r.report.site_name), norm(r.expected.siteName)),
  publishedTime: (r: PageResult) => verdict(r.report.published_time, normaliseTime(norm(r.expected.publishedTime))),
};

describe('extractContent on the 130 Readability test pages', () => {
  const results: PageResult[] = [];

  before(() => {
    const root = join(corpusDir(), 'articles', 'readability');
    for (const name of readdirSync(root).sort()) {
      const dir = join(root, name);
      if (!existsSync(join(dir, 'source.html'))) continue;
      const report = extractContent(toolPage(readFileSync(join(dir, 'source.html'), 'utf8'), CORPUS_URL));
      const expected = JSON.parse(readFileSync(join(dir, 'expected-metadata.json'), 'utf8')) as Expected;
      const f1 = tokenF1(report.text, htmlText(readFileSync(join(dir, 'expected.html'), 'utf8'))).f1;
      results.push({ name, report, expected, f1 });
    }
  });

  it('reads all 130 pages, each response valid against the schema', () => {
    assert.equal(results.length, 130);
    for (const r of results) assertValid(r.report, r.name);
  });

  // Issue 27 made the text what people label as an article's body (the article-extraction-benchmark, bench/content.ts):
  // without captions, bylines, dates, comments, related links and the headline, which Readability's expected output
  // keeps. Measured then: mean 0.9890, 97 pages at 0.99 or more. Its third pass (boilerplate up to half the text, not
  // 15%) measured mean 0.9864, 93 pages at 0.99 or more; the lowest nytimes-5 0.649 (expected.html is a page of story
  // teasers Readability keeps), firefox-nightly-blog 0.855 (its readers' comments, which the labels leave out and
  // expected.html keeps), then msn 0.902 (a photo credit).
  it('text: mean token F1 against expected.html at least 0.985 (measured 0.9864), no page under 0.9 but nytimes-5 and firefox-nightly-blog', () => {
    const mean = results.reduce((s, r) => s + r.f1, 0) / results.length;
    assert.ok(mean >= 0.985, `mean F1 ${mean.toFixed(4)}`);
    const known: Record<string, number> = { 'nytimes-5': 0.6, 'firefox-nightly-blog': 0.8 };
    const low = results.filter((r) => r.f1 < (known[r.name] ?? 0.9)).map((r) => `${r.name} ${r.f1.toFixed(3)}`);
    assert.deepEqual(low, []);
    // At least 90 of 130 pages at 0.99 or more (measured: 93).
    assert.ok(results.filter((r) => r.f1 >= 0.99).length >= 90);
  });

  // Measured when written: agree (conflicts) — title 130 (0), byline 125 (0), lang 129 (0), excerpt 128 (0),
  // siteName 128 (0), publishedTime 109 (0); the rest are values found where Readability found none.
  const THRESHOLDS: Record<keyof typeof FIELDS, number> = { title: 128, byline: 123, lang: 127, excerpt: 126, siteName: 126, publishedTime: 107 };
  for (const [field, min] of Object.entries(THRESHOLDS) as [keyof typeof FIELDS, number][]) {
    it(`${field}: agrees with expected-metadata.json on at least ${min} of 130 pages, differs from a value it has on at most 2`, () => {
      const verdicts = results.map((r) => ({ name: r.name, v: FIELDS[field](r) }));
      const agree = verdicts.filter((x) => x.v === 'agree').length;
      const conflicts = verdicts.filter((x) => x.v === 'conflict').map((x) => x.name);
      assert.ok(agree >= min, `${field}: ${agree} agree`);
      assert.ok(conflicts.length <= 2, `${field} conflicts: ${conflicts.join(', ')}`);
    });
  }

  it('readerable equals the expected on at least 128 of 130 pages (measured 130)', () => {
    const same = results.filter((r) => r.report.readerable === r.expected.readerable).length;
    assert.ok(same >= 128, `${same}`);
    assert.ok(results.some((r) => !r.report.readerable), 'some pages are not readerable');
  });

  it('images are absolute http(s) URLs, once each; pages with images in expected.html have them', () => {
    for (const r of results) {
      const srcs = r.report.images.map((i) => i.src);
      assert.equal(new Set(srcs).size, srcs.length, r.name);
      for (const s of srcs) assert.match(s, /^https?:\/\//, r.name);
    }
    const keep = results.find((r) => r.name === 'keep-images')!;
    assert.ok(keep.report.images.length >= 5, `keep-images: ${keep.report.images.length}`);
  });

  it('links and images of the content resolve as in expected.html (page URL, <base href> absolute and relative)', () => {
    const urls = (html: string) => [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
    for (const name of ['base-url', 'base-url-base-element', 'base-url-base-element-relative', 'clean-links', 'lazy-image-1']) {
      const r = results.find((x) => x.name === name)!;
      const expected = urls(readFileSync(join(corpusDir(), 'articles', 'readability', name, 'expected.html'), 'utf8'));
      assert.ok(expected.length > 0, name);
      // The base-url pages' paragraphs of one link each ("link", 8 in a row) are removed as links to elsewhere: what
      // stays is resolved as expected, in the same order, and every image stays.
      const ours = urls(r.report.html);
      let at = 0;
      for (const u of ours) {
        at = expected.indexOf(u, at);
        assert.ok(at >= 0, `${name}: ${u}`);
        at++;
      }
      assert.deepEqual(ours.filter((u) => /\.(?:png|jpe?g|gif)$/.test(u)), expected.filter((u) => /\.(?:png|jpe?g|gif)$/.test(u)), name);
      if (!name.startsWith('base-url')) assert.deepEqual(ours, expected, name);
    }
    for (const r of results) assert.doesNotMatch(r.report.html, /href="javascript:/i, r.name);
  });

  it('word_count and reading_time_minutes follow the text', () => {
    for (const r of results) {
      assert.equal(r.report.word_count, countWords(r.report.text, r.report.lang), r.name);
      assert.equal(r.report.reading_time_minutes, readingTimeMinutes(r.report.word_count), r.name);
    }
  });

  it('published_time is ISO 8601 wherever the value found was a date', () => {
    for (const r of results) {
      const t = r.report.published_time;
      if (t !== null) assert.match(t, /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/, `${r.name}: ${t}`);
    }
  });
});
