/**
 * Facts about a fetched page that every reader of pages needs and must agree on (issue 25, item 4): the
 * document's base URL, how a URL found in the page resolves against it, and whether a response is an HTML
 * document at all. The field extractor (extract.ts), the crawler's callers of it and the page tools (seo, tech,
 * leads, content, links) take them from here, so that a relative link means the same URL everywhere.
 *
 * Each follows the browser:
 * - the base URL is the HTML standard's "document base URL" (HTML § 2.4.1 and § 4.2.3, "the base element"): the
 *   frozen base URL of the first `base` element in tree order that has an `href` attribute, else the document's
 *   URL. The frozen base URL is that `href` parsed against the document URL; when it does not parse, or parses
 *   to a `data:` or `javascript:` URL, the document URL stands instead (a later `<base>` is not tried). A `base`
 *   inside `<template>` content or in SVG/MathML is not the document's `base` element;
 * - a response is HTML by its MIME type (`text/html`, `application/xhtml+xml`) or, when the response names no
 *   type (or an unknown one), by the MIME Sniffing standard's HTML signatures (§ 7.1, "rules for identifying an
 *   unknown MIME type", the rows for HTML): after leading whitespace, one of `<!DOCTYPE HTML`, `<HTML`, `<HEAD`,
 *   `<SCRIPT`, `<IFRAME`, `<H1`, `<DIV`, `<FONT`, `<TABLE`, `<A`, `<STYLE`, `<TITLE`, `<B`, `<BODY`, `<BR`, `<P`
 *   or `<!--`, in any case, followed by a space or `>`. One departure from the browser, for servers that label their
 *   pages wrongly: a `text/plain` or XML body whose start is such a signature (after an XML declaration, for the XML
 *   types) is HTML too; plain text and real XML are not ({@link pageKind} tells them apart). This is the one answer
 *   to "what is this page?" for runs (both engines), the generator and every page tool (docs/crawler.md, "Pages that
 *   are not HTML").
 *
 * Pure functions of strings and of the domhandler tree html/parse.ts (or cheerio) builds; nothing here throws.
 */
import { isTag, type AnyNode, type Element } from 'domhandler';

/** The HTML namespace, as html/parse.ts sets it on every element (`Element.namespace`). */
const HTML_NAMESPACE = 'http://www.w3.org/1999/xhtml';

/**
 * Resolves a URL found in a page (an `href`, a `src`) against a base URL, as a browser's URL parser does.
 * The value is trimmed first (every Unicode white space, not only the ASCII ones the URL parser drops).
 *
 * @param raw the URL as written in the page; any string.
 * @param base an absolute URL (normally {@link documentBaseUrl}'s); when omitted, `raw` must be absolute itself.
 * @returns the absolute URL, serialised (`URL.href`); null when `raw` does not parse against `base`, or `base`
 *   is given and is no absolute URL. Any scheme is kept (`javascript:`, `mailto:`, `data:`): callers that want
 *   only web links check the scheme themselves.
 * @example resolveUrl(' ../b?q#f ', 'https://example.com/a/c') // 'https://example.com/b?q#f'
 * @example resolveUrl('http://[bad', 'https://example.com/') // null
 */
export function resolveUrl(raw: string, base?: string): string | null {
  try {
    return new URL(raw.trim(), base).href;
  } catch {
    return null;
  }
}

/**
 * The HTML standard's frozen base URL of a `base` element with this `href` ("set the frozen base URL"): `href`
 * parsed against the document URL; the document URL itself when it does not parse or names a `data:` or
 * `javascript:` URL. Callers that walk the tree themselves and kept the first `base` element's `href` call this;
 * others call {@link documentBaseUrl}.
 *
 * @param href the `href` attribute of the document's first `base` element that has one; null or undefined when
 *   the document has none.
 * @param documentUrl the document's URL (the response's final URL after redirects).
 * @returns the base URL against which the page's relative URLs resolve; `documentUrl` unchanged when there is no
 *   usable `href` (an empty `href` gives `documentUrl` without its fragment, as in a browser).
 */
export function baseUrlFromHref(href: string | null | undefined, documentUrl: string): string {
  if (href === null || href === undefined) return documentUrl;
  const resolved = resolveUrl(href, documentUrl);
  if (resolved === null || /^(?:data|javascript):/i.test(resolved)) return documentUrl;
  return resolved;
}

