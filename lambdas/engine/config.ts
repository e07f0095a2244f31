/**
 * Parsing and validation of the YAML config language (SPEC.md, "YAML config language";
 * reference: docs/config-language.md; schema: ./schema.json, the same file editors use).
 *
 * `parseConfig` is the single entry point: YAML text in, a normalized {@link ScrapeConfig} out (every
 * default filled in), or a {@link ConfigError} whose details give, for each problem, the path in the
 * config (`extract.fields[2].type`), the 1-based line and column in the YAML text and the reason.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LineCounter, isMap, isPair, isScalar, isSeq, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import { load, type CheerioAPI } from 'cheerio/slim';
import { CodedError } from '../errors.ts';
import schema from './schema.json' with { type: 'json' };
import { compilePattern, compileTransforms, type FieldValue } from './transforms.ts';

/** Field types of SPEC.md's field table. */
export type FieldType = 'text' | 'attribute' | 'html' | 'link' | 'image_url' | 'count' | 'exists' | 'regex' | 'eval';

/** A field definition with its defaults applied. */
export interface FieldSpec {
  name: string;
  /** CSS selector inside the item; undefined means the item element itself. */
  selector?: string;
  type: FieldType;
  attribute?: string;
  pattern?: string;
  script?: string;
  /** Transform strings, in order (see transforms.ts). */
  transform: string[];
  /** Present when the config gives `default` (which may be null). */
  default?: unknown;
  /** Extension: all matches as an array. @default false */
  multiple: boolean;
}

export type ActionSpec = {
  type: 'click' | 'scroll' | 'type' | 'select' | 'hover' | 'keyboard' | 'script';
  selector?: string;
  direction?: 'down' | 'up';
  amount?: 'full' | number;
  value?: string;
  key?: string;
  script?: string;
  wait_after?: number;
};

/** A config after validation, every default filled in. Plain data: it crosses thread and process boundaries. */
export interface ScrapeConfig {
  version: '2.0';
  name?: string;
  description?: string;
  target: {
    url: string;
    /** @default 'auto' */
    engine: 'lightweight' | 'heavy' | 'auto';
    browser: { wait_selector?: string; /** ms. @default 15000 */ timeout: number };
  };
  extract: {
    container?: string;
    /** @default 'list' */
    type: 'list' | 'single' | 'table';
    fields: FieldSpec[];
  };
  detail_fields?: { fields: FieldSpec[] };
  pagination?: {
    type: 'click' | 'url' | 'scroll_infinite';
    selector?: string;
    url_pattern?: string;
    /** Pages in all, the first included. @default 10 */
    max_pages: number;
    /** ms. @default 0 */
    wait_after: number;
    stop_condition: { max_items?: number };
  };
  categories?: {
    container: string;
    link_selector: string;
    link_attribute: string;
    name_selector: string;
    /** @default 50 */
    max_categories: number;
    /** ms. @default 2000 */
    wait_after: number;
  };
  actions: ActionSpec[];
  output: { format: 'json'; deduplicate: boolean; deduplicate_fields?: string[]; limit?: number };
}

/** One problem found in a config. `line`/`column` are 1-based; absent when the problem has no place in the text. */
export interface ConfigProblem {
  path: string;
  line?: number;
  column?: number;
  message: string;
}

/** Thrown by {@link parseConfig}: code `invalid_config`, details a list of {@link ConfigProblem}. */
export class ConfigError extends CodedError {
  declare readonly details: ConfigProblem[];
  constructor(problems: ConfigProblem[]) {
    const first = problems[0]!;
    const where = first.line ? ` (line ${first.line}, column ${first.column})` : '';
    const more = problems.length > 1 ? ` and ${problems.length - 1} more problem(s)` : '';
    super('invalid_config', `Invalid config: ${first.path ? first.path + ': ' : ''}${first.message}${where}${more}`, problems);
    this.name = 'ConfigError';
  }
}

