/**
 * The SEO analyzer (lambdas/tools/seo.ts, docs/tools.md "SEO analyzer") on real pages of the corpus: the extruct
 * pages with extruct's expected output beside them (the types our analyzer lists equal the `@type`s / itemtypes found
 * in extruct's expected JSON-LD, microdata and RDFa files, computed here from those files; the Open Graph values equal
 * extruct's Open Graph output), and the Readability articles (language as Readability expects it; title, headings,
 * images and meta description against an independent DOM, linkedom). The audits and the fields on inline pages and
 * on the fixture's article: test/unit/tools-seo.test.ts.
 * Every report is validated against `seoReportSchema` with ajv in strict mode.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parseHTML } from 'linkedom';
import { analyzeSeo, seoReportSchema, type SeoReport } from '../../lambdas/tools/seo/index.ts';
import type { FetchedText, PageFetch, ToolPage } from '../../lambdas/tools/page.ts';
import { toolPage } from '../helpers/tool-page.ts';
import { corpusDir } from '../fixtures/corpus.ts';

const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
const validate = ajv.compile(seoReportSchema);

/** Asserts the report matches the published schema, then returns it. */
function valid(report: SeoReport): SeoReport {
  const ok = validate(report);
  assert.ok(ok, `report does not match seoReportSchema: ${ajv.errorsText(validate.errors)}`);
  return report;
}

/** A PageFetch answering robots.txt with `status` and `text`. */
function robotsAnswer(text: string, status = 200): PageFetch {
  return async (url: string): Promise<FetchedText> => ({ url, status, headers: { 'content-type': 'text/plain' }, contentType: 'text/plain', text });
}

async function analyze(html: string, fetch: PageFetch, extra: Partial<ToolPage> = {}, url = 'https://example.com/widgets/blue'): Promise<SeoReport> {
  return valid(await analyzeSeo(toolPage(html, url, extra), fetch));
}

// ---------------------------------------------------------------------------------------------------------
// The extruct corpus
// ---------------------------------------------------------------------------------------------------------

const EXTRUCT = join(corpusDir(), 'structured-data', 'extruct');

/** Every value of `key` (a string or a list of strings) on the objects inside `value`; value objects (`@value`) are datatypes, not node types. */
function typesIn(value: unknown, key: string, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const v of value) typesIn(v, key, into);
  } else if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if (key in obj && !('@value' in obj)) {
      const t = obj[key];
      for (const x of Array.isArray(t) ? t : [t]) if (typeof x === 'string') into.add(x);
    }
    for (const [k, v] of Object.entries(obj)) if (k !== key) typesIn(v, key, into);
  }
  return into;
}

type Syntax = 'json-ld' | 'microdata' | 'rdfa' | 'opengraph';

/**
 * Which extraction an expected file holds, from its shape (extruct's tests pair them the same way):
 * `.jsonld` is JSON-LD; a list of `{type, properties}` items is microdata; a list of `{namespace,
 * properties}` is Open Graph; a list of expanded nodes (`@id` / `@type` / IRIs as keys) is RDFa; an object
 * keyed by syntax (`{"json-ld": […], "microdata": […]}`) holds several. Other shapes (microformats, Dublin
 * Core, extruct's "flat" variants) are not what the analyzer reports.
 */
