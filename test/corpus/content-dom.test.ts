/**
 * The document the content extractor gives Readability (lambdas/tools/content-dom.ts) against the tree the rest of
 * the project reads (parseHtml(), engine/html/parse.ts), issue 25, on every article page of the corpus
 * (articles/readability: 130 pages, articles/scrapinghub: 91): the linkedom document holds the project's elements
 * (names, namespaces), attributes (names, values, order), text and comments in the same order, with the differences
 * content-dom.ts lists and nothing else. The same comparison on the fixture's pages, and the bounds:
 * test/unit/content-dom.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseHtml } from '../../lambdas/engine/html/parse.ts';
import { CONTENT_LIMITS, readerDocument } from '../../lambdas/tools/content-dom.ts';
import { corpusDir } from '../fixtures/corpus.ts';
import { domEvents, firstDifference, projectEvents } from '../helpers/content-dom-events.ts';

/** The article pages of the corpus: name and HTML. */
function articlePages(): Array<[string, string]> {
  const root = join(corpusDir(), 'articles');
  const pages: Array<[string, string]> = [];
  for (const name of readdirSync(join(root, 'readability')).sort()) {
    const file = join(root, 'readability', name, 'source.html');
    if (existsSync(file)) pages.push([`readability/${name}`, readFileSync(file, 'utf8')]);
  }
  for (const name of readdirSync(join(root, 'scrapinghub', 'html')).sort()) {
    if (name.endsWith('.html.gz')) pages.push([`scrapinghub/${name}`, gunzipSync(readFileSync(join(root, 'scrapinghub', 'html', name))).toString('utf8')]);
  }
  return pages;
}

describe("readerDocument: linkedom's document is the project's tree", () => {
  it('on all 221 article pages of the corpus: the same elements, attributes, text and comments, in order', () => {
    const pages = articlePages();
    assert.equal(pages.length, 221);
    const differ: string[] = [];
    let mostElements = 0;
    for (const [name, html] of pages) {
      const tree = parseHtml(html);
      const { events, elements } = projectEvents(tree);
      mostElements = Math.max(mostElements, elements);
      const diff = firstDifference(events, domEvents(readerDocument(tree, html.length)));
      if (diff) differ.push(`${name}: ${diff}`);
    }
    assert.deepEqual(differ, []);
    // No page reaches the element bound (it would end the document early: projectEvents does not model it).
    assert.ok(mostElements < CONTENT_LIMITS.elements, `${mostElements} elements`);
  });
});
