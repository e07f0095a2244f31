/**
 * Article content extraction (docs/spec.md, "Tool endpoints", `POST /api/v1/tools/content-extractor/`; docs/tools.md): the main
 * text of a page with its metadata and images, as a reader view shows it.
 *
 * The steps:
 * 1. Parse the HTML as a browser does, within bounds (parseHtml(), engine/html/parse.ts: the tree every other
 *    part of the project reads), and build linkedom's document (a light DOM, for Readability) from that tree node
 *    by node, without a second parse (content-dom.ts: what differs, and the bounds {@link CONTENT_LIMITS}: at most
 *    48 levels, 20,000 elements, 1,000 child elements under one element); with the document's base URL set from
 *    the page's final URL and its `<base href>`. Readability takes time quadratic in the nesting (100,000 nested
 *    `<div>`s: minutes); within the bounds it is linear.
 * 2. `isProbablyReaderable` of @mozilla/readability on the untouched document (Firefox's test for offering
 *    Reader View); the candidate-scoring extraction of `Readability.parse()` on the same document (it mutates
 *    it, so the document is built once per call and read before).
 * 3. Boilerplate Readability keeps, removed as trafilatura removes it (Barbaresi, "Trafilatura", ACL 2021) and as
 *    the article-extraction-benchmark's human labels leave it out of an article's body: blocks whose class or id
 *    names them as sharing, newsletters, related stories, ads, bylines and dates, navigation, slideshows, cookie
 *    notices, comments, tags, screen-reader text or most-read lists, and `<nav>` and `<header>` (marked on the
 *    untouched document, since Readability renames and unwraps elements); paragraphs and list items that are
 *    links to elsewhere (link text 80% or more) in a list, in a run or after a label ("More:", "Related: …");
 *    blocks that repeat the headline; then, within a share of their own, whole lines that are page furniture: the
 *    page's own address (print headers, "retrieved from <url>"), interface labels ("Caption", "Close", "Read More",
 *    "Breaking News") and date lines (a year and a clock time in a short line). Smallest first, and only while they hold 15% of the text or less together:
 *    the body is never cut by such a rule. Image captions and credits (`<figcaption>`, and blocks named so) are
 *    left out of the text and kept in the HTML. A page that is not an article keeps its repeated records whole
 *    (a quote with its author: {@link markRecords}).
 * 4. A fallback when Readability finds nothing or very little (less text than its own 500-character threshold):
 *    the page's declared article body (`[itemprop=articleBody]`), else its largest `<article>`, `<main>` or
 *    `[role=main]` (`<body>` only when Readability found no text at all), cleaned of scripts, navigation, forms
 *    and hidden parts and of boilerplate as in step 3, is used when it holds at least twice the text outside
 *    links (a paywalled teaser in a page of menus and headlines stays the teaser). The other way round, when
 *    Readability took far more than the page's one declared article body and all of it (its last resort is the
 *    whole `<body>`), the declared body is used.
 * 5. Metadata: Readability's (JSON-LD, Open Graph, Dublin Core, Parse.ly, `<meta name=author>`), then where it
 *    has none, other standard places (`<time datetime>`, `itemprop` microdata, `<meta name=date>`, the
 *    `Content-Language` header, …). Titles split on en and em dashes as well (Readability after 0.6.0 does).
 */
import { targetUrlProperty } from './report-url.ts';
import { Readability, isProbablyReaderable } from '@mozilla/readability';
import type { Document as DomDocument } from 'domhandler';
import { parseHtml } from '../engine/html/parse.ts';
import { documentBaseUrl, isHtmlResponse, mimeEssence, resolveUrl } from '../engine/page-facts.ts';
import { CONTENT_LIMITS, readerDocument } from './content-dom.ts';
import type { ToolPage } from './page.ts';
import { parseJsonLdBounded } from './structured-data.ts';

/** Words a minute of silent reading of non-fiction in English (Brysbaert, "How many words do we read per minute?", 2019). */
export const WORDS_PER_MINUTE = 238;
/** Longest HTML read, in characters; the rest is cut (the fetcher caps bodies before this). */
const MAX_HTML_CHARS = 5_000_000;
/** Readability's own `DEFAULT_CHAR_THRESHOLD`: below it, its result counts as "very little" (step 4). */
const SHORT_TEXT_CHARS = 500;
/** An image list longer than this is cut (galleries of hundreds of thumbnails). */
const MAX_IMAGES = 200;

export { CONTENT_LIMITS } from './content-dom.ts';

/** One image of the article content. */
export interface ContentImage {
  /** Absolute URL (http, https); `data:` images are left out. */
  src: string;
  /** Its `alt` text ('' when none). */
  alt: string;
}

/** What the content extractor returns for a page. */
export interface ContentReport {
  /** The page's URL after redirects (lambdas/tools/report-url.ts). */
  url: string;
  /** The article's title: metadata (JSON-LD, Open Graph, …) first, else the `<title>` without the site's part; null when none. */
  title: string | null;
  /** Author(s) as the page names them; null when none found. */
  byline: string | null;
  /** Publication time: ISO 8601 when the value found can be read as a date, else as found; null when none. */
  published_time: string | null;
  /** Name of the site or publication (`og:site_name`, JSON-LD publisher); null when none. */
  site_name: string | null;
  /** Language tag of the document (`<html lang>`, else `Content-Language`); null when none. */
  lang: string | null;
  /** A short description: the page's meta description, else the article's first paragraph; null when none. */
  excerpt: string | null;
  /**
   * The article's text: one block (paragraph, heading, list item, …) a line, blank lines between paragraphs; image
   * captions and credits left out (they are in `html`).
   */
  text: string;
  /** The article's cleaned HTML (Readability's markup: no scripts, styles, classes or event handlers; absolute URLs). */
  html: string;
  /** Words of `text` (Unicode word segmentation, UAX #29, with dictionaries for Chinese, Japanese and Thai). */
  word_count: number;
  /** `word_count` / {@link WORDS_PER_MINUTE}, rounded to the nearest minute, at least 1 when there are words; 0 without. */
  reading_time_minutes: number;
  /** The content's images, in document order, each URL once. */
  images: ContentImage[];
  /** Whether the page looks like an article (Readability's `isProbablyReaderable`). */
  readerable: boolean;
  /** With `format: "markdown"` only: `html` as GitHub Flavored Markdown (lambdas/tools/markdown.ts). */
  markdown?: string;
}

/** JSON Schema (draft 7, ajv strict mode) of a {@link ContentReport}: the tool's response body. */
export const contentReportSchema = {
  $id: 'https://scrape-ai.dev/schemas/tools/content-extractor.json',
  title: 'ContentReport',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'title', 'byline', 'published_time', 'site_name', 'lang', 'excerpt', 'text', 'html', 'word_count', 'reading_time_minutes', 'images', 'readerable'],
  properties: {
    url: targetUrlProperty,
    title: { type: ['string', 'null'] },
    byline: { type: ['string', 'null'] },
    published_time: { type: ['string', 'null'] },
    site_name: { type: ['string', 'null'] },
    lang: { type: ['string', 'null'] },
    excerpt: { type: ['string', 'null'] },
    text: { type: 'string' },
    html: { type: 'string' },
    word_count: { type: 'integer', minimum: 0 },
    reading_time_minutes: { type: 'integer', minimum: 0 },
    images: {
      type: 'array',
      maxItems: MAX_IMAGES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['src', 'alt'],
        properties: { src: { type: 'string', pattern: '^https?://' }, alt: { type: 'string' } },
      },
    },
    readerable: { type: 'boolean' },
    markdown: { type: 'string', description: 'With `format: "markdown"`: the article as GitHub Flavored Markdown' },
  },
} as const;

/**
 * Extracts the article of `page` (steps in the module comment). Never throws on bad input: a page that is not
 * HTML gives an empty report (a `text/plain` page gives its text), an empty or broken page the little found.
 */
