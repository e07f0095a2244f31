/**
 * The generator writes a config that reads the site's JSON API when the page's items come from one (issue 38;
 * lambdas/generator/api-draft.ts, docs/generate.md "Reading the site's JSON API"): on the fixture site's API-backed
 * pages (an infinite-scroll feed over an offset API, a search page whose results come from a POST with a JSON body,
 * a "Show more" over a cursor API, a next link over a paged API) the config has target.api, the records' path and the
 * fields by path, the API's pagination, and a full run of it over plain HTTP gives every record of the site in order;
 * a page whose JSON answers hold no records (analytics, a site config, ads) keeps its HTML config. The pure parts
 * (records and fields found in an answer, templates for links, rows compared) are tested on inline answers.
 * test/run.ts runs this file in a network namespace with only loopback where the machine allows it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes, type Quote } from '../fixtures/site/quotes.ts';
import { generateHeuristic } from '../../lambdas/generator/heuristic.ts';
import { Workbench } from '../../lambdas/generator/workbench.ts';
import type { GenerationResult } from '../../lambdas/generator/generator.ts';
import { draftApiConfig, jmesPath, matchRecords, rowsAgree } from '../../lambdas/generator/api-draft.ts';
import { parseConfig, type ScrapeConfig } from '../../lambdas/engine/config.ts';
import { runLightweight } from '../../lambdas/engine/engines.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';

const OUTBOUND = { allow: ['127.0.0.0/8'] };
const PROMPT = 'All the quotes with their authors and tags, from every page';

/** The config's field names for a quote's text, author and tags, by the paths it reads them at. */
function names(config: ScrapeConfig): { text: string; author: string; tags: string } {
  const by = (re: RegExp) => config.extract.fields.find((f) => re.test(f.path ?? ''))?.name ?? '(none)';
  return { text: by(/(^|\.)(text|body)$/), author: by(/(^|\.)(author|name)$/), tags: by(/(^|\.)(tags|labels)$/) };
}

/** A run's rows as quotes. */
function asQuotes(rows: Record<string, unknown>[], n: ReturnType<typeof names>): Array<Pick<Quote, 'text' | 'author' | 'tags'>> {
  return rows.map((r) => ({ text: r[n.text] as string, author: r[n.author] as string, tags: r[n.tags] as string[] }));
}

const plain = (q: Quote) => ({ text: q.text, author: q.author, tags: q.tags });

