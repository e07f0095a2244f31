// `npm run bench -- parse`: HTML parsing speed on the corpus's real pages, grouped by shape: htmlparser2's
// parseDocument() (what the engine used before: fast, not a browser's tree), parse5 with the htmlparser2 tree
// adapter (a browser's tree) and our parseHtml() (a browser's tree: the fast path, parse5 where it gives up).
// Per group: CPU ms per page of each (median of interleaved rounds), ours/htmlparser2, parse5/ours, and the
// share of pages the fast path answered. Every page's parseHtml() tree is first checked equal to parse5's.
// Time is the process's CPU time (user + system, process.cpuUsage()), not wall time: parsing is single-threaded
// CPU work, and CPU time stays put when other processes share the cores.
//
// Options: --rounds N (15)  --min-ms N (40: each timed sample repeats the group until it lasts this long)
//          --only listing,detail,records,articles,links,structured (groups to run)
// Exit code: 0, or 1 when a tree differs from parse5's.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { parseDocument } from 'htmlparser2';
import { lastBailReason, parseHtml, parseHtmlFast, parseHtmlWithParse5 } from '../lambdas/engine/html/parse.ts';
import { treeDifference } from '../lambdas/engine/html/compare.ts';
import { corpusDir, OUT_DIR } from './paths.ts';
import { gitHead, table } from './report.ts';

interface Group {
  name: string;
  what: string;
  files: string[];
}

function groups(): Group[] {
  const c = corpusDir();
  const sub = (dir: string, file: string): string[] =>
    readdirSync(join(c, dir))
      .sort()
      .map((d) => join(c, dir, d, file))
      .filter((f) => {
        try {
          readFileSync(f);
          return true;
        } catch {
          return false;
        }
      });
  const structured = (): string[] => {
    const root = join(c, 'structured-data', 'extruct');
    return readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.html'))
      .sort()
      .map((f) => join(root, f));
  };
  return [
    { name: 'listing', what: 'books.toscrape listing pages', files: ['books-toscrape-home.html', 'books-toscrape-listing.html'].map((f) => join(c, 'listings', f)) },
    { name: 'detail', what: 'books.toscrape detail page', files: [join(c, 'listings', 'books-toscrape-book.html')] },
    { name: 'records', what: 'search-result pages of 100 top sites', files: sub('records', 'page.html') },
    { name: 'articles', what: 'Readability test articles', files: sub(join('articles', 'readability'), 'source.html') },
    { name: 'structured', what: 'extruct structured-data pages', files: structured() },
    { name: 'links', what: 'ArchWiki and Wikipedia link pages (1.4 MB, 0.9 MB)', files: ['archwiki-list-of-applications.html', 'wikipedia-elvis-presley.html'].map((f) => join(c, 'links', f)) },
  ];
}

const PARSERS = {
  htmlparser2: (html: string) => parseDocument(html),
  parse5: (html: string) => parseHtmlWithParse5(html),
  ours: (html: string) => parseHtml(html),
} as const;
type ParserName = keyof typeof PARSERS;
const NAMES = Object.keys(PARSERS) as ParserName[];