export function extractContent(page: ToolPage): ContentReport {
  return { url: page.url, ...extractArticle(page) };
}

/** {@link extractContent} but the URL. */
function extractArticle(page: ToolPage): Omit<ContentReport, 'url'> {
  const body = page.html.length > MAX_HTML_CHARS ? page.html.slice(0, MAX_HTML_CHARS) : page.html;
  if (mimeEssence(page.contentType) === 'text/plain') return plainTextReport(body, headerLang(page.headers));
  if (!isHtmlResponse(page.contentType, body)) return emptyReport();

  // The tree is not kept: the fallback (rarely needed) parses the page again rather than hold it in memory.
  const doc = parseDocument(parseHtml(body), body.length, page.url);
  const readerable = safe(() => isProbablyReaderable(doc), false);
  const headTitle = safe(() => rawTitle(doc), '');
  const meta = readMetadata(doc);
  const readabilityTitle = safe(() => (new Readability(doc) as unknown as { _getArticleTitle(): string })._getArticleTitle(), null);
  const declared = declaredBodyText(doc);
  // A page that is not an article (a listing) keeps its repeated records whole (issue 40, item 10).
  const records = !readerable && markRecords(doc);
  markBoilerplate(doc);
  const article = safe(() => readability(doc, records).parse(), null);
  if (records && article?.content) restoreRecordNames(article.content);

  // The headline is not part of the body (the article-extraction-benchmark's labels leave it out, as trafilatura does).
  const titles = titleKeys([article?.title, readabilityTitle, headTitle, splitTitle(headTitle), meta.headline]);
  let content = article?.content ?? null;
  const ownUrls = ownUrlKeys([page.url, ...meta.urls]);
  // Whether Readability took the page around the declared body is read before its boilerplate is removed: removing
  // part of the menus it took does not make its choice right.
  const readabilityText = content && declared ? blockText(content) : '';
  if (content) cleanContent(content, titles, ownUrls);
  let text = content ? articleText(content) : '';
  if (declared && overshoots(readabilityText, declared)) {
    const narrowed = fallbackContent(body, page.url, false, titles, ownUrls);
    if (narrowed) {
      content = narrowed;
      text = articleText(narrowed);
    }
  }
  if (text.length < SHORT_TEXT_CHARS) {
    // <body> only when Readability found nothing at all: for a short page it keeps what a reader should not see.
    const fallback = fallbackContent(body, page.url, text.length === 0, titles, ownUrls);
    const fallbackText = fallback ? articleText(fallback) : '';
    // Compared without the text of links: menus and lists of headlines around a short article do not make it longer.
    if (fallback && fallbackText.length > 0 && proseLength(fallback) >= Math.max(2 * (content ? proseLength(content) : 0), 1)) {
      content = fallback;
      text = fallbackText;
    }
  }
  if (content) {
    for (const el of Array.from(content.querySelectorAll(`[${CAPTION_MARK}], [${RECORD_MARK}]`))) {
      el.removeAttribute(CAPTION_MARK);
      el.removeAttribute(RECORD_MARK);
    }
    unwrapLooseText(content);
    stripClasses(content);
    removeComments(content);
  }

  const lang = meta.lang ?? headerLang(page.headers);
  const words = countWords(text, lang);
  return {
    title: pickTitle(article?.title ?? null, readabilityTitle, headTitle, meta),
    byline: clean(article?.byline) ?? meta.byline,
    published_time: normaliseTime(clean(article?.publishedTime) ?? meta.publishedTime),
    site_name: clean(article?.siteName) ?? meta.siteName,
    lang,
    excerpt: clean(article?.excerpt) ?? firstParagraph(text),
    text,
    html: content ? content.innerHTML.trim() : '',
    word_count: words,
    reading_time_minutes: readingTimeMinutes(words),
    images: content ? contentImages(content, doc.baseURI) : [],
    readerable,
  };
}

/**
 * The text of an HTML fragment laid out as the report's `text` (one block a line, blank lines between
 * paragraphs, `<br>` a line break). The bench and tests read expected articles with it, so that both sides of
 * a comparison split words at the same places.
 */
export function htmlText(html: string): string {
  const page = `<!DOCTYPE html><html><head></head><body>${html}</body></html>`;
  const doc = parseDocument(parseHtml(page), page.length, 'about:blank');
  return doc.body ? blockText(doc.body) : '';
}

/**
 * Minutes to read `words` words at {@link WORDS_PER_MINUTE}, rounded half up, never under 1 for a text that has
 * words (a 50-word note is "1 min"); 0 for none.
 */
export function readingTimeMinutes(words: number): number {
  if (!(words > 0)) return 0;
  return Math.max(1, Math.round(words / WORDS_PER_MINUTE));
}

