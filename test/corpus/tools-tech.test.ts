/**
 * The tech detector (lambdas/tools/tech.ts) on real pages of the corpus: its pre-filters checked against the plain
 * regexes on real pages (a match is never filtered out), the technologies of real pages with the evidence each
 * assertion rests on, and the largest pages within the time budget. The evidence kinds and rules on inline pages:
 * test/unit/tools-tech.test.ts.
 *
 * Expected technologies come from the evidence in each page and from the fingerprint data read here (never from
 * running the detector).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { Ajv } from 'ajv';
import {
  boundQuantifiers, detectTechnologies, domPrefilter, requiredLiterals, techReportSchema, type DetectedTechnology, type TechReport,
} from '../../lambdas/tools/tech/index.ts';
import { loadFingerprints } from '../../lambdas/tools/fingerprints.ts';
import type { ToolPage } from '../../lambdas/tools/page.ts';
import { parseHtml } from '../../lambdas/engine/html/parse.ts';
import { selectAll } from 'css-select';
import { corpusPath } from '../fixtures/corpus.ts';
import { toolPage } from '../helpers/tool-page.ts';

const validate = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true }).compile(techReportSchema);

/** Detects, checks the report against the schema, and returns it. */
function detect(page: ToolPage): TechReport {
  const report = detectTechnologies(page);
  assert.ok(validate(report), JSON.stringify(validate.errors));
  return report;
}

function find(report: TechReport, name: string): DetectedTechnology | undefined {
  return report.technologies.find((t) => t.name === name);
}

function get(report: TechReport, name: string): DetectedTechnology {
  const t = find(report, name);
  assert.ok(t, `${name} not detected; got ${report.technologies.map((x) => x.name).join(', ') || 'nothing'}`);
  return t;
}

/** The technology names a fingerprint implies, without their tags. */
function impliesOf(name: string): string[] {
  const raw = loadFingerprints().technologies[name]?.implies ?? [];
  return (Array.isArray(raw) ? raw : [raw]).map((i) => i.split('\\;')[0]!);
}

const { technologies: DATA } = loadFingerprints();

describe('pre-filters on real pages', () => {
  it('requiredLiterals never rejects a value the regex matches (every html and scripts pattern, on corpus pages)', () => {
    const texts = [
      readFileSync(corpusPath('listings', 'books-toscrape-home.html'), 'utf8'),
      readFileSync(corpusPath('records', 'kids-and-teens--sitepoint-com--disney-keyword', 'page.html'), 'utf8'),
      readFileSync(corpusPath('records', 'sports--nbcsports-com--baseball-sports-keyword', 'page.html'), 'utf8'),
    ].map((t) => t.slice(0, 200_000));
    let checked = 0;
    for (const tech of Object.values(DATA)) {
      for (const field of ['html', 'scripts', 'text', 'css', 'scriptSrc'] as const) {
        const raw = tech[field];
        for (const p of Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]) {
          const source = String(p).split('\\;')[0]!;
          const literals = requiredLiterals(source);
          if (!literals) continue;
          let re: RegExp;
          try {
            re = new RegExp(boundQuantifiers(source), 'i');
          } catch {
            continue;
          }
          for (const text of texts) {
            const m = re.exec(text);
            if (!m) continue;
            checked++;
            const lower = m[0].toLowerCase();
            assert.ok(literals.some((l) => lower.includes(l)), `${source}: match ${JSON.stringify(m[0].slice(0, 80))} lacks ${literals.join(' | ')}`);
          }
        }
      }
    }
    assert.ok(checked > 20, `only ${checked} matches checked`);
  });

  it('the dom pre-filter never rejects a selector that finds elements (every dom selector, on corpus pages)', () => {
    const selectors = new Set<string>();
    for (const t of Object.values(DATA)) {
      const dom = t.dom;
      if (dom === undefined) continue;
      for (const s of typeof dom === 'string' ? [dom] : Array.isArray(dom) ? dom : Object.keys(dom)) selectors.add(s);
    }
    let found = 0;
    let rejected = 0;
    for (const file of [['listings', 'books-toscrape-home.html'], ['records', 'reference--harvard-edu--software-reference-keyword', 'page.html'],
      ['records', 'kids-and-teens--sitepoint-com--disney-keyword', 'page.html'], ['records', 'shopping--newegg-com--toys-shopping-keyword', 'page.html']]) {
      const html = readFileSync(corpusPath(...file), 'utf8');
      const doc = parseHtml(html);
      const passes = domPrefilter(html);
      for (const selector of selectors) {
        let hits: unknown[];
        try {
          hits = selectAll(selector, doc);
        } catch {
          continue;
        }
        const through = passes(selector);
        if (hits.length) {
          found++;
          assert.ok(through, `${file.join('/')}: ${selector} finds ${hits.length} elements but was filtered out`);
        } else if (!through) {
          rejected++;
        }
      }
    }
    assert.ok(found > 20, `only ${found} selectors found elements`);
    assert.ok(rejected > selectors.size, `the pre-filter rejected only ${rejected} of 4 × ${selectors.size}`);
  });
});