/** Largest YAML text accepted, in bytes (docs/limits.md). */
export const MAX_CONFIG_BYTES = 256 * 1024;

/** The schema validator, compiled on first use (no work at import: modules that only list configs stay light). */
let compiled: ValidateFunction | null = null;
function validateSchema(data: unknown): data is object {
  compiled ??= new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false, allowUnionTypes: true }).compile(schema);
  return compiled(data);
}

type Segment = string | number;

/** `['extract', 'fields', 2, 'type']` -> `extract.fields[2].type`. */
export function formatPath(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out ? `.${s}` : s;
  return out;
}

/** Finds where a path lives in the YAML text: the key of the last segment when it exists, else the value. */
function locate(doc: Document, lc: LineCounter, segments: readonly Segment[]): { line?: number; column?: number } {
  let node: unknown = doc.contents;
  let offset: number | undefined = (node as YamlNode | null)?.range?.[0];
  for (const seg of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) break;
      offset = (pair.key as YamlNode).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number' && node.items[seg]) {
      node = node.items[seg];
      offset = (node as YamlNode).range?.[0] ?? offset;
    } else {
      break;
    }
  }
  if (offset === undefined) return {};
  const pos = lc.linePos(offset);
  return { line: pos.line, column: pos.col };
}

function pointerToSegments(pointer: string): Segment[] {
  if (!pointer) return [];
  return pointer.slice(1).split('/').map((s) => {
    const key = s.replace(/~1/g, '/').replace(/~0/g, '~');
    return /^\d+$/.test(key) ? Number(key) : key;
  });
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** Turns ajv's errors into one readable problem per place, dropping the noise of `if`/`anyOf` wrappers. */
function schemaProblems(errors: ErrorObject[], data: unknown, doc: Document, lc: LineCounter): ConfigProblem[] {
  const out = new Map<string, ConfigProblem>();
  for (const e of errors) {
    // `if` only says that a `then` failed; the `then` error itself is the useful one.
    if (e.keyword === 'if') continue;
    let segments = pointerToSegments(e.instancePath);
    let message: string;
    const value = segments.reduce<unknown>((v, s) => (v as Record<string, unknown> | undefined)?.[s as string], data);
    switch (e.keyword) {
      case 'additionalProperties': {
        const key = (e.params as { additionalProperty: string }).additionalProperty;
        segments = [...segments, key];
        const parent = formatPath(pointerToSegments(e.instancePath)) || 'the top level';
        message = `unknown key "${key}" in ${parent}`;
        break;
      }
      case 'required': {
        const key = (e.params as { missingProperty: string }).missingProperty;
        message = `missing required key "${key}"`;
        break;
      }
      case 'enum':
        message = `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues).map((v) => JSON.stringify(v)).join(', ')}; got ${describeType(value)}`;
        break;
      case 'pattern':
        message = (e.params as { pattern: string }).pattern === '^(?!__proto__$)'
          ? 'must not be "__proto__" (it cannot be a row key)'
          : `${e.message ?? 'is invalid'}; got ${describeType(value)}`;
        break;
      case 'const':
        message = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}; got ${describeType(value)}`;
        break;
      case 'type': {
        const type = (e.params as { type: string }).type;
        // "an integer", not "a integer": the message goes to people as is.
        const what = type === 'object' ? 'a mapping' : type === 'array' ? 'a list' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
        message = `must be ${what}; got ${describeType(value)}`;
        break;
      }
      default:
        message = `${e.message ?? 'is invalid'}${value !== undefined && typeof value !== 'object' ? `; got ${describeType(value)}` : ''}`;
    }
    const path = formatPath(segments);
    const key = `${path}|${message}`;
    if (!out.has(key)) out.set(key, { path, ...locate(doc, lc, segments), message });
  }
  return [...out.values()];
}

let probe: CheerioAPI | null = null;

function checkSelector(selector: string | undefined, segments: Segment[], problems: Array<[Segment[], string]>): void {
  if (selector === undefined || selector === '') return;
  try {
    probe ??= load('');
    probe(selector);
  } catch (err) {
    problems.push([segments, `invalid CSS selector "${selector}": ${(err as Error).message}`]);
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function normalizeField(raw: Record<string, unknown>): FieldSpec {
  const f: FieldSpec = {
    name: raw.name as string,
    type: (raw.type as FieldType | undefined) ?? 'text',
    transform: (raw.transform as string[] | undefined) ?? [],
    multiple: (raw.multiple as boolean | undefined) ?? false,
  };
  for (const k of ['selector', 'attribute', 'pattern', 'script'] as const) {
    if (typeof raw[k] === 'string') f[k] = raw[k] as string;
  }
  if ('default' in raw) f.default = raw.default as FieldValue;
  return f;
}

/** The checks a JSON Schema cannot express: selectors, transforms, regexes, URLs, names, cross references. */
function semanticProblems(c: ScrapeConfig): Array<[Segment[], string]> {
  const problems: Array<[Segment[], string]> = [];
  if (!isHttpUrl(c.target.url)) problems.push([['target', 'url'], `must be an absolute http or https URL; got "${c.target.url}"`]);

  const checkFields = (fields: FieldSpec[], base: Segment[]) => {
    const seen = new Set<string>();
    fields.forEach((f, i) => {
      const at = [...base, i];
      if (seen.has(f.name)) problems.push([[...at, 'name'], `duplicate field name "${f.name}"`]);
      seen.add(f.name);
      if (f.name.startsWith('_category')) problems.push([[...at, 'name'], `"${f.name}" is reserved for category metadata`]);
      checkSelector(f.selector, [...at, 'selector'], problems);
      if (f.pattern !== undefined) {
        try { compilePattern(f.pattern); } catch (err) { problems.push([[...at, 'pattern'], (err as Error).message]); }
      }
      try {
        compileTransforms(f.transform);
      } catch (err) {
        const index = (err as { index?: number }).index ?? 0;
        problems.push([[...at, 'transform', index], (err as Error).message]);
      }
    });
  };

  const ex = c.extract;
  if (ex.type !== 'single' && !ex.container) problems.push([['extract'], `missing required key "container" (needed for type ${ex.type})`]);
  if (ex.type !== 'table' && ex.fields.length === 0) problems.push([['extract'], 'missing required key "fields" (at least one field)']);
  checkSelector(ex.container, ['extract', 'container'], problems);
  checkFields(ex.fields, ['extract', 'fields']);

  if (c.detail_fields) {
    checkFields(c.detail_fields.fields, ['detail_fields', 'fields']);
    if (!ex.fields.some((f) => f.type === 'link' && !f.multiple)) {
      problems.push([['detail_fields'], 'needs a field of type link in extract.fields: its URL is the detail page']);
    }
    const names = new Set(ex.fields.map((f) => f.name));
    c.detail_fields.fields.forEach((f, i) => {
      if (names.has(f.name)) problems.push([['detail_fields', 'fields', i, 'name'], `"${f.name}" is already a field of extract.fields`]);
    });
  }

  const p = c.pagination;
  if (p) {
    checkSelector(p.selector, ['pagination', 'selector'], problems);
    if (p.type === 'url' && p.url_pattern !== undefined) {
      if (!p.url_pattern.includes('{page}')) problems.push([['pagination', 'url_pattern'], 'must contain the placeholder {page}']);
      else {
        let ok = false;
        try { ok = isHttpUrl(new URL(p.url_pattern.replaceAll('{page}', '1'), isHttpUrl(c.target.url) ? c.target.url : undefined).href); } catch { ok = false; }
        if (!ok) problems.push([['pagination', 'url_pattern'], `must be an http or https URL (absolute or relative to target.url); got "${p.url_pattern}"`]);
      }
    }
  }
  const cat = c.categories;
  if (cat) {
    checkSelector(cat.container, ['categories', 'container'], problems);
    checkSelector(cat.link_selector, ['categories', 'link_selector'], problems);
    checkSelector(cat.name_selector, ['categories', 'name_selector'], problems);
  }
  c.actions.forEach((a, i) => checkSelector(a.selector, ['actions', i, 'selector'], problems));
  const o = c.output;
  if (o.deduplicate_fields) {
    const known = new Set([...ex.fields, ...(c.detail_fields?.fields ?? [])].map((f) => f.name));
    if (c.categories) known.add('_category').add('_category_url');
    o.deduplicate_fields.forEach((name, i) => {
      if (known.size && !known.has(name)) problems.push([['output', 'deduplicate_fields', i], `"${name}" is not a field of this config`]);
    });
  }
  return problems;
}

function normalize(raw: Record<string, unknown>): ScrapeConfig {
  const t = raw.target as Record<string, unknown>;
  const ex = (raw.extract ?? {}) as Record<string, unknown>;
  const browser = (t.browser ?? {}) as Record<string, unknown>;
  const c: ScrapeConfig = {
    version: '2.0',
    target: {
      url: String(t.url).trim(),
      engine: (t.engine as ScrapeConfig['target']['engine'] | undefined) ?? 'auto',
      browser: { timeout: (browser.timeout as number | undefined) ?? 15000 },
    },
    extract: {
      type: (ex.type as ScrapeConfig['extract']['type'] | undefined) ?? 'list',
      fields: ((ex.fields as Record<string, unknown>[] | undefined) ?? []).map(normalizeField),
    },
    actions: ((raw.actions as ActionSpec[] | undefined) ?? []).map((a) => ({ ...a })),
    output: { format: 'json', deduplicate: false },
  };
  if (typeof browser.wait_selector === 'string') c.target.browser.wait_selector = browser.wait_selector;
  if (typeof raw.name === 'string') c.name = raw.name;
  if (typeof raw.description === 'string') c.description = raw.description;
  if (typeof ex.container === 'string') c.extract.container = ex.container;
  const d = raw.detail_fields as { fields: Record<string, unknown>[] } | undefined;
  if (d) c.detail_fields = { fields: d.fields.map(normalizeField) };
  const p = raw.pagination as Record<string, unknown> | undefined;
  if (p) {
    c.pagination = {
      type: p.type as NonNullable<ScrapeConfig['pagination']>['type'],
      max_pages: (p.max_pages as number | undefined) ?? 10,
      wait_after: (p.wait_after as number | undefined) ?? 0,
      stop_condition: { ...((p.stop_condition as object | undefined) ?? {}) },
    };
    if (typeof p.selector === 'string') c.pagination.selector = p.selector;
    if (typeof p.url_pattern === 'string') c.pagination.url_pattern = p.url_pattern;
  }
  const cat = raw.categories as Record<string, unknown> | undefined;
  if (cat) {
    c.categories = {
      container: (cat.container as string | undefined) ?? '',
      link_selector: (cat.link_selector as string | undefined) ?? 'a',
      link_attribute: (cat.link_attribute as string | undefined) ?? 'href',
      name_selector: (cat.name_selector as string | undefined) ?? '',
      max_categories: (cat.max_categories as number | undefined) ?? 50,
      wait_after: (cat.wait_after as number | undefined) ?? 2000,
    };
  }
  const o = (raw.output ?? {}) as Record<string, unknown>;
  c.output.deduplicate = (o.deduplicate as boolean | undefined) ?? false;
  if (Array.isArray(o.deduplicate_fields)) {
    c.output.deduplicate_fields = o.deduplicate_fields as string[];
    // Naming the fields to deduplicate on is asking for deduplication.
    c.output.deduplicate = o.deduplicate === undefined ? true : c.output.deduplicate;
  }
  if (typeof o.limit === 'number') c.output.limit = o.limit;
  return c;
}

/**
 * Parses and validates a config.
 * @param yamlText the YAML text (SPEC.md's yaml_content), at most {@link MAX_CONFIG_BYTES} bytes.
 * @returns the normalized config.
 * @throws ConfigError (code `invalid_config`) listing every problem with its path, line and column.
 */
export function parseConfig(yamlText: string): ScrapeConfig {
  if (typeof yamlText !== 'string' || yamlText.trim() === '') {
    throw new ConfigError([{ path: '', message: 'yaml_content is empty' }]);
  }
  const bytes = new TextEncoder().encode(yamlText).length;
  if (bytes > MAX_CONFIG_BYTES) {
    throw new ConfigError([{ path: '', message: `the config is too large (size: ${bytes} bytes, limit: ${MAX_CONFIG_BYTES} bytes)` }]);
  }
  const lc = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lc, prettyErrors: true, uniqueKeys: true, strict: true });
  if (doc.errors.length) {
    throw new ConfigError(doc.errors.map((e) => ({
      path: '',
      line: e.linePos?.[0].line,
      column: e.linePos?.[0].col,
      message: `YAML syntax: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
    })));
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new ConfigError([{ path: '', message: `YAML: ${(err as Error).message}` }]);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ConfigError([{ path: '', line: 1, column: 1, message: `a config is a YAML mapping with target and extract; got ${describeType(data)}` }]);
  }
  if (!validateSchema(data)) {
    throw new ConfigError(schemaProblems(compiled!.errors ?? [], data, doc, lc));
  }
  const config = normalize(data as Record<string, unknown>);
  const problems = semanticProblems(config);
  if (problems.length) {
    throw new ConfigError(problems.map(([segments, message]) => ({ path: formatPath(segments), ...locate(doc, lc, segments), message })));
  }
  return config;
}

