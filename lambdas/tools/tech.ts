/**
 * Technology detection (SPEC.md area B, `POST /api/v1/tools/tech-detector/`): which CMS, frameworks, libraries,
 * servers, CDNs, analytics and other technologies a page shows, from Wappalyzer-format fingerprints
 * (fingerprints.ts; format in enthec/webappanalyzer's README, "Specification").
 *
 * The steps, as Wappalyzer's core (`wappalyzer.js`: analyze, resolve) and its browser drivers do them:
 * 1. Read the page once: response headers, cookies (from `Set-Cookie`), `<meta name|property>`, external
 *    script URLs, inline script text, inline `<style>` text, the body's text, the HTML, the URL, and the DOM
 *    (for `dom` selectors); each capped (see {@link LIMITS}).
 * 2. Test every fingerprint pattern on its input: each match is one detection with the pattern's confidence
 *    (`\;confidence:N`, 100 by default) and a version from its `\;version:` template (`\1`, `\1?a:b`).
 *    JavaScript globals (`js`) are tested only on a rendered page, on `page.rendered.globals`.
 * 3. Resolve: sum each technology's confidences (capped at 100), keep its longest version (at most 15
 *    characters, not a timestamp), drop what a detected technology `excludes`, then add what detected ones
 *    `imply` (confidence: the lower of the implier's and the implication's own; version: the implication's).
 * 4. Technologies that `requires` another technology (or `requiresCategory` a category) are tested only after
 *    the first pass found it, then everything is resolved again (Wappalyzer's drivers re-run the analysis for
 *    `Wappalyzer.requires` and `Wappalyzer.categoryRequires` the same way).
 *
 * Regular expressions follow Wappalyzer: case-insensitive (`i`), with unbounded `+` and `*` rewritten as
 * `{1,250}` and `{0,250}` (Wappalyzer's "optimise quantifiers for long strings", done here with a tokenizer so
 * escapes and character classes stay intact). Each pattern is compiled once, on first use, and cached.
 */
import { compile as compileSelector } from 'css-select';
import { parse as parseSelector } from 'css-what';
import { isTag, isText, type AnyNode, type Document, type Element } from 'domhandler';
import { parseHtml } from '../engine/html/parse.ts';
import { loadFingerprints, type RawDomRule, type RawPattern, type RawPatterns, type RawTechnology } from './fingerprints.ts';
import { boundedText, type ToolPage } from './page.ts';

/** One technology found on the page. */
export interface DetectedTechnology {
  /** The technology's name as the fingerprints spell it (`WordPress`, `Nginx`, `jQuery`). */
  name: string;
  /** Its version when a pattern gave one (`5.2.4`), else null. */
  version: string | null;
  /** Its category names from categories.json (`CMS`, `Blogs`), in the fingerprint's order. */
  categories: string[];
  /** How sure the detection is, 0-100: the confidences of its matching patterns summed and capped at 100. */
  confidence: number;
  /** The technology's web site, from the fingerprint; null when it names none. */
  website: string | null;
}

/** The tech detector's result: the tool's response body. */
export interface TechReport {
  /** The page analysed (its final URL after redirects). */
  url: string;
  /** Whether the page was rendered in a browser, so JavaScript globals (`js` fingerprints) were tested too. */
  rendered: boolean;
  /**
   * True when the time budget ({@link LIMITS}.budgetMs) ran out before every pattern was tested: pathological
   * pages only; what was found is still reported.
   */
  partial: boolean;
  /**
   * The technologies found, most telling categories first (category priority 1, such as CMS, before 9, such as
   * widgets), then by confidence (highest first), then by name.
   */
  technologies: DetectedTechnology[];
}

