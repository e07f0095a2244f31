/**
 * Exports of a job's rows as files, the one implementation shared by `GET /api/v1/jobs/{id}/results/?format=`,
 * the CLI and the extension (docs/exports.md): JSON (a pretty-printed array), CSV (RFC 4180, UTF-8 with a
 * byte-order mark) and XLSX (Office Open XML, ECMA-376, written by write-excel-file).
 * Columns are in field order; nested values (arrays, objects) become their JSON text in CSV and XLSX, the
 * same rule in both ({@link flattenValue}), or a list its items joined (`lists: 'join'`); JSON keeps the values as
 * they are. A CSV text cell that a spreadsheet
 * would read as a formula (OWASP's CSV injection: it starts with `=`, `+`, `-`, `@`, a tab or a CR) gets a `'` in
 * front unless `raw` is asked for ({@link csvField}); XLSX text is always a string cell, never a formula.
 */
import writeXlsxFile from 'write-excel-file/universal';
import type { Cell } from 'write-excel-file/universal';

/** The export formats, in the order docs/exports.md lists them. */
export const EXPORT_FORMATS = ['json', 'csv', 'xlsx'] as const;

/** One export format. */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * How CSV and XLSX write a list (a `multiple: true` field's value; docs/exports.md, "Lists"): `json`, its JSON text
 * (`["love","life"]`, lossless; the default), or `join`, its items joined with a separator (`love; life`), for people
 * reading a spreadsheet.
 */
export type ListStyle = 'json' | 'join';

/** The list styles, the default first. */
export const LIST_STYLES: readonly ListStyle[] = ['json', 'join'];

/** The separator of `lists: 'join'` unless one is given (`list_separator` over HTTP, `listSeparator` here). */
export const DEFAULT_LIST_SEPARATOR = '; ';

/** Longest list separator accepted, characters (Unicode code points: an emoji is one). */
export const MAX_LIST_SEPARATOR = 10;

/** How CSV and XLSX cells are written: what {@link exportRows} and the service's export builders pass on. */
export interface CellOptions {
  /**
   * CSV only: write text cells exactly as scraped, without the `'` that {@link csvField} puts before a cell a
   * spreadsheet would run as a formula. For programs that read the CSV, never for a file opened in a spreadsheet.
   * @default false
   */
  raw?: boolean;
  /** Lists as JSON text or joined ({@link ListStyle}). Ignored by JSON. @default 'json' */
  lists?: ListStyle;
  /** What goes between a list's items with `lists: 'join'`, 1-10 characters. @default '; ' ({@link DEFAULT_LIST_SEPARATOR}) */
  listSeparator?: string;
}

/** The list options of {@link CellOptions}: what {@link flattenValue} reads. */
export type ListOptions = Pick<CellOptions, 'lists' | 'listSeparator'>;

/** Options of {@link exportRows}. */
export interface ExportOptions extends CellOptions {
  /** The columns and their order; default {@link exportColumns} of the rows. Ignored by JSON. */
  columns?: readonly string[];
  /** XLSX worksheet name; default `Rows` (cleaned to Excel's rules by {@link sheetName}). */
  sheetName?: string;
}

/** An export file: its bytes, its media type and the file-name extension (without a dot). */
export interface ExportFile {
  /** The file's bytes (a Uint8Array, so the same code runs in Node and in the browser extension). */
  body: Uint8Array;
  contentType: string;
  extension: string;
}

/** A cell after flattening: a scalar, or null for an empty cell. */
type FlatValue = string | number | boolean | null;

/** Media type of each format (RFC 8259 JSON, RFC 4180 / RFC 7111 CSV, ECMA-376 XLSX as IANA registers it). */
const EXPORT_CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** UTF-8 byte-order mark: spreadsheet programs (Excel) read a CSV file as UTF-8 only with it. */
const BOM = '\uFEFF';

/** Longest worksheet name Excel accepts, in characters. */
const MAX_SHEET_NAME = 31;

/** Whether `value` names an export format. */
export function isExportFormat(value: unknown): value is ExportFormat {
  return typeof value === 'string' && (EXPORT_FORMATS as readonly string[]).includes(value);
}

/**
 * The columns of `rows` in field order: every key in the order it first appears across the rows (the engine
 * builds each row in the config's field order, lambdas/engine/extract.ts, so this is the field order; a key
 * only later rows have comes after the earlier ones).
 */
export function exportColumns(rows: readonly Record<string, unknown>[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

/**
 * One value as a CSV or XLSX cell (docs/exports.md, "Flattening"): null, undefined and a missing field are an
 * empty cell; strings, booleans and finite numbers stay as they are; arrays and objects (a `multiple` field's
 * list, a nested record) become their JSON text (`["a","b"]`, `{"k":1}`), lossless and read back with any JSON
 * parser; anything else (NaN, Infinity, a bigint, a Date) becomes its text (`String`, a Date's ISO 8601 form).
 * With `lists: 'join'` an array is instead its items, each flattened as a cell of its own would be (null as nothing),
 * joined with `listSeparator` (docs/exports.md, "Lists"): `love; life`; an object stays its JSON text.
 */
export function flattenValue(value: unknown, options: ListOptions = {}): FlatValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value) && options.lists === 'join') {
    // Each item as its own cell would be (a nested list or object as its JSON text, null as nothing), then joined.
    return value.map((item) => { const flat = flattenValue(item); return flat === null ? '' : String(flat); }).join(options.listSeparator ?? DEFAULT_LIST_SEPARATOR);
  }
  if (typeof value === 'object') return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return String(value);
}

