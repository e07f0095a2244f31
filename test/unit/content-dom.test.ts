/**
 * The document the content extractor gives Readability (lambdas/tools/content-dom.ts) against the tree the rest of
 * the project reads (parseHtml(), engine/html/parse.ts), issue 25: on the fixture site's pages (and, in
 * test/corpus/content-dom.test.ts, on the corpus's 221 article pages) the linkedom document holds the project's elements
 * (names, namespaces), attributes (names, values, order), text and comments in the same order, with the
 * differences content-dom.ts lists and nothing else: `<noscript>` content read as markup by parseHtml(), a
 * `<template>`'s content left out, class attributes as linkedom's token list. The expected side is read from the
 * project's tree here, not by content-dom.ts's walk. Then the bounds, one by one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseHtml } from '../../lambdas/engine/html/parse.ts';
import { CONTENT_LIMITS, readerDocument } from '../../lambdas/tools/content-dom.ts';
import { articleHtml } from '../fixtures/site/article.ts';
import { bookDetails, bookshopPage } from '../fixtures/site/books.ts';
import { fixturePage } from '../fixtures/site/server.ts';
import { domEvents, firstDifference, HTML_NS, projectEvents, SVG_NS } from '../helpers/content-dom-events.ts';

describe("readerDocument: linkedom's document is the project's tree", () => {
  it('on the fixture site\'s pages (article, books, quotes, tableful): the same elements, attributes, text and comments, in order', () => {
    const pages: Array<[string, string]> = [
      ['article', articleHtml()],
      ...['/books/', '/books/catalogue/page-2.html', `/books/catalogue/${bookDetails()[9]!.slug}/index.html`].map((p): [string, string] => [p, bookshopPage(p)!]),
      ...['/quotes/', '/quotes/author/Ada-Whitmore/', '/tableful/', '/quotes-table/'].map((p): [string, string] => [p, fixturePage(p)]),
    ];
    for (const [name, html] of pages) {
      const tree = parseHtml(html);
      const { events } = projectEvents(tree);
      assert.ok(events.length > 50, name);
      assert.equal(firstDifference(events, domEvents(readerDocument(tree, html.length))), null, name);
    }
  });

  it('what linkedom parsing the written-out tree got wrong is right: a <button> before an <input>, a </script> in a script comment, <noembed>, <textarea>, SVG names', () => {
    const html =
      '<!DOCTYPE html><html><head><title>t</title></head><body><button>Go<input name=q></button>' +
      '<script><!-- <script>x</script> --></script><noembed><b>raw</b></noembed><textarea><a href="/x">y</a></textarea>' +
      '<svg viewBox="0 0 1 1"><clipPath id=c><rect/></clipPath><foreignObject><p>in</p></foreignObject></svg></body></html>';
    const tree = parseHtml(html);
    const doc = readerDocument(tree, html.length);
    assert.deepEqual(domEvents(doc), projectEvents(tree).events);
    assert.equal(doc.querySelector('button')!.querySelector('input')!.getAttribute('name'), 'q');
    assert.equal(doc.querySelector('script')!.textContent, '<!-- <script>x</script> -->');
    assert.equal(doc.querySelector('noembed')!.textContent, '<b>raw</b>');
    assert.equal(doc.querySelector('textarea')!.textContent, '<a href="/x">y</a>');
    const clip = doc.querySelector('svg')!.firstChild as Element;
    assert.equal(clip.localName, 'clipPath');
    assert.equal(clip.namespaceURI, SVG_NS);
    assert.equal((clip as unknown as { ownerSVGElement: Element }).ownerSVGElement, doc.querySelector('svg'));
    assert.equal(doc.querySelector('p')!.namespaceURI, HTML_NS);
  });

  it('<noscript> content is read as markup (Readability swaps lazy images for it), within a budget of the page length', () => {
    const html = '<html><head><noscript><link rel=stylesheet href=/a.css></noscript></head><body><img src=data:,><noscript><img src="/real.jpg"></noscript></body></html>';
    const doc = readerDocument(parseHtml(html), html.length);
    assert.equal(doc.querySelector('head noscript link')!.getAttribute('href'), '/a.css');
    assert.equal(doc.querySelector('body noscript img')!.getAttribute('src'), '/real.jpg');
    // Nested <noscript>s: each level is read again, at most the page's length in all.
    const nested = `<body>${'<noscript>'.repeat(2_000)}x`;
    const t0 = performance.now();
    const deep = readerDocument(parseHtml(nested), nested.length);
    assert.ok(performance.now() - t0 < 5_000);
    assert.ok(deep.querySelectorAll('noscript').length < 2_000);
  });
});

describe('readerDocument: bounds (CONTENT_LIMITS)', () => {
  const DOC = '<!DOCTYPE html><html><head><title>b</title></head><body>';

  it(`depth: an element ${CONTENT_LIMITS.depth} levels down keeps its subtree's text, no elements`, () => {
    const html = `${DOC}${'<div>'.repeat(100)}<p>deep <b>text</b></p>${'</div>'.repeat(100)}<p>after</p>`;
    const doc = readerDocument(parseHtml(html), html.length);
    let depth = 1;
    for (let el: Element | null = doc.body; el; el = el.firstElementChild) depth++;
    assert.equal(depth, CONTENT_LIMITS.depth);
    assert.match(doc.body.textContent ?? '', /deep text\s*after/);
  });

  it(`children: more than ${CONTENT_LIMITS.children} child elements are put in <div>s of ${CONTENT_LIMITS.children}`, () => {
    const html = `${DOC}<ul>${'<li>i</li>'.repeat(2_500)}</ul>`;
    const doc = readerDocument(parseHtml(html), html.length);
    const ul = doc.querySelector('ul')!;
    assert.deepEqual(Array.from(ul.children).map((c) => [c.localName, c.children.length]), [['div', 1000], ['div', 1000], ['div', 500]]);
  });

  it(`elements: the document ends after ${CONTENT_LIMITS.elements} elements`, () => {
    const html = `${DOC}${'<p>x</p>'.repeat(30_000)}`;
    const doc = readerDocument(parseHtml(html), html.length);
    // html, head, title, body, then 19,996 of the paragraphs (put in <div>s of 1,000, which are not counted).
    assert.equal(doc.querySelectorAll('p').length, CONTENT_LIMITS.elements - 4);
  });

  it(`attributes: an element keeps its first ${CONTENT_LIMITS.attributes}, in order; 200,000 on one tag in a few seconds`, () => {
    const html = `${DOC}<div ${Array.from({ length: 200_000 }, (_, i) => `a${i}=${i}`).join(' ')}>x</div>`;
    const t0 = performance.now();
    const doc = readerDocument(parseHtml(html), html.length);
    const ms = performance.now() - t0;
    const names = doc.querySelector('div')!.getAttributeNames();
    assert.equal(names.length, CONTENT_LIMITS.attributes);
    assert.deepEqual(Array.from(names).slice(0, 3), ['a0', 'a1', 'a2']);
    assert.ok(ms < 10_000, `${ms.toFixed(0)} ms`);
  });
});
