/**
 * Parsing and validation of the YAML config language (docs/spec.md, "YAML config language"; reference:
 * docs/config-language.md; schema: ./schema.ts, written to ./schema.json for editors).
 *
 * `parseConfig` is the single entry point: YAML text in, a normalized {@link ScrapeConfig} out (every
 * default filled in by Ajv from the schema), or a {@link ConfigError} whose details give, for each
 * problem, the path in the config (`extract.fields[2].type`), the 1-based line and column in the YAML
 * text and the reason. Schema problems and the checks a schema cannot express (selectors, transforms,
 * regular expressions, URLs, names, cross references) are reported together, in document order.
 *
 * The schema's validator is ./schema-validator.js: Ajv's standalone code, compiled from the schema at build
 * time by `node scripts/generate.ts`. Nothing compiles code at run time (no `new Function`, which a Manifest V3
 * extension forbids; no compile on a cold start), and this module needs ajv for types only.
 */
import type { ErrorObject } from 'ajv';
import type { LineCounter } from 'yaml';
import { load, type CheerioAPI } from 'cheerio/slim';
import { CodedError } from '../errors.ts';
import type { FieldSpec, ScrapeConfig, ValidatedConfig } from './schema.ts';
import { compilePattern, compileTransform } from './transforms.ts';
import { formatPath, indexDocument, locate, parseYaml, scanYaml, type PathIndex, type Segment } from './config-source.ts';
import { validate } from './schema-validator.js';
import { apiProblems, htmlOnlyProblems } from './api/api-config.ts';

export type { ActionSpec, FieldSpec, FieldType, ScrapeConfig } from './schema.ts';

/** One problem found in a config. `line`/`column` are 1-based; absent when the problem has no place in the text. */
export interface ConfigProblem {
  path: string;
  line?: number;
  column?: number;
  message: string;
}

/** At most this many problems are listed in a {@link ConfigError}'s details; its message gives the total. */
export const MAX_CONFIG_PROBLEMS = 50;

/**
 * Longest message of one listed problem, characters: a problem quotes what it refers to (a selector, a key, the
 * document itself when it is no mapping), which is cut here, so that an error answer stays small whatever the text.
 */
const MAX_PROBLEM_MESSAGE_CHARS = 300;

/** A text cut to {@link MAX_PROBLEM_MESSAGE_CHARS}, with `…` and its full length when cut. */
function clip(text: string): string {
  return text.length <= MAX_PROBLEM_MESSAGE_CHARS ? text : `${text.slice(0, MAX_PROBLEM_MESSAGE_CHARS)}… (${text.length} characters in all)`;
}

/** A problem whose path and message are {@link clip}ped. */
function clipped(p: ConfigProblem): ConfigProblem {
  return p.message.length <= MAX_PROBLEM_MESSAGE_CHARS && p.path.length <= MAX_PROBLEM_MESSAGE_CHARS ? p : { ...p, path: clip(p.path), message: clip(p.message) };
}

/**
 * Thrown by {@link parseConfig}: code `invalid_config`, details the first {@link MAX_CONFIG_PROBLEMS}
 * {@link ConfigProblem}s in document order; the message names the first problem and how many more there are. Each
 * listed problem's path and message are cut to {@link MAX_PROBLEM_MESSAGE_CHARS}.
 */
export class ConfigError extends CodedError {
  declare readonly details: ConfigProblem[];
  constructor(problems: ConfigProblem[]) {
    const first = clipped(problems[0]!);
    const where = first.line ? ` (line ${first.line}, column ${first.column})` : '';
    const capped = problems.length > MAX_CONFIG_PROBLEMS ? `; details list the first ${MAX_CONFIG_PROBLEMS}` : '';
    const more = problems.length > 1 ? ` and ${problems.length - 1} more problem(s)${capped}` : '';
    super('invalid_config', `Invalid config: ${first.path ? first.path + ': ' : ''}${first.message}${where}${more}`, problems.slice(0, MAX_CONFIG_PROBLEMS).map(clipped));
    this.name = 'ConfigError';
  }
}

/** Largest YAML text accepted, in bytes (docs/limits.md). */
export const MAX_CONFIG_BYTES = 256 * 1024;

