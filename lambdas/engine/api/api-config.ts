/**
 * The checks of an API config (`target.api`; docs/config-language.md, "Reading a JSON API") that a JSON Schema cannot
 * make, for config.ts's `semanticProblems`: the endpoint's URL, the method and body, the headers, JMESPath queries
 * (compiled here, so a bad one is an `invalid_config` at its path), the placeholders each pagination type needs, and
 * the keys that belong to HTML configs only (and, without `target.api`, the keys that belong to API configs only).
 */
import type { Segment } from '../config-source.ts';
import { compileQuery } from './json-query.ts';

type Problem = [Segment[], string];
type Mapping = Record<string, unknown>;

/** Pagination types of API configs; the others (click, url, scroll_infinite) read HTML. */
export const API_PAGINATION_TYPES: ReadonlySet<string> = new Set(['page', 'offset', 'cursor', 'next_url']);

/** The pagination keys of API configs only. */
const API_PAGINATION_KEYS = ['start', 'step', 'cursor_path', 'next_url_path', 'total_path', 'has_more_path'] as const;

/** The placeholder each pagination type fills in the request. */
export const PLACEHOLDER_OF: Readonly<Record<string, string>> = { page: '{page}', offset: '{offset}', cursor: '{cursor}' };

/**
 * Request headers a config may not set: credentials the user would store in plain text (Cookie, Authorization), what
 * the HTTP client owns (Host, Content-Length, hop-by-hop headers), and proxy headers. Lower case.
 */
