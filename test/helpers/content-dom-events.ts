/**
 * The content extractor's document compared with the project's tree (lambdas/tools/content-dom.ts, issue 25), for
 * test/unit/content-dom.test.ts and test/corpus/content-dom.test.ts: both sides written out as lists of events, and
 * the first place they differ.
 */
import type { AnyNode, Document as DomDocument } from 'domhandler';
import { parseHtml } from '../../lambdas/engine/html/parse.ts';
import { CONTENT_LIMITS } from '../../lambdas/tools/content-dom.ts';

export const HTML_NS = 'http://www.w3.org/1999/xhtml';
export const SVG_NS = 'http://www.w3.org/2000/svg';

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
export function projectEvents(doc: DomDocument): { events: string[]; elements: number } {
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
export function domEvents(doc: Document): string[] {
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

/** The first place two event lists differ, for the failure message; null when equal. */
export function firstDifference(a: string[], b: string[]): string | null {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i === a.length && i === b.length) return null;
  const cut = (s: string | undefined) => (s === undefined ? '(end)' : s.slice(0, 300));
  return `event ${i}: project ${cut(a[i])} | linkedom ${cut(b[i])}`;
}

