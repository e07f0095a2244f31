/**
 * The layout signal of the record finder (lambdas/generator/layout.ts, docs/generate.md "The layout, where the page is
 * rendered"). On a page drawn by scripts, rendered in Chromium: the results (8 cards in the main column), a rail of
 * 12 cards of the same class beside them and a strip of 14 deal tiles running past the viewport's edge, all with
 * class names that say nothing (no "sidebar", "carousel", "related"). The markup alone takes the strip; the boxes
 * take the results. Then each rule on boxes written by hand (hidden copies, a carousel, a footer's lists, two widths
 * of one class), the attributes never left on the tree (no selector or field sees them), and a page's own
 * `data-sai-box` attributes ignored when this service did not render it.
 * test/run.ts runs this file in a network namespace with only loopback where the machine allows it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Element } from 'domhandler';
import { analyzePage } from '../../lambdas/generator/analyze.ts';
import { layoutFactor, readLayout } from '../../lambdas/generator/layout.ts';
import { generateHeuristic } from '../../lambdas/generator/heuristic.ts';
import { Workbench } from '../../lambdas/generator/workbench.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { BrowserPageLoader } from '../../lambdas/engine/loaders/browser-loader.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { loadHtml } from '../../lambdas/engine/extract.ts';

const OUTBOUND = { allow: ['127.0.0.0/8'] };

const RESULTS = Array.from({ length: 8 }, (_, i) => ({ title: `Walnut desk lamp number ${i + 1}`, price: `$${20 + i * 3}.00` }));

/** The script-rendered lamp shop: results in the main column, a rail beside them, a strip of tiles above. */
function lampPage(): string {
  const results = RESULTS.map((r, i) => `<div class="card"><a href="/item/${i}"><img src="/l/${i}.jpg" alt=""><h3>${r.title}</h3></a><span class="p">${r.price}</span><p>Warm light, ${i + 2} settings.</p></div>`).join('');
  const side = Array.from({ length: 12 }, (_, i) => `<div class="card"><a href="/story/${i}"><img src="/i/${i}.jpg" alt=""><h3>Story ${i + 1}: lamps of the week</h3></a><p>${i + 3} comments</p></div>`).join('');
  const strip = Array.from({ length: 14 }, (_, i) => `<div class="tile"><a href="/deal/${i}"><img src="/d/${i}.jpg" alt=""><h3>Deal ${i + 1}: a pendant light for the kitchen, brass, 40 cm wide</h3></a><p>Ends in ${i + 1} days; free returns.</p></div>`).join('');
  const body = `<div class="top"><a href="/">Lamps</a></div><div class="strip">${strip}</div><div class="wrap"><div class="col"><h1>Desk lamps</h1>${results}</div><div class="side">${side}</div></div><div class="bottom">© Lamps</div>`;
  return `<!doctype html><html><head><title>Desk lamps</title><style>
body{margin:0;font:14px sans-serif}
.strip{overflow:hidden;white-space:nowrap;width:1200px;margin:0 auto}
.tile{display:inline-block;width:300px;height:220px;white-space:normal;vertical-align:top}
.wrap{width:1200px;margin:0 auto;display:flex}
.col{width:820px}
.col .card{height:120px;border-bottom:1px solid #ccc}
.side{width:300px;margin-left:80px}
.side .card{font-size:11px}
img{width:60px;height:40px}
</style></head><body><div id="root"></div><script>document.getElementById('root').innerHTML = ${JSON.stringify(body)};</script></body></html>`;
}