/** Words of `text`: word-like segments of Intl.Segmenter (UAX #29; ICU dictionaries for CJK and Thai). */
export function countWords(text: string, lang: string | null = null): number {
  if (!text) return 0;
  let locale: string | undefined;
  try {
    locale = lang ? (Intl.getCanonicalLocales(lang)[0] ?? undefined) : undefined;
  } catch {
    locale = undefined;
  }
  let n = 0;
  for (const s of new Intl.Segmenter(locale, { granularity: 'word' }).segment(text)) if (s.isWordLike) n++;
  return n;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing

/**
 * Readability's exceptions to its "unlikely candidate" names as its main branch has them after 0.6.0: `mathjax`
 * added, so that formulas MathJax renders in elements whose class names a context menu (`CtxtMenu_Attached`,
 * "menu" being an unlikely name) stay in the article.
 */
const OK_MAYBE_ITS_A_CANDIDATE = /and|article|body|column|content|main|mathjax|shadow/i;

/** Readability over `doc` keeping classes (step 3 reads them; {@link stripClasses} removes them after), giving the content element. */
function readability(doc: Document, records = false): Readability<Element> {
  // maxElemsToParse: a second guard, which does not fire over linkedom (its getElementsByTagName('*') has length 0);
  // the bound is content-dom.ts's: at most CONTENT_LIMITS.elements elements built, before the marks' wrapping spans
  // (one per loose text of a marked block's <div>s) were added.
  const reader = new Readability<Element>(doc, { keepClasses: true, serializer: (node) => node as Element, maxElemsToParse: CONTENT_LIMITS.elements + 16 });
  const internals = reader as unknown as { REGEXPS?: Record<string, RegExp> };
  if (internals.REGEXPS) internals.REGEXPS = { ...internals.REGEXPS, okMaybeItsACandidate: OK_MAYBE_ITS_A_CANDIDATE };
  if (records) keepRecordsWhole(reader);
  return reader;
}

/**
 * Readability's conditional cleaning (`_cleanConditionally`: a `<div>` of few words and many links, a list of more
 * items than paragraphs) passes over the records {@link markRecords} marked, so that a listing's record keeps its
 * tags and links as the page shows them; its other cleaning (scripts, styles, forms, embeds) still applies inside.
 * Readability 0.6.0's internals, as {@link OK_MAYBE_ITS_A_CANDIDATE} is.
 */
function keepRecordsWhole(reader: Readability<Element>): void {
  type Filter = (this: unknown, node: Element, i: number, list: ArrayLike<Element>) => boolean;
  const r = reader as unknown as {
    _cleanConditionally?: (e: Element, tag: string) => void;
    _removeNodes?: (nodes: ArrayLike<Element>, filter?: Filter) => void;
  };
  const clean = r._cleanConditionally;
  const removeNodes = r._removeNodes;
  if (typeof clean !== 'function' || typeof removeNodes !== 'function') return;
  r._cleanConditionally = function (this: typeof r, e: Element, tag: string) {
    this._removeNodes = function (this: unknown, nodes: ArrayLike<Element>, filter?: Filter) {
      return removeNodes.call(this, nodes, filter && function (this: unknown, node: Element, i: number, list: ArrayLike<Element>) {
        return !inRecord(node) && filter.call(this, node, i, list);
      });
    };
    try {
      return clean.call(this, e, tag);
    } finally {
      this._removeNodes = removeNodes;
    }
  };
}

/**
 * The linkedom document of a parsed page (content-dom.ts), base URL set. `chars`: the page's length (how much
 * `<noscript>` content may be parsed again).
 */
function parseDocument(tree: DomDocument, chars: number, pageUrl: string): Document {
  // The base URL from the project's tree, as every page tool reads it (engine/page-facts.ts): the first <base href>
  // outside templates and SVG; an unusable one leaves the page URL.
  const base = documentBaseUrl(tree, pageUrl);
  const document = readerDocument(tree, chars);
  // linkedom's baseURI is the raw <base href> and its documentURI is undefined; Readability resolves links
  // against `baseURI` and keeps in-page `#anchors` only when the two are equal.
  Object.defineProperty(document, 'baseURI', { value: base, configurable: true });
  Object.defineProperty(document, 'documentURI', { value: pageUrl, configurable: true });
  Object.defineProperty(document, 'URL', { value: pageUrl, configurable: true });
  // Readability creates elements with upper-case names ("DIV", "P"); linkedom keeps the case and would serialise
  // `<DIV>`: an HTML document's element names are lower case.
  const create = document.createElement.bind(document);
  Object.defineProperty(document, 'createElement', { value: (name: string) => create(name.toLowerCase()), configurable: true });
  return document;
}


function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Boilerplate and fallback

/**
 * Class and id words of boilerplate blocks, as whole words of the name (`share-bar`, `relatedPosts`, `ad-slot`;
 * not `shared-data`, `header`, `load`), or two or three words in a row (`more-stories`, `screen-reader-text`). The
 * families are those trafilatura discards by name (its `OVERALL_DISCARD_XPATH`; Barbaresi, "Trafilatura", ACL
 * 2021), and what the article-extraction-benchmark's human labels leave out of an article's body.
 */
const BOILERPLATE_FAMILIES: Record<string, readonly string[]> = {
  share: ['share', 'sharing', 'sharebar', 'social', 'socials'],
  newsletter: ['newsletter', 'subscribe', 'subscription', 'signup'],
  related: ['related', 'relatedposts', 'recommended', 'recommendations', 'more-stories'],
  ads: ['promo', 'promotion', 'advert', 'advertisement', 'ad', 'ads', 'adslot', 'sponsor', 'sponsored', 'outbrain', 'taboola'],
  // bylines, author boxes, dates and the "posted on … in …" lines around a post
  byline: ['byline', 'bylines', 'author', 'authors', 'dateline', 'timestamp', 'date', 'dates', 'pubdate', 'meta', 'postinfo', 'post-info', 'publish-info'],
  navigation: ['nav', 'navbar', 'navigation', 'menu', 'breadcrumb', 'breadcrumbs', 'topnav', 'subnav', 'pagination'],
  slideshow: ['slideshow', 'slide', 'slides', 'carousel', 'lightbox', 'swiper'],
  cookies: ['cookie', 'cookies', 'consent', 'gdpr'],
  comments: ['comment', 'comments', 'disqus'],
  tags: ['tags', 'tag-list', 'tagcloud'],
  // text only screen readers get (hidden on screen)
  screenreader: ['sr-only', 'screen-reader-text', 'visually-hidden', 'skip-link'],
  // most-read lists, teasers, side rails
  popular: ['trending', 'popular', 'most-popular', 'teaser', 'sidebar', 'rail'],
};
const BOILERPLATE_WORDS: ReadonlySet<string> = new Set(Object.values(BOILERPLATE_FAMILIES).flat());
/**
 * Elements that are boilerplate by their tag: `<nav>` (trafilatura's `MANUALLY_CLEANED`), and `<header>`, where an
 * article puts its headline, standfirst, byline and date (trafilatura's precision setting removes it).
 */
const BOILERPLATE_TAGS: ReadonlySet<string> = new Set(['nav', 'header']);
/**
 * Class and id words of image captions and credits (trafilatura's `DISCARD_IMAGE_ELEMENTS`): with `<figcaption>`,
 * left out of the report's text, kept in its HTML beside their images.
 */
const CAPTION_WORDS: ReadonlySet<string> = new Set(['caption', 'captions', 'figcaption', 'credit', 'credits', 'photo-credit']);
/** Headings name sections; they are never removed for their names. */
const HEADING = /^h[1-6]$/i;
/**
 * Boilerplate blocks are removed only while they hold at most this share of the content's text together, in each
 * removal pass ({@link cleanContent} makes two, {@link articleText} one for captions): a pass never takes more than
 * half of the text it starts from (a "related" class on the article's own wrapper removes nothing). Was 0.15 until
 * issue 27's third pass: short articles lost their removals to it (a print header's URL line is 16% of a 120-word
 * story).
 */
const BOILERPLATE_MAX_SHARE = 0.5;
/** Words of a class or id read (a longer name is cut: names are not prose). */
const MAX_NAME_WORDS = 64;

/**
 * Attribute that carries the numbers of the boilerplate blocks an element is in (space-separated) through
 * Readability to every element of each block.
 */
const BLOCK_MARK = 'data-sai-boilerplate';
/** The same for caption blocks ({@link CAPTION_WORDS}, `<figcaption>`). */
const CAPTION_MARK = 'data-sai-caption';

/**
 * Whether a class and id name a block of `words` (a word after `no` does not count: `no-caption` says there is
 * none); never for MathJax's containers, whose classes name a context menu (`MathJax CtxtMenu_Attached_0`; as
 * Readability's exception).
 */
function namesBlock(className: string, id: string, words: ReadonlySet<string>): boolean {
  if (/mathjax/i.test(className)) return false;
  // An id of many words is an anchor made from a heading's text (Wikipedia's `Eich_CEO_promotion_controversy`); an
  // id of four words or fewer is a name (`cookie-law-info-bar`).
  const idWords = nameWords(id);
  const all = [...nameWords(className), ...(idWords.length <= 4 ? idWords : [])];
  for (let i = 0; i < all.length; i++) {
    if (i > 0 && all[i - 1] === 'no') continue;
    const w = all[i]!;
    if (words.has(w) || (i > 0 && words.has(`${all[i - 1]}-${w}`)) || (i > 1 && words.has(`${all[i - 2]}-${all[i - 1]}-${w}`))) return true;
  }
  return false;
}

/** The lower-cased words of a class or id: split at spaces, `_`, `-` and camel case (`relatedPosts` → related, posts). */
function nameWords(name: string): string[] {
  if (!name) return [];
  return splitCamel(name).toLowerCase().split(/[\s_-]+/).filter(Boolean).slice(0, MAX_NAME_WORDS);
}

/** `relatedPosts` → `related-Posts`: camel-case names split into words. */
function splitCamel(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, '$1-$2');
}

/** Adds block number `mark` to `attr` of `el` and of every element inside it (blocks can nest). */
function markBlock(el: Element, attr: string, mark: string): void {
  for (const inner of [el, ...Array.from(el.querySelectorAll('*'))]) {
    const had = inner.getAttribute(attr);
    if (!had) inner.setAttribute(attr, mark);
    else if (had.split(' ').length < MAX_MARKS) inner.setAttribute(attr, `${had} ${mark}`);
  }
}

/** Blocks an element is counted in, at most (the innermost of deeper nests are not): bounds the work of {@link removeBoilerplate}. */
const MAX_MARKS = 8;

/** The block numbers of an element ({@link BLOCK_MARK} or {@link CAPTION_MARK}). */
function marksOf(el: Element, attr: string): string[] {
  const v = el.getAttribute(attr);
  return v ? v.split(' ') : [];
}

