/**
 * One page's leads: every extractor (emails.ts, phones.ts, social.ts, with the country of national numbers from
 * country.ts) run over the page's links, text, JSON-LD and meta elements, findings collected with their sources.
 */
import type { Element } from 'domhandler';
import type { CountryCode, PhoneNumber } from 'libphonenumber-js/max';
import { loadHtml } from '../../engine/extract.ts';
import { documentBaseUrl, isHtmlResponse, resolveUrl } from '../../engine/page-facts.ts';
import { headAndTail, type ToolPage } from '../page.ts';
import { Collector } from './collector.ts';
import { guessCountry } from './country.ts';
import { AT_SPACED, cleanEmail, decodeCloudflareEmail, DOT_SPELLED_SPLIT, EMAIL_IN_TEXT, EMAIL_SPACED, EMAIL_SPELLED, mailtoAddresses } from './emails.ts';
import { readJsonLd, strings } from './json-ld.ts';
import { LEADS_LIMITS } from './limits.ts';
import { parsePhone, phoneLead, phoneLines, phonesInLine } from './phones.ts';
import { socialProfile } from './social.ts';
import { pageText } from './text.ts';
import type { CountryHint, EmailLead, LeadSource, LeadSourceType, LeadsReport, PhoneLead, SocialLead } from './types.ts';

/** The findings of one page, by kind, and the country its national numbers were read in. */
export interface PageFindings {
  emails: Collector<EmailLead>;
  phones: Collector<PhoneLead>;
  social: Collector<SocialLead>;
  country: { countries: CountryCode[]; from: CountryHint | null };
}

function emptyFindings(): PageFindings {
  return { emails: new Collector(), phones: new Collector(), social: new Collector(), country: { countries: [], from: null } };
}

