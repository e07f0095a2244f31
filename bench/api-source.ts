/**
 * Issue 38's figure: a generated config that reads the site's JSON API against the generated config that reads the
 * rendered page, for the same rows. On the fixture site's API-backed pages (an infinite-scroll feed over an offset
 * API, search results from a POST with a JSON body, a "Show more" over a cursor API, a next link over a paged API),
 * the no-LLM generator writes both configs (`readApi: true`, its default, and `readApi: false`); each is then run
 * whole, `--runs` times, interleaved: the API config on the lightweight engine (plain HTTP, what `engine: auto` picks
 * for it), the page config on the browser engine (the same Chromium the service uses). Prints the median seconds of
 * each, their ratio (target: the API config at least 10x faster), and whether the rows are the same (they must be).
 *
 * Also on a held-out shop written after the generator's API part (startShop: a "Load more" over an API paged by a
 * next URL, prices shown with their currency), which it was not developed on.
 *
 * Usage: npm run bench -- api-source [--runs N (3)] [--only feed,search,cursor,quotes,shop]
 */
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { startFixtureSite } from '../test/fixtures/site/server.ts';
import { generateHeuristic } from '../lambdas/generator/heuristic.ts';
import type { GenerationResult } from '../lambdas/generator/generator.ts';
import { runHeavy, runLightweight } from '../lambdas/engine/engines.ts';
import { BrowserHost } from '../lambdas/engine/browser/host.ts';
import { OutboundGuard } from '../lambdas/net/guard.ts';

const OUTBOUND = { allow: ['127.0.0.0/8'] };
const PROMPT = 'All the quotes with their authors and tags, from every page';
const TARGET = 10;
const PAGES: Record<string, string> = { feed: '/js/feed/', search: '/js/search-post/?q=life', cursor: '/js/cursor/', quotes: '/js/quotes/', shop: '/shop/' };
/** The held-out page's prompt (its fields are not quotes'). */
const PROMPTS: Record<string, string> = { shop: 'Every product with its title, price, rating and link, from every page' };

/**
 * A shop not in the fixture site, written after the generator's API part and never used to develop it (held out):
 * 60 products drawn by script from `/v2/catalog/items`, a "Load more" button, the API paged by the `next` URL of each
 * answer ({results: [{sku, title, pricing: {amount, currency}, href, stars}], next}), prices shown as "£12.99".
 */
