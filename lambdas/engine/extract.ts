/**
 * Field extraction: the one implementation (docs/architecture.md, idea 4). It runs on cheerio over the tree a
 * browser builds from a page's HTML (loadHtml(), html/parse.ts), wherever that HTML comes from: the HTTP
 * loader's fetch, the browser loader's rendered page, or the browser extension's current page. It imports
 * nothing from Node.
 *
 * Rules (docs/config-language.md, "Fields"):
 * - a field's selector is looked up inside the item element; without a selector the item element itself
 *   is the field's element; the first match counts unless `multiple: true`;
 * - with `extract.following_siblings` (list only) an item is the container match and up to N of the element
 *   siblings after it, up to the next container match; a field's selector then matches the whole document
 *   and keeps the elements that are one of the item's elements or inside one (field-selector.ts);
 * - `link` and `image_url` give absolute URLs, resolved against the document base (`<base href>` over the
 *   page's final URL);
 * - "nothing extracted" means no element, no attribute, or an empty or null value after the transforms;
 *   then the field's `default` is used (null when it has none). `count` and `exists` always have a value.
 */
import { load, type CheerioAPI, type Cheerio } from 'cheerio/slim';
import { isTag, type AnyNode, type Element } from 'domhandler';
import type { FieldSpec, ScrapeConfig } from './config.ts';
import { parseHtml } from './html/parse.ts';
import { documentBaseUrl, resolveUrl } from './page-facts.ts';
import { applyTransforms, compilePattern, compileTransforms, regexExtract, type FieldValue, type Pattern, type Transform } from './transforms.ts';
import { compileFieldSelector, compileSiblingsSelector, type FieldSelector, type SiblingsSelector } from './field-selector.ts';

/** One scraped row: field name to value (string, number, boolean, null, or an array with `multiple`). */
export type Row = Record<string, unknown>;

/** A field ready to run: transforms, pattern and selector compiled once. */
export interface CompiledField {
  spec: FieldSpec;
  transforms: Transform[];
  pattern?: Pattern;
  /** The selector compiled for the search inside each item; absent where cheerio runs it (field-selector.ts). */
  query?: FieldSelector;
  /** The selector compiled for items spread over sibling elements; made on first use (extractSiblingsField). */
  siblings?: SiblingsSelector;
}

/** Compiles field definitions (validated configs only: errors here were caught by parseConfig). */
export function compileFields(fields: readonly FieldSpec[]): CompiledField[] {
  return fields.map((spec) => {
    const query = spec.selector !== undefined ? compileFieldSelector(spec.selector) : null;
    return {
      spec,
      transforms: compileTransforms(spec.transform),
      ...(spec.pattern !== undefined ? { pattern: compilePattern(spec.pattern) } : {}),
      ...(query ? { query } : {}),
    };
  });
}

/**
 * Parses HTML into a cheerio document holding the tree a browser builds (WHATWG tree construction:
 * implied `<tbody>`, `</h2>` ending an `<h3>`, …), so that selectors copied from devtools match here too:
 * parseHtml() (html/parse.ts, docs/html-parsing.md) gives parse5's tree at about htmlparser2's speed.
 * `cheerio/slim` takes that tree as it is and serialises with dom-serializer: `encodeEntities: 'utf8'`
 * makes `html` fields read as a browser's innerHTML does ("£5", "日本"), escaping only `& < > "`, instead
 * of turning every non-ASCII character into an entity (`&#xa3;5`).
 */
export function loadHtml(html: string): CheerioAPI {
  return load(parseHtml(html), { xml: { xmlMode: false, decodeEntities: true, encodeEntities: 'utf8' } });
}

/**
 * Lets a document loaded with {@link loadHtml} go, once nothing more is read from it: its root is emptied, so the tree
 * dies young. Without it every page's whole tree is promoted to V8's old generation: cheerio 1.2's `load()` makes a
 * class per document whose methods close over the tree, and the scavenger keeps that new prototype (registered with
 * `Cheerio.prototype`) and so the tree alive until the next full mark-compact. Measured on 1,000 detail pages of the
 * engine bench: 108 MB promoted and 292 ms of scavenge pauses without it, 8 MB and 48 ms with it (0.62 against 0.38 ms a
 * page; bench/README.md, "Trees that die young"). `$` must not be used afterwards; values already read (strings,
 * numbers) are not affected.
 */
