/**
 * Config suggestion from one page, without an LLM and without loading anything: the heuristic generator's
 * record detection (./analyze.ts), field inference and naming (./fields.ts) and pager detection
 * (./navigation.ts) over HTML the caller already has, and the YAML writer both use. The browser extension's
 * "suggest" button runs this on the live page (Instant Data Scraper's main feature, with a config to keep);
 * the heuristic generator (./heuristic.ts) adds page loading, rendering, detail pages and trial runs on top.
 * Imports nothing from Node.
 */
import { Document, isMap, isSeq } from 'yaml';
import { parseConfig, type FieldSpec } from '../engine/config.ts';
import { compileFields, extractItems, type Row } from '../engine/extract.ts';
import { CodedError } from '../errors.ts';
import { analyzePage, type RecordCandidate } from './analyze.ts';
import { findColumns, nameColumns, recordLayout } from './fields.ts';
import { findPager } from './navigation.ts';

/**
 * Writes a config as YAML in the order of docs/config-language.md, one line per field (flow mappings for
 * `extract.fields` and `detail_fields.fields`, block mappings for `pagination` and `categories`).
 * @param draft a config as plain data, keys in the order they should be written.
 */
export function writeConfigYaml(draft: object): string {
  const doc = new Document(draft);
  const flowFields = (path: string[]) => {
    const seq = doc.getIn(path, true);
    if (isSeq(seq)) for (const item of seq.items) if (isMap(item)) item.flow = true;
  };
  flowFields(['extract', 'fields']);
  flowFields(['detail_fields', 'fields']);
  for (const key of ['pagination', 'categories']) {
    const node = doc.get(key, true);
    if (isMap(node)) node.flow = false;
  }
  return doc.toString({ lineWidth: 0, flowCollectionPadding: true });
}

/** Share of rows where a field has a value (an empty list counts as none). */
export function filledShare(rows: readonly Row[], name: string): number {
  if (!rows.length) return 0;
  return rows.filter((r) => r[name] !== null && r[name] !== undefined && r[name] !== '' && !(Array.isArray(r[name]) && !(r[name] as unknown[]).length)).length / rows.length;
}

/** A suggested config and what it found on the page. */
export interface Suggestion {
  /** The config as YAML, ready to edit and save. */
  yaml: string;
  /** The records' container selector. */
  container: string;
  /** Field names in order. */
  fields: string[];
  /** The rows the config extracts from this page (all of them). */
  rows: Row[];
  /** What was found and tried, for the user. */
  notes: string[];
}

/** Options of {@link suggestConfig}. */
export interface SuggestOptions {
  /** The config's name. @default "Records on <host>" */
  name?: string;
  /** `pagination.max_pages` when a pager is found. @default 10 */
  maxPages?: number;
  /** Candidates tried at most. @default 4 */
  maxAttempts?: number;
}

/**
 * Suggests a config for the records of a page: the best repeated block whose inferred fields extract rows
 * with values (a candidate whose main fields are mostly empty is skipped for the next), with every
 * descriptive column as a field and the page's pager, if any, as `pagination`.
 * @param html the page's HTML (the live DOM serialised, in the extension).
 * @param url the page's URL (the base of links, and `target.url`).
 * @throws CodedError `generation_failed` when no repeated block gives rows (the message says what was tried).
 */
export function suggestConfig(html: string, url: string, o: SuggestOptions = {}): Suggestion {
  const analysis = analyzePage(html, url);
  const { $ } = analysis;
  if (!analysis.candidates.length) throw new CodedError('generation_failed', `Found no repeated blocks of content on ${url}: nothing looks like a list of items`);
  let host = '';
  try {
    host = new URL(url).hostname.replace(/^www\./, '');
  } catch {
    // not a URL: the name goes without a host
  }
  const pager = findPager($, url);
  const tried: string[] = [];
  for (const candidate of analysis.candidates.slice(0, o.maxAttempts ?? 4)) {
    const fields = fieldsOf(candidate, $, url);
    if (!fields.length) {
      tried.push(`${candidate.selector} (${candidate.count} items): no fields found`);
      continue;
    }
    const draft: Record<string, unknown> = {
      version: '2.0',
      name: o.name ?? `Records on ${host || 'this page'}`,
      description: `Suggested from the ${candidate.count} repeated blocks of ${url}`,
      target: { url, engine: 'auto' },
      extract: { container: candidate.selector, type: 'list', ...(candidate.span ? { following_siblings: candidate.span } : {}), fields },
    };
    if (pager?.type === 'click') draft.pagination = { type: 'click', selector: pager.selector, max_pages: o.maxPages ?? 10 };
    else if (pager?.type === 'url') draft.pagination = { type: 'url', url_pattern: pager.urlPattern, max_pages: o.maxPages ?? 10 };
    const yaml = writeConfigYaml(draft);
    const config = parseConfig(yaml);
    const rows = extractItems($, config.extract, compileFields(config.extract.fields), url);
    const named = config.extract.fields.filter((f) => f.type !== 'link' && f.type !== 'image_url');
    const mainFilled = named.length ? Math.max(...named.map((f) => filledShare(rows, f.name))) : 1;
    if (!rows.length || mainFilled < 0.5) {
      tried.push(`${candidate.selector}: ${rows.length} row(s)${rows.length ? ' with empty fields' : ''}`);
      continue;
    }
    const notes = [`${candidate.count} records in ${candidate.selector}`, ...(tried.length ? [`skipped: ${tried.join('; ')}`] : []), pager ? `pagination: ${pager.how}` : 'no pager found: the config reads this page'];
    return { yaml, container: candidate.selector, fields: config.extract.fields.map((f) => f.name), rows, notes };
  }
  throw new CodedError('generation_failed', `No repeated block of ${url} gave rows. Tried: ${tried.join('; ')}`, tried.map((t) => ({ tried: t })));
}

function fieldsOf(candidate: RecordCandidate, $: ReturnType<typeof analyzePage>['$'], url: string): FieldSpec[] {
  return nameColumns(findColumns($, candidate.items, url, recordLayout(candidate)), []).fields;
}
