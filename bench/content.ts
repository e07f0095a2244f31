// `npm run bench -- content`: the content extractor (extractContent of lambdas/tools/content.ts) on two corpora of
// labelled article pages, plain Readability (@mozilla/readability 0.6.0, `new Readability(doc).parse()` with its
// defaults) beside it, both over linkedom 0.18.14 (ours over the project's parse, content-dom.ts; Readability over
// linkedom's own parse of the page).
//
// Corpus `readability`: the 130 pages of <corpus>/articles/readability/, the page URL
// http://fakehost/test/page.html (the one the expected output was made with).
// Text: token precision, recall and F1 of each extractor's text against expected.html, mean and median over the
// pages. Tokens are the lower-cased runs of Unicode letters, marks and digits; a page's score is the bag-of-words
// overlap (multiset intersection) of the two token lists (tokenF1, lambdas/tools/content-score.ts). expected.html is
// read by the report's text layout (htmlText: a block or `<br>` ends a line); Readability's text is scored twice:
// its `textContent` as it ships it, and its content HTML through the same layout (so that only the choice of
// content differs from ours, not where words are split).
// Metadata: title, byline, excerpt, siteName, publishedTime, lang against expected-metadata.json, whitespace folded,
// '' and missing as null, times as ISO 8601 (normaliseTime): `agree`, `filled` (expected none, the extractor one),
// `conflict` (expected one, the extractor another or none). Then the pages where ours scores lowest.
// The expected output is Readability's own (its test harness, a newer Readability than 0.6.0 over its JSDOMParser):
// plain Readability is near the ceiling here by construction; this corpus shows where ours departs from it and why.
//
// Corpus `scrapinghub`: the 91 pages of <corpus>/articles/scrapinghub/ (part of
// scrapinghub/article-extraction-benchmark: html/<key>.html.gz, ground-truth.json {key: {articleBody, url}}, the
// bodies labelled by people), each at its own URL. Scored with that benchmark's evaluate.py exactly
// (shingleCounts / shingleMetrics of content-score.ts): case-kept `\w+` tokens, shingles of 4, per page tp/fp/fn
// scaled to sum 1; the corpus F1 is the harmonic mean of the mean precision and the mean recall. Also the mean of the
// pages' own F1. The pages are split by site (bench/content-split.json, made before any tuning): a line per page for
// the development pages only, and only totals for the test pages; totals for develop, test and all.
//
// Time: ms per page of each extractor (parse included), the median of --rounds interleaved runs per page after one
// warm-up round. Writes .bench/content-<time>.json with the figures (per page: the readability corpus and the
// development pages; the test pages as totals only).
// jsdom is not installed in this project, so the jsdom vs linkedom comparison is not run.
//
// Options: --corpus all|readability|scrapinghub (all)  --only a,b (pages whose folder name, key or domain contains
// one of these)  --rounds N (timed runs per page, 3)  --show KEY (a development page of scrapinghub: our text's
// lines the truth lacks and the truth's lines ours lacks; refuses a test page)
// Exit code: 0 when the bench ran, 1 when it could not (no corpus, no pages, a test page asked for).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { parseHTML } from 'linkedom';
import { getDomain } from 'tldts';
import { Readability } from '@mozilla/readability';
import { extractContent, htmlText, normaliseTime, type ContentReport } from '../lambdas/tools/content.ts';
import { benchmarkTokens, SHINGLE_SIZE, shingleCounts, shingleMetrics, shinglePrecision, shingleRecall, shingleScore, tokenF1, type ShingleCounts, type TokenScore } from '../lambdas/tools/content-score.ts';
import { toolPage } from '../test/helpers/tool-page.ts';
import { BENCH_DIR, corpusDir, OUT_DIR } from './paths.ts';
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
  const { values } = parseArgs({
    args: argv,
    options: { only: { type: 'string', default: '' }, rounds: { type: 'string', default: '3' }, corpus: { type: 'string', default: 'all' }, show: { type: 'string', default: '' } },
  });
  const only = values.only.split(',').map((s) => s.trim()).filter(Boolean);
  const rounds = Math.max(1, Number.parseInt(values.rounds, 10) || 3);
  if (values.show) return showPage(values.show);
  if (!['all', 'readability', 'scrapinghub'].includes(values.corpus)) {
    console.error(`--corpus: all, readability or scrapinghub, not ${values.corpus}`);
    return 1;
  }
  const out: Record<string, unknown> = { commit: gitHead(), rounds, cpus: cpus().length };
  if (values.corpus !== 'scrapinghub') {
    const r = readabilityCorpus(only, rounds);
    if (!r) return 1;
    out.readability = r;
  }
  if (values.corpus !== 'readability') {
    const r = scrapinghubCorpus(only, rounds);
    if (!r) return 1;
    out.scrapinghub = r;
  }
  mkdirSync(OUT_DIR, { recursive: true });
  const file = join(OUT_DIR, `content-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
  return 0;
}

/** Timed runs of `fns` on every page: one warm-up round, then `rounds` rounds, the extractors taking turns first. */
function timeRounds<P>(pages: P[], rounds: number, fns: Array<(p: P) => unknown>): number[][][] {
  for (const p of pages) for (const fn of fns) fn(p);
  const ms = fns.map(() => pages.map(() => [] as number[]));
  for (let r = 0; r < rounds; r++) {
    pages.forEach((p, i) => {
      for (let k = 0; k < fns.length; k++) {
        const f = (k + r) % fns.length;
        ms[f]![i]!.push(timed(() => fns[f]!(p))[1]);
      }
    });
  }
  return ms;
}

/** The readability corpus (see the module comment); the figures to record, or null when no page matched. */
function readabilityCorpus(only: string[], rounds: number): unknown {
  const pages = loadPages(only);
  if (pages.length === 0) {
    console.error('no pages matched');
    return null;
  }
  console.log(`content bench, corpus readability: ${pages.length} pages, ${rounds} timed rounds each after a warm-up; ${cpus().length} CPUs, load ${loadavg()[0]!.toFixed(2)}`);

  // Warm-up (JIT, lazy module state), then timed rounds, the two extractors alternating page by page.
  const [oursMs, readMs] = timeRounds(pages, rounds, [runOurs, runReadability]) as [number[][], number[][]];

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

  return { pages: results };
}

// ---------------------------------------------------------------------------------------------------------------
// Corpus scrapinghub

interface ShPage {
  key: string;
  url: string;
  domain: string;
  side: 'develop' | 'test';
  html: string;
  truth: string;
}

interface ShResult {
  page: ShPage;
  ours: ShingleCounts;
  readability: ShingleCounts;
  oursMs: number;
  readMs: number;
}

function scrapinghubRoot(): string {
  return join(corpusDir(), 'articles', 'scrapinghub');
}

/** The test sites of bench/content-split.json. */
function testDomains(): Set<string> {
  const split = JSON.parse(readFileSync(join(BENCH_DIR, 'content-split.json'), 'utf8')) as { test: string[] };
  return new Set(split.test);
}

/** A page's site: the registrable domain of its URL (the host when it has none). */
function siteOf(url: string): string {
  const host = new URL(url).hostname;
  return getDomain(host) ?? host;
}

function loadShPages(only: string[]): ShPage[] {
  const root = scrapinghubRoot();
  const file = join(root, 'ground-truth.json');
  if (!existsSync(file)) return [];
  const truth = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { articleBody?: string; url: string }>;
  const test = testDomains();
  return Object.keys(truth)
    .sort()
    .map((key) => {
      const { url, articleBody } = truth[key]!;
      const domain = siteOf(url);
      return { key, url, domain, side: test.has(domain) ? ('test' as const) : ('develop' as const), truth: articleBody ?? '', html: '' };
    })
    .filter((p) => only.length === 0 || only.some((o) => p.key.includes(o) || p.domain.includes(o)))
    .map((p) => ({ ...p, html: gunzipSync(readFileSync(join(root, 'html', `${p.key}.html.gz`))).toString('utf8') }));
}

function runOursSh(page: ShPage): ContentReport {
  return extractContent(toolPage(page.html, page.url));
}

function runReadabilitySh(page: ShPage): ReturnType<Readability['parse']> {
  const { document } = parseHTML(page.html) as unknown as { document: Document };
  return new Readability(document).parse();
}

/** The scrapinghub corpus (see the module comment); the figures to record, or null when no page matched. */
function scrapinghubCorpus(only: string[], rounds: number): unknown {
  const pages = loadShPages(only);
  if (pages.length === 0) {
    console.error('scrapinghub: no pages matched');
    return null;
  }
  const dev = pages.filter((p) => p.side === 'develop').length;
  console.log(`\ncontent bench, corpus scrapinghub: ${pages.length} pages (${dev} develop, ${pages.length - dev} test), ${rounds} timed rounds each after a warm-up; ${cpus().length} CPUs, load ${loadavg()[0]!.toFixed(2)}`);
  const [oursMs, readMs] = timeRounds(pages, rounds, [runOursSh, runReadabilitySh]) as [number[][], number[][]];
  const results: ShResult[] = pages.map((p, i) => ({
    page: p,
    ours: shingleCounts(runOursSh(p).text, p.truth),
    readability: shingleCounts(runReadabilitySh(p)?.textContent ?? '', p.truth),
    oursMs: median(oursMs[i]!),
    readMs: median(readMs[i]!),
  }));

  const fmt = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(4));
  const pageF1 = (c: ShingleCounts) => {
    const p = shinglePrecision(c);
    const r = shingleRecall(c);
    return p + r > 0 ? (2 * p * r) / (p + r) : 0;
  };
  const develop = results.filter((r) => r.page.side === 'develop');
  console.log(`\ndevelopment pages (${develop.length}), evaluate.py's precision, recall and F1 per page, worst first`);
  console.log(
    table([
      ['page', 'site', 'F1', 'P', 'R', 'Readability F1', 'ours ms'],
      ...[...develop]
        .sort((a, b) => pageF1(a.ours) - pageF1(b.ours))
        .map((r) => [r.page.key.slice(0, 12), r.page.domain, fmt(pageF1(r.ours)), fmt(shinglePrecision(r.ours)), fmt(shingleRecall(r.ours)), fmt(pageF1(r.readability)), r.oursMs.toFixed(1)]),
    ]),
  );

  const totals = (rs: ShResult[], side: 'ours' | 'readability') => {
    const m = shingleMetrics(rs.map((r) => r[side]));
    const f1s = rs.map((r) => pageF1(r[side]));
    return { pages: rs.length, f1: m.f1, precision: m.precision, recall: m.recall, meanPageF1: mean(f1s), medianPageF1: median(f1s) };
  };
  const sides = { develop, test: results.filter((r) => r.page.side === 'test'), all: results };
  const summary: Record<string, Record<'ours' | 'readability', ReturnType<typeof totals>>> = {};
  for (const [name, rs] of Object.entries(sides)) if (rs.length) summary[name] = { ours: totals(rs, 'ours'), readability: totals(rs, 'readability') };
  console.log(`\ntotals (evaluate.py: F1 = harmonic mean of mean precision and mean recall; also the mean and median of the pages' F1)`);
  console.log(
    table([
      ['pages', 'extractor', 'n', 'F1', 'mean P', 'mean R', 'mean page F1', 'median page F1'],
      ...Object.entries(summary).flatMap(([name, s]) =>
        (['ours', 'readability'] as const).map((side) => [name, side === 'ours' ? 'ours' : 'Readability, textContent', String(s[side].pages), fmt(s[side].f1), fmt(s[side].precision), fmt(s[side].recall), fmt(s[side].meanPageF1), fmt(s[side].medianPageF1)]),
      ),
    ]),
  );
  const ms = (xs: number[]) => [mean(xs).toFixed(1), median(xs).toFixed(1), Math.max(...xs).toFixed(1), xs.reduce((a, b) => a + b, 0).toFixed(0)];
  console.log(`\ntime per page (median of ${rounds} runs, parse included; all ${results.length} pages)`);
  console.log(
    table([
      ['extractor', 'mean ms', 'median ms', 'max ms', 'total ms'],
      ['ours', ...ms(results.map((r) => r.oursMs))],
      ['Readability', ...ms(results.map((r) => r.readMs))],
    ]),
  );
  return {
    totals: summary,
    time: { oursMedianMs: median(results.map((r) => r.oursMs)), readabilityMedianMs: median(results.map((r) => r.readMs)) },
    developPages: develop.map((r) => ({ key: r.page.key, domain: r.page.domain, ours: r.ours, readability: r.readability, oursMs: r.oursMs, readabilityMs: r.readMs })),
  };
}