/** A tree to search: a document, a cheerio root, or any element. */
export interface ParentNodeLike {
  children: AnyNode[];
}

/**
 * The `href` of the document's `base` element: the first HTML `base` element with an `href` attribute in tree
 * order, outside `<template>` contents (which are no part of the document) and not an SVG or MathML element
 * named `base`. The walk is iterative (no recursion on a deep tree) and pushes no child lists (an element may
 * have a million children): it costs one step per node before the `base` element, at most one walk of the tree.
 *
 * @param root the parsed document (html/parse.ts's `parseHtml`, or cheerio's `$.root()[0]`).
 * @returns the attribute's value as written (untrimmed); null when there is no such element.
 */
export function firstBaseHref(root: ParentNodeLike): string | null {
  const stack: Array<{ nodes: AnyNode[]; next: number }> = [{ nodes: root.children, next: 0 }];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    if (top.next >= top.nodes.length) {
      stack.pop();
      continue;
    }
    const node = top.nodes[top.next++]!;
    if (!isTag(node)) continue;
    const el: Element = node;
    const html = el.namespace === undefined || el.namespace === HTML_NAMESPACE;
    if (html && el.name === 'template') continue;
    if (html && el.name === 'base' && el.attribs.href !== undefined) return el.attribs.href;
    if (el.children.length) stack.push({ nodes: el.children, next: 0 });
  }
  return null;
}

/**
 * The document base URL of a parsed page (the HTML standard's, see the module comment): what every relative URL
 * in the page resolves against.
 *
 * @param root the parsed document (html/parse.ts's `parseHtml`, or cheerio's `$.root()[0]`).
 * @param documentUrl the page's URL (the response's final URL after redirects).
 * @returns an absolute URL; `documentUrl` when the page has no usable `<base href>`.
 * @example documentBaseUrl(parseHtml('<base href="/docs/">'), 'https://example.com/a/b') // 'https://example.com/docs/'
 */
export function documentBaseUrl(root: ParentNodeLike, documentUrl: string): string {
  return baseUrlFromHref(firstBaseHref(root), documentUrl);
}

/** MIME types whose body is an HTML document. */
const HTML_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml']);


/** An XML declaration at the start of a body (`<?xml version="1.0" encoding="utf-8"?>`), at most 200 characters. */
const XML_DECLARATION = /^[\t\n\f\r ]*<\?xml[^>]{0,200}\?>/i;

/** MIME types that say nothing (MIME Sniffing § 7.1: sniffed as if absent). */
const UNKNOWN_TYPES: ReadonlySet<string> = new Set(['', 'unknown/unknown', 'application/unknown', '*/*']);

/** The HTML signatures of MIME Sniffing § 7.1, lower case: each must be followed by a space or `>`. */
const HTML_SIGNATURES = ['<!doctype html', '<html', '<head', '<script', '<iframe', '<h1', '<div', '<font', '<table', '<a', '<style', '<title', '<b', '<body', '<br', '<p', '<!--'];

/** Bytes of the resource header MIME sniffing reads (MIME Sniffing § 5.2: 1445). */
const RESOURCE_HEADER_CHARS = 1445;

/**
 * Whether a body with no usable MIME type would be sniffed as HTML by a browser (see the module comment): the
 * MIME Sniffing standard's HTML signatures after leading whitespace (tab, line feed, form feed, carriage return,
 * space) within its first 1,445 characters.
 *
 * @param body the response body, decoded (only its first 1,445 characters are read).
 * @example sniffsAsHtml('\n<!doctype html><title>x</title>') // true
 * @example sniffsAsHtml('<section>…') // false: not a signature (a browser shows it as text)
 */
export function sniffsAsHtml(body: string): boolean {
  let i = 0;
  const end = Math.min(body.length, RESOURCE_HEADER_CHARS);
  while (i < end && (body[i] === ' ' || body[i] === '\t' || body[i] === '\n' || body[i] === '\f' || body[i] === '\r')) i++;
  if (body[i] !== '<') return false;
  const head = body.slice(i, i + 16).toLowerCase();
  for (const signature of HTML_SIGNATURES) {
    if (i + signature.length >= end) continue;
    const terminator = head[signature.length];
    if (head.startsWith(signature) && (terminator === ' ' || terminator === '>')) return true;
  }
  return false;
}

