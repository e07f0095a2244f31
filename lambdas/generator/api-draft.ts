/**
 * An API config from the JSON answer a rendered page drew its records from (issue 38; docs/generate.md, "Reading the
 * site's JSON API"). The heuristic generator has an HTML config and its trial rows; when a captured XHR/fetch answer
 * holds those rows' values, this module writes the config that reads that answer instead:
 * 1. the records: the list in the answer (at most {@link DRAFT_LIMITS.depth} deep) whose objects give the HTML rows'
 *    values, record for record in the same order;
 * 2. each field by a JMESPath path into the record, named as the HTML field: a scalar or a list of scalars equal to
 *    the HTML value (text compared with its white space collapsed, numbers as numbers), a link by the URL the answer
 *    gives or by a `template:` around the value the answer gives (`/quotes/author/{value}/` from a slug);
 * 3. the API's pagination, when the HTML config has one: a page or offset parameter in the query or the JSON body, a
 *    cursor read from the answer and sent back as a parameter (found by asking the API for the next answer with each
 *    of a few usual names), or a next URL in the answer; a total or a has-more flag in the answer ends the listing.
 *
 * The caller then runs the API config as a trial and keeps it only when its rows agree with the HTML config's
 * ({@link rowsAgree}). Everything here is bounded: the answer's walk by depth and keys, the records compared, the
 * probes sent (each through the workbench's fetcher and so through the outbound guard).
 */
import type { FieldSpec } from '../engine/config.ts';
import type { Row } from '../engine/extract.ts';
import type { CapturedResponse } from '../engine/loaders/page-loader.ts';
import { compileQuery, QueryBudget, runQuery, type JsonValue } from '../engine/api/json-query.ts';

/** Bounds of the search. */
export const DRAFT_LIMITS = {
  /** How deep in an answer a list of records or a field's value is looked for. */
  depth: 6,
  /** Keys of one object looked at. */
  keys: 60,
  /** Records compared with the HTML rows. */
  records: 10,
  /** Share of compared records whose value must equal the HTML row's for a field to be read from the API. */
  fieldShare: 0.8,
  /** Cursor parameter names tried, in order (each is one request). */
  cursorNames: ['after', 'cursor', 'next', 'page_token', 'pageToken', 'continuation', 'starting_after'] as readonly string[],
} as const;

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The request of an API config (target.api) as the generator writes it. */
export interface DraftApiRequest {
  url: string;
  method: 'GET' | 'POST';
  query?: Record<string, string | number | boolean>;
  body?: Json;
  headers: Record<string, string>;
}

/** The API pagination written (the config's `pagination` block, max_pages added by the caller). */
export type DraftApiPagination =
  | { type: 'page' | 'offset'; start?: number; step?: number; total_path?: string; has_more_path?: string }
  | { type: 'cursor'; cursor_path: string; has_more_path?: string }
  | { type: 'next_url'; next_url_path: string };

/** An API config's parts, and how they were found (for the status message). */
export interface ApiDraft {
  api: DraftApiRequest;
  /** JMESPath of the records in an answer; absent: the answer is the list. */
  records?: string;
  fields: FieldSpec[];
  pagination?: DraftApiPagination;
  /** e.g. "GET http://…/api/feed/?offset=0&limit=10, records at data.items, paged by offset". */
  how: string;
}

/** A captured request with what the draft needs of it (browser-loader.ts records these for XHR/fetch JSON answers). */
export type CapturedApiRequest = Pick<CapturedResponse, 'url' | 'method'> & { requestBody?: string; requestContentType?: string };

