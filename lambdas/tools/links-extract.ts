/**
 * The links of one HTML page, for the broken-link checker (links.ts; docs/tools.md "broken-link-checker").
 *
 * What counts as a link is linkinator's table (JustinBeckwith/linkinator src/links.ts, 8.1.0), so that the two
 * check the same URLs, with its rules for `<meta>`: a refresh's URL, and a content that is an absolute URL.
 * - navigation: `a[href]` (also SVG's `a[xlink:href]`), `area[href]`, `iframe[src]`, `frame[src]`,
 *   `meta[http-equiv=refresh]` (the URL of its `content`, parsed as the HTML standard's "shared declarative
 *   refresh steps" do);
 * - resources: `img[src]`, every candidate of `img[srcset]` and `source[srcset]` (the HTML standard's srcset
 *   parsing: a URL may hold commas), `source[src]`, `script[src]`, `embed[src]`, `audio[src]`, `video[src]`,
 *   `video[poster]`, `track[src]`, `input[src]`, `object[data]`, `body[background]`, `html[manifest]`,
 *   `embed[pluginspage]`, `iframe[longdesc]`, `frame[longdesc]`, `command[icon]`;
 * - `link[href]` whatever its `rel` (stylesheet, icon, canonical, alternate, manifest, preload…), except a
 *   `rel` made only of `dns-prefetch` and `preconnect`: those name an origin to warm up, not a resource;
 * - citations: `blockquote[cite]`, `q[cite]`, `del[cite]`, `ins[cite]`;
 * - `meta[content]` that is an absolute http(s) URL (`og:image`, `og:url`, `twitter:image`…).
 * The content of `<noscript>` counts (what the page shows without scripts). Not links: JSON-LD, CSS `url()`,
 * anything inside `<template>` (inert until a script uses it). Empty or blank attribute values are not links
 * (they name the page itself); linkinator skips them too.
 *
 * URLs are resolved against the document base URL: the first `<base href>` resolved against the page URL
 * (HTML standard, "document base URL"), else the page URL. The fragment is dropped (`/a#x` and `/a#y` are one
 * link, checked once).
 */
import { isTag, type AnyNode, type Element } from 'domhandler';
import { parseHtml } from '../engine/html/parse.ts';
import { documentBaseUrl } from '../engine/page-facts.ts';

/** One distinct link of a page. */
interface ExtractedLink {
  /** The absolute URL without its fragment; the attribute's text as written when it does not parse as a URL. */
  url: string;
  /** False when the attribute's value is not a URL the WHATWG URL parser accepts (then `url` is the raw text). */
  valid: boolean;
  /** True for links a person follows to another document (`a`, `area`, `iframe`, `frame`, meta refresh): the pages a crawl may open. */
  navigable: boolean;
}

/** Attributes holding one URL, by element name (HTML namespace names, lower case). */
const URL_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ['href'],
  area: ['href'],
  link: ['href'],
  iframe: ['src', 'longdesc'],
  frame: ['src', 'longdesc'],
  img: ['src'],
  source: ['src'],
  script: ['src'],
  embed: ['src', 'pluginspage'],
  audio: ['src'],
  video: ['src', 'poster'],
  track: ['src'],
  input: ['src'],
  object: ['data'],
  body: ['background'],
  html: ['manifest'],
  command: ['icon'],
  blockquote: ['cite'],
  q: ['cite'],
  del: ['cite'],
  ins: ['cite'],
};

const NAVIGABLE = new Set(['a', 'area', 'iframe', 'frame']);

/** Limits of reading one page's links (docs/tools.md, "Limits of the analysis"). */
export const LINK_LIMITS = {
  /** URL values read from the page (attributes, srcset candidates, refresh targets), in document order. */
  values: 100_000,
} as const;
/** `link` relations that name an origin to connect to early, not a resource (linkinator ignores them too). */
const RESOURCE_HINTS = new Set(['dns-prefetch', 'preconnect']);
const ASCII_WHITESPACE = /[\t\n\f\r ]/;

/**
 * The URLs of a `srcset` attribute, in order (HTML standard, "parse a srcset attribute"): candidates are split
 * at commas outside the URL and outside parentheses of the descriptors; a URL's trailing commas are dropped.
 * @param value the attribute's value.
 */
export function parseSrcset(value: string): string[] {
  const urls: string[] = [];
  const n = value.length;
  let i = 0;
  while (i < n) {
    while (i < n && (ASCII_WHITESPACE.test(value[i]!) || value[i] === ',')) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && !ASCII_WHITESPACE.test(value[i]!)) i++;
    let url = value.slice(start, i);
    if (url.endsWith(',')) {
      // Trailing commas dropped by hand (V8 runs /,+$/ in time quadratic in a run of commas inside the URL).
      let end = url.length;
      while (end > 0 && url.charCodeAt(end - 1) === 0x2c) end--;
      url = url.slice(0, end);
    } else {
      // Descriptors ("2x", "100w", "(…)" of future syntax) run to the next comma outside parentheses.
      let depth = 0;
      while (i < n) {
        const c = value[i]!;
        if (c === '(') depth++;
        else if (c === ')' && depth > 0) depth--;
        else if (c === ',' && depth === 0) break;
        i++;
      }
    }
    if (url) urls.push(url);
  }
  return urls;
}

/**
 * The URL of a `<meta http-equiv="refresh">` content (HTML standard, "shared declarative refresh steps"):
 * `5; url=/next`, `0;URL='/next'`, `3, /next`. Null when the content is not a valid refresh or names no URL
 * (a refresh of the page itself).
 */
