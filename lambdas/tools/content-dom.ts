/**
 * The document the content extractor gives Readability (content.ts, step 1): linkedom nodes built one by one from
 * the tree parseHtml() builds (engine/html/parse.ts: the HTML5 tree every other part of the project reads), within
 * {@link CONTENT_LIMITS}. The page is parsed once, by the project's parser; linkedom parses nothing (before issue 25
 * the tree was written out as HTML and parsed again by linkedom's htmlparser2, which closes elements by its own
 * rules: a `<button>` before an `<input>`, a `<script>` at a `</script>` inside a comment of the script, and reads
 * `<noembed>` and `<textarea>` content differently).
 *
 * What the document holds, against the project's tree (test/unit/content-dom.test.ts checks it on the fixture site's pages,
 * test/corpus/content-dom.test.ts on every article page of the corpus):
 * - the same elements, attributes (in order), text and comments, in the same order; SVG elements as linkedom's
 *   SVG elements (`ownerSVGElement` the outermost `<svg>`, as linkedom's parser sets it), with their names as the
 *   HTML parser adjusts them (`clipPath`); the doctype as linkedom's parser sets it;
 * - the content of a `<noscript>`, which the project parses as a browser running scripts does (one text node), read
 *   as markup by parseHtml() and put in its place (the `<head>` and `<body>` content of that parse, in order), as the
 *   link extractor reads it (links-extract.ts): Readability expects a page parsed without scripts (its
 *   `_unwrapNoscriptImages` swaps a lazy-loading placeholder for the `<img>` of the `<noscript>` after it, and it
 *   removes every `<noscript>` before it looks for the article). At most as many characters are read again so as
 *   the page has (nested `<noscript>`s would parse ever shorter copies of the page);
 * - a `<template>`'s content left out (a browser keeps it in `template.content`, outside the tree);
 * - class attributes as linkedom keeps them: a token list (`a  b a` reads `a b`).
 * Bounds ({@link CONTENT_LIMITS}): deeper than `depth` levels an element gets its subtree's text and no elements;
 * more than `children` child elements are put in `<div>`s of that many each (added here, the only elements not in the
 * page); the document ends after `elements`
 * elements; an element keeps its first `attributes` attributes.
 */
import { parseHTML } from 'linkedom';
import type { AnyNode, Document as DomDocument } from 'domhandler';
import { parseHtml } from '../engine/html/parse.ts';

/**
 * What linkedom and Readability are given of a page (docs/tools.md, "Limits of the analysis"). Readability walks
 * each candidate's subtree and ancestors, and over linkedom (whose `children` is a new list each time it is read)
 * a list's items once per item: on 80,000 elements nested 512 deep it takes 20 s, on one list of 20,000 items
 * 80 s. Cut at 48 levels and 20,000 elements, with at most 1,000 child elements under one element, it takes a few
 * seconds at most. The Readability test pages are at most 38 levels deep and hold at most 9,887 elements.
 */
export const CONTENT_LIMITS = {
  /** Levels of elements below the document; an element at this depth gets the text of its subtree only. */
  depth: 48,
  /** Child elements per element: more are put in `<div>`s of this many each (the same content, a narrower tree). */
  children: 1_000,
  /** Elements built (document order); the rest of the page is left out. Also Readability's `maxElemsToParse`. */
  elements: 20_000,
  /**
   * Attributes per element; later ones are left out. linkedom's `setAttribute` looks for the name among the
   * element's attributes first, so an element costs the square of its attributes (200,000 on one tag: minutes).
   * The 521 pages of the corpus have at most 70 on an element.
   */
  attributes: 256,
} as const;

const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';

/** linkedom's nodes as this module builds them (the DOM's types, plus what linkedom's parser sets on SVG elements). */
type Built = ParentNode & Node;

/** One step of the walk: a node to build under a parent, at a depth. */
interface Step {
  node: AnyNode;
  parent: Built;
  /** Levels of elements below the document the node sits at (1 for the document's children). */
  depth: number;
  /** The outermost `<svg>` the node is inside, null outside SVG. */
  svg: Element | null;
}

/**
 * The linkedom document of a tree parseHtml() built (see the module comment for what it holds and its bounds).
 * The tree is only read.
 *
 * **Example usage:**
 * ```ts
 * const tree = parseHtml(html);
 * const doc = readerDocument(tree, html.length);
 * new Readability(doc).parse();
 * ```
 * @param tree the page's tree, from parseHtml().
 * @param noscriptChars characters of `<noscript>` content that may be parsed again as markup (the page's length).
 * @returns a linkedom Document (its `defaultView` set, as parseHTML() gives it), base URL not set.
 */
