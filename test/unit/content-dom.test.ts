/**
 * The document the content extractor gives Readability (lambdas/tools/content-dom.ts) against the tree the rest of
 * the project reads (parseHtml(), engine/html/parse.ts), issue 25: on every article page of the corpus
 * (articles/readability: 130 pages, articles/scrapinghub: 91) the linkedom document holds the project's elements
 * (names, namespaces), attributes (names, values, order), text and comments in the same order, with the
 * differences content-dom.ts lists and nothing else: `<noscript>` content read as markup by parseHtml(), a
 * `<template>`'s content left out, class attributes as linkedom's token list. The expected side is read from the
 * project's tree here, not by content-dom.ts's walk. Then the bounds, one by one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { AnyNode, Document as DomDocument } from 'domhandler';
import { parseHtml } from '../../lambdas/engine/html/parse.ts';
import { CONTENT_LIMITS, readerDocument } from '../../lambdas/tools/content-dom.ts';
import { corpusDir } from '../fixtures/corpus.ts';

const HTML_NS = 'http://www.w3.org/1999/xhtml';
const SVG_NS = 'http://www.w3.org/2000/svg';

/** A class value as a token list (linkedom's `class`): tokens split on whitespace, each once, in order. */
function classTokens(value: string): string {
  return [...new Set(value.split(/[\t\n\f\r ]+/).filter(Boolean))].join(' ');
}

/** The text of a subtree: its text nodes, not those of scripts and styles (what the depth bound keeps). */
function subtreeText(node: AnyNode): string {
  if (node.type === 'text') return node.data;
  if (node.type !== 'tag') return '';
  return node.children.map(subtreeText).join('');
}

/** A document's doctype as `D:name|publicId|systemId`. */
function doctypeEvent(name: string | null | undefined, publicId: string | null | undefined, systemId: string | null | undefined): string {
  return `D:${name ?? ''}|${publicId ?? ''}|${systemId ?? ''}`;
}

/**
 * The project's tree as a list of events: `<name ns [[attr, value], …]`, `>name`, `T:text` (adjacent text merged),
 * `C:comment`, the doctype first (`D:…`). A `<noscript>`'s text is read as markup by parseHtml() (its head's and
 * body's content); a `<template>`'s content is left out. The bounds as CONTENT_LIMITS states them: an element at
 * the depth limit with its subtree's text only, child elements past `children` in `<div>`s; `elements` counts them.
 */
function projectEvents(doc: DomDocument): { events: string[]; elements: number } {
  const out: string[] = [];
  let elements = 0;
  let text = '';
  const flush = () => {
    if (text) out.push(`T:${text}`);
    text = '';
  };
  const stack: Array<[AnyNode, number] | string> = [];
  const pushAll = (nodes: readonly AnyNode[], depth: number) => {
    const isElement = (c: AnyNode) => c.type !== 'text' && c.type !== 'comment';
    if (nodes.filter(isElement).length <= CONTENT_LIMITS.children) {
      for (let i = nodes.length - 1; i >= 0; i--) stack.push([nodes[i]!, depth]);
      return;
    }
    const groups: AnyNode[][] = [[]];
    for (const c of nodes) {
      if (isElement(c) && groups[groups.length - 1]!.filter(isElement).length === CONTENT_LIMITS.children) groups.push([]);
      groups[groups.length - 1]!.push(c);
    }
    for (let g = groups.length - 1; g >= 0; g--) {
      stack.push('>div');
      for (let i = groups[g]!.length - 1; i >= 0; i--) stack.push([groups[g]![i]!, depth + 1]);
      stack.push('<div html []');
    }
  };
  const doctype = doc.children.find((c) => c.type === 'directive');
  if (doctype) out.push(doctypeEvent(doctype['x-name'], doctype['x-publicId'], doctype['x-systemId']));
  pushAll(doc.children, 1);
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      flush();
      out.push(item);
      continue;
    }
    const [n, depth] = item;
    if (n.type === 'text') {
      text += n.data;
      continue;
    }
    flush();
    if (n.type === 'comment') out.push(`C:${n.data}`);
    else if (n.type === 'tag' || n.type === 'script' || n.type === 'style') {
      elements++;
      const ns = n.namespace === SVG_NS ? 'svg' : 'html';
      const attrs = Object.entries(n.attribs).map(([k, v]) => [k, k === 'class' ? classTokens(v) : v]);
      out.push(`<${n.name} ${ns} ${JSON.stringify(attrs)}`);
      stack.push(`>${n.name}`);
      const only = n.children[0];
      if (depth >= CONTENT_LIMITS.depth) text += subtreeText(n);
      else if (n.name === 'noscript' && n.namespace === HTML_NS && n.children.length === 1 && only!.type === 'text' && only.data.trim()) {
        const inner = parseHtml(only.data);
        const nodes: AnyNode[] = [];
        for (const c of inner.children) {
          if (c.type === 'tag' && c.name === 'html') for (const part of c.children) nodes.push(...(part.type === 'tag' && (part.name === 'head' || part.name === 'body') ? part.children : [part]));
          else if (c.type !== 'directive') nodes.push(c);
        }
        pushAll(nodes, depth + 1);
      } else if (n.name !== 'template') pushAll(n.children, depth + 1);
    }
  }
  flush();
  return { events: out, elements };
}

/** The same events read from a linkedom document through the DOM. */
function domEvents(doc: Document): string[] {
  const out: string[] = [];
  let text = '';
  const flush = () => {
    if (text) out.push(`T:${text}`);
    text = '';
  };
  if (doc.doctype) out.push(doctypeEvent(doc.doctype.name, doc.doctype.publicId, doc.doctype.systemId));
  const stack: Array<Node | string> = [];
  const pushAll = (nodes: NodeListOf<ChildNode>) => {
    for (let i = nodes.length - 1; i >= 0; i--) stack.push(nodes[i]!);
  };
  pushAll(doc.childNodes);
  while (stack.length) {
    const n = stack.pop()!;
    if (typeof n === 'string') {
      flush();
      out.push(n);
      continue;
    }
    if (n.nodeType === 3) {
      text += n.nodeValue;
      continue;
    }
    flush();
    if (n.nodeType === 8) out.push(`C:${n.nodeValue}`);
    else if (n.nodeType === 1) {
      const el = n as Element;
      const ns = el.namespaceURI === SVG_NS ? 'svg' : 'html';
      const attrs = Array.from(el.attributes).map((a) => [a.name, a.name === 'class' ? classTokens(a.value) : a.value]);
      out.push(`<${el.localName} ${ns} ${JSON.stringify(attrs)}`);
      stack.push(`>${el.localName}`);
      pushAll(el.childNodes);
    }
  }
  flush();
  return out;
}

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

/** The first place two event lists differ, for the failure message; null when equal. */
function firstDifference(a: string[], b: string[]): string | null {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i === a.length && i === b.length) return null;
  const cut = (s: string | undefined) => (s === undefined ? '(end)' : s.slice(0, 300));
  return `event ${i}: project ${cut(a[i])} | linkedom ${cut(b[i])}`;
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
