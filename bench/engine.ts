// `npm run bench -- engine`: our engine, Scrapy, Crawlee's CheerioCrawler and a minimal undici + cheerio loop
// crawl the same local listing site (50 listing pages chained by next links, 1,000 detail pages of 20–40 KB,
// served by Debian's nginx on 127.0.0.1) at the same concurrency, each in its own process. Prints pages/s and
// peak RSS for each, our ratio to each and pass/MISSED against the targets; writes .bench/engine-<time>.json.
//
// Options: --concurrency N (8)  --runs N (1; the median run of each contender is reported)
//          --only minimal,ours,crawlee,scrapy  --regenerate (rebuild the site)  --timeout S (600 per run)
//          --node-flags "..." (V8/Node flags for every Node contender alike, e.g. --max-semi-space-size=16)
// Exit code: 0 when every contender that ran produced the right rows (targets missed or not), 1 on errors.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Fingerprint, type ContenderResult as Reported, type Row } from './contenders/common.ts';
import { PYTHON, ensureCrawlee, ensureSystemPackages, nginxVersion, scrapyVersion } from './deps.ts';
import { type Nginx, startNginx } from './nginx.ts';
import { gitHead, short, table } from './report.ts';
import { rounds, warmUp } from './runner.ts';
import { BENCH_DIR, OUT_DIR, PEERS_DIR, ROOT, SITE_DIR } from './paths.ts';
import { type Book, type Manifest, bookPath, ensureSite, listingPath } from './site.ts';

const ALL = ['minimal', 'ours', 'crawlee', 'scrapy'] as const;
type Name = (typeof ALL)[number];

const TARGETS = { scrapy: 4, crawlee: 3, minimal: 0.8, rssMb: 250 };
const SAMPLE_BOOK = 537;


interface RunResult {
  name: Name;
  run: number;
  status: 'ok' | 'invalid' | 'failed';
  errors: string[];
  reported?: Reported;
  /** Requests nginx served during the run. */
  requests?: number;
  /** Process start to exit, including interpreter start-up and imports. */
  wallSeconds?: number;
  pagesPerSecond?: number;
}

interface Options {
  concurrency: number;
  runs: number;
  only: Name[];
  regenerate: boolean;
  timeoutSeconds: number;
  nodeFlags: string[];
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      concurrency: { type: 'string', default: '8' },
      runs: { type: 'string', default: '1' },
      only: { type: 'string', default: ALL.join(',') },
      regenerate: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '600' },
      'node-flags': { type: 'string', default: '' },
    },
  });
  const int = (s: string | undefined, what: string): number => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${what} must be a positive integer, not ${s}`);
    return n;
  };
  const only = (values.only ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of only) if (!(ALL as readonly string[]).includes(n)) throw new Error(`--only: unknown contender ${n} (${ALL.join(', ')})`);
  return {
    concurrency: int(values.concurrency, 'concurrency'),
    runs: int(values.runs, 'runs'),
    only: ALL.filter((n) => only.includes(n)),
    regenerate: values.regenerate ?? false,
    timeoutSeconds: int(values.timeout, 'timeout'),
    nodeFlags: (values['node-flags'] ?? '').split(/\s+/).filter(Boolean),
  };
}

function command(name: Name, opts: Options, start: string, sampleUrl: string): [string, string[]] {
  const common = ['--start', start, '--concurrency', String(opts.concurrency), '--sample-url', sampleUrl];
  if (name === 'scrapy') return [PYTHON, [join(BENCH_DIR, 'contenders', 'scrapy_spider.py'), ...common]];
  return [process.execPath, [...opts.nodeFlags, join(BENCH_DIR, 'contenders', `${name}.ts`), ...common]];
}

// ---- the child process being run, so Ctrl-C can end it ----
let current: ChildProcess | undefined;

function runChild(cmd: string, args: string[], timeoutSeconds: number): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string; wall: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, {
      cwd: OUT_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CRAWLEE_STORAGE_DIR: join(OUT_DIR, 'crawlee-storage'), PYTHONDONTWRITEBYTECODE: '1' },
    });
    current = child;
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutSeconds} s)`;
      child.kill('SIGKILL');
    }, timeoutSeconds * 1000);
    child.once('error', (err) => {
      clearTimeout(timer);
      current = undefined;
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      current = undefined;
      resolve({ code, signal, stdout, stderr, wall: (performance.now() - t0) / 1000 });
    });
  });
}

function expectedRow(b: Book, origin: string, rating = b.rating): Row {
  return { url: origin + b.path, title: b.title, price: b.price, rating, upc: b.upc, description: b.description };
}

function expectedFingerprint(m: Manifest, origin: string): string {
  const f = new Fingerprint();
  for (const b of m.books) f.add(expectedRow(b, origin));
  return f.hex();
}


