/**
 * Template versus data (lambdas/generator/template.ts, docs/generate.md "Other pages of the template"): two search
 * pages of one template, each with its own results and the same furniture: a "Trending now" teaser list and a
 * sponsored slot of several cards, larger than the results, repeated on both. With the other page as an example
 * URL (or found as the listing's next page) the generator takes the results and never the furniture; its trial
 * runs on the other page too. The evidence itself: furniture shares its texts with the other pages, the records
 * do not, a selector found on no other page counts half, and a selector that does not parse there is no match.
 * test/run.ts runs this file in a network namespace with only loopback where the machine allows it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { load } from 'cheerio/slim';
import type { Element } from 'domhandler';
import { generateHeuristic } from '../../lambdas/generator/heuristic.ts';
import type { GenerationResult } from '../../lambdas/generator/generator.ts';
import { isChanging, isFurniture, repeatsThePage, templateEvidence, templateFactor } from '../../lambdas/generator/template.ts';
import { nextPageUrl } from '../../lambdas/generator/navigation.ts';

const OUTBOUND = { allow: ['127.0.0.0/8'] };

/** The results of a query: each its own title, price and description. */
function results(query: string, n: number): { title: string; price: string; blurb: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    title: `${query} model ${i + 1} ${['deluxe', 'compact', 'pro', 'mini', 'max', 'lite'][i % 6]}`,
    price: `$${(19 + i * 7 + query.length).toFixed(2)}`,
    blurb: `A ${query} of the ${i + 1}th kind, made to last.`,
  }));
}

/** The template's furniture: the same on every page. */
const TRENDING = Array.from({ length: 12 }, (_, i) => `Trending story number ${i + 1}: what everyone is reading about gardens, kitchens and the weather this week`);
const SPONSORED = Array.from({ length: 6 }, (_, i) => `Sponsored: Acme offer ${i + 1}, the best deal of the season on everything you need for the home and office`);

/** A search page of the template: results for `query`, and a next link when `next` is given. */
function searchPage(query: string, n: number, next?: string): string {
  const trending = TRENDING.map((t, i) => `<li class="trend"><a href="/story/${i}"><img src="/i/${i}.jpg" alt=""><span class="headline">${t}</span></a><p class="teaser">${t} and more of it.</p></li>`).join('');
  const sponsored = SPONSORED.map((t, i) => `<div class="card"><a href="/ad/${i}"><h4>${t}</h4></a><p>${t}; terms apply to every part of it.</p><span>$${i + 1}.99</span></div>`).join('');
  const hits = results(query, n).map((r, i) => `<div class="hit"><a class="t" href="/p/${query}-${i}">${r.title}</a><span class="price">${r.price}</span></div>`).join('');
  return `<!doctype html><html><head><title>${query} - Shop</title></head><body>
<header><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>
<aside><h3>Trending now</h3><ul class="trending">${trending}</ul></aside>
<main><h1>Results for ${query}</h1><div class="hits">${hits}</div>
${next ? `<a class="next" href="${next}">Next</a>` : ''}</main>
<section><h3>Sponsored</h3><div class="sponsored">${sponsored}</div></section>
<footer>© Shop</footer></body></html>`;
}

let server: Server;
let origin = '';

