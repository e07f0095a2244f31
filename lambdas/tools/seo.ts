/**
 * The SEO analyzer (POST /api/v1/tools/seo-analyzer/; SPEC.md area B; docs/tools.md "SEO analyzer"): what a
 * search engine reads from one page (title, description, canonical, robots directives, hreflang, Open
 * Graph and Twitter cards, structured data, headings, text, links, images, robots.txt) and Lighthouse's SEO
 * audits over it, with Lighthouse's SEO category score.
 *
 * The audits follow the Lighthouse sources (GoogleChrome/lighthouse, core/audits/seo/*.js, and the axe-core
 * rules `document-title` and `image-alt` that Lighthouse runs for the two accessibility audits its SEO
 * category includes); the weights are those of the SEO category in core/config/default-config.js, the same
 * from Lighthouse 12.0.0 (2024-04-22) to the main branch read for this module. Lighthouse audits a page
 * loaded in Chrome; this module audits the HTML it is given (fetched, or rendered by the browser loader), so
 * where Lighthouse reads the live DOM (an anchor's `innerText`, whether an image is displayed) the nearest
 * reading of the markup stands in, each such place named in docs/tools.md.
 *
 * A pure function of a {@link ToolPage} plus one follow-up request for `/robots.txt` through the
 * {@link PageFetch} it is given.
 */
import { isTag, isText, type AnyNode, type Document, type Element } from 'domhandler';
import robotsParserModule from 'robots-parser';
import { iso6393 } from 'iso-639-3';
import { parseHtml } from '../engine/html/parse.ts';
import type { PageFetch, ToolPage } from './page.ts';
import { collectStructuredDataSources, extractStructuredData, type StructuredData } from './structured-data.ts';

/** The part of robots-parser's (3.0.1) parsed robots.txt this module uses. */
interface Robots {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getMatchingLineNumber(url: string, ua?: string): number;
  getSitemaps(): string[];
}

// robots-parser is CommonJS (`module.exports = function robotsParser(url, contents)`) and its bundled
// index.d.ts declares an ES default export, which TypeScript's NodeNext resolution then reads as the module
// namespace: the import is the function at run time, typed here by hand.
const robotsParser = robotsParserModule as unknown as (url: string, contents: string) => Robots;

// ---------------------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------------------

/** Robots directives of the page itself (not robots.txt). */
export interface RobotsDirectives {
  /** `content` of the `<meta name="robots">` elements, joined with `, ` in document order; null when none. */
  meta: string | null;
  /** The `X-Robots-Tag` response header(s) as received (repeated headers joined with `, `); null when absent. */
  x_robots_tag: string | null;
  /**
   * True when a directive addressed to all crawlers (meta robots, or an X-Robots-Tag directive without a
   * user-agent prefix) says `noindex`, `none`, or `unavailable_after: <a past date>`.
   */
  noindex: boolean;
  /** True when such a directive says `nofollow` or `none`. */
  nofollow: boolean;
}

/** One `hreflang` alternate of the page. */
export interface HreflangLink {
  /** The `hreflang` value as written (trimmed). */
  lang: string;
  /** Its URL, absolute (resolved against the document's base URL; a `Link` header's against the page URL). */
  url: string;
}

/** A link whose text says nothing about where it leads (Lighthouse `link-text`). */
export interface NonDescriptiveLink {
  href: string;
  text: string;
}

/** Link counts over the page's `<a href>` elements whose URL is http(s). */
export interface LinkSummary {
  /** Links to the page's host (a leading `www.` ignored on both sides). */
  internal: number;
  /** Links to any other host. */
  external: number;
  /** Of internal and external, those whose `rel` has `nofollow`. */
  nofollow: number;
  /** `<a href>` elements whose URL is not http(s): `mailto:`, `tel:`, `javascript:`, …. */
  other: number;
  /** Links failing Lighthouse's `link-text` audit (first 50). */
  non_descriptive: NonDescriptiveLink[];
}

/** Image counts over the page's `<img>` elements. */
export interface ImageSummary {
  count: number;
  /** Images with no `alt` attribute at all (`alt=""`, a decorative image, counts as having one). */
  without_alt: number;
  /** The absolute `src` of the first 20 of those ('' for an image without `src`). */
  without_alt_srcs: string[];
}

/** What robots.txt says about the page. */
export interface RobotsTxtSummary {
  /** `<origin>/robots.txt`. */
  url: string;
  /** True when it was fetched with a 2xx status (then it is parsed; any other answer is no robots.txt). */
  found: boolean;
  /** HTTP status of the answer; null when no answer came (network error, time-out, refused by the guard). */
  status: number | null;
  /**
   * Whether a crawler obeying robots.txt may fetch the page: its `*` group (or no group) allows the URL.
   * True when there is no robots.txt or it could not be fetched (what crawlers do for a 4xx; after a network
   * error Google holds back, which `note` says).
   */
  allowed: boolean;
  /** Of the crawlers Lighthouse checks (Googlebot, bingbot, DuckDuckBot, archive.org_bot), those disallowed. */
  disallowed_bots: string[];
  /** `Sitemap:` URLs it lists. */
  sitemaps: string[];
  /** Why the answer was read as it was, when it was not a plain 2xx; null otherwise. */
  note: string | null;
}

/** The Lighthouse SEO audits, by id. */
export type SeoAuditId =
  | 'is-crawlable'
  | 'document-title'
  | 'meta-description'
  | 'http-status-code'
  | 'link-text'
  | 'crawlable-anchors'
  | 'robots-txt'
  | 'image-alt'
  | 'hreflang'
  | 'canonical';

/** A row of an audit's details table (the offending element, line or URL). */
export type AuditItem = Record<string, string | number | boolean | null>;

/** One Lighthouse SEO audit, as Lighthouse would score it on this HTML. */
export interface SeoAudit {
  id: SeoAuditId;
  /** Lighthouse's title for the outcome (its `title` when passed, `failureTitle` when failed). */
  title: string;
  /** Lighthouse score 1 (true) or 0 (false); a not applicable audit is passed. */
  passed: boolean;
  /** False when Lighthouse marks the audit not applicable (no canonical, no images, robots.txt 4xx): then it does not count in the score. */
  applicable: boolean;
  /** Its weight in Lighthouse's SEO category. */
  weight: number;
  details: {
    /** Why it failed (or a note when it passed), in words; null when there is nothing to say. */
    explanation: string | null;
    /** The offending items, as Lighthouse lists them. */
    items: AuditItem[];
  };
}

