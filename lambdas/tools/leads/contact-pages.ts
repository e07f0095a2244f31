/**
 * Contact pages: the site's contact, imprint, about and team pages a page links to, and {@link findLeads}, which
 * reads them beside the page (same site only, at most {@link MAX_CONTACT_PAGES}).
 */
import { loadHtml } from '../../engine/extract.ts';
import { documentBaseUrl, isHtmlResponse, sameSite } from '../../engine/page-facts.ts';
import { boundedText, headAndTail, type FetchedText, type PageFetch, type ToolPage } from '../page.ts';
import { LEADS_LIMITS } from './limits.ts';
import { readPage } from './one-page.ts';
import { percentDecode } from './text.ts';
import type { LeadsPage, LeadsReport } from './types.ts';

/** Most follow-up pages read by {@link findLeads}. */
export const MAX_CONTACT_PAGES = 5;

/** Words of contact, about, imprint and team pages in link text and URLs, with their rank (lower first). */
const CONTACT_WORDS: [RegExp, number][] = [
  [/\b(?:contact(?:[-_ ]?us)?|contacts|kontakt|contacto|contato|contatti|contattaci|contactez[-_ ]nous|nous[-_ ]contacter|get[-_ ]in[-_ ]touch|reach[-_ ]us|kontaktieren|yhteystiedot|kapcsolat|kontakty)\b|お問い合わせ|お問合せ|問い合わせ|联系我们|聯絡我們|연락처/i, 0],
  [/\b(?:impressum|imprint|legal[-_ ]notice|mentions[-_ ]l[ée]gales|aviso[-_ ]legal|note[-_ ]legali|colofon|colophon)\b|会社概要|会社情報/i, 1],
  [/\b(?:about(?:[-_ ]us)?|who[-_ ]we[-_ ]are|company|über[-_ ]uns|ueber[-_ ]uns|uber[-_ ]uns|a[-_ ]propos|à propos|qui[-_ ]sommes[-_ ]nous|quienes[-_ ]somos|quiénes somos|sobre[-_ ](?:nosotros|n[oó]s)|chi[-_ ]siamo|over[-_ ]ons|om[-_ ]oss|o[-_ ]nas)\b|关于我们|關於我們/i, 2],
  [/\b(?:team|our[-_ ]team|staff|people|directory|faculty|leadership|equipe|équipe|equipo|mitarbeiter|unser[-_ ]team|ansprechpartner)\b/i, 3],
];


/**
 * The site's contact, imprint, about and team pages linked from the page, best first, at most `max`: links to the
 * same host (`www.` aside) whose text, title or path holds one of the words of {@link CONTACT_WORDS} (English,
 * German, French, Spanish, Portuguese, Italian, Dutch and a few more), contact pages first, then imprints, about
 * and team pages; the page itself, fragments of it and files (PDF, images) are left out.
 */
export function contactPageLinks(page: ToolPage, max = MAX_CONTACT_PAGES): string[] {
  if (!isHtmlResponse(page.contentType, page.html)) return [];
  const $ = loadHtml(page.html);
  let here: URL;
  try {
    here = new URL(page.url || page.requestedUrl);
  } catch {
    return [];
  }
  const root = $.root()[0];
  const base = root ? documentBaseUrl(root, here.href) : here.href;
  const found = new Map<string, { rank: number; order: number }>();
  let order = 0;
  headAndTail($('a[href]').toArray(), LEADS_LIMITS.links).forEach((el) => {
    const href = ($(el).attr('href') ?? '').trim();
    if (!href || href.length > LEADS_LIMITS.valueChars || /^(?:mailto|tel|javascript|data):/i.test(href)) return;
    let u: URL;
    try {
      u = new URL(href, base);
    } catch {
      return;
    }
    u.hash = '';
    if (!sameSite(u, here) || /\.(?:pdf|jpe?g|png|gif|webp|svg|zip|docx?|xlsx?|pptx?|mp4|mp3)$/i.test(u.pathname)) return;
    const key = u.href;
    const self = new URL(here.href);
    self.hash = '';
    if (key === self.href) return;
    // The link's text, cut: a link nested in hundreds of others would otherwise be read once for each.
    const words = `${boundedText(el, 500)} ${($(el).attr('title') ?? '').slice(0, 500)} ${($(el).attr('aria-label') ?? '').slice(0, 500)} ${percentDecode(u.pathname).replace(/[/_.-]+/g, ' ')}`;
    let rank = Infinity;
    for (const [re, r] of CONTACT_WORDS) if (re.test(words)) rank = Math.min(rank, r);
    if (rank === Infinity) return;
    const have = found.get(key);
    if (!have || rank < have.rank) found.set(key, { rank, order: have?.order ?? order++ });
  });
  return [...found]
    .sort((a, b) => a[1].rank - b[1].rank || a[1].order - b[1].order)
    .slice(0, max)
    .map(([u]) => u);
}