function validate(r: Reported, truth: { rows: number; pages: number; fingerprint: string; sample: Row }, requests: number): string[] {
  const errors: string[] = [];
  if (r.rows !== truth.rows) errors.push(`${r.rows} rows, expected ${truth.rows}`);
  if (!r.sample) errors.push(`no row for the sample ${truth.sample.url as string}`);
  else {
    for (const k of Object.keys(truth.sample) as (keyof Row)[]) {
      if (r.sample[k] !== truth.sample[k]) errors.push(`sample row: ${k} is ${short(r.sample[k])}, expected ${short(truth.sample[k])}`);
    }
  }
  if (r.fingerprint !== truth.fingerprint && errors.length === 0) {
    errors.push(`rows differ from the site's (fingerprint ${r.fingerprint}, expected ${truth.fingerprint}) although the sample matches`);
  } else if (r.fingerprint !== truth.fingerprint) {
    errors.push(`rows fingerprint ${r.fingerprint}, expected ${truth.fingerprint}`);
  }
  if (requests < truth.pages) errors.push(`nginx served ${requests} requests, fewer than the ${truth.pages} pages of the site`);
  return errors;
}

async function runOne(name: Name, run: number, opts: Options, nginx: Nginx, manifest: Manifest): Promise<RunResult> {
  const start = nginx.origin + listingPath(1);
  const sampleBook = manifest.books[SAMPLE_BOOK - 1]!;
  const sampleUrl = nginx.origin + bookPath(SAMPLE_BOOK);
  const [cmd, args] = command(name, opts, start, sampleUrl);
  const before = await nginx.requests();
  const out = await runChild(cmd, args, opts.timeoutSeconds);
  const requests = (await nginx.requests()) - before - 1; // the second status request counts itself
  const res: RunResult = { name, run, status: 'ok', errors: [], requests, wallSeconds: out.wall };
  const line = out.stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
  if (out.code !== 0 || !line) {
    res.status = 'failed';
    res.errors.push(`exited with ${out.code ?? out.signal}${line ? '' : ', no result line'}`);
    const tail = (out.stderr.trim() || out.stdout.trim()).split('\n').slice(-15).join('\n');
    if (tail) res.errors.push(tail);
    return res;
  }
  const reported = JSON.parse(line) as Reported;
  res.reported = reported;
  const pages = manifest.listingPages + manifest.books.length;
  res.errors = validate(reported, { rows: manifest.books.length, pages, fingerprint: expectedFingerprint(manifest, nginx.origin), sample: expectedRow(sampleBook, nginx.origin) }, requests);
  if (res.errors.length > 0) res.status = 'invalid';
  res.pagesPerSecond = pages / reported.seconds;
  const stderr = out.stderr.trim();
  if (stderr && res.status === 'ok') reported.notes = [...(reported.notes ?? []), `stderr: ${stderr.split('\n').slice(-3).join(' / ').slice(0, 300)}`];
  return res;
}