function medianOf(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

/** CPU ms per page of one parser over the pages, repeating the whole set `reps` times. */
function sample(parse: (html: string) => unknown, pages: string[], reps: number): number {
  const t0 = process.cpuUsage();
  for (let r = 0; r < reps; r++) for (const html of pages) parse(html);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1000 / (reps * pages.length);
}

interface GroupResult {
  name: string;
  pages: number;
  bytes: number;
  fastPath: number;
  bailReasons: Record<string, number>;
  msPerPage: Record<ParserName, number>;
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { rounds: { type: 'string', default: '15' }, 'min-ms': { type: 'string', default: '40' }, only: { type: 'string' } },
  });
  const rounds = Number(values.rounds);
  const minMs = Number(values['min-ms']);
  if (!(rounds >= 1) || !(minMs > 0)) throw new Error('--rounds and --min-ms must be positive numbers');
  const all = groups();
  const only = values.only?.split(',');
  const unknown = only?.filter((o) => !all.some((g) => g.name === o)) ?? [];
  if (unknown.length) throw new Error(`unknown group(s) ${unknown.join(', ')}; groups: ${all.map((g) => g.name).join(', ')}`);
  const chosen = only ? all.filter((g) => only.includes(g.name)) : all;

  console.log(
    `parse bench: CPU time, ${rounds} interleaved rounds per group, samples of at least ${minMs} ms; ${cpus().length} cores, ` +
      `load ${loadavg()[0]!.toFixed(2)}; node ${process.version}\n`,
  );
  const results: GroupResult[] = [];
  let wrong = 0;
  for (const g of chosen) {
    const pages = g.files.map((f) => readFileSync(f, 'utf8'));
    let fastPath = 0;
    const bailReasons: Record<string, number> = {};
    for (let i = 0; i < pages.length; i++) {
      const html = pages[i]!;
      if (parseHtmlFast(html)) fastPath++;
      else bailReasons[lastBailReason()] = (bailReasons[lastBailReason()] ?? 0) + 1;
      const d = treeDifference(parseHtml(html), parseHtmlWithParse5(html));
      if (d) {
        wrong++;
        console.error(`${g.files[i]}: parseHtml() differs from parse5: ${d}`);
      }
    }
    // Warm-up, and the repetitions that make one sample last at least minMs for the slowest parser.
    let reps = 1;
    for (const name of NAMES) sample(PARSERS[name], pages, 1);
    const slowest = Math.max(...NAMES.map((n) => sample(PARSERS[n], pages, 1))) * pages.length;
    reps = Math.max(1, Math.ceil(minMs / Math.max(slowest, 0.001)));
    const samples: Record<ParserName, number[]> = { htmlparser2: [], parse5: [], ours: [] };
    for (let r = 0; r < rounds; r++) {
      // Rotate the order, so that no parser always runs right after another's garbage.
      for (let k = 0; k < NAMES.length; k++) {
        const name = NAMES[(r + k) % NAMES.length]!;
        samples[name].push(sample(PARSERS[name], pages, reps));
      }
    }
    const msPerPage = Object.fromEntries(NAMES.map((n) => [n, medianOf(samples[n])])) as Record<ParserName, number>;
    results.push({ name: g.name, pages: pages.length, bytes: pages.reduce((s, p) => s + p.length, 0), fastPath, bailReasons, msPerPage });
    const ms = msPerPage;
    console.log(
      `${g.name}: ${pages.length} pages, fast path ${fastPath}/${pages.length}; ms/page htmlparser2 ${ms.htmlparser2.toFixed(3)}, ` +
        `parse5 ${ms.parse5.toFixed(3)}, ours ${ms.ours.toFixed(3)}`,
    );
  }

  const totalPages = results.reduce((s, r) => s + r.pages, 0);
  const totalMs = (n: ParserName): number => results.reduce((s, r) => s + r.msPerPage[n] * r.pages, 0);
  const rows = [['group (CPU ms per page)', 'pages', 'fast path', 'htmlparser2', 'parse5', 'ours', 'ours/htmlparser2', 'parse5/ours']];
  const row = (name: string, pages: number, fast: number, h: number, p: number, o: number): string[] => [
    name,
    String(pages),
    `${((100 * fast) / pages).toFixed(0)}%`,
    h.toFixed(3),
    p.toFixed(3),
    o.toFixed(3),
    `${(o / h).toFixed(2)}x`,
    `${(p / o).toFixed(2)}x`,
  ];
  for (const r of results) rows.push(row(r.name, r.pages, r.fastPath, r.msPerPage.htmlparser2, r.msPerPage.parse5, r.msPerPage.ours));
  if (results.length > 1) {
    const fast = results.reduce((s, r) => s + r.fastPath, 0);
    rows.push(row('whole corpus', totalPages, fast, totalMs('htmlparser2') / totalPages, totalMs('parse5') / totalPages, totalMs('ours') / totalPages));
  }
  console.log(`\n${table(rows)}`);
  const reasons = results.flatMap((r) => Object.entries(r.bailReasons).map(([k, v]) => `${r.name}: ${k} (${v})`));
  if (reasons.length) console.log(`\nparse5 fallbacks: ${reasons.join('; ')}`);

  mkdirSync(OUT_DIR, { recursive: true });
  const out = join(OUT_DIR, `parse-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify({ commit: gitHead(), rounds, minMs, load: loadavg(), results }, null, 2));
  console.log(`\nwritten: ${out}`);
  if (wrong) console.error(`\n${wrong} page(s) parsed differently from parse5`);
  return wrong ? 1 : 0;
}
