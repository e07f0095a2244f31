// Prompt-named field recall of the generate bench (issue 36 item 4): which columns of a records page's records.csv
// are the fields a user would name (bench/generate-fields.json for development pages, bench/generate-fields-test.json
// for test pages; labelled once, by a labelling pass that is not the generator's developer for the test side), the
// prompt that names them ("every listing with its title, price and postage"), and whether the config's column of
// that name holds them. Kept apart from the bench so that the corpus tests use the same judgement
// (test/corpus/generator-named-fields.test.ts).
//
// A named field is RIGHT when the rows have a column of exactly the field's name and at least 80% of the labelled
// values (each record's cells of the field's columns joined with a space, blank ones left out; a list field's items
// are also joined so) are found in that column: a price
// by its amount (`CA$13.46` is 13.46, whatever the transform made of it), anything else by its normalized text
// (bench/generate-truth.ts `normalizeText`): the column's value holds the label's first 40 characters (also with the
// spaces removed from both), or holds it as the bench's "found" rule says (`foundIn`: a label with "..." where people
// cut a long text is found when the value holds each piece, in order), or the label holds a column value of at least
// half its length.
import { existsSync, readFileSync } from 'node:fs';
import type { Row } from '../lambdas/engine/extract.ts';
import type { FieldKind } from '../lambdas/generator/prompt.ts';
import { foundIn, normalizeText, type RecordsTruth } from './generate-truth.ts';

/** One labelled field of a page: its prompt word, its kind, the records.csv columns (0-based) its value is made of. */
export interface FieldLabel {
  name: string;
  kind: FieldKind;
  columns: number[];
}

/** A page's labels: what its records are called (`listing`, `release`), and its fields (the title first). */
export interface PageLabels {
  item: string;
  fields: FieldLabel[];
}

/** A named field's truth: its name and kind, and one value per record (blank: the record shows none). */
export interface NamedTruth {
  name: string;
  kind: FieldKind;
  values: string[];
}

/** How one named field came out. */
export interface NamedMatch {
  name: string;
  /** The rows have a column of this name. */
  present: boolean;
  /** Labelled values (non-blank). */
  total: number;
  /** Of them, found in the column. */
  found: number;
  right: boolean;
  /** A few values not found (development pages only are printed). */
  missing: string[];
}

/** Share of a field's values that must be found in its column. */
export const NAMED_VALUES_NEEDED = 0.8;

/**
 * Reads a labels file (`{ about, pages: { <folder>: { item, fields: [{ name, kind, columns }] } } }`).
 * @returns folder -> labels; an empty map when the file does not exist.
 * @throws Error when a label is malformed (a name that is not snake case, a column that is not an index, a duplicate).
 */
export function loadFieldLabels(file: string): Map<string, PageLabels> {
  if (!existsSync(file)) return new Map();
  const json = JSON.parse(readFileSync(file, 'utf8')) as { pages?: Record<string, PageLabels> };
  const out = new Map<string, PageLabels>();
  for (const [folder, p] of Object.entries(json.pages ?? {})) {
    const names = new Set<string>();
    for (const f of p.fields) {
      if (!/^[a-z][a-z0-9_]*$/.test(f.name) || names.has(f.name)) throw new Error(`${file}: ${folder}: bad or repeated field name ${JSON.stringify(f.name)}`);
      if (!f.columns.length || f.columns.some((c) => !Number.isInteger(c) || c < 0)) throw new Error(`${file}: ${folder}: ${f.name}: columns must be indexes`);
      names.add(f.name);
    }
    if (!p.item || !p.fields.length) throw new Error(`${file}: ${folder}: an item noun and at least one field are needed`);
    out.set(folder, p);
  }
  return out;
}

/** The prompt that names a page's fields: `every listing with its title, price and postage`. */
export function namedPrompt(p: PageLabels): string {
  const words = p.fields.map((f) => f.name.replace(/_/g, ' '));
  const list = words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
  return `every ${p.item} with its ${list}`;
}

/** A page's named fields with their values, record by record. */
export function namedTruth(p: PageLabels, truth: RecordsTruth): NamedTruth[] {
  return p.fields.map((f) => ({
    name: f.name, kind: f.kind,
    values: truth.records.map((r) => f.columns.map((c) => (r.values[c] ?? '').trim()).filter(Boolean).join(' ')),
  }));
}

/** The first amount in a text, as a number (`CA$1,299.50` 1299.5, `19,99 €` 19.99), or null. */
export function amountOf(text: string): number | null {
  const m = /\d[\d.,]*/.exec(text.replace(/\s(?=\d{3}\b)/g, ''));
  if (!m) return null;
  let s = m[0].replace(/[.,]$/, '');
  const lastDot = s.lastIndexOf('.');
  const lastComma = s.lastIndexOf(',');
  if (lastDot >= 0 && lastComma >= 0) s = lastDot > lastComma ? s.replace(/,/g, '') : s.replace(/\./g, '').replace(',', '.');
  else if (lastComma >= 0) s = /,\d{1,2}$/.test(s) ? s.replace(',', '.') : s.replace(/,/g, '');
  else if ((s.match(/\./g) ?? []).length > 1) s = s.replace(/\./g, '');
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/** A normalized text without its spaces (a text field joins `Apple<br>iPhone` as "AppleiPhone"). */
const compact = (t: string): string => t.replace(/ /g, '');

/** A row value as texts: a list field's every item, and the items joined with spaces (tags over several cells). */
function textsOf(v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return [...v.flatMap(textsOf), v.map(String).join(' ')];
  return [String(v)];
}

/**
 * How the rows hold each named field (see the file's head for the rule).
 * @param rows the rows of the config's run.
 */
export function matchNamedFields(fields: NamedTruth[], rows: Row[]): NamedMatch[] {
  return fields.map((f) => {
    const present = rows.some((r) => Object.prototype.hasOwnProperty.call(r, f.name));
    const got = rows.flatMap((r) => textsOf(r[f.name]));
    const gotNorm = got.map((g) => normalizeText(g)).filter(Boolean);
    const gotAmounts = f.kind === 'price' ? got.map(amountOf).filter((n): n is number => n !== null) : [];
    // A label people wrote with the value, "Duration: 12h", "Rating: 93%": the value is what follows it.
    const own = new RegExp(`^\\s*${f.name.replace(/_/g, '[ _]')}s?\\s*:\\s*`, 'i');
    const wanted = f.values.map((v) => v.replace(own, '')).filter((v) => normalizeText(v).length >= 2);
    const missing: string[] = [];
    let found = 0;
    for (const v of wanted) {
      const norm = normalizeText(v);
      const head = norm.slice(0, 40);
      const amount = f.kind === 'price' ? amountOf(v) : null;
      const ok = present && ((amount !== null && gotAmounts.some((a) => Math.abs(a - amount) < 0.005))
        || gotNorm.some((g) => g.includes(head) || foundIn(norm, g) || compact(g).includes(compact(head)) || (g.length >= 3 && g.length >= norm.length / 2 && norm.includes(g))));
      if (ok) found++;
      else if (missing.length < 3) missing.push(v);
    }
    const right = present && wanted.length > 0 && found / wanted.length >= NAMED_VALUES_NEEDED;
    return { name: f.name, present, total: wanted.length, found, right, missing };
  });
}