/**
 * Marks the boilerplate and caption blocks of the untouched document (step 3): each block and each element inside
 * it get its number in {@link BLOCK_MARK} or {@link CAPTION_MARK} (blocks nest: a byline inside a wrapper whose
 * name misleads is a block of its own). Marking before Readability keeps the block known after it, which renames
 * and unwraps elements (a `<div class="newsletter">` holding one `<p>` comes out as that `<p>`) and, by default,
 * drops classes.
 */
function markBoilerplate(doc: Document): void {
  let n = 0;
  const records = doc.querySelector(`[${RECORD_MARK}]`) !== null;
  for (const el of Array.from(doc.querySelectorAll('[class], [id], figcaption, nav, header'))) {
    const tag = el.localName.toLowerCase();
    if (HEADING.test(tag) || (records && inRecord(el))) continue;
    const className = el.getAttribute('class') ?? '';
    // An id inside a heading is the heading's anchor (`<h2><span id="Social_media_and_advertising">`), not a name.
    const ownId = el.getAttribute('id') ?? '';
    const id = ownId && el.closest('h1, h2, h3, h4, h5, h6') ? '' : ownId;
    const attr = BOILERPLATE_TAGS.has(tag) || namesBlock(className, id, BOILERPLATE_WORDS) ? BLOCK_MARK
      : tag === 'figcaption' || namesBlock(className, id, CAPTION_WORDS) ? CAPTION_MARK : null;
    if (!attr) continue;
    wrapLooseText(el);
    markBlock(el, attr, String(++n));
  }
}

/**
 * Attribute of a repeated record of a page that is not an article ({@link markRecords}): a quote with its author, a
 * product with its price. Nothing inside one is boilerplate; the mark is dropped before the report is made.
 */
const RECORD_MARK = 'data-sai-record';
/** Records in a row, at least, with the same tag and class under one parent. */
const MIN_RECORDS = 3;
/** Visible characters of a record, at least (a menu item is not one). */
const MIN_RECORD_CHARS = 20;
/** Attributes hidden from Readability inside records: its byline rule (rel, itemprop, class and id names) and class weights. */
const RECORD_HIDDEN = ['class', 'id', 'itemprop', 'rel'] as const;
const HIDDEN_PREFIX = 'data-sai-hidden-';

/** Whether an element is a record or inside one ({@link markRecords}). */
function inRecord(el: Element): boolean {
  return el.closest(`[${RECORD_MARK}]`) !== null;
}

/**
 * Marks the repeated records of a page that is not an article (issue 40, item 10: Markdown of a listing kept each
 * quote but dropped its author, read as a byline): {@link MIN_RECORDS} or more element siblings with the same tag
 * and classes, each with two child elements or more and {@link MIN_RECORD_CHARS} characters of text, as the list
 * induction of a scraping config finds items. Inside each, the names Readability reads (`rel`, `itemprop`, class and
 * id) are set aside until it is done ({@link restoreRecordNames}), so that it takes no record's author for the
 * page's byline and weighs no record's `tags` or `meta` class against it; the boilerplate rules skip records. One
 * pass over the elements.
 * @returns whether the page has records.
 */
function markRecords(doc: Document): boolean {
  let found = false;
  for (const parent of Array.from(doc.querySelectorAll('body, body *'))) {
    const groups = new Map<string, Element[]>();
    for (const child of Array.from(parent.children)) {
      const classes = (child.getAttribute('class') ?? '').split(/\s+/).filter(Boolean).sort().join(' ');
      if (!classes || child.children.length < 2) continue;
      const key = `${child.localName}.${classes}`;
      const group = groups.get(key);
      if (group) group.push(child);
      else groups.set(key, [child]);
    }
    for (const group of groups.values()) {
      if (group.length < MIN_RECORDS) continue;
      const records = group.filter((r) => visibleLength(r) >= MIN_RECORD_CHARS);
      if (records.length < MIN_RECORDS) continue;
      for (const r of records) r.setAttribute(RECORD_MARK, '');
      found = true;
    }
  }
  if (!found) return false;
  for (const record of Array.from(doc.querySelectorAll(`[${RECORD_MARK}]`))) {
    for (const el of Array.from(record.querySelectorAll('*'))) {
      for (const name of RECORD_HIDDEN) {
        const v = el.getAttribute(name);
        if (v === null) continue;
        el.setAttribute(HIDDEN_PREFIX + name, v);
        el.removeAttribute(name);
      }
    }
  }
  return true;
}

/** Gives back the names {@link markRecords} set aside, in Readability's result. */
function restoreRecordNames(content: Element): void {
  for (const name of RECORD_HIDDEN) {
    for (const el of Array.from(content.querySelectorAll(`[${HIDDEN_PREFIX}${name}]`))) {
      el.setAttribute(name, el.getAttribute(HIDDEN_PREFIX + name) ?? '');
      el.removeAttribute(HIDDEN_PREFIX + name);
    }
  }
}

/** Attribute of the `<span>`s {@link wrapLooseText} adds; they are unwrapped again before the report is made. */
const WRAP_MARK = 'data-sai-wrap';

/**
 * Wraps the text directly inside the `<div>`s of a block (`el` and those in it) in `<span>`s, so that the block's text
 * keeps its mark through Readability: Readability moves a `<div>`'s loose text into a new, unmarked `<p>` and puts that
 * `<p>` in the `<div>`'s place (`<div class="caption-text">A galaxy…</div>` comes out as `<p>A galaxy…</p>`), which
 * would lose the block. The spans are phrasing content, so Readability scores and keeps the text as before;
 * {@link unwrapLooseText} takes them out of the result.
 */
function wrapLooseText(el: Element): void {
  // A page-wide mark (`<body class="single-author">`) is never removed (it is more than the share): nothing to keep.
  const tag = el.localName.toLowerCase();
  if (tag === 'body' || tag === 'html') return;
  const doc = el.ownerDocument;
  const holders = tag === 'div' ? [el, ...Array.from(el.querySelectorAll('div'))] : Array.from(el.querySelectorAll('div'));
  for (const holder of holders) {
    for (const node of Array.from(holder.childNodes)) {
      if (node.nodeType !== 3 || !(node.textContent ?? '').trim()) continue;
      const span = doc.createElement('span');
      span.setAttribute(WRAP_MARK, '');
      holder.replaceChild(span, node);
      span.appendChild(node);
    }
  }
}

/** Puts the text {@link wrapLooseText} wrapped back in the wrapping span's place. */
function unwrapLooseText(content: Element): void {
  for (const span of Array.from(content.querySelectorAll(`span[${WRAP_MARK}]`))) span.replaceWith(...Array.from(span.childNodes));
}

/**
 * Removes the boilerplate of a content element (Readability's result, or the fallback's): the blocks marked by
 * name ({@link markBoilerplate}), links to elsewhere ({@link markLinkBlocks}) and repeats of the headline
 * ({@link markTitles}), within {@link BOILERPLATE_MAX_SHARE} of its text ({@link removeBoilerplate}).
 */
function cleanContent(content: Element, titles: ReadonlySet<string>, ownUrls: readonly string[]): void {
  markLinkBlocks(content);
  markTitles(content, titles);
  removeBoilerplate(content, BLOCK_MARK);
  // Whole lines that are page furniture, with a share of their own (the blocks above may have used all of theirs).
  markOwnUrl(content, ownUrls);
  markInterfaceLabels(content);
  markDateLines(content);
  removeBoilerplate(content, BLOCK_MARK);
}

/** Blocks read for their link density (trafilatura's `link_density_test` reads paragraphs and list items). */
const LINK_BLOCKS = 'p, li, dt, dd, li h2, li h3, li h4, li h5, li h6';
/** A block whose links hold at least this share of its text is a link to elsewhere (trafilatura's threshold). */
const LINK_DENSITY = 0.8;
/** A link whose text is its address (`https://…`, `www.…`): a source cited, not a way elsewhere. */
const WRITTEN_URL = /^\s*(?:https?:\/\/|www\.)/i;