before(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    let body: string | null = null;
    if (url.pathname === '/search') body = searchPage(url.searchParams.get('q') ?? 'x', 5);
    else if (url.pathname === '/list/1') body = searchPage('lamp', 5, '/list/2');
    else if (url.pathname === '/list/2') body = searchPage('lampshade', 5);
    else if (url.pathname === '/robots.txt') body = '';
    if (body === null) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no');
      return;
    }
    res.writeHead(200, { 'Content-Type': url.pathname === '/robots.txt' ? 'text/plain' : 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function explain(r: GenerationResult): string {
  return `${r.yaml}\nnotes: ${r.notes.join(' | ')}`;
}

describe('template versus data: the evidence', () => {
  const one = load(searchPage('kettle', 5));
  const two = load(searchPage('toaster', 5));
  const items = (sel: string) => one(sel).toArray() as Element[];

  it('furniture shares its texts with the other page; the records do not', () => {
    const trending = templateEvidence({ selector: 'ul.trending > li.trend', items: items('ul.trending > li.trend') }, [two]);
    assert.deepEqual(trending, { pages: 1, pagesMatched: 1, sharedShare: 1 });
    assert.ok(isFurniture(trending));
    assert.equal(templateFactor(trending), 0.05);
    assert.equal(templateFactor(trending, false), 0.5, 'with no block changing between the pages, the evidence is mild');
    const sponsored = templateEvidence({ selector: 'div.sponsored > div.card', items: items('div.sponsored > div.card') }, [two]);
    assert.ok(isFurniture(sponsored), JSON.stringify(sponsored));
    const hits = templateEvidence({ selector: 'div.hits > div.hit', items: items('div.hits > div.hit') }, [two]);
    assert.deepEqual(hits, { pages: 1, pagesMatched: 1, sharedShare: 0 });
    assert.equal(isFurniture(hits), false);
    assert.equal(templateFactor(hits), 1);
    assert.equal(isChanging(hits, 5), true);
    assert.equal(isChanging(trending, 12), false);
    assert.equal(isChanging(hits, 2), false, 'two items are too few to say the data changes');
  });

  it('a page showing the same items again (a page 2 that is page 1) repeats the page; a page with other results does not', () => {
    const blocks = ['ul.trending > li.trend', 'div.sponsored > div.card', 'div.hits > div.hit'].map((selector) => ({ selector, items: items(selector) }));
    assert.equal(repeatsThePage(blocks, load(searchPage('kettle', 5))), true);
    assert.equal(repeatsThePage(blocks, two), false);
    assert.equal(repeatsThePage(blocks, load('<p>nothing repeated</p>')), false, 'a page where no block matches does not repeat it');
  });

  it('no other page: factor 1; a selector on no other page: half; a selector that does not parse there: no match', () => {
    const sel = 'div.hits > div.hit';
    assert.equal(templateFactor(templateEvidence({ selector: sel, items: items(sel) }, [])), 1);
    const elsewhere = load('<html><body><p>nothing repeated</p></body></html>');
    const absent = templateEvidence({ selector: sel, items: items(sel) }, [elsewhere]);
    assert.deepEqual(absent, { pages: 1, pagesMatched: 0, sharedShare: 0 });
    assert.equal(templateFactor(absent), 0.8);
    const bad = templateEvidence({ selector: 'div:nth-child(', items: items(sel) }, [two]);
    assert.equal(bad.pagesMatched, 0);
  });

  it('the next page of a listing is another page of its template; a page linking to itself or off the site has none', () => {
    const u = 'http://shop.test/list/1';
    assert.equal(nextPageUrl(load(searchPage('lamp', 3, '/list/2')), u), 'http://shop.test/list/2');
    assert.equal(nextPageUrl(load(searchPage('lamp', 3, '/list/1')), u), null);
    assert.equal(nextPageUrl(load(searchPage('lamp', 3, 'https://elsewhere.example/list/2')), u), null);
    assert.equal(nextPageUrl(load(searchPage('lamp', 3)), u), null);
  });
});

describe('template versus data: the generator', () => {
  it('with another page of the template as an example URL, the results are the records, not the teasers or the sponsored cards', async () => {
    const r = await generateHeuristic({ url: `${origin}/search?q=kettle`, prompt: 'every product with its title and price', exampleUrls: [`${origin}/search?q=toaster`] }, { outbound: OUTBOUND, signal: AbortSignal.timeout(30_000) });
    assert.match(r.config.extract.container ?? '', /hit/, explain(r));
    assert.equal(r.trial.rows.length, 5, explain(r));
    const want = results('kettle', 5).map((x) => x.title);
    assert.deepEqual(r.trial.rows.map((row) => Object.values(row).find((v) => typeof v === 'string' && want.includes(v))), want, explain(r));
    assert.ok(r.notes.some((n) => /compared with 1 other page\(s\) of the template: .*furniture/.test(n)), explain(r));
    assert.ok(r.notes.some((n) => n === 'tried on 1 other page(s) of the template: 5 row(s)'), explain(r));
  });

  it('without example URLs, the listing\'s next page is read as the other page', async () => {
    const r = await generateHeuristic({ url: `${origin}/list/1`, prompt: 'every product with its title and price' }, { outbound: OUTBOUND, signal: AbortSignal.timeout(30_000) });
    assert.match(r.config.extract.container ?? '', /hit/, explain(r));
    // "every product": the trial follows the next link too, 5 results on each page.
    assert.equal(r.trial.rows.length, 10, explain(r));
    assert.ok(r.notes.some((n) => n.includes(`${origin}/list/2`)), explain(r));
  });

  it('an example URL that cannot be read is noted and left out; the page alone gives a config, from the sponsored cards: what one page cannot tell', async () => {
    const r = await generateHeuristic({ url: `${origin}/search?q=kettle`, prompt: 'every product with its title and price', exampleUrls: [`${origin}/missing`] }, { outbound: OUTBOUND, signal: AbortSignal.timeout(30_000) });
    assert.ok(r.notes.some((n) => n.startsWith(`could not read ${origin}/missing as another page of the template (target_failed`)), explain(r));
    assert.ok(r.trial.rows.length > 0, explain(r));
    // Six sponsored cards outweigh five results on one page; the first test shows the other page deciding it.
    assert.equal(r.config.extract.container, 'div.card', explain(r));
  });
});