export function parseMetaRefresh(content: string): string | null {
  const m = /^[\t\n\f\r ]*(\d*)(\.[\d.]*)?/.exec(content)!;
  if (m[1] === '' && m[2] === undefined) return null;
  let rest = content.slice(m[0].length);
  if (rest === '') return null;
  if (!/^[;,\t\n\f\r ]/.test(rest)) return null;
  rest = rest.replace(/^[\t\n\f\r ]*[;,]?[\t\n\f\r ]*/, '');
  if (rest === '') return null;
  const named = /^url[\t\n\f\r ]*=[\t\n\f\r ]*/i.exec(rest);
  if (named) rest = rest.slice(named[0].length);
  const quote = rest[0];
  if (quote === '"' || quote === "'") {
    const end = rest.indexOf(quote, 1);
    rest = rest.slice(1, end === -1 ? undefined : end);
  }
  return rest.trim() === '' ? null : rest;
}

/** The link's URL without its fragment, or null when it does not parse. */
function resolve(raw: string, base: URL | null): string | null {
  try {
    const href = (base ? new URL(raw, base) : new URL(raw)).href;
    const hash = href.indexOf('#');
    return hash === -1 ? href : href.slice(0, hash);
  } catch {
    return null;
  }
}

/** Whether a `link` element's rel is only resource hints (then its href is not checked). */
function onlyResourceHints(rel: string | undefined): boolean {
  if (!rel) return false;
  const tokens = rel.toLowerCase().split(/[\t\n\f\r ]+/).filter(Boolean);
  return tokens.length > 0 && tokens.every((t) => RESOURCE_HINTS.has(t));
}

/**
 * The distinct links of an HTML document, in document order (first occurrence), fragments dropped.
 *
 * **Example usage:**
 * ```ts
 * extractLinks('<base href="/docs/"><a href="a#top">A</a><img srcset="x.png 1x, y.png 2x">', 'https://example.com/');
 * // [{url: 'https://example.com/docs/a', …}, {url: 'https://example.com/docs/x.png', …}, {url: 'https://example.com/docs/y.png', …}]
 * ```
 * @param html the page's HTML (any markup: parsed as a browser does, by parseHtml()).
 * @param pageUrl the page's absolute URL (its final URL after redirects).
 * @returns the links; never throws for anything the HTML holds. An invalid `pageUrl` leaves relative links
 *   unresolvable: they come back with `valid: false`.
 */
export function extractLinks(html: string, pageUrl: string): ExtractedLink[] {
  const doc = parseHtml(html);
  const found: Array<{ raw: string; navigable: boolean }> = [];
  // <noscript> content parsed again: at most as many characters as the page has (nested noscripts would otherwise
  // parse ever shorter copies of the page, quadratic in their number).
  let reparse = html.length;
  const stack: AnyNode[] = [];
  for (let i = doc.children.length - 1; i >= 0; i--) stack.push(doc.children[i]!);
  while (stack.length && found.length < LINK_LIMITS.values) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    const el = node as Element;
    const name = el.name;
    if (name === 'template') continue;
    if (name === 'noscript') {
      // Parsed as a browser running scripts does, a <noscript>'s content is text: read it as the markup it is
      // (what the page shows without scripts, and what linkinator's tokenizer sees).
      const text = el.children.map((c) => ('data' in c ? c.data : '')).join('');
      if (text.includes('<') && text.length <= reparse) {
        reparse -= text.length;
        const inner = parseHtml(text).children;
        for (let i = inner.length - 1; i >= 0; i--) stack.push(inner[i]!);
        continue;
      }
    }
    const attribs = el.attribs;
    if (name === 'base') {
      // Not a link: the document's base URL, read below by page-facts' documentBaseUrl.
    } else if (name === 'meta') {
      if (attribs['http-equiv']?.toLowerCase() === 'refresh' && attribs.content) {
        const target = parseMetaRefresh(attribs.content);
        if (target !== null) found.push({ raw: target, navigable: true });
      } else if (attribs.content && /^\s*https?:\/\//i.test(attribs.content)) {
        found.push({ raw: attribs.content, navigable: false });
      }
    } else {
      const names = URL_ATTRIBUTES[name];
      if (names && !(name === 'link' && onlyResourceHints(attribs.rel))) {
        const navigable = NAVIGABLE.has(name);
        for (const attr of names) {
          const value = attr === 'href' && name === 'a' ? (attribs.href ?? attribs['xlink:href']) : attribs[attr];
          if (value !== undefined && value.trim() !== '') found.push({ raw: value, navigable: navigable && attr !== 'longdesc' });
        }
      }
      if ((name === 'img' || name === 'source') && attribs.srcset) {
        for (const url of parseSrcset(attribs.srcset)) if (found.length < LINK_LIMITS.values) found.push({ raw: url, navigable: false });
      }
    }
    const children = el.children;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }

  // The document's base URL as every page tool reads it (engine/page-facts.ts): the first <base href> outside
  // templates and SVG, resolved against the page URL; an unusable one (unparsable, data:, javascript:) is ignored.
  let base: URL | null = null;
  try {
    base = new URL(documentBaseUrl(doc, pageUrl));
  } catch {
    /* an invalid pageUrl: relative links cannot be resolved */
  }
  const byUrl = new Map<string, ExtractedLink>();
  for (const { raw, navigable } of found) {
    const url = resolve(raw, base);
    const key = url ?? raw.trim();
    const known = byUrl.get(key);
    if (known) {
      if (navigable) known.navigable = true;
      continue;
    }
    byUrl.set(key, { url: key, valid: url !== null, navigable });
  }
  return [...byUrl.values()];
}
