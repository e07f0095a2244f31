// `npm run bench -- parse`: HTML parsing speed on the corpus's real pages, grouped by shape: htmlparser2's
// parseDocument() (what the engine used before: fast, not a browser's tree), parse5 with the htmlparser2 tree
// adapter (a browser's tree) and our parseHtml() (a browser's tree: the fast path, parse5 where it gives up).
// Per group: ms per page of each (median over interleaved rounds), ours/htmlparser2 and parse5/ours (medians
// of the ratios within each round: the samples of one round run back to back, so they share the machine's
// state), and the share of pages the fast path answered. Every page's parseHtml() tree is first checked equal
// to parse5's.
//
// How it is timed: each parser runs in its own worker thread (its own heap and JIT, as in a process that uses
// only that parser), one sample at a time while the others wait, the three in rotating order every round. A
// sample parses the group's pages `reps` times and is timed in CPU time (process.cpuUsage(): the parsing and
// the garbage collection it causes, on any thread), which stays put when other processes share the cores,
// where wall time does not. (process.threadCpuUsage() would leave out concurrent GC threads, and on some
// virtual machines it only advances in 4 ms ticks.)
//
// Options: --rounds N (21)  --min-ms N (100: a sample repeats the group until it lasts about this long)
//          --only listing,detail,records,articles,structured,links (groups to run)
// Exit code: 0, or 1 when a tree differs from parse5's.
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { parseDocument } from 'htmlparser2';
import { lastBailReason, parseHtml, parseHtmlFast, parseHtmlWithParse5 } from '../lambdas/engine/html/parse.ts';
import { treeDifference } from '../lambdas/engine/html/compare.ts';
import { corpusDir, OUT_DIR } from './paths.ts';
import { gitHead, table } from './report.ts';

interface Group {
  name: string;
  files: string[];
}

function groups(): Group[] {
  const c = corpusDir();
  const sub = (dir: string, file: string): string[] =>
    readdirSync(join(c, dir))
      .sort()
      .map((d) => join(c, dir, d, file))
      .filter((f) => existsSync(f));
  const html = (dir: string): string[] =>
    readdirSync(join(c, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.html'))
      .sort()
      .map((f) => join(c, dir, f));
  return [
    { name: 'listing', files: ['books-toscrape-home.html', 'books-toscrape-listing.html'].map((f) => join(c, 'listings', f)) },
    { name: 'detail', files: [join(c, 'listings', 'books-toscrape-book.html')] },
    { name: 'records', files: sub('records', 'page.html') },
    { name: 'articles', files: sub(join('articles', 'readability'), 'source.html') },
    { name: 'structured', files: html(join('structured-data', 'extruct')) },
    { name: 'links', files: ['archwiki-list-of-applications.html', 'wikipedia-elvis-presley.html'].map((f) => join(c, 'links', f)) },
  ];
}

const PARSERS = {
  htmlparser2: (html: string) => parseDocument(html),
  parse5: (html: string) => parseHtmlWithParse5(html),
  ours: (html: string) => parseHtml(html),
} as const;
type ParserName = keyof typeof PARSERS;
const NAMES = Object.keys(PARSERS) as ParserName[];

/** Messages to a timing worker: load a group's pages, or time `reps` passes over them. */
type Request = { files: string[] } | { reps: number };

/** A timing worker: one parser, its own isolate. Replies to each request with CPU ms per page. */
function workerMain(): void {
  const parse = PARSERS[workerData as ParserName];
  let pages: string[] = [];
  parentPort!.on('message', (req: Request) => {
    if ('files' in req) {
      pages = req.files.map((f) => readFileSync(f, 'utf8'));
      parentPort!.postMessage(0);
      return;
    }
    const t0 = process.cpuUsage();
    for (let r = 0; r < req.reps; r++) for (const html of pages) parse(html);
    const t = process.cpuUsage(t0);
    parentPort!.postMessage((t.user + t.system) / 1000 / (req.reps * pages.length));
  });
}

/** The main thread's handle on a timing worker: one request at a time. */
class Timer {
  private readonly worker: Worker;
  private pending: { resolve(ms: number): void; reject(err: unknown): void } | null = null;
  readonly name: ParserName;
  constructor(name: ParserName) {
    this.name = name;
    this.worker = new Worker(new URL(import.meta.url), { workerData: name });
    this.worker.on('message', (ms: number) => this.settle((p) => p.resolve(ms)));
    this.worker.on('error', (err) => this.settle((p) => p.reject(err)));
    this.worker.on('exit', (code) => this.settle((p) => p.reject(new Error(`${name} worker exited (${code})`))));
  }
  private settle(f: (p: NonNullable<Timer['pending']>) => void): void {
    const p = this.pending;
    this.pending = null;
    if (p) f(p);
  }
  ask(req: Request): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage(req);
    });
  }
  stop(): Promise<number> {
    return this.worker.terminate();
  }
}

