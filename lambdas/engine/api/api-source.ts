/**
 * Reading records from a site's JSON API (docs/config-language.md, "Reading a JSON API"): the request of each step
 * (placeholders filled in), what an answer means (JSON or `api_not_json`, its records or `api_no_records`), each
 * record's fields by JMESPath with the transforms of every config, and where the listing goes next (a page or offset
 * parameter stepped, a cursor or next URL read from the answer) and when it stops (an empty answer, a total count
 * read, has-more false, max_pages and the item caps, which the crawler checks).
 *
 * Pure functions over plain data: the crawler (../crawl/api-pages.ts) sends the requests through the run's page
 * loader, whichever engine (and the extension's tab) it is. It imports nothing from Node.
 */
import { CodedError } from '../../errors.ts';
import type { FieldSpec, ScrapeConfig } from '../config.ts';
import type { Row } from '../extract.ts';
import { absoluteUrl } from '../extract.ts';
import { applyTransforms, compilePattern, compileTransforms, regexExtract, type FieldValue, type Pattern, type Transform } from '../transforms.ts';
import { compileQuery, runQuery, type CompiledQuery, type JsonValue, type QueryBudget } from './json-query.ts';

/** One request to the API. */
export interface ApiRequest {
  method: 'GET' | 'POST';
  /** Absolute URL, query included. */
  url: string;
  /** Request headers: the config's, with Accept and (with a body) Content-Type defaulted. */
  headers: Record<string, string>;
  /** The JSON body of a POST, serialised. */
  body?: string;
}

/** An API's answer as a loader got it. */
export interface ApiAnswer {
  requestedUrl: string;
  /** After redirects: the base of relative URLs in the answer. */
  url: string;
  status: number;
  /** MIME type without parameters, lower case; '' when none. */
  contentType: string;
  /** Lower-case names. */
  headers?: Record<string, string>;
  /** The body, decoded. */
  text: string;
  /** ms from the request to the answer. */
  latencyMs?: number;
}

/** Where a listing of an API config is: the values of its placeholders, or (next_url) the URL to load. */
export interface ApiPosition {
  page?: number;
  offset?: number;
  /** The cursor read from the previous answer; null before the first. */
  cursor?: JsonValue;
  /** next_url: the URL read from the previous answer (absent: the config's own request). */
  url?: string;
}

/** JSON nesting an answer may have (our serialisation of rows and the library's comparisons recurse). */
export const MAX_ANSWER_DEPTH = 100;
/** Records of one answer read at most; the rest are dropped with a warning. */
export const MAX_RECORDS_PER_ANSWER = 10_000;

/** The default Accept of an API request. */
const JSON_ACCEPT = 'application/json, text/plain, */*';

/** A field of an API config ready to run. */
interface ApiField {
  spec: FieldSpec;
  path: CompiledQuery;
  transforms: Transform[];
  pattern?: Pattern;
}

/** What one answer gave. */
export interface ApiPageRead {
  /** The rows of its records (before the item caps). */
  rows: Row[];
  /** Records at extract.records (before {@link MAX_RECORDS_PER_ANSWER}). */
  recordCount: number;
  /** The listing's next position, or null at its end; `why` says why it ends (for progress and tests). */
  next: ApiPosition | null;
  why: string;
  warnings: string[];
}

function isBlank(v: unknown): boolean {
  return v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** What a JSON value is, for messages: "nothing", "a string", "a list of 3", "an object with keys a, b". */
export function describeJson(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (typeof v === 'object') return `an object with keys ${Object.keys(v).slice(0, 10).join(', ') || '(none)'}`;
  return `${typeof v === 'number' ? 'a number' : typeof v === 'boolean' ? 'a boolean' : 'a string'} (${JSON.stringify(v).slice(0, 60)})`;
}

/** Replaces the placeholders of a text: `{page}`, `{offset}`, `{cursor}` (`encode`: URL-encoded, for a URL). */
function fill(text: string, pos: ApiPosition, encode: boolean): string {
  const value = (v: unknown) => {
    const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return encode ? encodeURIComponent(s) : s;
  };
  return text.replace(/\{(page|offset|cursor)\}/g, (whole, name: 'page' | 'offset' | 'cursor') => (pos[name] === undefined ? whole : value(pos[name])));
}

/** A body value with its placeholders filled: a string that is exactly a placeholder becomes its value (typed). */
function fillBody(v: JsonValue, pos: ApiPosition): JsonValue {
  if (typeof v === 'string') {
    const exact = /^\{(page|offset|cursor)\}$/.exec(v);
    if (exact) {
      const x = pos[exact[1] as 'page' | 'offset' | 'cursor'];
      return x === undefined ? v : x;
    }
    return fill(v, pos, false);
  }
  if (Array.isArray(v)) return v.map((x) => fillBody(x, pos));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillBody(x, pos)]));
  return v;
}