function expectedSyntaxes(file: string, data: unknown): Array<[Syntax, unknown]> {
  if (file.endsWith('.jsonld')) return [['json-ld', data]];
  if (!Array.isArray(data)) {
    const obj = data as Record<string, unknown>;
    const out: Array<[Syntax, unknown]> = [];
    if (Array.isArray(obj['json-ld'])) out.push(['json-ld', obj['json-ld']]);
    // The "flat" microdata variants (`@type` keys) describe the same items as the nested file beside them.
    if (Array.isArray(obj.microdata) && !file.includes('_flat')) out.push(['microdata', obj.microdata]);
    return out;
  }
  if (data.length === 0) return [];
  const first = data[0] as Record<string, unknown>;
  if ('namespace' in first && 'properties' in first) return [['opengraph', data]];
  // microformats2 JSON (`"type": ["h-card"]`) has the same keys: its classes start with "h-".
  const isMicroformats = Array.isArray(first.type) && first.type.every((t) => typeof t === 'string' && t.startsWith('h-'));
  if (('type' in first || 'properties' in first) && !isMicroformats && !file.includes('.flat.') && !file.includes('withtext') && !file.includes('_custom_url')) return [['microdata', data]];
  if (Object.keys(first).some((k) => k === '@id' || k === '@type' || /^https?:\/\//.test(k))) return [['rdfa', data]];
  return [];
}

interface ExtructCase {
  html: string;
  expected: string;
  syntax: Syntax;
  data: unknown;
}

function extructCases(): ExtructCase[] {
  const cases: ExtructCase[] = [];
  for (const dir of readdirSync(EXTRUCT, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    const folder = join(EXTRUCT, dir.name);
    const files = readdirSync(folder);
    for (const html of files.filter((f) => f.endsWith('.html'))) {
      const stem = html.slice(0, -'.html'.length);
      for (const expected of files.filter((f) => f !== html && (f.startsWith(`${stem}.`) || f.startsWith(`${stem}_`)) && /\.(json|jsonld)$/.test(f))) {
        // product.html's siblings product_custom_url*.json are for another base URL: same types, checked once.
        if (expected.slice(stem.length).startsWith('_') && !expected.startsWith(`${stem}_flat`)) continue;
        const data = JSON.parse(readFileSync(join(folder, expected), 'utf8'));
        for (const [syntax, part] of expectedSyntaxes(expected, data)) cases.push({ html: join(folder, html), expected: join(folder, expected), syntax, data: part });
      }
    }
  }
  return cases;
}

describe('structured data and Open Graph on the extruct corpus', () => {
  const cases = extructCases();
  const reports = new Map<string, Promise<SeoReport>>();
  const reportFor = (file: string): Promise<SeoReport> => {
    let r = reports.get(file);
    if (!r) {
      r = analyze(readFileSync(file, 'utf8'), robotsAnswer('', 404), {}, 'http://www.example.com/page.html');
      reports.set(file, r);
    }
    return r;
  };

  it('finds expected outputs of every syntax the analyzer reports', () => {
    const counts = { 'json-ld': 0, microdata: 0, rdfa: 0, opengraph: 0 };
    for (const c of cases) counts[c.syntax]++;
    // The corpus holds 16 JSON-LD, 26 microdata, 15 RDFa and 2 Open Graph expectations for its pages.
    assert.ok(counts['json-ld'] >= 10 && counts.microdata >= 15 && counts.rdfa >= 10 && counts.opengraph >= 2, JSON.stringify(counts));
  });

  for (const c of cases.filter((x) => x.syntax !== 'opengraph')) {
    const name = `${c.expected.slice(EXTRUCT.length + 1)} (${c.syntax})`;
    it(`types of ${name}`, async () => {
      const sd = (await reportFor(c.html)).structured_data;
      const expected = typesIn(c.data, c.syntax === 'microdata' ? 'type' : '@type');
      const ours =
        c.syntax === 'json-ld'
          ? sd.json_ld.flatMap((i) => [...i.type, ...i.nested_types])
          : c.syntax === 'microdata'
            ? sd.microdata.flatMap((i) => i.type)
            : sd.rdfa.flatMap((i) => i.type);
      assert.deepEqual(new Set(ours), expected);
      // `types` names each of them, schema.org types by their short name.
      for (const t of expected) {
        const short = /^https?:\/\/schema\.org\/(.+)$/.exec(t)?.[1] ?? t;
        assert.ok(sd.types.includes(short), `${short} missing from types ${JSON.stringify(sd.types)}`);
      }
    });
  }

  for (const c of cases.filter((x) => x.syntax === 'opengraph')) {
    it(`Open Graph of ${c.expected.slice(EXTRUCT.length + 1)}`, async () => {
      const og = (await reportFor(c.html)).open_graph;
      const pairs = (c.data as Array<{ properties: Array<[string, string]> }>).flatMap((g) => g.properties);
      assert.ok(pairs.length >= 5);
      const ogKeys = new Set<string>();
      for (const [prop, value] of pairs) {
        const key = prop.startsWith('og:') ? prop.slice(3) : prop;
        if (prop.startsWith('og:')) ogKeys.add(key);
        const repeated = /^(image|video|audio)(:|$)/.test(key);
        const all = pairs.filter(([p]) => p === prop).map(([, v]) => v);
        assert.deepEqual(og[key], repeated ? all : all[0], `${prop}`);
        assert.ok(all.includes(value));
      }
      // No og: property the page does not have.
      assert.deepEqual(new Set(Object.keys(og).filter((k) => !k.includes(':') || /^(image|video|audio):/.test(k))), ogKeys);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------
// The Readability corpus
// ---------------------------------------------------------------------------------------------------------

describe('fields on the Readability corpus articles', () => {
  const root = join(corpusDir(), 'articles', 'readability');
  const pages = readdirSync(root).filter((name) => existsSync(join(root, name, 'source.html')));
  const fold = (s: string) => s.replace(/[\t\n\f\r ]+/g, ' ').trim();

  it('has the 130 pages', () => {
    assert.equal(pages.length, 130);
  });

  it('lang is the <html lang> Readability expects, title agrees with its title, fields with an independent DOM', async () => {
    let langChecked = 0;
    let titleExpected = 0;
    let titleAgrees = 0;
    const agree = { title: 0, h1: 0, h2: 0, images: 0, description: 0, words: 0 };
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });
    for (const name of pages) {
      const html = readFileSync(join(root, name, 'source.html'), 'utf8');
      const meta = JSON.parse(readFileSync(join(root, name, 'expected-metadata.json'), 'utf8')) as { title?: string; lang?: string };
      const report = await analyze(html, robotsAnswer('', 404), {}, 'http://fakehost/test/page.html');
      if (meta.lang) {
        langChecked++;
        assert.equal(report.lang, meta.lang, `${name}: lang`);
      }
      // Readability's title is the document title trimmed of a site name, or the og:title / h1 when better.
      if (meta.title) {
        titleExpected++;
        const t = meta.title.toLowerCase().replace(/\s+/g, ' ').trim();
        const candidates = [report.title, report.open_graph.title, ...report.headings.h1].map((x) => (typeof x === 'string' ? x.toLowerCase() : ''));
        if (candidates.some((x) => x.includes(t))) titleAgrees++;
      }
      // linkedom builds its own DOM (htmlparser2, not the HTML5 tree construction): a second opinion.
      const { document } = parseHTML(html);
      for (const el of Array.from(document.querySelectorAll('noscript, template'))) el.remove();
      const docTitle = document.querySelector('title') ? fold(document.title) : null;
      if (docTitle === report.title) agree.title++;
      if (JSON.stringify(Array.from(document.querySelectorAll('h1')).map((e) => fold(e.textContent ?? ''))) === JSON.stringify(report.headings.h1)) agree.h1++;
      if (JSON.stringify(Array.from(document.querySelectorAll('h2')).map((e) => fold(e.textContent ?? ''))) === JSON.stringify(report.headings.h2)) agree.h2++;
      const svgImages = document.querySelectorAll('svg img').length;
      if (document.querySelectorAll('img').length - svgImages === report.images.count) agree.images++;
      const desc = Array.from(document.querySelectorAll('meta')).find((m) => (m.getAttribute('name') ?? '').toLowerCase() === 'description');
      if ((desc ? (desc.getAttribute('content') ?? '').trim() : null) === report.meta_description) agree.description++;
      // The words a reader sees: linkedom's body text without scripts and styles, split on white space.
      for (const el of Array.from(document.querySelectorAll('script, style'))) el.remove();
      // Unspaced scripts (Chinese, Japanese, Thai) counted by Intl.Segmenter's words, as a reader would count them.
      const words = (document.body?.textContent ?? '').split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t))
        .reduce((n, t) => n + (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u.test(t) ? [...segmenter.segment(t)].filter((w) => w.isWordLike).length : 1), 0);
      // Within 10% (or 5 words) on 128 of the 130 pages (2026-12-02): iab-1 13% more, yahoo-3 where linkedom's body is empty.
      if (Math.abs(report.word_count - words) <= Math.max(5, 0.1 * words)) agree.words++;
    }
    assert.ok(langChecked >= 70, `only ${langChecked} pages name a lang`);
    assert.ok(titleAgrees >= titleExpected * 0.9, `title agrees with Readability's on ${titleAgrees} of ${titleExpected}`);
    for (const [field, n] of Object.entries(agree)) assert.ok(n >= pages.length * 0.95, `${field} agrees with linkedom on ${n} of ${pages.length}`);
  });

  it('counts the words of an article near Readability’s text of it', async () => {
    // The article body alone is a floor for the page's words; the whole page with menus is rarely 4× more.
    let within = 0;
    for (const name of pages) {
      const report = await analyze(readFileSync(join(root, name, 'source.html'), 'utf8'), robotsAnswer('', 404));
      const { document } = parseHTML(readFileSync(join(root, name, 'expected.html'), 'utf8'));
      const articleWords = (document.documentElement?.textContent ?? '').split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
      if (articleWords >= 50 && report.word_count >= articleWords * 0.8 && report.word_count <= articleWords * 6) within++;
    }
    assert.ok(within >= pages.length * 0.8, `word counts plausible on ${within} of ${pages.length}`);
  });
});
