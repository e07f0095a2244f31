/**
 * The country of national numbers (step 3 of index.ts's module comment): the clues a page gives of where its
 * phone numbers written without a country code are.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js/max';
import type { CountryHint } from './types.ts';

/** Country-code TLDs used as generic ones (`.io`, `.co`, `.tv`, …): they say nothing about the country. */
const GENERIC_CCTLDS = new Set(['io', 'co', 'tv', 'me', 'ai', 'fm', 'ly', 'gg', 'cc', 'ws', 'to', 'sh', 'so', 'am', 'im', 'is', 'it', 'vc', 'la', 'nu', 'tk', 'ml', 'ga', 'cf', 'gq', 'app', 'dev']);
/** TLDs of one country that are not its ISO code. */
const TLD_COUNTRY: Record<string, string> = { uk: 'GB', edu: 'US', gov: 'US', mil: 'US', su: 'RU', eu: '' };
/** Country names (English and their own language) counted in the text, longest first where one contains another. */
const COUNTRY_NAMES: [RegExp, CountryCode][] = [
  [/\b(?:United States(?: of America)?|U\.S\.A\.|USA)\b/g, 'US'],
  [/\b(?:United Kingdom|Great Britain|England|Scotland|Wales|Northern Ireland)\b/g, 'GB'],
  [/\b(?:Germany|Deutschland)\b/g, 'DE'],
  [/\b(?:France)\b/g, 'FR'],
  [/\b(?:Netherlands|Nederland)\b/g, 'NL'],
  [/\b(?:Belgium|Belgique|België)\b/g, 'BE'],
  [/\b(?:Switzerland|Schweiz|Suisse|Svizzera)\b/g, 'CH'],
  [/\b(?:Austria|Österreich)\b/g, 'AT'],
  [/\b(?:Spain|España)\b/g, 'ES'],
  [/\b(?:Italy|Italia)\b/g, 'IT'],
  [/\b(?:Portugal)\b/g, 'PT'],
  [/\b(?:Ireland|Éire)\b/g, 'IE'],
  [/\b(?:Sweden|Sverige)\b/g, 'SE'],
  [/\b(?:Norway|Norge)\b/g, 'NO'],
  [/\b(?:Denmark|Danmark)\b/g, 'DK'],
  [/\b(?:Finland)\b/g, 'FI'],
  [/\b(?:Poland|Polska)\b/g, 'PL'],
  [/\b(?:Czech Republic|Czechia|Česká republika)\b/g, 'CZ'],
  [/\b(?:Canada)\b/g, 'CA'],
  [/(?<!New )\b(?:Mexico|México)\b/g, 'MX'],
  [/\b(?:Brazil)\b/g, 'BR'],
  [/\b(?:Argentina)\b/g, 'AR'],
  [/\b(?:Australia)\b/g, 'AU'],
  [/\b(?:New Zealand|Aotearoa)\b/g, 'NZ'],
  [/\b(?:India)\b/g, 'IN'],
  [/\b(?:Singapore)\b/g, 'SG'],
  [/\b(?:Japan)\b|日本/g, 'JP'],
  [/\b(?:South Africa)\b/g, 'ZA'],
  [/\b(?:Israel)\b/g, 'IL'],
  [/\b(?:Taiwan)\b|台灣|臺灣/g, 'TW'],
];

function isCountry(code: string | undefined | null): code is CountryCode {
  return !!code && /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

/** The region of a BCP 47 tag or an Open Graph locale (`en-GB`, `en_GB`, `zh-Hant-TW`), upper case. */
function regionOf(tag: string | undefined): string | null {
  if (!tag) return null;
  const parts = tag.trim().split(/[-_]/);
  for (const p of parts.slice(1)) if (/^[A-Za-z]{2}$/.test(p)) return p.toUpperCase();
  return null;
}

/** Language-only tags whose language is spoken mainly in one country: `ja` → JP, `de` → DE, and so on. */
const LANGUAGE_COUNTRY: Record<string, string> = { ja: 'JP', de: 'DE', fr: 'FR', it: 'IT', nl: 'NL', pl: 'PL', cs: 'CZ', sv: 'SE', da: 'DK', fi: 'FI', nb: 'NO', no: 'NO', ko: 'KR', he: 'IL', el: 'GR', hu: 'HU', ro: 'RO', uk: 'UA', tr: 'TR', th: 'TH', vi: 'VN', id: 'ID' };

/**
 * The default countries for numbers written without a country code, most likely first, and the clue that gave
 * the first. The clues in order: JSON-LD `addressCountry` (the organisation's own address); the host's
 * country-code TLD (`.de`, `.co.uk`; `.edu`, `.gov`, `.mil` → US; generic-use ccTLDs such as `.io`, `.co`, `.tv`
 * are ignored); the region of `<html lang>` (`en-GB`); the region of `og:locale` (`fr_FR`); the country of a
 * language-only `<html lang>` spoken mainly in one country (`ja`, `de`); US for pages in English or with no
 * language; the country named most often in the text ("Netherlands", "Deutschland"), last because menus and
 * language pickers name countries too. The text is read with the first country, then with the second where the
 * first found nothing.
 */
export function guessCountry($: CheerioAPI, pageUrl: string, text: string, jsonLdCountries: string[]): { countries: CountryCode[]; from: CountryHint | null } {
  const hints: [CountryHint, string | null][] = [];
  for (const c of jsonLdCountries) hints.push(['json-ld', c]);
  let host = '';
  try {
    host = new URL(pageUrl).hostname.toLowerCase();
  } catch {
    // no URL: no TLD clue
  }
  const tld = host.slice(host.lastIndexOf('.') + 1);
  if (tld && !GENERIC_CCTLDS.has(tld)) {
    const fromTld = TLD_COUNTRY[tld] ?? (tld.length === 2 ? tld.toUpperCase() : null);
    if (fromTld) hints.push(['tld', fromTld]);
  }
  const lang = $('html').first().attr('lang') ?? $('html').first().attr('xml:lang') ?? '';
  hints.push(['html-lang', regionOf(lang)]);
  hints.push(['og-locale', regionOf($('meta[property="og:locale"]').first().attr('content'))]);
  const counts = new Map<CountryCode, number>();
  for (const [re, code] of COUNTRY_NAMES) {
    const n = text.match(re)?.length ?? 0;
    if (n) counts.set(code, (counts.get(code) ?? 0) + n);
  }
  const language = lang.trim().split(/[-_]/)[0]!.toLowerCase();
  hints.push(['html-lang', LANGUAGE_COUNTRY[language] ?? null]);
  if (!language || language === 'en') hints.push(['english', 'US']);
  const named = [...counts].sort((a, b) => b[1] - a[1])[0];
  hints.push(['text', named ? named[0] : null]);
  const countries: CountryCode[] = [];
  let from: CountryHint | null = null;
  for (const [hint, code] of hints) {
    const c = code?.toUpperCase();
    if (!isCountry(c) || countries.includes(c)) continue;
    if (!countries.length) from = hint;
    countries.push(c);
  }
  return { countries: countries.slice(0, 2), from };
}
