/**
 * The fingerprint set (fingerprints.ts) compiled once, on first use, into indexes by the input each pattern
 * tests (headers, cookies, meta, JS globals, script URLs, inline scripts, HTML, text, URL, CSS, `dom` selectors):
 * the technologies without conditions in one, those with `requires` or `requiresCategory` in another.
 */
import { parse as parseSelector } from 'css-what';
import { loadFingerprints, type RawDomRule, type RawPatterns, type RawTechnology } from '../fingerprints.ts';
import { LiteralScanner } from './literal-scanner.ts';
import { patternsOf, toArray, type Pattern } from './patterns.ts';

/** One implied technology, with its tags. */
interface Implied {
  name: string;
  confidence: number;
  version: string;
}

/** What the resolver needs of a technology. */
export interface Tech {
  name: string;
  categories: string[];
  categoryIds: number[];
  /** Lowest category priority number (most telling). */
  priority: number;
  website: string | null;
  implies: Implied[];
  excludes: string[];
  requires: string[];
  requiresCategory: number[];
}

/** A pattern of a technology. */
export interface Rule {
  tech: Tech;
  pattern: Pattern;
}

/** A `dom` selector and what to test on the elements it finds. */
export interface DomSelector {
  tech: Tech;
  selector: string;
  /** Pre-filter (see {@link couldMatch}): each comma-separated alternative's requirements. */
  alternatives: Requirement[][];
  exists: Pattern[];
  text: Pattern[];
  attributes: Array<{ name: string; pattern: Pattern }>;
}

/** A requirement of a selector's rightmost compound that the document index can check cheaply. */
export type Requirement =
  | { kind: 'tag'; name: string }
  | { kind: 'attr'; name: string }
  | { kind: 'class'; name: string }
  | { kind: 'equals'; name: string; value: string }
  | { kind: 'contains'; name: string; value: string };

/** The patterns of one set of technologies, by the input they test. */
export interface Index {
  headers: Map<string, Rule[]>;
  cookies: Map<string, Rule[]>;
  /**
   * Cookie names written as regular expressions (`SESS[a-f0-9]{32}`, `ASP\.NET_SessionId`): a cookie matches when
   * its name equals the key or the key, as a case-insensitive regex, matches the whole name.
   */
  cookiePatterns: Array<{ key: string; name: RegExp | null; rule: Rule }>;
  meta: Map<string, Rule[]>;
  js: Map<string, Rule[]>;
  scriptSrc: Rule[];
  scripts: Rule[];
  html: Rule[];
  text: Rule[];
  url: Rule[];
  css: Rule[];
  dom: DomSelector[];
}

/** The compiled fingerprints: technologies without conditions, and those with `requires`/`requiresCategory`. */
export interface Compiled {
  techs: Map<string, Tech>;
  main: Index;
  conditional: Index;
  jsPaths: string[];
  /** The literals of the patterns on large inputs (html, scripts, text, css). */
  scanner: LiteralScanner;
  /** The values `dom` selectors look for inside attributes (`[href*='/wp-content/']`). */
  domScanner: LiteralScanner;
}

let compiled: Compiled | null = null;

/** A name with its `\;confidence:` and `\;version:` tags (implies), as Wappalyzer parses them. */
function parseImplied(raw: string): Implied {
  const [name = '', ...tags] = raw.split('\\;');
  let confidence = 100;
  let version = '';
  for (const tag of tags) {
    const [k, ...rest] = tag.split(':');
    if (k === 'confidence') confidence = Number.parseInt(rest.join(':'), 10) || 0;
    else if (k === 'version') version = rest.join(':');
  }
  return { name: name.trim(), confidence, version };
}

/**
 * The requirements of each comma-separated alternative's rightmost compound selector: its tag and the
 * attributes it tests (the value only for operators whose match contains the value). null when the selector
 * does not parse.
 */
export function selectorRequirements(selector: string): Requirement[][] | null {
  let parsed;
  try {
    parsed = parseSelector(selector);
  } catch {
    return null;
  }
  const traversals = new Set(['adjacent', 'child', 'descendant', 'parent', 'sibling', 'column-combinator']);
  return parsed.map((tokens) => {
    let start = 0;
    tokens.forEach((t, i) => {
      if (traversals.has(t.type as string)) start = i + 1;
    });
    const reqs: Requirement[] = [];
    for (const t of tokens.slice(start) as Array<{ type: string; name?: string; action?: string; value?: string }>) {
      if (t.type === 'tag' && t.name) {
        reqs.push({ kind: 'tag', name: t.name.toLowerCase() });
      } else if (t.type === 'attribute' && t.name && t.action !== 'not') {
        const name = t.name.toLowerCase();
        const value = (t.value ?? '').toLowerCase();
        reqs.push({ kind: 'attr', name });
        if (!value || t.action === 'exists') continue;
        if (t.action === 'element' && name === 'class') reqs.push({ kind: 'class', name: value });
        else if (t.action === 'equals') reqs.push({ kind: 'equals', name, value });
        else reqs.push({ kind: 'contains', name, value });
      }
    }
    // Cheap checks first: tags and attribute names are set look-ups, values a scan.
    const cost = { tag: 0, attr: 1, class: 2, equals: 3, contains: 4 } as const;
    reqs.sort((a, b) => cost[a.kind] - cost[b.kind]);
    return reqs;
  });
}

function emptyIndex(): Index {
  return {
    headers: new Map(), cookies: new Map(), cookiePatterns: [], meta: new Map(), js: new Map(),
    scriptSrc: [], scripts: [], html: [], text: [], url: [], css: [], dom: [],
  };
}