export function releaseDocument($: CheerioAPI): void {
  const root = $.root()[0] as { children?: unknown[] } | undefined;
  if (root && Array.isArray(root.children)) root.children = [];
}

/**
 * The document's base URL (page-facts.ts, {@link documentBaseUrl}: the HTML standard's, as a browser has it): the
 * first `<base href>` of the document (not one inside `<template>` or SVG) resolved against the page URL, else
 * the page URL; an `href` that does not parse, or names a `data:` or `javascript:` URL, leaves the page URL.
 * @param $ the page, as loadHtml() gives it.
 * @param pageUrl the page's final URL after redirects.
 * @param html the page's source, when at hand: a page without `<base` skips the document search.
 * @returns an absolute URL (the page URL when there is no usable `<base href>`).
 */
export function documentBase($: CheerioAPI, pageUrl: string, html?: string): string {
  if (html !== undefined && !/<base[\s>]/i.test(html)) return pageUrl;
  const root = $.root()[0];
  return root ? documentBaseUrl(root, pageUrl) : pageUrl;
}

/**
 * Resolves a URL found in a page for a `link` or `image_url` field (page-facts.ts's {@link resolveUrl}, trimmed).
 * @param raw the attribute's value; undefined when the element has none.
 * @param base the document base ({@link documentBase}).
 * @returns the absolute URL; null for a missing, empty, unparsable or `javascript:` URL.
 */
export function absoluteUrl(raw: string | undefined, base: string): string | null {
  if (raw === undefined) return null;
  const s = raw.trim();
  if (!s || /^javascript:/i.test(s)) return null;
  return resolveUrl(s, base);
}

function isBlank(v: unknown): boolean {
  return v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
}

/** The raw value of one element for a field type, before transforms. */
function rawValue(el: Cheerio<AnyNode>, f: CompiledField, base: string): FieldValue {
  const s = f.spec;
  switch (s.type) {
    case 'text':
      return el.text();
    case 'attribute':
      return el.attr(s.attribute!) ?? null;
    case 'html':
      return el.html();
    case 'link': {
      let href = el.attr('href');
      // A selector on a card or a heading often lands on the link's parent; take the link inside it.
      if (href === undefined) href = el.find('a[href]').first().attr('href');
      return absoluteUrl(href, base);
    }
    case 'image_url': {
      const img = el.is('img, source') ? el : el.find('img').first();
      const src = img.attr('src');
      const lazy = img.attr('data-src') ?? img.attr('data-lazy-src') ?? img.attr('data-original');
      // Lazy-loading pages put a placeholder (a data: URI or nothing) in src and the image in data-src.
      const chosen = lazy && (!src || /^data:/i.test(src.trim())) ? lazy : src ?? lazy;
      return absoluteUrl(chosen, base);
    }
    case 'regex': {
      const text = el.text();
      return regexExtract(f.pattern!, text);
    }
    default:
      return null;
  }
}

/**
 * A string value that holds no reference to the page it came from. Text read from a parsed page is a slice of
 * the page's source (V8 keeps a slice of 13 or more characters as a view on its parent string), so a row's
 * value would keep its whole page in memory until the run ends: 1,000 detail pages of 25 KB, 25 MB. The
 * concatenation is flattened into a string of its own, whose slice is then a view on that copy only.
 */
function detach<T>(v: T): T {
  return typeof v === 'string' && v.length >= 13 ? ((' ' + v).slice(1) as T) : v;
}

function finish(value: FieldValue, f: CompiledField): unknown {
  const v = applyTransforms(value, f.transforms);
  if (isBlank(v)) return 'default' in f.spec ? f.spec.default : null;
  return detach(v);
}

/**
 * Extracts one field from an item element.
 * @param item the item element (a container match, a table row, or the document root).
 */
