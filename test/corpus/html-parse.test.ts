/**
 * lambdas/engine/html/parse.ts on every HTML page of the corpus (Readability articles, extruct pages, records pages,
 * listings, links pages): the fast path answers for at least 90% of them, and every tree it returns is the one parse5
 * builds (parse5 8.1.1 with parse5-htmlparser2-tree-adapter, scripting enabled), compared node by node; the bounded
 * parse5 is parse5 on all of them. The targeted
 * cases, character references and tag soup: test/unit/html-parse.test.ts; the html5lib tree-construction tests:
 * test/corpus/html5lib-tree-construction.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Document } from 'domhandler';
import { parse } from 'parse5';
import { adapter } from 'parse5-htmlparser2-tree-adapter';
import { lastBailReason, parseHtmlFast, parseHtmlWithParse5, parseTruncation } from '../../lambdas/engine/html/parse.ts';
import { treeDifference } from '../../lambdas/engine/html/compare.ts';
import { corpusPath } from '../fixtures/corpus.ts';

function corpusPages(): string[] {
  const sub = (dir: string, file: string): string[] =>
    readdirSync(corpusPath(dir))
      .sort()
      .map((d) => join(corpusPath(dir), d, file))
      .filter((f) => existsSync(f));
  const html = (dir: string): string[] =>
    readdirSync(corpusPath(dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.html'))
      .sort()
      .map((f) => join(corpusPath(dir), f));
  return [
    ...sub(join('articles', 'readability'), 'source.html'),
    ...html(join('structured-data', 'extruct')),
    ...sub('records', 'page.html'),
    ...html('listings'),
    ...html('links'),
  ];
}

describe('the corpus: parseHtml() builds the tree parse5 builds, for every page', () => {
  const pages = corpusPages();

  it(`covers the whole corpus (${pages.length} pages)`, () => {
    // 130 Readability articles, 57 extruct pages, 100 record pages, 3 listings, 2 link pages.
    assert.ok(pages.length >= 290, `only ${pages.length} pages found`);
  });

  it('the fast path answers for at least 90% of the pages, and every tree it returns is the one parse5 builds', (t) => {
    let fast = 0;
    const reasons: string[] = [];
    for (const file of pages) {
      const html = readFileSync(file, 'utf8');
      const doc = parseHtmlFast(html);
      if (!doc) {
        reasons.push(`${file.split('/').slice(-2).join('/')}: ${lastBailReason()}`);
        continue;
      }
      fast++;
      const d = treeDifference(doc, parseHtmlWithParse5(html));
      assert.equal(d, null, `${file}: ${d}`);
    }
    t.diagnostic(`fast path: ${fast} of ${pages.length} pages; parse5 for: ${reasons.join('; ')}`);
    assert.ok(fast >= 0.9 * pages.length, `fast path for ${fast} of ${pages.length}: ${reasons.join('; ')}`);
  });
});

describe('bounds (engine/html/limits.ts) on the corpus', () => {
  it('below the bounds the bounded parse5 is parse5: every page of the corpus', () => {
    const plainParse5 = (html: string): Document => parse(html, { treeAdapter: adapter, scriptingEnabled: true }) as Document;
    for (const file of corpusPages()) {
      const html = readFileSync(file, 'utf8');
      const bounded = parseHtmlWithParse5(html);
      assert.equal(parseTruncation(bounded), null, file);
      const d = treeDifference(bounded, plainParse5(html));
      assert.equal(d, null, `${file}: ${d}`);
    }
  });
});
