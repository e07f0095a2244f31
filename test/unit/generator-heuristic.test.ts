/**
 * The config generator without an LLM (lambdas/generator/heuristic.ts, docs/generate.md) against the local
 * fixture site, with the prompts of the generate bench (bench/generate.ts): for each variant the container
 * it picks, the fields the prompt names, the pagination when every page is asked for (a next link, a "Load
 * more" button, infinite scroll) and none when "this page" is, the UPC read from each book's own page, the
 * top tags as categories, the JSON API behind a page drawn by scripts, and a trial run whose rows are the
 * site's data; the static configs also run to the last page. Refusals: a page with nothing repeated
 * (`generation_failed`, saying what it found), a 404 (`target_failed`), and targets the outbound guard
 * refuses (`target_forbidden`) before any socket opens. The script-rendered pages share one Chromium.
 * A table's plain cells take their names from its header (`<th>Author</th>`).
 * test/run.ts runs this file in a network namespace with only loopback where the machine allows it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes, quotesWithTag, topTags } from '../fixtures/site/quotes.ts';
import { bookDetails } from '../fixtures/site/books.ts';
import { generateHeuristic, type HeuristicOptions } from '../../lambdas/generator/heuristic.ts';
import type { GenerateProgress, GenerationResult } from '../../lambdas/generator/generator.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runLightweight } from '../../lambdas/engine/engines.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { OutboundGuard, TargetForbiddenError } from '../../lambdas/net/guard.ts';
import { CodedError } from '../../lambdas/errors.ts';
import { watchSockets } from './net-helpers.ts';

/** The guard of the bench: the local servers only. */
const OUTBOUND = { allow: ['127.0.0.0/8'] };
const QUOTES = allQuotes();
const BOOKS = bookDetails();
const STEPS = ['analyzing', 'generating', 'validating'];

/** Runs the generator with the bench's options; returns the result and the progress it reported. */
async function generate(url: string, prompt: string, extra: Partial<HeuristicOptions> = {}): Promise<{ result: GenerationResult; progress: GenerateProgress[] }> {
  const progress: GenerateProgress[] = [];
  const result = await generateHeuristic({ url, prompt }, {
    outbound: OUTBOUND, signal: AbortSignal.timeout(30_000), onProgress: (p) => progress.push(p), ...extra,
  });
  return { result, progress };
}

/** The parts of a result that say what went wrong, for assertion messages. */
function explain(r: GenerationResult): string {
  return `${r.yaml}\nnotes: ${r.notes.join(' | ')}`;
}

/** What every result must be: its YAML is its config, a heuristic one, whose trial found rows. */
function assertWellFormed(r: GenerationResult): void {
  assert.equal(r.generator, 'heuristic');
  assert.deepEqual(parseConfig(r.yaml), r.config, 'the YAML is the config');
  assert.equal(r.config.version, '2.0');
  assert.ok(r.trial.rows.length > 0, explain(r));
  assert.ok(r.trial.itemsFound >= r.trial.rows.length, `${r.trial.itemsFound} items found, ${r.trial.rows.length} rows`);
}

/** Progress in the job's states, in order, never going down. */
function assertProgress(progress: GenerateProgress[]): void {
  assert.ok(progress.length >= 3, JSON.stringify(progress));
  const steps = progress.map((p) => p.step);
  assert.deepEqual([...steps].sort((a, b) => STEPS.indexOf(a) - STEPS.indexOf(b)), steps, steps.join(' -> '));
  assert.deepEqual(new Set(steps), new Set(STEPS));
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress >= progress[i - 1]!.progress, JSON.stringify(progress));
  assert.ok(progress.every((p) => p.progress >= 0 && p.progress <= 99 && p.message.length > 0));
}

const fieldNames = (r: GenerationResult): string[] => r.config.extract.fields.map((f) => f.name);

/** The pagination as the generator wrote it (the parsed config adds the defaults: `stop_condition`, …). */
function pagination(r: GenerationResult): Record<string, unknown> | undefined {
  const p = r.config.pagination as Record<string, unknown> | undefined;
  if (!p) return undefined;
  return Object.fromEntries(['type', 'selector', 'url_pattern', 'max_pages', 'wait_after'].filter((k) => p[k] !== undefined).map((k) => [k, p[k]]));
}