/**
 * The MIME type's essence: without parameters, trimmed, lower case (`Text/HTML; charset=utf-8` → `text/html`).
 * @param contentType a `Content-Type` value, or a MIME type already without parameters; '' when none was given.
 */
export function mimeEssence(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/**
 * Whether a response is an HTML document ({@link pageKind} `html`): by its MIME type (`text/html`,
 * `application/xhtml+xml`), or, when it names none (or `unknown/unknown`, `application/unknown`, `*\/*`), by
 * sniffing its body ({@link sniffsAsHtml}); a `text/plain` or XML body only when it sniffs as HTML (after an XML
 * declaration for the XML types). Any other type (`application/json`, `image/png`, a PDF) is not HTML, whatever the
 * body holds.
 *
 * @param contentType the response's `Content-Type` (parameters allowed) or a tool page's `contentType`; '' when
 *   the response named none.
 * @param body the decoded body (read only when the type is missing or unknown).
 */
export function isHtmlResponse(contentType: string, body: string): boolean {
  return pageKind(contentType, body) === 'html';
}

/** What a response is, for every reader of pages (the module comment): see {@link pageKind}. */
export type PageKind = 'html' | 'xml' | 'text' | 'other';

function isXmlType(type: string): boolean {
  return type === 'text/xml' || type === 'application/xml' || (type.endsWith('+xml') && type !== 'application/xhtml+xml');
}

/**
 * What a response is, the one answer every reader of pages takes (docs/crawler.md, "Pages that are not HTML"):
 * - `html`: an HTML type; no type (or an unknown one) and a body that sniffs as HTML ({@link sniffsAsHtml}); or a
 *   `text/plain` or XML type whose body sniffs as HTML (after an XML declaration): a page labelled wrongly;
 * - `xml`: any other XML type (`text/xml`, `application/xml`, `application/rss+xml`, `*+xml`), or no type and a body
 *   that starts with an XML declaration: a feed or a sitemap;
 * - `text`: any other `text/plain` body;
 * - `other`: anything else (JSON, images, PDFs, a body with no type that is neither).
 * Runs read `html` and `xml` (selectors work on a feed's elements); the page tools read `html`, and the content
 * extractor `text` as text too.
 */
export function pageKind(contentType: string, body: string): PageKind {
  const type = mimeEssence(contentType);
  if (HTML_TYPES.has(type)) return 'html';
  const declaration = XML_DECLARATION.exec(body.slice(0, RESOURCE_HEADER_CHARS));
  if (UNKNOWN_TYPES.has(type)) return sniffsAsHtml(body) ? 'html' : declaration ? 'xml' : 'other';
  if (type === 'text/plain') return sniffsAsHtml(body) ? 'html' : 'text';
  if (isXmlType(type)) return sniffsAsHtml(declaration ? body.slice(declaration[0].length) : body) ? 'html' : 'xml';
  return 'other';
}

/**
 * Whether a response with this MIME type may be an HTML document, before its body is at hand (a HEAD answer):
 * an HTML type, or none (or an unknown one), which {@link isHtmlResponse} then decides from the body.
 *
 * @param contentType the `Content-Type` (parameters allowed); '' when none was given.
 */
export function mayBeHtml(contentType: string): boolean {
  const type = mimeEssence(contentType);
  return HTML_TYPES.has(type) || UNKNOWN_TYPES.has(type);
}

/**
 * The site a URL belongs to, as every reader compares sites (the generator's category links, the SEO tool's internal
 * links and canonical, the link checker's crawl, the lead tool's contact pages): its host name in lower case with a
 * leading `www.` dropped; scheme and port do not count (`https://www.Shop.example:8443/a` → `shop.example`).
 * @param url a URL, parsed or not; '' when it does not parse.
 */
export function siteKey(url: URL | string): string {
  let host: string;
  try {
    host = (typeof url === 'string' ? new URL(url) : url).hostname;
  } catch {
    return '';
  }
  return host.toLowerCase().replace(/^www\./, '');
}

/** Whether two URLs are on the same site ({@link siteKey}); false when either does not parse. */
export function sameSite(a: URL | string, b: URL | string): boolean {
  const k = siteKey(a);
  return k !== '' && k === siteKey(b);
}
