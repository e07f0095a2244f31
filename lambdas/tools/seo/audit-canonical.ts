/**
 * Lighthouse's canonical audit (core/audits/seo/canonical.js): the page's `rel=canonical` (head or `Link`
 * header) is one valid absolute URL that does not point elsewhere by mistake.
 */
import { resolveUrl } from '../../engine/page-facts.ts';
import { audit } from './audit.ts';
import type { LinkElement } from './reading.ts';
import { isAbsoluteUrl } from './urls.ts';
import { sameSite } from '../../engine/page-facts.ts';
import type { SeoAudit } from './types.ts';

/** The canonical links of the page, as the audit and the report read them. */
export interface CanonicalReading {
  /** Valid absolute canonical URLs in order, each once. */
  urls: string[];
  invalid: LinkElement | undefined;
  relative: LinkElement | undefined;
  hreflangUrls: Set<string>;
}

/** Reads the canonical and hreflang links of the head and the `Link` header (body links are no canonical references). */
export function readCanonicals(links: LinkElement[]): CanonicalReading {
  const urls: string[] = [];
  const hreflangUrls = new Set<string>();
  let invalid: LinkElement | undefined;
  let relative: LinkElement | undefined;
  for (const link of links) {
    // Links in the body are not canonical references (HTML standard, "body-ok" link types).
    if (link.source === 'body') continue;
    if (link.rel === 'canonical') {
      if (!link.hrefRaw) continue;
      if (link.href === null || resolveUrl(link.hrefRaw, 'https://example.com') === null) invalid = link;
      else if (!isAbsoluteUrl(link.hrefRaw)) relative = link;
      else if (!urls.includes(link.href)) urls.push(link.href);
    } else if (link.rel === 'alternate' && link.href && link.hreflang) {
      hreflangUrls.add(link.href);
    }
  }
  return { urls, invalid, relative, hreflangUrls };
}

/** Lighthouse canonical on what {@link readCanonicals} read; not applicable when the page names no canonical. */
export function auditCanonical(reading: CanonicalReading, pageUrl: string): SeoAudit {
  if (reading.invalid) return audit('canonical', false, `Invalid URL (${reading.invalid.hrefRaw})`);
  if (reading.relative) return audit('canonical', false, `Is not an absolute URL (${reading.relative.hrefRaw})`);
  if (reading.urls.length === 0) return audit('canonical', true, null, [], false);
  if (reading.urls.length > 1) return audit('canonical', false, `Multiple conflicting URLs (${reading.urls.join(', ')})`);
  const canonical = new URL(reading.urls[0]);
  let base: URL;
  try {
    base = new URL(pageUrl);
  } catch {
    return audit('canonical', true);
  }
  if (reading.hreflangUrls.has(base.href) && reading.hreflangUrls.has(canonical.href) && base.href !== canonical.href) {
    return audit('canonical', false, `Points to another \`hreflang\` location (${base.href})`);
  }
  if (canonical.origin === base.origin && canonical.pathname === '/' && base.pathname !== '/') {
    return audit('canonical', false, "Points to the domain's root URL (the homepage), instead of an equivalent page of content");
  }
  if (!sameSite(canonical, base)) {
    // Lighthouse failed this until 2021 (GoogleChrome/lighthouse#12572); search engines accept cross-domain canonicals.
    return audit('canonical', true, `Points to another domain (${canonical.href}): allowed, but this page will not be the one indexed.`);
  }
  return audit('canonical', true);
}
