/**
 * The browser engine with real Chromium (headless, the binary of @sparticuz/chromium) on the fixture
 * site's script-rendered variants: the same rows as the lightweight engine on the static pages, actions,
 * every pagination, eval fields, API capture, image blocking, the outbound guard for every request a page
 * makes, crashes, out-of-memory pages, time-outs, and screenshots. test/run.ts runs this file in a
 * network namespace with only loopback.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runHeavy, runLightweight as runConfig } from '../../lambdas/engine/engines.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { screenshot } from '../../lambdas/engine/browser/screenshot.ts';
import { chooseEngine } from '../../lambdas/engine/choose.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { rejectsWithCode, serveInline } from './helpers.ts';
import { SEARCH_ACTIONS_YAML, searchActionsExpected } from '../fixtures/site/search-actions.ts';

const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });
const quoteFields = `extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
    - { name: about, selector: "a[href*='/author/']", type: link }
    - { name: tags, selector: a.tag, multiple: true }
`;

/** PNG width and height from the IHDR chunk. */
function pngSize(b: Buffer): { width: number; height: number } {
  assert.equal(b.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', 'a PNG signature');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe('browser engine (real Chromium)', () => {
  let site: FixtureSite;
  let host: BrowserHost;
  before(async () => {
    site = await startFixtureSite();
    host = new BrowserHost({ guard });
  });
  after(async () => {
    await host?.close();
    await site?.close();
  });

  it('the same config gives the same rows: lightweight on the static pages, heavy on the script-rendered ones', async () => {
    const yaml = (path: string, engine: string) => `target: { url: "${site.url}${path}", engine: ${engine}, browser: { wait_selector: div.quote, timeout: 5000 } }
${quoteFields}pagination: { type: click, selector: "li.next a", max_pages: 3 }
`;
    const light = await runConfig(parseConfig(yaml('/quotes/', 'lightweight')), { outbound: { allow: ['127.0.0.0/8'] } });
    const heavy = await runHeavy(parseConfig(yaml('/js/quotes/', 'heavy')), { host });
    assert.equal(light.rows.length, 30);
    assert.deepEqual(heavy.rows, light.rows);
    assert.deepEqual(heavy.rows.map((r) => r.text), allQuotes().slice(0, 30).map((q) => q.text));
    assert.equal(heavy.engine, 'heavy');
    assert.equal(heavy.apiDiscovered, true, 'the items came from /api/quotes/');
    assert.ok(heavy.apiCapture.some((c) => c.url.includes('/api/quotes/?page=1') && c.method === 'GET' && c.status === 200 && c.sample.startsWith('{')));
    assert.equal(light.pagesScraped, 3);
  });

  it('load-more pagination clicks until the control disappears', async () => {
    const r = await runHeavy(parseConfig(`target: { url: "${site.url}/js/load-more/", engine: heavy, browser: { wait_selector: div.quote } }
${quoteFields}pagination: { type: click, selector: button.load-more, max_pages: 50 }
`), { host });
    assert.deepEqual(r.rows.map((x) => x.text), allQuotes().map((q) => q.text), 'all 100 quotes, each once, in order');
  });

  it('infinite scroll backed by a JSON API, with max_items', async () => {
    const all = await runHeavy(parseConfig(`target: { url: "${site.url}/js/scroll/", engine: heavy, browser: { wait_selector: div.quote } }
${quoteFields}pagination: { type: scroll_infinite, max_pages: 30, wait_after: 2000 }
`), { host });
    assert.deepEqual(all.rows.map((x) => x.text), allQuotes().map((q) => q.text));
    assert.equal(all.apiDiscovered, true);
    const some = await runHeavy(parseConfig(`target: { url: "${site.url}/js/scroll/", engine: heavy, browser: { wait_selector: div.quote } }
${quoteFields}pagination: { type: scroll_infinite, max_pages: 30, wait_after: 2000, stop_condition: { max_items: 25 } }
`), { host });
    assert.equal(some.rows.length, 25);
  });

  it('actions: type, select and click reveal results that only exist after them', async () => {
    const r = await runHeavy(parseConfig(`target: { url: "${site.url}/js/search/", engine: heavy }
${quoteFields}${SEARCH_ACTIONS_YAML}`), { host });
    const expected = searchActionsExpected();
    assert.ok(expected.length > 0);
    assert.deepEqual(r.rows.map((x) => x.text), expected.map((q) => q.text));
  });

  it('each action does what it says: hover, scroll (pixels and full), keyboard, script, click, in order', async () => {
    // Each listener appends an item naming what happened, so the rows show which actions ran and in what order.
    // The controls and the log stay fixed, so neither the log's growth nor scrolling moves anything under the mouse.
    const page = `<!DOCTYPE html><html><body style="margin:0">
<div style="position:fixed;top:0;left:0"><button id="h" style="height:40px">hover me</button><button id="c">click me</button><ul id="log"></ul></div>
<div style="height:5000px"></div>
<script>
  var log = document.getElementById('log');
  function add(t) { var li = document.createElement('li'); li.className = 'item'; li.textContent = t; log.appendChild(li); }
  document.getElementById('h').addEventListener('mouseenter', function () { add('hover'); }, { once: true });
  document.getElementById('c').addEventListener('click', function () { add('click'); });
  document.addEventListener('keydown', function (e) { add('key:' + e.key); });
  var last = 0;
  window.addEventListener('scroll', function () {
    var y = Math.round(window.scrollY);
    if (y !== last) { last = y; setTimeout(function () { if (Math.round(window.scrollY) === y) add('scroll:' + (y >= document.documentElement.scrollHeight - window.innerHeight - 1 ? 'bottom' : y)); }, 100); }
  });
</script></body></html>`;
    const inline = await serveInline({ '/actions': page });
    try {
      const r = await runHeavy(parseConfig(`target: { url: "${inline.url}/actions", engine: heavy }
extract:
  container: li.item
  fields:
    - { name: what, selector: ":scope", type: text }
actions:
  - { type: hover, selector: "#h" }
  - { type: scroll, direction: down, amount: 300, wait_after: 400 }
  - { type: keyboard, key: "PageUp" }
  - { type: script, script: "add('script:' + document.title.length)" }
  - { type: scroll, direction: down, amount: full, wait_after: 400 }
  - { type: click, selector: "#c" }
`), { host });
      const what = r.rows.map((x) => x.what);
      // PageUp scrolls back to the top (a settled scroll to 0 may be logged after the key).
      assert.deepEqual(what.filter((w) => w !== 'scroll:0'), ['hover', 'scroll:300', 'key:PageUp', 'script:0', 'scroll:bottom', 'click'], what.join(', '));
    } finally {
      await inline.close();
    }
  });

  it('url pagination in the browser: {page} from 2 to max_pages, rendered pages awaited', async () => {
    const r = await runHeavy(parseConfig(`target: { url: "${site.url}/js/quotes/", engine: heavy, browser: { wait_selector: div.quote } }
${quoteFields}pagination: { type: url, url_pattern: "${site.url}/js/quotes/page/{page}/", max_pages: 3 }
`), { host });
    assert.deepEqual(r.rows.map((x) => x.text), allQuotes().slice(0, 30).map((q) => q.text));
    assert.equal(r.pagesScraped, 3);
  });

  it('an action whose selector matches nothing fails the run, naming the action index and selector', async () => {
    await assert.rejects(runHeavy(parseConfig(`target: { url: "${site.url}/js/search/", engine: heavy }
${quoteFields}actions:
  - { type: type, selector: "#q", value: "x" }
  - { type: click, selector: "#nope" }
`), { host }), (e: Error & { code?: string }) => e.code === 'action_failed' && /actions\[1\] \(click "#nope"\): no element matches the selector "#nope"/.test(e.message));
  });

  it('a click or a hover on an element that is there but hidden fails the run with action_failed saying so, not a browser error', async () => {
    const inline = await serveInline({
      '/hidden': '<!DOCTYPE html><html><body><ul><li class="item">one</li></ul><button id="gone" style="display:none">more</button><a id="zero" href="#" style="position:absolute;width:0;height:0;overflow:hidden"></a></body></html>',
    });
    try {
      for (const [type, selector] of [['click', '#gone'], ['hover', '#zero']] as const) {
        await assert.rejects(
          runHeavy(parseConfig(`target: { url: "${inline.url}/hidden", engine: heavy }
extract:
  container: li.item
  fields:
    - { name: what, selector: ":scope", type: text }
actions:
  - { type: ${type}, selector: "${selector}" }
`), { host }),
          (e: Error & { code?: string }) => {
            assert.equal(e.code, 'action_failed', e.message);
            assert.match(e.message, new RegExp(`^actions\\[0\\] \\(${type} "${selector}"\\): the element matched by "${selector}" cannot be ${type === 'click' ? 'clicked' : 'hovered'}: it is hidden or has no size`));
            return true;
          },
        );
      }
    } finally {
      await inline.close();
    }
  });

  it('eval fields run in the page on the same items; a throwing script gives the default and a warning', async () => {
    const r = await runHeavy(parseConfig(`target: { url: "${site.url}/js/quotes/", engine: heavy, browser: { wait_selector: div.quote } }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
    - { name: tag_count, type: eval, script: "el.querySelectorAll('a.tag').length" }
    - { name: author_upper, type: eval, selector: small.author, script: "field.textContent.toUpperCase()" }
    - { name: body, type: eval, script: "const t = el.querySelector('.text'); return t ? t.textContent.length : 0;" }
    - { name: broken, type: eval, script: "el.nope.deeper", default: "n/a" }
    - { name: location, type: eval, script: "window.location.pathname" }
`), { host });
    const quotes = allQuotes().slice(0, 10);
    assert.deepEqual(r.rows.map((x) => x.tag_count), quotes.map((q) => q.tags.length));
    assert.deepEqual(r.rows.map((x) => x.author_upper), quotes.map((q) => q.author.toUpperCase()));
    assert.deepEqual(r.rows.map((x) => x.body), quotes.map((q) => q.text.length));
    assert.ok(r.rows.every((x) => x.broken === 'n/a' && x.location === '/js/quotes/'));
    assert.ok(r.warnings.some((w) => /eval field "broken": TypeError/.test(w)), r.warnings.join('\n'));
  });

  it('eval fields of items spread over sibling rows (following_siblings) get the container match as their item', async () => {
    const r = await runHeavy(parseConfig(`target: { url: "${site.url}/tableful/", engine: heavy }
extract:
  container: "tr[style]"
  following_siblings: 1
  fields:
    - { name: tags, selector: "tr[style] + tr a", multiple: true }
    - { name: style, type: eval, script: "item.getAttribute('style')" }
    - { name: links_in_el, type: eval, script: "el.querySelectorAll('a').length" }
    - { name: links_after, type: eval, script: "el.nextElementSibling.querySelectorAll('a').length" }
    - { name: cell, type: eval, selector: td, script: "field.getAttribute('style')" }
    - { name: in_next_row, type: eval, selector: "tr[style] + tr a", script: "field", default: none }
`), { host });
    const quotes = allQuotes().slice(0, 10);
    assert.deepEqual(r.rows.map((x) => x.tags), quotes.map((q) => q.tags), 'the extraction reads both rows');
    assert.ok(r.rows.every((x) => x.style === 'border-bottom: 0px; ' && x.links_in_el === 0 && x.cell === 'padding-top: 2em;'), JSON.stringify(r.rows[0]));
    assert.deepEqual(r.rows.map((x) => x.links_after), quotes.map((q) => q.tags.length), 'item i of the page is container match i');
    assert.ok(r.rows.every((x) => x.in_next_row === 'none'), 'an eval field\'s selector searches inside the container match only');
  });

  it('images, media and fonts are not loaded unless a script may need them', async () => {
    const before = [...site.hits.keys()].filter((k) => k.includes('/books/media/')).length;
    await runHeavy(parseConfig(`target: { url: "${site.url}/books/", engine: heavy }\nextract: { container: article.product_pod, fields: [{ name: t, selector: h3 a }] }\n`), { host });
    assert.equal([...site.hits.keys()].filter((k) => k.includes('/books/media/')).length, before, 'no image requested');
    await runHeavy(parseConfig(`target: { url: "${site.url}/books/", engine: heavy }\nextract: { container: article.product_pod, fields: [{ name: w, type: eval, script: "el.querySelector('img').complete" }] }\n`), { host });
    assert.ok([...site.hits.keys()].filter((k) => k.includes('/books/media/')).length > before, 'images loaded for an eval field');
  });

  it('every request of a page goes through the guard: metadata and private addresses never answer', async () => {
    const r = await runHeavy(parseConfig(`target: { url: "${site.url}/js/leaky/", engine: heavy }
extract: { type: single, fields: [{ name: meta, selector: "#meta" }, { name: private, selector: "#private" }, { name: item, selector: .item }] }
actions: [{ type: script, script: "new Promise((r) => setTimeout(r, 1500))" }]
`), { host });
    assert.deepEqual(r.rows, [{ meta: 'blocked', private: 'blocked', item: 'visible item' }]);
    // The job's own proxy recorded both refusals: the warning names them.
    const warning = r.warnings.find((w) => /outbound guard refused/.test(w)) ?? '';
    for (const t of ['169.254.169.254', '10.0.0.1']) assert.ok(warning.includes(t), `${t} refused: ${r.warnings.join(' | ')}`);
    await assert.rejects(runHeavy(parseConfig(`target: { url: "http://169.254.169.254/latest/", engine: heavy }\n${quoteFields}`), { host }), { code: 'target_forbidden' });
    const closed = new BrowserHost({ guard: new OutboundGuard() });
    try {
      await assert.rejects(runHeavy(parseConfig(`target: { url: "http://localhost:${site.port}/quotes/", engine: heavy }\n${quoteFields}`), { host: closed }), { code: 'target_forbidden' });
    } finally {
      await closed.close();
    }
  });

  it('wait_selector that never appears: a warning, not a hang; a late one is awaited', async () => {
    const t0 = performance.now();
    const r = await runHeavy(parseConfig(`target: { url: "${site.url}/js/late/?ms=60000", engine: heavy, browser: { wait_selector: .item, timeout: 700 } }\nextract: { container: .item, fields: [{ name: t }] }\n`), { host });
    assert.ok(performance.now() - t0 < 10_000);
    assert.deepEqual(r.rows, []);
    assert.ok(r.warnings.some((w) => /wait_selector "\.item" did not appear within 700 ms/.test(w)));
    const late = await runHeavy(parseConfig(`target: { url: "${site.url}/js/late/?ms=800", engine: heavy, browser: { wait_selector: .item, timeout: 5000 } }\nextract: { container: .item, fields: [{ name: t }] }\n`), { host });
    assert.deepEqual(late.rows, [{ t: 'late item' }]);
  });

  it('a page that allocates without bound fails its run; the browser lives on', async () => {
    await assert.rejects(runHeavy(parseConfig(`target: { url: "${site.url}/js/oom/", engine: heavy }
extract: { container: .item, fields: [{ name: t }] }
actions: [{ type: script, script: "new Promise((r) => setTimeout(r, 20000))" }]
`), { host, navigationTimeoutMs: 30_000 }), (e: Error & { code?: string }) => ['page_crashed', 'browser_crashed', 'action_failed'].includes(e.code ?? '') && e.message.length > 20);
    const after = await runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }\n${quoteFields}`), { host });
    assert.equal(after.rows.length, 10, 'the next run works');
  });

  it('aborting (the job time limit) stops a run promptly', async () => {
    const c = new AbortController();
    setTimeout(() => c.abort(Object.assign(new Error('The run took longer than the limit'), { code: 'job_timeout', details: [] })), 500);
    const t0 = performance.now();
    await assert.rejects(runHeavy(parseConfig(`target: { url: "${site.url}/hang/", engine: heavy }\n${quoteFields}`), { host, signal: c.signal }), /longer than the limit/);
    assert.ok(performance.now() - t0 < 5000, `${performance.now() - t0} ms`);
  });

  it('a browser killed mid-run fails that run with a reason; the next run starts a new browser', async () => {
    const launches = host.launches;
    const run = runHeavy(parseConfig(`target: { url: "${site.url}/slow/3000/quotes/", engine: heavy }\n${quoteFields}`), { host });
    await new Promise((r) => setTimeout(r, 800));
    host.process()!.kill('SIGKILL');
    await assert.rejects(run, (e: Error & { code?: string }) => e.code === 'browser_crashed' && /browser stopped/.test(e.message));
    const next = await runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }\n${quoteFields}`), { host });
    assert.equal(next.rows.length, 10);
    assert.equal(host.launches, launches + 1);
  });

  it('a browser killed as a run opens its tab fails that run with browser_crashed, not a time-out', async () => {
    // The kill lands while the job's context or tab is being made (puppeteer's newPage waits 30 s for a target that
    // a dead browser never announces; untilDisconnected ends that wait).
    await host.get();
    const run = runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }\n${quoteFields}`), { host });
    host.process()!.kill('SIGKILL');
    await assert.rejects(run, (e: Error & { code?: string }) => {
      assert.equal(e.code, 'browser_crashed', `${e.name}: ${e.message}`);
      return true;
    });
    const next = await runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }\n${quoteFields}`), { host });
    assert.equal(next.rows.length, 10);
  });

  it('detail pages and categories in the browser', async () => {
    const r = await runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
    - { name: about, selector: "a[href*='/author/']", type: link }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 2, wait_after: 0 }
`), { host });
    const light = await runConfig(parseConfig(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
    - { name: about, selector: "a[href*='/author/']", type: link }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
categories: { container: div.tags-box, link_selector: a.tag, max_categories: 2, wait_after: 0 }
`), { outbound: { allow: ['127.0.0.0/8'] } });
    assert.ok(r.rows.length >= 10);
    assert.deepEqual(r.rows, light.rows);
  });

  it('detail pages load while the listing paginates (concurrency > 1), after it with concurrency 1', async () => {
    const yaml = `target: { url: "${site.url}/quotes/", engine: heavy }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
    - { name: about, selector: "a[href*='/author/']", type: link }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
pagination: { type: click, selector: "li.next a", max_pages: 3, wait_after: 800 }
`;
    const order = (): string[] => [...site.hits.keys()].filter((k) => k.startsWith('/quotes/'));
    site.hits.clear();
    const piped = await runHeavy(parseConfig(yaml), { host, concurrency: 3 });
    const pipedOrder = order();
    for (const [k, n] of site.hits) if (k.startsWith('/quotes/author/')) assert.equal(n, 1, `${k} loaded once while pipelined`);
    site.hits.clear();
    const serial = await runHeavy(parseConfig(yaml), { host, concurrency: 1 });
    const serialOrder = order();

    assert.equal(piped.rows.length, 30);
    assert.deepEqual(piped.rows, serial.rows, 'the same rows either way');
    assert.ok(piped.rows.every((r) => typeof r.born === 'string' && r.born.length > 0), 'every row has its detail field');
    const firstAuthor = (o: string[]) => o.findIndex((k) => k.startsWith('/quotes/author/'));
    const page3 = (o: string[]) => o.indexOf('/quotes/page/3/');
    assert.ok(page3(pipedOrder) > 0 && firstAuthor(pipedOrder) > 0);
    assert.ok(firstAuthor(pipedOrder) < page3(pipedOrder), `an author page before listing page 3: ${pipedOrder.join(' ')}`);
    assert.ok(firstAuthor(serialOrder) > page3(serialOrder), `with one page, authors after the listing: ${serialOrder.join(' ')}`);
    for (const [k, n] of site.hits) if (k.startsWith('/quotes/author/')) assert.equal(n, 1, `${k} loaded once with one page`);
  });

  it('the listing has first claim on the page limit: detail pages get what is left, never more', async () => {
    const yaml = `target: { url: "${site.url}/quotes/", engine: heavy }
extract:
  container: div.quote
  fields:
    - { name: about, selector: "a[href*='/author/']", type: link }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date, default: none }
pagination: { type: click, selector: "li.next a", max_pages: 4 }
`;
    site.hits.clear();
    const r = await runHeavy(parseConfig(yaml), { host, concurrency: 4, maxPages: 6 });
    const listing = [...site.hits.keys()].filter((k) => k === '/quotes/' || k.startsWith('/quotes/page/'));
    const authors = [...site.hits.keys()].filter((k) => k.startsWith('/quotes/author/'));
    assert.equal(listing.length, 4, `all 4 listing pages: ${listing.join(' ')}`);
    assert.equal(authors.length, 2, `the 2 pages left for details: ${authors.join(' ')}`);
    assert.equal(r.rows.length, 40);
    for (const row of r.rows) {
      const fetched = authors.includes(new URL(row.about as string).pathname);
      assert.equal(row.born !== 'none', fetched, `${row.about}: detail fields exactly when its page was loaded`);
    }
    assert.equal(r.pagesScraped, 6);
    assert.ok(r.warnings.includes('stopped at the page limit of 6 pages per run'), r.warnings.join('\n'));
  });

  it('detail pages the guard refuses give their fields\' defaults and a warning; the listing goes on', async () => {
    const pager = (n: number) => (n < 3 ? `<ul class="pager"><li class="next"><a href="/list/${n + 1}">next</a></li></ul>` : '');
    const page = (n: number) => `<!DOCTYPE html><html><body><ul>${[1, 2].map((i) => `<li class="item"><a href="http://169.254.169.254/latest/meta-data/${n}-${i}">item ${n}-${i}</a></li>`).join('')}</ul>${pager(n)}</body></html>`;
    const inline = await serveInline({ '/list/1': page(1), '/list/2': page(2), '/list/3': page(3) });
    try {
      const r = await runHeavy(parseConfig(`target: { url: "${inline.url}/list/1", engine: heavy }
extract:
  container: li.item
  fields:
    - { name: url, selector: a, type: link }
detail_fields:
  fields:
    - { name: secret, selector: body, default: none }
pagination: { type: click, selector: "li.next a", max_pages: 3 }
`), { host, concurrency: 3 });
      assert.equal(r.rows.length, 6);
      assert.ok(r.rows.every((row) => row.secret === 'none'), JSON.stringify(r.rows));
      assert.ok(r.warnings.some((w) => /^detail page http:\/\/169\.254\.169\.254\/latest\/meta-data\/1-1: Refused/.test(w)), r.warnings.join('\n'));
      assert.equal(inline.hits.get('/list/3'), 1, 'the listing went on to its last page');
      assert.equal(r.pagesScraped, 3, 'refused pages are not scraped pages');
    } finally {
      await inline.close();
    }
  });

  it('off Lambda Chromium runs without GPU rasterisation and with a renderer process limit', async () => {
    await runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }\n${quoteFields}`), { host });
    const args = host.process()!.spawnargs;
    assert.ok(args.includes('--disable-gpu'), args.join(' '));
    assert.ok(args.some((a) => /^--renderer-process-limit=\d+$/.test(a)), args.join(' '));
    for (const lambdaOnly of ['--single-process', '--in-process-gpu', '--use-angle=swiftshader']) assert.ok(!args.includes(lambdaOnly), lambdaOnly);
  });

  it('images stay off in Blink unless a job needs them; the worker keeps one browser across the switch', async () => {
    await runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }
${quoteFields}`), { host });
    const lean = host.process()!;
    assert.ok(lean.spawnargs.includes('--blink-settings=imagesEnabled=false'), lean.spawnargs.join(' '));
    const launches = host.launches;
    await runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }
extract: { container: div.quote, fields: [{ name: n, type: eval, script: "1" }] }
`), { host });
    const full = host.process()!;
    assert.notEqual(full.pid, lean.pid);
    assert.ok(!full.spawnargs.some((a) => a.startsWith('--blink-settings')), full.spawnargs.join(' '));
    assert.equal(host.launches, launches + 1);
    assert.ok(lean.exitCode !== null || lean.signalCode !== null, 'the idle lean browser was closed');
    // Back to a job without images: lean again, still one browser.
    await runHeavy(parseConfig(`target: { url: "${site.url}/quotes/", engine: heavy }
${quoteFields}`), { host });
    assert.ok(full.exitCode !== null || full.signalCode !== null, 'the idle images browser was closed');
    assert.ok(host.process()!.spawnargs.includes('--blink-settings=imagesEnabled=false'));
  });

  it('engine auto: lightweight when the served page has the items, heavy when scripts render them', async () => {
    const fetcher = new Fetcher(guard, { retries: 0 });
    try {
      const stat = await chooseEngine(parseConfig(`target: { url: "${site.url}/quotes/" }\n${quoteFields}`), fetcher);
      assert.equal(stat.engine, 'lightweight');
      assert.match(stat.reason, /has 10 item\(s\) matching "div\.quote"/);
      const js = await chooseEngine(parseConfig(`target: { url: "${site.url}/js/quotes/" }\n${quoteFields}`), fetcher);
      assert.equal(js.engine, 'heavy');
      assert.match(js.reason, /renders them with JavaScript/);
      const ev = await chooseEngine(parseConfig(`target: { url: "${site.url}/quotes/" }\n${quoteFields}    - { name: x, type: eval, script: "1" }\n`), fetcher);
      assert.equal(ev.engine, 'heavy');
      assert.match(ev.reason, /extract\.fields\[4\]/);
    } finally {
      await fetcher.close();
    }
  });

  it('screenshots: viewport or full page, png, jpeg or webp, size and scale', async () => {
    const png = await screenshot(host, `${site.url}/quotes/`, { width: 800, height: 600 });
    assert.equal(png.contentType, 'image/png');
    assert.deepEqual(pngSize(png.body), { width: 800, height: 600 });
    const retina = await screenshot(host, `${site.url}/quotes/`, { width: 400, height: 300, deviceScaleFactor: 2 });
    assert.deepEqual(pngSize(retina.body), { width: 800, height: 600 });
    const full = await screenshot(host, `${site.url}/quotes/`, { width: 800, height: 600, fullPage: true });
    assert.ok(pngSize(full.body).height > 600, 'the whole page is taller than the viewport');
    const jpeg = await screenshot(host, `${site.url}/quotes/`, { type: 'jpeg', quality: 50 });
    assert.equal(jpeg.body.subarray(0, 3).toString('hex'), 'ffd8ff');
    const webp = await screenshot(host, `${site.url}/quotes/`, { type: 'webp' });
    assert.equal(webp.body.subarray(8, 12).toString('latin1'), 'WEBP');
    await assert.rejects(screenshot(host, `${site.url}/quotes/`, { width: 10000 }), { code: 'invalid_request' });
    await assert.rejects(screenshot(host, 'http://10.0.0.1/', {}), { code: 'target_forbidden' });
    const error = await screenshot(host, `${site.url}/status/500/`, {});
    assert.equal(error.status, 500, 'an error page is photographed as it shows, with its status');
    await assert.rejects(screenshot(host, `${site.url}/quotes/`, { delayMs: 60_000 }), { code: 'invalid_request' });
  });
});