let server: Server;
let origin = '';
let host: BrowserHost;

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(200, { 'Content-Type': 'text/plain' }).end('');
    if (req.url?.startsWith('/lamps')) return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(lampPage());
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  host = new BrowserHost({ guard: new OutboundGuard(OUTBOUND) });
});
after(async () => {
  await host?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the layout of a rendered page', () => {
  it('the markup alone takes the strip of deal tiles; the boxes take the results in the main column', async () => {
    const bench = new Workbench({ outbound: OUTBOUND, browser: () => host });
    try {
      const page = await bench.load(`${origin}/lamps`, true);
      assert.equal(page.analysis.hasLayout, true);
      const best = page.analysis.candidates[0]!;
      assert.equal(best.count, 8, `${best.selector}: ${best.sample}`);
      assert.match(best.sample, /Walnut desk lamp number 1/);
      assert.equal(best.features.layout, 1.25, 'like boxes in the main column');
      const byItems = (sel: RegExp) => page.analysis.candidates.find((c) => sel.test(c.sample));
      assert.ok((byItems(/^Deal 1:/)?.features.layout ?? 1) <= 0.3, 'the strip is a carousel');
      // The same HTML read as markup only (no layout): the strip wins, which is what the boxes overturn.
      const markup = analyzePage(page.html, page.url);
      assert.equal(markup.hasLayout, false);
      assert.match(markup.candidates[0]!.sample, /^Deal 1:/);
    } finally {
      await bench.close();
    }
  });

  it('the generator renders the shell, weighs the blocks by their boxes and writes a config for the 8 results', async () => {
    const r = await generateHeuristic({ url: `${origin}/lamps`, prompt: 'every lamp with its title and price' }, { outbound: OUTBOUND, browser: () => host, readApi: false, signal: AbortSignal.timeout(60_000) });
    const explain = `${r.yaml}\nnotes: ${r.notes.join(' | ')}`;
    assert.equal(r.trial.rows.length, 8, explain);
    assert.deepEqual(r.trial.rows.map((row) => row.price), RESULTS.map((x) => Number(x.price.slice(1))), explain);
    assert.ok(r.trial.rows.every((row, i) => String(row.title).includes(RESULTS[i]!.title)), explain);
    assert.ok(r.notes.some((n) => /weighed by their boxes/.test(n)), explain);
    assert.doesNotMatch(r.yaml, /data-sai/, 'no selector names the layout attributes');
  });

  it('the page keeps no layout attribute: the boxes are marked, serialised and removed in one evaluation', async () => {
    const loader = await BrowserPageLoader.open({ host });
    const tab = await loader.openSession();
    try {
      const doc = await tab.load(`${origin}/lamps`, { boxes: true, ready: { selector: 'div.card', timeoutMs: 5000, explicit: false } });
      assert.match(doc.html, /<html data-sai-viewport="1366,900,\d+,\d+"/);
      assert.match(doc.html, /<div class="card" data-sai-box="\d+,\d+,820,\d+">/);
      const again = await tab.browser!.current();
      assert.doesNotMatch(again.html, /data-sai-/);
    } finally {
      await tab.close();
      await loader.close();
    }
  });
});

/** A page whose elements carry boxes written by hand: blocks (a `section`, `div` or `ul` of one class) of items. */
function boxed(blocks: { tag?: string; parent: string; box: string; items: { cls: string; box: string; text: string }[] }[], viewport = '1366,900,1366,4000'): string {
  const html = blocks.map((b) => `<${b.tag ?? 'div'} class="${b.parent}" data-sai-box="${b.box}">${b.items.map((it, i) => `<div class="${it.cls}" data-sai-box="${it.box}"><a href="/${b.parent}/${i}">${it.text}</a><p>${it.text} and a few more words on it</p></div>`).join('')}</${b.tag ?? 'div'}>`).join('');
  return `<html data-sai-viewport="${viewport}"><head><title>t</title></head><body>${html}</body></html>`;
}

const list = (n: number, x: number, y: number, w: number, h: number, text: (i: number) => string, cls = 'item') =>
  Array.from({ length: n }, (_, i) => ({ cls, box: `${x},${y + i * h},${w},${h}`, text: text(i) }));

