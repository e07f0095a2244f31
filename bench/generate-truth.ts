// The ground truth of the generate bench (bench/generate.ts) and how a produced config's rows are held against it:
// the records of a saved records page (<corpus>/records/<folder>/records.csv, one line a record as people
// wrote it down), a small CSV parser, the text normalization both sides go through, and when a record's first
// value counts as "found" in the rows. Kept apart from the bench so that a test can use it too
// (test/unit/generate-truth.test.ts).
//
// "Found", in short: both sides normalized (HTML entities decoded, Unicode NFKC, invisible characters and double
// quotation marks dropped, whitespace folded, trimmed, lower-cased); a value is found when some row's text (its values joined with spaces)
// contains it. People marked the places where they cut a long text with "..." or "…" (NFKC turns "…" into "..."):
// such a value is cut there into pieces, and it is found when a row's text contains every piece, in order; a
// trailing "..." is so a prefix match, and a value that is a row's text plus an elision is found in that row.
// Two more leniencies for what was lost on the way: a "?" the CSV wrote for a character its encoding could not
// hold matches any character, and a value is also found with the spaces removed from both sides (a text field
// joins an element's text nodes without a separator: `Apple<br>iPhone 7` gives "AppleiPhone 7").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomUtils, parseDocument } from 'htmlparser2';
import { loadHtml, type Row } from '../lambdas/engine/extract.ts';

/** One record of a records page as people wrote it down. */
interface TruthRecord {
  /** Every CSV value of the record's line, as written (not normalized). */
  values: string[];
  /**
   * The record's first value: its first CSV value that is not blank. On 22 pages people left the first column blank
   * on some or most lines (a thumbnail, a checkbox); the first written value then stands for the record (a blank
   * one would be found in any row).
   */
  first: string;
}

/** The truth of one records page. */
export interface RecordsTruth {
  /** The folder's name, e.g. `shopping--nike-com--shoes-keyword`. */
  folder: string;
  /** The records in page order: one a non-blank line of records.csv. */
  records: TruthRecord[];
  /** How records.csv was decoded: 58 of the 100 files are not UTF-8 (Windows-1252, some mixed with UTF-8; see decodeCsvBytes). */
  csvEncoding: 'utf-8' | 'windows-1252';
  /** The page's bytes as saved. */
  html: Uint8Array;
  /** The charset the page declares in a `<meta>` (lower case), or undefined. */
  charset: string | undefined;
}

/** Windows-1252's characters for the bytes 0x80-0x9f (the rest of its upper half is Latin-1). */
const CP1252_HIGH = new TextDecoder('windows-1252').decode(Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i));

/** Length of the well-formed UTF-8 sequence at `bytes[i]` (a non-ASCII lead byte), or 0 when there is none. */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i]!;
  const n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (n === 0 || i + n > bytes.length) return 0;
  for (let k = 1; k < n; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return 0;
  // Overlong, surrogate and out-of-range forms are not well-formed.
  const b1 = bytes[i + 1]!;
  if ((b === 0xe0 && b1 < 0xa0) || (b === 0xed && b1 > 0x9f) || (b === 0xf0 && b1 < 0x90) || (b === 0xf4 && b1 > 0x8f)) return 0;
  return n;
}

/**
 * Text of a CSV file as its writers saved it: UTF-8 when the whole file is well-formed UTF-8; otherwise each
 * well-formed UTF-8 sequence is read as UTF-8 and every other byte as Windows-1252. 58 of the 100 records.csv are
 * not UTF-8 (saved by a spreadsheet on Windows), and some of those mix both (news--thehill-com: "’" as UTF-8 bytes
 * beside Windows-1252 ones), which a single decoder would turn into "â€™". A UTF-8 byte-order mark is dropped.
 */
export function decodeCsvBytes(bytes: Uint8Array): { text: string; encoding: 'utf-8' | 'windows-1252' } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    // Mixed or plain Windows-1252.
  }
  let out = '';
  let run = 0; // start of the current ASCII/UTF-8 run
  let i = 0;
  const flush = (end: number): void => {
    if (end > run) out += new TextDecoder('utf-8').decode(bytes.subarray(run, end));
  };
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) { i++; continue; }
    const n = utf8SequenceLength(bytes, i);
    if (n) { i += n; continue; }
    flush(i);
    out += b < 0xa0 ? CP1252_HIGH[b - 0x80]! : String.fromCharCode(b);
    run = ++i;
  }
  flush(i);
  return { text: out.replace(/^\ufeff/, ''), encoding: 'windows-1252' };
}