/**
 * The features of a config that only a browser can run, each as a config path and a reason; empty when
 * the lightweight engine can run it. A `click` pagination control that is not a link is found at run
 * time (the lightweight engine fails the job with code `browser_required`).
 */
export function browserFeatures(c: ScrapeConfig): Array<{ path: string; reason: string }> {
  const out: Array<{ path: string; reason: string }> = [];
  if (c.target.engine === 'heavy') out.push({ path: 'target.engine', reason: 'engine heavy runs in a browser' });
  const fieldsOf = (fields: FieldSpec[], base: string) => fields.forEach((f, i) => {
    if (f.type === 'eval') out.push({ path: `${base}[${i}]`, reason: `eval field "${f.name}" runs JavaScript in the page` });
  });
  fieldsOf(c.extract.fields, 'extract.fields');
  if (c.detail_fields) fieldsOf(c.detail_fields.fields, 'detail_fields.fields');
  if (c.actions.length) out.push({ path: 'actions', reason: `${c.actions.length} action(s) (${[...new Set(c.actions.map((a) => a.type))].join(', ')}) need a page to act on` });
  if (c.pagination?.type === 'scroll_infinite') out.push({ path: 'pagination.type', reason: 'scroll_infinite pagination scrolls a rendered page' });
  return out;
}

/** Thrown when a config needs a browser; code `browser_required`. */
export class BrowserRequiredError extends CodedError {
  constructor(message: string, details: unknown[] = []) {
    super('browser_required', message, details);
    this.name = 'BrowserRequiredError';
  }
}

/**
 * Refuses configs the lightweight engine cannot run, before any fetch.
 * @throws BrowserRequiredError listing each feature that needs a browser with its config path.
 */
export function assertLightweight(config: ScrapeConfig): void {
  const features = browserFeatures(config).filter((f) => f.path !== 'target.engine');
  if (features.length) {
    throw new BrowserRequiredError(
      `This config needs a browser (${features.map((f) => `${f.path}: ${f.reason}`).join('; ')}) but the lightweight engine runs it; set target.engine to heavy or auto`,
      features,
    );
  }
}