/** The SEO analyzer's response. Field names are the issue's (scrape-ai issue 11); docs/tools.md documents each. */
export interface SeoReport {
  /** The final URL (after redirects). */
  url: string;
  /** HTTP status of the final response. */
  status: number;
  /** The response's MIME type ('' when it named none). */
  content_type: string;
  /** The document title as a browser has it (first `<title>` outside SVG, whitespace folded); null when there is none. */
  title: string | null;
  /** `content` of the first `<meta name="description">`, trimmed; null when there is none. */
  meta_description: string | null;
  /** The first valid canonical URL (`<link rel="canonical">` in the head, else a `Link: rel="canonical"` header), absolute; null when none. */
  canonical: string | null;
  robots: RobotsDirectives;
  /** `lang` of `<html>` (else `xml:lang`), trimmed; null when absent or empty. */
  lang: string | null;
  /** `content` of `<meta name="viewport">`; null when absent. */
  viewport: string | null;
  hreflang: HreflangLink[];
  /**
   * Open Graph properties keyed without the `og:` prefix (`title`, `type`, `url`, `image`, `image:width`,
   * …); other Open Graph namespaces keep theirs (`article:published_time`). Keys starting with `image`,
   * `video` or `audio` (the properties the protocol lets a page repeat) are arrays of every value in order;
   * every other key holds its first value.
   */
  open_graph: Record<string, string | string[]>;
  /** Twitter card properties keyed without `twitter:` (`card`, `site`, `title`, `image`, …), from `name=` or `property=`; first value wins. */
  twitter_card: Record<string, string>;
  structured_data: StructuredData;
  /** Text of each heading level in document order, whitespace folded. */
  headings: { h1: string[]; h2: string[]; h3: string[]; h4: string[]; h5: string[]; h6: string[] };
  /** Words of the body's text (scripts, styles, `<noscript>`, `<template>` and frames' fallback excluded). */
  word_count: number;
  links: LinkSummary;
  images: ImageSummary;
  robots_txt: RobotsTxtSummary;
  /** Every Lighthouse SEO audit, in the order of Lighthouse's category. */
  audits: SeoAudit[];
  /** Lighthouse's SEO category score, 0-100: the weighted mean of the applicable audits, rounded. */
  score: number;
  /** What limited the analysis (a non-HTML response, …). */
  warnings: string[];
}

// ---------------------------------------------------------------------------------------------------------
// Lighthouse's rules and weights
// ---------------------------------------------------------------------------------------------------------

/**
 * Weights of the SEO category (Lighthouse core/config/default-config.js, 12.0.0 onwards): `is-crawlable`
 * weighs 93/23 so that failing it alone fails the category (w / (w + 9) ≥ 0.31).
 */
export const SEO_AUDIT_WEIGHTS: Readonly<Record<SeoAuditId, number>> = {
  'is-crawlable': 93 / 23,
  'document-title': 1,
  'meta-description': 1,
  'http-status-code': 1,
  'link-text': 1,
  'crawlable-anchors': 1,
  'robots-txt': 1,
  'image-alt': 1,
  hreflang: 1,
  canonical: 1,
};

const AUDIT_TITLES: Record<SeoAuditId, [passed: string, failed: string]> = {
  'is-crawlable': ['Page isn’t blocked from indexing', 'Page is blocked from indexing'],
  'document-title': ['Document has a `<title>` element', 'Document doesn’t have a `<title>` element'],
  'meta-description': ['Document has a meta description', 'Document does not have a meta description'],
  'http-status-code': ['Page has successful HTTP status code', 'Page has unsuccessful HTTP status code'],
  'link-text': ['Links have descriptive text', 'Links do not have descriptive text'],
  'crawlable-anchors': ['Links are crawlable', 'Links are not crawlable'],
  'robots-txt': ['robots.txt is valid', 'robots.txt is not valid'],
  'image-alt': ['Image elements have `[alt]` attributes', 'Image elements do not have `[alt]` attributes'],
  hreflang: ['Document has a valid `hreflang`', 'Document doesn’t have a valid `hreflang`'],
  canonical: ['Document has a valid `rel=canonical`', 'Document does not have a valid `rel=canonical`'],
};

/** Lighthouse link-text audit: texts that say nothing about the link's target, by language (core/audits/seo/link-text.js). */
const NON_DESCRIPTIVE_LINK_TEXTS: Record<string, ReadonlySet<string>> = {
  en: new Set(['click here', 'click this', 'go', 'here', 'information', 'learn more', 'more', 'more info', 'more information', 'right here', 'read more', 'see more', 'start', 'this']),
  ja: new Set(['ここをクリック', 'こちらをクリック', 'リンク', '続きを読む', '続く', '全文表示']),
  es: new Set(['click aquí', 'click aqui', 'clicka aquí', 'clicka aqui', 'pincha aquí', 'pincha aqui', 'aquí', 'aqui', 'más', 'mas', 'más información', 'más informacion', 'mas información', 'mas informacion', 'este', 'enlace', 'este enlace', 'empezar']),
  pt: new Set(['clique aqui', 'ir', 'mais informação', 'mais informações', 'mais', 'veja mais']),
  ko: new Set(['여기', '여기를 클릭', '클릭', '링크', '자세히', '자세히 보기', '계속', '이동', '전체 보기']),
  sv: new Set(['här', 'klicka här', 'läs mer', 'mer', 'mer info', 'mer information']),
  de: new Set(['klicke hier', 'hier klicken', 'hier', 'mehr', 'siehe', 'dies', 'das', 'weiterlesen']),
  ta: new Set(['அடுத்த பக்கம்', 'மறுபக்கம்', 'முந்தைய பக்கம்', 'முன்பக்கம்', 'மேலும் அறிக', 'மேலும் தகவலுக்கு', 'மேலும் தரவுகளுக்கு', 'தயவுசெய்து இங்கே அழுத்தவும்', 'இங்கே கிளிக் செய்யவும்']),
  fa: new Set(['اطلاعات بیشتر', 'اطلاعات', 'این', 'اینجا بزنید', 'اینجا کلیک کنید', 'اینجا', 'برو', 'بیشتر بخوانید', 'بیشتر بدانید', 'بیشتر', 'شروع']),
};

/** Crawlers is-crawlable checks one by one; `undefined` is "any crawler" (`*`, `robots`). */
const CRAWLABILITY_BOTS: ReadonlyArray<string | undefined> = [undefined, 'Googlebot', 'bingbot', 'DuckDuckBot', 'archive.org_bot'];