describe('generateHeuristic writes an API config where the page draws its items from a JSON API', () => {
  let site: FixtureSite;
  let host: BrowserHost;
  before(async () => {
    site = await startFixtureSite();
    host = new BrowserHost({ guard: new OutboundGuard(OUTBOUND) });
  });
  after(async () => {
    await host?.close();
    await site?.close();
  });

  const generate = (path: string): Promise<GenerationResult> =>
    generateHeuristic({ url: `${site.url}${path}`, prompt: PROMPT }, { outbound: OUTBOUND, browser: () => host, signal: AbortSignal.timeout(60_000) });

  /** Asserts an API config of the site, runs it whole over HTTP and returns its rows as quotes. */
  async function assertApiConfig(r: GenerationResult, endpoint: RegExp, pagination: Record<string, unknown>): Promise<Array<Pick<Quote, 'text' | 'author' | 'tags'>>> {
    const why = `${r.yaml}\nnotes: ${r.notes.join(' | ')}`;
    assert.deepEqual(parseConfig(r.yaml), r.config, 'the YAML is the config');
    assert.match(r.config.target.api?.url ?? '', endpoint, why);
    assert.doesNotMatch(r.yaml, /browser:|wait_selector/, 'no browser settings: the API needs none');
    assert.equal(r.trial.engine, 'lightweight', why);
    assert.equal(r.apiDiscovered, true);
    assert.match(r.notes.at(-1) ?? '', /reads the site's JSON API instead of the page .*its trial gave the page's rows/, why);
    const p = r.config.pagination as Record<string, unknown> | undefined;
    assert.deepEqual(Object.fromEntries(Object.keys(pagination).map((k) => [k, p?.[k]])), pagination, why);
    const n = names(r.config);
    const run = await runLightweight(r.config, { outbound: OUTBOUND, maxPages: 100 });
    const quotes = asQuotes(run.rows, n);
    assert.ok(r.trial.rows.length >= 10, why);
    assert.deepEqual(asQuotes(r.trial.rows, n), quotes.slice(0, r.trial.rows.length), 'the trial\'s rows are the run\'s first');
    return quotes;
  }

  it('an infinite-scroll feed over an offset API: GET /api/feed/, records at data.items, offset pagination ended by meta.total', async () => {
    const r = await generate('/js/feed/');
    const quotes = await assertApiConfig(r, /\/api\/feed\/$/, { type: 'offset', total_path: 'meta.total' });
    assert.equal(r.config.extract.records, 'data.items');
    assert.deepEqual(quotes, allQuotes().map(plain), 'every quote of the site, in order');
  });

  it('search results from a POST with a JSON body: the body kept, its page parameter paged', async () => {
    const r = await generate('/js/search-post/?q=life');
    const quotes = await assertApiConfig(r, /\/api\/search$/, { type: 'page' });
    assert.equal(r.config.target.api?.method, 'POST');
    assert.deepEqual(r.config.target.api?.body, { query: 'life', page: '{page}', per_page: 10 });
    const expected = allQuotes().filter((q) => q.text.toLowerCase().includes('life') || q.tags.includes('life')).map(plain);
    assert.ok(expected.length > 10, 'more than one page of results');
    assert.deepEqual(quotes, expected);
  });

  it('a "Show more" over a cursor API: the cursor read from page_info.end_cursor and sent back as after', async () => {
    const r = await generate('/js/cursor/');
    const quotes = await assertApiConfig(r, /\/api\/cursor\/$/, { type: 'cursor', cursor_path: 'page_info.end_cursor', has_more_path: 'page_info.has_next_page' });
    assert.equal(r.config.target.api?.query?.after, '{cursor}');
    assert.deepEqual(quotes, allQuotes().map(plain));
  });

  it('a next link over a paged API: page pagination on /api/quotes/', async () => {
    const r = await generate('/js/quotes/');
    const quotes = await assertApiConfig(r, /\/api\/quotes\/$/, { type: 'page' });
    assert.deepEqual(quotes, allQuotes().map(plain));
  });

  it("the Claude agent's list_requests shows a POST's request body, so it can send it again", async () => {
    const bench = new Workbench({ outbound: OUTBOUND, browser: () => host, signal: AbortSignal.timeout(60_000) });
    try {
      await bench.loadPage(`${site.url}/js/search-post/?q=life`, { render: true });
      const search = (await bench.listRequests()).find((r) => r.url.endsWith('/api/search'));
      assert.equal(search?.method, 'POST');
      assert.deepEqual(JSON.parse(search?.request_body ?? 'null'), { query: 'life', page: 1, per_page: 10 });
    } finally {
      await bench.close();
    }
  });

  it('a page whose JSON answers hold no records (analytics, site config, ads) keeps its HTML config', async () => {
    const r = await generate('/js/decoys/');
    assert.equal(r.config.target.api, undefined, r.yaml);
    assert.equal(r.config.extract.container, 'div.quote');
    assert.equal(r.trial.engine, 'heavy');
    assert.ok(!r.notes.some((n) => /JSON API/.test(n)), r.notes.join(' | '));
  });
});