/** JSON Schema (draft 7, ajv strict mode) of a {@link TechReport}: the tool's response body. */
export const techReportSchema = {
  $id: 'https://scrape-ai.dev/schemas/tools/tech-detector.json',
  title: 'TechReport',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'rendered', 'partial', 'technologies'],
  properties: {
    url: { type: 'string' },
    rendered: { type: 'boolean' },
    partial: { type: 'boolean' },
    technologies: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'version', 'categories', 'confidence', 'website'],
        properties: {
          name: { type: 'string', minLength: 1 },
          version: { type: ['string', 'null'], minLength: 1, maxLength: 15 },
          categories: { type: 'array', items: { type: 'string' } },
          confidence: { type: 'integer', minimum: 0, maximum: 100 },
          website: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

/**
 * Input caps, so that a huge or hostile page costs bounded time. Wappalyzer's drivers cap the HTML the same
 * way (the npm driver and the extension keep the first and last rows of 2,000-character lines); these are
 * smaller because the detector answers an API call.
 */
export const LIMITS = {
  /** HTML characters matched by `html` patterns: the first 512 KiB and the last 64 KiB. */
  htmlHeadChars: 512 * 1024,
  htmlTailChars: 64 * 1024,
  /** HTML characters parsed for the DOM (meta, scripts, styles, text, `dom` selectors): the first 2 MiB. */
  domChars: 2 * 1024 * 1024,
  /** `<meta>` elements read (in document order). */
  metaTags: 500,
  /** External script URLs read (each distinct URL once, in document order). */
  scriptSrcs: 500,
  /** Characters of inline script text matched by `scripts` patterns (scripts joined by newlines). */
  inlineScriptChars: 512 * 1024,
  /** Characters of inline `<style>` text matched by `css` patterns. */
  cssChars: 256 * 1024,
  /** Characters of the body's text matched by `text` patterns. */
  textChars: 256 * 1024,
  /** Elements a `dom` selector's rule is tested on (the first ones found). */
  domMatches: 50,
  /** Characters of one value (header, cookie, meta content, script URL, JS global) a pattern is tested on. */
  valueChars: 4096,
  /** Cookies read from `Set-Cookie`. */
  cookies: 100,
  /**
   * Milliseconds of wall time a detection may spend (parsing included) before it stops testing patterns: a
   * hostile page can make each of the few hundred `html` patterns scan 250 characters from every `<`.
   */
  budgetMs: 1500,
} as const;

/** A compiled pattern: its regex and tags. */
interface Pattern {
  regex: RegExp;
  /**
   * Lower-case strings one of which any match must contain (see {@link requiredLiterals}); null when the
   * pattern has none worth checking. A value whose lower-case form contains none of them is not tested.
   */
  literals: string[] | null;
  /** 0-100, from `\;confidence:N` (100 when absent). */
  confidence: number;
  /** The `\;version:` template ('' when absent). */
  version: string;
}

/** One implied technology, with its tags. */
interface Implied {
  name: string;
  confidence: number;
  version: string;
}

/** What the resolver needs of a technology. */
interface Tech {
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
interface Rule {
  tech: Tech;
  pattern: Pattern;
}

/** A `dom` selector and what to test on the elements it finds. */
interface DomSelector {
  tech: Tech;
  selector: string;
  /** Pre-filter (see {@link couldMatch}): each comma-separated alternative's requirements. */
  alternatives: Requirement[][];
  exists: Pattern[];
  text: Pattern[];
  attributes: Array<{ name: string; pattern: Pattern }>;
}

/** A requirement of a selector's rightmost compound that the document index can check cheaply. */
type Requirement =
  | { kind: 'tag'; name: string }
  | { kind: 'attr'; name: string }
  | { kind: 'class'; name: string }
  | { kind: 'equals'; name: string; value: string }
  | { kind: 'contains'; name: string; value: string };

/** The patterns of one set of technologies, by the input they test. */
interface Index {
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
interface Compiled {
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
const patternCache = new Map<string, Pattern | null>();

/**
 * Rewrites unbounded quantifiers as Wappalyzer does (`+` to `{1,250}`, `*` to `{0,250}`), leaving escaped
 * characters and character classes alone: a regex then backtracks over at most 250 characters per quantifier.
 */
export function boundQuantifiers(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      out += c + (source[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === '+') {
      out += '{1,250}';
    } else if (c === '*') {
      out += '{0,250}';
    } else {
      out += c;
    }
  }
  return out;
}

/** Escapes that stand for one literal character (others, such as `\d` or `\b`, are classes or assertions). */
const LITERAL_ESCAPE = /[^A-Za-z0-9]/;

/**
 * The literal text every match of a regex must contain, per top-level alternative: the longest run of plain
 * characters outside groups and classes that no quantifier makes optional, lower-cased. null when some
 * alternative has no such run of at least 3 ASCII characters (then the regex is always run).
 *
 * Used as a pre-filter: with the `i` flag (without `u`), an ASCII pattern character matches only that
 * character in either case (ECMA-262 Canonicalize never folds non-ASCII into ASCII), so a value whose
 * lower-case form lacks the literal cannot match. It spares running hundreds of case-insensitive regexes
 * (which get no literal search of their own) over half a megabyte of HTML.
 */
export function requiredLiterals(source: string): string[] | null {
  const alternatives: string[] = [];
  let best = '';
  let run = '';
  let depth = 0;
  const flush = (): void => {
    if (run.length > best.length) best = run;
    run = '';
  };
  const endAlternative = (): boolean => {
    flush();
    if (best.length < 3 || !/^[\x20-\x7e]+$/.test(best)) return false;
    alternatives.push(best.toLowerCase());
    best = '';
    return true;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (depth > 0) {
      // Inside a group: only find where it ends.
      if (c === '\\') i++;
      else if (c === '[') {
        for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
      } else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) flush();
      continue;
    }
    // Quantifier on the previous atom.
    const quantifier = /^(?:[?*+]|\{(\d+)(?:,\d*)?\})\??/.exec(source.slice(i, i + 16));
    if (quantifier) {
      const min = quantifier[0][0] === '+' ? 1 : quantifier[0][0] === '{' ? Number(quantifier[1]) : 0;
      if (min === 0) run = run.slice(0, -1);
      flush();
      i += quantifier[0].length - 1;
      continue;
    }
    if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined) return null;
      if (LITERAL_ESCAPE.test(next)) run += next;
      else flush();
      i++;
    } else if (c === '[') {
      flush();
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
      run = '';
    } else if (c === '(') {
      flush();
      depth = 1;
    } else if (c === '|') {
      if (!endAlternative()) return null;
    } else if (c === '.' || c === '^' || c === '$' || c === ')') {
      flush();
    } else {
      run += c;
    }
  }
  if (depth > 0 || !endAlternative()) return null;
  return alternatives;
}

/**
 * Finds which of many literals occur in a text in one pass (Aho-Corasick, as a DFA over printable ASCII): the
 * pre-filter of the patterns run on the large inputs (HTML, inline scripts, text, styles), where a search per
 * pattern would read half a megabyte hundreds of times.
 */
export class LiteralScanner {
  /** Printable ASCII, 0x20-0x7e: the only characters a literal has (see {@link requiredLiterals}). */
  private static readonly WIDTH = 95;
  private readonly next: Int32Array;
  private readonly fail: Int32Array;
  /** Nodes in breadth-first order (failure links point earlier). */
  private readonly order: Int32Array;
  private readonly ends = new Map<string, number>();

  /** @param literals lower-case printable ASCII strings (others are ignored). */
  constructor(literals: Iterable<string>) {
    const W = LiteralScanner.WIDTH;
    const trie: number[][] = [new Array<number>(W).fill(-1)];
    for (const literal of literals) {
      if (this.ends.has(literal) || !/^[\x20-\x7e]+$/.test(literal)) continue;
      let node = 0;
      for (let i = 0; i < literal.length; i++) {
        const c = literal.charCodeAt(i) - 0x20;
        if (trie[node]![c] === -1) {
          trie[node]![c] = trie.length;
          trie.push(new Array<number>(W).fill(-1));
        }
        node = trie[node]![c]!;
      }
      this.ends.set(literal, node);
    }
    const n = trie.length;
    this.next = new Int32Array(n * W);
    this.fail = new Int32Array(n);
    this.order = new Int32Array(n);
    let head = 0;
    let tail = 0;
    this.order[tail++] = 0;
    while (head < tail) {
      const node = this.order[head++]!;
      for (let c = 0; c < W; c++) {
        const child = trie[node]![c]!;
        if (child === -1) {
          this.next[node * W + c] = node === 0 ? 0 : this.next[this.fail[node]! * W + c]!;
        } else {
          this.fail[child] = node === 0 ? 0 : this.next[this.fail[node]! * W + c]!;
          this.next[node * W + c] = child;
          this.order[tail++] = child;
        }
      }
    }
  }

  /** Whether `literal` was given to the constructor (and so can be answered by {@link scan}). */
  knows(literal: string): boolean {
    return this.ends.has(literal);
  }

  /**
   * Scans `lower` (a lower-cased text) once.
   * @returns whether a literal given to the constructor occurs in it (false for literals it was not given).
   */
  scan(lower: string): (literal: string) => boolean {
    const W = LiteralScanner.WIDTH;
    const seen = new Uint8Array(this.fail.length);
    let state = 0;
    for (let i = 0; i < lower.length; i++) {
      const c = lower.charCodeAt(i) - 0x20;
      state = c >= 0 && c < W ? this.next[state * W + c]! : 0;
      seen[state] = 1;
    }
    // A node reached means every suffix of its string occurred too.
    for (let k = this.order.length - 1; k > 0; k--) {
      const node = this.order[k]!;
      if (seen[node]) seen[this.fail[node]!] = 1;
    }
    return (literal) => {
      const end = this.ends.get(literal);
      return end !== undefined && seen[end] === 1;
    };
  }
}

/**
 * Compiles one pattern of the format (`regex\;version:\1\;confidence:50`); null when its regex does not
 * compile in JavaScript (a few patterns use other engines' syntax, such as `(?i)`), which then never matches.
 */
function compilePattern(raw: RawPattern): Pattern | null {
  const key = String(raw);
  if (patternCache.has(key)) return patternCache.get(key)!;
  const [source = '', ...tags] = key.split('\\;');
  let confidence = 100;
  let version = '';
  for (const tag of tags) {
    const colon = tag.indexOf(':');
    if (colon < 0) continue;
    const name = tag.slice(0, colon);
    const value = tag.slice(colon + 1);
    if (name === 'confidence') {
      const n = Number.parseInt(value, 10);
      if (Number.isFinite(n)) confidence = Math.max(0, Math.min(100, n));
    } else if (name === 'version') {
      version = value;
    }
  }
  let pattern: Pattern | null;
  try {
    pattern = { regex: new RegExp(boundQuantifiers(source), 'i'), literals: requiredLiterals(source), confidence, version };
  } catch {
    pattern = null;
  }
  patternCache.set(key, pattern);
  return pattern;
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function patternsOf(raw: RawPatterns | undefined): Pattern[] {
  return toArray(raw).map(compilePattern).filter((p): p is Pattern => p !== null);
}

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
function selectorRequirements(selector: string): Requirement[][] | null {
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

function fingerprints(): Compiled {
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

/** Everything the patterns are tested on, read from the page once. */
interface PageInputs {
  url: string;
  headers: Array<[string, string]>;
  cookies: Array<[string, string]>;
  meta: Map<string, string[]>;
  scriptSrc: string[];
  scripts: string;
  css: string;
  text: string;
  html: string;
  docIndex: DocIndex | null;
  globals: Record<string, string | number | boolean> | null;
  /** Which scanner literals each large input holds (computed on first use). */
  literals: Partial<Record<'html' | 'scripts' | 'css' | 'text', Has>>;
}

/** What a document has, for the `dom` pre-filter and walk (all lower case). */
interface DocIndex {
  tags: Set<string>;
  /** Class names. */
  classes: Set<string>;
  /** Attribute name to the distinct values it has on any element. */
  values: Map<string, Set<string>>;
  /** Attribute name to whether a string occurs in one of its values (built on first use). */
  contains: Map<string, Has>;
  /** The elements, in document order. */
  elements: Element[];
}

/** Content types whose body is read as HTML; '' too when the body starts with markup. */
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** Block elements whose end separates text, as `innerText` does with line breaks. */
const BLOCKS = new Set(['address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption',
  'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre',
  'section', 'table', 'td', 'th', 'tr', 'ul', 'option', 'title']);
/** Elements whose content is not rendered text. */
const NOT_TEXT = new Set(['script', 'style', 'noscript', 'template', 'head']);

function clip(value: string, max: number): string {
  return value.length > max ? value.slice(0, max) : value;
}

/** The cookies of `Set-Cookie` headers: name (lower case) and value. */
function parseCookies(setCookies: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const header of setCookies.slice(0, LIMITS.cookies)) {
    const pair = header.split(';', 1)[0] ?? '';
    const eq = pair.indexOf('=');
    const name = (eq < 0 ? pair : pair.slice(0, eq)).trim().toLowerCase();
    if (!name) continue;
    out.push([name, clip(eq < 0 ? '' : pair.slice(eq + 1).trim(), LIMITS.valueChars)]);
  }
  return out;
}

/** Reads every input from the page (step 1 of the module comment). */
function readPage(page: ToolPage): PageInputs {
  const type = (page.contentType || '').toLowerCase();
  const raw = typeof page.html === 'string' ? page.html : '';
  const isHtml = HTML_TYPES.has(type) || (type === '' && /^\s*</.test(raw.slice(0, 1024)));
  const headers = Object.entries(page.headers ?? {}).map(([k, v]): [string, string] => [k.toLowerCase(), clip(String(v), LIMITS.valueChars)]);
  if (!headers.some(([k]) => k === 'set-cookie') && page.setCookies?.length) headers.push(['set-cookie', clip(page.setCookies.join(', '), LIMITS.valueChars)]);
  const inputs: PageInputs = {
    url: page.url ?? '',
    headers,
    cookies: parseCookies(page.setCookies ?? []),
    meta: new Map(),
    scriptSrc: [],
    scripts: '',
    css: '',
    text: '',
    html: '',
    docIndex: null,
    globals: page.rendered ? page.rendered.globals ?? {} : null,
    literals: {},
  };
  if (!isHtml || !raw) return inputs;

  inputs.html = raw.length > LIMITS.htmlHeadChars + LIMITS.htmlTailChars
    ? `${raw.slice(0, LIMITS.htmlHeadChars)}\n${raw.slice(raw.length - LIMITS.htmlTailChars)}`
    : raw;
  let doc: Document;
  try {
    doc = parseHtml(clip(raw, LIMITS.domChars));
  } catch {
    return inputs;
  }

  const base = baseUrl(doc, page.url);
  const tags = new Set<string>();
  const classes = new Set<string>();
  const values = new Map<string, Set<string>>();
  const elements: Element[] = [];
  const srcs = new Set<string>();
  const scripts: string[] = [];
  let scriptChars = 0;
  const styles: string[] = [];
  let styleChars = 0;
  let metaCount = 0;
  const text: string[] = [];
  let textChars = 0;

  // One walk, iterative (a deeply nested page must not overflow the stack).
  const stack: Array<{ node: AnyNode; inText: boolean } | { end: string }> = [{ node: doc, inText: false }];
  while (stack.length) {
    const item = stack.pop()!;
    if ('end' in item) {
      if (textChars < LIMITS.textChars) text.push('\n');
      continue;
    }
    const { node, inText } = item;
    if (isText(node)) {
      if (inText && textChars < LIMITS.textChars) {
        text.push(node.data);
        textChars += node.data.length;
      }
      continue;
    }
    if (isTag(node)) {
      const name = node.name.toLowerCase();
      tags.add(name);
      elements.push(node);
      for (const key in node.attribs) {
        const value = node.attribs[key]!.toLowerCase();
        const attr = key.toLowerCase(); // SVG's are camelCase (viewBox) after tree construction
        const set = values.get(attr);
        if (set) set.add(value);
        else values.set(attr, new Set([value]));
        if (attr === 'class') for (const c of value.split(/[ \t\n\f\r]+/)) if (c) classes.add(c);
      }
      if (name === 'meta' && metaCount < LIMITS.metaTags) {
        const key = (node.attribs.name || node.attribs.property || '').toLowerCase();
        if (key) {
          metaCount++;
          const content = clip(node.attribs.content ?? '', LIMITS.valueChars);
          const list = inputs.meta.get(key);
          if (list) list.push(content);
          else inputs.meta.set(key, [content]);
        }
      } else if (name === 'script') {
        const src = node.attribs.src;
        if (src !== undefined) {
          const abs = absolute(src.trim(), base);
          if (abs && !abs.startsWith('data:') && srcs.size < LIMITS.scriptSrcs) srcs.add(clip(abs, LIMITS.valueChars));
        } else if (scriptChars < LIMITS.inlineScriptChars) {
          // Bounded: a script in SVG may hold elements, nested 500 deep in others.
          const body = boundedText(node, LIMITS.inlineScriptChars - scriptChars, LIMITS.inlineScriptChars);
          scripts.push(body);
          scriptChars += body.length + 1;
        }
      } else if (name === 'style' && styleChars < LIMITS.cssChars) {
        const body = boundedText(node, LIMITS.cssChars - styleChars, LIMITS.cssChars);
        styles.push(body);
        styleChars += body.length + 1;
      }
      const childInText = (inText || name === 'body') && !NOT_TEXT.has(name);
      if (BLOCKS.has(name) && childInText) stack.push({ end: name });
      for (let i = node.children.length - 1; i >= 0; i--) stack.push({ node: node.children[i]!, inText: childInText });
      continue;
    }
    if ('children' in node) {
      const children = (node as Document).children;
      for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, inText });
    }
  }
  inputs.scriptSrc = [...srcs];
  inputs.scripts = clip(scripts.join('\n'), LIMITS.inlineScriptChars);
  inputs.css = clip(styles.join('\n'), LIMITS.cssChars);
  inputs.text = clip(text.join('').replace(/[ \t\r\f\v\u00a0]+/g, ' ').replace(/ ?\n[\s]*/g, '\n').trim(), LIMITS.textChars);
  inputs.docIndex = { tags, classes, values, contains: new Map(), elements };
  return inputs;
}

/** The document's base URL: `<base href>` resolved against the page URL. */
function baseUrl(doc: Document, pageUrl: string): string {
  // Breadth first over the first 2,000 nodes; a queue read by index, filled no further than that (an element may
  // have 500,000 children: neither `shift()` nor `push(...children)` on them).
  const MAX = 2000;
  const queue: AnyNode[] = doc.children.slice(0, MAX);
  for (let next = 0; next < queue.length && next < MAX; next++) {
    const node = queue[next]!;
    if (!isTag(node)) continue;
    if (node.name === 'base' && node.attribs.href !== undefined) return absolute(node.attribs.href.trim(), pageUrl) ?? pageUrl;
    if (node.name === 'body') break;
    for (let i = 0; i < node.children.length && queue.length < MAX; i++) queue.push(node.children[i]!);
  }
  return pageUrl;
}

function absolute(href: string, base: string): string | null {
  try {
    return new URL(href, base || undefined).href;
  } catch {
    return href || null;
  }
}

/** One pattern match: a technology, the pattern's confidence and the version it gave. */
interface Detection {
  tech: Tech;
  confidence: number;
  version: string;
}

/**
 * The version a match gives, by the pattern's template (webappanalyzer README, "Version syntax"; Wappalyzer's
 * `resolveVersion`): `\N` is group N, `\N?a:b` is `a` when group N matched something and `b` otherwise; groups
 * longer than 10 characters are not used.
 */
export function resolveVersion(template: string, match: RegExpExecArray): string {
  if (!template) return '';
  let resolved = template;
  for (let index = 0; index < match.length; index++) {
    const group = match[index];
    if (group !== undefined && group.length > 10) continue;
    const ternary = new RegExp(`\\\\${index}\\?([^:]*):(.*)$`).exec(resolved);
    if (ternary) resolved = resolved.replace(ternary[0], group ? ternary[1]! : ternary[2]!);
    resolved = resolved.trim().replace(new RegExp(`\\\\${index}(?!\\d)`, 'g'), group ?? '');
  }
  return resolved.replace(/\\\d+/g, '').trim();
}

/** Whether a literal occurs in the value a pattern is about to be tested on. */
type Has = (literal: string) => boolean;

/**
 * The time budget of the detection under way (detection is synchronous, so one at a time): past `deadline`
 * (a `performance.now()` time), patterns are no longer tested and the report is marked partial.
 */
const budget = { deadline: Number.POSITIVE_INFINITY, exhausted: false };

function test(rule: Rule, value: string, out: Detection[], has?: Has): void {
  const { literals } = rule.pattern;
  if (literals && has && !literals.some(has)) return;
  if (budget.exhausted) return;
  if (performance.now() > budget.deadline) {
    budget.exhausted = true;
    return;
  }
  const m = rule.pattern.regex.exec(value);
  if (m) out.push({ tech: rule.tech, confidence: rule.pattern.confidence, version: resolveVersion(rule.pattern.version, m) });
}

/**
 * Whether a `dom` selector can match at all in the document: some alternative whose rightmost compound's tag is
 * there and whose tested attributes are there with the tested value somewhere among their values. Cheap, and
 * never wrong in the negative: a selector it rejects matches nothing.
 */
function couldMatch(entry: DomSelector, index: DocIndex): boolean {
  return entry.alternatives.some((reqs) =>
    reqs.every((r) => {
      switch (r.kind) {
        case 'tag': return index.tags.has(r.name);
        case 'attr': return index.values.has(r.name);
        case 'class': return index.classes.has(r.name);
        case 'equals': return index.values.get(r.name)!.has(r.value);
        case 'contains': {
          let has = index.contains.get(r.name);
          if (has === undefined) {
            const joined = [...index.values.get(r.name)!].join('\u0000');
            const { domScanner } = fingerprints();
            const scanned = domScanner.scan(joined);
            has = (value) => (domScanner.knows(value) ? scanned(value) : joined.includes(value));
            index.contains.set(r.name, has);
          }
          return has(r.value);
        }
      }
    }),
  );
}

/**
 * The `dom` pre-filter on one page, for tests: whether {@link couldMatch} lets `selector` through on `html`
 * (true for a selector it cannot parse, which css-select then refuses too).
 */
export function domPrefilter(html: string): (selector: string) => boolean {
  const url = 'https://example.com/';
  const inputs = readPage({ requestedUrl: url, url, status: 200, headers: {}, setCookies: [], contentType: 'text/html', html, redirectChain: [url] });
  return (selector) => {
    const alternatives = selectorRequirements(selector);
    if (!alternatives || !inputs.docIndex) return true;
    return couldMatch({ alternatives } as DomSelector, inputs.docIndex);
  };
}

type Query = ReturnType<typeof compileSelector<AnyNode, Element>>;
const selectorCache = new Map<string, Query | null>();

function compiledSelector(selector: string): Query | null {
  let query = selectorCache.get(selector);
  if (query === undefined) {
    try {
      query = compileSelector<AnyNode, Element>(selector, { xmlMode: false });
    } catch {
      query = null;
    }
    selectorCache.set(selector, query);
  }
  return query;
}

/**
 * The `dom` rules: the selectors the pre-filter keeps are tested in one walk over the elements (css-select's
 * compiled queries), each on at most {@link LIMITS.domMatches} elements.
 */
function matchDom(entries: DomSelector[], inputs: PageInputs, gate: (t: Tech) => boolean, out: Detection[]): void {
  const index = inputs.docIndex;
  if (!index) return;
  const live: Array<{ entry: DomSelector; query: Query; found: number }> = [];
  for (const entry of entries) {
    if (!gate(entry.tech) || !couldMatch(entry, index)) continue;
    const query = compiledSelector(entry.selector);
    if (query) live.push({ entry, query, found: 0 });
  }
  if (!live.length) return;
  // Selectors whose every alternative names its element's tag are tried on elements of those tags only.
  const byTag = new Map<string, typeof live>();
  const anyTag: typeof live = [];
  for (const item of live) {
    const tags = item.entry.alternatives.map((reqs) => reqs.find((r) => r.kind === 'tag')?.name);
    if (tags.some((t) => t === undefined)) {
      anyTag.push(item);
      continue;
    }
    for (const tag of new Set(tags as string[])) {
      const list = byTag.get(tag);
      if (list) list.push(item);
      else byTag.set(tag, [item]);
    }
  }
  for (const [n, node] of index.elements.entries()) {
    if ((n & 1023) === 0 && performance.now() > budget.deadline) {
      budget.exhausted = true;
      return;
    }
    const tagged = byTag.get(node.name.toLowerCase());
    const candidates = tagged ? (anyTag.length ? [...tagged, ...anyTag] : tagged) : anyTag;
    for (const item of candidates) {
      if (item.found >= LIMITS.domMatches) continue;
      let hit: boolean;
      try {
        hit = item.query(node);
      } catch {
        hit = false;
      }
      if (!hit) continue;
      item.found++;
      const { entry } = item;
      for (const pattern of entry.exists) test({ tech: entry.tech, pattern }, '', out);
      if (entry.text.length) {
        // Bounded: the matched element may hold the whole page (domMatches of them per rule).
        const value = clip(boundedText(node, LIMITS.valueChars * 2, LIMITS.valueChars * 8, false).trim(), LIMITS.valueChars);
        if (value) for (const pattern of entry.text) test({ tech: entry.tech, pattern }, value, out);
      }
      for (const { name, pattern } of entry.attributes) {
        const value = node.attribs[name];
        if (value !== undefined) test({ tech: entry.tech, pattern }, clip(value, LIMITS.valueChars), out);
      }
    }
  }
}

/** Step 2 of the module comment over one index, for the technologies `gate` lets through. */
function analyze(index: Index, inputs: PageInputs, gate: (t: Tech) => boolean): Detection[] {
  const out: Detection[] = [];
  const each = (rules: Rule[] | undefined, value: string, has?: Has): void => {
    if (!rules) return;
    if (!has) {
      const lower = value.toLowerCase();
      has = (l) => lower.includes(l);
    }
    for (const rule of rules) if (gate(rule.tech)) test(rule, value, out, has);
  };
  // Many values, many patterns (script URLs): a pattern whose literal is in none of them is skipped at once.
  const eachOfMany = (rules: Rule[], values: string[]): void => {
    if (!values.length) return;
    const lowers = values.map((v) => v.toLowerCase());
    const all = lowers.join('\u0000');
    for (const rule of rules) {
      const { literals } = rule.pattern;
      if (!gate(rule.tech) || (literals && !literals.some((l) => all.includes(l)))) continue;
      values.forEach((v, i) => test(rule, v, out, (l) => lowers[i]!.includes(l)));
    }
  };
  for (const [name, value] of inputs.headers) each(index.headers.get(name), value);
  for (const [name, value] of inputs.cookies) {
    each(index.cookies.get(name), value);
    for (const { key, name: re, rule } of index.cookiePatterns) {
      if (gate(rule.tech) && (key === name || re?.test(name))) test(rule, value, out);
    }
  }
  for (const [name, values] of inputs.meta) for (const value of values) each(index.meta.get(name), value);
  if (inputs.url) each(index.url, inputs.url);
  if (inputs.globals) {
    for (const [path, value] of Object.entries(inputs.globals)) {
      if (value === undefined || value === null) continue;
      each(index.js.get(path), clip(String(value), LIMITS.valueChars));
    }
  }
  // The larger inputs last: if the time budget runs out, it is on them.
  eachOfMany(index.scriptSrc, inputs.scriptSrc);
  for (const field of ['html', 'scripts', 'css', 'text'] as const) {
    const value = inputs[field];
    if (!value) continue;
    inputs.literals[field] ??= fingerprints().scanner.scan(value.toLowerCase());
    each(index[field], value, inputs.literals[field]);
  }
  matchDom(index.dom, inputs, gate, out);
  return out;
}

/** A technology as resolved: confidence summed, version chosen. */
interface Resolved {
  tech: Tech;
  confidence: number;
  version: string;
}

/** Wappalyzer's choice among versions: the longest, at most 15 characters, not a long number (a timestamp). */
function betterVersion(candidate: string, current: string): string {
  return candidate.length > current.length && candidate.length <= 15 && (Number.parseInt(candidate, 10) || 0) < 10000 ? candidate : current;
}

/** Step 3 of the module comment: sums, excludes, implies. */
function resolve(detections: Detection[], techs: Map<string, Tech>): Map<string, Resolved> {
  const resolved = new Map<string, Resolved>();
  for (const d of detections) {
    const r = resolved.get(d.tech.name);
    if (r) {
      r.confidence = Math.min(100, r.confidence + d.confidence);
      r.version = betterVersion(d.version, r.version);
    } else {
      resolved.set(d.tech.name, { tech: d.tech, confidence: Math.min(100, d.confidence), version: betterVersion(d.version, '') });
    }
  }
  for (const name of [...resolved.keys()]) {
    const r = resolved.get(name);
    if (!r) continue; // excluded by one before it
    for (const excluded of r.tech.excludes) if (excluded !== name) resolved.delete(excluded);
  }
  let changed = true;
  while (changed) {
    changed = false;
    for (const r of [...resolved.values()]) {
      for (const implied of r.tech.implies) {
        const tech = techs.get(implied.name);
        if (!tech || resolved.has(tech.name)) continue;
        resolved.set(tech.name, { tech, confidence: Math.min(r.confidence, implied.confidence), version: betterVersion(implied.version, '') });
        changed = true;
      }
    }
  }
  return resolved;
}

/**
 * Detects the technologies of `page` (steps in the module comment). Synchronous: everything it reads is in the
 * page (and `page.rendered.globals` when rendered). Never throws on bad input: an empty, binary or non-HTML page
 * gives what its headers, cookies and URL show (often nothing).
 */
export function detectTechnologies(page: ToolPage): TechReport {
  const { techs, main, conditional } = fingerprints();
  budget.deadline = performance.now() + LIMITS.budgetMs;
  budget.exhausted = false;
  const inputs = readPage(page);
  const first = analyze(main, inputs, () => true);
  const found = resolve(first, techs);

  const names = new Set(found.keys());
  const categories = new Set([...found.values()].flatMap((r) => r.tech.categoryIds));
  const gate = (t: Tech): boolean => t.requires.some((n) => names.has(n)) || t.requiresCategory.some((c) => categories.has(c));
  const second = names.size ? analyze(conditional, inputs, gate) : [];
  const all = second.length ? resolve([...first, ...second], techs) : found;

  const technologies = [...all.values()]
    .map((r) => ({ r, out: {
      name: r.tech.name,
      version: r.version || null,
      categories: [...r.tech.categories],
      confidence: r.confidence,
      website: r.tech.website,
    } }))
    .sort((a, b) => a.r.tech.priority - b.r.tech.priority || b.r.confidence - a.r.confidence || a.r.tech.name.localeCompare(b.r.tech.name))
    .map(({ out }) => out);
  return { url: page.url ?? '', rendered: page.rendered !== undefined, partial: budget.exhausted, technologies };
}