/**
 * Checks the nesting of a JSON value without recursion.
 * @returns whether it nests at most `max` levels.
 */
function depthWithin(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (d >= max) return false;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (x && typeof x === 'object') stack.push([x, d + 1]);
  }
  return true;
}

/**
 * Parses an answer as JSON (a byte-order mark is dropped; any content type is tried: many APIs say text/plain or
 * text/html).
 * @throws CodedError `api_not_json` (details `[{url, status, content_type}]`) when it does not parse or nests deeper
 *   than {@link MAX_ANSWER_DEPTH}.
 */
export function parseAnswer(a: ApiAnswer): JsonValue {
  const text = a.text.charCodeAt(0) === 0xfeff ? a.text.slice(1) : a.text;
  const details = [{ url: a.requestedUrl, status: a.status, content_type: a.contentType }];
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (err) {
    const start = text.trimStart().slice(0, 60).replace(/\s+/g, ' ');
    throw new CodedError('api_not_json', `The API's answer from ${a.requestedUrl} is not JSON: ${a.contentType || 'no content type'}, ${text.length ? `starting "${start}"` : 'empty'} (${(err as Error).message.split('\n')[0]}); check target.api (a URL of the page rather than its data, a missing header the API needs)`, details);
  }
  if (!depthWithin(value, MAX_ANSWER_DEPTH)) {
    throw new CodedError('api_not_json', `The API's answer from ${a.requestedUrl} nests deeper than ${MAX_ANSWER_DEPTH} levels; it is not read`, details);
  }
  return value;
}

/**
 * An API config compiled once per run: its request, records, fields and pagination.
 *
 * **Example usage:**
 * ```ts
 * const api = new ApiSource(config);
 * let pos = api.first();
 * const req = api.request(pos);                        // send it through the loader
 * const read = api.read(answer, parseAnswer(answer), pos, { index: 0, itemsSoFar: 0 }, new QueryBudget());
 * pos = read.next;                                     // null: the listing ends
 * ```
 */
export class ApiSource {
  private readonly config: ScrapeConfig;
  private readonly api: NonNullable<ScrapeConfig['target']['api']>;
  private readonly records: CompiledQuery | null;
  private readonly fields: ApiField[];
  private readonly cursorPath: CompiledQuery | null;
  private readonly nextUrlPath: CompiledQuery | null;
  private readonly totalPath: CompiledQuery | null;
  private readonly hasMorePath: CompiledQuery | null;

  /** @param config a validated config with `target.api` (parseConfig checked every query). */
  constructor(config: ScrapeConfig) {
    if (!config.target.api) throw new Error('ApiSource: the config has no target.api');
    this.config = config;
    this.api = config.target.api;
    const q = (text: string | undefined) => (text === undefined ? null : compileQuery(text));
    this.records = q(config.extract.records);
    this.fields = config.extract.fields.map((spec) => ({
      spec,
      path: compileQuery(spec.path ?? '@'),
      transforms: compileTransforms(spec.transform),
      ...(spec.pattern !== undefined ? { pattern: compilePattern(spec.pattern) } : {}),
    }));
    const p = config.pagination;
    this.cursorPath = q(p?.cursor_path);
    this.nextUrlPath = q(p?.next_url_path);
    this.totalPath = q(p?.total_path);
    this.hasMorePath = q(p?.has_more_path);
  }

  /** The records' query as written ('@' when absent), for messages. */
  get recordsText(): string {
    return this.records?.text ?? '@';
  }