const REFUSED_HEADERS = new Set(['cookie', 'cookie2', 'authorization', 'proxy-authorization', 'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function isMapping(v: unknown): v is Mapping {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mappings(v: unknown): Array<[Mapping, number]> {
  return Array.isArray(v) ? v.flatMap((x, i): Array<[Mapping, number]> => (isMapping(x) ? [[x, i]] : [])) : [];
}

function checkQuery(text: unknown, at: Segment[], problems: Problem[]): void {
  if (typeof text !== 'string' || text === '') return;
  try {
    compileQuery(text);
  } catch (err) {
    problems.push([at, (err as Error).message]);
  }
}

/** Every string inside a JSON value (the body's), bounded by the config's own size. */
function stringsOf(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringsOf(x, out);
  else if (isMapping(v)) for (const x of Object.values(v)) stringsOf(x, out);
  return out;
}

/**
 * The problems of an API config.
 * @param c the config as data (validated or not: a value of the wrong type is the schema's problem, skipped here).
 * @param targetUrl target.url when it is an http(s) URL (a relative target.api.url resolves against it).
 */
export function apiProblems(c: Mapping, targetUrl: string | undefined): Problem[] {
  const problems: Problem[] = [];
  const api = c.target && isMapping((c.target as Mapping).api) ? (c.target as Mapping).api as Mapping : {};
  const at = (...s: Segment[]): Segment[] => ['target', 'api', ...s];

  if (typeof api.url === 'string' && api.url.trim() !== '') {
    let ok = false;
    try {
      const u = new URL(api.url.trim().replaceAll('{page}', '1').replaceAll('{offset}', '0').replaceAll('{cursor}', ''), targetUrl);
      ok = u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) problems.push([at('url'), `must be an http or https URL (absolute or relative to target.url); got "${api.url}"`]);
  }
  if (api.body !== undefined && api.method !== 'POST') problems.push([at('body'), 'a body is sent with method: POST; add method: POST or move the values to target.api.query']);
  if (isMapping(api.headers)) {
    for (const [name, value] of Object.entries(api.headers)) {
      const lower = name.toLowerCase();
      if (!TOKEN.test(name)) problems.push([at('headers', name), `"${name}" is not an HTTP header name`]);
      else if (REFUSED_HEADERS.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) {
        problems.push([at('headers', name), `the header "${name}" cannot be set by a config${lower.startsWith('cookie') || lower === 'authorization' ? ' (a config is stored in plain text: no credentials of yours in it)' : ' (the HTTP client sets it)'}`]);
      }
      if (typeof value === 'string' && /[\r\n\0]/.test(value)) problems.push([at('headers', name), 'a header value may not hold line breaks or NUL']);
    }
  }

  const ex = isMapping(c.extract) ? c.extract : undefined;
  if (ex) {
    if (ex.container !== undefined) problems.push([['extract', 'container'], 'an API config reads its records with extract.records (a JMESPath query), not a CSS container: remove extract.container (or target.api)']);
    if (ex.type === 'table') problems.push([['extract', 'type'], 'type table reads an HTML table; an API config is list (each record) or single (the first record)']);
    if (typeof ex.following_siblings === 'number' && ex.following_siblings !== 0) problems.push([['extract', 'following_siblings'], 'applies to HTML configs only (records spread over sibling elements)']);
    checkQuery(ex.records, ['extract', 'records'], problems);
    for (const [f, i] of mappings(ex.fields)) {
      const fat: Segment[] = ['extract', 'fields', i];
      if (f.selector !== undefined) problems.push([[...fat, 'selector'], 'an API config reads each field by path (a JMESPath query into the record), not a CSS selector']);
      if (f.path === undefined) problems.push([fat, 'missing required key "path" (an API config reads each field by a JMESPath query into the record)']);
      if (f.type === 'attribute' || f.type === 'html' || f.type === 'eval') problems.push([[...fat, 'type'], `type ${String(f.type)} reads an HTML element; an API field is text, link, image_url, count, exists or regex`]);
      checkQuery(f.path, [...fat, 'path'], problems);
    }
  }
  const detail = isMapping(c.detail_fields) ? c.detail_fields : undefined;
  for (const [f, i] of mappings(detail?.fields)) {
    if (f.path !== undefined) problems.push([['detail_fields', 'fields', i, 'path'], 'detail pages are HTML pages: their fields have a selector, not a path']);
  }

  const p = isMapping(c.pagination) ? c.pagination : undefined;
  if (p && typeof p.type === 'string') {
    if (!API_PAGINATION_TYPES.has(p.type)) {
      problems.push([['pagination', 'type'], `type ${p.type} moves through HTML pages; an API config paginates with page, offset, cursor or next_url`]);
    } else {
      const placeholder = PLACEHOLDER_OF[p.type];
      const texts = [typeof api.url === 'string' ? api.url : '', ...(isMapping(api.query) ? Object.values(api.query).map(String) : []), ...stringsOf(api.body)];
      if (placeholder && !texts.some((t) => t.includes(placeholder))) {
        problems.push([['pagination', 'type'], `pagination type ${p.type} fills ${placeholder}: put it in target.api.url, target.api.query or target.api.body`]);
      }
      if (p.type !== 'page' && p.type !== 'offset') {
        for (const k of ['start', 'step'] as const) if (p[k] !== undefined) problems.push([['pagination', k], `applies to pagination types page and offset only`]);
      }
      if (p.type !== 'cursor' && p.cursor_path !== undefined) problems.push([['pagination', 'cursor_path'], 'applies to pagination type cursor only']);
      if (p.type !== 'next_url' && p.next_url_path !== undefined) problems.push([['pagination', 'next_url_path'], 'applies to pagination type next_url only']);
    }
    for (const k of ['cursor_path', 'next_url_path', 'total_path', 'has_more_path'] as const) checkQuery(p[k], ['pagination', k], problems);
  }
  if (c.categories !== undefined) problems.push([['categories'], 'categories are the links of an HTML page; an API config has none: remove categories (or target.api)']);
  if (Array.isArray(c.actions) && c.actions.length) problems.push([['actions'], 'actions act on a page, and an API config loads none: remove actions (or target.api)']);
  return problems;
}

/** The problems of an HTML config (no target.api) that uses keys of API configs. */
export function htmlOnlyProblems(c: Mapping): Problem[] {
  const problems: Problem[] = [];
  const ex = isMapping(c.extract) ? c.extract : undefined;
  if (ex?.records !== undefined) problems.push([['extract', 'records'], 'applies to API configs only (target.api); an HTML config names its items with extract.container']);
  for (const section of ['extract', 'detail_fields'] as const) {
    const fields = isMapping(c[section]) ? (c[section] as Mapping).fields : undefined;
    for (const [f, i] of mappings(fields)) {
      if (f.path !== undefined) problems.push([[section, 'fields', i, 'path'], 'path applies to API configs only (target.api); an HTML field has a selector']);
    }
  }
  const p = isMapping(c.pagination) ? c.pagination : undefined;
  if (p) {
    if (typeof p.type === 'string' && API_PAGINATION_TYPES.has(p.type)) problems.push([['pagination', 'type'], `pagination type ${p.type} steps a JSON API's requests: it needs target.api`]);
    else for (const k of API_PAGINATION_KEYS) if (p[k] !== undefined) problems.push([['pagination', k], 'applies to API configs only (target.api)']);
  }
  return problems;
}