/** A problem with cell options: the option's name on the wire (`lists`, `list_separator`) and what is wrong. */
export interface CellOptionProblem { path: 'lists' | 'list_separator'; message: string }

/**
 * What is wrong with cell options that came from outside (a query string, a form), `[]` when nothing is: `lists` one of
 * {@link LIST_STYLES}; `listSeparator` only with `lists: 'join'`, 1-{@link MAX_LIST_SEPARATOR} characters.
 */
export function cellOptionProblems(o: CellOptions): CellOptionProblem[] {
  const problems: CellOptionProblem[] = [];
  if (o.lists !== undefined && !LIST_STYLES.includes(o.lists)) problems.push({ path: 'lists', message: `must be one of ${LIST_STYLES.join(', ')}` });
  if (o.listSeparator !== undefined) {
    const chars = [...o.listSeparator].length;
    if (o.lists !== 'join') problems.push({ path: 'list_separator', message: 'goes with lists=join' });
    else if (chars < 1 || chars > MAX_LIST_SEPARATOR) problems.push({ path: 'list_separator', message: `must be 1 to ${MAX_LIST_SEPARATOR} characters` });
  }
  return problems;
}

/**
 * `o`, checked by {@link cellOptionProblems}.
 * @throws TypeError naming each problem (`lists must be one of json, join`).
 */
export function checkCellOptions(o: CellOptions): CellOptions {
  const problems = cellOptionProblems(o);
  if (problems.length) throw new TypeError(problems.map((p) => `${p.path} ${p.message}`).join('; '));
  return o;
}

/**
 * First characters that make a spreadsheet program (Excel, LibreOffice Calc, Google Sheets) read a CSV cell as a
 * formula: `=`, `+`, `-`, `@`, tab and carriage return (OWASP, "CSV Injection").
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A plain decimal number (`-5`, `+1.5`, `-2e3`): spreadsheets read it as that number, never as a formula. */
const PLAIN_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Whether a text cell would be read as a formula by a spreadsheet program: it starts with one of
 * {@link FORMULA_START} and is not a plain number. Numbers and booleans never are: a number's text (`-5`) is read as
 * that number, and so is a text cell holding only a signed number.
 */
function looksLikeFormula(value: FlatValue): value is string {
  return typeof value === 'string' && FORMULA_START.test(value) && !PLAIN_NUMBER.test(value);
}