  /** The first position: `{page: start ?? 1}`, `{offset: start ?? 0}`, `{cursor: null}`, or none. */
  first(): ApiPosition {
    const p = this.config.pagination;
    switch (p?.type) {
      case 'page': return { page: p.start ?? 1 };
      case 'offset': return { offset: p.start ?? 0 };
      case 'cursor': return { cursor: null };
      default: return {};
    }
  }

  /**
   * The request of a position: the URL (relative to target.url) with its placeholders filled (URL-encoded) and the
   * query parameters added (one whose value is exactly a placeholder without a value, the first `{cursor}`, is left
   * out); the JSON body of a POST filled in; headers with Accept (and Content-Type with a body) defaulted. A next_url
   * position's URL is loaded as it is, with the config's method, headers and body.
   */
  request(pos: ApiPosition): ApiRequest {
    const headers: Record<string, string> = { accept: JSON_ACCEPT };
    for (const [k, v] of Object.entries(this.api.headers ?? {})) headers[k.toLowerCase()] = v;
    let url: string;
    if (pos.url !== undefined) url = pos.url;
    else {
      const u = new URL(fill(this.api.url.trim(), pos, true), this.config.target.url);
      for (const [k, raw] of Object.entries(this.api.query ?? {})) {
        const text = String(raw);
        const exact = /^\{(page|offset|cursor)\}$/.exec(text);
        if (exact) {
          const v = pos[exact[1] as 'page' | 'offset' | 'cursor'];
          if (v === null || v === undefined || v === '') continue;
        }
        u.searchParams.append(k, fill(text, pos, false));
      }
      url = u.href;
    }
    const req: ApiRequest = { method: this.api.method, url, headers };
    if (this.api.method === 'POST') {
      req.body = JSON.stringify(this.api.body === undefined ? {} : fillBody(this.api.body as JsonValue, pos));
      headers['content-type'] ??= 'application/json';
    }
    return req;
  }

  /**
   * Reads one answer: its records and their rows, and the listing's next position.
   * @param at the step's index in the listing and the items the listing kept before it.
   * @throws CodedError `api_no_records` when extract.records gives nothing or a scalar (the caller decides whether that
   *   fails the run: on the first answer it does); QueryLimitError (`api_query_limit`); Error for a query's runtime
   *   type error.
   */
  read(answer: ApiAnswer, json: JsonValue, pos: ApiPosition, at: { index: number; recordsSoFar: number }, budget: QueryBudget): ApiPageRead {
    const warnings: string[] = [];
    const found = this.records ? runQuery(this.records, json, budget) : json;
    let records: JsonValue[];
    if (Array.isArray(found)) records = found;
    else if (found && typeof found === 'object') records = [found];
    else {
      const keys = json && typeof json === 'object' && !Array.isArray(json) ? Object.keys(json).slice(0, 20) : [];
      throw new CodedError('api_no_records', `extract.records "${this.recordsText}" gives ${describeJson(found)} on the API's answer from ${answer.requestedUrl}, not a list of records; the answer is ${describeJson(json)}`,
        [{ url: answer.requestedUrl, records: this.recordsText, found: describeJson(found), keys }]);
    }
    const recordCount = records.length;
    if (records.length > MAX_RECORDS_PER_ANSWER) {
      warnings.push(`the API's answer from ${answer.requestedUrl} has ${records.length} records; the first ${MAX_RECORDS_PER_ANSWER} are read`);
      records = records.slice(0, MAX_RECORDS_PER_ANSWER);
    }
    if (this.config.extract.type === 'single') records = records.slice(0, 1);
    const rows = records.map((r) => this.row(r, answer.url, budget));
    const { next, why } = this.nextPosition(answer, json, pos, recordCount, at, budget);
    return { rows, recordCount, next, why, warnings };
  }

  /** One record's row: each field's value by its path, typed, transformed, defaulted. */
  private row(record: JsonValue, base: string, budget: QueryBudget): Row {
    const row: Row = {};
    for (const f of this.fields) row[f.spec.name] = this.value(f, runQuery(f.path, record, budget), base);
    return row;
  }