/** A followed page as a {@link ToolPage}. */
function toolPageOf(requested: string, r: FetchedText): ToolPage {
  return {
    requestedUrl: requested,
    url: r.url || requested,
    status: r.status,
    headers: r.headers,
    setCookies: [],
    contentType: r.contentType,
    html: r.text,
    redirectChain: [requested, ...(r.url && r.url !== requested ? [r.url] : [])],
  };
}

/** Options of {@link findLeads}. */
export interface FindLeadsOptions {
  /**
   * Also read the site's contact, imprint, about and team pages linked from the page (same site only, at most
   * {@link MAX_CONTACT_PAGES}, see {@link contactPageLinks}) and merge their findings.
   * @default false
   */
  followContactPages?: boolean;
  /** How follow-up pages are fetched (through the outbound guard). */
  fetch: PageFetch;
}

/**
 * The lead-generation report of a page: {@link extractLeads} on it and, with `followContactPages`, on the contact
 * pages it links to, merged (a finding seen on several pages lists each page in its `sources`). A followed page
 * that cannot be fetched, answers with an error status, redirects off the site or is not HTML is skipped and
 * listed in `pages` with the reason. Never throws for a page's content; rejects only if `fetch` itself throws.
 */
export async function findLeads(page: ToolPage, options: FindLeadsOptions): Promise<LeadsReport> {
  const first = readPage(page);
  const url = page.url || page.requestedUrl;
  const pages: LeadsPage[] = [{ url, status: page.status }];
  if (options.followContactPages) {
    const links = contactPageLinks(page);
    const results = await Promise.all(
      links.map(async (link) => {
        try {
          return await options.fetch(link);
        } catch {
          return null;
        }
      }),
    );
    let here: URL | null = null;
    try {
      here = new URL(url);
    } catch {
      here = null;
    }
    links.forEach((link, i) => {
      const r = results[i];
      if (!r) return void pages.push({ url: link, status: null, skipped: 'could not be fetched' });
      if (r.status < 200 || r.status >= 300) return void pages.push({ url: link, status: r.status, skipped: `HTTP ${r.status}` });
      let final: URL | null = null;
      try {
        final = new URL(r.url || link);
      } catch {
        final = null;
      }
      if (!final || !here || !sameSite(final, here)) return void pages.push({ url: link, status: r.status, skipped: 'redirected off the site' });
      const followed = toolPageOf(link, r);
      if (!isHtmlResponse(followed.contentType, followed.html)) return void pages.push({ url: link, status: r.status, skipped: `not HTML (${r.contentType || 'no content type'})` });
      const more = readPage(followed);
      first.emails.merge(more.emails);
      first.phones.merge(more.phones);
      first.social.merge(more.social);
      pages.push({ url: followed.url, status: r.status });
    });
  }
  return {
    url,
    emails: first.emails.list(),
    phones: first.phones.list(),
    social: first.social.list(),
    default_country: { country: first.country.countries[0] ?? null, from: first.country.from },
    pages,
  };
}
