/**
 * A generated config for records spread over sibling elements (issue 23; docs/config-language.md "Records spread
 * over sibling elements", docs/generate.md): the heuristic generator, without an LLM, on the fixture site's
 * /tableful/ pages (quotes.toscrape.com's table layout: per quote a `<tr style>` row "TEXT Author: NAME" and a row
 * of tag links, no classes) writes `extract.following_siblings: 1`, the quote and the author as separate fields,
 * and the tags as a list; its trial's rows are the fixture's quotes; and the config gives the same rows, 10 a page,
 * over HTTP and in a real Chromium. The expected values come from the fixture's data (test/fixtures/site/quotes.ts),
 * not from the engine.
 * test/run.ts runs this file in a network namespace with only loopback where the machine allows it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes, QUOTES_PER_PAGE, type Quote } from '../fixtures/site/quotes.ts';
import { generateHeuristic } from '../../lambdas/generator/heuristic.ts';
import type { GenerationResult } from '../../lambdas/generator/generator.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import type { Row } from '../../lambdas/engine/extract.ts';
import { runHeavy, runLightweight } from '../../lambdas/engine/engines.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { LOOPBACK } from './helpers.ts';

const PROMPT = 'The quotes in this table with their authors and tags';
const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });

/** The fields of a generated config that hold the quote, the author and the tags, by their values. */
interface Located {
  quote: string | undefined;
  author: string | undefined;
  tags: string | undefined;
}

function explain(r: GenerationResult): string {
  return `${r.yaml}\nnotes: ${r.notes.join(' | ')}\nfirst rows: ${JSON.stringify(r.trial.rows.slice(0, 2))}`;
}

/** The field whose values, row by row, are exactly `expected`. */
function fieldWith(rows: Row[], names: string[], expected: unknown[]): string | undefined {
  return names.find((n) => {
    try {
      assert.deepEqual(rows.map((r) => r[n]), expected);
      return true;
    } catch {
      return false;
    }
  });
}

function locate(r: GenerationResult, quotes: Quote[]): Located {
  const names = r.config.extract.fields.map((f) => f.name);
  return {
    quote: fieldWith(r.trial.rows, names, quotes.map((q) => q.text)),
    author: fieldWith(r.trial.rows, names, quotes.map((q) => q.author)),
    tags: fieldWith(r.trial.rows, names, quotes.map((q) => q.tags)),
  };
}

describe('a generated config for records over two table rows (/tableful/), on both engines', () => {
  let site: FixtureSite;
  let host: BrowserHost;
  /** One generation per page, shared by the page's tests. */
  const generated = new Map<string, Promise<GenerationResult>>();
  const generate = (path: string): Promise<GenerationResult> => {
    let p = generated.get(path);
    if (!p) {
      p = generateHeuristic({ url: `${site.url}${path}`, prompt: PROMPT }, { ...LOOPBACK, signal: AbortSignal.timeout(60_000) });
      p.catch(() => {}); // awaited by the tests
      generated.set(path, p);
    }
    return p;
  };

  before(async () => {
    site = await startFixtureSite();
    host = new BrowserHost({ guard });
  });
  after(async () => {
    await host?.close();
    await site?.close();
  });

  for (const [path, page] of [['/tableful/', 1], ['/tableful/page/2/', 2]] as const) {
    const quotes = () => allQuotes().slice((page - 1) * QUOTES_PER_PAGE, page * QUOTES_PER_PAGE);

    it(`${path}: following_siblings 1; the trial's 10 rows hold the quote and the author as separate fields and the tags as lists`, async () => {
      const r = await generate(path);
      const expected = quotes();
      assert.equal(expected.length, 10);
      assert.equal(r.generator, 'heuristic');
      assert.deepEqual(parseConfig(r.yaml), r.config, 'the YAML is the config');
      assert.equal(r.config.extract.type, 'list');
      assert.equal(r.config.extract.following_siblings, 1, explain(r));
      assert.equal(r.trial.rows.length, 10, explain(r));
      const at = locate(r, expected);
      assert.ok(at.quote, `a field holds each quote's text alone: ${explain(r)}`);
      assert.ok(at.author, `a field holds each quote's author alone: ${explain(r)}`);
      assert.notEqual(at.quote, at.author);
      assert.equal(at.author, 'author', explain(r));
      assert.ok(at.tags, `a field holds each quote's tags as a list: ${explain(r)}`);
      assert.match(at.tags, /^tags?$/, explain(r));
      const tagsField = r.config.extract.fields.find((f) => f.name === at.tags)!;
      assert.equal(tagsField.multiple, true, explain(r));
      assert.ok(r.trial.rows.every((row) => Array.isArray(row[at.tags!])), 'a list in every row');
      // The config reads the quote rows and the rows after them, not the header or the pager row.
      assert.ok(!r.trial.rows.some((row) => Object.values(row).some((v) => /Top Ten tags|Next|Previous/.test(String(v)))), explain(r));
    });

    it(`${path}: the generated config gives the same rows over HTTP and in Chromium, 10 a page, the fixture's quotes`, async () => {
      const r = await generate(path);
      const config = parseConfig(r.yaml);
      const [light, heavy] = await Promise.all([runLightweight(config, LOOPBACK), runHeavy(config, { host })]);
      assert.equal(light.engine, 'lightweight');
      assert.equal(heavy.engine, 'heavy');
      assert.deepEqual(heavy.rows, light.rows, 'rows');
      assert.equal(heavy.pagesScraped, light.pagesScraped, 'pages scraped');
      assert.equal(heavy.itemsFound, light.itemsFound, 'items found');
      assert.ok(light.pagesScraped >= 1);
      assert.equal(light.rows.length, 10 * light.pagesScraped, `10 rows a page: ${light.rows.length} rows on ${light.pagesScraped} page(s)`);
      assert.equal(light.itemsFound, 10 * light.pagesScraped);
      assert.deepEqual(light.rows.slice(0, 10), r.trial.rows, 'the trial read the same first page');
      const at = locate(r, quotes());
      assert.ok(at.quote && at.author, explain(r));
      assert.deepEqual(light.rows.slice(0, 10).map((row) => [row[at.quote!], row[at.author!]]), quotes().map((q) => [q.text, q.author]));
    });
  }
});