describe('api-draft: records, fields, links and rows', () => {
  const rows = [
    { title: 'Alpha', price: 12.5, url: 'https://shop.example/p/alpha/', tags: ['a', 'b'] },
    { title: 'Beta  ', price: 3, url: 'https://shop.example/p/beta/', tags: ['c'] },
  ];
  const fields = [
    { name: 'title', selector: 'h2', type: 'text' },
    { name: 'price', selector: '.price', type: 'text', transform: ['strip_currency', 'to_number'] },
    { name: 'url', selector: 'a', type: 'link' },
    { name: 'tags', selector: '.tag', type: 'text', multiple: true },
  ] as unknown as ScrapeConfig['extract']['fields'];

  it('finds the list whose records give every field, a link by a template around a slug, numbers as numbers', () => {
    const answer = {
      meta: { total: 2 }, ads: [{ title: 'Buy now', price: 1 }],
      result: { 'product-list': [
        { name: { en: 'Alpha' }, cost: '12.50', slug: 'alpha', labels: ['a', 'b'] },
        { name: { en: 'Beta' }, cost: 3, slug: 'beta', labels: ['c'] },
      ] },
    };
    const m = matchRecords(answer, rows, fields, 'https://shop.example/api/products?page=1');
    assert.deepEqual(m, {
      records: 'result."product-list"',
      fields: [
        { name: 'title', path: 'name.en' },
        { name: 'price', path: 'cost' },
        { name: 'url', path: 'slug', type: 'link', transform: ['template:/p/{value}/'] },
        { name: 'tags', path: 'labels', multiple: true },
      ],
    });
  });

  it('a link the answer gives as a URL is read as it is', () => {
    const m = matchRecords([{ t: 'Alpha', href: '/p/alpha/' }, { t: 'Beta', href: 'https://shop.example/p/beta/' }], rows.map((r) => ({ title: r.title, url: r.url })), [fields[0]!, fields[2]!], 'https://shop.example/api/x');
    assert.deepEqual(m?.fields[1], { name: 'url', path: 'href', type: 'link' });
    assert.equal(m?.records, undefined, 'the answer is the list');
  });

  it('answers that hold no records give nothing: a field of the rows missing, other values, no list', () => {
    assert.equal(matchRecords({ event: 'view', ok: true }, rows, fields, 'https://shop.example/api'), null);
    assert.equal(matchRecords({ items: [{ name: { en: 'Alpha' }, cost: 12.5, slug: 'alpha' }, { name: { en: 'Beta' }, cost: 3, slug: 'beta' }] }, rows, fields, 'https://shop.example/api'), null, 'no tags');
    assert.equal(matchRecords({ items: [{ title: 'Gamma' }, { title: 'Delta' }] }, rows.map((r) => ({ title: r.title })), [fields[0]!], 'https://shop.example/api'), null);
  });

  it('paginates by the parameter it finds, or not at all without the HTML config having pagination', async () => {
    const answer = { items: rows.map((r) => ({ title: r.title })), total: 40 };
    const capture = { url: 'https://shop.example/api/items?start=20&size=20', method: 'GET' };
    const probe = async () => { throw new Error('no probe expected'); };
    const paged = await draftApiConfig(capture, answer, rows.map((r) => ({ title: r.title })), [fields[0]!], { paginate: true, probe });
    assert.deepEqual(paged?.api, { url: 'https://shop.example/api/items', method: 'GET', query: { start: '{offset}', size: 20 }, headers: { Accept: 'application/json' } });
    assert.deepEqual(paged?.pagination, { type: 'offset', start: 20, total_path: 'total' });
    const single = await draftApiConfig(capture, answer, rows.map((r) => ({ title: r.title })), [fields[0]!], { paginate: false, probe });
    assert.equal(single?.pagination, undefined);
    assert.deepEqual(single?.api.query, { start: 20, size: 20 });
    const form = await draftApiConfig({ url: 'https://shop.example/api/items', method: 'POST', requestBody: 'q=a&page=2' }, answer, rows.map((r) => ({ title: r.title })), [fields[0]!], { paginate: true, probe });
    assert.equal(form, null, 'a form body: the language sends JSON bodies only');
  });

  it('rows agree when 90% of the first rows\' cells are equal, white space aside', () => {
    const html = rows.map((r) => ({ title: r.title, tags: r.tags }));
    assert.equal(rowsAgree([{ title: 'Alpha', tags: ['a', 'b'] }, { title: 'Beta', tags: ['c'] }], html, ['title', 'tags']), true);
    assert.equal(rowsAgree([{ title: 'Beta', tags: ['c'] }, { title: 'Alpha', tags: ['a', 'b'] }], html, ['title', 'tags']), false, 'another order');
    assert.equal(rowsAgree([], html, ['title']), false);
  });

  it('JMESPath of keys quotes the ones that are not identifiers', () => {
    assert.equal(jmesPath(['data', 'items']), 'data.items');
    assert.equal(jmesPath(['@graph', 'x-y', 'a_1']), '"@graph"."x-y".a_1');
  });
});
