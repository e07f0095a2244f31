// `npm run bench -- browser`: our heavy engine (through the local service, and in a job-worker thread), Crawlee's
// PuppeteerCrawler and a minimal puppeteer-core loop crawl the same script-rendered site (20 listing pages × 10
// items, 200 detail pages; every page renders from a JSON file and shows 3–4 JPEG images per item or page;
// bench/browser-site.ts) served by Debian's nginx on 127.0.0.1, with the same Chromium (@sparticuz/chromium's binary)
// at the same concurrency (4), each in its own process, on three shapes of the site: `rendered` (as generated),
// `assets` (a stylesheet with web fonts, a synchronous vendor script, lazy images) and `slow` (nginx sends every
// response at 16 KiB/s: about 1 s a page). Crawlee runs on `rendered` only (it takes minutes a run).
// Prints pages/s and the peak memory of each contender's whole process tree (its Node process and every Chromium
// process), our ratio to each per shape and per round, and PASS/MISSED against the targets; writes
// .bench/browser-<time>.json.
//
// The whole bench runs in a network namespace with only loopback (unshare -n) when the machine allows it, so no
// browser can reach anything but the local nginx. Peers are installed before entering it.
//
// Options: --concurrency N (4)  --runs N (1; the median run of each contender is reported)
//          --only minimal,service,ours,crawlee  --shape rendered,assets,slow  --regenerate (rebuild the site)
//          --timeout S (300 per run)
// Exit code: 0 when every contender that ran produced the right rows (targets missed or not), 1 on errors.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Fingerprint, type Row } from './contenders/common.ts';
import type { BrowserContenderResult as Reported } from './contenders/browser-common.ts';
import { type BrowserBook, type BrowserManifest, BROWSER_ASSETS_SITE_DIR, BROWSER_SITE_DIR, ensureBrowserSite, listingPath } from './browser-site.ts';
import { ensureCrawlee, ensureSystemPackages, nginxVersion } from './deps.ts';
import { type Nginx, startNginx } from './nginx.ts';
import { gitHead, short, table } from './report.ts';
import { rounds, warmUp } from './runner.ts';
import { BENCH_DIR, OUT_DIR, PEERS_DIR, ROOT } from './paths.ts';

const ALL = ['minimal', 'service', 'ours', 'crawlee'] as const;
type Name = (typeof ALL)[number];
/** Our two ways of running: the engine through the local service's API, and the engine alone in a job-worker thread. */
const OURS = ['service', 'ours'] as const;

const SHAPES = {
  rendered: { root: BROWSER_SITE_DIR, what: 'pages rendered by an inline script from JSON, images' },
  assets: { root: BROWSER_ASSETS_SITE_DIR, what: 'the same plus a stylesheet with 3 web fonts, a synchronous 120 KB vendor script, lazy images' },
  // nginx's limit_rate lets one second's worth through at once and counts in whole seconds: at 96k (the first
  // version of this shape) the 15-19 KB pages were not slowed at all. At 16k each page's first 16 KiB come at
  // once and the rest at nginx's next second: about 1 s a page, a site slower than the browsers.
  slow: { root: BROWSER_SITE_DIR, limitRate: '16k', what: 'the rendered pages sent at 16 KiB/s per connection after their first 16 KiB' },
} as const;
type Shape = keyof typeof SHAPES;

const TARGETS = { crawlee: 2.5, minimal: 0.9, treeMb: 1500 };
const SAMPLE_BOOK = 137;
/** Set in the environment of the copy of this bench that runs inside the network namespace. */
const NETNS_MARK = 'SAI_BENCH_NETNS';
/** How often the runner samples the contender's process tree. */
const SAMPLE_MS = 100;

interface TreeMemory {
  /** Highest sum of VmRSS over the tree (shared pages counted once per process: an upper bound). */
  peakRssMb: number;
  /** Highest sum of Pss over the tree (shared pages divided among their processes: the tree's real share). */
  peakPssMb: number;
  /** Most processes seen in the tree at once. */
  peakProcesses: number;
  samples: number;
}

interface RunResult {
  name: Name;
  shape: Shape;
  run: number;
  status: 'ok' | 'invalid' | 'failed';
  errors: string[];
  reported?: Reported;
  memory?: TreeMemory;
  /** Requests nginx served during the run (pages, their JSON files, any image not blocked). */
  requests?: number;
  wallSeconds?: number;
  pagesPerSecond?: number;
}