/** Sends one API request (the workbench's fetcher: through the guard) and gives its parsed answer, or throws. */
export type ApiProbe = (request: { url: string; method: 'GET' | 'POST'; body?: string; headers: Record<string, string> }) => Promise<unknown>;

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A JMESPath expression for a list of keys: `data.items`, `"@type"."x-y"`. */
export function jmesPath(keys: readonly string[]): string {
  return keys.map((k) => (SIMPLE_KEY.test(k) ? k : JSON.stringify(k))).join('.');
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** Every list of objects in an answer, with its path, shallowest first. */
function recordLists(answer: unknown): Array<{ path: string[]; list: Record<string, Json>[] }> {
  const out: Array<{ path: string[]; list: Record<string, Json>[] }> = [];
  const walk = (v: unknown, path: string[]) => {
    if (path.length > DRAFT_LIMITS.depth) return;
    if (Array.isArray(v)) {
      const objects = v.filter(isObject);
      if (objects.length && objects.length >= v.length / 2) out.push({ path, list: objects });
      return;
    }
    if (!isObject(v)) return;
    for (const k of Object.keys(v).slice(0, DRAFT_LIMITS.keys)) walk(v[k], [...path, k]);
  };
  walk(answer, []);
  return out;
}

/** The scalar and list-of-scalar values of a record, by path. */
function leaves(record: Record<string, Json>): Map<string, { keys: string[]; value: Json }> {
  const out = new Map<string, { keys: string[]; value: Json }>();
  const walk = (v: Json, keys: string[]) => {
    if (keys.length > DRAFT_LIMITS.depth) return;
    if (isScalar(v)) {
      out.set(jmesPath(keys), { keys, value: v });
    } else if (Array.isArray(v)) {
      if (v.every(isScalar)) out.set(jmesPath(keys), { keys, value: v });
    } else if (isObject(v)) {
      for (const k of Object.keys(v).slice(0, DRAFT_LIMITS.keys)) walk(v[k]!, [...keys, k]);
    }
  };
  walk(record, []);
  return out;
}

function text(v: unknown): string {
  return String(v).replace(/\s+/g, ' ').trim();
}

/** Whether the answer's value is the HTML row's value (text compared with its white space collapsed, numbers as numbers). */
function sameValue(row: unknown, json: Json): boolean {
  if (row === null || row === undefined || row === '') return false;
  if (Array.isArray(row)) return Array.isArray(json) && json.length === row.length && row.every((r, i) => text(r) === text(json[i]));
  if (Array.isArray(json) || !isScalar(json)) return false;
  if (typeof row === 'number') return json !== '' && Number(json) === row;
  return text(row) === text(json);
}

/** The template that makes `url` from `value`, or null: `/quotes/author/{value}/` for a same-origin URL. */
function templateOf(url: string, value: Json, base: string): string | null {
  if (!isScalar(value) || typeof value === 'boolean') return null;
  const v = String(value);
  if (v.length < 2) return null;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const sameOrigin = (() => {
    try {
      return new URL(base).origin === u.origin;
    } catch {
      return false;
    }
  })();
  const whole = sameOrigin ? `${u.pathname}${u.search}${u.hash}` : u.href;
  for (const form of [v, encodeURIComponent(v)]) {
    const at = whole.lastIndexOf(form);
    if (at >= 0) return `${whole.slice(0, at)}{value}${whole.slice(at + form.length)}`;
  }
  return null;
}

/** Whether `value` resolved against `base` is `url`. */
function resolvesTo(value: Json, url: string, base: string): boolean {
  if (typeof value !== 'string' || !value) return false;
  try {
    return new URL(value, base).href === url;
  } catch {
    return false;
  }
}

/**
 * The API field for one HTML field, or null: the path whose values equal the field's in at least
 * {@link DRAFT_LIMITS.fieldShare} of the compared records.
 */
function matchField(field: FieldSpec, rows: readonly Row[], records: readonly Record<string, Json>[], answerUrl: string): FieldSpec | null {
  const n = Math.min(rows.length, records.length, DRAFT_LIMITS.records);
  const filled = rows.slice(0, n).filter((r) => r[field.name] !== null && r[field.name] !== undefined && r[field.name] !== '').length;
  if (!filled) return null;
  const need = Math.max(1, Math.ceil(filled * DRAFT_LIMITS.fieldShare));
  const byRecord = records.slice(0, n).map(leaves);
  const paths = new Set(byRecord.flatMap((m) => [...m.keys()]));
  const isLink = field.type === 'link' || field.type === 'image_url';
  let best: { spec: FieldSpec; hits: number } | null = null;
  const consider = (spec: FieldSpec, hits: number) => {
    if (hits >= need && (!best || hits > best.hits)) best = { spec, hits };
  };
  for (const path of paths) {
    const values = byRecord.map((m) => m.get(path)?.value ?? null);
    if (isLink) {
      const direct = values.filter((v, i) => v !== null && resolvesTo(v, String(rows[i]![field.name]), answerUrl)).length;
      consider({ name: field.name, path, type: field.type } as FieldSpec, direct);
      const templates = values.map((v, i) => (v !== null && typeof rows[i]![field.name] === 'string' ? templateOf(String(rows[i]![field.name]), v, answerUrl) : null));
      const first = templates.find((t): t is string => !!t && t !== '{value}');
      if (first) consider({ name: field.name, path, type: field.type, transform: [`template:${first}`] } as FieldSpec, templates.filter((t) => t === first).length);
    } else {
      consider({ name: field.name, path, ...(Array.isArray(rows[0]?.[field.name]) ? { multiple: true } : {}) } as FieldSpec, values.filter((v, i) => v !== null && sameValue(rows[i]![field.name], v)).length);
    }
  }
  return (best as { spec: FieldSpec } | null)?.spec ?? null;
}

/** The records and fields of an answer that give the HTML rows, or null when no list of it does. */
export function matchRecords(answer: unknown, rows: readonly Row[], fields: readonly FieldSpec[], answerUrl: string): { records?: string; fields: FieldSpec[] } | null {
  if (!rows.length) return null;
  // Only the fields the HTML rows fill must be found; a field empty on the page is not asked of the API.
  const wanted = fields.filter((f) => rows.slice(0, DRAFT_LIMITS.records).some((r) => r[f.name] !== null && r[f.name] !== undefined && r[f.name] !== ''));
  if (!wanted.length) return null;
  for (const { path, list } of recordLists(answer)) {
    const matched: FieldSpec[] = [];
    for (const f of wanted) {
      const m = matchField(f, rows, list, answerUrl);
      if (!m) break;
      matched.push(m);
    }
    if (matched.length === wanted.length) return { ...(path.length ? { records: jmesPath(path) } : {}), fields: matched };
  }
  return null;
}

const PAGE_NAMES = /^(page|p|pg|page_?num(ber)?|pageNumber|pageIndex)$/i;
const OFFSET_NAMES = /^(offset|start|skip|from)$/i;

/** A path in an answer to a value that satisfies `test`, by key name, shallowest first. */
function findKey(answer: unknown, name: RegExp, test: (v: Json) => boolean): string | null {
  const queue: Array<{ v: unknown; keys: string[] }> = [{ v: answer, keys: [] }];
  // At most 3 levels of 60 keys: an index into the queue, not shift() (which would make a wide answer quadratic).
  for (let at = 0; at < queue.length; at++) {
    const { v, keys } = queue[at]!;
    if (!isObject(v) || keys.length > 3) continue;
    for (const k of Object.keys(v).slice(0, DRAFT_LIMITS.keys)) {
      const child = v[k]!;
      if (name.test(k) && test(child)) return jmesPath([...keys, k]);
      if (isObject(child)) queue.push({ v: child, keys: [...keys, k] });
    }
  }
  return null;
}

/** The value at a path this module wrote, read by the engine's own JMESPath runner (engine/api/json-query.ts), as a run reads it. */
function valueAt(answer: unknown, path: string): Json | undefined {
  try {
    return runQuery(compileQuery(path), answer as JsonValue, new QueryBudget()) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The stop condition an answer offers: its total count, or its has-more flag. */
function stops(answer: unknown, records: number): { total_path?: string; has_more_path?: string } {
  const total = findKey(answer, /^(total|total_?count|totalCount|total_?results|totalResults|count|hits)$/i, (v) => typeof v === 'number' && Number.isInteger(v) && v >= records);
  if (total) return { total_path: total };
  const more = findKey(answer, /^(has_?more|hasMore|has_?next(_?page)?|hasNext(Page)?|more)$/i, (v) => typeof v === 'boolean');
  return more ? { has_more_path: more } : {};
}

/** The URL without its query, and its query as a map (numbers kept as numbers where they are digits). */
function splitQuery(url: URL): { base: string; query: Record<string, string | number> } {
  const query: Record<string, string | number> = {};
  for (const [k, v] of url.searchParams) query[k] = /^\d{1,9}$/.test(v) ? Number(v) : v;
  return { base: `${url.origin}${url.pathname}`, query };
}

/**
 * Writes the API config for a captured request whose answer holds the HTML rows, or null when its answer does not.
 * @param o.paginate write the API's pagination (the HTML config has one).
 * @param o.probe sends a request (the answer parsed) to find a cursor's parameter; errors are caught.
 * @throws nothing: a probe that fails only leaves that pagination out.
 */
export async function draftApiConfig(captured: CapturedApiRequest, answer: unknown, rows: readonly Row[], fields: readonly FieldSpec[],
  o: { paginate: boolean; probe: ApiProbe }): Promise<ApiDraft | null> {
  const matched = matchRecords(answer, rows, fields, captured.url);
  if (!matched) return null;
  let url: URL;
  try {
    url = new URL(captured.url);
  } catch {
    return null;
  }
  const method = captured.method.toUpperCase() === 'POST' ? 'POST' : 'GET';
  if (captured.method.toUpperCase() !== method) return null;
  let body: Json | undefined;
  if (method === 'POST') {
    if (!captured.requestBody) return null;
    try {
      body = JSON.parse(captured.requestBody) as Json;
    } catch {
      return null; // a form or another body: the language sends JSON bodies only
    }
  }
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method === 'POST') headers['Content-Type'] = 'application/json';
  const { base, query } = splitQuery(url);
  const records = matched.records ? valueAt(answer, matched.records) : answer;
  const count = Array.isArray(records) ? records.length : 0;
  let pagination: DraftApiPagination | undefined;
  let how = '';
  if (o.paginate) {
    const inQuery = Object.keys(query);
    const inBody = isObject(body) ? Object.keys(body) : [];
    const pageKey = inQuery.find((k) => PAGE_NAMES.test(k) && typeof query[k] === 'number') ?? inBody.find((k) => PAGE_NAMES.test(k) && typeof (body as Record<string, Json>)[k] === 'number');
    const offsetKey = inQuery.find((k) => OFFSET_NAMES.test(k) && typeof query[k] === 'number') ?? inBody.find((k) => OFFSET_NAMES.test(k) && typeof (body as Record<string, Json>)[k] === 'number');
    const key = offsetKey ?? pageKey;
    if (key) {
      const type = offsetKey ? 'offset' : 'page';
      const start = Number(key in query ? query[key] : (body as Record<string, Json>)[key]);
      if (key in query) query[key] = `{${type}}`;
      else (body as Record<string, Json>)[key] = `{${type}}`;
      pagination = { type, ...(start !== (type === 'page' ? 1 : 0) ? { start } : {}), ...stops(answer, count) };
      how = `, paged by its ${key} parameter`;
    } else {
      const next = findKey(answer, /^(next|next_?url|next_?page(_?url)?|nextUrl|nextPage(Url)?|next_?link)$/i, (v) => typeof v === 'string' && /^(https?:\/\/|\/|\?)/.test(v));
      if (next) {
        pagination = { type: 'next_url', next_url_path: next };
        how = `, the next answer's URL read at ${next}`;
      } else {
        const cursorPath = findKey(answer, /^(end_?cursor|endCursor|next_?cursor|nextCursor|cursor|next_?token|nextToken|next_?page_?token|nextPageToken|continuation)$/i, (v) => typeof v === 'string' && v.length > 0);
        const cursor = cursorPath ? valueAt(answer, cursorPath) : undefined;
        if (cursorPath && typeof cursor === 'string' && method === 'GET') {
          const name = await cursorParameter(base, query, headers, cursor, matched.records, answer, o.probe);
          if (name) {
            query[name] = '{cursor}';
            const s = stops(answer, count);
            pagination = { type: 'cursor', cursor_path: cursorPath, ...(s.has_more_path ? { has_more_path: s.has_more_path } : {}) };
            how = `, the cursor read at ${cursorPath} sent back as ${name}`;
          }
        }
      }
    }
  }
  const api: DraftApiRequest = { url: base, method, ...(Object.keys(query).length ? { query } : {}), ...(body !== undefined ? { body } : {}), headers };
  return {
    api, ...(matched.records ? { records: matched.records } : {}), fields: matched.fields, ...(pagination ? { pagination } : {}),
    how: `${method} ${captured.url}, records at ${matched.records ?? 'the answer itself'}${how}`,
  };
}

/** The query parameter the API takes its cursor in: the first usual name whose answer gives other records. */
async function cursorParameter(base: string, query: Record<string, string | number>, headers: Record<string, string>, cursor: string,
  recordsPath: string | undefined, first: unknown, probe: ApiProbe): Promise<string | null> {
  const firstRecords = recordsPath ? valueAt(first, recordsPath) : first;
  const firstKey = JSON.stringify(Array.isArray(firstRecords) ? firstRecords[0] : null);
  for (const name of DRAFT_LIMITS.cursorNames) {
    const u = new URL(base);
    for (const [k, v] of Object.entries(query)) u.searchParams.set(k, String(v));
    u.searchParams.set(name, cursor);
    try {
      const answer = await probe({ url: u.href, method: 'GET', headers });
      const recs = recordsPath ? valueAt(answer, recordsPath) : answer;
      if (Array.isArray(recs) && recs.length && JSON.stringify(recs[0]) !== firstKey) return name;
    } catch {
      // refused or not JSON: not this name
    }
  }
  return null;
}

/**
 * Whether the API config's trial rows are the HTML config's: the first rows of both (as many as the shorter has,
 * at most 20), field by field, equal in at least 90% of cells (text compared with its white space collapsed).
 */
export function rowsAgree(apiRows: readonly Row[], htmlRows: readonly Row[], names: readonly string[]): boolean {
  const n = Math.min(apiRows.length, htmlRows.length, 20);
  if (!n || !names.length) return false;
  let same = 0;
  for (let i = 0; i < n; i++) {
    for (const name of names) {
      const a = apiRows[i]![name];
      const b = htmlRows[i]![name];
      if (JSON.stringify(a) === JSON.stringify(b) || (Array.isArray(a) && Array.isArray(b) ? a.map(text).join('\n') === b.map(text).join('\n') : text(a ?? '') === text(b ?? ''))) same++;
    }
  }
  return same >= 0.9 * n * names.length;
}