/** A problem before it is placed in the text: the config path and the reason. */
type Problem = [Segment[], string];
/** A YAML mapping as data. */
type Mapping = Record<string, unknown>;

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

/** "must be an integer" -> "an integer": what an `anyOf` alternative asked for, to join them with "or". */
function expectation(e: ErrorObject): string {
  switch (e.keyword) {
    case 'const': return JSON.stringify((e.params as { allowedValue: unknown }).allowedValue);
    case 'type': return article((e.params as { type: string | string[] }).type);
    default: return (e.message ?? 'valid').replace(/^must (?:be )?/, '');
  }
}

/** "an integer", "a string", "a mapping": the message goes to people as is. */
function article(type: string | string[]): string {
  if (Array.isArray(type)) return type.map(article).join(' or ');
  if (type === 'object') return 'a mapping';
  if (type === 'array') return 'a list';
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** Turns Ajv's errors into one readable problem per place, dropping the noise of `if` and `anyOf` wrappers. */
function schemaProblems(errors: ErrorObject[], data: unknown): Problem[] {
  // The alternatives of an `anyOf` become one problem ("must be "full" or an integer"), not one per alternative.
  // Grouped by place first, so that finding an anyOf's alternatives looks at its place's errors only.
  const byPlace = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    const group = byPlace.get(e.instancePath);
    if (group) group.push(e);
    else byPlace.set(e.instancePath, [e]);
  }
  const alternatives = new Map<ErrorObject, ErrorObject[]>();
  const consumed = new Set<ErrorObject>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf') continue;
    const inner = byPlace.get(e.instancePath)!.filter((x) => x !== e && x.schemaPath.startsWith(`${e.schemaPath}/`));
    alternatives.set(e, inner);
    for (const x of inner) consumed.add(x);
  }
  const out: Problem[] = [];
  for (const e of errors) {
    // `if` only says that a `then` failed; the `then` error itself is the useful one.
    if (e.keyword === 'if' || consumed.has(e)) continue;
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
      case 'type':
        message = `must be ${article((e.params as { type: string | string[] }).type)}; got ${describeType(value)}`;
        break;
      case 'anyOf':
        message = `must be ${alternatives.get(e)!.map(expectation).join(' or ')}; got ${describeType(value)}`;
        break;
      default:
        message = `${e.message ?? 'is invalid'}${value !== undefined && typeof value !== 'object' ? `; got ${describeType(value)}` : ''}`;
    }
    out.push([segments, message]);
  }
  return out;
}

let probe: CheerioAPI | null = null;

