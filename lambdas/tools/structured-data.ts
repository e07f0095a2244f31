/**
 * The structured data a page declares, as types: JSON-LD (`<script type="application/ld+json">`), HTML
 * microdata (`itemscope` / `itemtype`) and RDFa (`typeof`), for the SEO analyzer (seo/analyze.ts,
 * docs/tools.md "SEO analyzer"). Only what each item *is* is reported (its types, its id), not its
 * properties: that is what search engines' rich results are keyed on and what an SEO check needs.
 *
 * Sources: JSON-LD 1.1 (W3C Recommendation, 2020) for `@type` / `@id` / `@graph`; the WHATWG HTML
 * standard, "Microdata", for items and top-level items; RDFa Core 1.1 / RDFa Lite 1.1 (W3C) for `typeof`,
 * `vocab`, `prefix` and the initial context's prefixes. Tolerances for broken JSON-LD follow what
 * scrapinghub/extruct repairs (comments, raw control characters in strings, HTML-escaped scripts).
 */
import { isTag, isText, type AnyNode, type Document, type Element } from 'domhandler';

/**
 * Limits of reading structured data (docs/tools.md, "Limits of the analysis"). A page is hostile input: its
 * JSON-LD may nest 500,000 arrays (`JSON.parse` reads that, but any walk of the result by recursion overflows
 * the stack), and it may declare a million items.
 */
export const STRUCTURED_DATA_LIMITS = {
  /**
   * Deepest nesting of arrays and objects read in one JSON-LD script; a deeper script is a structured-data
   * error ("nested deeper than 64 levels"), as a broken script is. schema.org data is rarely 10 deep.
   */
  jsonLdDepth: 64,
  /** Items reported per syntax (JSON-LD, microdata, RDFa), the first in document order. */
  items: 1_000,
  /** Nested types collected under one JSON-LD item. */
  nestedTypes: 1_000,
} as const;

/** One JSON-LD item: a top-level value of a script, or a member of a top-level `@graph`. */
export interface JsonLdItem {
  /** Its `@type` values as written (`"Product"`, `"schema:Product"`, `"http://schema.org/Product"`); [] when untyped. */
  type: string[];
  /** Its `@id`, or null. */
  id: string | null;
  /** `@type` values of the typed nodes nested inside it, in document order, each once. */
  nested_types: string[];
}

/** One microdata item: an element with `itemscope`. */
export interface MicrodataItem {
  /** The tokens of its `itemtype` as written; [] when it has none. */
  type: string[];
  /** Its `itemid`, or null. */
  id: string | null;
  /** True for a top-level item (no `itemprop`): the items search engines read first. */
  top_level: boolean;
}

/** One RDFa typed resource: an element with a non-empty `typeof`. */
export interface RdfaItem {
  /** Each `typeof` term expanded to an IRI (by `vocab`, a `prefix` / `xmlns:` declaration or the RDFa initial context); a term nothing expands is kept as written. */
  type: string[];
}

/** A JSON-LD script that could not be read even after the repairs. */
export interface StructuredDataError {
  syntax: 'json-ld';
  /** 0-based index of the script among the page's JSON-LD scripts. */
  index: number;
  message: string;
}

/** The structured data found on a page. */
export interface StructuredData {
  json_ld: JsonLdItem[];
  microdata: MicrodataItem[];
  rdfa: RdfaItem[];
  /**
   * Every type of the three syntaxes, each once, in order of appearance, schema.org types by their short
   * name (`http://schema.org/Product`, `https://schema.org/Product`, `schema:Product` → `Product`), other
   * vocabularies' types as full IRIs.
   */
  types: string[];
  errors: StructuredDataError[];
}