/**
 * Marks as boilerplate ({@link BLOCK_MARK}) the blocks of the content that are links to elsewhere ("related",
 * "more", "don't miss", lists of headlines): paragraphs, list items and headings in list items whose link text is
 * at least {@link LINK_DENSITY} of their text (trafilatura's link density test; Readability's own reads whole lists
 * and divisions, and keeps a list of headlines inside an article's body), when they are list items, or two or more
 * in a row, or come after a label: a heading or a few bold words just before them (marked with them), or a few
 * words and a colon before the link ("Related: …"). A link paragraph alone between paragraphs of text stays (a
 * product named in a buying guide, "Full results here"). In-page links (`#…`) and links written out as their
 * address do not count as links.
 */
function markLinkBlocks(content: Element): void {
  const dense = new Set<Element>();
  const labelled = new Set<Element>();
  for (const el of Array.from(content.querySelectorAll(LINK_BLOCKS))) {
    if (el.querySelector(LINK_BLOCKS)) continue;
    const len = visibleLength(el);
    if (len === 0) continue;
    let linked = 0;
    for (const a of Array.from(el.querySelectorAll('a[href]'))) {
      if ((a.getAttribute('href') ?? '').startsWith('#') || WRITTEN_URL.test(a.textContent ?? '')) continue;
      linked += visibleLength(a);
    }
    if (linked < LINK_DENSITY * len || inRecord(el)) continue;
    dense.add(el);
    if (leadingLabel(el) > 0) labelled.add(el);
  }
  let n = 0;
  const lists = new Set<Element>();
  const linkItems = new Set<Element>();
  for (const el of dense) {
    const before = el.previousElementSibling;
    const after = el.nextElementSibling;
    const afterLabel = before !== null && !dense.has(before) && isLabel(before);
    const inRun = (before !== null && dense.has(before)) || (after !== null && dense.has(after));
    const item = el.closest('li');
    if (!(afterLabel || inRun || item || labelled.has(el))) continue;
    const mark = `L${++n}`;
    markBlock(el, BLOCK_MARK, mark);
    if (afterLabel) markBlock(before, BLOCK_MARK, mark);
    if (!item) continue;
    linkItems.add(item);
    const list = item.parentElement;
    if (list && /^[ou]l$/i.test(list.localName)) lists.add(list);
  }
  // The heading of a list that is all links ("More:", "Most popular") goes with it.
  for (const list of lists) {
    const items = Array.from(list.children).filter((c) => c.localName.toLowerCase() === 'li');
    if (!items.every((li) => linkItems.has(li))) continue;
    const before = list.previousElementSibling;
    if (before && !before.hasAttribute(BLOCK_MARK) && isLabel(before)) markBlock(before, BLOCK_MARK, `L${++n}`);
  }
}

/** Nodes read before a block's first link, at most ({@link leadingLabel}). */
const MAX_LABEL_NODES = 64;

/**
 * The visible length of the text before a block's first link when it is a few words and a colon ("Related:", "SEE
 * MORE:"): it names what the link points to. 0 when there is no such label.
 */
function leadingLabel(el: Element): number {
  const first = el.querySelector('a[href]');
  if (!first) return 0;
  let before = '';
  for (let node = el.firstChild, steps = 0; node && node !== first && steps < MAX_LABEL_NODES; steps++) {
    if (node.contains(first)) {
      node = node.firstChild;
      continue;
    }
    before += node.textContent ?? '';
    if (before.length > 100) return 0;
    node = node.nextSibling;
  }
  const label = before.replace(HTML_SPACE, ' ').trim();
  return label.length > 1 && label.endsWith(':') && countWords(label) <= 3 ? label.replace(/\s+/g, '').length : 0;
}

/** A heading, or a paragraph of at most 4 words all bold (a heading by its looks): what names the block after it. */
function isLabel(el: Element): boolean {
  if (HEADING.test(el.localName)) return true;
  if (el.localName.toLowerCase() !== 'p') return false;
  const len = visibleLength(el);
  if (len === 0 || len > 60 || countWords(el.textContent ?? '') > 4) return false;
  const bold = Array.from(el.querySelectorAll('strong, b')).reduce((s, b) => s + visibleLength(b), 0);
  return bold >= len;
}

/** Blocks read for the page's own address, notices, interface labels and date lines. */
const LINE_BLOCKS = 'p, div, span, li, dd, dt, td, blockquote, figure, small, address, time, h1, h2, h3, h4, h5, h6, a, button, strong, b, em';
/** Most words of a block removed for holding the page's own address (a print header, "Citation: … retrieved from <url>"). */
const OWN_URL_MAX_WORDS = 40;

/**
 * The page's own addresses as compared ({@link urlKey}): its final URL and the canonical URL it declares; only
 * addresses with a path (a site's home address can be named in an article).
 */
function ownUrlKeys(urls: readonly string[]): string[] {
  const keys = new Set<string>();
  for (const u of urls) {
    const k = u.length <= 2048 ? urlKey(u) : null;
    if (k) keys.add(k);
  }
  return [...keys];
}

/** An http(s) address without its scheme, `www.`, query, fragment and trailing slash, lower case; null without a path. */
function urlKey(u: string): string | null {
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(url.protocol)) return null;
  const path = url.pathname.replace(/\/+$/, '');
  if (path.length < 2) return null;
  return `${url.hostname.replace(/^www\./, '')}${path}`.toLowerCase();
}

/**
 * Whether `el` is a whole line of the text: not inside preformatted text, code or a table (data, not page furniture), and
 * all the text of its nearest block (a `<span>` inside a sentence is not a line).
 */
function isWholeLine(el: Element, content: Element): boolean {
  if (el.closest('pre, code, table')) return false;
  let block: Element = el;
  while (!BLOCK.has(block.localName.toLowerCase()) && block !== content && block.parentElement) block = block.parentElement;
  return block === el || visibleLength(block) === visibleLength(el);
}

/** A few words of text: whitespace-separated, counted up to `max + 1`. */
function wordsUpTo(text: string, max: number): number {
  let n = 0;
  for (const _ of text.matchAll(/\S+/g)) if (++n > max) break;
  return n;
}

/**
 * Marks as boilerplate the short blocks (at most {@link OWN_URL_MAX_WORDS} words) that hold the page's own address:
 * print-only headers that write the page's URL out, "Citation: … retrieved … from <url>" lines. An article cites
 * other pages, not itself.
 */
function markOwnUrl(content: Element, keys: readonly string[]): void {
  if (keys.length === 0) return;
  const has = (t: string) => {
    const low = t.toLowerCase().replace(/https?:\/\/(?:www\.)?/g, '');
    return keys.some((k) => low.includes(k));
  };
  if (!has(content.textContent ?? '')) return;
  let n = 0;
  for (const el of Array.from(content.querySelectorAll(LINE_BLOCKS))) {
    const t = el.textContent ?? '';
    if (t.length > 2000 || wordsUpTo(t, OWN_URL_MAX_WORDS) > OWN_URL_MAX_WORDS || !has(t) || !isWholeLine(el, content) || inRecord(el)) continue;
    markBlock(el, BLOCK_MARK, `U${++n}`);
  }
}

/**
 * Whole texts of interface controls that pages render as text (gallery buttons, "read more" toggles, a news
 * ticker's label): never the article's words.
 */
const INTERFACE_LABELS: ReadonlySet<string> = new Set([
  'caption', 'close', 'hide caption', 'show caption', 'toggle caption', 'enlarge image', 'enlarge this image', 'click to enlarge',
  'read more', 'continue reading', 'show more', 'load more', 'breaking news', 'fullscreen', 'full screen',
  // the labels over an ad's slot
  'advertisement', 'advert', 'ad', 'sponsored', 'sponsored content', 'skip ad', 'story continues below', 'article continues below',
  'story continues below advertisement', 'continue reading below', 'scroll to continue with content',
]);

