/**
 * The SEO analyzer's page walk: one pass over the parsed document collects every element the report and the
 * audits read (title, lang, meta, link, anchors, images, headings, the body's text), iteratively (a page nested
 * thousands deep must not overflow the stack); and the `Link` header's links.
 */
import { isTag, isText, type AnyNode, type Document, type Element } from 'domhandler';
import { resolveUrl } from '../../engine/page-facts.ts';
import { foldSpace, textContent } from './text.ts';
import type { SeoReport } from './types.ts';

/** A `<meta>` element, as the audits read it. */
export interface MetaElement {
  /** `name`, lower case, trimmed ('' when absent): Lighthouse's MetaElements artifact lower-cases it too. */
  name: string;
  /** `property`, lower case, trimmed. */
  property: string;
  content: string | null;
}

/** A `<link>` element, or a link of the `Link` response header. */
export interface LinkElement {
  /** `rel`, trimmed and lower case. */
  rel: string;
  hrefRaw: string;
  /** Resolved against the document base URL (head/body) or the page URL (header); null when unparsable. */
  href: string | null;
  hreflang: string;
  source: 'head' | 'body' | 'headers';
}

/** An `<a>` element and the language it is written in. */
export interface AnchorElement {
  el: Element;
  /** Language of the closest element with `lang`, or ''. */
  lang: string;
}

/** An `<img>` element (outside SVG) and whether it is rendered. */
export interface ImageElement {
  el: Element;
  /** Inside something not rendered (`hidden`, `aria-hidden="true"`, inline `display:none` / `visibility:hidden`). */
  hidden: boolean;
}

/** What one walk over the document collects. */
export interface PageReading {
  title: string | null;
  lang: string | null;
  metas: MetaElement[];
  links: LinkElement[];
  anchors: AnchorElement[];
  images: ImageElement[];
  headings: SeoReport['headings'];
  bodyText: string[];
}

/** Elements whose text a reader never sees. */
const INVISIBLE_TEXT = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'noembed', 'noframes', 'head', 'title']);
/** Elements that do not break a word: text on both sides of them runs together. */
const INLINE = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i', 'ins', 'kbd', 'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'wbr']);
const HEADING_LEVELS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const;

interface Frame {
  node: AnyNode;
  inHead: boolean;
  inBody: boolean;
  inSvg: boolean;
  hidden: boolean;
  textSkip: boolean;
  lang: string;
}

/** One pass over the tree: every element the report and the audits read. */
export function readPage(doc: Document): PageReading {
  const reading: PageReading = {
    title: null,
    lang: null,
    metas: [],
    links: [],
    anchors: [],
    images: [],
    headings: { h1: [], h2: [], h3: [], h4: [], h5: [], h6: [] },
    bodyText: [],
  };
  let seenHtml = false;
  // null marks the end of a block element: the text on either side is separate words.
  const stack: Array<Frame | null> = [];
  for (let i = doc.children.length - 1; i >= 0; i--) {
    stack.push({ node: doc.children[i], inHead: false, inBody: false, inSvg: false, hidden: false, textSkip: false, lang: '' });
  }
  while (stack.length) {
    const frame = stack.pop()!;
    if (frame === null) {
      reading.bodyText.push(' ');
      continue;
    }
    const { node } = frame;
    if (isText(node)) {
      if (frame.inBody && !frame.textSkip) reading.bodyText.push(node.data);
      continue;
    }
    if (!isTag(node)) continue;
    const name = node.name;
    if (name === 'template') continue;
    const a = node.attribs;
    let lang = frame.lang;
    const ownLang = a.lang ?? a['xml:lang'];
    if (ownLang !== undefined) lang = ownLang.trim();

    if (name === 'html' && !seenHtml) {
      seenHtml = true;
      const value = (a.lang ?? a['xml:lang'] ?? '').trim();
      reading.lang = value || null;
    } else if (name === 'title' && !frame.inSvg && reading.title === null) {
      reading.title = foldSpace(textContent(node));
    } else if (name === 'meta') {
      reading.metas.push({ name: (a.name ?? '').trim().toLowerCase(), property: (a.property ?? '').trim().toLowerCase(), content: a.content ?? null });
    } else if (name === 'link') {
      reading.links.push({
        rel: (a.rel ?? '').trim().toLowerCase(),
        hrefRaw: a.href ?? '',
        href: null,
        hreflang: (a.hreflang ?? '').trim(),
        source: frame.inHead ? 'head' : 'body',
      });
    } else if (name === 'a') {
      reading.anchors.push({ el: node, lang });
    } else if (name === 'img' && !frame.inSvg) {
      reading.images.push({ el: node, hidden: frame.hidden || isHiddenElement(node) });
    } else if (/^h[1-6]$/.test(name) && !frame.inSvg) {
      reading.headings[name as (typeof HEADING_LEVELS)[number]].push(foldSpace(textContent(node)));
    }

    const inSvg = frame.inSvg || name === 'svg';
    const child: Omit<Frame, 'node'> = {
      inHead: frame.inHead || name === 'head',
      inBody: frame.inBody || name === 'body',
      inSvg,
      hidden: frame.hidden || isHiddenElement(node),
      textSkip: frame.textSkip || INVISIBLE_TEXT.has(name),
      lang,
    };
    const block = !INLINE.has(name);
    if (block && frame.inBody) {
      reading.bodyText.push(' ');
      stack.push(null);
    }
    for (let i = node.children.length - 1; i >= 0; i--) stack.push({ node: node.children[i], ...child });
  }
  return reading;
}

/** Whether the element is hidden itself: `hidden`, `aria-hidden="true"`, or an inline `display:none` / `visibility:hidden`. */
function isHiddenElement(el: Element): boolean {
  const a = el.attribs;
  if (a.hidden !== undefined || a['aria-hidden']?.trim().toLowerCase() === 'true') return true;
  const style = a.style;
  return style !== undefined && /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i.test(style);
}

/** Parses an HTTP `Link` header (RFC 8288) into the link elements Lighthouse reads from it. */
export function linksFromHeader(value: string | undefined, pageUrl: string): LinkElement[] {
  if (!value) return [];
  const links: LinkElement[] = [];
  const re = /<([^>]*)>((?:\s*;\s*[^;,=\s]+(?:\s*=\s*(?:"[^"]*"|[^;,\s]*))?)*)/g;
  for (const m of value.matchAll(re)) {
    const params: Record<string, string> = {};
    for (const p of m[2].matchAll(/;\s*([^;,=\s]+)(?:\s*=\s*(?:"([^"]*)"|([^;,\s]*)))?/g)) {
      const key = p[1].toLowerCase();
      if (!(key in params)) params[key] = p[2] ?? p[3] ?? '';
    }
    const hrefRaw = m[1].trim();
    links.push({ rel: (params.rel ?? '').trim().toLowerCase(), hrefRaw, href: resolveUrl(hrefRaw, pageUrl), hreflang: (params.hreflang ?? '').trim(), source: 'headers' });
  }
  return links;
}

/** Every element with an `id`, the first of each id, into `into` (for `aria-labelledby`): iterative, one walk. */
export function collectIds(doc: Document, into: Map<string, Element>): void {
  const stack: AnyNode[] = [...doc.children];
  while (stack.length) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    const id = node.attribs.id;
    if (id !== undefined && !into.has(id)) into.set(id, node);
    for (const child of node.children) stack.push(child);
  }
}