function extractField($: CheerioAPI, item: Cheerio<AnyNode>, f: CompiledField, base: string): unknown {
  const s = f.spec;
  // A single value needs the first match only: the search stops there (cheerio's own extract() does the same
  // with its _findBySelector(selector, 1); positional pseudo-classes such as :last are still honoured).
  const single = !s.multiple && s.type !== 'count' && s.type !== 'exists';
  let matches: Cheerio<AnyNode>;
  const node = item[0];
  if (s.selector === undefined) matches = item;
  else if (f.query && node && 'children' in node) {
    if (single || s.type === 'exists') {
      const first = f.query.first(node);
      if (s.type === 'exists') return applyTransforms(first !== null, f.transforms);
      if (first === null) return 'default' in s ? s.default : null;
      matches = $(first);
    } else {
      matches = $(f.query.all(node));
    }
  } else matches = single ? item._findBySelector(s.selector, 1) : item.find(s.selector);
  return fieldValue($, matches, f, base);
}

/** A field's value from the elements its selector found (or the item element, for a field without selector). */
function fieldValue($: CheerioAPI, matches: Cheerio<AnyNode>, f: CompiledField, base: string): unknown {
  const s = f.spec;
  if (s.type === 'count') return applyTransforms(matches.length, f.transforms);
  if (s.type === 'exists') return applyTransforms(matches.length > 0, f.transforms);
  if (s.type === 'eval') return 'default' in s ? s.default : null; // run in the page by the heavy engine only
  if (s.multiple) {
    const values: unknown[] = [];
    matches.each((_, node) => {
      const v = applyTransforms(rawValue($(node), f, base), f.transforms);
      if (!isBlank(v)) values.push(detach(v));
    });
    return values.length || !('default' in s) ? values : s.default;
  }
  if (matches.length === 0) return 'default' in s ? s.default : null;
  return finish(rawValue(matches.first(), f, base), f);
}

/**
 * Extracts one field from an item spread over sibling elements (`extract.following_siblings`): the selector's
 * matches are those of the whole document that are one of `elements` or inside one of them, in document order
 * ({@link compileSiblingsSelector}); a field without a selector reads the container match, `elements[0]`.
 */
function extractSiblingsField($: CheerioAPI, elements: readonly Element[], f: CompiledField, base: string): unknown {
  const s = f.spec;
  if (s.selector === undefined) return fieldValue($, $(elements[0]!), f, base);
  const query = (f.siblings ??= compileSiblingsSelector(s.selector));
  let matches: Cheerio<AnyNode>;
  if ((!s.multiple && s.type !== 'count') || s.type === 'exists') {
    const first = query.first($, elements);
    if (s.type === 'exists') return applyTransforms(first !== null, f.transforms);
    if (first === null) return 'default' in s ? s.default : null;
    matches = $(first);
  } else {
    matches = $(query.all($, elements));
  }
  return fieldValue($, matches, f, base);
}

/**
 * The items of a list whose records are spread over sibling elements: each container match with up to `n` of
 * the element siblings that follow it, stopping before a sibling that matches the container itself (so items
 * never overlap, and a last record takes at most `n` siblings).
 */
function siblingItems($: CheerioAPI, container: string, n: number): Element[][] {
  const matches = $(container).toArray() as Element[];
  const isMatch = new Set<AnyNode>(matches);
  return matches.map((el) => {
    const elements = [el];
    for (let next = el.nextSibling; next && elements.length <= n; next = next.nextSibling) {
      if (!isTag(next)) continue;
      if (isMatch.has(next)) break;
      elements.push(next);
    }
    return elements;
  });
}

/** Extracts every field from one item element into a row. */
function extractRecord($: CheerioAPI, item: Cheerio<AnyNode>, fields: readonly CompiledField[], base: string): Row {
  const row: Row = {};
  for (const f of fields) row[f.spec.name] = extractField($, item, f, base);
  return row;
}

function cellText(el: Cheerio<AnyNode>): string {
  return el.text().replace(/\s+/g, ' ').trim();
}

