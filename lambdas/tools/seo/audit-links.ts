/**
 * Lighthouse's link audits: link-text (core/audits/seo/link-text.js: link texts that say nothing of the target,
 * by language) and crawlable-anchors (core/audits/seo/crawlable-anchors.js: anchors a crawler can follow).
 */
import { resolveUrl } from '../../engine/page-facts.ts';
import { audit, snippet } from './audit.ts';
import type { AnchorElement } from './reading.ts';
import { foldSpace, textContent } from './text.ts';
import type { AuditItem, NonDescriptiveLink, SeoAudit } from './types.ts';

/** Lighthouse link-text audit: texts that say nothing about the link's target, by language (core/audits/seo/link-text.js). */
const NON_DESCRIPTIVE_LINK_TEXTS: Record<string, ReadonlySet<string>> = {
  en: new Set(['click here', 'click this', 'go', 'here', 'information', 'learn more', 'more', 'more info', 'more information', 'right here', 'read more', 'see more', 'start', 'this']),
  ja: new Set(['ここをクリック', 'こちらをクリック', 'リンク', '続きを読む', '続く', '全文表示']),
  es: new Set(['click aquí', 'click aqui', 'clicka aquí', 'clicka aqui', 'pincha aquí', 'pincha aqui', 'aquí', 'aqui', 'más', 'mas', 'más información', 'más informacion', 'mas información', 'mas informacion', 'este', 'enlace', 'este enlace', 'empezar']),
  pt: new Set(['clique aqui', 'ir', 'mais informação', 'mais informações', 'mais', 'veja mais']),
  ko: new Set(['여기', '여기를 클릭', '클릭', '링크', '자세히', '자세히 보기', '계속', '이동', '전체 보기']),
  sv: new Set(['här', 'klicka här', 'läs mer', 'mer', 'mer info', 'mer information']),
  de: new Set(['klicke hier', 'hier klicken', 'hier', 'mehr', 'siehe', 'dies', 'das', 'weiterlesen']),
  ta: new Set(['அடுத்த பக்கம்', 'மறுபக்கம்', 'முந்தைய பக்கம்', 'முன்பக்கம்', 'மேலும் அறிக', 'மேலும் தகவலுக்கு', 'மேலும் தரவுகளுக்கு', 'தயவுசெய்து இங்கே அழுத்தவும்', 'இங்கே கிளிக் செய்யவும்']),
  fa: new Set(['اطلاعات بیشتر', 'اطلاعات', 'این', 'اینجا بزنید', 'اینجا کلیک کنید', 'اینجا', 'برو', 'بیشتر بخوانید', 'بیشتر بدانید', 'بیشتر', 'شروع']),
};

function equalWithoutFragment(a: string, b: string): boolean {
  try {
    const ua = new URL(a);
    const ub = new URL(b);
    ua.hash = '';
    ub.hash = '';
    return ua.href === ub.href;
  } catch {
    return false;
  }
}

function isFullHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Lighthouse link-text: which anchors fail, with their resolved href and text.
 * @param anchors the page's `<a>` elements.
 * @param baseUrl the document base URL (hrefs resolve against it).
 * @param pageUrl the page URL (a link to the page itself is skipped).
 */
export function nonDescriptiveLinks(anchors: AnchorElement[], baseUrl: string, pageUrl: string): NonDescriptiveLink[] {
  const failing: NonDescriptiveLink[] = [];
  for (const { el, lang } of anchors) {
    const raw = el.attribs.href ?? el.attribs['xlink:href'];
    if (raw === undefined) continue;
    const href = resolveUrl(raw, baseUrl) ?? raw;
    if (!href) continue;
    const rel = (el.attribs.rel ?? '').toLowerCase();
    if (rel.includes('nofollow')) continue;
    const lower = href.toLowerCase();
    if (lower.startsWith('javascript:') || lower.startsWith('mailto:') || equalWithoutFragment(href, pageUrl)) continue;
    const text = foldSpace(textContent(el));
    if (!text) continue;
    if (isFullHttpUrl(text)) {
      failing.push({ href, text });
      continue;
    }
    const term = text.toLowerCase();
    const primary = lang.split('-')[0].toLowerCase();
    const lists = lang ? (NON_DESCRIPTIVE_LINK_TEXTS[primary] ? [NON_DESCRIPTIVE_LINK_TEXTS[primary]] : []) : Object.values(NON_DESCRIPTIVE_LINK_TEXTS);
    if (lists.some((list) => list.has(term))) failing.push({ href, text });
  }
  return failing;
}

/** Lighthouse link-text from the failing links {@link nonDescriptiveLinks} found. */
export function auditLinkText(failing: NonDescriptiveLink[]): SeoAudit {
  if (!failing.length) return audit('link-text', true);
  return audit('link-text', false, `${failing.length} link${failing.length === 1 ? '' : 's'} found`, failing.map((l) => ({ href: l.href, text: l.text })));
}

const HREF_ASSOCIATED_ATTRIBUTES = ['target', 'download', 'ping', 'rel', 'hreflang', 'type', 'referrerpolicy'];

/**
 * Lighthouse crawlable-anchors: anchors without a usable `href` (none, `javascript:void(0)`, `file:`, one that
 * does not parse), as Lighthouse lists them (the first 50).
 * @param anchors the page's `<a>` elements.
 * @param baseUrl the document base URL.
 * @param pageUrl the page URL.
 */
export function auditCrawlableAnchors(anchors: AnchorElement[], baseUrl: string, pageUrl: string): SeoAudit {
  const failing: AuditItem[] = [];
  for (const { el } of anchors) {
    const a = el.attribs;
    const hasHref = a.href !== undefined || a['xlink:href'] !== undefined;
    const rawHref = (a.href ?? a['xlink:href'] ?? '').replace(/\s/g, '');
    const name = (a.name ?? '').trim();
    const role = (a.role ?? '').trim();
    if (role.length > 0) continue;
    if (rawHref.startsWith('mailto:')) continue;
    if (rawHref === '' && a.id) continue;
    if (rawHref.startsWith('file:')) {
      failing.push({ node: snippet(el) });
      continue;
    }
    if (name.length > 0) continue;
    const ariaCurrent = (a['aria-current'] ?? '').trim();
    if (!hasHref && !HREF_ASSOCIATED_ATTRIBUTES.some((attr) => attr in a) && (ariaCurrent === 'page' || ariaCurrent === 'location')) continue;
    // The DOM's `href` of an anchor without the attribute is ''; with one, it is the resolved URL.
    const href = hasHref ? (resolveUrl(a.href ?? a['xlink:href'] ?? '', baseUrl) ?? rawHref) : '';
    let fails = href === '' || /javascript:void(\(|)0(\)|)/.test(rawHref);
    if (!fails) fails = resolveUrl(rawHref, pageUrl) === null;
    if (fails) failing.push({ node: snippet(el) });
  }
  if (!failing.length) return audit('crawlable-anchors', true);
  return audit('crawlable-anchors', false, `${failing.length} uncrawlable link${failing.length === 1 ? '' : 's'}`, failing.slice(0, 50));
}