function checkSelector(selector: unknown, segments: Segment[], problems: Problem[]): void {
  if (typeof selector !== 'string' || selector === '') return;
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

function isMapping(v: unknown): v is Mapping {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The items of a list that are mappings, with their index; nothing for a value that is no list. */
function mappings(v: unknown): Array<[Mapping, number]> {
  return Array.isArray(v) ? v.flatMap((x, i): Array<[Mapping, number]> => (isMapping(x) ? [[x, i]] : [])) : [];
}

/** The string names of a list of fields. */
function names(fields: unknown): string[] {
  return mappings(fields).flatMap(([f]) => (typeof f.name === 'string' ? [f.name] : []));
}

/**
 * The checks a JSON Schema cannot express: selectors, transforms, regexes, URLs, names, cross references.
 * They run on the data whether or not it matched the schema, so that every problem is reported at once;
 * a value of the wrong type is the schema's problem and is skipped here.
 */
function semanticProblems(c: Mapping): Problem[] {
  const problems: Problem[] = [];
  const target = isMapping(c.target) ? c.target : {};
  const url = typeof target.url === 'string' ? target.url.trim() : undefined;
  if (url && !isHttpUrl(url)) problems.push([['target', 'url'], `must be an absolute http or https URL; got "${url}"`]);

  const checkFields = (fields: unknown, base: Segment[]) => {
    const seen = new Set<string>();
    for (const [f, i] of mappings(fields)) {
      const at = [...base, i];
      if (typeof f.name === 'string') {
        if (seen.has(f.name)) problems.push([[...at, 'name'], `duplicate field name "${f.name}"`]);
        seen.add(f.name);
        if (f.name.startsWith('_category')) problems.push([[...at, 'name'], `"${f.name}" is reserved for category metadata`]);
      }
      checkSelector(f.selector, [...at, 'selector'], problems);
      if (typeof f.pattern === 'string' && f.pattern !== '') {
        try { compilePattern(f.pattern); } catch (err) { problems.push([[...at, 'pattern'], (err as Error).message]); }
      }
      if (Array.isArray(f.transform)) {
        f.transform.forEach((spec, j) => {
          if (typeof spec !== 'string' || spec === '') return;
          try { compileTransform(spec); } catch (err) { problems.push([[...at, 'transform', j], (err as Error).message]); }
        });
      }
    }
  };

  const ex = isMapping(c.extract) ? c.extract : undefined;
  const api = isMapping(target.api);
  // An API config (target.api) reads records by JMESPath: its checks are api/api-config.ts's.
  problems.push(...(api ? apiProblems(c, url && isHttpUrl(url) ? url : undefined) : htmlOnlyProblems(c)));
  if (ex) {
    if (!api && (ex.type === 'list' || ex.type === 'table') && ex.container === undefined) {
      problems.push([['extract'], `missing required key "container" (needed for type ${ex.type})`]);
    }
    if ((ex.type === 'list' || ex.type === 'single') && Array.isArray(ex.fields) && ex.fields.length === 0) {
      problems.push([['extract'], 'missing required key "fields" (at least one field)']);
    }
    if (!api && typeof ex.following_siblings === 'number' && ex.following_siblings !== 0 && (ex.type === 'single' || ex.type === 'table')) {
      problems.push([['extract', 'following_siblings'], `applies to type list only (a record spread over sibling elements); got type ${ex.type}: remove it or set it to 0`]);
    }
    checkSelector(ex.container, ['extract', 'container'], problems);
    checkFields(ex.fields, ['extract', 'fields']);
  }

  const detail = isMapping(c.detail_fields) ? c.detail_fields : undefined;
  if (detail) {
    checkFields(detail.fields, ['detail_fields', 'fields']);
    if (ex && Array.isArray(ex.fields) && !mappings(ex.fields).some(([f]) => f.type === 'link' && f.multiple !== true)) {
      problems.push([['detail_fields'], 'needs a field of type link in extract.fields: its URL is the detail page']);
    }
    const itemNames = new Set(names(ex?.fields));
    for (const [f, i] of mappings(detail.fields)) {
      if (typeof f.name === 'string' && itemNames.has(f.name)) problems.push([['detail_fields', 'fields', i, 'name'], `"${f.name}" is already a field of extract.fields`]);
    }
  }

  const p = isMapping(c.pagination) ? c.pagination : undefined;
  if (p) {
    checkSelector(p.selector, ['pagination', 'selector'], problems);
    if (p.type === 'url' && typeof p.url_pattern === 'string' && p.url_pattern !== '') {
      if (!p.url_pattern.includes('{page}')) problems.push([['pagination', 'url_pattern'], 'must contain the placeholder {page}']);
      else {
        let ok = false;
        try { ok = isHttpUrl(new URL(p.url_pattern.replaceAll('{page}', '1'), url && isHttpUrl(url) ? url : undefined).href); } catch { ok = false; }
        if (!ok) problems.push([['pagination', 'url_pattern'], `must be an http or https URL (absolute or relative to target.url); got "${p.url_pattern}"`]);
      }
    }
  }
  const cat = isMapping(c.categories) ? c.categories : undefined;
  if (cat) {
    checkSelector(cat.container, ['categories', 'container'], problems);
    checkSelector(cat.link_selector, ['categories', 'link_selector'], problems);
    checkSelector(cat.name_selector, ['categories', 'name_selector'], problems);
  }
  for (const [a, i] of mappings(c.actions)) checkSelector(a.selector, ['actions', i, 'selector'], problems);

  const o = isMapping(c.output) ? c.output : undefined;
  if (o && Array.isArray(o.deduplicate_fields)) {
    const known = new Set([...names(ex?.fields), ...names(detail?.fields)]);
    if (cat) known.add('_category').add('_category_url');
    o.deduplicate_fields.forEach((name, i) => {
      if (typeof name === 'string' && known.size && !known.has(name)) problems.push([['output', 'deduplicate_fields', i], `"${name}" is not a field of this config`]);
    });
  }
  return problems;
}

/**
 * The normalisations a default cannot express: `version` 2 is "2.0", the URL is trimmed, and naming
 * `deduplicate_fields` is asking for deduplication unless `deduplicate` says otherwise.
 */
function normalize(v: ValidatedConfig, deduplicateGiven: boolean): ScrapeConfig {
  const dedupe = v.output.deduplicate_fields !== undefined && !deduplicateGiven;
  return {
    ...v,
    version: '2.0',
    target: { ...v.target, url: v.target.url.trim() },
    output: dedupe ? { ...v.output, deduplicate: true } : v.output,
  };
}

/**
 * A deep copy of YAML data in which no two places share an object. YAML aliases do share (`*a` is the
 * very object of `&a`), and Ajv writes defaults into the data: without the copy, the defaults of one
 * place would show up, as unknown keys, in another.
 */
function unshared(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unshared);
  // fromEntries defines own properties, so a "__proto__" key stays a key (and is refused as unknown).
  if (isMapping(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unshared(x)]));
  return v;
}

