/**
 * The broken-link checker (lambdas/tools/links.ts, links-extract.ts; docs/tools.md "broken-link-checker").
 *
 * - Extraction: every link kind on inline pages (srcset candidates, `<base href>`, meta refresh, fragments
 *   deduplicated, resource hints left out), and the fixture site's pages against a count derived with cheerio from
 *   the documented table of link attributes (test/helpers/links-expected.ts; the two large real pages of the corpus:
 *   test/corpus/tools-links.test.ts).
 * - Checking, against HTTP servers on loopback only: ok, 404, 500, redirect chains to a 200 and to a 404, a
 *   refused port, a name that does not resolve (an injected resolver), a time-out, 429 then 200 after
 *   Retry-After, HEAD 405 then GET, guard refusals that open no socket, a depth-1 crawl with its parents (a
 *   page reached by a redirect read once), the maxLinks cap, the per-origin and global concurrency as the servers
 *   see them, a retried link going first of its origin, an origin's connections halved and given back after
 *   repeated 429s, the deadline.
 * Every report is validated against `linksReportSchema` with ajv in strict mode.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { Ajv } from 'ajv';
import { checkLinks, linksReportSchema, type LinkCheckOptions, type LinkResult, type LinksReport } from '../../lambdas/tools/links.ts';
import { extractLinks, parseMetaRefresh, parseSrcset } from '../../lambdas/tools/links-extract.ts';
import { OutboundGuard, type ResolvedAddress } from '../../lambdas/net/guard.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import type { FetchedText, PageFetch } from '../../lambdas/tools/page.ts';
import { toolPage } from '../helpers/tool-page.ts';
import { articleHtml } from '../fixtures/site/article.ts';
import { bookDetails, bookshopPage } from '../fixtures/site/books.ts';
import { fixturePage } from '../fixtures/site/server.ts';
import { cheerioLinks } from '../helpers/links-expected.ts';
import { listen, watchSockets, type LocalServer } from './net-helpers.ts';

const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
const validate = ajv.compile(linksReportSchema);

function valid(report: LinksReport): LinksReport {
  assert.ok(validate(report), `report does not match linksReportSchema: ${ajv.errorsText(validate.errors)}`);
  const counts = { ok: 0, broken: 0, redirect: 0, timeout: 0, skipped: 0 };
  for (const l of report.links) counts[l.state]++;
  for (const [state, n] of Object.entries(counts)) assert.equal(report.summary[state as keyof typeof counts], n, `summary.${state}`);
  assert.equal(report.summary.total, report.links.length);
  return report;
}

/** Names the injected resolver knows; anything else does not resolve (ENOTFOUND), so no DNS query is ever made. */
const FAKE_DNS: Record<string, ResolvedAddress[]> = {
  'site.test': [{ address: '127.0.0.1', family: 4 }],
  'inside.test': [{ address: '10.0.0.7', family: 4 }],
};

async function fakeResolve(name: string): Promise<ResolvedAddress[]> {
  const answer = FAKE_DNS[name.toLowerCase()];
  if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND', hostname: name });
  return answer;
}

const guard = new OutboundGuard({ allow: ['127.0.0.0/8'], resolve: fakeResolve });

function byUrl(report: LinksReport, url: string): LinkResult {
  const l = report.links.find((x) => x.url === url);
  assert.ok(l, `${url} not in the report: ${report.links.map((x) => x.url).join(', ')}`);
  return l;
}

function page(links: string[], url: string): ReturnType<typeof toolPage> {
  return toolPage(`<!doctype html><title>t</title><body>${links.map((h) => `<a href="${h}">x</a>`).join('\n')}</body>`, url);
}

