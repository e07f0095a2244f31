/**
 * The cookbook (examples/, issue 40 item 5): every config there says when to use it, parses, is listed in
 * examples/README.md, and gives its expected rows on the fixture site (test/fixtures/site/), whose address replaces
 * the examples' `http://127.0.0.1:8080` (where `node test/fixtures/site/server.ts 8080` serves it by hand).
 * Expected rows come from the fixture's data (quotes-data.ts, books-data.ts, the article and the reading list), never
 * from the engine. The configs with `engine: lightweight` run over HTTP; the browser ones share one Chromium.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runConfig } from '../../lambdas/engine/engines.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { ARTICLE, articleHtml } from '../fixtures/site/article.ts';
import { bookCategories, bookDetails } from '../fixtures/site/books.ts';
import { READING_LIST } from '../fixtures/site/login.ts';
import { allQuotes, quotesWithTag } from '../fixtures/site/quotes.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DIR = path.join(ROOT, 'examples');
const PLACEHOLDER = 'http://127.0.0.1:8080';
const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();
const text = (f: string) => fs.readFileSync(path.join(DIR, f), 'utf8');

type Row = Record<string, unknown>;

/** Each example's rows on the fixture site at `s` (its base URL). */
const EXPECTED: Record<string, (s: string) => Row[]> = {
  '01-list-url-pagination.yaml': () => allQuotes().map((q) => ({ text: q.text, author: q.author, tags: q.tags })),
  '02-click-pagination.yaml': () => quotesWithTag('love').map((q) => ({ text: q.text, author: q.author })),
  '03-detail-pages.yaml': (s) => bookDetails().map((b) => ({
    title: b.title, url: `${s}/books/catalogue/${b.slug}/index.html`, price: b.price, upc: b.upc, in_stock: b.stock, description: b.description,
  })),
  '04-categories.yaml': (s) => bookCategories().flatMap((c) => c.books.map((b) => ({ title: b.title, price: b.price, _category: c.name, _category_url: `${s}/books/${c.path}` }))),
  '05-table.yaml': () => allQuotes().slice(0, 10).map((q) => ({ Author: q.author, Quote: q.text, Tags: q.tags.join(', ') })),
  '06-javascript-wait.yaml': () => allQuotes().slice(0, 20).map((q) => ({ text: q.text, author: q.author })),
  '07-infinite-scroll.yaml': () => allQuotes().slice(0, 30).map((q) => ({ text: q.text, author: q.author })),
  '08-login-actions.yaml': () => READING_LIST.map((r) => ({ ...r })),
  '09-single-item.yaml': (s) => {
    const story = articleHtml().slice(articleHtml().indexOf('<article class="story">'), articleHtml().indexOf('</article>'));
    return [{
      headline: ARTICLE.title,
      author: ARTICLE.byline,
      published: ARTICLE.publishedTime,
      subheadings: [...story.matchAll(/<h2>([^<]*)<\/h2>/g)].map((m) => m[1]),
      paragraphs: (story.match(/<p[ >]/g) ?? []).length,
      first_image: `${s}/media/quay-street-barrier.jpg`,
    }];
  },
  '10-dedupe-limit.yaml': (s) => bookDetails().slice(0, 15).map((b) => ({ title: b.title, url: `${s}/books/catalogue/${b.slug}/index.html` })),
  '11-regex-template.yaml': () => bookDetails().map((b) => ({
    title: b.title,
    pence: Math.round((b.price % 1) * 100),
    pounds: Math.floor(b.price),
    rating: b.rating.toLowerCase(),
    slug: b.slug,
    lookup: `https://books.example/item/${/_(\d+)$/.exec(b.slug)![1]}`,
  })),
  '12-sibling-rows.yaml': () => allQuotes().slice(0, 20).map((q) => ({ quote: q.text, author: q.author, tags: q.tags })),
  '13-load-more-button.yaml': () => allQuotes().slice(0, 30).map((q) => ({ text: q.text, author: q.author })),
  '14-json-api.yaml': (s) => allQuotes().map((q) => ({ text: q.text, author: q.author, tags: q.tags, author_url: `${s}/quotes/author/${q.authorSlug}/` })),
};

describe('examples/', () => {
  it('holds at least 12 configs, each with its line on when to use it, each listed in examples/README.md, which README and the config language link', () => {
    assert.ok(files.length >= 12, `${files.length} examples`);
    assert.deepEqual(files, Object.keys(EXPECTED).sort(), 'every example has its expected rows here');
    const index = fs.readFileSync(path.join(DIR, 'README.md'), 'utf8');
    for (const f of files) {
      const when = /^# When: (.+)$/m.exec(text(f));
      assert.ok(when && text(f).startsWith('# When: '), `${f} starts with "# When: …"`);
      assert.ok(index.includes(`(${f})`), `examples/README.md links ${f}`);
      assert.ok(parseConfig(text(f)).target.url.startsWith(`${PLACEHOLDER}/`), `${f} targets the fixture site's address`);
    }
    assert.match(index, /API source/, 'the API source example is named (issue 38)');
    assert.match(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'), /\]\(examples\/\)/);
    assert.match(fs.readFileSync(path.join(ROOT, 'docs/config-language.md'), 'utf8'), /\]\(\.\.\/examples\/\)/);
  });

  describe('each gives its rows on the fixture site', () => {
    let site: FixtureSite;
    let fetcher: Fetcher;
    let host: BrowserHost | undefined;
    const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });
    before(async () => {
      site = await startFixtureSite();
      fetcher = new Fetcher(guard);
    });
    after(async () => {
      await host?.close();
      await fetcher?.close();
      await site?.close();
    });

    for (const f of files) {
      it(f, async () => {
        const config = parseConfig(text(f).replaceAll(PLACEHOLDER, site.url));
        const { choice, result } = await runConfig(config, { fetcher, browser: () => (host ??= new BrowserHost({ guard })) });
        assert.equal(choice.engine, config.target.engine, `${f} runs on the engine it names`);
        assert.deepEqual(result.rows, EXPECTED[f]!(site.url));
        assert.deepEqual(result.warnings, [], `${f}: no warnings`);
      });
    }
  });
});
