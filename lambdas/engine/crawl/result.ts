/**
 * A run's rows: each listing's rows in listing, page and item order, with their detail fields (in the order of
 * detail_fields, their defaults where the detail page gave nothing) and then their category metadata; and whether
 * the pages' data API carried them (browser).
 */
import type { FieldSpec } from '../config.ts';
import type { Row } from '../extract.ts';
import type { Listing } from '../request-queue.ts';

/**
 * The rows of every listing, before `output`.
 * @param detailSpecs detail_fields.fields ([] without detail pages).
 * @param detailRow the detail row of a listing row, or null (its fields take their defaults, null without one).
 * @returns new row objects where something is merged; the listings' own rows otherwise.
 */
export function collectRows(listings: readonly Listing[], detailSpecs: readonly FieldSpec[], detailRow: (row: Row) => Row | null): Row[] {
  const collected: Row[] = [];
  for (const l of listings) {
    const hasMeta = l.meta._category_url !== undefined;
    for (const page of l.pages) {
      for (const row of page ?? []) {
        if (!detailSpecs.length && !hasMeta) {
          collected.push(row);
          continue;
        }
        const merged: Row = { ...row };
        if (detailSpecs.length) {
          const d = detailRow(row);
          for (const f of detailSpecs) merged[f.name] = d ? d[f.name] : 'default' in f ? f.default : null;
        }
        // Category metadata stays last, after the detail fields.
        if (hasMeta) Object.assign(merged, l.meta);
        collected.push(merged);
      }
    }
  }
  return collected;
}

/**
 * True when most (half or more) of the first 20 rows have a value (string or number of 3 characters or more,
 * trimmed) that an XHR/fetch JSON answer carried: the page's data API. The loader keeps the first answers only,
 * which carry the first pages' rows.
 */
export function apiCarriesItems(all: Row[], values: ReadonlySet<string>): boolean {
  const rows = all.slice(0, 20);
  if (!rows.length || !values.size) return false;
  const hits = rows.filter((r) => Object.values(r).some((v) => (typeof v === 'string' || typeof v === 'number') && String(v).trim().length >= 3 && values.has(String(v).trim())));
  return hits.length / rows.length >= 0.5;
}