describe('the layout rules on boxes written down', () => {
  const results = list(6, 283, 300, 800, 100, (i) => `Result ${i + 1} of the search`);

  it('copies without a box (hidden by a stylesheet) lose to the shown results', () => {
    const hidden = Array.from({ length: 10 }, (_, i) => ({ cls: 'item', box: '0,0,0,0', text: `Hidden copy ${i + 1} of a record that says a lot more than the results do` }));
    const html = boxed([{ parent: 'results', box: '283,300,800,600', items: results }, { parent: 'drawer', box: '0,0,0,0', items: hidden }]);
    assert.equal(analyzePage(html, 'http://x/').candidates[0]!.count, 16, 'markup only: the results and the copies, one class');
    const a = analyzePage(html, 'http://x/', { rendered: true });
    assert.equal(a.candidates[0]!.count, 6);
    assert.match(a.candidates[0]!.sample, /^Result 1/);
  });

  it('a row of cards past the viewport\'s right edge is a carousel; a footer\'s lists lie at the bottom', () => {
    const results = list(10, 283, 300, 800, 100, (i) => `Result ${i + 1} of the search, a title as long as a teaser`);
    const carousel = Array.from({ length: 12 }, (_, i) => ({ cls: 'item', box: `${283 + i * 300},120,280,150`, text: `Carousel card ${i + 1}: a longer teaser than any of the results has` }));
    const footer = list(12, 283, 3700, 800, 20, (i) => `Footer link ${i + 1} to another part of the whole site`);
    const html = boxed([{ tag: 'section', parent: 'a', box: '0,120,1366,150', items: carousel }, { parent: 'b', box: '283,300,800,600', items: results }, { tag: 'form', parent: 'c', box: '283,3700,800,240', items: footer }]);
    const $ = loadHtml(html);
    const layout = readLayout($('html')[0] as Element, $('*').toArray() as Element[], true)!;
    const of = (parent: string) => [...$(`.${parent} > div`).toArray()].map((el) => [el as Element]);
    assert.equal(layoutFactor(of('a'), layout).kind, 'carousel');
    assert.equal(layoutFactor(of('c'), layout).kind, 'footer');
    const main = layoutFactor(of('b'), layout);
    assert.equal(main.kind, 'main');
    assert.equal(main.factor, 1.25);
    assert.equal(analyzePage(html, 'http://x/').candidates[0]!.count, 34, 'markup only: the three lists of one class');
    const best = analyzePage(html, 'http://x/', { rendered: true }).candidates[0]!;
    assert.equal(best.count, 10);
    assert.match(best.sample, /^Result 1/);
  });

  it('one class in two widths is two lists: the group of both loses to the results alone', () => {
    const rail = list(8, 1100, 300, 240, 60, (i) => `Rail card ${i + 1}`);
    const $ = loadHtml(boxed([{ parent: 'main', box: '283,300,800,600', items: results }, { parent: 'rail', box: '1100,300,240,480', items: rail }]));
    const layout = readLayout($('html')[0] as Element, $('*').toArray() as Element[], true)!;
    const both = ($('div.item').toArray() as Element[]).map((el) => [el]);
    assert.equal(layoutFactor(both, layout).kind, 'mixed');
    assert.ok(layoutFactor(both, layout).factor <= 0.25);
    assert.equal(layoutFactor(($('div.rail > div').toArray() as Element[]).map((el) => [el]), layout).kind, 'rail');
  });

  it('the attributes are taken off the tree; a page not rendered here has no layout, whatever it carries', () => {
    const html = boxed([{ parent: 'results', box: '283,300,800,600', items: results }]);
    const rendered = analyzePage(html, 'http://x/', { rendered: true });
    assert.equal(rendered.hasLayout, true);
    assert.equal(rendered.$('[data-sai-box], [data-sai-viewport]').length, 0);
    const served = analyzePage(html, 'http://x/');
    assert.equal(served.hasLayout, false, 'a served page\'s own data-sai-box attributes are no layout');
    assert.equal(served.$('[data-sai-box]').length, 0);
    assert.equal(served.candidates[0]!.features.layout, undefined);
    assert.ok(!served.candidates[0]!.selector.includes('data-sai'));
  });
});