export async function main(argv: string[]): Promise<number> {
  const benchStart = performance.now();
  const opts = options(argv);
  mkdirSync(OUT_DIR, { recursive: true });

  const site = ensureSite(opts.regenerate);
  const manifest = site.manifest;
  console.log(
    `site: ${site.cached ? 'cached' : 'generated'} ${SITE_DIR} — ${manifest.listingPages} listing pages (${manifest.sizes.listing.join('–')} B), ` +
      `${manifest.books.length} detail pages (${manifest.sizes.detail.join('–')} B)`,
  );
  const { nginx: nginxBin } = ensureSystemPackages();
  if (opts.only.includes('crawlee')) ensureCrawlee();
  const crawleeVersion = opts.only.includes('crawlee')
    ? (JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', '@crawlee', 'cheerio', 'package.json'), 'utf8')) as { version: string }).version
    : undefined;
  const env = {
    node: process.version,
    nodeFlags: opts.nodeFlags,
    nginx: nginxVersion(nginxBin),
    scrapy: opts.only.includes('scrapy') ? scrapyVersion() : undefined,
    crawlee: crawleeVersion,
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
  };
  console.log(
    `node ${env.node}${opts.nodeFlags.length ? ` (${opts.nodeFlags.join(' ')})` : ''}, nginx ${env.nginx}` +
      `${env.scrapy ? `, ${env.scrapy}` : ''}${env.crawlee ? `, @crawlee/cheerio ${env.crawlee}` : ''}; ${env.cpu}, ${env.memoryGb} GB`,
  );
  // Other work on the 2 cores skews every figure; say so rather than report it as the engines' speed.
  if (env.loadAverage1m > 0.5) console.log(`WARNING: load average ${env.loadAverage1m} before the bench: something else is using the CPU, figures will be low and noisy`);

  const nginx = await startNginx({ nginx: nginxBin, root: SITE_DIR });
  try {
    const pages = ['/index.html', ...Array.from({ length: manifest.listingPages }, (_, i) => listingPath(i + 1)), ...manifest.books.map((b) => b.path)];
    console.log(`nginx ${nginx.origin} (pid ${nginx.pid}); warm-up: every page once in ${(await warmUp(nginx, pages, opts.concurrency)).toFixed(2)} s`);
    console.log(`concurrency ${opts.concurrency}, ${opts.runs} run${opts.runs > 1 ? 's' : ''} each, order ${opts.only.join(', ')}\n`);
  } catch (err) {
    await nginx.stop();
    throw err;
  }
  const { all, chosen } = await rounds({
    nginx,
    names: opts.only,
    runs: opts.runs,
    runOne: (name, run) => runOne(name, run, opts, nginx, manifest),
    describe: (r) => `${r.reported!.seconds.toFixed(2)} s, ${r.pagesPerSecond!.toFixed(0)} pages/s, ${r.reported!.peak_rss_mb.toFixed(1)} MB peak RSS, ${r.reported!.rows} rows, ${r.requests} requests`,
    killCurrent: () => current?.kill('SIGKILL'),
  });

  // ---- report ----
  const head = ['contender', 'pages', 'rows', 'seconds', 'pages/s', 'peak RSS MB', 'wall s', 'status'];
  const lines = [head];
  for (const [name, r] of chosen) {
    const rep = r.reported;
    lines.push(
      rep
        ? [name, String(r.requests), String(rep.rows), rep.seconds.toFixed(2), r.pagesPerSecond!.toFixed(0), rep.peak_rss_mb.toFixed(1), r.wallSeconds!.toFixed(2), r.status === 'ok' ? 'ok' : r.status.toUpperCase()]
        : [name, '-', '-', '-', '-', '-', '-', r.status.toUpperCase()],
    );
  }
  console.log(`\n${table(lines)}`);
  console.log('pages: requests nginx served during the run; pages/s: the site\'s 1,050 pages / seconds of crawl (start-up excluded; wall s includes it)');
  for (const [name, r] of chosen) if (r.reported?.notes?.length) console.log(`  ${name}: ${r.reported.notes.join('; ')}`);

  const ours = chosen.get('ours');
  const ratios: Record<string, number> = {};
  const targets: { target: string; value: number; pass: boolean }[] = [];
  if (ours?.reported && ours.pagesPerSecond) {
    console.log('\nours vs the others (pages/s) and targets:');
    for (const peer of ['scrapy', 'crawlee', 'minimal'] as const) {
      const p = chosen.get(peer);
      if (!p?.pagesPerSecond) continue;
      const ratio = ours.pagesPerSecond / p.pagesPerSecond;
      ratios[peer] = ratio;
      const min = TARGETS[peer];
      targets.push({ target: `ours/${peer} >= ${min}x`, value: ratio, pass: ratio >= min });
      console.log(`  ours/${peer.padEnd(8)} ${ratio.toFixed(2)}x   target >= ${min}x   ${ratio >= min ? 'PASS' : 'MISSED'}`);
    }
    const rss = ours.reported.peak_rss_mb;
    targets.push({ target: `ours peak RSS < ${TARGETS.rssMb} MB`, value: rss, pass: rss < TARGETS.rssMb });
    console.log(`  ours peak RSS    ${rss.toFixed(1)} MB   target < ${TARGETS.rssMb} MB   ${rss < TARGETS.rssMb ? 'PASS' : 'MISSED'}`);
    const missed = targets.filter((t) => !t.pass);
    console.log(missed.length ? `\nMISSED ${missed.length} of ${targets.length} targets: ${missed.map((t) => t.target).join(', ')}` : `\nall ${targets.length} targets PASS`);
    if (ours.status !== 'ok') console.log('(ours produced wrong rows: its figures do not count)');
  } else if (opts.only.includes('ours')) {
    console.log(`\nours: ${!ours ? 'not run' : ours.status}; no ratios`);
  }

  const errors = [...chosen.values()].filter((r) => r.status === 'failed' || r.status === 'invalid');
  const total = (performance.now() - benchStart) / 1000;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = join(OUT_DIR, `engine-${stamp}.json`);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        bench: 'engine',
        at: new Date().toISOString(),
        commit: gitHead(),
        options: opts,
        env,
        site: { listingPages: manifest.listingPages, detailPages: manifest.books.length, sizes: manifest.sizes },
        results: Object.fromEntries([...chosen].map(([n, r]) => [n, summary(r)])),
        runs: all.map(summary),
        ratios,
        targets,
        errors: errors.map((r) => ({ name: r.name, errors: r.errors })),
        totalSeconds: Math.round(total * 10) / 10,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nresults: ${file.slice(ROOT.length + 1)}; whole bench ${total.toFixed(1)} s`);
  if (errors.length) {
    console.error(`\nERROR: ${errors.map((r) => `${r.name} ${r.status}`).join(', ')}:`);
    for (const r of errors) for (const e of r.errors) console.error(`  ${r.name}: ${e}`);
    return 1;
  }
  return 0;
}

function summary(r: RunResult): Record<string, unknown> {
  const rep = r.reported;
  return {
    name: r.name,
    run: r.run,
    status: r.status,
    errors: r.errors,
    requests: r.requests,
    rows: rep?.rows,
    pagesReported: rep?.pages,
    seconds: rep?.seconds,
    pagesPerSecond: r.pagesPerSecond === undefined ? undefined : Math.round(r.pagesPerSecond * 10) / 10,
    peakRssMb: rep?.peak_rss_mb,
    wallSeconds: r.wallSeconds === undefined ? undefined : Math.round(r.wallSeconds * 1000) / 1000,
    notes: rep?.notes,
  };
}