/**
 * Parses CSV text (RFC 4180 and the leniencies real files need) into records of values.
 * - Values are separated by commas, records by CRLF, LF or CR.
 * - A value that starts with `"` is quoted: it runs to the next `"` not followed by another `"`; inside it `""` is
 *   one `"`, and commas and line breaks are part of the value. Characters between the closing quote and the next
 *   comma or line break are appended as written (a stray quote in a sloppy file does not swallow the rest).
 * - A `"` inside an unquoted value is an ordinary character.
 * - Blank lines (nothing but whitespace) are no records; an unterminated quoted value ends at the end of the text.
 * Whitespace around values is kept (records.csv has leading spaces); callers trim.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let value = '';
  let i = 0;
  const n = text.length;
  const endRecord = (): void => {
    record.push(value);
    value = '';
    if (record.length > 1 || record[0]!.trim() !== '') records.push(record);
    record = [];
  };
  while (i < n) {
    const c = text[i]!;
    if (c === '"' && value === '') {
      // A quoted value: up to the closing quote, "" being a literal quote.
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) {
          value += text.slice(i);
          i = n;
          break;
        }
        value += text.slice(i, q);
        if (text[q + 1] === '"') {
          value += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      // Anything after the closing quote up to the separator belongs to the value as written.
      while (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') value += text[i++];
      continue;
    }
    if (c === ',') {
      record.push(value);
      value = '';
      i++;
    } else if (c === '\n' || c === '\r') {
      endRecord();
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      value += c;
      i++;
    }
  }
  if (value !== '' || record.length > 0) endRecord();
  return records;
}

/**
 * The charset a page declares in its first `<meta charset>` or `<meta http-equiv="Content-Type" content="…;
 * charset=…">` (lower case), looked for in its first 4 KiB as a browser's prescan does; undefined when none.
 */
export function metaCharset(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 4096));
  const m = /<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i.exec(head);
  return m?.[1]?.toLowerCase();
}

/**
 * The truth of a records folder: records.csv parsed (every non-blank line is one record, values in page order)
 * and the page's bytes with its declared charset.
 * @throws Error when the folder has no records.csv or page.html, or records.csv has no record.
 */
export function loadRecordsTruth(dir: string, folder: string): RecordsTruth {
  const { text, encoding } = decodeCsvBytes(readFileSync(join(dir, folder, 'records.csv')));
  const records = parseCsv(text).map((values): TruthRecord => ({ values, first: values.find((v) => v.trim() !== '') ?? '' }));
  if (records.length === 0) throw new Error(`${folder}/records.csv has no record`);
  const html = readFileSync(join(dir, folder, 'page.html'));
  return { folder, records, csvEncoding: encoding, html, charset: metaCharset(html) };
}

/**
 * Decodes HTML character references (`&amp;`, `&eacute;`, `&#8217;`, `&#x2019;`, and the legacy ones without a
 * semicolon) as an HTML parser does in text. Values people copied from a page's source may hold them.
 */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  // Text content of a fragment in which no tag can open: htmlparser2 decodes the references, '<' stays text.
  return DomUtils.textContent(parseDocument(text.replace(/</g, '&lt;')));
}

/** Characters that do not show: zero-width spaces and joiners, soft hyphens, direction marks, BOM. */
const INVISIBLE = /[\u00ad\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\ufeff]/g;
/** Double quotation marks, straight and typographic (after NFKC): the records' writers lost them. */
const DOUBLE_QUOTES = /["\u201c\u201d\u201e\u201f\u00ab\u00bb]/g;

/**
 * The form both sides are compared in: HTML entities decoded, Unicode NFKC (the ellipsis "…" becomes "...",
 * no-break and other odd spaces become spaces, full-width forms ASCII, "™" "TM"), invisible characters dropped,
 * double quotation marks dropped (records.csv lost them: the page's `Stuart A. "Stu" Adam` was written
 * `Stuart A. Stu Adam`), runs of whitespace folded to one space, trimmed, lower-cased.
 * @param o.keepCase do not lower-case, keep double quotes (the records README's "written as shown" check)
 */
export function normalizeText(text: string, o: { keepCase?: boolean } = {}): string {
  let t = decodeEntities(text).normalize('NFKC').replace(INVISIBLE, '').replace(/\ufffd/g, '?');
  if (!o.keepCase) t = t.replace(DOUBLE_QUOTES, ' ').toLowerCase();
  return t.replace(/\s+/g, ' ').trim();
}

/** A row's text for matching: its values (arrays flattened, numbers and booleans as written, nulls skipped) joined with spaces, normalized. */
export function rowText(row: Row): string {
  const parts: string[] = [];
  const add = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (Array.isArray(v)) v.forEach(add);
    else if (typeof v === 'object') Object.values(v).forEach(add);
    else parts.push(String(v));
  };
  Object.values(row).forEach(add);
  return normalizeText(parts.join(' '));
}