interface Options {
  concurrency: number;
  runs: number;
  only: Name[];
  shapes: Shape[];
  regenerate: boolean;
  timeoutSeconds: number;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      concurrency: { type: 'string', default: '4' },
      runs: { type: 'string', default: '1' },
      only: { type: 'string', default: ALL.join(',') },
      shape: { type: 'string', default: Object.keys(SHAPES).join(',') },
      regenerate: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '300' },
    },
  });
  const int = (s: string | undefined, what: string): number => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${what} must be a positive integer, not ${s}`);
    return n;
  };
  const only = (values.only ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of only) if (!(ALL as readonly string[]).includes(n)) throw new Error(`--only: unknown contender ${n} (${ALL.join(', ')})`);
  const shapes = (values.shape ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  for (const x of shapes) if (!Object.hasOwn(SHAPES, x)) throw new Error(`--shape: unknown shape ${x} (${Object.keys(SHAPES).join(', ')})`);
  return {
    concurrency: int(values.concurrency, 'concurrency'),
    runs: int(values.runs, 'runs'),
    only: ALL.filter((n) => only.includes(n)),
    shapes: (Object.keys(SHAPES) as Shape[]).filter((x) => shapes.includes(x)),
    regenerate: values.regenerate ?? false,
    timeoutSeconds: int(values.timeout, 'timeout'),
  };
}

// ---- the process tree's memory ----

/** Every descendant of `root` (and root), from the ppid field of /proc/<pid>/stat. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid …; comm may hold spaces and parentheses: split after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** [VmRSS, Pss] of one process in kB from /proc/<pid>/smaps_rollup; [0, 0] when it has exited or is a zombie. */
function processMemoryKb(pid: number): [number, number] {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const rss = /^Rss:\s+(\d+) kB/m.exec(text);
    const pss = /^Pss:\s+(\d+) kB/m.exec(text);
    return [Number(rss?.[1] ?? 0), Number(pss?.[1] ?? 0)];
  } catch {
    return [0, 0];
  }
}

/** Samples the tree under `pid` every SAMPLE_MS until stop() is called; the peaks are returned by stop(). */
function watchTree(pid: number): { stop(): TreeMemory } {
  const m: TreeMemory = { peakRssMb: 0, peakPssMb: 0, peakProcesses: 0, samples: 0 };
  const sample = (): void => {
    const pids = processTree(pid);
    let rss = 0;
    let pss = 0;
    for (const p of pids) {
      const [r, s] = processMemoryKb(p);
      rss += r;
      pss += s;
    }
    m.samples++;
    m.peakRssMb = Math.max(m.peakRssMb, rss / 1024);
    m.peakPssMb = Math.max(m.peakPssMb, pss / 1024);
    m.peakProcesses = Math.max(m.peakProcesses, pids.length);
  };
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    stop(): TreeMemory {
      clearInterval(timer);
      return { ...m, peakRssMb: Math.round(m.peakRssMb * 10) / 10, peakPssMb: Math.round(m.peakPssMb * 10) / 10 };
    },
  };
}

// ---- running one contender ----

let current: ChildProcess | undefined;

function runChild(args: string[], timeoutSeconds: number): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string; wall: number; memory: TreeMemory }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: OUT_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a timed-out contender is killed with its browsers.
      detached: true,
      env: { ...process.env, CRAWLEE_STORAGE_DIR: join(OUT_DIR, 'crawlee-storage') },
    });
    current = child;
    const watch = watchTree(child.pid!);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutSeconds} s)`;
      killGroup(child);
    }, timeoutSeconds * 1000);
    child.once('error', (err) => {
      clearTimeout(timer);
      watch.stop();
      current = undefined;
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      current = undefined;
      killGroup(child); // a browser the contender left behind
      resolve({ code, signal, stdout, stderr, wall: (performance.now() - t0) / 1000, memory: watch.stop() });
    });
  });
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // the group is gone
  }
}

function expectedRow(b: BrowserBook, origin: string): Row {
  return { url: origin + b.path, title: b.title, price: b.price, rating: b.rating, upc: b.upc, description: b.description };
}

function expectedFingerprint(m: BrowserManifest, origin: string): string {
  const f = new Fingerprint();
  for (const b of m.books) f.add(expectedRow(b, origin));
  return f.hex();
}


/** The site's pages plus the JSON file each renders from: the fewest requests a correct crawl makes. */
const minimumRequests = (m: BrowserManifest): number => 2 * (m.listingPages + m.books.length);