/** Shingles of `text` as a multiset (evaluate.py's). */
function shingleBag(text: string): Map<string, number> {
  const t = benchmarkTokens(text);
  const bag = new Map<string, number>();
  for (let i = 0; i < Math.max(1, t.length - SHINGLE_SIZE + 1); i++) {
    const k = t.slice(i, i + SHINGLE_SIZE).join(' ');
    if (k) bag.set(k, (bag.get(k) ?? 0) + 1);
  }
  return bag;
}

/** The lines of `text` of which under half the shingles are in `other`, with that share. */
function unmatchedLines(text: string, other: string): string[] {
  const bag = shingleBag(other);
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const own = shingleBag(line);
    let n = 0;
    let hit = 0;
    for (const [k, c] of own) {
      n += c;
      hit += Math.min(c, bag.get(k) ?? 0);
    }
    if (n > 0 && hit / n < 0.5) out.push(`  [${(hit / n).toFixed(2)}] ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
  }
  return out;
}

/** --show: one development page (key prefix), our text against its label; a test page is refused. */
function showPage(prefix: string): number {
  const pages = loadShPages([]).filter((p) => p.key.startsWith(prefix) || p.domain === prefix);
  if (pages.length === 0) {
    console.error(`no scrapinghub page ${prefix}`);
    return 1;
  }
  if (pages.some((p) => p.side === 'test')) {
    console.error(`${prefix}: a test page (bench/content-split.json); not shown`);
    return 1;
  }
  for (const p of pages) {
    const ours = runOursSh(p);
    const s = shingleScore(ours.text, p.truth);
    console.log(`${p.key} ${p.url}\nF1 ${s.f1.toFixed(4)}  P ${s.precision.toFixed(4)}  R ${s.recall.toFixed(4)}  title: ${ours.title}`);
    console.log(`ours, not in the label:\n${unmatchedLines(ours.text, p.truth).join('\n')}`);
    console.log(`label, not in ours:\n${unmatchedLines(p.truth, ours.text).join('\n')}\n`);
  }
  return 0;
}
