// `npm run bench -- content`: the content extractor (extractContent of lambdas/tools/content.ts) vs plain Readability
// (@mozilla/readability 0.6.0, `new Readability(doc).parse()` with its defaults) on the 130 pages of
// ../shared/corpus/articles/readability/, both over the same linkedom 0.18.14 parse of source.html, the page's URL
// http://fakehost/test/page.html (the one the expected output was made with).
//
// Text: token precision, recall and F1 of each extractor's text against expected.html, mean and median over the
// pages. Tokens are the lower-cased runs of Unicode letters, marks and digits; a page's score is the bag-of-words
// overlap (multiset intersection) of the two token lists, as in scrapinghub/article-extraction-benchmark
// (lambdas/tools/content-score.ts). expected.html is read by the report's text layout (htmlText: a block or `<br>`
// ends a line); Readability's text is scored twice: its `textContent` as it ships it, and its content HTML through
// the same layout (so that only the choice of content differs from ours, not where words are split).
// Metadata: title, byline, excerpt, siteName, publishedTime, lang against expected-metadata.json, whitespace folded,
// '' and missing as null, times as ISO 8601 (normaliseTime): `agree`, `filled` (expected none, the extractor one),
// `conflict` (expected one, the extractor another or none). Time: ms per page of each (parse included), the median
// of --rounds interleaved runs per page after one warm-up round, summed over the pages. Then the pages where ours
// scores lowest. Writes .bench/content-<time>.json with every page's figures.
//
// The expected output is Readability's own (its test harness, a newer Readability than 0.6.0 over its JSDOMParser):
// plain Readability is near the ceiling here by construction; this bench shows where ours departs from it and why.
// jsdom is not installed in this project, so the jsdom vs linkedom comparison is not run.
//
// Options: --only a,b (pages whose folder name contains one of these)  --rounds N (timed runs per page, 3)
// Exit code: 0 when the bench ran, 1 when it could not (no corpus, no pages).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseHTML } from 'linkedom';
import { Readability } from '@mozilla/readability';
import { extractContent, htmlText, normaliseTime, type ContentReport } from '../lambdas/tools/content.ts';
import { tokenF1, type TokenScore } from '../lambdas/tools/content-score.ts';
import { toolPage } from '../test/helpers/tool-page.ts';
import { corpusDir, OUT_DIR } from './paths.ts';
import { gitHead, table } from './report.ts';

/** The URL Readability's test harness made the expected output with. */
const CORPUS_URL = 'http://fakehost/test/page.html';
const FIELDS = ['title', 'byline', 'excerpt', 'siteName', 'publishedTime', 'lang'] as const;
type Field = (typeof FIELDS)[number];
type Verdict = 'agree' | 'filled' | 'conflict';
/** Pages listed as the worst for ours. */
const WORST = 12;

interface Page {
  name: string;
  source: string;
  expectedText: string;
  expected: Partial<Record<Field, string | null>> & { readerable: boolean };
}

interface Metadata {
  title: string | null;
  byline: string | null;
  excerpt: string | null;
  siteName: string | null;
  publishedTime: string | null;
  lang: string | null;
}

interface Side {
  text: TokenScore;
  meta: Record<Field, Verdict>;
  ms: number;
}

interface PageResult {
  name: string;
  ours: Side & { readerable: boolean; readerableExpected: boolean };
  readability: Side & { layout: TokenScore; nullResult: boolean };
}

function loadPages(only: string[]): Page[] {
  const root = join(corpusDir(), 'articles', 'readability');
  return readdirSync(root)
    .sort()
    .filter((name) => existsSync(join(root, name, 'source.html')))
    .filter((name) => only.length === 0 || only.some((o) => name.includes(o)))
    .map((name) => ({
      name,
      source: readFileSync(join(root, name, 'source.html'), 'utf8'),
      expectedText: htmlText(readFileSync(join(root, name, 'expected.html'), 'utf8')),
      expected: JSON.parse(readFileSync(join(root, name, 'expected-metadata.json'), 'utf8')),
    }));
}

function norm(v: string | null | undefined): string | null {
  if (typeof v !== 'string') return null;
  return v.replace(/[ \t\n\f\r\u00a0]+/g, ' ').trim() || null;
}

function verdicts(got: Metadata, page: Page): Record<Field, Verdict> {
  const out = {} as Record<Field, Verdict>;
  for (const f of FIELDS) {
    const want = f === 'publishedTime' ? normaliseTime(norm(page.expected[f])) : norm(page.expected[f]);
    const have = f === 'publishedTime' ? normaliseTime(norm(got[f])) : norm(got[f]);
    out[f] = have === want ? 'agree' : want === null ? 'filled' : 'conflict';
  }
  return out;
}

function runOurs(page: Page): ContentReport {
  return extractContent(toolPage(page.source, CORPUS_URL));
}

function runReadability(page: Page): ReturnType<Readability['parse']> {
  const { document } = parseHTML(page.source) as unknown as { document: Document };
  return new Readability(document).parse();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
}