/** Marks as boilerplate the blocks whose whole text is an {@link INTERFACE_LABELS} label. */
function markInterfaceLabels(content: Element): void {
  let n = 0;
  for (const el of Array.from(content.querySelectorAll(LINE_BLOCKS))) {
    const t = el.textContent ?? '';
    if (t.length > 40) continue;
    const key = titleKey(t);
    if (key && INTERFACE_LABELS.has(key) && isWholeLine(el, content) && !inRecord(el)) markBlock(el, BLOCK_MARK, `I${++n}`);
  }
}

/** A year (1900–2099) and a clock time (`4:20`, `20:13`, `10h30`) in a line: a date line's parts. */
const YEAR = /(?:^|\D)(?:19|20)\d\d(?:\D|$)/;
const CLOCK = /(?:^|\D)\d{1,2}[:h]\d\d(?:\D|$)/;

/**
 * Marks as boilerplate the blocks that are a date line: 60 characters or fewer, a year and a clock time, and at most
 * 6 words of letters ("November 19, 2019 | 4:20am", "Updated 10:32 AM ET, Mon November 18, 2019").
 */
function markDateLines(content: Element): void {
  let n = 0;
  for (const el of Array.from(content.querySelectorAll(LINE_BLOCKS))) {
    const t = (el.textContent ?? '').trim();
    if (t.length === 0 || t.length > 60 || !YEAR.test(t) || !CLOCK.test(t)) continue;
    if ((t.match(/\p{L}+/gu) ?? []).length > 6 || !isWholeLine(el, content) || inRecord(el)) continue;
    markBlock(el, BLOCK_MARK, `D${++n}`);
  }
}

/** Blocks read for a repeated headline. */
const TITLE_BLOCKS = 'h1, h2, h3, h4, h5, h6, p, div, span';
/** Longest headline compared, in visible characters. */
const MAX_TITLE_CHARS = 300;

/**
 * Marks as boilerplate the blocks of the content whose whole text is the headline (`titles`: {@link titleKeys}).
 * The body is what follows the headline: the article-extraction-benchmark's labels leave it out, as trafilatura
 * does; Readability removes a first `<h1>` or `<h2>` like it, and a headline comes back in galleries and
 * print-only headers.
 */
function markTitles(content: Element, titles: ReadonlySet<string>): void {
  if (titles.size === 0) return;
  let n = 0;
  for (const el of Array.from(content.querySelectorAll(TITLE_BLOCKS))) {
    const len = visibleLength(el);
    if (len === 0 || len > MAX_TITLE_CHARS || !titles.has(titleKey(el.textContent ?? ''))) continue;
    markBlock(el, BLOCK_MARK, `T${++n}`);
  }
}

/** A headline as compared: lower case, letters and digits only, single spaces. */
function titleKey(s: string): string {
  return (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

/** The keys ({@link titleKey}) of the page's headlines of 3 words or more (a heading of one or two words can be anything). */
function titleKeys(titles: Array<string | null | undefined>): Set<string> {
  const keys = new Set<string>();
  for (const t of titles) {
    if (!t || t.length > 4 * MAX_TITLE_CHARS) continue;
    const k = titleKey(t);
    if (k.split(' ').length >= 3) keys.add(k);
  }
  return keys;
}

/**
 * Removes the blocks marked with `attr` ({@link BLOCK_MARK}: boilerplate, {@link CAPTION_MARK}: captions) that
 * Readability kept, smallest first, each only while it and the blocks removed before it hold at most
 * {@link BOILERPLATE_MAX_SHARE} of the content's text (a described image inside stays in the block's place); then
 * drops the marks.
 */
function removeBoilerplate(content: Element, attr: string): void {
  const total = visibleLength(content);
  const blocks = new Map<string, Element[]>();
  for (const el of Array.from(content.querySelectorAll(`[${attr}]`))) {
    for (const mark of marksOf(el, attr)) {
      // The block's outermost elements in the content (one, unless Readability took it apart).
      let inside = false;
      for (let up = el.parentElement; up && up !== content && !inside; up = up.parentElement) inside = marksOf(up, attr).includes(mark);
      if (inside) continue;
      const els = blocks.get(mark);
      if (els) els.push(el);
      else blocks.set(mark, [el]);
    }
  }
  const sized = [...blocks.values()].map((els) => ({ els, len: els.reduce((s, e) => s + visibleLength(e), 0) })).sort((a, b) => a.len - b.len);
  let removed = 0;
  for (const { els, len } of sized) {
    if (removed + len > total * BOILERPLATE_MAX_SHARE) break;
    removed += len;
    for (const el of els) {
      // Already gone with a block that held it.
      if (!el.parentNode) continue;
      // A share overlay can wrap the article's own picture: images described in 3 words or more stay.
      const described = Array.from(el.querySelectorAll('img[alt]')).filter((img) => countWords(img.getAttribute('alt') ?? '') >= 3);
      if (described.length) el.replaceWith(...described);
      else el.remove();
    }
  }
  for (const el of Array.from(content.querySelectorAll(`[${attr}]`))) el.removeAttribute(attr);
}

/**
 * The report's text of a content element: its {@link blockText} without image captions and credits (from a copy:
 * every `<figcaption>`, and the blocks named as captions within {@link BOILERPLATE_MAX_SHARE} of the text). The
 * article-extraction-benchmark's labels and trafilatura's text leave captions out; the HTML keeps them with their
 * images.
 */
function articleText(content: Element): string {
  if (!content.querySelector(`[${CAPTION_MARK}], figcaption`)) return blockText(content);
  const copy = content.cloneNode(true) as Element;
  for (const el of Array.from(copy.querySelectorAll('figcaption'))) el.remove();
  removeBoilerplate(copy, CAPTION_MARK);
  return blockText(copy);
}

/** {@link visibleLength} of `el` less that of its links. */
function proseLength(el: Element): number {
  let linked = 0;
  for (const a of Array.from(el.querySelectorAll('a[href]'))) linked += visibleLength(a);
  return visibleLength(el) - linked;
}

function visibleLength(el: Element): number {
  return (el.textContent ?? '').replace(/\s+/g, '').length;
}

/** Readability's result is narrowed to the declared body when it holds this many times the declared body's text … */
const OVERSHOOT_RATIO = 1.5;
/** … and this share of the declared body's words. */
const OVERSHOOT_COVERS = 0.9;

/**
 * The text of the page's one declared article body (schema.org microdata `itemprop="articleBody"`: the
 * publisher's own marking of the body), when it has at least {@link SHORT_TEXT_CHARS} characters; null otherwise
 * (none, several, or too short to trust).
 */
function declaredBodyText(doc: Document): string | null {
  const found = doc.querySelectorAll('[itemprop~="articleBody"]');
  if (found.length !== 1) return null;
  const text = (found[0]!.textContent ?? '').replace(HTML_SPACE, ' ').trim();
  return text.length >= SHORT_TEXT_CHARS ? text : null;
}

/**
 * Whether Readability took much more than the declared body (step 4's other half): when it finds no clear best
 * block it falls back to the whole `<body>`, header, menus and footer included. True when its text is
 * {@link OVERSHOOT_RATIO} times the declared body's or more and holds {@link OVERSHOOT_COVERS} of its words.
 */
function overshoots(text: string, declared: string): boolean {
  if (text.length < OVERSHOOT_RATIO * declared.length) return false;
  const have = new Map<string, number>();
  for (const w of words(text)) have.set(w, (have.get(w) ?? 0) + 1);
  const want = words(declared);
  let covered = 0;
  for (const w of want) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      covered++;
      have.set(w, n - 1);
    }
  }
  return want.length > 0 && covered / want.length >= OVERSHOOT_COVERS;
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
}