/** An elision people wrote where they cut a text: three or more dots (after NFKC, "…" is "..."). */
const ELISION = /\s*\.{3,}\s*/;
/**
 * "?": where the CSV's encoding could not hold a character people's tool wrote "?" ("Ji?í Reinberger" for
 * "Jiří", "Metallo-?-Lactamase" for "β", "??" for an emoji, which is two UTF-16 units).
 */
const QUESTION_MARKS = /\?+/g;
/**
 * The pieces of a normalized value that must be found, in order: the value cut at its elisions, empty pieces
 * dropped. A value without an elision is one piece; "..." alone gives none.
 */
function valuePieces(normalized: string): string[] {
  return normalized.split(ELISION).map((p) => p.trim()).filter(Boolean);
}

/** A test of whether a text holds a value; compiled once per value, run on many texts. */
type ValueTest = (text: string) => boolean;

/**
 * Compiles the "found" rule for one value (already normalized):
 * - the text contains the value; or
 * - the value has elisions ("..." where people cut a long text) and the text contains each piece between them, in
 *   order: a trailing "..." makes the value a prefix match, and a value that is a row's text plus an elision is
 *   found in that row;
 * - in either, a run of n "?" matches 1 to n characters of any kind (see QUESTION_MARKS; a real question mark still
 *   matches itself), when the value has at least 3 letters besides: "??????" matches nothing.
 * An empty value (or one that is only an elision) is never found.
 */
function compileValue(value: string): ValueTest {
  const pieces = valuePieces(value);
  if (pieces.length === 0) return () => false;
  const lost = value.includes('?') && (value.match(/\p{L}/gu)?.length ?? 0) >= 3;
  if (!lost) {
    return (text) => {
      if (text.includes(value)) return true;
      if (pieces.length === 1 && pieces[0] === value) return false;
      let at = 0;
      for (const p of pieces) {
        const k = text.indexOf(p, at);
        if (k < 0) return false;
        at = k + p.length;
      }
      return true;
    };
  }
  const escape = (p: string): string =>
    p.replace(/[.*+^${}()|[\]\\]/g, '\\$&').replace(QUESTION_MARKS, (q) => `[^]{1,${q.length}}`);
  const whole = new RegExp(escape(value), 'u');
  const inOrder = new RegExp(pieces.map(escape).join('[^]*?'), 'u');
  return (text) => whole.test(text) || inOrder.test(text);
}

/** Whether a normalized value is found in a normalized text (see {@link compileValue}). */
export function foundIn(value: string, text: string): boolean {
  return compileValue(value)(text);
}

/** What {@link matchValues} found. */
export interface ValueMatch {
  /** Values looked for. */
  total: number;
  found: number;
  /** found / total, 0 when there is nothing to look for. */
  share: number;
  /** The first values not found, as written (at most 5). */
  missing: string[];
}

/**
 * Which of the truth's values are found in some row (see {@link compileValue}); each value is looked for in every
 * row, so the rows' order and extra rows do not matter here (the row count is checked apart).
 */
export function matchValues(values: string[], rows: Row[]): ValueMatch {
  return matchValuesInTexts(values, rows.map((r) => rowText(r)));
}

/** A normalized text without its spaces: the engine's text of `Apple<br>iPhone 7` is "AppleiPhone 7". */
const compact = (text: string): string => text.replace(/ /g, '');

/**
 * {@link matchValues} over texts already normalized (the rows' texts, or a page's text). A value not found is
 * looked for once more with the spaces removed from it and from the texts: a text field joins an element's text
 * nodes without a separator, so a row can lack a space the page shows between two elements or at a `<br>`.
 * @param o.keepCase normalize the values as the texts were (see {@link normalizeText})
 */
function matchValuesInTexts(values: string[], texts: string[], o: { keepCase?: boolean } = {}): ValueMatch {
  let found = 0;
  const missing: string[] = [];
  let compactTexts: string[] | undefined;
  for (const v of values) {
    const nv = normalizeText(v, o);
    if (texts.some(compileValue(nv)) || (compactTexts ??= texts.map(compact)).some(compileValue(compact(nv)))) found++;
    else if (missing.length < 5) missing.push(v);
  }
  return { total: values.length, found, share: values.length ? found / values.length : 0, missing };
}

/** Elements whose text is no page text. */
const NOT_TEXT = 'script, style, noscript, template';