/** Prefixes of the RDFa 1.1 initial context (W3C, "RDFa Core Initial Context") that pages use in practice. */
const RDFA_INITIAL_PREFIXES: Record<string, string> = {
  as: 'https://www.w3.org/ns/activitystreams#',
  cc: 'http://creativecommons.org/ns#',
  dc: 'http://purl.org/dc/terms/',
  dcterms: 'http://purl.org/dc/terms/',
  dc11: 'http://purl.org/dc/elements/1.1/',
  foaf: 'http://xmlns.com/foaf/0.1/',
  gr: 'http://purl.org/goodrelations/v1#',
  ical: 'http://www.w3.org/2002/12/cal/icaltzd#',
  og: 'http://ogp.me/ns#',
  owl: 'http://www.w3.org/2002/07/owl#',
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  rdfa: 'http://www.w3.org/ns/rdfa#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  rev: 'http://purl.org/stuff/rev#',
  schema: 'http://schema.org/',
  sioc: 'http://rdfs.org/sioc/ns#',
  skos: 'http://www.w3.org/2004/02/skos/core#',
  v: 'http://rdf.data-vocabulary.org/#',
  vcard: 'http://www.w3.org/2006/vcard/ns#',
  void: 'http://rdfs.org/ns/void#',
  xhv: 'http://www.w3.org/1999/xhtml/vocab#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
};

const SCHEMA_ORG = /^(?:https?:\/\/(?:www\.)?schema\.org\/|schema:)([^/#?]+)$/i;

/** A type's name in `types`: schema.org types by their short name, anything else as it is. */
function shortTypeName(type: string): string {
  const m = SCHEMA_ORG.exec(type.trim());
  return m ? m[1] : type.trim();
}

/** The scripts' texts in the order they appear, as collected by the caller's walk over the page. */
export interface StructuredDataSources {
  /** Text of each `<script type="application/ld+json">`. */
  jsonLd: string[];
  /** Each element carrying `itemscope`, in document order. */
  itemscopes: Element[];
  /** Each element carrying `typeof`, in document order. */
  typeofs: Element[];
}

/** Walks `doc` once for the elements structured data lives in (outside `<template>`). */
export function collectStructuredDataSources(doc: Document): StructuredDataSources {
  const sources: StructuredDataSources = { jsonLd: [], itemscopes: [], typeofs: [] };
  const stack: AnyNode[] = [...doc.children].reverse();
  while (stack.length) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    if (node.name === 'template') continue;
    if (node.name === 'script') {
      if (isJsonLdType(node.attribs.type)) sources.jsonLd.push(textOf(node));
      continue;
    }
    if ('itemscope' in node.attribs) sources.itemscopes.push(node);
    if (node.attribs.typeof !== undefined && node.attribs.typeof.trim()) sources.typeofs.push(node);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
  return sources;
}

/** `type="application/ld+json"`, parameters and case aside. */
function isJsonLdType(type: string | undefined): boolean {
  return type !== undefined && type.split(';')[0].trim().toLowerCase() === 'application/ld+json';
}

function textOf(el: Element): string {
  let out = '';
  for (const child of el.children) if (isText(child)) out += child.data;
  return out;
}

/** Reads the structured data of a page from the sources {@link collectStructuredDataSources} found. */
export function extractStructuredData(sources: StructuredDataSources): StructuredData {
  const json_ld: JsonLdItem[] = [];
  const errors: StructuredDataError[] = [];
  const max = STRUCTURED_DATA_LIMITS.items;
  sources.jsonLd.forEach((text, index) => {
    const parsed = parseJsonLd(text);
    if (!parsed.ok) {
      if (errors.length < max) errors.push({ syntax: 'json-ld', index, message: parsed.message });
      return;
    }
    for (const value of parsed.values) {
      if (json_ld.length >= max) break;
      for (const item of jsonLdItems(value)) if (json_ld.length < max) json_ld.push(item);
    }
  });

  const microdata: MicrodataItem[] = sources.itemscopes.slice(0, max).map((el) => ({
    type: tokens(el.attribs.itemtype),
    id: el.attribs.itemid?.trim() || null,
    top_level: el.attribs.itemprop === undefined,
  }));

  const rdfa: RdfaItem[] = sources.typeofs.slice(0, max).map((el) => ({ type: tokens(el.attribs.typeof).map((t) => expandRdfaTerm(t, el)) }));

  const types = new Set<string>();
  for (const item of json_ld) for (const t of [...item.type, ...item.nested_types]) types.add(shortTypeName(t));
  for (const item of microdata) for (const t of item.type) types.add(shortTypeName(t));
  for (const item of rdfa) for (const t of item.type) types.add(shortTypeName(t));
  return { json_ld, microdata, rdfa, types: [...types].filter(Boolean), errors };
}

function tokens(value: string | undefined): string[] {
  return value ? value.split(/[\t\n\f\r ]+/).filter(Boolean) : [];
}

/**
 * The top-level items of one parsed JSON-LD value: the value itself, an array's elements, `@graph` members (in
 * document order, without recursion), at most {@link STRUCTURED_DATA_LIMITS}.items.
 */
function jsonLdItems(root: unknown): JsonLdItem[] {
  const items: JsonLdItem[] = [];
  const stack: unknown[] = [root];
  while (stack.length && items.length < STRUCTURED_DATA_LIMITS.items) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
      continue;
    }
    if (!isObject(value)) continue;
    const graph = value['@graph'];
    const ownTypes = typesOf(value);
    if (ownTypes.length || graph === undefined) {
      const nested: string[] = [];
      for (const [key, v] of Object.entries(value)) if (key !== '@type' && key !== '@graph' && key !== '@context') collectTypes(v, nested);
      items.push({ type: ownTypes, id: idOf(value), nested_types: unique(nested) });
    }
    if (graph !== undefined) stack.push(graph);
  }
  return items;
}