function addTo(map: Map<string, Rule[]>, key: string, rules: Rule[]): void {
  if (!rules.length) return;
  const list = map.get(key);
  if (list) list.push(...rules);
  else map.set(key, rules);
}

/** A JS global path as the drivers read it: `a[b].c` as `a.b.c`, trimmed. */
function normaliseJsPath(path: string): string {
  return path.replace(/\[([^\]]+)\]/g, '.$1').trim();
}

const REGEX_SYNTAX = /[\\[\](){}|*+?^$]/;

/** Compiles the fingerprint set into the two indexes (once; see {@link compiled}). */
function compileFingerprints(): Compiled {
  const { technologies, categories } = loadFingerprints();
  const techs = new Map<string, Tech>();
  const main = emptyIndex();
  const conditional = emptyIndex();
  const jsPaths = new Set<string>();

  for (const [name, raw] of Object.entries(technologies) as Array<[string, RawTechnology]>) {
    const categoryIds = toArray(raw.cats).map(Number);
    const known = categoryIds.map((id) => categories[String(id)]).filter((c) => c !== undefined);
    const tech: Tech = {
      name,
      categories: known.map((c) => c.name),
      categoryIds,
      priority: known.length ? Math.min(...known.map((c) => c.priority)) : 10,
      website: raw.website || null,
      implies: toArray(raw.implies).map(parseImplied),
      excludes: toArray(raw.excludes).map((e) => parseImplied(e).name),
      requires: toArray(raw.requires).map((e) => parseImplied(e).name),
      requiresCategory: toArray(raw.requiresCategory).map(Number),
    };
    techs.set(name, tech);
    const index = tech.requires.length || tech.requiresCategory.length ? conditional : main;
    const rules = (raw: RawPatterns | undefined): Rule[] => patternsOf(raw).map((pattern) => ({ tech, pattern }));

    for (const [header, p] of Object.entries(raw.headers ?? {})) addTo(index.headers, header.toLowerCase(), rules(p));
    for (const [meta, p] of Object.entries(raw.meta ?? {})) addTo(index.meta, meta.toLowerCase(), rules(p));
    for (const [cookie, p] of Object.entries(raw.cookies ?? {})) {
      const key = cookie.trim().toLowerCase();
      if (!REGEX_SYNTAX.test(key)) {
        addTo(index.cookies, key, rules(p));
        continue;
      }
      let nameRe: RegExp | null;
      try {
        nameRe = new RegExp(`^(?:${key.replace(/^\(\?i\)/, '')})$`, 'i');
      } catch {
        nameRe = null;
      }
      for (const rule of rules(p)) index.cookiePatterns.push({ key, name: nameRe, rule });
    }
    for (const [path, p] of Object.entries(raw.js ?? {})) {
      const key = normaliseJsPath(path);
      if (!key) continue;
      jsPaths.add(key);
      addTo(index.js, key, rules(p));
    }
    index.scriptSrc.push(...rules(raw.scriptSrc));
    index.scripts.push(...rules(raw.scripts));
    index.html.push(...rules(raw.html));
    index.text.push(...rules(raw.text));
    index.url.push(...rules(raw.url));
    index.css.push(...rules(raw.css));

    if (raw.dom !== undefined) {
      const entries: Array<[string, RawDomRule[]]> = typeof raw.dom === 'string' || Array.isArray(raw.dom)
        ? toArray(raw.dom).map((s) => [s, [{ exists: '' }]])
        : Object.entries(raw.dom).map(([s, r]) => [s, toArray(r)]);
      for (const [selector, domRules] of entries) {
        const alternatives = selectorRequirements(selector);
        if (!alternatives) continue;
        const entry: DomSelector = { tech, selector, alternatives, exists: [], text: [], attributes: [] };
        for (const r of domRules) {
          // An empty rule (`{"script.aioseo-schema": {}}`) can only mean that the element exists.
          const empty = r.exists === undefined && r.text === undefined && r.attributes === undefined && r.properties === undefined;
          if (r.exists !== undefined || empty) entry.exists.push(...patternsOf(r.exists ?? ''));
          if (r.text !== undefined) entry.text.push(...patternsOf(r.text));
          for (const [attr, p] of Object.entries(r.attributes ?? {})) {
            for (const pattern of patternsOf(p)) entry.attributes.push({ name: attr.toLowerCase(), pattern });
          }
          // `properties` are read from live DOM objects (node[property]); a parsed document has none.
        }
        if (entry.exists.length || entry.text.length || entry.attributes.length) index.dom.push(entry);
      }
    }
  }
  const large = [main, conditional].flatMap((ix) => [...ix.html, ...ix.scripts, ...ix.text, ...ix.css]);
  const scanner = new LiteralScanner(large.flatMap((rule) => rule.pattern.literals ?? []));
  const domValues = [main, conditional].flatMap((ix) => ix.dom.flatMap((d) => d.alternatives.flat()))
    .flatMap((r) => (r.kind === 'contains' ? [r.value] : []));
  return { techs, main, conditional, jsPaths: [...jsPaths].sort(), scanner, domScanner: new LiteralScanner(domValues) };
}

/** The compiled fingerprints (compiled on the first call, then shared). */
export function fingerprints(): Compiled {
  compiled ??= compileFingerprints();
  return compiled;
}

/**
 * The JavaScript global paths the fingerprints' `js` patterns test (`jQuery.fn.jquery`, `wp.ajax`), sorted, each
 * once: a browser evaluates them on the rendered page (each path walked from `window`; a string or number kept
 * as it is, any other defined value as `true`) and returns them in `page.rendered.globals`.
 */
export function jsGlobalPaths(): string[] {
  return [...fingerprints().jsPaths];
}
