/**
 * JSON-LD as the lead generator reads it: the values of a few keys (email, telephone, faxNumber, sameAs,
 * addressCountry) anywhere in the page's `application/ld+json` scripts.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { parseJsonLdBounded } from '../structured-data.ts';

/** Every value of `key` anywhere in a parsed JSON-LD document. */
function jsonLdValues(doc: unknown, keys: Set<string>, out: Map<string, unknown[]>, depth = 0): void {
  if (depth > 20 || doc === null || typeof doc !== 'object') return;
  if (Array.isArray(doc)) {
    for (const d of doc) jsonLdValues(d, keys, out, depth + 1);
    return;
  }
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    const bare = k.replace(/^(?:https?:\/\/schema\.org\/|schema:)/, '');
    if (keys.has(bare)) {
      const list = out.get(bare) ?? [];
      for (const x of Array.isArray(v) ? v : [v]) list.push(x);
      out.set(bare, list);
    }
    if (v && typeof v === 'object') jsonLdValues(v, keys, out, depth + 1);
  }
}

/** The strings of JSON-LD values (`"x"`, `{"@id": "x"}`, `{"name": "x"}`, `{"@value": "x"}`). */
export function strings(values: unknown[] | undefined): string[] {
  const out: string[] = [];
  for (const v of values ?? []) {
    if (typeof v === 'string') out.push(v);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const k of ['@id', '@value', 'name', 'url']) if (typeof o[k] === 'string') out.push(o[k] as string);
    }
  }
  return out;
}

const JSONLD_KEYS = new Set(['email', 'telephone', 'faxNumber', 'sameAs', 'addressCountry']);

/**
 * The values of the keys the lead generator reads (email, telephone, faxNumber, sameAs, addressCountry; a
 * `schema:` or `https://schema.org/` prefix dropped) in every JSON-LD script of the page; invalid scripts, and
 * scripts nested deeper than STRUCTURED_DATA_LIMITS.jsonLdDepth, are skipped as search engines skip them.
 * @param $ the page.
 * @returns key to every value found, in document order.
 */
export function readJsonLd($: CheerioAPI): Map<string, unknown[]> {
  const ld = new Map<string, unknown[]>();
  $('script[type]').each((_, el) => {
    if (!/^application\/ld\+json\b/i.test(($(el).attr('type') ?? '').trim())) return;
    const raw = $(el)
      .text()
      .trim()
      .replace(/^(?:\/\/\s*)?<!\[CDATA\[|(?:\/\/\s*)?\]\]>$/g, '')
      .replace(/^<!--|-->$/g, '')
      .trim();
    try {
      // A script nested deeper than STRUCTURED_DATA_LIMITS.jsonLdDepth is skipped as invalid ones are.
      jsonLdValues(parseJsonLdBounded(raw), JSONLD_KEYS, ld);
    } catch {
      // invalid JSON-LD is skipped, as search engines do
    }
  });
  return ld;
}
