/**
 * The `output` block (docs/spec.md): deduplication and the row limit, applied to a run's rows in order.
 * Pure functions, shared by every engine and the browser extension.
 */
import type { ScrapeConfig } from './config.ts';
import type { Row } from './extract.ts';

/**
 * A stable key for a value: objects with sorted keys, so `{a,b}` and `{b,a}` are the same row. Written with an
 * explicit stack, not recursion: a row read from a hostile page may nest thousands of levels deep (a value 10,000
 * levels deep overflowed the stack of the recursive version).
 */
function stableKey(value: unknown): string {
  const out: string[] = [];
  /** What is left to write, last first: a value, or text as it is. */
  const stack: Array<{ v: unknown } | string> = [{ v: value }];
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const v = item.v;
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v) ?? 'undefined');
    } else if (Array.isArray(v)) {
      stack.push(']');
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ v: v[i] });
        if (i > 0) stack.push(',');
      }
      stack.push('[');
    } else {
      const obj = v as Record<string, unknown>;
      const keys = Object.keys(obj).sort();
      stack.push('}');
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ v: obj[keys[i]!] }, `${JSON.stringify(keys[i])}:`);
        if (i > 0) stack.push(',');
      }
      stack.push('{');
    }
  }
  return out.join('');
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