function startShop(): Promise<{ url: string; close: () => Promise<void> }> {
  const products = Array.from({ length: 60 }, (_, i) => ({
    sku: `SKU-${(1000 + i * 7).toString(36).toUpperCase()}`, title: `Walnut desk organiser no. ${i + 1}`,
    pricing: { amount: Math.round((4.5 + ((i * 37) % 90) + (i % 3) * 0.49) * 100) / 100, currency: 'GBP' }, stars: 1 + (i % 5),
  })).map((p) => ({ ...p, href: `/shop/p/${p.sku.toLowerCase()}/` }));
  const page = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Desk shop</title></head><body>
<header><nav><a href="/">Home</a> <a href="/shop/">Shop</a></nav></header>
<main><h1>Desk organisers</h1><section id="grid"></section><button id="more" type="button">Load more</button></main>
<script>
var next = '/v2/catalog/items?page_size=12';
function card(p) {
  var a = document.createElement('article'); a.className = 'card';
  a.innerHTML = '<h3><a></a></h3><span class="amount"></span> <span class="stars"></span>';
  a.querySelector('h3 a').href = p.href; a.querySelector('h3 a').textContent = p.title;
  a.querySelector('.amount').textContent = '\u00a3' + p.pricing.amount.toFixed(2);
  a.querySelector('.stars').setAttribute('data-stars', String(p.stars)); a.querySelector('.stars').textContent = '\u2605'.repeat(p.stars);
  return a;
}
function more() {
  if (!next) return;
  fetch(next, { headers: { Accept: 'application/json' } }).then(function (r) { return r.json(); }).then(function (d) {
    d.results.forEach(function (p) { document.getElementById('grid').appendChild(card(p)); });
    next = d.next; if (!next) document.getElementById('more').remove();
  });
}
document.getElementById('more').addEventListener('click', more);
more();
</script></body></html>`;
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/shop/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    } else if (u.pathname === '/v2/catalog/items') {
      const size = Math.min(30, Number(u.searchParams.get('page_size')) || 12);
      const after = u.searchParams.get('after_sku');
      const start = after ? products.findIndex((p) => p.sku === after) + 1 : 0;
      const results = products.slice(start, start + size);
      const last = results.at(-1);
      const next = start + size < products.length && last ? `/v2/catalog/items?page_size=${size}&after_sku=${last.sku}` : null;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results, next }));
    } else if (u.pathname.startsWith('/shop/p/')) {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><h1>A product</h1></body></html>');
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  })));
}

function arg(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function main(args: string[]): Promise<number> {
  const runs = Number(arg(args, 'runs') ?? 3);
  const only = (arg(args, 'only') ?? Object.keys(PAGES).join(',')).split(',');
  const site = await startFixtureSite();
  const shop = await startShop();
  const host = new BrowserHost({ guard: new OutboundGuard(OUTBOUND) });
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} before; ${runs} run(s) each, interleaved; node ${process.version}`);
  let failed = 0;
  try {
    console.log('page     rows  api s (median)  page s (median)  page/api  same rows  target');
    for (const name of only) {
      const path = PAGES[name];
      if (!path) throw new Error(`unknown page ${name}: one of ${Object.keys(PAGES).join(', ')}`);
      const gen = (readApi: boolean): Promise<GenerationResult> =>
        generateHeuristic({ url: `${name === 'shop' ? shop.url : site.url}${path}`, prompt: PROMPTS[name] ?? PROMPT }, { outbound: OUTBOUND, browser: () => host, readApi, signal: AbortSignal.timeout(120_000) });
      const viaApi = await gen(true);
      const viaPage = await gen(false);
      if (process.env.BENCH_DEBUG) console.log(viaApi.yaml, viaApi.notes.join(' | '), '\n', viaPage.yaml);
      if (!viaApi.config.target.api) throw new Error(`${name}: the generator wrote no API config:\n${viaApi.yaml}\n${viaApi.notes.join(' | ')}`);
      if (viaPage.config.target.api) throw new Error(`${name}: readApi false wrote an API config`);
      const apiTimes: number[] = [];
      const pageTimes: number[] = [];
      let same = true;
      let rows = 0;
      for (let i = 0; i < runs; i++) {
        let t = performance.now();
        const a = await runLightweight(viaApi.config, { outbound: OUTBOUND, maxPages: 200 });
        apiTimes.push((performance.now() - t) / 1000);
        t = performance.now();
        const p = await runHeavy(viaPage.config, { host, maxPages: 200, concurrency: 4 });
        pageTimes.push((performance.now() - t) / 1000);
        rows = a.rows.length;
        // The two configs name their fields alike (both from the page's fields): the rows must be equal as they are.
        if (JSON.stringify(a.rows) !== JSON.stringify(p.rows)) {
          same = false;
          console.log(`  ${name} run ${i + 1}: rows differ (api ${a.rows.length}, page ${p.rows.length}); first api ${JSON.stringify(a.rows[0])}, first page ${JSON.stringify(p.rows[0])}`);
        }
      }
      const api = median(apiTimes);
      const page = median(pageTimes);
      const ratio = page / api;
      const pass = same && ratio >= TARGET;
      if (!pass) failed++;
      console.log(`${name.padEnd(8)} ${String(rows).padStart(4)}  ${api.toFixed(3).padStart(14)}  ${page.toFixed(3).padStart(15)}  ${ratio.toFixed(1).padStart(7)}x  ${same ? 'yes' : 'NO '.padEnd(9)}        >= ${TARGET}x ${pass ? 'PASS' : 'MISSED'}`);
    }
  } finally {
    await host.close();
    await site.close();
    await shop.close();
  }
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} after`);
  return failed ? 1 : 0;
}