export function readerDocument(tree: DomDocument, noscriptChars: number): Document {
  const { document } = parseHTML('') as unknown as { document: Document };
  let elements = 0;
  let reparse = noscriptChars;
  const stack: Step[] = [];
  const pushChildren = (children: readonly AnyNode[], parent: Built, depth: number, svg: Element | null): void => {
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, parent, depth, svg });
  };
  pushChildren(tree.children, document, 1, null);
  while (stack.length) {
    const { node, parent, depth, svg } = stack.pop()!;
    switch (node.type) {
      case 'text':
        parent.appendChild(document.createTextNode(node.data));
        break;
      case 'comment':
        parent.appendChild(document.createComment(node.data));
        break;
      case 'directive':
        // As linkedom's parser reads `<!DOCTYPE html>`: the doctype is the declaration after its name.
        if (parent === document && node.name === '!doctype') (document as unknown as { doctype: string }).doctype = node.data.slice('!doctype'.length).trim();
        break;
      case 'tag':
      case 'script':
      case 'style': {
        if (elements >= CONTENT_LIMITS.elements) {
          stack.length = 0;
          break;
        }
        elements++;
        const inSvg = node.namespace === SVG_NAMESPACE;
        const el = inSvg ? document.createElementNS(SVG_NAMESPACE, node.name) : document.createElement(node.name);
        // linkedom's parser gives every element inside an <svg> the outermost <svg> (the <svg> itself has none).
        if (inSvg && svg) (el as unknown as { ownerSVGElement: Element }).ownerSVGElement = svg;
        // linkedom's setAttribute puts the attribute first: set in reverse, they end in the page's order.
        const names = Object.keys(node.attribs);
        for (let i = Math.min(names.length, CONTENT_LIMITS.attributes) - 1; i >= 0; i--) el.setAttribute(names[i]!, node.attribs[names[i]!]!);
        parent.appendChild(el);
        const innerSvg = inSvg ? (svg ?? el) : null;
        if (depth >= CONTENT_LIMITS.depth) {
          const text = textOf(node);
          if (text) el.appendChild(document.createTextNode(text));
          break;
        }
        if (node.name === 'noscript' && !inSvg) {
          const markup = noscriptMarkup(node.children);
          if (markup !== null && markup.length <= reparse) {
            reparse -= markup.length;
            pushChildren(fragmentNodes(parseHtml(markup)), el, depth + 1, null);
            break;
          }
        }
        const children = node.children;
        let elementsIn = 0;
        for (const c of children) if (c.type !== 'text' && c.type !== 'comment') elementsIn++;
        if (elementsIn <= CONTENT_LIMITS.children) {
          pushChildren(children, el, depth + 1, innerSvg);
          break;
        }
        // Too many child elements: in <div>s of CONTENT_LIMITS.children each, in order (pushed last group first).
        const groups: AnyNode[][] = [[]];
        let inGroup = 0;
        for (const c of children) {
          const isElement = c.type !== 'text' && c.type !== 'comment';
          if (isElement && inGroup === CONTENT_LIMITS.children) {
            groups.push([]);
            inGroup = 0;
          }
          if (isElement) inGroup++;
          groups[groups.length - 1]!.push(c);
        }
        const divs = groups.map(() => el.appendChild(document.createElement('div')));
        for (let g = groups.length - 1; g >= 0; g--) pushChildren(groups[g]!, divs[g]!, depth + 2, innerSvg);
        break;
      }
      default:
        // 'root': a <template>'s content, outside the tree in a browser too; 'cdata' is not made by parseHtml().
        break;
    }
  }
  return document;
}

/** The text of a `<noscript>` to read as markup: its one text node's data; null when it is empty or holds elements. */
function noscriptMarkup(children: readonly AnyNode[]): string | null {
  if (children.length !== 1) return null;
  const only = children[0]!;
  return only.type === 'text' && only.data.trim() !== '' ? only.data : null;
}

/** The nodes of a document parsed from a fragment, in order: what precedes `<html>`, its head's content, its body's, what follows. */
function fragmentNodes(doc: DomDocument): AnyNode[] {
  const out: AnyNode[] = [];
  for (const n of doc.children) {
    if (n.type === 'tag' && n.name === 'html') {
      for (const part of n.children) {
        if (part.type === 'tag' && (part.name === 'head' || part.name === 'body')) out.push(...part.children);
        else out.push(part);
      }
    } else if (n.type !== 'directive') out.push(n);
  }
  return out;
}

/** The text of a subtree (scripts and styles left out), without recursion. */
function textOf(root: AnyNode): string {
  const out: string[] = [];
  const stack: AnyNode[] = [root];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.type === 'text') out.push(node.data);
    else if (node.type === 'tag' || (node === root && 'children' in node)) {
      const children = (node as { children: AnyNode[] }).children;
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
  }
  return out.join('');
}