/** Places problems in the text and sorts them in document order (a stable sort: same place, found order). */
function placed(problems: Problem[], index: PathIndex, lc: LineCounter): ConfigProblem[] {
  const seen = new Set<string>();
  const out: ConfigProblem[] = [];
  for (const [segments, message] of problems) {
    const path = formatPath(segments);
    if (seen.has(`${path}|${message}`)) continue;
    seen.add(`${path}|${message}`);
    out.push({ path, ...locate(index, lc, segments), message });
  }
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

/**
 * Parses and validates a config.
 * Time is linear in the text and bounded: the caps of ./config-source.ts (tokens, nesting, keys per
 * mapping) are checked before the tree is built or walked (docs/limits.md).
 * @param yamlText the YAML text (docs/spec.md's yaml_content), at most {@link MAX_CONFIG_BYTES} bytes.
 * @returns the normalized config, every default of ./schema.ts filled in.
 * @throws ConfigError (code `invalid_config`) listing every problem (schema and semantic together, in
 *   document order, at most {@link MAX_CONFIG_PROBLEMS}) with its path, line and column; alone, a cap
 *   crossed, YAML syntax errors, or duplicate keys and oversized mappings.
 */
export function parseConfig(yamlText: string): ScrapeConfig {
  if (typeof yamlText !== 'string' || yamlText.trim() === '') {
    throw new ConfigError([{ path: '', message: 'yaml_content is empty' }]);
  }
  const bytes = new TextEncoder().encode(yamlText).length;
  if (bytes > MAX_CONFIG_BYTES) {
    throw new ConfigError([{ path: '', message: `the config is too large (size: ${bytes} bytes, limit: ${MAX_CONFIG_BYTES} bytes)` }]);
  }
  const tooBig = scanYaml(yamlText);
  if (tooBig) throw new ConfigError([{ path: '', ...tooBig }]);
  const { doc, lc } = parseYaml(yamlText);
  if (doc.errors.length) {
    throw new ConfigError(doc.errors.map((e) => ({
      path: '',
      line: e.linePos?.[0].line,
      column: e.linePos?.[0].col,
      message: `YAML syntax: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
    })));
  }
  const { index, problems: sourceProblems } = indexDocument(doc, lc);
  if (sourceProblems.length) throw new ConfigError(sourceProblems.map((p) => ({ path: '', ...p })));
  let data: unknown;
  try {
    data = unshared(doc.toJS({ maxAliasCount: 100 }));
  } catch (err) {
    throw new ConfigError([{ path: '', message: `YAML: ${(err as Error).message}` }]);
  }
  if (!isMapping(data)) {
    throw new ConfigError([{ path: '', line: 1, column: 1, message: `a config is a YAML mapping with target and extract; got ${describeType(data)}` }]);
  }
  // Read before Ajv fills in `deduplicate: false`.
  const deduplicateGiven = isMapping(data.output) && Object.hasOwn(data.output, 'deduplicate');
  if (validate(data)) {
    const problems = semanticProblems(data);
    if (problems.length) throw new ConfigError(placed(problems, index, lc));
    return normalize(data, deduplicateGiven);
  }
  throw new ConfigError(placed([...schemaProblems(validate.errors ?? [], data), ...semanticProblems(data)], index, lc));
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
