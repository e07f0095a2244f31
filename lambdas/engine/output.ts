/**
 * The `output` block (SPEC.md): deduplication and the row limit, applied to a run's rows in order.
 * Pure functions, shared by every engine and the browser extension.
 */
import type { ScrapeConfig } from './config.ts';
import type { Row } from './extract.ts';

/** A stable key for a value: objects with sorted keys, so `{a,b}` and `{b,a}` are the same row. */
function stableKey(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (Array.isArray(value)) return `[${value.map(stableKey).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}:${stableKey(obj[k])}`).join(',')}}`;
}

/**
 * Applies `output`: with `deduplicate`, keeps the first row of each group of equal rows (the whole row,
 * or only `deduplicate_fields` when given); then keeps at most `limit` rows.
 * @returns a new array; the input is not changed.
 */
export function finalizeRows(rows: readonly Row[], output: ScrapeConfig['output']): Row[] {
  let out = rows as Row[];
  if (output.deduplicate) {
    const seen = new Set<string>();
    const fields = output.deduplicate_fields;
    out = out.filter((row) => {
      const key = fields ? stableKey(fields.map((f) => row[f] ?? null)) : stableKey(row);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  if (output.limit !== undefined && out.length > output.limit) out = out.slice(0, output.limit);
  return out === rows ? [...rows] : out;
}