describe('corpus pages', () => {
  const corpus = (...p: string[]) => readFileSync(corpusPath(...p), 'utf8');

  it('wordpress.com: WordPress (and what it implies)', () => {
    const dir = readdirSync(corpusPath('records')).find((d) => d.startsWith('computers--wordpress-com--'))!;
    const html = corpus('records', dir, 'page.html');
    // Evidence in the page: <meta name="generator" content="WordPress.com"> (WordPress's generator pattern is
    // ^WordPress(?: ([\d.]+))?, so no version) and
    // <link href="https://s2.wp.com/wp-content/themes/h4/ie6.css" rel="stylesheet" …> (html <link[^>]+s\d+\.wp\.com).
    assert.ok(html.includes('<meta name="generator" content="WordPress.com">'));
    assert.ok(html.includes('<link href="https://s2.wp.com/wp-content/themes/h4/ie6.css" rel="stylesheet"'));
    const r = detect(toolPage(html, 'https://wordpress.com/'));
    const wp = get(r, 'WordPress');
    assert.equal(wp.version, null);
    assert.equal(wp.confidence, 100);
    for (const name of impliesOf('WordPress')) get(r, name);
  });

  it('books.toscrape.com: jQuery 1.9.1 from Google Hosted Libraries, Bootstrap', () => {
    const html = corpus('listings', 'books-toscrape-home.html');
    // Evidence: <script src="http://ajax.googleapis.com/ajax/libs/jquery/1.9.1/jquery.min.js"> and
    // <script type="text/javascript" src="static/oscar/js/bootstrap3/bootstrap.min.js">.
    assert.ok(html.includes('src="http://ajax.googleapis.com/ajax/libs/jquery/1.9.1/jquery.min.js"'));
    assert.ok(html.includes('src="static/oscar/js/bootstrap3/bootstrap.min.js"'));
    const r = detect(toolPage(html, 'http://books.toscrape.com/'));
    assert.equal(get(r, 'jQuery').version, '1.9.1');
    get(r, 'Google Hosted Libraries');
    assert.ok(get(r, 'Bootstrap').categories.includes('UI frameworks'));
    assert.equal(find(r, 'WordPress'), undefined);
  });

  it('sitepoint.com: WordPress 4.4.2, Yoast SEO 3.0.7, W3 Total Cache', () => {
    const html = corpus('records', 'kids-and-teens--sitepoint-com--disney-keyword', 'page.html');
    // Evidence: <meta name="generator" content="WordPress 4.4.2">, the comment
    // "<!-- This site is optimized with the Yoast SEO plugin v3.0.7 -" and W3 Total Cache's closing comment.
    assert.ok(html.includes('<meta name="generator" content="WordPress 4.4.2">'));
    assert.ok(html.includes('<!-- This site is optimized with the Yoast SEO plugin v3.0.7 -'));
    assert.ok(html.includes('W3 Total Cache'));
    const r = detect(toolPage(html, 'https://www.sitepoint.com/'));
    assert.equal(get(r, 'WordPress').version, '4.4.2');
    assert.equal(get(r, 'Yoast SEO').version, '3.0.7');
    get(r, 'W3 Total Cache');
  });

  it('nbcsports.com: Drupal 7 and PHP', () => {
    const html = corpus('records', 'sports--nbcsports-com--baseball-sports-keyword', 'page.html');
    // Evidence: <meta name="generator" content="Drupal 7 (http://drupal.org)"> (^Drupal(?:\s([\d.]+))?); Drupal implies PHP.
    assert.ok(html.includes('<meta name="generator" content="Drupal 7 (http://drupal.org)"'));
    const r = detect(toolPage(html, 'https://www.nbcsports.com/'));
    assert.equal(get(r, 'Drupal').version, '7');
    assert.ok(impliesOf('Drupal').includes('PHP'));
    get(r, 'PHP');
    assert.equal(find(r, 'WordPress'), undefined);
  });

  it('the largest corpus pages complete well within the time budget', () => {
    for (const [dir, file] of [['links', 'archwiki-list-of-applications.html'], ['records', 'business--alibaba-com--home-business-keyword/page.html']] as const) {
      const html = corpus(dir, file);
      const t0 = performance.now();
      const r = detect(toolPage(html));
      const ms = performance.now() - t0;
      assert.equal(r.partial, false, `${file}: ${ms.toFixed(0)} ms`);
    }
  });
});
