/**
 * Lighthouse's document audits: document-title (axe-core's rule), meta-description and http-status-code.
 */
import { audit } from './audit.ts';
import type { MetaElement } from './reading.ts';
import type { SeoAudit } from './types.ts';

/** axe-core document-title: the document has a non-empty `<title>` (`title` is its folded text, null when none). */
export function auditDocumentTitle(title: string | null): SeoAudit {
  if (title === null) return audit('document-title', false, 'The document has no <title> element.');
  if (!title) return audit('document-title', false, 'The <title> element is empty.');
  return audit('document-title', true);
}

/** Lighthouse meta-description: the first `<meta name="description">` has non-blank content. */
export function auditMetaDescription(metas: MetaElement[]): SeoAudit {
  const meta = metas.find((m) => m.name === 'description');
  if (!meta) return audit('meta-description', false, 'No <meta name="description"> element.');
  if (!(meta.content ?? '').trim()) return audit('meta-description', false, 'Description text is empty.');
  return audit('meta-description', true);
}

/** Lighthouse http-status-code: the page's status is not 4xx or 5xx. */
export function auditHttpStatus(status: number): SeoAudit {
  const failed = status >= 400 && status <= 599;
  return audit('http-status-code', !failed, failed ? `HTTP status ${status}.` : null);
}