/**
 * The visible text of a page as two normalized strings: its text nodes joined without a separator (text split by
 * inline markup reads as one word) and joined with spaces (cells and blocks stay apart), script and style
 * excluded. A value "appears in the page text" when either holds it.
 * @param o.keepCase see {@link normalizeText}
 */
function pageTexts(html: string, o: { keepCase?: boolean } = {}): [string, string] {
  const $ = loadHtml(html);
  $(NOT_TEXT).remove();
  const nodes: string[] = [];
  const walk = (node: { type: string; data?: string; children?: unknown[] }): void => {
    if (node.type === 'text') nodes.push(node.data ?? '');
    for (const c of (node.children ?? []) as Array<{ type: string }>) walk(c);
  };
  walk($.root()[0] as unknown as { type: string; children: unknown[] });
  return [normalizeText(nodes.join(''), o), normalizeText(nodes.join(' '), o)];
}

/** How a records page's first values relate to its own text. */
export interface PageCheck {
  /**
   * Share of first values in the page text as the records README checks it (entities decoded, NFKC, whitespace
   * folded, elisions; case and double quotes kept). Below 0.8 on 4 of the 100 pages: written down differently.
   */
  asShown: number;
  writtenAsShown: boolean;
  /**
   * Share of first values the bench's own rule finds in the page text (case folded, quotes dropped, lost
   * characters): the most a config's rows can reach on this page.
   */
  ceiling: number;
}

/** Checks whether people wrote a records page's first values as the page shows them (see {@link PageCheck}). */
export function checkPage(truth: RecordsTruth, html: string, threshold = 0.8): PageCheck {
  const firsts = truth.records.map((r) => r.first);
  const asShown = matchValuesInTexts(firsts, pageTexts(html, { keepCase: true }), { keepCase: true }).share;
  const ceiling = matchValuesInTexts(firsts, pageTexts(html)).share;
  return { asShown, writtenAsShown: asShown >= threshold, ceiling };
}

/** Shortest value (characters, normalized) that value recall looks for. */
const RECALL_MIN_CHARS = 3;
/** Characters of a value that value recall looks for in the rows' values. */
const RECALL_PREFIX_CHARS = 40;

/**
 * The values value recall looks for on a records page (issue 23): every cell of records.csv of at least 3
 * characters (normalized as {@link normalizeText}) that appears in the page's text (the same test as
 * {@link checkPage}'s ceiling: entities decoded, whitespace folded, case folded), normalized. A cell people wrote
 * differently from the page is left out: no config can find it.
 */
export function recallValues(truth: RecordsTruth, html: string): string[] {
  const texts = pageTexts(html);
  const compactTexts = texts.map(compact);
  const out: string[] = [];
  for (const record of truth.records) {
    for (const cell of record.values) {
      const v = normalizeText(cell);
      if (v.replace(/\.{3,}/g, '').trim().length < RECALL_MIN_CHARS) continue;
      if (texts.some(compileValue(v)) || compactTexts.some(compileValue(compact(v)))) out.push(v);
    }
  }
  return out;
}

/** What {@link valueRecall} found. */
export interface RecallMatch {
  /** Values looked for (see {@link recallValues}). */
  total: number;
  found: number;
  /** found / total; 1 when there is nothing to look for. */
  share: number;
}

/**
 * Value recall of a run's rows on a records page (issue 23): the share of the page's record values
 * ({@link recallValues}, already normalized) whose first 40 characters are found in one of the rows' values: a
 * single value (each element of a list on its own), normalized the same way (so case-insensitive), with the
 * leniencies of {@link compileValue} (elisions, characters the CSV lost) and the spaces-removed retry. A value
 * must be one field's, not two fields' joined: a row whose columns run together does not hold its parts.
 */
export function valueRecall(values: string[], rows: Row[]): RecallMatch {
  const cells: string[] = [];
  const add = (v: unknown): void => {
    if (v === null || v === undefined || v === '') return;
    if (Array.isArray(v)) v.forEach(add);
    else if (typeof v === 'object') Object.values(v).forEach(add);
    else cells.push(normalizeText(String(v)));
  };
  for (const row of rows) Object.values(row).forEach(add);
  const unique = [...new Set(cells)].filter(Boolean);
  let compactCells: string[] | undefined;
  let found = 0;
  for (const v of values) {
    const head = v.length > RECALL_PREFIX_CHARS ? v.slice(0, RECALL_PREFIX_CHARS).trim() : v;
    if (unique.some(compileValue(head)) || (compactCells ??= unique.map(compact)).some(compileValue(compact(head)))) found++;
  }
  return { total: values.length, found, share: values.length ? found / values.length : 1 };
}