/** Elements never part of a fallback's content. */
const FALLBACK_DROP =
  'script, style, noscript, template, iframe, object, embed, form, button, select, input, textarea, nav, header, footer, aside, ' +
  '[hidden], [aria-hidden="true"], [role="navigation"], [role="banner"], [role="contentinfo"], [role="complementary"]';

/** The fallback of step 4, from a fresh parse (Readability emptied the first); null when the page has no text. */
function fallbackContent(html: string, pageUrl: string, wholeBody: boolean, titles: ReadonlySet<string>, ownUrls: readonly string[]): Element | null {
  const doc = parseDocument(parseHtml(html), html.length, pageUrl);
  markBoilerplate(doc);
  const pick = (selector: string): Element | null => {
    let best: Element | null = null;
    let bestLen = 0;
    for (const el of Array.from(doc.querySelectorAll(selector))) {
      const len = visibleLength(el);
      if (len > bestLen) [best, bestLen] = [el, len];
    }
    return best;
  };
  const root = pick('[itemprop="articleBody"]') ?? pick('article') ?? pick('main, [role="main"]') ?? (wholeBody ? doc.body : null);
  if (!root) return null;
  for (const el of Array.from(root.querySelectorAll(FALLBACK_DROP))) el.remove();
  for (const el of Array.from(root.querySelectorAll('[style]'))) {
    if (/(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i.test(el.getAttribute('style') ?? '')) el.remove();
  }
  for (const el of Array.from(root.querySelectorAll('*'))) {
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on') || name === 'style') el.removeAttribute(attr.name);
      else if ((name === 'href' || name === 'src') && !attr.value.startsWith('#')) {
        const abs = resolveUrl(attr.value, doc.baseURI);
        if (abs) el.setAttribute(attr.name, abs);
      }
    }
  }
  const wrapper = doc.createElement('div');
  wrapper.innerHTML = `<div id="readability-page-1" class="page">${root.innerHTML}</div>`;
  cleanContent(wrapper, titles, ownUrls);
  return visibleLength(wrapper) > 0 ? wrapper : null;
}

/** Removes class attributes as Readability does by default (its `page` class on the page wrapper stays). */
function stripClasses(content: Element): void {
  for (const el of Array.from(content.querySelectorAll('[class]'))) {
    if (el.id === 'readability-page-1' || el.getAttribute('class') === 'page') el.setAttribute('class', 'page');
    else el.removeAttribute('class');
  }
}

/** Removes HTML comments (conditional-comment leftovers, build markers): not content. Without recursion. */
function removeComments(root: Node): void {
  const stack: Node[] = [root];
  while (stack.length) {
    const node = stack.pop()!;
    for (const child of Array.from(node.childNodes)) {
      if (child.nodeType === 8) child.parentNode?.removeChild(child);
      else if (child.nodeType === 1) stack.push(child);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Text and images

const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
  'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section',
  'summary', 'table', 'tbody', 'thead', 'tfoot', 'tr', 'ul', 'caption',
]);
/** Blocks followed by a blank line (the others by a line break). */
const PARAGRAPH = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'figure', 'table', 'ul', 'ol', 'dl', 'hr']);
const SKIP_TEXT = new Set(['script', 'style', 'noscript', 'template']);

/**
 * The text of `root`, laid out by blocks: a block element starts a new line (a paragraph-like block a new
 * paragraph), `<br>` breaks the line, table cells are separated by a tab; whitespace inside a line is folded
 * except in `<pre>`.
 */
function blockText(root: Element): string {
  const out: string[] = [];
  let line = '';
  const flush = (breaks: number): void => {
    const t = line.replace(/[ \t\f\r\n\u00a0]+/g, ' ').trim();
    if (t) out.push(t, breaks > 1 ? '\n\n' : '\n');
    else if (breaks > 1 && out.length && out[out.length - 1] === '\n') out[out.length - 1] = '\n\n';
    line = '';
  };
  // Without recursion: a node to read (and whether it is inside a <pre>), or the number of line breaks that end a block.
  const stack: Array<[Node, boolean] | number> = [[root, false]];
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item === 'number') {
      flush(item);
      continue;
    }
    const [node, pre] = item;
    if (node.nodeType === 3) {
      const v = node.nodeValue ?? '';
      if (pre) {
        flush(1);
        out.push(trimNewlines(v.replace(/\r\n?/g, '\n')), '\n\n');
      } else line += v;
      continue;
    }
    if (node.nodeType !== 1) continue;
    const el = node as Element;
    const tag = el.localName.toLowerCase();
    if (SKIP_TEXT.has(tag)) continue;
    if (tag === 'br') {
      flush(1);
      continue;
    }
    if (tag === 'td' || tag === 'th') line += '\t';
    const block = BLOCK.has(tag);
    if (block) {
      flush(1);
      stack.push(PARAGRAPH.has(tag) ? 2 : 1);
    }
    const children = Array.from(el.childNodes);
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i]!, pre || tag === 'pre']);
  }
  flush(1);
  return out.join('').replace(/\n{3,}/g, '\n\n').trim();
}

/** The content's `<img>` (and `<picture>` sources through their img), absolute, each once, `data:` left out. */
function contentImages(content: Element, base: string): ContentImage[] {
  const seen = new Set<string>();
  const images: ContentImage[] = [];
  for (const img of Array.from(content.querySelectorAll('img'))) {
    const raw = img.getAttribute('src') || firstSrcset(img.getAttribute('srcset')) || img.getAttribute('data-src') || '';
    if (!raw || /^\s*data:/i.test(raw)) continue;
    const src = resolveUrl(raw, base);
    if (!src || !/^https?:/i.test(src) || seen.has(src)) continue;
    seen.add(src);
    images.push({ src, alt: (img.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim() });
    if (images.length >= MAX_IMAGES) break;
  }
  return images;
}

function firstSrcset(srcset: string | null): string | null {
  const first = srcset?.trim().split(/\s*,\s+/)[0]?.trim().split(/\s+/)[0];
  return first || null;
}

function firstParagraph(text: string): string | null {
  const first = text.split('\n').find((l) => l.trim().length > 0);
  return first ? first.trim() : null;
}

/**
 * `s` without the line breaks at its start and end. (By hand: V8 runs `/\n+$/` in time quadratic in a run of
 * line breaks that does not end the text.)
 */
function trimNewlines(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) === 0x0a) start++;
  while (end > start && s.charCodeAt(end - 1) === 0x0a) end--;
  return s.slice(start, end);
}

/** Spaces and tabs at the end of each line removed, in linear time (V8 runs `/[ \t]+\n/g` in quadratic time on a long run of spaces). */
function trimLineEnds(s: string): string {
  return s
    .split('\n')
    .map((line) => {
      let end = line.length;
      while (end > 0 && (line.charCodeAt(end - 1) === 0x20 || line.charCodeAt(end - 1) === 0x09)) end--;
      return line.slice(0, end);
    })
    .join('\n');
}

function plainTextReport(body: string, lang: string | null): Omit<ContentReport, 'url'> {
  const text = trimLineEnds(body.replace(/\r\n?/g, '\n')).replace(/\n{3,}/g, '\n\n').trim();
  const words = countWords(text, lang);
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return {
    ...emptyReport(),
    lang,
    excerpt: firstParagraph(text),
    text,
    html: text ? `<pre>${escaped}</pre>` : '',
    word_count: words,
    reading_time_minutes: readingTimeMinutes(words),
  };
}