function validate(r: Reported, m: BrowserManifest, origin: string, requests: number): string[] {
  const errors: string[] = [];
  const truth = expectedRow(m.books[SAMPLE_BOOK - 1]!, origin);
  if (r.rows !== m.books.length) errors.push(`${r.rows} rows, expected ${m.books.length}`);
  if (!r.sample) errors.push(`no row for the sample ${truth.url as string}`);
  else {
    for (const k of Object.keys(truth) as (keyof Row)[]) {
      if (r.sample[k] !== truth[k]) errors.push(`sample row: ${k} is ${short(r.sample[k])}, expected ${short(truth[k])}`);
    }
  }
  const fp = expectedFingerprint(m, origin);
  if (r.fingerprint !== fp) errors.push(`rows fingerprint ${r.fingerprint}, expected ${fp}`);
  if (requests < minimumRequests(m)) errors.push(`nginx served ${requests} requests, fewer than the site's ${minimumRequests(m)} pages and JSON files`);
  return errors;
}

async function runOne(name: Name, shape: Shape, run: number, opts: Options, nginx: Nginx, manifest: BrowserManifest): Promise<RunResult> {
  const args = [
    join(BENCH_DIR, 'contenders', `browser-${name}.ts`),
    '--start', nginx.origin + listingPath(1),
    '--concurrency', String(opts.concurrency),
    '--sample-url', nginx.origin + manifest.books[SAMPLE_BOOK - 1]!.path,
  ];
  const before = await nginx.requests();
  const out = await runChild(args, opts.timeoutSeconds);
  const requests = (await nginx.requests()) - before - 1; // the second status request counts itself
  const res: RunResult = { name, shape, run, status: 'ok', errors: [], requests, wallSeconds: out.wall, memory: out.memory };
  const line = out.stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
  if (out.code !== 0 || !line) {
    res.status = 'failed';
    res.errors.push(`exited with ${out.code ?? out.signal}${line ? '' : ', no result line'}`);
    const tail = (out.stderr.trim() || out.stdout.trim()).split('\n').slice(-15).join('\n');
    if (tail) res.errors.push(tail);
    return res;
  }
  const reported = JSON.parse(line) as Reported;
  reported.peak_tree_rss_mb = out.memory.peakRssMb;
  res.reported = reported;
  res.errors = validate(reported, manifest, nginx.origin, requests);
  if (res.errors.length > 0) res.status = 'invalid';
  res.pagesPerSecond = (manifest.listingPages + manifest.books.length) / reported.seconds;
  const stderr = out.stderr.trim();
  if (stderr && res.status === 'ok') reported.notes = [...(reported.notes ?? []), `stderr: ${stderr.split('\n').slice(-3).join(' / ').slice(0, 300)}`];
  return res;
}




/** True when this process can see no network interface but loopback (so no packet can leave the machine). */
function loopbackOnly(): boolean {
  try {
    // /proc/net/dev lists the interfaces of this process's network namespace (/sys/class/net may be the host's).
    const ifaces = readFileSync('/proc/net/dev', 'utf8').split('\n').slice(2).map((l) => l.split(':')[0]!.trim()).filter(Boolean);
    return ifaces.length > 0 && ifaces.every((i) => i === 'lo');
  } catch {
    return false;
  }
}