  /** A field's value from what its path gave (docs/config-language.md, "Fields of an API record"). */
  private value(f: ApiField, raw: JsonValue, base: string): unknown {
    const s = f.spec;
    const fallback = 'default' in s ? s.default : null;
    if (s.type === 'count') return applyTransforms(Array.isArray(raw) ? raw.length : raw === null ? 0 : typeof raw === 'object' ? Object.keys(raw).length : 1, f.transforms);
    if (s.type === 'exists') return applyTransforms(raw !== null, f.transforms);
    const one = (v: JsonValue): unknown => {
      if (v === null) return null;
      if (!isScalar(v)) return v; // an object (or a list in a list) is kept as it is: transforms read text
      if (s.type === 'link' || s.type === 'image_url') {
        // An API often gives a slug or a path: the transforms make the URL (template:/item/{value}/), which is then
        // resolved against the answer's URL.
        const x = applyTransforms(v, f.transforms);
        return typeof x === 'string' ? absoluteUrl(x, base) : null;
      }
      const x: FieldValue = s.type === 'regex' ? regexExtract(f.pattern!, String(v)) : v;
      return applyTransforms(x, f.transforms);
    };
    if (Array.isArray(raw) || s.multiple) {
      const values = (Array.isArray(raw) ? raw : [raw]).map(one).filter((v) => !isBlank(v));
      return values.length || !('default' in s) ? values : s.default;
    }
    const v = one(raw);
    return isBlank(v) ? fallback : v;
  }

  /** Where the listing goes after an answer, and why it ends when it does. */
  private nextPosition(answer: ApiAnswer, json: JsonValue, pos: ApiPosition, recordCount: number, at: { index: number; recordsSoFar: number }, budget: QueryBudget): { next: ApiPosition | null; why: string } {
    const p = this.config.pagination;
    if (!p) return { next: null, why: 'no pagination' };
    if (recordCount === 0) return { next: null, why: 'an answer without records' };
    if (at.index + 1 >= p.max_pages) return { next: null, why: `max_pages (${p.max_pages})` };
    if (this.totalPath) {
      const total = runQuery(this.totalPath, json, budget);
      const n = typeof total === 'number' ? total : typeof total === 'string' && /^\d+$/.test(total.trim()) ? Number(total) : NaN;
      const read = p.type === 'offset' ? (pos.offset ?? 0) + recordCount : at.recordsSoFar + recordCount;
      if (Number.isFinite(n) && read >= n) return { next: null, why: `the total of ${n} record(s) read` };
    }
    if (this.hasMorePath) {
      const more = runQuery(this.hasMorePath, json, budget);
      if (more === false || more === null || more === 0 || more === '' || more === 'false') return { next: null, why: `${this.hasMorePath.text} is ${JSON.stringify(more)}` };
    }
    switch (p.type) {
      case 'page': return { next: { page: (pos.page ?? 1) + (p.step ?? 1) }, why: '' };
      case 'offset': return { next: { offset: (pos.offset ?? 0) + (p.step ?? recordCount) }, why: '' };
      case 'cursor': {
        const c = runQuery(this.cursorPath!, json, budget);
        if (c === null || c === '' || c === false) return { next: null, why: `no next cursor (${this.cursorPath!.text})` };
        if (typeof c === 'object') return { next: null, why: `the cursor ${this.cursorPath!.text} is ${describeJson(c)}, not a value` };
        return { next: { cursor: c }, why: '' };
      }
      case 'next_url': {
        const u = runQuery(this.nextUrlPath!, json, budget);
        if (typeof u !== 'string' || u.trim() === '') return { next: null, why: `no next URL (${this.nextUrlPath!.text})` };
        const url = absoluteUrl(u, answer.url);
        if (!url || !/^https?:/i.test(url)) return { next: null, why: `the next URL "${u.slice(0, 200)}" is not an http(s) URL` };
        return { next: { url }, why: '' };
      }
      default: return { next: null, why: `pagination type ${p.type}` };
    }
  }
}

/** The unique key of a request (a request seen before is a loop: the listing ends). */
export function requestKey(r: ApiRequest): string {
  return `api:${r.method} ${r.url}${r.body !== undefined ? `\n${r.body}` : ''}`;
}