describe('extractLinks', () => {
  it('reads every link kind, resolves against <base href>, drops fragments and resource hints', () => {
    const html = `<!doctype html><html manifest="app.appcache"><head>
      <base href="https://cdn.example.org/base/">
      <base href="https://ignored.example/">
      <link rel="stylesheet" href="css/site.css">
      <link rel="icon" href="/favicon.ico"><link rel="apple-touch-icon" href="touch.png">
      <link rel="canonical" href="https://example.com/page">
      <link rel="preconnect" href="https://fonts.example"><link rel="dns-prefetch" href="https://dns.example">
      <link rel="preconnect stylesheet" href="both.css">
      <meta http-equiv="refresh" content="5; URL='https://example.com/next'">
      <meta property="og:image" content="https://example.com/og.png">
      <script src="app.js"></script>
    </head><body background="bg.png">
      <a href="a.html#one">A</a> <a href="a.html#two">A again</a> <a href="#top">top</a> <a href="">empty</a> <a>none</a>
      <a href="mailto:x@example.com">m</a> <a href="tel:+1555">t</a> <a href="javascript:void(0)">j</a>
      <area href="map.html"> <iframe src="frame.html"></iframe>
      <img src="i.png" srcset="i-1x.png 1x, https://img.example/i,2x.png 2x,   i-3x.png 3x">
      <picture><source srcset="s-a.webp 100w, s-b.webp 200w" type="image/webp"><source src="s.mp4"></picture>
      <video src="v.mp4" poster="poster.jpg"><track src="subs.vtt"></video><audio src="a.mp3"></audio>
      <object data="obj.swf"></object><embed src="e.swf"><input type="image" src="btn.png">
      <blockquote cite="https://quote.example/src">q</blockquote>
      <svg><a xlink:href="svg-link.html"><text>s</text></a></svg>
      <template><a href="inert.html">no</a></template>
      <noscript><img src="noscript.gif" alt=""></noscript>
      <meta name="twitter:site" content="@example">
    </body></html>`;
    const links = extractLinks(html, 'https://example.com/dir/page.html');
    const urls = links.map((l) => l.url);
    const b = 'https://cdn.example.org/base/';
    const expected = [
      `${b}app.appcache`, `${b}css/site.css`, 'https://cdn.example.org/favicon.ico', `${b}touch.png`, 'https://example.com/page',
      'https://example.com/next', `${b}app.js`, `${b}bg.png`, `${b}a.html`, b, 'mailto:x@example.com', 'tel:+1555', 'javascript:void(0)',
      `${b}map.html`, `${b}frame.html`, `${b}i.png`, `${b}i-1x.png`, 'https://img.example/i,2x.png', `${b}i-3x.png`,
      `${b}s-a.webp`, `${b}s-b.webp`, `${b}s.mp4`, `${b}v.mp4`, `${b}poster.jpg`, `${b}subs.vtt`, `${b}a.mp3`, `${b}obj.swf`,
      `${b}e.swf`, `${b}btn.png`, 'https://quote.example/src', `${b}svg-link.html`,
      `${b}both.css`, // a rel that is not only resource hints
      'https://example.com/og.png', `${b}noscript.gif`,
    ];
    assert.deepEqual([...urls].sort(), [...expected].sort());
    assert.ok(!urls.some((u) => /fonts\.example|dns\.example|inert|ignored/.test(u)), urls.join('\n'));
    assert.equal(links.find((l) => l.url === `${b}a.html`)!.navigable, true);
    assert.equal(links.find((l) => l.url === `${b}i.png`)!.navigable, false);
    assert.equal(links.find((l) => l.url === 'https://example.com/next')!.navigable, true);
    // First occurrence order: the manifest (on <html>) comes first, the SVG link then the <noscript> image last.
    assert.equal(urls[0], `${b}app.appcache`);
    assert.deepEqual(urls.slice(-2), [`${b}svg-link.html`, `${b}noscript.gif`]);
  });

  it('parses srcset as the HTML standard does (commas inside URLs, descriptors with parentheses)', () => {
    assert.deepEqual(parseSrcset('a.png 1x, b.png 2x'), ['a.png', 'b.png']);
    // A URL runs to the next whitespace: "a.png,b.png" is one URL (the standard's rule), trailing commas end it.
    assert.deepEqual(parseSrcset('  a.png,b.png 2x,,c.png'), ['a.png,b.png', 'c.png']);
    assert.deepEqual(parseSrcset('a.png, b.png,, c.png'), ['a.png', 'b.png', 'c.png']);
    assert.deepEqual(parseSrcset('https://x/i,1.png 1x, https://x/i,2.png 2x'), ['https://x/i,1.png', 'https://x/i,2.png']);
    assert.deepEqual(parseSrcset('a.png (x, y) 1x, b.png'), ['a.png', 'b.png']);
    assert.deepEqual(parseSrcset(''), []);
    assert.deepEqual(parseSrcset(' , , '), []);
  });

  it('parses meta refresh content as the HTML standard does', () => {
    assert.equal(parseMetaRefresh('0; url=https://a.example/'), 'https://a.example/');
    assert.equal(parseMetaRefresh('3;URL="/next" trailing'), '/next');
    assert.equal(parseMetaRefresh("1, 'q.html'"), 'q.html');
    assert.equal(parseMetaRefresh('2.5 /plain'), '/plain');
    assert.equal(parseMetaRefresh('5'), null);
    assert.equal(parseMetaRefresh('5;'), null);
    assert.equal(parseMetaRefresh('soon; url=/x'), null);
    assert.equal(parseMetaRefresh(''), null);
  });

  it('survives bad input: empty, broken markup, unparseable URLs, a bad page URL', () => {
    assert.deepEqual(extractLinks('', 'https://example.com/'), []);
    const broken = extractLinks('<a href="/x"<<img src=y.png><p><a href="http://exa mple.com/">', 'https://example.com/');
    assert.ok(broken.some((l) => !l.valid && l.url === 'http://exa mple.com/'));
    const relative = extractLinks('<a href="rel.html">r</a><a href="https://abs.example/">a</a>', 'not a url');
    assert.deepEqual(relative.map((l) => [l.url, l.valid]), [['rel.html', false], ['https://abs.example/', true]]);
  });

  for (const [name, html, min] of [
    ['the fixture article', articleHtml(), 19],
    ['the fixture books home page', bookshopPage('/books/')!, 40],
    ['a fixture book page', bookshopPage(`/books/catalogue/${bookDetails()[4]!.slug}/index.html`)!, 4],
    ['the fixture quotes page', fixturePage('/quotes/'), 30],
  ] as const) {
    it(`finds the links of ${name} that cheerio finds`, () => {
      const pageUrl = 'https://site.example/section/page.html';
      const ours = extractLinks(html, pageUrl);
      assert.equal(new Set(ours.map((l) => l.url)).size, ours.length, 'duplicates');
      assert.deepEqual(ours.map((l) => l.url).sort(), [...cheerioLinks(html, pageUrl)].sort());
      assert.ok(ours.length >= min, `${ours.length} links`);
    });
  }
});

