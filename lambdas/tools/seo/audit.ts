/**
 * One Lighthouse SEO audit's outcome as the SEO analyzer reports it ({@link SeoAudit}), with Lighthouse's titles
 * and the weights of its SEO category; the audit-*.ts modules build theirs with {@link audit}.
 */
import type { Element } from 'domhandler';
import type { AuditItem, SeoAudit, SeoAuditId } from './types.ts';

/**
 * Weights of the SEO category (Lighthouse core/config/default-config.js, 12.0.0 onwards): `is-crawlable`
 * weighs 93/23 so that failing it alone fails the category (w / (w + 9) ≥ 0.31).
 */
export const SEO_AUDIT_WEIGHTS: Readonly<Record<SeoAuditId, number>> = {
  'is-crawlable': 93 / 23,
  'document-title': 1,
  'meta-description': 1,
  'http-status-code': 1,
  'link-text': 1,
  'crawlable-anchors': 1,
  'robots-txt': 1,
  'image-alt': 1,
  hreflang: 1,
  canonical: 1,
};

const AUDIT_TITLES: Record<SeoAuditId, [passed: string, failed: string]> = {
  'is-crawlable': ['Page isn’t blocked from indexing', 'Page is blocked from indexing'],
  'document-title': ['Document has a `<title>` element', 'Document doesn’t have a `<title>` element'],
  'meta-description': ['Document has a meta description', 'Document does not have a meta description'],
  'http-status-code': ['Page has successful HTTP status code', 'Page has unsuccessful HTTP status code'],
  'link-text': ['Links have descriptive text', 'Links do not have descriptive text'],
  'crawlable-anchors': ['Links are crawlable', 'Links are not crawlable'],
  'robots-txt': ['robots.txt is valid', 'robots.txt is not valid'],
  'image-alt': ['Image elements have `[alt]` attributes', 'Image elements do not have `[alt]` attributes'],
  hreflang: ['Document has a valid `hreflang`', 'Document doesn’t have a valid `hreflang`'],
  canonical: ['Document has a valid `rel=canonical`', 'Document does not have a valid `rel=canonical`'],
};

/**
 * One audit's outcome, titled and weighted as Lighthouse does.
 * @param id the audit.
 * @param passed Lighthouse score 1 (true) or 0 (false).
 * @param explanation why it failed, or a note when it passed; null when there is nothing to say.
 * @param items the offending items (the caller cuts them to 50).
 * @param applicable false when Lighthouse marks the audit not applicable (it then does not count in the score).
 */
export function audit(id: SeoAuditId, passed: boolean, explanation: string | null = null, items: AuditItem[] = [], applicable = true): SeoAudit {
  return { id, title: AUDIT_TITLES[id][passed ? 0 : 1], passed, applicable, weight: SEO_AUDIT_WEIGHTS[id], details: { explanation, items } };
}

/** A short serialisation of an element's start tag, for audit details. */
export function snippet(el: Element): string {
  const attrs = Object.entries(el.attribs)
    .map(([k, v]) => (v === '' ? k : `${k}="${v.length > 80 ? `${v.slice(0, 77)}...` : v}"`))
    .join(' ');
  return `<${el.name}${attrs ? ` ${attrs}` : ''}>`;
}
