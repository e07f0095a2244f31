/**
 * The bounds of parseHtml() (docs/html-parsing.md, "Bounds"): every page is hostile input, so the tree a document
 * can build, and the work building it costs, are bounded whatever the markup. A page of the corpus (test/corpus/README.md) reaches
 * none of them (the deepest is 39 elements deep, the largest 52,801 nodes and 1.3 million characters of text);
 * test/unit/html-parse.test.ts checks that parseHtml() gives parse5's own tree there.
 */

/**
 * Chromium's `kMaximumHTMLParserDOMTreeDepth` (third_party/blink/renderer/core/html/parser/html_construction_site.h):
 * an element (or comment) inserted while more than this many elements are open is attached to the parent of the
 * node it would have gone into, so it becomes that node's sibling and the tree stops growing deeper (text is not
 * moved; foster-parented nodes are not either). A document of 100,000 nested `<div>`s is 510 nested divs in
 * `<body>` and 99,490 sibling divs under the 510th, as in Chrome; no element is deeper than 513 (`<html>` is 1).
 * Unit: elements on the stack of open elements (`<html>` counts).
 */
export const MAX_DEPTH = 512;

/**
 * How many elements the stack of open elements holds. Chromium's stack grows without end (only the tree is kept
 * shallow). In a parser that walks its stack (the fast path; parse5 before 8) every "has an element in scope"
 * check, every end tag that matches nothing and every reset of the insertion mode walks it: 400,000 unclosed
 * `<span>`s and as many stray end tags take quadratic time. parse5 8 indexes its stack for those, but still walks it
 * to find an open element that is not a formatting element, and its arrays grow with the deepest the stack ever was.
 * Past this size, opening an element closes the oldest one above {@link MAX_DEPTH} (it leaves the stack, not the
 * tree): an element that deep is already a sibling at the cap, so the tree is Chromium's as long as the document
 * does not close more than `MAX_OPEN_ELEMENTS - MAX_DEPTH` elements at once afterwards. Unit: elements.
 */
export const MAX_OPEN_ELEMENTS = 1024;

/**
 * Entries of the list of active formatting elements after its last marker. The spec keeps at most three alike
 * ("Noah's Ark"); 300,000 `<b class=N>` with distinct classes grow the list without end, once an end tag closes
 * them the next text reopens every one of them (a copy of the list in the tree each time), and a parser without
 * parse5 8's index of the list scans it for each new one. Past this many, the oldest entry leaves the list (as
 * Noah's Ark drops the oldest of four alike): that element stays open and in the tree, it is only no longer reopened
 * after a block closes it. Unit: entries.
 */
export const MAX_FORMATTING_ELEMENTS = 64;

/**
 * Nodes of one document (elements, including those the parser implies or reopens, text nodes and comments).
 * Parsing stops at the node that would pass it: the document keeps what came before, as a page cut short by the
 * network would. 500,000 nodes are 100 to 150 MB of tree on Node 24, ten times the largest page of the corpus.
 * Unit: nodes.
 */
export const MAX_NODES = 500_000;

/**
 * Characters of text (text node data: visible text, scripts, styles) of one document. The text that would pass
 * it is cut at the limit and parsing stops there. No page the fetcher accepts reaches it (its body limit is
 * 10 MiB); it bounds documents that come from elsewhere (a rendered DOM serialised by the browser).
 * Unit: UTF-16 code units (JavaScript string length).
 */
export const MAX_TEXT_CHARS = 10 * 1024 * 1024;

/** Which bound cut a document short. */
export type ParseLimit = 'nodes' | 'text' | 'depth';

const truncated = new WeakMap<object, ParseLimit>();

/** Records that `document` was cut short by `limit` (parse.ts, bounded-parse5.ts). */
export function markTruncated(document: object, limit: ParseLimit): void {
  truncated.set(document, limit);
}

/**
 * The bound that cut `document` short ({@link MAX_NODES}, {@link MAX_TEXT_CHARS}, or `depth`: more than
 * {@link MAX_OPEN_ELEMENTS} nested `<template>`s), or null when parseHtml() read the whole input.
 */
export function parseTruncation(document: object): ParseLimit | null {
  return truncated.get(document) ?? null;
}
