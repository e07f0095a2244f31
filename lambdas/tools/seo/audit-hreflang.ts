/**
 * Lighthouse's hreflang audit (core/audits/seo/hreflang.js): every `hreflang` alternate in the head or a `Link`
 * header names a known language and an absolute URL.
 */
import { iso6393 } from 'iso-639-3';
import { audit } from './audit.ts';
import type { LinkElement } from './reading.ts';
import type { AuditItem, SeoAudit } from './types.ts';

/**
 * ISO 639 language codes a `hreflang`'s primary subtag may use, as axe-core's `isValidLang` (which
 * Lighthouse's hreflang audit calls) accepts them: every ISO 639-1 and ISO 639-3 code, plus the withdrawn
 * ISO 639-1 codes axe keeps.
 */
const LANGUAGE_CODES: ReadonlySet<string> = (() => {
  const codes = new Set<string>(['in', 'iw', 'ji', 'jw', 'mo', 'sh', 'bh']);
  for (const lang of iso6393) {
    codes.add(lang.iso6393);
    if (lang.iso6391) codes.add(lang.iso6391);
    if (lang.iso6392B) codes.add(lang.iso6392B);
    if (lang.iso6392T) codes.add(lang.iso6392T);
  }
  return codes;
})();

/** Lighthouse hreflang (via axe-core's isValidLang): the primary subtag a known ISO 639 code, or `x-default`. */
function isExpectedLanguageCode(hreflang: string): boolean {
  if (hreflang.toLowerCase() === 'x-default') return true;
  const [primary] = hreflang.split('-');
  return LANGUAGE_CODES.has(primary.toLowerCase());
}

/** Lighthouse hreflang over the page's links (head and `Link` header; body links do not count). */
export function auditHreflang(links: LinkElement[]): SeoAudit {
  const failing: AuditItem[] = [];
  for (const link of links) {
    if (link.rel !== 'alternate' || !link.hreflang || link.source === 'body') continue;
    const reasons: string[] = [];
    if (!isExpectedLanguageCode(link.hreflang)) reasons.push('Unexpected language code');
    const raw = link.hrefRaw.toLowerCase();
    if (!raw.startsWith('http:') && !raw.startsWith('https:')) reasons.push('Relative href value');
    if (!reasons.length) continue;
    const source =
      link.source === 'headers'
        ? `Link: <${link.hrefRaw}>; rel="alternate"; hreflang="${link.hreflang}"`
        : `<link rel="alternate" hreflang="${link.hreflang}" href="${link.hrefRaw}" />`;
    failing.push({ source, reason: reasons.join('; ') });
  }
  if (!failing.length) return audit('hreflang', true);
  return audit('hreflang', false, `${failing.length} invalid hreflang link${failing.length === 1 ? '' : 's'}`, failing.slice(0, 50));
}