/** Runs this bench again inside `unshare -n` with loopback up; undefined when the machine does not allow it. */
function reexecIsolated(argv: string[]): number | undefined {
  if (process.env[NETNS_MARK] === '1') return undefined;
  if (spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' }).status !== 0) return undefined;
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const cmd = [process.execPath, join(BENCH_DIR, 'run.ts'), 'browser', ...argv].map(quote).join(' ');
  console.log('(in a network namespace with only loopback: unshare -n)');
  const r = spawnSync('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec ${cmd}`], { stdio: 'inherit', env: { ...process.env, [NETNS_MARK]: '1' } });
  return r.status ?? 1;
}

export async function main(argv: string[]): Promise<number> {
  const opts = options(argv);
  // Installs need the network: before entering the namespace.
  const { nginx: nginxBin } = ensureSystemPackages({ scrapy: false });
  if (opts.only.includes('crawlee')) ensureCrawlee();
  const isolated = reexecIsolated(argv);
  if (isolated !== undefined) return isolated;
  if (!loopbackOnly()) console.log('WARNING: not in a loopback-only network namespace (unshare -n is not available): the browsers could reach the network');

  const benchStart = performance.now();
  mkdirSync(OUT_DIR, { recursive: true });
  const { manifest, cached } = await ensureBrowserSite(opts.regenerate);
  const s = manifest.sizes;
  console.log(
    `site: ${cached ? 'cached' : 'generated'} ${BROWSER_SITE_DIR} — ${manifest.listingPages} listing pages (${s.listing.join('–')} B), ` +
      `${manifest.books.length} detail pages (${s.detail.join('–')} B), ${manifest.files.data.length} JSON files (${s.data.join('–')} B), ` +
      `${manifest.files.images.length} JPEG images (${s.image.join('–')} B, ${(s.imagesTotal / 2 ** 20).toFixed(1)} MiB)`,
  );
  const version = (pkg: string, dir: string): string => (JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  const { chromiumBase } = await import('./contenders/browser-common.ts');
  const chrome = await chromiumBase();
  const chromeVersion = spawnSync(chrome.executablePath, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const env = {
    node: process.version,
    nginx: nginxVersion(nginxBin),
    chromium: chromeVersion || chrome.executablePath,
    puppeteerCore: version('puppeteer-core', ROOT),
    crawlee: opts.only.includes('crawlee') ? version('@crawlee/puppeteer', PEERS_DIR) : undefined,
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
    loopbackOnly: loopbackOnly(),
  };
  console.log(
    `node ${env.node}, nginx ${env.nginx}, ${env.chromium}, puppeteer-core ${env.puppeteerCore}` +
      `${env.crawlee ? `, @crawlee/puppeteer ${env.crawlee}` : ''}; ${env.cpu}, ${env.memoryGb} GB`,
  );
  if (env.loadAverage1m > 0.5) console.log(`WARNING: load average ${env.loadAverage1m} before the bench: something else is using the CPU, figures will be low and noisy`);

  const pages = manifest.listingPages + manifest.books.length;
  const targets: { shape: Shape; target: string; value: number; pass: boolean }[] = [];
  const perShape: Array<{ shape: Shape; all: RunResult[]; chosen: Map<Name, RunResult>; ratios: Record<string, number>; roundRatios: Record<string, number[]> }> = [];
  for (const shape of opts.shapes) {
    const spec = SHAPES[shape];
    const names = opts.only.filter((n) => n !== 'crawlee' || shape === 'rendered');
    console.log(`\n== shape ${shape}: ${spec.what}`);
    const nginx = await startNginx({ nginx: nginxBin, root: spec.root, ...('limitRate' in spec ? { limitRate: spec.limitRate } : {}) });
    try {
      const files = [...manifest.files.pages, ...manifest.files.data, ...manifest.files.images, ...(shape === 'assets' ? manifest.files.assets : [])];
      console.log(`nginx ${nginx.origin} (pid ${nginx.pid}); warm-up: every file once in ${(await warmUp(nginx, files, 8)).toFixed(2)} s`);
      console.log(`concurrency ${opts.concurrency}, ${opts.runs} run${opts.runs > 1 ? 's' : ''} each, order ${names.join(', ')}`);
    } catch (err) {
      await nginx.stop();
      throw err;
    }
    const { all, chosen } = await rounds({
      nginx,
      names,
      runs: opts.runs,
      runOne: (name, run) => runOne(name, shape, run, opts, nginx, manifest),
      describe: (r) => {
        const m = r.memory!;
        return `${r.reported!.seconds.toFixed(2)} s, ${r.pagesPerSecond!.toFixed(1)} pages/s, tree ${m.peakRssMb.toFixed(0)} MB RSS / ${m.peakPssMb.toFixed(0)} MB PSS (${m.peakProcesses} processes), ${r.reported!.rows} rows, ${r.requests} requests`;
      },
      killCurrent: () => { if (current) killGroup(current); },
    });

    const head = ['contender', 'requests', 'rows', 'seconds', 'pages/s', 'tree RSS MB', 'tree PSS MB', 'procs', 'node MB', 'launches', 'wall s', 'status'];
    const lines = [head];
    for (const [name, r] of chosen) {
      const rep = r.reported;
      const m = r.memory;
      lines.push(
        rep && m
          ? [name, String(r.requests), String(rep.rows), rep.seconds.toFixed(2), r.pagesPerSecond!.toFixed(1), m.peakRssMb.toFixed(0), m.peakPssMb.toFixed(0), String(m.peakProcesses), rep.node_peak_rss_mb.toFixed(0), String(rep.launches ?? '-'), r.wallSeconds!.toFixed(2), r.status === 'ok' ? 'ok' : r.status.toUpperCase()]
          : [name, '-', '-', '-', '-', '-', '-', '-', '-', '-', '-', r.status.toUpperCase()],
      );
    }
    console.log(`\n${table(lines)}`);
    for (const [name, r] of chosen) if (r.reported?.notes?.length) console.log(`  ${name}: ${r.reported.notes.join('; ')}`);

    // Ratios of the medians, and of each round (the same round's runs, one right after the other).
    const ratios: Record<string, number> = {};
    const roundRatios: Record<string, number[]> = {};
    console.log(`\nshape ${shape}: ours vs the others (pages/s) and targets:`);
    for (const mine of OURS) {
      const o = chosen.get(mine);
      if (!o?.pagesPerSecond || !o.memory) continue;
      for (const peer of ['crawlee', 'minimal'] as const) {
        const p = chosen.get(peer);
        if (!p?.pagesPerSecond) continue;
        const key = `${mine}/${peer}`;
        const ratio = o.pagesPerSecond / p.pagesPerSecond;
        ratios[key] = ratio;
        const perRound: number[] = [];
        for (let run = 1; run <= opts.runs; run++) {
          const a = all.find((r) => r.name === mine && r.run === run && r.pagesPerSecond);
          const b = all.find((r) => r.name === peer && r.run === run && r.pagesPerSecond);
          if (a && b) perRound.push(a.pagesPerSecond! / b.pagesPerSecond!);
        }
        roundRatios[key] = perRound;
        const min = TARGETS[peer];
        targets.push({ shape, target: `${key} >= ${min}x`, value: ratio, pass: ratio >= min });
        const rounds = perRound.length > 1 ? `   per round ${perRound.map((x) => x.toFixed(2)).join(', ')}` : '';
        console.log(`  ${key.padEnd(16)} ${ratio.toFixed(2)}x   target >= ${min}x   ${ratio >= min ? 'PASS' : 'MISSED'}${rounds}`);
      }
      const tree = o.memory.peakRssMb;
      targets.push({ shape, target: `${mine} process tree < ${TARGETS.treeMb} MB`, value: tree, pass: tree < TARGETS.treeMb });
      console.log(`  ${`${mine} tree RSS`.padEnd(16)} ${tree.toFixed(0)} MB (PSS ${o.memory.peakPssMb.toFixed(0)} MB)   target < ${TARGETS.treeMb} MB   ${tree < TARGETS.treeMb ? 'PASS' : 'MISSED'}`);
      if (o.status !== 'ok') console.log(`  (${mine} produced wrong rows: its figures do not count)`);
    }
    perShape.push({ shape, all, chosen, ratios, roundRatios });
  }
  console.log(
    `\npages/s: the site's ${pages} pages / seconds of crawl (minimal, crawlee, ours: from before the first browser launch to the last row; ` +
      `service: from POST /run/ to the status poll that saw completed; wall s adds process start-up and exit). ` +
      `requests: what nginx served (${minimumRequests(manifest)} = pages + their JSON; more means images or assets were loaded). ` +
      `tree: peaks of the summed VmRSS and Pss of the contender's process and all its descendants, sampled every ${SAMPLE_MS} ms; node MB: VmHWM of the Node process alone.`,
  );
  const missed = targets.filter((t) => !t.pass);
  if (targets.length) console.log(missed.length ? `\nMISSED ${missed.length} of ${targets.length} targets: ${missed.map((t) => `${t.shape}: ${t.target} (${t.value.toFixed(2)})`).join(', ')}` : `\nall ${targets.length} targets PASS`);
  const all = perShape.flatMap((x) => x.all);
  const chosen = new Map(perShape.flatMap((x) => [...x.chosen].map(([n, r]) => [`${x.shape}/${n}`, r] as const)));
  const errors = [...chosen.values()].filter((r) => r.status !== 'ok');
  const total = (performance.now() - benchStart) / 1000;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = join(OUT_DIR, `browser-${stamp}.json`);
  const summary = (r: RunResult): Record<string, unknown> => ({
    name: r.name, shape: r.shape, run: r.run, status: r.status, errors: r.errors, requests: r.requests,
    rows: r.reported?.rows, pagesReported: r.reported?.pages, seconds: r.reported?.seconds,
    pagesPerSecond: r.pagesPerSecond === undefined ? undefined : Math.round(r.pagesPerSecond * 100) / 100,
    memory: r.memory, nodePeakRssMb: r.reported?.node_peak_rss_mb, launches: r.reported?.launches,
    wallSeconds: r.wallSeconds === undefined ? undefined : Math.round(r.wallSeconds * 1000) / 1000, notes: r.reported?.notes,
  });
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        bench: 'browser', at: new Date().toISOString(), commit: gitHead(), options: opts, env,
        site: { listingPages: manifest.listingPages, detailPages: manifest.books.length, images: manifest.files.images.length, sizes: manifest.sizes },
        results: Object.fromEntries([...chosen].map(([n, r]) => [n, summary(r)])),
        runs: all.map(summary),
        ratios: Object.fromEntries(perShape.map((x) => [x.shape, { medians: x.ratios, rounds: x.roundRatios }])),
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