/** Reads one page's findings (see index.ts's module comment for the rules); a page that is neither HTML nor text gives none. */
export function readPage(page: ToolPage): PageFindings {
  const f = emptyFindings();
  const pageUrl = page.url || page.requestedUrl;
  const at = (type: LeadSourceType): LeadSource => ({ type, page: pageUrl });
  const addEmail = (raw: string, type: LeadSourceType): void => {
    const email = cleanEmail(raw);
    if (email) f.emails.add(email.toLowerCase(), () => ({ email }), at(type));
  };
  const addSocial = (href: string, type: LeadSourceType, relMe = false): void => {
    const p = socialProfile(href, relMe);
    if (p) f.social.add(`${p.network}:${p.handle.toLowerCase()}`, () => p, at(type));
  };

  const textOnly = !isHtmlResponse(page.contentType, page.html);
  if (textOnly && !/^text\//i.test(page.contentType)) return f; // images, PDFs, JSON: nothing to read
  const $ = loadHtml(textOnly ? `<pre>${page.html.replace(/[<&]/g, (c) => (c === '<' ? '&lt;' : '&amp;'))}</pre>` : page.html);
  const root = $.root()[0];
  const base = root ? documentBaseUrl(root, pageUrl) : pageUrl;
  const text = pageText($);
  const ld = readJsonLd($);
  f.country = guessCountry($, pageUrl, text, strings(ld.get('addressCountry')));
  const countries = f.country.countries;

  // The links read, and their href (values longer than valueChars are no address, number or profile).
  const links = headAndTail($('a[href], link[href], area[href]').toArray(), LEADS_LIMITS.links)
    .map((el) => ({ el, href: (el as Element).attribs.href ?? '' }))
    .filter((l) => l.href.length <= LEADS_LIMITS.valueChars);

  // Emails.
  for (const { href } of links) {
    if (/^\s*mailto:/i.test(href)) for (const a of mailtoAddresses(href)) addEmail(a, 'mailto');
    const cf = /\/cdn-cgi\/l\/email-protection#([0-9a-f]+)/i.exec(href);
    if (cf) {
      const decoded = decodeCloudflareEmail(cf[1]!);
      if (decoded) addEmail(decoded.replace(/^mailto:/i, '').split('?')[0]!, 'cloudflare');
    }
  }
  for (const el of headAndTail($('[data-cfemail]').toArray(), LEADS_LIMITS.links)) {
    const hex = (el as Element).attribs['data-cfemail'] ?? '';
    const decoded = hex.length <= LEADS_LIMITS.valueChars ? decodeCloudflareEmail(hex) : null;
    if (decoded) addEmail(decoded, 'cloudflare');
  }
  for (const m of text.matchAll(EMAIL_IN_TEXT)) addEmail(`${m[1]}@${m[2]}`, 'text');
  for (const m of text.matchAll(EMAIL_SPACED)) addEmail(`${m[1]}@${m[2]}`, 'obfuscated');
  for (const m of text.matchAll(EMAIL_SPELLED)) {
    const spaced = new RegExp(`^${AT_SPACED}$`).test(m[2]!);
    const labels = m[3]!.split(DOT_SPELLED_SPLIT);
    const spelledDot = labels.length - 1 > (m[3]!.match(/\./g)?.length ?? 0) || /\[\s*\.\s*\]|\(\s*\.\s*\)/.test(m[3]!);
    // "Read more at Example.com" is not an address: a bare " at " needs a spelled-out dot too.
    if (spaced && !spelledDot) continue;
    if (!/^[A-Za-z]{2,24}$/.test(labels[labels.length - 1]!)) continue;
    addEmail(`${m[1]}@${labels.join('.')}`, 'obfuscated');
  }
  for (const e of strings(ld.get('email'))) addEmail(e.replace(/^mailto:/i, '').split('?')[0]!, 'json-ld');

  // Phones.
  const addPhone = (n: PhoneNumber | null, type: LeadSourceType): void => {
    if (n) f.phones.add(n.number, () => phoneLead(n), at(type));
  };
  for (const { el, href } of links) {
    if ((el as Element).name === 'a' && /^\s*tel:/i.test(href)) addPhone(parsePhone(href.trim(), countries), 'tel');
  }
  for (const t of [...strings(ld.get('telephone')), ...strings(ld.get('faxNumber'))]) addPhone(parsePhone(t, countries), 'json-ld');
  for (const { line, before } of phoneLines(text)) for (const n of phonesInLine(line, before, countries)) addPhone(n, 'text');

  // Social profiles.
  for (const { el, href } of links) {
    if (!/^\s*(?:https?:)?\/\//i.test(href)) continue;
    const abs = resolveUrl(href, base);
    if (abs === null) continue;
    addSocial(abs, 'link', /(?:^|\s)me(?:\s|$)/i.test((el as Element).attribs.rel ?? ''));
  }
  for (const s of strings(ld.get('sameAs'))) addSocial(s, 'json-ld');
  headAndTail($('meta').toArray(), LEADS_LIMITS.links).forEach((el) => {
    const name = ($(el).attr('property') ?? $(el).attr('name') ?? '').toLowerCase();
    const value = ($(el).attr('content') ?? $(el).attr('value') ?? '').trim();
    if (!value || value.length > LEADS_LIMITS.valueChars) return;
    if (name === 'article:publisher' || name === 'article:author') addSocial(value, 'meta');
    else if (name === 'twitter:site' || name === 'twitter:creator') {
      const handle = value.replace(/^@/, '');
      if (/^[A-Za-z0-9_]{1,15}$/.test(handle)) addSocial(`https://x.com/${handle}`, 'meta');
      else if (/^https?:\/\//i.test(value)) addSocial(value, 'meta');
    }
  });
  return f;
}

/**
 * The emails, phone numbers and social profiles of one page (no fetching; see index.ts's module comment for the rules).
 * Never throws: an empty, broken or non-HTML page gives empty lists (plain text is read as text; other types
 * are not read).
 */
export function extractLeads(page: ToolPage): LeadsReport {
  const f = readPage(page);
  const url = page.url || page.requestedUrl;
  return {
    url,
    emails: f.emails.list(),
    phones: f.phones.list(),
    social: f.social.list(),
    default_country: { country: f.country.countries[0] ?? null, from: f.country.from },
    pages: [{ url, status: page.status }],
  };
}