function medianOf(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

interface GroupResult {
  name: string;
  pages: number;
  bytes: number;
  fastPath: number;
  bailReasons: Record<string, number>;
  msPerPage: Record<ParserName, number>;
  /** Medians of the per-round ratios. */
  oursToHtmlparser2: number;
  parse5ToOurs: number;
  /** Every sample, ms per page, in round order. */
  samples: Record<ParserName, number[]>;
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { rounds: { type: 'string', default: '21' }, 'min-ms': { type: 'string', default: '100' }, only: { type: 'string' } },
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
    `parse bench: CPU time, one worker thread per parser, ${rounds} interleaved rounds per group, samples of ` +
      `~${minMs} ms; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}; node ${process.version}\n`,
  );
  const timers = NAMES.map((n) => new Timer(n));
  const results: GroupResult[] = [];
  let wrong = 0;
  try {
    for (const g of chosen) {
      let fastPath = 0;
      let bytes = 0;
      const bailReasons: Record<string, number> = {};
      for (const file of g.files) {
        const html = readFileSync(file, 'utf8');
        bytes += html.length;
        if (parseHtmlFast(html)) fastPath++;
        else bailReasons[lastBailReason()] = (bailReasons[lastBailReason()] ?? 0) + 1;
        const d = treeDifference(parseHtml(html), parseHtmlWithParse5(html));
        if (d) {
          wrong++;
          console.error(`${file}: parseHtml() differs from parse5: ${d}`);
        }
      }
      for (const t of timers) await t.ask({ files: g.files });
      // Warm-up, then as many passes per sample as make the slowest parser's sample last about minMs.
      for (let w = 0; w < 2; w++) for (const t of timers) await t.ask({ reps: 1 });
      let slowest = 0;
      for (const t of timers) slowest = Math.max(slowest, (await t.ask({ reps: 1 })) * g.files.length);
      const reps = Math.max(1, Math.round(minMs / Math.max(slowest, 0.001)));
      const samples: Record<ParserName, number[]> = { htmlparser2: [], parse5: [], ours: [] };
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < timers.length; k++) {
          const t = timers[(r + k) % timers.length]!;
          samples[t.name].push(await t.ask({ reps }));
        }
      }
      const ms = Object.fromEntries(NAMES.map((n) => [n, medianOf(samples[n])])) as Record<ParserName, number>;
      const oursToHtmlparser2 = medianOf(samples.ours.map((o, r) => o / samples.htmlparser2[r]!));
      const parse5ToOurs = medianOf(samples.parse5.map((p, r) => p / samples.ours[r]!));
      results.push({ name: g.name, pages: g.files.length, bytes, fastPath, bailReasons, msPerPage: ms, oursToHtmlparser2, parse5ToOurs, samples });
      console.log(
        `${g.name}: ${g.files.length} pages, ${(bytes / g.files.length / 1000).toFixed(0)} KB each on average, fast path ` +
          `${fastPath}/${g.files.length}; ms per page: htmlparser2 ${ms.htmlparser2.toFixed(3)}, parse5 ${ms.parse5.toFixed(3)}, ours ${ms.ours.toFixed(3)}`,
      );
    }
  } finally {
    await Promise.all(timers.map((t) => t.stop()));
  }

  const totalPages = results.reduce((s, r) => s + r.pages, 0);
  const totalMs = (n: ParserName): number => results.reduce((s, r) => s + r.msPerPage[n] * r.pages, 0);
  const rows = [['group (CPU ms per page)', 'pages', 'fast path', 'htmlparser2', 'parse5', 'ours', 'ours/htmlparser2', 'parse5/ours']];
  const row = (name: string, pages: number, fast: number, h: number, p: number, o: number, oh: number, po: number): string[] => [
    name,
    String(pages),
    `${((100 * fast) / pages).toFixed(0)}%`,
    h.toFixed(3),
    p.toFixed(3),
    o.toFixed(3),
    `${oh.toFixed(2)}x`,
    `${po.toFixed(2)}x`,
  ];
  for (const r of results) {
    const ms = r.msPerPage;
    rows.push(row(r.name, r.pages, r.fastPath, ms.htmlparser2, ms.parse5, ms.ours, r.oursToHtmlparser2, r.parse5ToOurs));
  }
  if (results.length > 1) {
    // The whole corpus as one set: every page once (a group's median ms per page times its pages).
    const fast = results.reduce((s, r) => s + r.fastPath, 0);
    const [h, p, o] = [totalMs('htmlparser2'), totalMs('parse5'), totalMs('ours')];
    rows.push(row('all pages (mean)', totalPages, fast, h / totalPages, p / totalPages, o / totalPages, o / h, p / o));
  }
  console.log(`\n${table(rows)}`);
  const reasons = results.flatMap((r) => Object.entries(r.bailReasons).map(([k, v]) => `${r.name}: ${k} (${v})`));
  if (reasons.length) console.log(`\nparse5 fallbacks: ${reasons.join('; ')}`);

  mkdirSync(OUT_DIR, { recursive: true });
  const out = join(OUT_DIR, `parse-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify({ commit: gitHead(), rounds, minMs, load: loadavg(), node: process.version, results }, null, 2));
  console.log(`\nwritten: ${out}`);
  if (wrong) console.error(`\n${wrong} page(s) parsed differently from parse5`);
  return wrong ? 1 : 0;
}

if (!isMainThread) workerMain();