/** The `@type`s of the nodes inside `root` (document order, without recursion), at most `nestedTypes` of them. */
function collectTypes(root: unknown, into: string[]): void {
  const stack: unknown[] = [root];
  while (stack.length && into.length < STRUCTURED_DATA_LIMITS.nestedTypes) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
      continue;
    }
    if (!isObject(value)) continue;
    // A value object ({"@value": "2020-01-01", "@type": "xsd:date"}) names a datatype, not a node's type.
    if (!('@value' in value)) into.push(...typesOf(value));
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, v] = entries[i]!;
      if (key !== '@type' && key !== '@context') stack.push(v);
    }
  }
}

function typesOf(node: Record<string, unknown>): string[] {
  const t = node['@type'];
  if (typeof t === 'string') return t.trim() ? [t.trim()] : [];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim());
  return [];
}

function idOf(node: Record<string, unknown>): string | null {
  return typeof node['@id'] === 'string' ? node['@id'] : null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

type JsonLdParse = { ok: true; values: unknown[] } | { ok: false; message: string };

/**
 * Parses a JSON-LD script's text as JSON, and when that fails, once more after the repairs real pages
 * need (as extruct does): HTML comments (`<!-- -->`) and JavaScript comments outside strings dropped, raw
 * control characters inside strings escaped, HTML-escaped text (`{&quot;@type&quot;…`) unescaped, and
 * several concatenated values or trailing junk after a complete value read value by value.
 */
function parseJsonLd(text: string): JsonLdParse {
  const trimmed = text.trim();
  if (!trimmed) return { ok: true, values: [] };
  const depth = STRUCTURED_DATA_LIMITS.jsonLdDepth;
  if (jsonDeeperThan(trimmed, depth)) return { ok: false, message: `nested deeper than ${depth} levels of arrays and objects` };
  try {
    return { ok: true, values: [JSON.parse(trimmed)] };
  } catch (err) {
    let source = repairJson(trimmed);
    if (/^[[{]\s*&(?:quot|#34|#x22);/i.test(source)) source = repairJson(decodeBasicEntities(source));
    const values = parseConcatenated(source);
    if (values.length) return { ok: true, values };
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

function decodeBasicEntities(s: string): string {
  return s.replace(/&(quot|amp|lt|gt|apos|#34|#x22|#39|#x27);/gi, (_, name: string) => {
    const n = name.toLowerCase();
    return n === 'quot' || n === '#34' || n === '#x22' ? '"' : n === 'amp' ? '&' : n === 'lt' ? '<' : n === 'gt' ? '>' : "'";
  });
}

/**
 * Comments out, control characters in strings escaped, trailing commas dropped; the string structure is
 * tracked so `//` in a URL survives.
 */
function repairJson(s: string): string {
  // Pieces, not one string: a trailing comma is dropped by emptying its piece (no search back, no copy: linear).
  const out: string[] = [];
  let inString = false;
  /** Index in `out` of the last comma outside strings while only whitespace and comments follow it; -1 otherwise. */
  let trailingComma = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (inString) {
      if (c === '\\') {
        out.push(c + (s[i + 1] ?? ''));
        i++;
      } else if (c === '"') {
        inString = false;
        out.push(c);
      } else if (c < ' ') {
        out.push(c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
      } else {
        out.push(c);
      }
      continue;
    }
    if (c === ',') {
      trailingComma = out.length;
      out.push(c);
    } else if (c === '"') {
      inString = true;
      trailingComma = -1;
      out.push(c);
    } else if (c === '/' && s[i + 1] === '/') {
      const end = s.indexOf('\n', i);
      i = end === -1 ? s.length : end - 1;
    } else if (c === '/' && s[i + 1] === '*') {
      const end = s.indexOf('*/', i + 2);
      i = end === -1 ? s.length : end + 1;
    } else if (s.startsWith('<!--', i)) {
      const end = s.indexOf('-->', i + 4);
      i = end === -1 ? s.length : end + 2;
    } else if (s.startsWith('-->', i)) {
      i += 2;
    } else if (c === '}' || c === ']') {
      // A trailing comma left by a commented-out last member.
      if (trailingComma !== -1) out[trailingComma] = '';
      trailingComma = -1;
      out.push(c);
    } else {
      if (!/\s/.test(c)) trailingComma = -1;
      out.push(c);
    }
  }
  return out.join('');
}

/**
 * Whether JSON text (or JavaScript-like text) nests arrays and objects deeper than `max` anywhere: one pass,
 * brackets inside strings aside. Checked before `JSON.parse`, whose result a deeper value could not be walked.
 */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * `JSON.parse` of a JSON-LD script's text, refused (undefined) when it nests deeper than
 * {@link STRUCTURED_DATA_LIMITS}.jsonLdDepth; throws as `JSON.parse` does on invalid JSON. For the tools that
 * read JSON-LD (content, leads): their walks of the value are bounded by the depth.
 */
export function parseJsonLdBounded(text: string): unknown {
  if (jsonDeeperThan(text, STRUCTURED_DATA_LIMITS.jsonLdDepth)) return undefined;
  return JSON.parse(text);
}

/** Reads complete JSON values one after another; stops at the first that does not parse. */
function parseConcatenated(s: string): unknown[] {
  const values: unknown[] = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && /[\s;,]/.test(s[i])) i++;
    if (i >= s.length) break;
    const end = valueEnd(s, i);
    if (end === -1) break;
    try {
      values.push(JSON.parse(s.slice(i, end)));
    } catch {
      break;
    }
    i = end;
  }
  return values;
}

/** End (exclusive) of the object or array starting at `start`, by bracket balance outside strings; -1 when unbalanced. */
function valueEnd(s: string, start: number): number {
  const open = s[start];
  if (open !== '{' && open !== '[') {
    const m = /^(?:null|true|false|-?\d[\d.eE+-]*|"(?:[^"\\]|\\.)*")/.exec(s.slice(start));
    return m ? start + m[0].length : -1;
  }
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * Expands one `typeof` term (RDFa Core 1.1, section 7.4): an absolute IRI stays; `prefix:term` uses the
 * nearest `prefix` / `xmlns:prefix` declaration in scope or the initial context; a bare term uses the
 * nearest `vocab`.
 */
function expandRdfaTerm(term: string, el: Element): string {
  const colon = term.indexOf(':');
  if (colon > 0) {
    const prefix = term.slice(0, colon).toLowerCase();
    const rest = term.slice(colon + 1);
    if (rest.startsWith('//')) return term;
    const ns = prefixInScope(prefix, el) ?? RDFA_INITIAL_PREFIXES[prefix];
    return ns ? ns + rest : term;
  }
  for (let node: Element | null = el; node; node = node.parent && isTag(node.parent) ? node.parent : null) {
    const vocab = node.attribs.vocab;
    if (vocab !== undefined) return vocab.trim() ? vocab.trim() + term : term;
  }
  return term;
}

function prefixInScope(prefix: string, el: Element): string | undefined {
  for (let node: Element | null = el; node; node = node.parent && isTag(node.parent) ? node.parent : null) {
    const declared = node.attribs.prefix;
    if (declared) {
      const parts = declared.trim().split(/\s+/);
      for (let i = 0; i + 1 < parts.length; i += 2) {
        if (parts[i].toLowerCase() === `${prefix}:`) return parts[i + 1];
      }
    }
    const xmlns = node.attribs[`xmlns:${prefix}`];
    if (xmlns) return xmlns.trim();
  }
  return undefined;
}