/** What the test servers saw, per path: methods in order, and the highest number of requests at once. */
interface Seen {
  requests: Array<{ method: string; path: string; at: number; host: string }>;
  concurrent: number;
  maxConcurrent: number;
}

function newSeen(): Seen {
  return { requests: [], concurrent: 0, maxConcurrent: 0 };
}

/** The test site: each path answers one way. `seen` is shared by every server so global concurrency shows too. */
function handler(seen: Seen, counters: Map<string, number>): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    seen.requests.push({ method: req.method ?? '', path, at: Date.now(), host: req.headers.host ?? '' });
    seen.concurrent++;
    seen.maxConcurrent = Math.max(seen.maxConcurrent, seen.concurrent);
    res.on('close', () => { seen.concurrent--; });
    const n = (counters.get(path) ?? 0) + 1;
    counters.set(path, n);
    const html = (body: string) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(req.method === 'HEAD' ? undefined : body); };
    if (path === '/ok' || path.startsWith('/ok/')) { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(req.method === 'HEAD' ? undefined : 'fine'); return; }
    if (path === '/404') { res.writeHead(404); res.end(); return; }
    if (path === '/500') { res.writeHead(500); res.end(); return; }
    if (path === '/r1') { res.writeHead(301, { location: '/r2' }); res.end(); return; }
    if (path === '/r2') { res.writeHead(302, { location: '/ok/final#frag' }); res.end(); return; }
    if (path === '/rbad') { res.writeHead(301, { location: '/gone' }); res.end(); return; }
    if (path === '/loop') { res.writeHead(302, { location: '/loop' }); res.end(); return; }
    if (path === '/to-inside') { res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }); res.end(); return; }
    if (path === '/head405') {
      if (req.method === 'HEAD') { res.writeHead(405, { allow: 'GET' }); res.end(); return; }
      res.writeHead(200, { 'content-type': 'text/plain' }); res.end('got'); return;
    }
    if (path === '/429' || path === '/429b') {
      if (n === 1) { res.writeHead(429, { 'retry-after': '1' }); res.end(); return; }
      res.writeHead(200); res.end(); return;
    }
    if (path === '/always429') { res.writeHead(429, { 'retry-after': '1' }); res.end(); return; }
    if (path.startsWith('/slow/')) {
      const ms = Number(path.split('/')[2]);
      const t = setTimeout(() => { res.writeHead(200); res.end(); }, ms);
      res.on('close', () => clearTimeout(t));
      return;
    }
    if (path === '/site/index.html') { html('<a href="/site/a.html#x">a</a><img src="/site/b.png"><a href="/ok">ok</a>'); return; }
    if (path === '/site/a.html') { html('<a href="/site/index.html">home</a><a href="/site/c.html">c</a><a href="/404">gone</a><a href="/site/deeper.html">d</a>'); return; }
    if (path === '/site/c.html') { html('<a href="/site/never-read-at-depth-1.html">deep</a>'); return; }
    if (path === '/site/deeper.html') { html('<a href="/site/too-deep.html">x</a>'); return; }
    if (path === '/site/alias.html') { res.writeHead(301, { location: '/site/a.html' }); res.end(); return; }
    if (path === '/site/b.png') { res.writeHead(200, { 'content-type': 'image/png' }); res.end(); return; }
    res.writeHead(404); res.end();
  };
}