describe('generateHeuristic on the fixture site', () => {
  let site: FixtureSite;
  before(async () => {
    site = await startFixtureSite();
  });
  after(async () => {
    await site?.close();
  });

  it('every quote with author and tags from all the pages: div.quote, quote/author/tags, the next link, and the config reads all 100', async () => {
    const { result: r, progress } = await generate(`${site.url}/quotes/`, 'Every quote on the site with its author and tags, from all the pages');
    assertWellFormed(r);
    assertProgress(progress);
    assert.equal(r.config.extract.container, 'div.quote', explain(r));
    assert.deepEqual(fieldNames(r), ['quote', 'author', 'tags'], explain(r));
    assert.equal(r.config.extract.fields.find((f) => f.name === 'tags')?.multiple, true, 'every tag of a quote, under a plural name');
    assert.deepEqual(pagination(r), { type: 'click', selector: 'li.next > a', max_pages: 50, wait_after: 0 }, explain(r));
    assert.equal(r.config.categories, undefined);
    assert.equal(r.config.detail_fields, undefined);
    // The trial reads the first two pages.
    assert.equal(r.trial.engine, 'lightweight');
    assert.equal(r.trial.pagesScraped, 2);
    assert.deepEqual(r.trial.rows, QUOTES.slice(0, 20).map((q) => ({ quote: q.text, author: q.author, tags: q.tags })));
    assert.equal(r.apiDiscovered, false);
    assert.equal(r.apiEndpoint, undefined);
    // Run to the end, the config reads every quote on the site.
    const all = await runLightweight(r.config, { outbound: OUTBOUND });
    assert.deepEqual(all.rows.map((row) => row.quote), QUOTES.map((q) => q.text));
    assert.deepEqual(all.rows.at(-1), { quote: QUOTES.at(-1)!.text, author: QUOTES.at(-1)!.author, tags: QUOTES.at(-1)!.tags });
  });

  it('the quotes of a table: its body rows, the quote column, no pagination for "this table"', async () => {
    const { result: r } = await generate(`${site.url}/quotes-table/`, 'The quotes in this table with their authors and tags');
    assertWellFormed(r);
    assert.equal(r.config.extract.container, 'table.quotes > tbody > tr', explain(r));
    assert.equal(r.trial.rows.length, 10);
    assert.equal(r.trial.pagesScraped, 1);
    assert.deepEqual(r.trial.rows.map((row) => row.quote), QUOTES.slice(0, 10).map((q) => q.text));
    assert.equal(r.config.pagination, undefined);
    assert.equal(r.config.categories, undefined);
  });

  // The table's header (<th>Author</th><th>Quote</th><th>Tags</th>) names its plain cells' columns.
  it('the quotes of a table come with the author and tags columns its header names', async () => {
    const { result: r } = await generate(`${site.url}/quotes-table/`, 'The quotes in this table with their authors and tags');
    assert.deepEqual(fieldNames(r), ['author', 'quote', 'tag'], explain(r));
    assert.equal(r.trial.rows[0]!.author, QUOTES[0]!.author);
  });

  it('titles and prices of the books on this page: article.product_pod, title and price as numbers, no pagination', async () => {
    const { result: r } = await generate(`${site.url}/books/catalogue/page-1.html`, 'Titles and prices of the books on this page');
    assertWellFormed(r);
    assert.equal(r.config.extract.container, 'article.product_pod', explain(r));
    assert.deepEqual(fieldNames(r), ['title', 'price'], explain(r));
    assert.equal(r.config.pagination, undefined, 'the prompt asks for this page');
    assert.equal(r.config.detail_fields, undefined);
    assert.equal(r.trial.pagesScraped, 1);
    assert.deepEqual(r.trial.rows, BOOKS.map((b) => ({ title: b.title, price: b.price })), 'whole titles (not the link text cut short) and prices as numbers');
  });

  it("each book's UPC from its own page: a link field and detail_fields.upc, the right UPC per book", async () => {
    const { result: r } = await generate(`${site.url}/books/catalogue/page-1.html`, "Each book's title and price, and its UPC from the book's own page");
    assertWellFormed(r);
    assert.equal(r.config.extract.container, 'article.product_pod', explain(r));
    assert.deepEqual(fieldNames(r), ['title', 'price', 'url'], explain(r));
    assert.equal(r.config.extract.fields[2]!.type, 'link', `a link to each book's page: ${explain(r)}`);
    assert.deepEqual(r.config.detail_fields?.fields.map((f) => f.name), ['upc'], explain(r));
    assert.equal(r.config.pagination, undefined);
    const rows = r.trial.rows;
    assert.ok(rows.length >= 3, `${rows.length} row(s) in the trial`);
    rows.forEach((row, i) => {
      const book = BOOKS[i]!;
      assert.equal(row.title, book.title);
      assert.equal(row.price, book.price);
      assert.equal(row.upc, book.upc, `the UPC of ${book.title}`);
      assert.match(String(row.url), new RegExp(`/books/catalogue/${book.slug}/index\\.html$`));
    });
  });

  it('the quotes of each top tag, every page: the tags box as categories, the next link, every tagged quote', async () => {
    const { result: r } = await generate(`${site.url}/quotes/`, 'The quotes of each of the top ten tags, with every page of each tag');
    assertWellFormed(r);
    assert.equal(r.config.extract.container, 'div.quote', explain(r));
    assert.equal(fieldNames(r)[0], 'quote', explain(r));
    assert.deepEqual(r.config.categories && { container: r.config.categories.container, link_selector: r.config.categories.link_selector }, { container: 'div.tags-box', link_selector: 'a' }, explain(r));
    assert.deepEqual(pagination(r), { type: 'click', selector: 'li.next > a', max_pages: 50, wait_after: 0 }, explain(r));
    const tags = topTags(10);
    for (const row of r.trial.rows) {
      const tag = String(row._category);
      assert.ok(tags.includes(tag), `${tag} is a top tag`);
      assert.ok(quotesWithTag(tag).some((q) => q.text === row.quote), `a quote tagged ${tag}: ${String(row.quote).slice(0, 60)}`);
    }
    assert.equal(r.trial.rows[0]!._category, tags[0]);
    assert.equal(r.trial.rows[0]!.quote, quotesWithTag(tags[0]!)[0]!.text);
    // Run to the end: every quote of every top tag, each tag's pages followed (without the default pause of
    // 2 s between categories, which would make this test 20 s long).
    const config = { ...r.config, categories: { ...r.config.categories!, wait_after: 0 } };
    const all = await runLightweight(config, { outbound: OUTBOUND });
    const want = tags.flatMap((t) => quotesWithTag(t).map((q) => `${t}|${q.text}`));
    assert.deepEqual(all.rows.map((row) => `${String(row._category)}|${String(row.quote)}`).sort(), want.sort());
    assert.ok(quotesWithTag(tags[0]!).length > 10, `${tags[0]} has a second page, and its quotes there were read`);
  });

  it('a page with nothing repeated: generation_failed, saying what it found on which page', async () => {
    const url = `${site.url}/status/200/`;
    await assert.rejects(generate(url, 'All the items on this page'), (err: unknown) => {
      assert.ok(err instanceof CodedError, String(err));
      assert.equal(err.code, 'generation_failed');
      assert.match(err.message, /no repeated blocks of content/i);
      assert.ok(err.message.includes(url), err.message);
      return true;
    });
  });

  it('a page that answers 404: target_failed with the status', async () => {
    const url = `${site.url}/status/404/`;
    await assert.rejects(generate(url, 'All the items'), (err: unknown) => {
      assert.ok(err instanceof CodedError, String(err));
      assert.equal(err.code, 'target_failed');
      assert.match(err.message, /HTTP 404/);
      assert.deepEqual(err.details, [{ url, status: 404 }]);
      return true;
    });
  });

  it('targets the outbound guard refuses: target_forbidden before any socket opens', async () => {
    const hitsBefore = site.hits.get('/quotes/') ?? 0;
    const watch = watchSockets();
    try {
      // A private address outside the allowlist.
      await assert.rejects(generate('http://10.1.2.3/', 'All the items'), (err: unknown) => {
        assert.ok(err instanceof TargetForbiddenError, String(err));
        assert.equal(err.code, 'target_forbidden');
        assert.match(err.message, /10\.1\.2\.3 is a private address/);
        return true;
      });
      // The fixture site itself under the default guard (no allowlist): loopback is refused too.
      await assert.rejects(generate(`${site.url}/quotes/`, 'All the quotes', { outbound: {} }), (err: unknown) => {
        assert.ok(err instanceof CodedError, String(err));
        assert.equal(err.code, 'target_forbidden');
        assert.match(err.message, /loopback/);
        return true;
      });
      watch.assertNoSocket();
    } finally {
      watch.stop();
    }
    assert.equal(site.hits.get('/quotes/') ?? 0, hitsBefore, 'the fixture site saw no request');
  });
});

