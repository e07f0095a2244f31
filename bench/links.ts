// `npm run bench -- links`: the broken-link checker (checkLinks of lambdas/tools/links.ts) against linkinator
// 8.1.0 (installed into bench/.peers by bench/deps.ts) on the two real pages of <corpus>/links: ArchWiki
// "List of applications" (~7,300 hrefs, ~6,300 distinct links) and Wikipedia "Elvis Presley" (~4,200 hrefs,
// ~2,000 distinct).
//
// The local site: every link of a page is rewritten to a URL of a local site on loopback (one URL per distinct
// target, spread over 16 origins: 127.0.1.1 … 127.0.1.16, each its own port, served by two server processes), so
// that nothing leaves the machine; the page itself is served from the first origin. Each target answers one way,
// fixed by a hash of its number (so the same on every run and machine): most 200; 2% 404, 1% 500; 0.5% point at a
// closed port (connection refused); 2.5% redirect (301/302, one to three hops across origins) to a 200, 0.5% to a
// 404; 1% answer after 300 ms; 0.5% answer HEAD with 405 (GET 200); 0.3% answer their first request with 429 and
// Retry-After: 1, then 200. Before the page is served, every URL-bearing attribute either checker reads is checked
// to point at the local site (JSON-LD blocks, which linkinator reads, are removed); the bench refuses to run if not.
//
// Both contenders run in their own process, one after the other, on the same page with the same concurrency (and
// the servers' 429 memory reset between them): ours fetches the page with the engine's Fetcher and calls
// checkLinks() (outbound guard allowing 127.0.0.0/8 only, no DNS), linkinator runs `check({path, recurse: false,
// concurrency, timeout: 10000, retry: true, redirects: 'warn'})` ('warn' only adds `redirect` events, which say
// which links redirected). Links/s = links reported (the page's distinct links) / wall time from the page request
// to the report. Verdicts are compared per link: linkinator's OK is our `ok`, or `redirect` when it reported a
// redirect; its BROKEN our `broken` or `timeout`; SKIPPED `skipped`; a redirect's final URL must match the last URL
// of our `redirect_chain`.
//
// Three runs, each printed: each page alone (depth 0), then the site: an index page at /page/ linking to both
// pages, checked with depth 1 by ours and `recurse: true` by linkinator (which crawls only URLs under the index's
// path: the two pages, not the targets). Each page numbers its targets from its own base, so the site's links are
// the two pages' links added up (8,269).
//
// Target (issue 12): ours at least 3x linkinator's links/s, with the same verdicts. The verdicts must agree on every
// run; the ratio is judged on the site. A single page is too small a sample of throughput: a 429 link's Retry-After
// (1 s) and a slow answer (300 ms) are waits no checker can shorten, while Elvis is about 0.36 s of our work: the
// ratio of a page says where its 429 links fall more than how fast a checker is. The line printed after each ratio
// gives the cap those waits put on any checker (linkinator's seconds / the wait: a checker that took no time at
// all). Prints PASS or MISSED per run and overall.
// Writes .bench/links-<time>.json. Options: --concurrency N (32), --runs N (1: median of N interleaved runs),
// --only archwiki,elvis,site (`site` alone still builds both pages), --kinds a,b (only targets of these kinds keep
// them, the rest answer 200: 404, 500, refused, redirect, slow, head405, 429; `--kinds none` makes every target a
// 200) to see what each costs, --warm (each contender's process checks the page once untimed first, the servers
// are reset, then the timed check: a long-running service's steady state rather than a cold start).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { load } from 'cheerio/slim';
import { isTag, type AnyNode, type Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { Fetcher } from '../lambdas/net/fetch.ts';
import { OutboundGuard } from '../lambdas/net/guard.ts';
import { extractLinks, parseMetaRefresh } from '../lambdas/tools/links-extract.ts';
import { checkLinks, type LinkState, type LinksReport } from '../lambdas/tools/links.ts';
import type { ToolPage } from '../lambdas/tools/page.ts';
import { ensureLinkinator, LINKINATOR_VERSION } from './deps.ts';
import { gitHead, table } from './report.ts';
import { OUT_DIR, corpusDir } from './paths.ts';

const TARGET_RATIO = 3;
const ORIGIN_COUNT = 16;
const SERVER_PROCESSES = 2;
const SLOW_MS = 300;
/** The Retry-After of a 429 target, seconds. */
const RETRY_AFTER_S = 1;
/** The `pageFiles` key of the site's index page (served at `/page/`). */
const SITE_INDEX = '(index)';
const REQUEST_TIMEOUT_MS = 10_000;

const PAGES = [
  { name: 'archwiki', file: 'archwiki-list-of-applications.html', url: 'https://wiki.archlinux.org/title/List_of_applications' },
  { name: 'elvis', file: 'wikipedia-elvis-presley.html', url: 'https://en.wikipedia.org/wiki/Elvis_Presley' },
] as const;

/** How a target answers. `rN-ok` / `rN-404`: N redirect hops, then 200 or 404. */
type Kind = 'ok' | '404' | '500' | 'refused' | 'slow' | 'head405' | '429' | `r${number}-ok` | `r${number}-404`;

/** FNV-1a of a number's decimal text: a fixed spread of targets over kinds and origins. */
function hash(n: number, salt = ''): number {
  let h = 0x811c9dc5;
  for (const c of `${salt}${n}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** `--kinds`: only targets of these kinds keep them, the others answer 200 (to see what each behaviour costs). */
let onlyKinds: string[] | undefined;

function kindOf(i: number): Kind {
  const k = mixedKind(i);
  return onlyKinds && !onlyKinds.some((x) => k === x || (x === 'redirect' && k.startsWith('r'))) ? 'ok' : k;
}

function mixedKind(i: number): Kind {
  const r = hash(i, 'kind') % 1000;
  if (r < 20) return '404';
  if (r < 30) return '500';
  if (r < 35) return 'refused';
  if (r < 60) return `r${1 + (hash(i, 'hops') % 3)}-ok`;
  if (r < 65) return `r${1 + (hash(i, 'hops') % 2)}-404`;
  if (r < 75) return 'slow';
  if (r < 80) return 'head405';
  if (r < 83) return '429';
  return 'ok';
}

interface Origin { host: string; port: number }

/** Attributes that hold one URL in either checker's table (linkinator reads these on the named elements, we on fewer). */
const URL_ATTRS = ['href', 'src', 'poster', 'data', 'cite', 'background', 'manifest', 'longdesc', 'icon', 'pluginspage', 'pluginurl', 'xlink:href', 'action', 'formaction'];

/** A page rewritten onto the local site, and what each of its targets should get. */
interface LocalPage {
  name: string;
  html: string;
  /** Local URL (no fragment) → the kind it was given. */
  expected: Map<string, Kind>;
}

/**
 * Rewrites a corpus page: every link target (resolved against the page's original URL, fragment dropped) becomes
 * `http://<origin>/t/<n>/<kind>`; fragment-only and non-http links stay as they are; JSON-LD is removed. Targets are numbered from `firstTarget` in document order.
 */
function rewritePage(name: string, html: string, pageUrl: string, origins: Origin[], closedPort: number, firstTarget: number): LocalPage {
  // htmlparser2, not parseHtml(): it reads <noscript> content as elements (as linkinator does), so those links are
  // rewritten too; parse5 with scripting on keeps that content as text.
  const doc = parseDocument(html);
  const $ = load(doc, { xml: { xmlMode: false, decodeEntities: true, encodeEntities: 'utf8' } });
  $('script[type="application/ld+json"]').remove();
  const baseHref = $('base[href]').first().attr('href');
  const base = baseHref ? new URL(baseHref, pageUrl) : new URL(pageUrl);
  $('base').remove();
  const ids = new Map<string, string>();
  const expected = new Map<string, Kind>();
  const local = (raw: string): string => {
    const t = raw.trim();
    if (t === '' || t.startsWith('#')) return raw;
    let u: URL;
    try {
      u = new URL(t, base);
    } catch {
      return raw;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return raw;
    const fragment = u.hash;
    u.hash = '';
    let mapped = ids.get(u.href);
    if (!mapped) {
      const n = firstTarget + ids.size;
      const kind = kindOf(n);
      const o = origins[hash(n, 'origin') % origins.length]!;
      mapped = kind === 'refused' ? `http://${o.host}:${closedPort}/t/${n}/refused` : `http://${o.host}:${o.port}/t/${n}/${kind}`;
      ids.set(u.href, mapped);
      expected.set(mapped, kind);
    }
    return mapped + fragment;
  };
  const walk = (nodes: AnyNode[]) => {
    for (const node of nodes) {
      if (!isTag(node)) continue;
      const el = node as Element;
      for (const attr of URL_ATTRS) if (el.attribs[attr] !== undefined) el.attribs[attr] = local(el.attribs[attr]);
      if (el.attribs.srcset !== undefined) {
        el.attribs.srcset = el.attribs.srcset.split(/,\s+/).map((c) => {
          const [url, ...descriptors] = c.trim().split(/\s+/);
          return [local(url!), ...descriptors].join(' ');
        }).join(', ');
      }
      if (el.name === 'meta' && el.attribs.content) {
        if (el.attribs['http-equiv']?.toLowerCase() === 'refresh') {
          const target = parseMetaRefresh(el.attribs.content);
          if (target) el.attribs.content = `0; url=${local(target)}`;
        } else if (/^https?:\/\//i.test(el.attribs.content.trim())) {
          el.attribs.content = local(el.attribs.content);
        }
      }
      walk(el.children);
      // parse5 keeps a <template>'s content as its child fragment: walk that too.
      if (el.name === 'template' && el.children[0] && 'children' in el.children[0]) walk((el.children[0] as Element).children);
    }
  };
  walk(doc.children);
  return { name, html: $.html(), expected };
}

/** Attribute assignments in raw markup, wherever they are (inside <noscript>, comments, scripts' strings too). */
const ATTRIBUTE_RE = /\b(href|src|srcset|poster|data|cite|background|manifest|longdesc|icon|pluginspage|pluginurl|content|action|formaction)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
/** A scheme-relative or http(s) URL's host in a value. */
const HOST_RE = /(?:https?:)?\/\/([^/\s"'?#:,]+)/gi;

/**
 * Refuses to serve a page that could make either checker request anything off the machine: every URL-like value of
 * a URL attribute anywhere in the raw markup (not only where a parser would read it), every link our extractor
 * finds, and no JSON-LD (which linkinator reads). @throws Error naming the first few.
 */
function assertLocalOnly(html: string, servedAt: string): void {
  const bad = new Set<string>();
  for (const m of html.matchAll(ATTRIBUTE_RE)) {
    const value = (m[2] ?? m[3] ?? m[4] ?? '').replace(/&amp;/g, '&');
    for (const h of value.matchAll(HOST_RE)) if (!/^127\./.test(h[1]!)) bad.add(`${m[1]}="${value.slice(0, 80)}"`);
  }
  if (/application\/ld\+json/i.test(html)) bad.add('a JSON-LD block');
  for (const l of extractLinks(html, servedAt)) if (/^https?:/.test(l.url) && !/^https?:\/\/127\./.test(l.url)) bad.add(l.url);
  if (bad.size) throw new Error(`the rewritten page still points off the machine: ${[...bad].slice(0, 5).join(', ')}${bad.size > 5 ? ` (+${bad.size - 5})` : ''}`);
}

// ---------------------------------------------------------------------------------------------------------
// The server process
// ---------------------------------------------------------------------------------------------------------

/** Runs in a child: serves the pages and the targets on the origins it is given, until killed. */
async function serve(hosts: string[], pageFiles: Record<string, string>): Promise<void> {
  // The parent writes a page before it is requested: read at each request (once per contender).
  const pages = new Map(Object.entries(pageFiles).map(([name, file]) => [name === SITE_INDEX ? '/page/' : `/page/${name}.html`, file]));
  const limited = new Set<string>();
  let origins: Origin[] = [];
  const handler: http.RequestListener = (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const head = req.method === 'HEAD';
    const pageFile = pages.get(path);
    if (pageFile) {
      const page = readFileSync(pageFile);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': page.length });
      res.end(head ? undefined : page);
      return;
    }
    const m = /^\/t\/(\d+)\/([\w-]+)$/.exec(path);
    const ok = () => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': 15 });
      res.end(head ? undefined : '<!doctype html>');
    };
    const status = (code: number) => {
      res.writeHead(code, { 'content-type': 'text/plain', 'content-length': 0 });
      res.end();
    };
    if (!m) return status(404);
    const [, n, kind] = m as unknown as [string, string, string];
    const redirect = /^r(\d+)-(ok|404)$/.exec(kind);
    if (redirect) {
      const hops = Number(redirect[1]);
      if (hops === 0) return redirect[2] === 'ok' ? ok() : status(404);
      const o = allOrigins[hash(Number(n) * 7 + hops, 'hop') % allOrigins.length]!;
      res.writeHead(hops % 2 ? 301 : 302, { location: `http://${o.host}:${o.port}/t/${n}/r${hops - 1}-${redirect[2]}`, 'content-length': 0 });
      res.end();
      return;
    }
    switch (kind) {
      case 'ok': return ok();
      case '404': return status(404);
      case '500': return status(500);
      case 'slow': {
        const t = setTimeout(ok, SLOW_MS);
        res.on('close', () => clearTimeout(t));
        return;
      }
      case 'head405': return head ? status(405) : ok();
      case '429':
        if (!limited.has(path)) {
          limited.add(path);
          res.writeHead(429, { 'retry-after': String(RETRY_AFTER_S), 'content-length': 0 });
          res.end();
          return;
        }
        return ok();
      default: return status(404);
    }
  };
  let allOrigins: Origin[] = [];
  for (const host of hosts) {
    const server = http.createServer({ keepAliveTimeout: 30_000 }, handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    origins.push({ host, port: (server.address() as net.AddressInfo).port });
  }
  process.on('message', (msg: { type: string; origins?: Origin[] }) => {
    if (msg.type === 'origins') allOrigins = msg.origins!;
    if (msg.type === 'reset') limited.clear();
    process.send!({ type: `${msg.type}-done` });
  });
  process.send!({ type: 'listening', origins });
  origins = [];
}

// ---------------------------------------------------------------------------------------------------------
// The contenders (each in its own process)
// ---------------------------------------------------------------------------------------------------------

/** One link as a contender reports it, in our terms where the comparison needs them. */
interface Verdict { state: string; status: number | null; final?: string }

interface ContenderResult {
  seconds: number;
  links: number;
  verdicts: Record<string, Verdict>;
  summary?: LinksReport['summary'];
  states: Record<string, number>;
}

async function runOurs(pageUrl: string, concurrency: number, depth: number): Promise<ContenderResult> {
  const guard = new OutboundGuard({
    allow: ['127.0.0.0/8'],
    resolve: async (name) => { throw Object.assign(new Error(`no DNS in the bench (${name})`), { code: 'ENOTFOUND' }); },
  });
  const fetcher = new Fetcher(guard, { timeoutMs: 15_000, retries: 1, maxBytes: 5 * 1024 * 1024 });
  const t0 = performance.now();
  const p = await fetcher.fetch(pageUrl);
  const page: ToolPage = {
    requestedUrl: p.requestedUrl, url: p.url, status: p.status, headers: p.headers, setCookies: p.setCookies,
    contentType: p.contentType, html: p.text, redirectChain: p.redirectChain,
  };
  const report = await checkLinks(page, { guard, concurrency, depth, maxLinks: 10_000, timeoutMs: REQUEST_TIMEOUT_MS });
  const seconds = (performance.now() - t0) / 1000;
  await fetcher.close();
  const verdicts: Record<string, Verdict> = {};
  const states: Record<string, number> = {};
  for (const l of report.links) {
    verdicts[l.url] = { state: l.state, status: l.status, ...(l.redirect_chain.length ? { final: l.redirect_chain.at(-1)! } : {}) };
    states[l.state] = (states[l.state] ?? 0) + 1;
  }
  return { seconds, links: report.links.length, verdicts, summary: report.summary, states };
}

interface LinkinatorResult { url: string; status?: number; state: 'OK' | 'BROKEN' | 'SKIPPED'; parent?: string }
interface LinkinatorModule {
  LinkChecker: new () => {
    on(event: 'redirect', listener: (e: { url: string; targetUrl?: string }) => void): void;
    check(options: Record<string, unknown>): Promise<{ links: LinkinatorResult[] }>;
  };
}

async function runLinkinator(entry: string, pageUrl: string, concurrency: number, selfLinked: boolean, depth: number): Promise<ContenderResult> {
  const { LinkChecker } = (await import(pathToFileURL(entry).href)) as LinkinatorModule;
  const checker = new LinkChecker();
  const redirects = new Map<string, string | undefined>();
  checker.on('redirect', (e) => redirects.set(e.url, e.targetUrl));
  const t0 = performance.now();
  const result = await checker.check({ path: pageUrl, recurse: depth > 0, concurrency, timeout: REQUEST_TIMEOUT_MS, retry: true, redirects: 'warn' });
  const seconds = (performance.now() - t0) / 1000;
  const verdicts: Record<string, Verdict> = {};
  const states: Record<string, number> = {};
  for (const l of result.links) {
    // The page is linkinator's root result; its links to itself (`#…`) get no result of their own: when ours lists
    // the page as a link, the root's verdict is linkinator's for it.
    if (l.parent === undefined && !selfLinked) continue;
    if (verdicts[l.url]) continue; // a repeated BROKEN report for another parent
    const state = l.state === 'OK' ? (redirects.has(l.url) ? 'redirect' : 'ok') : l.state === 'BROKEN' ? 'broken' : 'skipped';
    const target = redirects.get(l.url);
    verdicts[l.url] = { state, status: l.status ?? null, ...(target ? { final: target } : {}) };
    states[state] = (states[state] ?? 0) + 1;
  }
  return { seconds, links: Object.keys(verdicts).length, verdicts, states };
}

// ---------------------------------------------------------------------------------------------------------
// The parent
// ---------------------------------------------------------------------------------------------------------

const SELF = fileURLToPath(import.meta.url);

function child(role: string, payload: unknown): ChildProcess {
  return fork(SELF, ['--role', role], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, BENCH_LINKS_PAYLOAD: JSON.stringify(payload) } });
}

function message<T>(c: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMsg = (m: { type: string }) => {
      if (m.type === type) {
        c.off('message', onMsg);
        c.off('exit', onExit);
        resolve(m as T);
      }
    };
    const onExit = (code: number | null) => reject(new Error(`bench child exited with ${code} before "${type}"`));
    c.on('message', onMsg);
    c.once('exit', onExit);
  });
}

/** Runs a contender in its own process; with `warm`, it checks the page once first and the servers are reset before the timed check. */
async function contender(role: 'ours' | 'linkinator', payload: Record<string, unknown>, warm: boolean, reset: () => Promise<void>): Promise<ContenderResult> {
  const c = child(role, { ...payload, warm });
  if (warm) {
    await message(c, 'warm-done');
    await reset();
    c.send({ type: 'go' });
  }
  const { result } = await message<{ result: ContenderResult }>(c, 'result');
  c.kill();
  return result;
}

/** Compares linkinator's verdicts with ours on the links both report. */
function compare(ours: ContenderResult, theirs: ContenderResult, expected: Map<string, Kind>) {
  const disagreements: Array<{ url: string; expected: Kind | undefined; ours: Verdict; linkinator: Verdict }> = [];
  let both = 0;
  let wrongOurs = 0;
  const only = { ours: [] as string[], linkinator: [] as string[] };
  for (const [url, v] of Object.entries(ours.verdicts)) {
    const w = theirs.verdicts[url];
    const want = expected.get(url);
    if (want && v.state !== expectedState(want)) wrongOurs++;
    if (!w) { only.ours.push(url); continue; }
    both++;
    const same = v.state === w.state || (w.state === 'broken' && v.state === 'timeout');
    const sameFinal = v.state !== 'redirect' || w.state !== 'redirect' || v.final === w.final;
    if (!same || !sameFinal) disagreements.push({ url, expected: want, ours: v, linkinator: w });
  }
  // data: and javascript: values are left out of our report by design (docs/tools.md): not a difference.
  for (const url of Object.keys(theirs.verdicts)) if (!ours.verdicts[url] && !/^(data|javascript):/i.test(url)) only.linkinator.push(url);
  return { both, disagreements, only, wrongOurs };
}

function expectedState(kind: Kind): LinkState {
  if (kind === 'ok' || kind === 'slow' || kind === 'head405' || kind === '429') return 'ok';
  if (kind.endsWith('-ok')) return 'redirect';
  return 'broken';
}

async function freePort(host: string): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, host, () => resolve()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export async function main(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { concurrency: { type: 'string', default: '32' }, runs: { type: 'string', default: '1' }, only: { type: 'string' }, kinds: { type: 'string' }, warm: { type: 'boolean', default: false } },
  });
  const warm = values.warm;
  onlyKinds = values.kinds?.split(',').map((s) => s.trim()).filter(Boolean);
  const concurrency = Number(values.concurrency);
  const runs = Math.max(1, Number(values.runs));
  const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
  const named = (name: string) => !only || only.some((o) => name.includes(o));
  // `--only site` needs every page (the site is made of them); a page is timed alone only when named.
  const pages = PAGES.filter((p) => named(p.name) || named('site'));
  const entry = ensureLinkinator();
  const dir = join(OUT_DIR, 'links');
  mkdirSync(dir, { recursive: true });

  // Origins: 127.0.1.1 … 127.0.1.16 over the server processes; a closed port for "refused".
  const hosts = Array.from({ length: ORIGIN_COUNT }, (_, i) => `127.0.1.${i + 1}`);
  const closedPort = await freePort('127.0.1.1');
  // The servers listen first (their ports name the targets), then get the pages to serve by file.
  const pageFiles: Record<string, string> = Object.fromEntries([...pages.map((p) => [p.name, join(dir, `${p.name}.html`)]), [SITE_INDEX, join(dir, 'index.html')]]);
  for (const file of Object.values(pageFiles)) writeFileSync(file, '');
  const servers = Array.from({ length: SERVER_PROCESSES }, (_, s) => child('server', { hosts: hosts.filter((_, i) => i % SERVER_PROCESSES === s), pageFiles }));
  const exitAll = () => { for (const s of servers) s.kill(); };
  process.once('SIGINT', () => { exitAll(); process.exit(130); });
  try {
    const origins = (await Promise.all(servers.map((s) => message<{ origins: Origin[] }>(s, 'listening')))).flatMap((m) => m.origins);
    origins.sort((a, b) => hosts.indexOf(a.host) - hosts.indexOf(b.host));
    await Promise.all(servers.map((s) => { s.send({ type: 'origins', origins }); return message(s, 'origins-done'); }));

    const out: Record<string, unknown> = {};
    let allPass = true;
    console.log(`links: ours (checkLinks) vs linkinator ${LINKINATOR_VERSION}, concurrency ${concurrency}, ${ORIGIN_COUNT} local origins, ${runs} run(s)${warm ? ', warm processes' : ''}${onlyKinds ? `, kinds ${onlyKinds.join(',')}` : ''}\n`);
    /** Times both contenders on one start URL (a page, or the site's index with depth 1) and prints the figures. */
    const measure = async (name: string, title: string, pageUrl: string, expected: Map<string, Kind>, depth: number, judged: boolean): Promise<void> => {
      const results: Array<{ ours: ContenderResult; linkinator: ContenderResult }> = [];
      for (let r = 0; r < runs; r++) {
        const reset = async () => { await Promise.all(servers.map((s) => { s.send({ type: 'reset' }); return message(s, 'reset-done'); })); };
        await reset();
        const ours = await contender('ours', { pageUrl, concurrency, depth }, warm, reset);
        await reset();
        const linkinator = await contender('linkinator', { entry, pageUrl, concurrency, depth, selfLinked: Object.hasOwn(ours.verdicts, pageUrl) }, warm, reset);
        results.push({ ours, linkinator });
      }
      const pick = (k: 'ours' | 'linkinator') => [...results].sort((a, b) => a[k].seconds - b[k].seconds)[Math.floor((results.length - 1) / 2)]![k];
      const ours = pick('ours');
      const linkinator = pick('linkinator');
      const cmp = compare(ours, linkinator, expected);
      const oursRate = ours.links / ours.seconds;
      const theirRate = linkinator.links / linkinator.seconds;
      const ratio = oursRate / theirRate;
      const pass = ratio >= TARGET_RATIO && cmp.disagreements.length === 0;
      // Verdicts must agree everywhere; the ratio is judged where the run is judged (see the header).
      allPass &&= judged ? pass : cmp.disagreements.length === 0;
      console.log(`${name}: ${title}`);
      console.log(table([
        ['contender', 'links', 'seconds', 'links/s', 'ok', 'redirect', 'broken', 'timeout', 'skipped'],
        ...([['ours', ours], [`linkinator ${LINKINATOR_VERSION}`, linkinator]] as const).map(([n, c]) => [
          n, String(c.links), c.seconds.toFixed(2), (c.links / c.seconds).toFixed(0),
          ...['ok', 'redirect', 'broken', 'timeout', 'skipped'].map((s) => String(c.states[s] ?? 0)),
        ]),
      ]));
      console.log(`  compared on ${cmp.both} links both report: ${cmp.disagreements.length} disagreement(s); only ours ${cmp.only.ours.length}, only linkinator ${cmp.only.linkinator.length}; ours vs the site's own truth: ${cmp.wrongOurs} wrong`);
      for (const d of cmp.disagreements.slice(0, 10)) console.log(`    ${d.url} (${d.expected ?? '?'}): ours ${JSON.stringify(d.ours)}, linkinator ${JSON.stringify(d.linkinator)}`);
      for (const u of cmp.only.linkinator.slice(0, 5)) console.log(`    only linkinator: ${u}`);
      for (const u of cmp.only.ours.slice(0, 5)) console.log(`    only ours: ${u}`);
      // The fixed waits no checker can shorten: Retry-After after a 429 and a slow answer, each after the page fetch.
      const waits = [...expected.values()];
      const floor = (waits.includes('429') ? RETRY_AFTER_S : 0) || (waits.includes('slow') ? SLOW_MS / 1000 : 0);
      const bound = floor > 0 ? ` (a checker taking no time would reach ${(linkinator.seconds / floor).toFixed(1)}x: ${floor} s of waits no checker can skip)` : '';
      console.log(`  ratio ${ratio.toFixed(2)}x${bound} (target ${TARGET_RATIO}x with the same verdicts): ${pass ? 'PASS' : 'MISSED'}${judged ? '' : ' (a single page: for information, not judged; bench/README.md says why)'}\n`);
      out[name] = {
        targets: expected.size, page_url: pageUrl, depth,
        ours: { seconds: ours.seconds, links: ours.links, links_per_second: oursRate, states: ours.states, summary: ours.summary },
        linkinator: { seconds: linkinator.seconds, links: linkinator.links, links_per_second: theirRate, states: linkinator.states },
        ratio, pass, best_possible_ratio: floor > 0 ? linkinator.seconds / floor : null,
        compared: cmp.both, disagreements: cmp.disagreements, only_ours: cmp.only.ours, only_linkinator: cmp.only.linkinator,
        ours_wrong_vs_truth: cmp.wrongOurs,
        runs: results.map((r) => ({ ours_seconds: r.ours.seconds, linkinator_seconds: r.linkinator.seconds })),
      };
    };

    const pageUrlOf = (name: string) => `http://${origins[0]!.host}:${origins[0]!.port}/page/${name}.html`;
    const site = new Map<string, Kind>();
    const pageExpected = new Map<string, Map<string, Kind>>();
    const pageTitles = new Map<string, string>();
    for (const p of pages) {
      const local = rewritePage(p.name, readFileSync(join(corpusDir(), 'links', p.file), 'utf8'), p.url, origins, closedPort, 1 + PAGES.indexOf(p) * 100_000);
      const pageUrl = pageUrlOf(p.name);
      assertLocalOnly(local.html, pageUrl);
      writeFileSync(pageFiles[p.name]!, local.html);
      for (const [u, k] of local.expected) site.set(u, k);
      pageExpected.set(p.name, local.expected);
      pageTitles.set(p.name, `one page, ${local.expected.size} local targets, ${(local.html.length / 1024).toFixed(0)} KiB at ${pageUrl}`);
    }
    const siteRuns = pages.length > 1 && named('site');
    for (const p of pages) if (named(p.name)) await measure(p.name, pageTitles.get(p.name)!, pageUrlOf(p.name), pageExpected.get(p.name)!, 0, !siteRuns);
    if (!siteRuns && pages.length > 0) console.log('(no site run: the ratio is judged on the pages above)\n');
    if (siteRuns) {
      // The site: an index page linking to every corpus page, checked with depth 1 (ours) and recurse (linkinator:
      // it crawls only URLs under the index's path, so only the pages, not the targets). Each page numbers its
      // targets from its own base (1, 100001), so the site's links are the pages' links added up.
      const indexUrl = `http://${origins[0]!.host}:${origins[0]!.port}/page/`;
      writeFileSync(pageFiles[SITE_INDEX]!, `<!doctype html><html><head><title>corpus/links</title></head><body><ul>${pages.map((p) => `<li><a href="${pageUrlOf(p.name)}">${p.name}</a></li>`).join('')}</ul></body></html>`);
      for (const p of pages) site.set(pageUrlOf(p.name), 'ok');
      await measure('site', `the ${pages.length} pages as one site from an index page, depth 1, ${site.size} distinct links at ${indexUrl}`, indexUrl, site, 1, true);
    }
    const file = join(OUT_DIR, `links-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ bench: 'links', commit: gitHead(), concurrency, runs, warm, kinds: onlyKinds ?? 'all', origins: ORIGIN_COUNT, linkinator: LINKINATOR_VERSION, pages: out }, null, 2));
    console.log(`${allPass ? 'PASS' : 'MISSED'} overall; results in ${file}`);
    return 0;
  } finally {
    exitAll();
  }
}

// A child of this bench: `--role server|ours|linkinator`, its input in BENCH_LINKS_PAYLOAD.
if (process.argv[1] === SELF && process.argv[2] === '--role') {
  const role = process.argv[3];
  const payload = JSON.parse(process.env.BENCH_LINKS_PAYLOAD ?? '{}') as Record<string, unknown>;
  if (role === 'server') {
    await serve(payload.hosts as string[], payload.pageFiles as Record<string, string>);
  } else {
    const once = () => role === 'ours'
      ? runOurs(payload.pageUrl as string, payload.concurrency as number, payload.depth as number)
      : runLinkinator(payload.entry as string, payload.pageUrl as string, payload.concurrency as number, payload.selfLinked as boolean, payload.depth as number);
    if (payload.warm) {
      await once();
      const go = new Promise((resolve) => process.once('message', resolve));
      process.send!({ type: 'warm-done' });
      await go;
    }
    const result = await once();
    process.send!({ type: 'result', result }, () => process.exit(0));
  }
}