function timed<T>(fn: () => T): [T, number] {
  const t = performance.now();
  const v = fn();
  return [v, performance.now() - t];
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { only: { type: 'string', default: '' }, rounds: { type: 'string', default: '3' } } });
  const only = values.only.split(',').map((s) => s.trim()).filter(Boolean);
  const rounds = Math.max(1, Number.parseInt(values.rounds, 10) || 3);
  const pages = loadPages(only);
  if (pages.length === 0) {
    console.error('no pages matched');
    return 1;
  }
  console.log(`content bench: ${pages.length} pages, ${rounds} timed rounds each after a warm-up; ${cpus().length} CPUs, load ${loadavg()[0]!.toFixed(2)}`);

  // Warm-up (JIT, lazy module state), then timed rounds, the two extractors alternating page by page.
  for (const p of pages) {
    runOurs(p);
    runReadability(p);
  }
  const oursMs = pages.map(() => [] as number[]);
  const readMs = pages.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    pages.forEach((p, i) => {
      const first = r % 2 === 0;
      if (first) oursMs[i]!.push(timed(() => runOurs(p))[1]);
      readMs[i]!.push(timed(() => runReadability(p))[1]);
      if (!first) oursMs[i]!.push(timed(() => runOurs(p))[1]);
    });
  }

  const results: PageResult[] = pages.map((p, i) => {
    const ours = runOurs(p);
    const plain = runReadability(p);
    const plainHtml = typeof plain?.content === 'string' ? plain.content : '';
    return {
      name: p.name,
      ours: {
        text: tokenF1(ours.text, p.expectedText),
        meta: verdicts({ title: ours.title, byline: ours.byline, excerpt: ours.excerpt, siteName: ours.site_name, publishedTime: ours.published_time, lang: ours.lang }, p),
        ms: median(oursMs[i]!),
        readerable: ours.readerable,
        readerableExpected: p.expected.readerable,
      },
      readability: {
        text: tokenF1(plain?.textContent ?? '', p.expectedText),
        layout: tokenF1(plainHtml ? htmlText(plainHtml) : '', p.expectedText),
        meta: verdicts({ title: plain?.title ?? null, byline: plain?.byline ?? null, excerpt: plain?.excerpt ?? null, siteName: plain?.siteName ?? null, publishedTime: plain?.publishedTime ?? null, lang: plain?.lang ?? null }, p),
        ms: median(readMs[i]!),
        nullResult: plain === null,
      },
    };
  });

  const fmt = (x: number) => x.toFixed(4);
  const textRow = (label: string, scores: TokenScore[]) => [
    label,
    fmt(mean(scores.map((s) => s.f1))),
    fmt(median(scores.map((s) => s.f1))),
    fmt(mean(scores.map((s) => s.precision))),
    fmt(mean(scores.map((s) => s.recall))),
    String(scores.filter((s) => s.f1 >= 0.99).length),
  ];
  console.log(`\ntext vs expected.html (token F1, ${results.length} pages)`);
  console.log(
    table([
      ['extractor', 'mean F1', 'median F1', 'mean P', 'mean R', 'F1>=0.99'],
      textRow('ours (extractContent)', results.map((r) => r.ours.text)),
      textRow('Readability, textContent', results.map((r) => r.readability.text)),
      textRow('Readability, our layout', results.map((r) => r.readability.layout)),
    ]),
  );
  const dF1 = mean(results.map((r) => r.ours.text.f1)) - mean(results.map((r) => r.readability.text.f1));
  const dF1Layout = mean(results.map((r) => r.ours.text.f1)) - mean(results.map((r) => r.readability.layout.f1));
  console.log(`mean F1 difference, ours - Readability: ${dF1 >= 0 ? '+' : ''}${dF1.toFixed(4)} (textContent), ${dF1Layout >= 0 ? '+' : ''}${dF1Layout.toFixed(4)} (same layout)`);

  console.log(`\nmetadata vs expected-metadata.json: agree / filled (expected none) / conflict`);
  const count = (side: 'ours' | 'readability', f: Field, v: Verdict) => results.filter((r) => r[side].meta[f] === v).length;
  console.log(
    table([
      ['field', 'ours', 'Readability'],
      ...FIELDS.map((f) => [f, `${count('ours', f, 'agree')} / ${count('ours', f, 'filled')} / ${count('ours', f, 'conflict')}`, `${count('readability', f, 'agree')} / ${count('readability', f, 'filled')} / ${count('readability', f, 'conflict')}`]),
    ]),
  );
  console.log(`readerable equal to expected: ${results.filter((r) => r.ours.readerable === r.ours.readerableExpected).length}/${results.length}; Readability null results: ${results.filter((r) => r.readability.nullResult).length}`);

  const oursTotal = results.reduce((s, r) => s + r.ours.ms, 0);
  const readTotal = results.reduce((s, r) => s + r.readability.ms, 0);
  console.log(`\ntime per page (median of ${rounds} runs, parse included)`);
  console.log(
    table([
      ['extractor', 'mean ms', 'median ms', 'max ms', 'total ms'],
      ['ours', (oursTotal / results.length).toFixed(1), median(results.map((r) => r.ours.ms)).toFixed(1), Math.max(...results.map((r) => r.ours.ms)).toFixed(1), oursTotal.toFixed(0)],
      ['Readability', (readTotal / results.length).toFixed(1), median(results.map((r) => r.readability.ms)).toFixed(1), Math.max(...results.map((r) => r.readability.ms)).toFixed(1), readTotal.toFixed(0)],
    ]),
  );
  console.log(`ours / Readability: ${(oursTotal / readTotal).toFixed(2)}x the time (median of per-page ratios ${median(results.map((r) => r.ours.ms / r.readability.ms)).toFixed(2)}x)`);

  const worst = [...results].sort((a, b) => a.ours.text.f1 - b.ours.text.f1).slice(0, WORST);
  console.log(`\nworst ${worst.length} pages for ours`);
  console.log(
    table([
      ['page', 'F1', 'P', 'R', 'Readability F1', 'same layout'],
      ...worst.map((r) => [r.name, fmt(r.ours.text.f1), fmt(r.ours.text.precision), fmt(r.ours.text.recall), fmt(r.readability.text.f1), fmt(r.readability.layout.f1)]),
    ]),
  );

  mkdirSync(OUT_DIR, { recursive: true });
  const file = join(OUT_DIR, `content-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ commit: gitHead(), rounds, cpus: cpus().length, pages: results }, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
  return 0;
}