/** Directives in an X-Robots-Tag value that contain a colon but are not a user-agent prefix. */
const COLON_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);

/**
 * ISO 639 language codes a `hreflang`'s primary subtag may use, as axe-core's `isValidLang` (which
 * Lighthouse's hreflang audit calls) accepts them: every ISO 639-1 and ISO 639-3 code, plus the withdrawn
 * ISO 639-1 codes axe keeps.
 */
const LANGUAGE_CODES: ReadonlySet<string> = (() => {
  const codes = new Set<string>(['in', 'iw', 'ji', 'jw', 'mo', 'sh', 'bh']);
  for (const lang of iso6393) {
    codes.add(lang.iso6393);
    if (lang.iso6391) codes.add(lang.iso6391);
    if (lang.iso6392B) codes.add(lang.iso6392B);
    if (lang.iso6392T) codes.add(lang.iso6392T);
  }
  return codes;
})();

// ---------------------------------------------------------------------------------------------------------
// Reading the page
// ---------------------------------------------------------------------------------------------------------

interface MetaElement {
  /** `name`, lower case, trimmed ('' when absent): Lighthouse's MetaElements artifact lower-cases it too. */
  name: string;
  /** `property`, lower case, trimmed. */
  property: string;
  content: string | null;
}

interface LinkElement {
  /** `rel`, trimmed and lower case. */
  rel: string;
  hrefRaw: string;
  /** Resolved against the document base URL (head/body) or the page URL (header); null when unparsable. */
  href: string | null;
  hreflang: string;
  source: 'head' | 'body' | 'headers';
}

interface AnchorElement {
  el: Element;
  /** Language of the closest element with `lang`, or ''. */
  lang: string;
}

interface ImageElement {
  el: Element;
  /** Inside something not rendered (`hidden`, `aria-hidden="true"`, inline `display:none` / `visibility:hidden`). */
  hidden: boolean;
}