function emptyReport(): Omit<ContentReport, 'url'> {
  return {
    title: null,
    byline: null,
    published_time: null,
    site_name: null,
    lang: null,
    excerpt: null,
    text: '',
    html: '',
    word_count: 0,
    reading_time_minutes: 0,
    images: [],
    readerable: false,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Metadata

/** Metadata read from the untouched document where Readability has none. */
interface PageMetadata {
  headline: string | null;
  byline: string | null;
  publishedTime: string | null;
  siteName: string | null;
  lang: string | null;
  /** The page's own URLs as it declares them (`<link rel=canonical>`, `og:url`). */
  urls: string[];
}

function readMetadata(doc: Document): PageMetadata {
  const metaContent = (selector: string): string | null => {
    for (const el of Array.from(doc.querySelectorAll(selector))) {
      const v = clean(el.getAttribute('content'));
      if (v) return v;
    }
    return null;
  };
  const ld = safe(() => jsonLd(doc), {} as JsonLdArticle);
  const langAttr = clean(doc.documentElement?.getAttribute('lang')) ?? clean(doc.documentElement?.getAttribute('xml:lang'));
  return {
    headline: ld.headline ?? null,
    byline:
      ld.author ??
      clean(doc.querySelector('[itemprop~="author"] [itemprop~="name"]')?.textContent) ??
      clean(doc.querySelector('[itemprop~="author"]')?.textContent) ??
      clean(doc.querySelector('a[rel~="author"]')?.textContent),
    publishedTime:
      ld.datePublished ??
      metaContent('meta[property="og:published_time"], meta[itemprop="datePublished"], meta[name="date"], meta[name="DC.date"], meta[name="dc.date"], meta[name="dcterms.date"], meta[name="DC.date.issued"], meta[name="pubdate"], meta[name="publish-date"], meta[name="sailthru.date"]') ??
      clean(doc.querySelector('[itemprop~="datePublished"][datetime], time[pubdate][datetime]')?.getAttribute('datetime')) ??
      clean(doc.querySelector('article time[datetime], time[datetime]')?.getAttribute('datetime')),
    siteName: ld.publisher ?? metaContent('meta[name="application-name"]'),
    lang: langAttr ?? metaContent('meta[http-equiv="content-language" i]')?.split(',')[0]?.trim() ?? null,
    urls: [clean(doc.querySelector('link[rel~="canonical" i][href]')?.getAttribute('href')), metaContent('meta[property="og:url"]')].filter((u): u is string => u !== null),
  };
}

/** The fields of a JSON-LD article (schema.org `Article` and its kinds) this tool reads. */
interface JsonLdArticle {
  headline?: string;
  author?: string;
  datePublished?: string;
  publisher?: string;
}

/** The first schema.org article-like object of the page's JSON-LD (`@graph` searched too). */
function jsonLd(doc: Document): JsonLdArticle {
  const found: JsonLdArticle = {};
  const visit = (value: unknown): boolean => {
    if (Array.isArray(value)) return value.some(visit);
    if (!value || typeof value !== 'object') return false;
    const o = value as Record<string, unknown>;
    if (o['@graph']) return visit(o['@graph']);
    const types = ([] as unknown[]).concat(o['@type'] ?? []).map(String);
    if (!types.some((t) => /Article|BlogPosting|NewsArticle|Report|WebPage|Posting/i.test(t))) return false;
    if (typeof o.headline === 'string') found.headline = clean(o.headline) ?? undefined;
    else if (typeof o.name === 'string') found.headline = clean(o.name) ?? undefined;
    const names = ([] as unknown[]).concat(o.author ?? []).map((a) => (typeof a === 'string' ? a : typeof a === 'object' && a && typeof (a as { name?: unknown }).name === 'string' ? (a as { name: string }).name : '')).map((s) => s.trim()).filter(Boolean);
    if (names.length) found.author = names.join(', ');
    if (typeof o.datePublished === 'string') found.datePublished = clean(o.datePublished) ?? undefined;
    const pub = o.publisher as { name?: unknown } | undefined;
    if (pub && typeof pub.name === 'string') found.publisher = clean(pub.name) ?? undefined;
    return true;
  };
  for (const script of Array.from(doc.querySelectorAll('script[type="application/ld+json"]'))) {
    try {
      // A block nested deeper than STRUCTURED_DATA_LIMITS.jsonLdDepth is skipped as a broken one is; visit()
      // then recurses at most that deep.
      if (visit(parseJsonLdBounded((script.textContent ?? '').replace(/^\s*<!\[CDATA\[/, '').replace(/\]\]>\s*$/, '')))) break;
    } catch {
      // a broken block is skipped, as search engines skip it
    }
  }
  return found;
}

/** The document's `<title>` text, whitespace folded. */
function rawTitle(doc: Document): string {
  return (doc.querySelector('title')?.textContent ?? '').replace(/\s+/g, ' ').trim();
}

/** Title separators: Readability 0.6.0's `| - \ / > »` and the en and em dashes upstream added after it. */
const TITLE_SEPARATOR = /\s[|\-–—\\/>»]\s/g;

/**
 * The title. Readability's, except where it came from `<title>` (it equals Readability's own reading of it):
 * then the `<title>` is read again with en and em dashes as separators too (Readability's main branch after
 * 0.6.0: "Headline – Site" gives "Headline"), keeping the whole title when the part left would be 4 words or
 * fewer. JSON-LD's headline when nothing else.
 */
function pickTitle(readability: string | null, readabilityOwn: string | null, head: string, meta: PageMetadata): string | null {
  const got = clean(readability);
  if (got && got === clean(readabilityOwn) && head && /\s[–—]\s/.test(head)) return clean(splitTitle(head)) ?? got;
  return got ?? meta.headline ?? (clean(head) || null);
}

function splitTitle(orig: string): string {
  const seps = Array.from(orig.matchAll(TITLE_SEPARATOR));
  if (!seps.length) return orig;
  const hierarchical = /\s[\\/>»]\s/.test(orig);
  const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
  let cur = orig.slice(0, seps[seps.length - 1]!.index);
  if (words(cur) < 3) cur = orig.replace(/^[^|\-–—\\/>»]*[|\-–—\\/>»]/, '');
  cur = cur.trim().replace(/\s{2,}/g, ' ');
  const n = words(cur);
  if (n <= 4 && (!hierarchical || n !== words(orig.replace(/[|\-–—\\/>»]+/g, '')) - 1)) return orig;
  return cur;
}

/** The first language tag of a `Content-Language` header. */
function headerLang(headers: Record<string, string>): string | null {
  return clean(headers['content-language']?.split(',')[0]) ?? null;
}

/** HTML's ASCII whitespace (and no-break spaces); an ideographic space U+3000 is text in CJK titles. */
const HTML_SPACE = /[ \t\n\f\r\u00a0]+/g;

/** `s` trimmed with whitespace folded; null for nothing. */
function clean(s: string | null | undefined): string | null {
  if (typeof s !== 'string') return null;
  const t = s.replace(HTML_SPACE, ' ').trim();
  return t ? t : null;
}

/** ISO 8601 date or date-time: kept as written. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
/** A time zone named in a date string (`Z`, `GMT`, `UTC`, `+0100`, `EST`, …). */
const HAS_ZONE = /(?:\d(?:Z)|\b(?:GMT|UTC|UT|[ECMP][SD]T)\b|[+-]\d{2}:?\d{2}\s*$)/i;

/**
 * A publication time as ISO 8601: an ISO 8601 value as written (`T` for a space separator), another format
 * JavaScript's `Date` reads (RFC 2822 `Tue, 05 Mar 2019 10:00:00 GMT`, `March 5, 2019`) as UTC
 * `YYYY-MM-DDTHH:mm:ss.sssZ` (a value without zone read as UTC), anything else as found.
 */
export function normaliseTime(value: string | null): string | null {
  if (!value) return null;
  const v = value.trim();
  if (ISO_8601.test(v)) return v.replace(' ', 'T');
  if (!/\d/.test(v) || /^\d+$/.test(v)) return v;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return v;
  if (HAS_ZONE.test(v)) return d.toISOString();
  return new Date(Date.UTC(d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds())).toISOString();
}