describe('generateHeuristic with a browser (script-rendered pages)', () => {
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

  /** The first two pages' quotes and authors, as the trial reads them. */
  const firstTwenty = QUOTES.slice(0, 20).map((q) => ({ quote: q.text, author: q.author }));

  // readApi: false: these read the rendered page (the API config the generator prefers: test/unit/generator-api.test.ts).
  it('quotes drawn from a JSON API: rendered, div.quote waited for, the next link, the API found', async () => {
    const { result: r, progress } = await generate(`${site.url}/js/quotes/`, 'All the quotes and their authors, from every page', { browser: () => host, readApi: false });
    assertWellFormed(r);
    assertProgress(progress);
    assert.ok(progress.some((p) => /rendering it in a browser/.test(p.message)), JSON.stringify(progress));
    assert.equal(r.config.target.browser?.wait_selector, 'div.quote', explain(r));
    assert.equal(r.config.extract.container, 'div.quote');
    assert.deepEqual(fieldNames(r), ['quote', 'author'], explain(r));
    assert.deepEqual(pagination(r), { type: 'click', selector: 'li.next > a', max_pages: 50, wait_after: 0 }, explain(r));
    assert.equal(r.trial.engine, 'heavy');
    assert.equal(r.trial.pagesScraped, 2);
    assert.deepEqual(r.trial.rows, firstTwenty);
    assert.equal(r.apiDiscovered, true);
    assert.match(r.apiEndpoint ?? '', /^http:\/\/127\.0\.0\.1:\d+\/api\/quotes\/\?page=1$/);
  });

  it('a "Load more" button: click pagination on button.load-more with a wait after each click', async () => {
    const { result: r } = await generate(`${site.url}/js/load-more/`, 'All quotes with their authors; keep clicking "Load more" until every quote is shown', { browser: () => host, readApi: false });
    assertWellFormed(r);
    assert.equal(r.config.extract.container, 'div.quote', explain(r));
    assert.deepEqual(fieldNames(r), ['quote', 'author'], explain(r));
    assert.deepEqual(pagination(r), { type: 'click', selector: 'button.load-more', max_pages: 50, wait_after: 1000 }, explain(r));
    assert.equal(r.trial.engine, 'heavy');
    assert.deepEqual(r.trial.rows, firstTwenty, 'one click added the second ten');
  });

  it('a feed that grows as it scrolls: scroll_infinite pagination', async () => {
    const { result: r } = await generate(`${site.url}/js/scroll/`, 'All the quotes in this feed with their authors; more appear as you scroll down', { browser: () => host, readApi: false });
    assertWellFormed(r);
    assert.equal(r.config.extract.container, 'div.quote', explain(r));
    assert.deepEqual(fieldNames(r), ['quote', 'author'], explain(r));
    assert.deepEqual(pagination(r), { type: 'scroll_infinite', max_pages: 50, wait_after: 1000 }, explain(r));
    assert.equal(r.trial.engine, 'heavy');
    assert.deepEqual(r.trial.rows, firstTwenty, 'one scroll added the second ten');
  });

  it('a page with nothing repeated, rendered too: generation_failed says it was rendered in a browser', async () => {
    await assert.rejects(generate(`${site.url}/status/200/`, 'All the items on this page', { browser: () => host }), (err: unknown) => {
      assert.ok(err instanceof CodedError, String(err));
      assert.equal(err.code, 'generation_failed');
      assert.match(err.message, /no repeated blocks of content on .*\/status\/200\/ \(rendered in a browser\)/i);
      return true;
    });
  });
});