/** What one walk over the document collects. */
interface PageReading {
  title: string | null;
  lang: string | null;
  baseHref: string | null;
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
function readPage(doc: Document): PageReading {
  const reading: PageReading = {
    title: null,
    lang: null,
    baseHref: null,
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
    } else if (name === 'base' && reading.baseHref === null && a.href !== undefined) {
      reading.baseHref = a.href;
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

function isHiddenElement(el: Element): boolean {
  const a = el.attribs;
  if (a.hidden !== undefined || a['aria-hidden']?.trim().toLowerCase() === 'true') return true;
  const style = a.style;
  return style !== undefined && /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i.test(style);
}

/**
 * Characters of one element's text read (a title, a heading, a link, an `aria-labelledby` target), and nodes
 * visited for it: headings and links nested in hundreds of others would otherwise be read once for each, and a
 * million images labelled by `<body>` would read the page a million times (docs/tools.md, "Limits of the analysis").
 */
const ELEMENT_TEXT_CHARS = 2_000;
const ELEMENT_TEXT_NODES = 10_000;

/** Text of an element's subtree, scripts, styles and templates left out; the first {@link ELEMENT_TEXT_CHARS} characters. */
function textContent(el: Element): string {
  let out = '';
  let visited = 0;
  const stack: AnyNode[] = [];
  // The first children only: pushing all of an element's million children would cost a million steps a call.
  const push = (children: AnyNode[]): void => {
    for (let i = Math.min(children.length, ELEMENT_TEXT_NODES - visited) - 1; i >= 0; i--) stack.push(children[i]!);
  };
  push(el.children);
  while (stack.length && out.length < ELEMENT_TEXT_CHARS && visited < ELEMENT_TEXT_NODES) {
    const node = stack.pop()!;
    visited++;
    if (isText(node)) out += node.data.length > ELEMENT_TEXT_CHARS - out.length ? node.data.slice(0, ELEMENT_TEXT_CHARS - out.length) : node.data;
    else if (isTag(node) && node.name !== 'script' && node.name !== 'style' && node.name !== 'template') push(node.children);
  }
  return out;
}

/** Collapses runs of ASCII whitespace to one space and trims (the HTML standard's "strip and collapse"). */
function foldSpace(s: string): string {
  return s.replace(/[\t\n\f\r ]+/g, ' ').trim();
}

function resolveUrl(raw: string, base: string): string | null {
  try {
    return new URL(raw.trim(), base).href;
  } catch {
    return null;
  }
}

function isAbsoluteUrl(raw: string): boolean {
  try {
    new URL(raw);
    return true;
  } catch {
    return false;
  }
}

/** The document base URL: the first `<base href>` resolved against the page URL, else the page URL. */
function documentBaseUrl(pageUrl: string, baseHref: string | null): string {
  if (baseHref === null) return pageUrl;
  return resolveUrl(baseHref, pageUrl) ?? pageUrl;
}

/** Parses an HTTP `Link` header (RFC 8288) into the link elements Lighthouse reads from it. */
function linksFromHeader(value: string | undefined, pageUrl: string): LinkElement[] {
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

// ---------------------------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------------------------

/** Open Graph keys whose values a page may repeat (og:image, og:video, og:audio and their structured properties). */
function isRepeatableOgKey(key: string): boolean {
  return /^(?:image|video|audio)(?::|$)/.test(key);
}

function openGraph(metas: MetaElement[]): Record<string, string | string[]> {
  const og: Record<string, string | string[]> = {};
  for (const meta of metas) {
    // Open Graph is `property=`; `name="og:…"` is a common mistake the consumers (Facebook, LinkedIn) read too.
    const prop = meta.property.includes(':') ? meta.property : meta.name;
    if (!/^[a-z_]+:/.test(prop) || prop.startsWith('twitter:') || meta.content === null) continue;
    if (!isOpenGraphNamespace(prop)) continue;
    const key = prop.startsWith('og:') ? prop.slice(3) : prop;
    if (!key) continue;
    const value = meta.content.trim();
    if (isRepeatableOgKey(key)) {
      const list = (og[key] as string[] | undefined) ?? [];
      list.push(value);
      og[key] = list;
    } else if (!(key in og)) {
      og[key] = value;
    }
  }
  return og;
}

/** The namespaces the Open Graph protocol (ogp.me) defines. */
function isOpenGraphNamespace(prop: string): boolean {
  return /^(?:og|article|book|profile|music|video|product|fb):/.test(prop);
}

function twitterCard(metas: MetaElement[]): Record<string, string> {
  const card: Record<string, string> = {};
  for (const meta of metas) {
    const prop = meta.name.startsWith('twitter:') ? meta.name : meta.property.startsWith('twitter:') ? meta.property : '';
    if (!prop || meta.content === null) continue;
    const key = prop.slice('twitter:'.length);
    if (key && !(key in card)) card[key] = meta.content.trim();
  }
  return card;
}

/** Scripts whose words are not separated by spaces: counted by ICU's word segmentation instead. */
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD_CHAR = /[\p{L}\p{N}]/u;
let segmenter: Intl.Segmenter | undefined;

function countWords(text: string): number {
  let count = 0;
  for (const token of text.split(/\s+/)) {
    if (!token || !WORD_CHAR.test(token)) continue;
    if (UNSPACED_SCRIPT.test(token)) {
      segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
      for (const seg of segmenter.segment(token)) if (seg.isWordLike) count++;
    } else {
      count++;
    }
  }
  return count;
}

function hostKey(host: string): string {
  return host.toLowerCase().replace(/^www\./, '');
}

// ---------------------------------------------------------------------------------------------------------
// The audits
// ---------------------------------------------------------------------------------------------------------

function audit(id: SeoAuditId, passed: boolean, explanation: string | null = null, items: AuditItem[] = [], applicable = true): SeoAudit {
  return { id, title: AUDIT_TITLES[id][passed ? 0 : 1], passed, applicable, weight: SEO_AUDIT_WEIGHTS[id], details: { explanation, items } };
}

/** Lighthouse is-crawlable: `noindex` / `none` / a past `unavailable_after`. */
function hasBlockingDirective(directives: string): boolean {
  return directives
    .split(',')
    .map((d) => d.toLowerCase().trim())
    .some((d) => d === 'noindex' || d === 'none' || isUnavailable(d));
}

function isUnavailable(directive: string): boolean {
  const parts = directive.split(':');
  if (parts.length <= 1 || parts[0].trim() !== 'unavailable_after') return false;
  const date = Date.parse(parts.slice(1).join(':'));
  return !Number.isNaN(date) && date < Date.now();
}

/** The user agent an X-Robots-Tag value is addressed to (`googlebot: noindex`), or undefined. */
function headerUserAgent(value: string): string | undefined {
  const m = /^\s*([^,:]+):/.exec(value);
  if (m && !COLON_DIRECTIVES.has(m[1].trim().toLowerCase())) return m[1].trim();
  return undefined;
}

/**
 * The separate X-Robots-Tag values inside a header the page's headers carry joined with `, `: a new value
 * starts at each `<user agent>:` prefix (a value cannot hold two), so `googlebot: noindex, otherbot: none`
 * is two values while `noindex, nofollow` stays one.
 */
function splitRobotsHeader(joined: string): string[] {
  const values: string[] = [];
  for (const part of joined.split(',')) {
    if (headerUserAgent(part) !== undefined || values.length === 0) values.push(part.trim());
    else values[values.length - 1] += `, ${part.trim()}`;
  }
  return values.filter(Boolean);
}

function auditIsCrawlable(page: ToolPage, metas: MetaElement[], robots: Robots | null, robotsUrl: string): SeoAudit {
  const headerValues = page.headers['x-robots-tag'] !== undefined ? splitRobotsHeader(page.headers['x-robots-tag']) : [];
  const blockedBots: Array<string | undefined> = [];
  let generic: AuditItem[] = [];
  for (const bot of CRAWLABILITY_BOTS) {
    const blocking: AuditItem[] = [];
    // A meta element for the bot wins over the generic `robots` one (Google Search Central, robots meta tag).
    let meta = bot ? metas.find((m) => m.name === bot.toLowerCase()) : undefined;
    meta ??= metas.find((m) => m.name === 'robots');
    if (meta && hasBlockingDirective(meta.content ?? '')) blocking.push({ source: `<meta name="${meta.name}" content="${meta.content ?? ''}" />` });
    for (const value of headerValues) {
      const ua = headerUserAgent(value);
      if (ua !== undefined && ua.toLowerCase() !== bot?.toLowerCase()) continue;
      const directives = ua !== undefined ? value.slice(value.indexOf(':') + 1) : value;
      if (hasBlockingDirective(directives)) blocking.push({ source: `X-Robots-Tag: ${value}` });
    }
    if (robots && robots.isAllowed(page.url, bot) === false) {
      blocking.push({ source: `${robotsUrl} line ${robots.getMatchingLineNumber(page.url, bot)}` });
    }
    if (blocking.length) blockedBots.push(bot);
    if (bot === undefined) generic = blocking;
  }
  const passed = blockedBots.length < CRAWLABILITY_BOTS.length;
  if (!passed) return audit('is-crawlable', false, 'Every crawler is blocked from indexing the page.', generic);
  const note = blockedBots.length
    ? `The following bot user agents are blocked from crawling: ${blockedBots.map((b) => b ?? 'all crawlers (*)').join(', ')}. The audit is otherwise passing, because at least one bot is allowed.`
    : null;
  return audit('is-crawlable', true, note);
}

function auditDocumentTitle(title: string | null): SeoAudit {
  if (title === null) return audit('document-title', false, 'The document has no <title> element.');
  if (!title) return audit('document-title', false, 'The <title> element is empty.');
  return audit('document-title', true);
}

function auditMetaDescription(metas: MetaElement[]): SeoAudit {
  const meta = metas.find((m) => m.name === 'description');
  if (!meta) return audit('meta-description', false, 'No <meta name="description"> element.');
  if (!(meta.content ?? '').trim()) return audit('meta-description', false, 'Description text is empty.');
  return audit('meta-description', true);
}

function auditHttpStatus(status: number): SeoAudit {
  const failed = status >= 400 && status <= 599;
  return audit('http-status-code', !failed, failed ? `HTTP status ${status}.` : null);
}

function equalWithoutFragment(a: string, b: string): boolean {
  try {
    const ua = new URL(a);
    const ub = new URL(b);
    ua.hash = '';
    ub.hash = '';
    return ua.href === ub.href;
  } catch {
    return false;
  }
}

function isFullHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Lighthouse link-text: which anchors fail, with their resolved href and text. */
function nonDescriptiveLinks(anchors: AnchorElement[], baseUrl: string, pageUrl: string): NonDescriptiveLink[] {
  const failing: NonDescriptiveLink[] = [];
  for (const { el, lang } of anchors) {
    const raw = el.attribs.href ?? el.attribs['xlink:href'];
    if (raw === undefined) continue;
    const href = resolveUrl(raw, baseUrl) ?? raw;
    if (!href) continue;
    const rel = (el.attribs.rel ?? '').toLowerCase();
    if (rel.includes('nofollow')) continue;
    const lower = href.toLowerCase();
    if (lower.startsWith('javascript:') || lower.startsWith('mailto:') || equalWithoutFragment(href, pageUrl)) continue;
    const text = foldSpace(textContent(el));
    if (!text) continue;
    if (isFullHttpUrl(text)) {
      failing.push({ href, text });
      continue;
    }
    const term = text.toLowerCase();
    const primary = lang.split('-')[0].toLowerCase();
    const lists = lang ? (NON_DESCRIPTIVE_LINK_TEXTS[primary] ? [NON_DESCRIPTIVE_LINK_TEXTS[primary]] : []) : Object.values(NON_DESCRIPTIVE_LINK_TEXTS);
    if (lists.some((list) => list.has(term))) failing.push({ href, text });
  }
  return failing;
}

function auditLinkText(failing: NonDescriptiveLink[]): SeoAudit {
  if (!failing.length) return audit('link-text', true);
  return audit('link-text', false, `${failing.length} link${failing.length === 1 ? '' : 's'} found`, failing.map((l) => ({ href: l.href, text: l.text })));
}

const HREF_ASSOCIATED_ATTRIBUTES = ['target', 'download', 'ping', 'rel', 'hreflang', 'type', 'referrerpolicy'];

/** A short serialisation of an element's start tag, for audit details. */
function snippet(el: Element): string {
  const attrs = Object.entries(el.attribs)
    .map(([k, v]) => (v === '' ? k : `${k}="${v.length > 80 ? `${v.slice(0, 77)}...` : v}"`))
    .join(' ');
  return `<${el.name}${attrs ? ` ${attrs}` : ''}>`;
}

function auditCrawlableAnchors(anchors: AnchorElement[], baseUrl: string, pageUrl: string): SeoAudit {
  const failing: AuditItem[] = [];
  for (const { el } of anchors) {
    const a = el.attribs;
    const hasHref = a.href !== undefined || a['xlink:href'] !== undefined;
    const rawHref = (a.href ?? a['xlink:href'] ?? '').replace(/\s/g, '');
    const name = (a.name ?? '').trim();
    const role = (a.role ?? '').trim();
    if (role.length > 0) continue;
    if (rawHref.startsWith('mailto:')) continue;
    if (rawHref === '' && a.id) continue;
    if (rawHref.startsWith('file:')) {
      failing.push({ node: snippet(el) });
      continue;
    }
    if (name.length > 0) continue;
    const ariaCurrent = (a['aria-current'] ?? '').trim();
    if (!hasHref && !HREF_ASSOCIATED_ATTRIBUTES.some((attr) => attr in a) && (ariaCurrent === 'page' || ariaCurrent === 'location')) continue;
    // The DOM's `href` of an anchor without the attribute is ''; with one, it is the resolved URL.
    const href = hasHref ? (resolveUrl(a.href ?? a['xlink:href'] ?? '', baseUrl) ?? rawHref) : '';
    let fails = href === '' || /javascript:void(\(|)0(\)|)/.test(rawHref);
    if (!fails) fails = resolveUrl(rawHref, pageUrl) === null;
    if (fails) failing.push({ node: snippet(el) });
  }
  if (!failing.length) return audit('crawlable-anchors', true);
  return audit('crawlable-anchors', false, `${failing.length} uncrawlable link${failing.length === 1 ? '' : 's'}`, failing.slice(0, 50));
}

/**
 * Lighthouse robots-txt: the validator of core/audits/seo/robots-txt.js (known directives only, sitemap
 * URLs absolute http(s)/ftp, allow/disallow patterns starting with `/` or `*`, `$` only at the end, rules
 * only inside a user-agent group).
 */
function validateRobotsTxt(content: string): Array<{ line: number; content: string; message: string }> {
  const known = new Set(['user-agent', 'disallow', 'allow', 'sitemap', 'crawl-delay', 'clean-param', 'host', 'request-rate', 'visit-time', 'noindex', 'content-signal', 'license']);
  const errors: Array<{ line: number; content: string; message: string }> = [];
  let inGroup = false;
  content.split(/\r\n|\r|\n/).forEach((original, index) => {
    let line = original;
    const hash = line.indexOf('#');
    if (hash !== -1) line = line.slice(0, hash);
    line = line.trim();
    if (!line) return;
    const colon = line.indexOf(':');
    const fail = (message: string): void => {
      errors.push({ line: index + 1, content: original, message });
    };
    if (colon === -1) return fail('Syntax not understood');
    const directive = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (!known.has(directive)) return fail('Unknown directive');
    if (directive === 'sitemap') {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return fail('Invalid sitemap URL');
      }
      if (!['https:', 'http:', 'ftp:'].includes(url.protocol)) return fail('Invalid sitemap URL protocol');
    }
    if (directive === 'user-agent' && !value) return fail('No user-agent specified');
    if (directive === 'allow' || directive === 'disallow') {
      if (value !== '' && value[0] !== '/' && value[0] !== '*') return fail('Pattern should either be empty, start with "/" or "*"');
      const dollar = value.indexOf('$');
      if (dollar !== -1 && dollar !== value.length - 1) return fail('"$" should only be used at the end of the pattern');
    }
    if (directive === 'user-agent') inGroup = true;
    else if (!inGroup && (directive === 'allow' || directive === 'disallow')) fail('No user-agent specified');
  });
  return errors;
}

function auditRobotsTxt(fetched: { status: number; text: string } | null): SeoAudit {
  if (fetched === null) return audit('robots-txt', false, 'Fetch of robots.txt failed.');
  const { status, text } = fetched;
  if (status >= 500 || status === 429) return audit('robots-txt', false, `Request for robots.txt returned HTTP status: ${status}`);
  if (status >= 400 || text === '') return audit('robots-txt', true, status >= 400 ? `No robots.txt (HTTP ${status}).` : 'robots.txt is empty.', [], false);
  const errors = validateRobotsTxt(text);
  if (!errors.length) return audit('robots-txt', true);
  return audit('robots-txt', false, `${errors.length} error${errors.length === 1 ? '' : 's'} found`, errors.slice(0, 50));
}

/** axe-core image-alt (Lighthouse accessibility/image-alt): an image needs a text alternative or a presentational role. */
function auditImageAlt(images: ImageElement[], ids: Map<string, Element>, baseUrl: string): SeoAudit {
  const inScope = images.filter((img) => !img.hidden);
  if (!inScope.length) return audit('image-alt', true, null, [], false);
  const failing: AuditItem[] = [];
  // Whether each labelling element has text, read once per element (a million images may name the same one).
  const labelled = new Map<Element, boolean>();
  const hasText = (target: Element): boolean => {
    let has = labelled.get(target);
    if (has === undefined) labelled.set(target, (has = foldSpace(textContent(target)) !== ''));
    return has;
  };
  for (const { el } of inScope) {
    const a = el.attribs;
    const role = (a.role ?? '').trim().toLowerCase().split(/\s+/)[0];
    const labelledBy = (a['aria-labelledby'] ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .some((id) => {
        const target = ids.get(id);
        return target !== undefined && hasText(target);
      });
    const hasName = a.alt !== undefined || (a['aria-label'] ?? '').trim() !== '' || labelledBy || (a.title ?? '').trim() !== '' || role === 'none' || role === 'presentation';
    const altIsOnlySpace = a.alt !== undefined && /^\s+$/.test(a.alt);
    if (!hasName || altIsOnlySpace) {
      failing.push({ node: snippet(el), src: a.src !== undefined ? (resolveUrl(a.src, baseUrl) ?? a.src) : '' });
    }
  }
  if (!failing.length) return audit('image-alt', true);
  return audit('image-alt', false, `${failing.length} image${failing.length === 1 ? '' : 's'} without a text alternative`, failing.slice(0, 50));
}

/** Lighthouse hreflang (via axe-core's isValidLang): the primary subtag a known ISO 639 code, or `x-default`. */
function isExpectedLanguageCode(hreflang: string): boolean {
  if (hreflang.toLowerCase() === 'x-default') return true;
  const [primary] = hreflang.split('-');
  return LANGUAGE_CODES.has(primary.toLowerCase());
}

function auditHreflang(links: LinkElement[]): SeoAudit {
  const failing: AuditItem[] = [];
  for (const link of links) {
    if (link.rel !== 'alternate' || !link.hreflang || link.source === 'body') continue;
    const reasons: string[] = [];
    if (!isExpectedLanguageCode(link.hreflang)) reasons.push('Unexpected language code');
    const raw = link.hrefRaw.toLowerCase();
    if (!raw.startsWith('http:') && !raw.startsWith('https:')) reasons.push('Relative href value');
    if (!reasons.length) continue;
    const source =
      link.source === 'headers'
        ? `Link: <${link.hrefRaw}>; rel="alternate"; hreflang="${link.hreflang}"`
        : `<link rel="alternate" hreflang="${link.hreflang}" href="${link.hrefRaw}" />`;
    failing.push({ source, reason: reasons.join('; ') });
  }
  if (!failing.length) return audit('hreflang', true);
  return audit('hreflang', false, `${failing.length} invalid hreflang link${failing.length === 1 ? '' : 's'}`, failing.slice(0, 50));
}

interface CanonicalReading {
  /** Valid absolute canonical URLs in order, each once. */
  urls: string[];
  invalid: LinkElement | undefined;
  relative: LinkElement | undefined;
  hreflangUrls: Set<string>;
}

function readCanonicals(links: LinkElement[]): CanonicalReading {
  const urls: string[] = [];
  const hreflangUrls = new Set<string>();
  let invalid: LinkElement | undefined;
  let relative: LinkElement | undefined;
  for (const link of links) {
    // Links in the body are not canonical references (HTML standard, "body-ok" link types).
    if (link.source === 'body') continue;
    if (link.rel === 'canonical') {
      if (!link.hrefRaw) continue;
      if (link.href === null || resolveUrl(link.hrefRaw, 'https://example.com') === null) invalid = link;
      else if (!isAbsoluteUrl(link.hrefRaw)) relative = link;
      else if (!urls.includes(link.href)) urls.push(link.href);
    } else if (link.rel === 'alternate' && link.href && link.hreflang) {
      hreflangUrls.add(link.href);
    }
  }
  return { urls, invalid, relative, hreflangUrls };
}

function auditCanonical(reading: CanonicalReading, pageUrl: string): SeoAudit {
  if (reading.invalid) return audit('canonical', false, `Invalid URL (${reading.invalid.hrefRaw})`);
  if (reading.relative) return audit('canonical', false, `Is not an absolute URL (${reading.relative.hrefRaw})`);
  if (reading.urls.length === 0) return audit('canonical', true, null, [], false);
  if (reading.urls.length > 1) return audit('canonical', false, `Multiple conflicting URLs (${reading.urls.join(', ')})`);
  const canonical = new URL(reading.urls[0]);
  let base: URL;
  try {
    base = new URL(pageUrl);
  } catch {
    return audit('canonical', true);
  }
  if (reading.hreflangUrls.has(base.href) && reading.hreflangUrls.has(canonical.href) && base.href !== canonical.href) {
    return audit('canonical', false, `Points to another \`hreflang\` location (${base.href})`);
  }
  if (canonical.origin === base.origin && canonical.pathname === '/' && base.pathname !== '/') {
    return audit('canonical', false, "Points to the domain's root URL (the homepage), instead of an equivalent page of content");
  }
  if (hostKey(canonical.hostname) !== hostKey(base.hostname)) {
    // Lighthouse failed this until 2021 (GoogleChrome/lighthouse#12572); search engines accept cross-domain canonicals.
    return audit('canonical', true, `Points to another domain (${canonical.href}): allowed, but this page will not be the one indexed.`);
  }
  return audit('canonical', true);
}

/** Lighthouse's category score: the weighted mean of the applicable audits' 0/1 scores, as 0-100. */
function seoScore(audits: SeoAudit[]): number {
  let total = 0;
  let weights = 0;
  for (const a of audits) {
    if (!a.applicable) continue;
    weights += a.weight;
    total += a.weight * (a.passed ? 1 : 0);
  }
  return weights === 0 ? 0 : Math.round((total / weights) * 100);
}

// ---------------------------------------------------------------------------------------------------------
// The analyzer
// ---------------------------------------------------------------------------------------------------------

/** MIME types read as HTML. */
function isHtmlType(contentType: string): boolean {
  return contentType === '' || contentType === 'text/html' || contentType === 'application/xhtml+xml';
}

/**
 * Analyses one page for SEO: the fields of {@link SeoReport} and Lighthouse's SEO audits and score.
 *
 * Fetches `<origin>/robots.txt` once through `fetch`: a 2xx answer is parsed with robots-parser (3.0.1);
 * a 4xx is no robots.txt (everything allowed, the robots-txt audit not applicable); no answer at all is
 * reported (`robots_txt.note`), read as allowed, and fails the robots-txt audit as in Lighthouse.
 *
 * A response that is not HTML (by its Content-Type: anything but text/html, application/xhtml+xml or
 * none) is not parsed: the report describes an empty document and says so in `warnings`.
 *
 * @param page the fetched (or rendered) page.
 * @param fetch how to fetch robots.txt (through the outbound guard).
 * @returns the report; never throws for anything a page or robots.txt contains.
 */
export async function analyzeSeo(page: ToolPage, fetch: PageFetch): Promise<SeoReport> {
  const warnings: string[] = [];
  const pageUrl = page.url;
  let origin: string | null = null;
  try {
    const u = new URL(pageUrl);
    if (u.protocol === 'http:' || u.protocol === 'https:') origin = u.origin;
  } catch {
    origin = null;
  }
  const robotsUrl = origin ? `${origin}/robots.txt` : '';
  const robotsFetch = origin ? fetch(robotsUrl).catch(() => null) : Promise.resolve(null);

  const html = isHtmlType(page.contentType) ? page.html : '';
  if (html !== page.html) warnings.push(`The response is ${page.contentType}, not HTML: its body was not analysed.`);
  const doc = parseHtml(html);
  const reading = readPage(doc);
  const baseUrl = documentBaseUrl(pageUrl, reading.baseHref);

  for (const link of reading.links) link.href = resolveUrl(link.hrefRaw, baseUrl);
  const allLinks = [...reading.links, ...linksFromHeader(page.headers.link, pageUrl)];
  const metas = reading.metas;

  // robots.txt
  const fetched = await robotsFetch;
  const robotsStatus = fetched?.status ?? null;
  const robotsFound = fetched !== null && fetched.status >= 200 && fetched.status < 300;
  const robots = robotsFound ? robotsParser(robotsUrl, fetched.text) : null;
  const robotsNote =
    fetched === null
      ? origin
        ? 'robots.txt could not be fetched (no response): read as allowing everything, although Google stops crawling a site whose robots.txt does not answer.'
        : 'The page URL is not http(s): no robots.txt.'
      : fetched.status >= 500 || fetched.status === 429
        ? `robots.txt answered HTTP ${fetched.status}: read as allowing everything, although Google treats a server error as disallowing the whole site.`
        : fetched.status >= 300 && !robotsFound
          ? `robots.txt answered HTTP ${fetched.status}: no robots.txt, everything allowed.`
          : null;
  const robotsTxt: RobotsTxtSummary = {
    url: robotsUrl,
    found: robotsFound,
    status: robotsStatus,
    allowed: robots ? robots.isAllowed(pageUrl, undefined) !== false : true,
    disallowed_bots: robots ? CRAWLABILITY_BOTS.filter((b): b is string => b !== undefined && robots.isAllowed(pageUrl, b) === false) : [],
    sitemaps: robots ? robots.getSitemaps() : [],
    note: robotsNote,
  };

  // Page-level robots directives addressed to every crawler.
  const metaRobots = metas.filter((m) => m.name === 'robots' && m.content !== null).map((m) => m.content!.trim());
  const xRobots = page.headers['x-robots-tag'] ?? null;
  const generic = [...metaRobots, ...(xRobots ? splitRobotsHeader(xRobots).filter((v) => headerUserAgent(v) === undefined) : [])];
  const directives = generic.flatMap((v) => v.split(',').map((d) => d.trim().toLowerCase()));
  const robotsDirectives: RobotsDirectives = {
    meta: metaRobots.length ? metaRobots.join(', ') : null,
    x_robots_tag: xRobots,
    noindex: directives.some((d) => d === 'noindex' || d === 'none' || isUnavailable(d)),
    nofollow: directives.some((d) => d === 'nofollow' || d === 'none'),
  };

  // Links.
  const pageHost = origin ? hostKey(new URL(pageUrl).hostname) : '';
  const links: LinkSummary = { internal: 0, external: 0, nofollow: 0, other: 0, non_descriptive: [] };
  for (const { el } of reading.anchors) {
    const raw = el.attribs.href ?? el.attribs['xlink:href'];
    if (raw === undefined) continue;
    const resolved = resolveUrl(raw, baseUrl);
    let url: URL | null = null;
    try {
      url = resolved ? new URL(resolved) : null;
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      links.other++;
      continue;
    }
    if (hostKey(url.hostname) === pageHost) links.internal++;
    else links.external++;
    if ((el.attribs.rel ?? '').toLowerCase().split(/\s+/).includes('nofollow')) links.nofollow++;
  }
  const nonDescriptive = nonDescriptiveLinks(reading.anchors, baseUrl, pageUrl);
  links.non_descriptive = nonDescriptive.slice(0, 50);

  // Images.
  const withoutAlt = reading.images.filter((img) => img.el.attribs.alt === undefined);
  const images: ImageSummary = {
    count: reading.images.length,
    without_alt: withoutAlt.length,
    without_alt_srcs: withoutAlt.slice(0, 20).map(({ el }) => (el.attribs.src !== undefined ? (resolveUrl(el.attribs.src, baseUrl) ?? el.attribs.src) : '')),
  };

  // Canonical and hreflang.
  const canonicals = readCanonicals(allLinks);
  const hreflang: HreflangLink[] = allLinks
    .filter((l) => l.rel === 'alternate' && l.hreflang && l.source !== 'body' && l.href !== null)
    .map((l) => ({ lang: l.hreflang, url: l.href! }));

  const ids = new Map<string, Element>();
  if (reading.images.some((img) => img.el.attribs['aria-labelledby'])) collectIds(doc, ids);

  const audits: SeoAudit[] = [
    auditIsCrawlable(page, metas, robots, robotsUrl),
    auditDocumentTitle(reading.title),
    auditMetaDescription(metas),
    auditHttpStatus(page.status),
    auditLinkText(nonDescriptive),
    auditCrawlableAnchors(reading.anchors, baseUrl, pageUrl),
    auditRobotsTxt(fetched && { status: fetched.status, text: fetched.text }),
    auditImageAlt(reading.images, ids, baseUrl),
    auditHreflang(allLinks),
    auditCanonical(canonicals, pageUrl),
  ];

  const viewport = metas.find((m) => m.name === 'viewport');
  const description = metas.find((m) => m.name === 'description');
  return {
    url: pageUrl,
    status: page.status,
    content_type: page.contentType,
    title: reading.title,
    meta_description: description ? (description.content ?? '').trim() : null,
    canonical: canonicals.urls[0] ?? null,
    robots: robotsDirectives,
    lang: reading.lang,
    viewport: viewport ? (viewport.content ?? '').trim() : null,
    hreflang,
    open_graph: openGraph(metas),
    twitter_card: twitterCard(metas),
    structured_data: extractStructuredData(collectStructuredDataSources(doc)),
    headings: reading.headings,
    word_count: countWords(reading.bodyText.join('')),
    links,
    images,
    robots_txt: robotsTxt,
    audits,
    score: seoScore(audits),
    warnings,
  };
}

function collectIds(doc: Document, into: Map<string, Element>): void {
  const stack: AnyNode[] = [...doc.children];
  while (stack.length) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    const id = node.attribs.id;
    if (id !== undefined && !into.has(id)) into.set(id, node);
    for (const child of node.children) stack.push(child);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The response's JSON Schema
// ---------------------------------------------------------------------------------------------------------

const stringArray = { type: 'array', items: { type: 'string' } } as const;
const nullableString = { type: ['string', 'null'] } as const;

/**
 * JSON Schema of {@link SeoReport}: keywords common to drafts 07 and 2020-12 only (no `$schema`, so ajv 8's
 * default `Ajv` class compiles it, in strict mode with `allowUnionTypes`; so does `Ajv2020`); closed objects
 * (`additionalProperties: false`) wherever the shape is fixed; the keyed maps (`open_graph`,
 * `twitter_card`, audit items) are open with typed values.
 */
export const seoReportSchema = {
  $id: 'https://scrape-ai.dev/schemas/tools/seo-report.json',
  title: 'SEO analyzer response',
  type: 'object',
  additionalProperties: false,
  required: [
    'url', 'status', 'content_type', 'title', 'meta_description', 'canonical', 'robots', 'lang', 'viewport', 'hreflang',
    'open_graph', 'twitter_card', 'structured_data', 'headings', 'word_count', 'links', 'images', 'robots_txt', 'audits',
    'score', 'warnings',
  ],
  properties: {
    url: { type: 'string' },
    status: { type: 'integer' },
    content_type: { type: 'string' },
    title: nullableString,
    meta_description: nullableString,
    canonical: nullableString,
    robots: {
      type: 'object',
      additionalProperties: false,
      required: ['meta', 'x_robots_tag', 'noindex', 'nofollow'],
      properties: { meta: nullableString, x_robots_tag: nullableString, noindex: { type: 'boolean' }, nofollow: { type: 'boolean' } },
    },
    lang: nullableString,
    viewport: nullableString,
    hreflang: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['lang', 'url'], properties: { lang: { type: 'string' }, url: { type: 'string' } } },
    },
    open_graph: { type: 'object', additionalProperties: { anyOf: [{ type: 'string' }, stringArray] } },
    twitter_card: { type: 'object', additionalProperties: { type: 'string' } },
    structured_data: {
      type: 'object',
      additionalProperties: false,
      required: ['json_ld', 'microdata', 'rdfa', 'types', 'errors'],
      properties: {
        json_ld: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'id', 'nested_types'],
            properties: { type: stringArray, id: nullableString, nested_types: stringArray },
          },
        },
        microdata: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'id', 'top_level'],
            properties: { type: stringArray, id: nullableString, top_level: { type: 'boolean' } },
          },
        },
        rdfa: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, required: ['type'], properties: { type: stringArray } },
        },
        types: stringArray,
        errors: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['syntax', 'index', 'message'],
            properties: { syntax: { const: 'json-ld' }, index: { type: 'integer', minimum: 0 }, message: { type: 'string' } },
          },
        },
      },
    },
    headings: {
      type: 'object',
      additionalProperties: false,
      required: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
      properties: { h1: stringArray, h2: stringArray, h3: stringArray, h4: stringArray, h5: stringArray, h6: stringArray },
    },
    word_count: { type: 'integer', minimum: 0 },
    links: {
      type: 'object',
      additionalProperties: false,
      required: ['internal', 'external', 'nofollow', 'other', 'non_descriptive'],
      properties: {
        internal: { type: 'integer', minimum: 0 },
        external: { type: 'integer', minimum: 0 },
        nofollow: { type: 'integer', minimum: 0 },
        other: { type: 'integer', minimum: 0 },
        non_descriptive: {
          type: 'array',
          maxItems: 50,
          items: { type: 'object', additionalProperties: false, required: ['href', 'text'], properties: { href: { type: 'string' }, text: { type: 'string' } } },
        },
      },
    },
    images: {
      type: 'object',
      additionalProperties: false,
      required: ['count', 'without_alt', 'without_alt_srcs'],
      properties: {
        count: { type: 'integer', minimum: 0 },
        without_alt: { type: 'integer', minimum: 0 },
        without_alt_srcs: { ...stringArray, maxItems: 20 },
      },
    },
    robots_txt: {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'found', 'status', 'allowed', 'disallowed_bots', 'sitemaps', 'note'],
      properties: {
        url: { type: 'string' },
        found: { type: 'boolean' },
        status: { type: ['integer', 'null'] },
        allowed: { type: 'boolean' },
        disallowed_bots: stringArray,
        sitemaps: stringArray,
        note: nullableString,
      },
    },
    audits: {
      type: 'array',
      minItems: 10,
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title', 'passed', 'applicable', 'weight', 'details'],
        properties: {
          id: { enum: Object.keys(SEO_AUDIT_WEIGHTS) },
          title: { type: 'string' },
          passed: { type: 'boolean' },
          applicable: { type: 'boolean' },
          weight: { type: 'number', minimum: 0 },
          details: {
            type: 'object',
            additionalProperties: false,
            required: ['explanation', 'items'],
            properties: {
              explanation: nullableString,
              items: { type: 'array', items: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } } },
            },
          },
        },
      },
    },
    score: { type: 'integer', minimum: 0, maximum: 100 },
    warnings: stringArray,
  },
} as const;