/** Row keys from a table's header cells: text, else `column_N`; repeated names get `_2`, `_3`. */
function headerKeys($: CheerioAPI, table: Cheerio<Element>): string[] | null {
  let header = table.find('thead tr').first();
  if (!header.length) {
    const first = table.find('tr').first();
    if (first.length && first.children('th').length && !first.children('td').length) header = first;
  }
  if (!header.length) return null;
  const seen = new Map<string, number>();
  return header.children('th, td').toArray().map((cell, i) => {
    const text = cellText($(cell));
    // "__proto__" as a plain object key would replace the row's prototype instead of naming a column.
    const name = text && text !== '__proto__' ? text : `column_${i + 1}`;
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name}_${n}`;
  });
}

function tableRows($: CheerioAPI, table: Cheerio<Element>, fields: readonly CompiledField[], base: string): Row[] {
  // Rows of this table only, not of tables nested in its cells.
  const rows = table.find('tr').filter((_, tr) => $(tr).closest('table').is(table.first()) && $(tr).children('td').length > 0);
  if (fields.length) return rows.toArray().map((tr) => extractRecord($, $(tr), fields, base));
  const keys = headerKeys($, table);
  return rows.toArray().map((tr) => {
    const row: Row = {};
    $(tr).children('td, th').each((i, cell) => {
      row[keys?.[i] ?? `column_${i + 1}`] = detach(cellText($(cell)));
    });
    return row;
  });
}

/**
 * Extracts the items of one page as docs/spec.md's `extract` block describes: a row per container match
 * (`list`; with `following_siblings`, of the match and the siblings after it that belong to it), one row
 * (`single`: the first container match, or the whole document without a container), or a row per body row of
 * each matched table (`table`).
 * @param pageUrl the page's final URL (the base for links unless the page has `<base href>`).
 * @param base the document base when the caller has it already (see {@link documentBase}).
 */
export function extractItems($: CheerioAPI, extract: ScrapeConfig['extract'], fields: readonly CompiledField[], pageUrl: string, base = documentBase($, pageUrl)): Row[] {
  switch (extract.type) {
    case 'single': {
      const root = extract.container ? $(extract.container).first() : $.root();
      return root.length ? [extractRecord($, root, fields, base)] : [];
    }
    case 'table': {
      const out: Row[] = [];
      $(extract.container!).filter('table').each((_, t) => { out.push(...tableRows($, $(t), fields, base)); });
      if (!out.length) {
        // A container naming a wrapper of the table (div.results) finds the table inside it.
        $(extract.container!).not('table').find('table').first().each((_, t) => { out.push(...tableRows($, $(t), fields, base)); });
      }
      return out;
    }
    default: {
      const rows: Row[] = [];
      const n = extract.following_siblings;
      if (n) {
        for (const elements of siblingItems($, extract.container!, n)) {
          const row: Row = {};
          for (const f of fields) row[f.spec.name] = extractSiblingsField($, elements, f, base);
          rows.push(row);
        }
        return rows;
      }
      $(extract.container!).each((_, el) => { rows.push(extractRecord($, $(el), fields, base)); });
      return rows;
    }
  }
}

/** A category found on a page (docs/spec.md, categories). */
export interface CategoryLink {
  name: string;
  url: string;
}

/**
 * The category links of a page, in page order: `link_selector` inside `container` (the whole page
 * without one), the URL from `link_attribute` resolved against the document base, the name from
 * `name_selector` inside the link (else the link's text, whitespace collapsed); non-http links and
 * repeats (same URL without #fragment) skipped; at most `max_categories`.
 */
export function categoryLinks($: CheerioAPI, c: NonNullable<ScrapeConfig['categories']>, base: string): CategoryLink[] {
  const links = c.container ? $(c.container).find(c.link_selector) : $(c.link_selector);
  const out: CategoryLink[] = [];
  const seen = new Set<string>();
  links.each((_, el) => {
    if (out.length >= c.max_categories) return false;
    const $el = $(el);
    const url = absoluteUrl($el.attr(c.link_attribute), base);
    const key = url?.split('#')[0];
    if (!url || !key || !/^https?:/.test(url) || seen.has(key)) return undefined;
    seen.add(key);
    const nameEl = c.name_selector ? $el.find(c.name_selector).first() : $el;
    out.push({ name: (nameEl.length ? nameEl : $el).text().replace(/\s+/g, ' ').trim(), url });
    return undefined;
  });
  return out;
}

/** Extracts detail fields from a whole detail page: selectors apply to the document. */
export function extractDetail($: CheerioAPI, fields: readonly CompiledField[], pageUrl: string, base = documentBase($, pageUrl)): Row {
  return extractRecord($, $.root(), fields, base);
}