describe('checkLinks', () => {
  let a: LocalServer;
  let b: LocalServer;
  let closedPort: number;
  const seen = newSeen();
  const counters = new Map<string, number>();
  const watch = watchSockets();

  before(async () => {
    a = await listen(handler(seen, counters), '127.0.0.1');
    b = await listen(handler(seen, counters), '127.0.0.2');
    const c = await listen(() => undefined, '127.0.0.1');
    closedPort = c.port;
    await c.close();
  });
  after(async () => {
    watch.stop();
    await a.close();
    await b.close();
  });
  beforeEach(() => {
    seen.requests.length = 0;
    seen.maxConcurrent = 0;
    counters.clear();
    watch.reset();
  });

  async function check(links: string[], options: Partial<LinkCheckOptions> = {}, pageUrl = `${a.url}/page`): Promise<LinksReport> {
    const report = valid(await checkLinks(page(links, pageUrl), { guard, ...options }));
    watch.assertLoopbackOnly();
    return report;
  }

  it('tells ok, broken (404, 500), redirects to a 200 and to a 404, a refused port and a name that does not resolve', async () => {
    const refused = `http://127.0.0.1:${closedPort}/x`;
    const r = await check([`${a.url}/ok`, `${a.url}/404`, `${a.url}/500`, `${a.url}/r1`, `${a.url}/rbad`, refused, 'http://nx.test/page', `${b.url}/ok#frag`]);
    const pageUrl = `${a.url}/page`;
    assert.deepEqual(byUrl(r, `${a.url}/ok`), { url: `${a.url}/ok`, status: 200, state: 'ok', redirect_chain: [], parents: [pageUrl], error: null });
    const nf = byUrl(r, `${a.url}/404`);
    assert.deepEqual([nf.state, nf.status, nf.error], ['broken', 404, 'http_status: HTTP 404']);
    assert.deepEqual([byUrl(r, `${a.url}/500`).state, byUrl(r, `${a.url}/500`).status], ['broken', 500]);
    const red = byUrl(r, `${a.url}/r1`);
    assert.deepEqual([red.state, red.status, red.error], ['redirect', 200, null]);
    assert.deepEqual(red.redirect_chain, [`${a.url}/r1`, `${a.url}/r2`, `${a.url}/ok/final`]);
    const bad = byUrl(r, `${a.url}/rbad`);
    assert.deepEqual([bad.state, bad.status], ['broken', 404]);
    assert.deepEqual(bad.redirect_chain, [`${a.url}/rbad`, `${a.url}/gone`]);
    const ref = byUrl(r, refused);
    assert.equal(ref.state, 'broken');
    assert.equal(ref.status, null);
    assert.match(ref.error!, /^refused: /);
    const dns = byUrl(r, 'http://nx.test/page');
    assert.equal(dns.state, 'broken');
    assert.match(dns.error!, /^dns: nx\.test does not resolve/);
    assert.equal(byUrl(r, `${b.url}/ok`).state, 'ok', 'the fragment is dropped');
    // A 404 on HEAD is tried again with GET (linkinator's rule): the verdict stands.
    assert.deepEqual(seen.requests.filter((q) => q.path === '/404').map((q) => q.method), ['HEAD', 'GET']);
    assert.deepEqual(seen.requests.filter((q) => q.path === '/ok' && q.host === new URL(a.url).host).map((q) => q.method), ['HEAD']);
    assert.deepEqual(r.summary, { ...r.summary, total: 8, ok: 2, redirect: 1, broken: 5, timeout: 0, skipped: 0, found: 8, over_limit: 0, pages_crawled: 1 });
  });

  it('follows a HEAD 405 with a GET, and a redirect loop is broken', async () => {
    const r = await check([`${a.url}/head405`, `${a.url}/loop`]);
    assert.deepEqual([byUrl(r, `${a.url}/head405`).state, byUrl(r, `${a.url}/head405`).status], ['ok', 200]);
    assert.deepEqual(seen.requests.filter((q) => q.path === '/head405').map((q) => q.method), ['HEAD', 'GET']);
    const loop = byUrl(r, `${a.url}/loop`);
    assert.equal(loop.state, 'broken');
    assert.match(loop.error!, /^redirects: more than 10 redirects/);
  });

  it('times out a link that does not answer within timeoutMs', async () => {
    const t0 = Date.now();
    const r = await check([`${a.url}/slow/3000`, `${a.url}/ok`], { timeoutMs: 300 });
    const slow = byUrl(r, `${a.url}/slow/3000`);
    assert.deepEqual([slow.state, slow.status], ['timeout', null]);
    assert.match(slow.error!, /^timeout: /);
    assert.equal(byUrl(r, `${a.url}/ok`).state, 'ok');
    assert.ok(Date.now() - t0 < 2500, `took ${Date.now() - t0} ms`);
    // No GET after a HEAD that timed out: it would only double the wait.
    assert.deepEqual(seen.requests.filter((q) => q.path === '/slow/3000').map((q) => q.method), ['HEAD']);
  });

  it('retries a 429 after its Retry-After; a persistent 429 is skipped', async () => {
    const r = await check([`${a.url}/429`, `${a.url}/always429`]);
    const ok = byUrl(r, `${a.url}/429`);
    assert.deepEqual([ok.state, ok.status], ['ok', 200]);
    const times = seen.requests.filter((q) => q.path === '/429').map((q) => q.at);
    assert.equal(times.length, 2);
    assert.ok(times[1]! - times[0]! >= 950, `retried after ${times[1]! - times[0]!} ms`);
    const no = byUrl(r, `${a.url}/always429`);
    assert.deepEqual([no.state, no.status], ['skipped', 429]);
    assert.match(no.error!, /^rate_limited: still HTTP 429 after 2 retries/);
    assert.equal(seen.requests.filter((q) => q.path === '/always429').length, 3);
  });

  it('halves the connections of an origin that answers 429 twice within a Retry-After, not after one 429', async () => {
    const slow = Array.from({ length: 5 }, (_, i) => `${a.url}/slow/150?${i}`);
    const one = await check([`${a.url}/429`, ...slow], { perHostConcurrency: 2 });
    assert.equal(one.summary.ok, 6);
    let starts = seen.requests.filter((q) => q.path === '/slow/150').map((q) => q.at);
    // One 429: the second slow request went out as soon as the 429 came back, before the first had finished.
    assert.ok(starts[1]! - starts[0]! < 100, `second request started ${starts[1]! - starts[0]!} ms after the first`);

    seen.requests.length = 0;
    counters.clear();
    const two = await check([`${a.url}/429`, `${a.url}/429b`, ...slow], { perHostConcurrency: 2 });
    assert.equal(two.summary.ok, 7);
    starts = seen.requests.filter((q) => q.path === '/slow/150').map((q) => q.at);
    assert.equal(starts.length, 5);
    // Two 429s: 2 connections become 1, so the slow requests go one after the other.
    for (let i = 1; i < 5; i++) assert.ok(starts[i]! - starts[i - 1]! >= 140, `request ${i} started ${starts[i]! - starts[i - 1]!} ms after the one before`);
    for (const p of ['/429', '/429b']) {
      const t = seen.requests.filter((q) => q.path === p).map((q) => q.at);
      assert.equal(t.length, 2);
      assert.ok(t[1]! - t[0]! >= 950, `${p} retried after ${t[1]! - t[0]!} ms`);
    }
  });

  it('does not retry a 429 whose Retry-After is past the deadline', async () => {
    const r = await check([`${a.url}/always429`], { deadlineMs: 800 });
    const l = byUrl(r, `${a.url}/always429`);
    assert.equal(l.state, 'skipped');
    assert.match(l.error!, /^rate_limited: HTTP 429, Retry-After 1 s is past the time budget/);
    assert.equal(seen.requests.length, 1);
  });

  it('skips links the guard refuses without opening a socket, and other schemes', async () => {
    const r = await valid(await checkLinks(page(['http://10.0.0.1/admin', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:1/', 'mailto:a@example.com', 'ftp://files.example/x'], 'https://example.com/'), { guard }));
    watch.assertNoSocket();
    const ten = byUrl(r, 'http://10.0.0.1/admin');
    assert.equal(ten.state, 'skipped');
    assert.match(ten.error!, /^forbidden: Refused http:\/\/10\.0\.0\.1\/admin: 10\.0\.0\.1 is a private address/);
    assert.match(byUrl(r, 'http://169.254.169.254/latest/meta-data/').error!, /^forbidden: .*cloud metadata/);
    assert.match(byUrl(r, 'http://[::1]:1/').error!, /^forbidden: .*loopback/);
    assert.deepEqual([byUrl(r, 'mailto:a@example.com').state, byUrl(r, 'mailto:a@example.com').error], ['skipped', 'scheme: mailto links are not checked']);
    assert.equal(byUrl(r, 'ftp://files.example/x').error, 'scheme: ftp links are not checked');
  });

  it('skips a name that resolves inside and a redirect into the metadata address, connecting to neither', async () => {
    const r = await check(['http://inside.test/x', `${a.url}/to-inside`]);
    assert.match(byUrl(r, 'http://inside.test/x').error!, /^forbidden: Refused inside\.test: it resolves to a private address/);
    const hop = byUrl(r, `${a.url}/to-inside`);
    assert.equal(hop.state, 'skipped');
    assert.deepEqual(hop.redirect_chain, [`${a.url}/to-inside`, 'http://169.254.169.254/latest/meta-data/']);
    assert.ok(!watch.attempts.includes('169.254.169.254') && !watch.connected.some((x) => !x.startsWith('127.')));
  });

  it('crawls same-site pages to depth 1 and records every parent', async () => {
    const fetcher = new Fetcher(guard, { retries: 0, timeoutMs: 5000 });
    const fetched: string[] = [];
    const fetchPage: PageFetch = async (url): Promise<FetchedText | null> => {
      fetched.push(url);
      const p = await fetcher.fetch(url);
      return { url: p.url, status: p.status, headers: p.headers, contentType: p.contentType, text: p.text };
    };
    try {
      const start = `http://site.test:${a.port}/site/index.html`;
      const html = '<a href="/site/a.html#x">a</a><img src="/site/b.png"><a href="/ok">ok</a>';
      const r = valid(await checkLinks(toolPage(html, start), { guard, depth: 1, fetchPage }));
      watch.assertLoopbackOnly();
      const s = `http://site.test:${a.port}`;
      assert.deepEqual(fetched, [`${s}/site/a.html`], 'only the HTML page linked by an <a> is read (not the image, not /ok)');
      assert.deepEqual(r.links.map((l) => l.url), [
        `${s}/site/a.html`, `${s}/site/b.png`, `${s}/ok`, // the page's own links
        start, `${s}/site/c.html`, `${s}/404`, `${s}/site/deeper.html`, // found on a.html
      ]);
      assert.deepEqual(byUrl(r, start).parents, [`${s}/site/a.html`]);
      assert.deepEqual(byUrl(r, `${s}/404`).parents, [`${s}/site/a.html`]);
      assert.deepEqual(byUrl(r, `${s}/site/a.html`).parents, [start]);
      assert.equal(byUrl(r, `${s}/404`).state, 'broken');
      assert.equal(r.summary.pages_crawled, 2);
      assert.ok(!r.links.some((l) => l.url.includes('never-read') || l.url.includes('too-deep')));

      // Depth 2: c.html and deeper.html are read too, the start page (linked back from a.html) is not read again.
      fetched.length = 0;
      const r2 = valid(await checkLinks(toolPage(html, start), { guard, depth: 2, fetchPage }));
      assert.deepEqual([...fetched].sort(), [`${s}/site/a.html`, `${s}/site/c.html`, `${s}/site/deeper.html`]);
      assert.equal(r2.summary.pages_crawled, 4);
      assert.deepEqual(byUrl(r2, `${s}/site/too-deep.html`).parents, [`${s}/site/deeper.html`]);
      assert.equal(byUrl(r2, `${s}/site/too-deep.html`).state, 'broken');
      assert.ok(r2.links.some((l) => l.url.endsWith('/site/never-read-at-depth-1.html')));

      // Depth 0 reads no other page.
      fetched.length = 0;
      const r0 = valid(await checkLinks(toolPage(html, start), { guard, depth: 0, fetchPage }));
      assert.deepEqual(fetched, []);
      assert.equal(r0.links.length, 3);
    } finally {
      await fetcher.close();
    }
  });

  it('reads a same-site page once when a redirect leads to it too (the request queue marks the target seen)', async () => {
    const fetcher = new Fetcher(guard, { retries: 0, timeoutMs: 5000 });
    const fetched: string[] = [];
    const fetchPage: PageFetch = async (url): Promise<FetchedText | null> => {
      fetched.push(url);
      const p = await fetcher.fetch(url);
      return { url: p.url, status: p.status, headers: p.headers, contentType: p.contentType, text: p.text };
    };
    try {
      const s = `http://site.test:${a.port}`;
      const start = `${s}/site/index.html`;
      const r = valid(await checkLinks(toolPage('<a href="/site/alias.html">alias</a> <a href="/site/a.html">a</a>', start), { guard, depth: 1, fetchPage }));
      assert.deepEqual(byUrl(r, `${s}/site/alias.html`).redirect_chain, [`${s}/site/alias.html`, `${s}/site/a.html`]);
      assert.equal(r.summary.pages_crawled, 2, 'the start page and a.html, once');
      assert.ok(fetched.length >= 1 && fetched.length <= 2, fetched.join(', '));
      assert.equal(fetched.filter((u) => u === `${s}/site/a.html`).length <= 1, true);
      // a.html's links, each once, with a.html as their one parent.
      for (const u of [`${s}/site/c.html`, `${s}/404`, `${s}/site/deeper.html`]) assert.deepEqual(byUrl(r, u).parents, [`${s}/site/a.html`]);
      assert.equal(new Set(r.links.map((l) => l.url)).size, r.links.length);
    } finally {
      await fetcher.close();
    }
  });

  it('a link retried after a 429 goes before the links of its origin still waiting', async () => {
    const slow = Array.from({ length: 12 }, (_, i) => `${a.url}/slow/150?${i}`);
    const r = await check([`${a.url}/429`, ...slow], { perHostConcurrency: 1 });
    assert.equal(r.summary.ok, 13);
    const retried = seen.requests.filter((q) => q.path === '/429').map((q) => q.at);
    assert.equal(retried.length, 2);
    const starts = seen.requests.filter((q) => q.path === '/slow/150').map((q) => q.at);
    // One at a time the slow links take 1.8 s; the retry, due after 1 s, waits only for the one running then.
    const after = starts.filter((t) => t >= retried[1]!).length;
    assert.ok(after >= 3, `${after} slow links went after the retry`);
  });

  it('gives a throttled origin its connections back once the later Retry-After has passed', async () => {
    const slow = Array.from({ length: 16 }, (_, i) => `${a.url}/slow/150?${i}`);
    const r = await check([`${a.url}/429`, `${a.url}/429b`, ...slow], { perHostConcurrency: 2 });
    assert.equal(r.summary.ok, 18);
    const t0 = seen.requests[0]!.at;
    const starts = seen.requests.filter((q) => q.path === '/slow/150').map((q) => q.at - t0);
    const throttled = starts.filter((t) => t < 850);
    assert.ok(throttled.length >= 3, `${throttled.length} started while throttled`);
    for (let i = 1; i < throttled.length; i++) assert.ok(throttled[i]! - throttled[i - 1]! >= 140, `one at a time while throttled: ${starts.join(', ')}`);
    // After the Retry-After (1 s) two at a time again: one at a time, every start waits for the one before (150 ms);
    // two at a time, at least every other start comes while the one before still runs (staggered on a quiet machine,
    // ~75 ms apart; in pairs on a loaded one, ~15 ms then ~140 ms apart).
    const late = starts.filter((t) => t > 1000);
    const gaps = late.slice(1).map((t, i) => t - late[i]!);
    assert.ok(late.length >= 4 && gaps.filter((g) => g < 100).length * 2 >= gaps.length, `two at a time after the Retry-After: ${starts.join(', ')}`);
  });

  it('checks at most maxLinks links and counts the rest', async () => {
    const links = Array.from({ length: 10 }, (_, i) => `${a.url}/ok/${i}`);
    const r = await check([...links, 'mailto:x@example.com', 'javascript:void(0)', 'data:text/plain,hi'], { maxLinks: 3 });
    assert.deepEqual(r.links.map((l) => l.url), links.slice(0, 3));
    assert.equal(r.summary.found, 11, 'data: and javascript: are not links');
    assert.equal(r.summary.over_limit, 8);
    assert.equal(seen.requests.length, 3);
  });

  it('reads a 5 MB page with 20,000 links and checks the first 500 (the default cap)', async () => {
    const filler = '<p>' + 'lorem ipsum dolor sit amet '.repeat(8) + '</p>';
    const parts: string[] = [];
    for (let i = 0; i < 20_000; i++) parts.push(`<a href="/ok/${i}#f">${i}</a>${filler}`);
    const html = `<!doctype html><title>big</title><body>${parts.join('\n')}</body>`;
    assert.ok(html.length > 5_000_000, `${html.length} characters`);
    const r = valid(await checkLinks(toolPage(html, `${a.url}/big`), { guard }));
    assert.equal(r.links.length, 500);
    assert.deepEqual([r.summary.found, r.summary.over_limit, r.summary.ok], [20_000, 19_500, 500]);
    assert.equal(r.links[499]!.url, `${a.url}/ok/499`);
    assert.equal(seen.requests.length, 500);
  });

  it('keeps at most perHostConcurrency requests per origin, and concurrency in all', async () => {
    const links = Array.from({ length: 24 }, (_, i) => `${a.url}/slow/60?${i}`);
    await check(links, { perHostConcurrency: 3 });
    assert.equal(seen.requests.length, 24);
    assert.equal(seen.maxConcurrent, 3);

    seen.requests.length = 0;
    seen.maxConcurrent = 0;
    const two = [...links, ...Array.from({ length: 24 }, (_, i) => `${b.url}/slow/60?${i}`)];
    await check(two, { perHostConcurrency: 4, concurrency: 5 });
    assert.equal(seen.requests.length, 48);
    assert.equal(seen.maxConcurrent, 5);
    // Both origins were served from the start, not one after the other.
    const firstB = seen.requests.findIndex((q) => q.host.startsWith('127.0.0.2'));
    assert.ok(firstB >= 0 && firstB < 5, `first request to the second origin was #${firstB}`);
  });

  it('stops at the deadline: links not done are skipped with time_budget', async () => {
    const t0 = Date.now();
    const links = [`${a.url}/ok`, ...Array.from({ length: 6 }, (_, i) => `${a.url}/slow/5000?${i}`)];
    const r = await check(links, { deadlineMs: 400, perHostConcurrency: 2 });
    const took = Date.now() - t0;
    assert.ok(took < 1500, `took ${took} ms`);
    assert.equal(byUrl(r, `${a.url}/ok`).state, 'ok');
    const slow = r.links.filter((l) => l.url.includes('/slow/'));
    assert.equal(slow.length, 6);
    for (const l of slow) assert.deepEqual([l.state, l.status, l.error], ['skipped', null, 'time_budget: not checked within the time budget']);
    assert.equal(r.limits.deadline_ms, 400);
  });

  it('stops at the deadline with thousands of links waiting: they are left out at once, not started', async () => {
    const t0 = Date.now();
    const links = Array.from({ length: 3_000 }, (_, i) => `${a.url}/slow/5000?${i}`);
    const r = await check(links, { deadlineMs: 300, maxLinks: 5_000 });
    assert.ok(Date.now() - t0 < 1500, `took ${Date.now() - t0} ms`);
    assert.equal(r.summary.skipped, 3_000);
    assert.ok(r.links.every((l) => l.error === 'time_budget: not checked within the time budget'));
    // At most the first perHostConcurrency (4) were started; on a loaded machine some may not reach the server
    // before the deadline aborts them (0 of 4 seen in a run at load 16), so the count is a bound, not exact.
    assert.ok(seen.requests.length <= 4, `only the first perHostConcurrency requests were sent: ${seen.requests.length}`);
  });

  it('stops when the caller aborts', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const r = await check([`${a.url}/slow/5000`], { signal: ac.signal });
    assert.equal(r.links[0]!.state, 'skipped');
    assert.ok(r.summary.duration_ms < 1500);
  });

  it('reads no links from a non-HTML or empty page, and clamps out-of-range options', async () => {
    const img = valid(await checkLinks(toolPage('<a href="http://127.0.0.1:1/">x</a>', a.url, { contentType: 'image/png' }), { guard }));
    assert.deepEqual([img.links, img.summary.pages_crawled], [[], 0]);
    const empty = valid(await checkLinks(toolPage('', a.url), { guard, depth: 99, maxLinks: 1e9, deadlineMs: 1e9, timeoutMs: -5 }));
    assert.deepEqual(empty.limits, { depth: 3, max_links: 10000, deadline_ms: 20000, timeout_ms: 100 });
    assert.equal(empty.links.length, 0);
    const invalid = valid(await checkLinks(toolPage('<a href="http://exa mple.com/">x</a>', a.url), { guard }));
    assert.deepEqual([invalid.links[0]!.state, invalid.links[0]!.error], ['broken', 'invalid_url: not a valid URL']);
  });
});