/**
 * One CSV field (RFC 4180 section 2): quoted, with quotes doubled, when it holds a comma, quote, CR or LF. A text
 * value that {@link looksLikeFormula} is written with a `'` in front (`=HYPERLINK(…)` → `'=HYPERLINK(…)`), which
 * spreadsheets show as text, unless `raw` is true (docs/exports.md, "CSV and formula injection").
 */
export function csvField(value: FlatValue, raw = false): string {
  if (value === null) return '';
  const text = !raw && looksLikeFormula(value) ? `'${value}` : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The CSV text of `rows`: a byte-order mark, a header line of the columns, a line per row, every line ended by
 * CRLF (RFC 4180). No rows and no columns give the byte-order mark alone. Header and value cells that
 * {@link looksLikeFormula} get a `'` in front unless `raw` ({@link csvField}).
 */
export function rowsCsv(rows: readonly Record<string, unknown>[], columns: readonly string[] = exportColumns(rows), raw = false, lists: ListOptions = {}): string {
  if (!columns.length) return BOM;
  const line = (cells: FlatValue[]) => `${cells.map((c) => csvField(c, raw)).join(',')}\r\n`;
  let out = BOM + line([...columns]);
  for (const row of rows) out += line(columns.map((c) => flattenValue(Object.hasOwn(row, c) ? row[c] : null, lists)));
  return out;
}

/** A worksheet name Excel accepts: `: \ / ? * [ ]` replaced by `_`, at most 31 characters, `Rows` when empty. */
export function sheetName(name: string | undefined): string {
  const clean = (name ?? '').replace(/[:\\/?*[\]]/g, '_').replace(/^'+|'+$/g, '').slice(0, MAX_SHEET_NAME).trim();
  return clean || 'Rows';
}

/**
 * A string as an XLSX cell's text: a literal `_xHHHH_` is written `_x005F_xHHHH_` so that readers do not decode
 * it as an escaped character (ECMA-376 Part 1, 22.9.2.19 ST_Xstring).
 */
function xlsxText(text: string): string {
  return text.replace(/_(x[0-9A-Fa-f]{4}_)/g, '_x005F_$1');
}

/**
 * One XLSX cell of a flattened value, typed: a number cell, a boolean cell, a string cell or an empty cell. A string
 * is written as a shared-string cell (`t="s"`, write-excel-file's `String` type), never as a formula (`<f>`, which it
 * writes only for the type `'Formula'`), so text that starts with `=` stays text: no `'` is added.
 */
function xlsxCell(value: FlatValue): Cell {
  if (value === null) return null;
  if (typeof value === 'string') return { value: xlsxText(value), type: String };
  if (typeof value === 'number') return { value, type: Number };
  return { value, type: Boolean };
}

/**
 * The XLSX workbook of `rows`: one worksheet, a bold header row of the columns (frozen), a row per row; cells
 * typed as {@link xlsxCell} says. Strings are never written as formulas.
 */
async function rowsXlsx(rows: readonly Record<string, unknown>[], columns: readonly string[] = exportColumns(rows), name?: string, lists: ListOptions = {}): Promise<Uint8Array> {
  const data: Cell[][] = [];
  if (columns.length) {
    data.push(columns.map((c) => ({ value: xlsxText(c), type: String, fontWeight: 'bold' as const })));
    for (const row of rows) data.push(columns.map((c) => xlsxCell(flattenValue(Object.hasOwn(row, c) ? row[c] : null, lists))));
  }
  const blob = await writeXlsxFile(data, { sheet: sheetName(name), ...(columns.length ? { stickyRowsCount: 1 } : {}) }).toBlob();
  return new Uint8Array(await blob.arrayBuffer());
}

/**
 * Exports `rows` as a file of `format` (docs/exports.md).
 * - `json`: the rows as a JSON array pretty-printed with 2 spaces, UTF-8; values as they are.
 * - `csv`: {@link rowsCsv}, UTF-8; formula-like text cells prefixed with `'` unless `options.raw`.
 * - `xlsx`: {@link rowsXlsx}.
 * In CSV and XLSX a list is its JSON text, or its items joined with `options.listSeparator` with `options.lists: 'join'`.
 * @throws TypeError for a format that is not one of {@link EXPORT_FORMATS}.
 */
export async function exportRows(rows: readonly Record<string, unknown>[], format: ExportFormat, options: ExportOptions = {}): Promise<ExportFile> {
  const utf8 = (text: string) => new TextEncoder().encode(text);
  const file = (body: Uint8Array): ExportFile => ({ body, contentType: EXPORT_CONTENT_TYPES[format], extension: format });
  switch (format) {
    case 'json':
      return file(utf8(JSON.stringify(rows, null, 2)));
    case 'csv':
      return file(utf8(rowsCsv(rows, options.columns ?? exportColumns(rows), options.raw ?? false, options)));
    case 'xlsx':
      return file(await rowsXlsx(rows, options.columns ?? exportColumns(rows), options.sheetName, options));
    default:
      throw new TypeError(`Unknown export format ${JSON.stringify(format)}; one of ${EXPORT_FORMATS.join(', ')}`);
  }
}

/** Text gathered into one piece of {@link exportRowsInPieces}, in characters (about 256 KiB of UTF-8 and up). */
const PIECE_CHARS = 256 * 1024;

/**
 * The bytes of {@link exportRows} in pieces, made as they go where the format allows (issue 37: an export of 60,000
 * rows is written while it is made, not held whole first): JSON and CSV a run of rows at a time, XLSX whole (its zip
 * is written at once by write-excel-file) and then cut. The pieces joined are exactly `exportRows(rows, format,
 * options).body` (test/unit/rows-export-pieces.test.ts; XLSX up to its zip entries' times, which write-excel-file
 * sets to the moment it writes).
 * @param pieceChars text gathered per piece (JSON, CSV), and bytes per piece of XLSX.
 * @throws TypeError for a format that is not one of {@link EXPORT_FORMATS}.
 */
export async function* exportRowsInPieces(rows: readonly Record<string, unknown>[], format: ExportFormat, options: ExportOptions = {}, pieceChars = PIECE_CHARS): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  let text = '';
  switch (format) {
    case 'json':
      // JSON.stringify(rows, null, 2): each row at one level of indent, `,\n` between them.
      if (!rows.length) {
        yield encoder.encode('[]');
        return;
      }
      text = '[\n';
      for (let i = 0; i < rows.length; i++) {
        text += `${i ? ',\n' : ''}  ${(JSON.stringify(rows[i], null, 2) ?? 'null').replaceAll('\n', '\n  ')}`;
        if (text.length >= pieceChars) {
          yield encoder.encode(text);
          text = '';
        }
      }
      yield encoder.encode(`${text}\n]`);
      return;
    case 'csv': {
      const columns = options.columns ?? exportColumns(rows);
      const raw = options.raw ?? false;
      if (!columns.length) {
        yield encoder.encode(BOM);
        return;
      }
      const line = (cells: FlatValue[]) => `${cells.map((c) => csvField(c, raw)).join(',')}\r\n`;
      text = BOM + line([...columns]);
      for (const row of rows) {
        text += line(columns.map((c) => flattenValue(Object.hasOwn(row, c) ? row[c] : null, options)));
        if (text.length >= pieceChars) {
          yield encoder.encode(text);
          text = '';
        }
      }
      if (text) yield encoder.encode(text);
      return;
    }
    case 'xlsx': {
      const body = await rowsXlsx(rows, options.columns ?? exportColumns(rows), options.sheetName, options);
      for (let at = 0; at < body.length || at === 0; at += pieceChars) yield body.slice(at, at + pieceChars);
      return;
    }
    default:
      throw new TypeError(`Unknown export format ${JSON.stringify(format)}; one of ${EXPORT_FORMATS.join(', ')}`);
  }
}

/** The media type and file-name extension of an export format (the `contentType` and `extension` of {@link exportRows}). */
export function exportFileType(format: ExportFormat): { contentType: string; extension: string } {
  return { contentType: EXPORT_CONTENT_TYPES[format], extension: format };
}
