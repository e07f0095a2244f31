/**
 * Lead generation (SPEC.md area B, `POST /api/v1/tools/lead-generation/`; docs/tools.md): the email addresses,
 * phone numbers and social-network profiles a page shows, each with where it was found.
 *
 * The steps:
 * 1. Parse the page into the tree a browser builds (engine/html/parse.ts through loadHtml) and read its visible
 *    text: script, style, template, noscript and comments are not text, so addresses in analytics settings,
 *    Sentry DSNs and commented-out markup are never read. JSON-LD blocks are read as data.
 * 2. Emails: `mailto:` links (the query such as `?subject=` cut, percent-decoded), addresses in the text
 *    (HTML entities such as `&#64;` are decoded by the parser), the spelled-out forms people use against
 *    harvesters (`name [at] domain [dot] edu`, `name(at)domain.org`, `name at domain dot com`,
 *    `name @ domain.com`, in English, German, French and Spanish words), Cloudflare's email protection
 *    (`/cdn-cgi/l/email-protection#<hex>` links and `data-cfemail`: the first byte is the key every other
 *    byte is XORed with) and JSON-LD `email`. Junk is left out: file names such as `logo@2x.png`,
 *    documentation and placeholder domains (RFC 2606 `example.*`, `domain.com`, `yourcompany.com`),
 *    placeholder local parts on generic domains (`your@email.com`), error-reporting DSNs and hex hashes as
 *    local parts (`<32 hex>@sentry.io`, `…@sentry.wixpress.com`).
 * 3. Phones: `tel:` links, JSON-LD `telephone` and `faxNumber`, and the text, parsed by libphonenumber-js
 *    (the `max` metadata, so that validation checks each country's number ranges and not only lengths:
 *    dates, prices, ZIP codes and ISBNs do not pass). Numbers written without a country code are read in
 *    the page's country, guessed by {@link guessCountry}. A number preceded by a label of another kind of
 *    identifier (ISBN, VAT, SIRET, ABN, order, SKU, …) is not a phone number.
 * 4. Social profiles: links (`<a>`, `<link>`, `<area>`), JSON-LD `sameAs`, Open Graph `article:publisher` /
 *    `article:author` and the `twitter:site` / `twitter:creator` handles, for LinkedIn, X (Twitter),
 *    Facebook, Instagram, YouTube, GitHub, TikTok, Pinterest, Threads, Bluesky, Mastodon, Telegram and
 *    WhatsApp. Only profile URLs count: share, intent, hashtag, post, video and tracking URLs do not.
 *
 * {@link findLeads} adds, on request, the site's contact, about, imprint and team pages linked from the page.
 *
 * Every page is hostile input ({@link LEADS_LIMITS}): the tree is walked without recursion, the text read for
 * emails and phone numbers is at most its first and last half million characters, libphonenumber reads at most
 * {@link LEADS_LIMITS}.phoneSegments pieces of 2,000 characters (the first and the last ones) and gives up on a
 * piece after 20 candidates that are no number, and at most 10,000 links are read. Every regular expression that
 * runs on page text is linear (no nested quantifiers over overlapping characters) or runs on a bounded slice.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { isTag, isText, type AnyNode, type Element } from 'domhandler';
import { findPhoneNumbersInText, isSupportedCountry, parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max';
import { loadHtml } from '../engine/extract.ts';
import { boundedText, clipMiddle, headAndTail, type FetchedText, type PageFetch, type ToolPage } from './page.ts';
import { parseJsonLdBounded } from './structured-data.ts';

/** Limits of reading one page (docs/tools.md, "Limits of the analysis"). */
export const LEADS_LIMITS = {
  /** Characters of the page's visible text searched for emails and phone numbers: the first and last halves. */
  textChars: 1_000_000,
  /** Pieces of text (lines with 7 digits or more, cut at 2,000 characters) handed to libphonenumber: the first and last halves. */
  phoneSegments: 200,
  /** Candidates libphonenumber tries in one piece before giving up on it when none is a valid number (its `maxTries`). */
  phoneTries: 20,
  /** Links (`<a>`, `<link>`, `<area>`) read for mailto:, tel:, Cloudflare and social profiles: the first and last halves. */
  links: 10_000,
  /** Characters of one attribute value (href, data-cfemail, meta content) read; longer ones are no address, number or profile URL. */
  valueChars: 2_048,
  /** Emails, phone numbers and social profiles reported, each kind. */
  perKind: 500,
} as const;

// ---- the report ----

/** How a finding was read. */
export type LeadSourceType = 'mailto' | 'text' | 'obfuscated' | 'cloudflare' | 'tel' | 'json-ld' | 'link' | 'meta';

/** One place a finding was read: how, and on which page (its final URL). */
export interface LeadSource {
  type: LeadSourceType;
  page: string;
}

/** An email address: the local part as first written, the domain lower-cased. */
export interface EmailLead {
  email: string;
  sources: LeadSource[];
}

/** A phone number, valid for its country's numbering plan (libphonenumber-js `isValid()`). */
export interface PhoneLead {
  /** E.164 form, `+` and digits (`+16507234000`); an extension written beside the number is not part of it. */
  e164: string;
  /** The number as written in its own country (`(650) 723-4000`, `030 12345678`). */
  national: string;
  /** ISO 3166-1 alpha-2 country of the number; null for non-geographic numbers (`+800 …`). */
  country: string | null;
  sources: LeadSource[];
}

/** The social networks reported. */
export type SocialNetwork =
  | 'linkedin' | 'x' | 'facebook' | 'instagram' | 'youtube' | 'github' | 'tiktok' | 'pinterest'
  | 'threads' | 'bluesky' | 'mastodon' | 'telegram' | 'whatsapp';

/** A social-network profile. */
export interface SocialLead {
  network: SocialNetwork;
  /** The normalised profile URL: https, host lower-case without `www.` or a country/mobile subdomain, no tracking query, no trailing slash. */
  url: string;
  /**
   * The profile's name on its network, without `@`: `jsmith` (X, Instagram, GitHub, TikTok, Threads, Telegram,
   * Pinterest, Facebook; the page id for `facebook.com/pages/<name>/<id>`), `in/jsmith`, `company/acme` or
   * `school/stanford` (LinkedIn), `@handle`, `channel/<id>`, `user/<name>` or `c/<name>` (YouTube; a bare
   * `youtube.com/<name>` is the legacy custom URL `c/<name>`), `name.bsky.social` (Bluesky), `user@instance`
   * (Mastodon), the phone number's digits (WhatsApp).
   */
  handle: string;
  sources: LeadSource[];
}

/** Where the default country for numbers written without a country code came from ({@link guessCountry}). */
export type CountryHint = 'json-ld' | 'tld' | 'html-lang' | 'og-locale' | 'text' | 'english';

/** A page the report read. */
export interface LeadsPage {
  url: string;
  /** HTTP status; null when the page could not be fetched. */
  status: number | null;
  /** Why a followed page was not read (not fetched, an error status, not HTML). */
  skipped?: string;
}

/** The response of the lead-generation tool. */
export interface LeadsReport {
  /** The page analysed (its final URL). */
  url: string;
  emails: EmailLead[];
  phones: PhoneLead[];
  social: SocialLead[];
  /** The country national numbers were read in (of the page analysed), and which clue gave it. */
  defaultCountry: { country: string | null; from: CountryHint | null };
  /** The page itself, then the contact pages followed (with `followContactPages`). */
  pages: LeadsPage[];
}

const SOURCE_TYPES: LeadSourceType[] = ['mailto', 'text', 'obfuscated', 'cloudflare', 'tel', 'json-ld', 'link', 'meta'];
const NETWORKS: SocialNetwork[] = ['linkedin', 'x', 'facebook', 'instagram', 'youtube', 'github', 'tiktok', 'pinterest', 'threads', 'bluesky', 'mastodon', 'telegram', 'whatsapp'];
const sourcesSchema = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'page'],
    properties: { type: { type: 'string', enum: SOURCE_TYPES }, page: { type: 'string' } },
  },
} as const;

/** JSON Schema (draft-07, compiles under ajv strict mode) of {@link LeadsReport}. */
export const leadsReportSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'LeadsReport',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'emails', 'phones', 'social', 'defaultCountry', 'pages'],
  properties: {
    url: { type: 'string' },
    emails: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['email', 'sources'],
        properties: { email: { type: 'string', pattern: '^[^@\\s]+@[a-z0-9.-]+\\.[a-z]{2,24}$' }, sources: sourcesSchema },
      },
    },
    phones: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['e164', 'national', 'country', 'sources'],
        properties: {
          e164: { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$' },
          national: { type: 'string' },
          country: { type: ['string', 'null'], pattern: '^[A-Z]{2}$' },
          sources: sourcesSchema,
        },
      },
    },
    social: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['network', 'url', 'handle', 'sources'],
        properties: {
          network: { type: 'string', enum: NETWORKS },
          url: { type: 'string', pattern: '^https://' },
          handle: { type: 'string', minLength: 1 },
          sources: sourcesSchema,
        },
      },
    },
    defaultCountry: {
      type: 'object',
      additionalProperties: false,
      required: ['country', 'from'],
      properties: {
        country: { type: ['string', 'null'], pattern: '^[A-Z]{2}$' },
        from: { type: ['string', 'null'], enum: ['json-ld', 'tld', 'html-lang', 'og-locale', 'text', 'english', null] },
      },
    },
    pages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['url', 'status'],
        properties: { url: { type: 'string' }, status: { type: ['integer', 'null'] }, skipped: { type: 'string' } },
      },
    },
  },
} as const;

// ---- page text ----

/** Elements whose content is not page text. */
const NOT_TEXT = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object', 'canvas', 'select', 'textarea']);
/** Elements that end a line of text: a number or an address never runs across them. */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'tbody', 'td',
  'tfoot', 'th', 'thead', 'tr', 'ul', 'option', 'label', 'button', 'input', 'img',
]);

/**
 * The visible text of the body, one line per block; inline elements join (`<span>+1</span> 650…` stays one
 * number). Walked without recursion; at most {@link LEADS_LIMITS}.textChars characters, its first and last halves.
 */
function pageText($: CheerioAPI): string {
  const out: string[] = [];
  const root = $.root()[0];
  // A node to read, or a block's end (a line break).
  const stack: Array<AnyNode | null> = root ? [...root.children].reverse() : [];
  while (stack.length) {
    const n = stack.pop()!;
    if (n === null) {
      out.push('\n');
    } else if (isText(n)) {
      out.push(n.data);
    } else if (isTag(n)) {
      const name = n.name.toLowerCase();
      if (NOT_TEXT.has(name)) continue;
      if (BLOCKS.has(name)) {
        out.push('\n');
        stack.push(null);
      }
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }
  const text = clipMiddle(out.join(''), LEADS_LIMITS.textChars);
  return foldLines(text.replace(/[\t\f\r\u00a0\u2000-\u200b\u202f\u205f\u3000]/g, ' '));
}

/**
 * `text.replace(/ *\n\s*\/g, '\n')` in linear time: spaces before a line break and whitespace after it (blank
 * lines too) go. (V8 runs that expression in time quadratic in a run of spaces that no line break ends.)
 */
function foldLines(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    const last = i === lines.length - 1;
    if (i > 0) {
      let start = 0;
      while (start < line.length && /\s/.test(line[start]!)) start++;
      line = line.slice(start);
      if (!line && !last) continue; // swallowed by the whitespace after the previous line break
    }
    if (!last) {
      let end = line.length;
      while (end > 0 && line.charCodeAt(end - 1) === 0x20) end--;
      line = line.slice(0, end);
    }
    out.push(line);
  }
  return out.join('\n');
}

/** The number of decimal digits in `s` (Unicode Nd), counting no further than `stop`. */
function digits(s: string, stop = Infinity): number {
  let n = 0;
  for (const m of s.matchAll(/\p{Nd}/gu)) {
    void m;
    if (++n >= stop) break;
  }
  return n;
}

// ---- emails ----

const LOCAL = '[A-Za-z0-9_][A-Za-z0-9._%+-]{0,63}';
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** An address in text: a local part of the characters real addresses use, a host, a TLD of 2-24 letters. */
const EMAIL_IN_TEXT = new RegExp(`(?<![A-Za-z0-9._%+\\-/])(${LOCAL})@((?:${LABEL}\\.)+[A-Za-z]{2,24})(?![A-Za-z0-9-]|\\.[A-Za-z0-9])`, 'g');
/** `name @ domain.com`: an @ with spaces around it. */
const EMAIL_SPACED = new RegExp(`(?<![A-Za-z0-9._%+\\-/])(${LOCAL}) {1,2}@ {1,2}((?:${LABEL}\\.)+[A-Za-z]{2,24})(?![A-Za-z0-9-]|\\.[A-Za-z0-9])`, 'g');
const AT_WORDS = 'at|arroba|arobase|ät|@';
const DOT_WORDS = 'dot|punkt|punto|point|\\.';
const AT_BRACKETED = `\\s*[\\[({<]\\s*(?:${AT_WORDS})\\s*[\\])}>]\\s*`;
const AT_SPACED = '\\s+(?:at|AT)\\s+';
const DOT_BRACKETED = `\\s*[\\[({<]\\s*(?:${DOT_WORDS})\\s*[\\])}>]\\s*`;
const DOT_SPACED = '\\s+(?:dot|DOT)\\s+';
/** The spelled-out forms: `name [at] domain [dot] edu`, `name(at)domain.org`, `name at domain dot com`. */
const EMAIL_SPELLED = new RegExp(
  `(?<![A-Za-z0-9._%+-])(${LOCAL})(${AT_BRACKETED}|${AT_SPACED})(${LABEL}(?:(?:${DOT_BRACKETED}|${DOT_SPACED}|\\.)${LABEL})+)(?![A-Za-z0-9-])`,
  'gi',
);
const DOT_SPELLED_SPLIT = new RegExp(`${DOT_BRACKETED}|${DOT_SPACED}|\\.`, 'i');
const VALID_EMAIL = new RegExp(`^(${LOCAL})@((?:${LABEL}\\.)+[A-Za-z]{2,24})$`);

/** File extensions that look like TLDs after an `@2x`: `logo@2x.png` is an image, not an address. */
const FILE_TLDS = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'webp', 'svg', 'bmp', 'ico', 'tif', 'tiff', 'avif', 'heic', 'css', 'js', 'mjs', 'json', 'xml', 'map',
  'woff', 'woff2', 'ttf', 'otf', 'eot', 'mp4', 'webm', 'mp3', 'wav', 'pdf', 'zip', 'html', 'htm', 'php', 'aspx',
]);
/** Documentation and placeholder domains (RFC 2606 and form hints). */
const PLACEHOLDER_DOMAINS = /^(?:(?:[a-z0-9-]+\.)*example\.(?:com|org|net|edu)|(?:[a-z0-9-]+\.)*(?:example|test|invalid|localhost|local)|domain\.[a-z]+|(?:your|my)(?:-?(?:domain|company|site|website|email|business|mail))\.[a-z]+|company\.com|website\.com|site\.com|email\.com|mail\.com|emailaddress\.com|address\.com)$/;
/** Placeholder local parts: junk on a generic domain (`your@email.com`). */
const PLACEHOLDER_LOCALS = new Set([
  'you', 'your', 'yourname', 'your.name', 'youremail', 'your.email', 'name', 'username', 'user', 'email', 'someone', 'somebody', 'me',
  'john.doe', 'jane.doe', 'johndoe', 'janedoe', 'john', 'jane', 'firstname.lastname', 'first.last', 'firstname', 'vorname.nachname',
  'prenom.nom', 'nombre', 'xxx', 'xyz', 'abc', 'test', 'example', 'sample',
]);
/** Error-reporting and analytics hosts whose addresses are keys, not mailboxes. */
const DSN_DOMAINS = /(?:^|\.)(?:sentry\.io|sentry-next\.wixpress\.com|sentry\.wixpress\.com|wixpress\.com|ingest\.sentry\.io|getsentry\.com)$/;

/** The address normalised (domain lower-cased), or null when it is not a usable address (junk, placeholder, malformed). */
function cleanEmail(raw: string): string | null {
  const m = VALID_EMAIL.exec(raw.trim());
  if (!m) return null;
  const local = m[1]!;
  const domain = m[2]!.toLowerCase();
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  if (FILE_TLDS.has(tld)) return null;
  if (/^\d+x$/i.test(domain.split('.')[0]!)) return null; // sprite@3x.<anything>
  if (PLACEHOLDER_DOMAINS.test(domain)) return null;
  if (PLACEHOLDER_LOCALS.has(local.toLowerCase()) && /^(?:email|mail|domain|company|website|site|yourdomain|yourcompany|gmail|example)\.[a-z]+$/.test(domain)) return null;
  if (DSN_DOMAINS.test(domain)) return null;
  if (/^[0-9a-f]{16,}$/i.test(local)) return null; // a hash, not a mailbox
  if (local.includes('..') || local.startsWith('.') || local.endsWith('.')) return null;
  return `${local}@${domain}`;
}

/** Percent-decoding that keeps the input when it is not valid percent-encoding. */
function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The addresses of a `mailto:` URL (RFC 6068: comma-separated, query after `?`). */
function mailtoAddresses(href: string): string[] {
  const body = href.replace(/^\s*mailto:/i, '');
  const to = body.split('?')[0]!;
  return percentDecode(to)
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Cloudflare email obfuscation: hex, first byte the key, each next byte XOR the key. Null on malformed input. */
export function decodeCloudflareEmail(hex: string): string | null {
  if (!/^(?:[0-9a-f]{2}){2,}$/i.test(hex)) return null;
  const key = parseInt(hex.slice(0, 2), 16);
  let out = '';
  for (let i = 2; i < hex.length; i += 2) out += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16) ^ key);
  try {
    // The bytes are the address's UTF-8 (Cloudflare's decoder runs decodeURIComponent(escape(s)) over them).
    return decodeURIComponent(escape(out));
  } catch {
    return out;
  }
}

// ---- phones ----

/** Labels of identifiers that are written like phone numbers: a number right after one is not a phone number. */
const NOT_PHONE_LABEL = new RegExp(
  '(?<![\\p{L}\\p{N}])(?:isbn(?:-1[03])?|issn|doi|pmid|pmc|isni|vat|ust-?id(?:nr)?|ust\\.?-?idnr|tva|iva|btw|siret|siren|rcs|ape|naf|abn|acn|ein|tin|' +
    'ssn|hrb|hra|kvk|cif|nif|cnpj|cpf|rcs(?:\\s+[\\p{L}-]+)?|umsatzsteuer[\\p{L}-]*|steuer-?nr|sku|upc|ean|gtin(?:-?1[234])?|mpn|model(?:\\s*(?:no|nr|number|#))?|part\\s*(?:no|nr|number|#)|' +
    'serial(?:\\s*(?:no|nr|number|#))?|order(?:\\s*(?:no|nr|number|code|id|#))?|invoice|ref(?:erence)?|account|iban|bic|swift|' +
    'routing|case|ticket|tracking|registration|reg(?:istered)?\\.?\\s*(?:no|nr|number)|company\\s*(?:no|nr|number)|' +
    'handelsregister|steuernummer|st\\.?-?nr|amtsgericht[\\s\\p{L}]*|id|no|nr|n°|#|' +
    // An EU VAT number's country prefix (and France's two-character key): "DE 287 445 913", "FR 63 512834907".
    '(?-i:AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|GB|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|PT|RO|SE|SI|SK|CHE|XI)\\s?(?:[0-9A-Z]{2}\\s?)?)\\s*[.:#]?\\s*$',
  'iu',
);
/** Dates written like numbers: `08.04.2015`, `2017-02-06`, `03/28/2023`. */
const DATE_LIKE = /\b\d{1,2}[./-]\d{1,2}[./-](?:19|20)\d{2}\b|\b(?:19|20)\d{2}[./-]\d{1,2}[./-]\d{1,2}\b/;
/** Ranges of years or of page numbers: `1996-2015`, `3548–3580`. */
const RANGE_LIKE = /^(?:(?:19|20)\d{2}\s*[-–—]\s*(?:19|20)\d{2}|\d+\s*[–—]\s*\d+)$/;

/** True when the text of a match is not a phone number whatever its digits: a date, a range, unbalanced parentheses, too few digits. */
function notPhoneShape(raw: string): boolean {
  if (DATE_LIKE.test(raw) || RANGE_LIKE.test(raw.trim())) return true;
  if (raw.includes('(') !== raw.includes(')')) return true;
  // Fewer than 7 digits: a short code, a count or part of a sum, never a number a page gives to call.
  if (digits(raw, 7) < 7) return true;
  return /^\+\s/.test(raw);
}

/** Lines longer than this are searched in pieces (libphonenumber's matcher is slow on very long inputs). */
const MAX_SEGMENT = 2000;

/** A valid number found, with its E.164 form as key. */
function phoneLead(n: PhoneNumber): Omit<PhoneLead, 'sources'> {
  return { e164: n.number, national: n.formatNational(), country: n.country ?? null };
}

/** The numbers in one line of text, read with each default country in turn (a later country only where nothing was found); `before` is the end of the previous line, for labels on their own line. */
function phonesInLine(line: string, before: string, countries: CountryCode[]): PhoneNumber[] {
  const found: { start: number; end: number; number: PhoneNumber }[] = [];
  const tries: (CountryCode | undefined)[] = countries.length ? countries : [undefined];
  for (const country of tries) {
    let matches;
    try {
      // maxTries: libphonenumber gives up on the piece after this many candidates that are no valid number.
      // (libphonenumber-js passes it to its PhoneNumberMatcher; its typings leave it out.)
      const options = { ...(country ? { defaultCountry: country } : {}), maxTries: LEADS_LIMITS.phoneTries } as { defaultCountry?: CountryCode };
      matches = findPhoneNumbersInText(line, options);
    } catch {
      continue;
    }
    for (const m of matches) {
      if (!m.number.isValid()) continue;
      if (found.some((f) => m.startsAt < f.end && m.endsAt > f.start)) continue;
      const lead = line.slice(Math.max(0, m.startsAt - 40), m.startsAt);
      if (NOT_PHONE_LABEL.test(lead) || (!lead.trim() && NOT_PHONE_LABEL.test(before))) continue;
      if (notPhoneShape(line.slice(m.startsAt, m.endsAt))) continue;
      // A number glued to letters, digits or URL and code punctuation is part of something else (an id, a path, a DOI).
      const prev = line[m.startsAt - 1] ?? ' ';
      const prev2 = line[m.startsAt - 2] ?? ' ';
      const next = line[m.endsAt] ?? ' ';
      if (/[\p{L}\p{N}/._=?&#@\\]/u.test(prev) || (prev === '-' && /[\p{L}\p{N}/]/u.test(prev2)) || /[0-9]/.test(next)) continue;
      if (next === '.' && /[0-9]/.test(line[m.endsAt + 1] ?? '')) continue;
      found.push({ start: m.startsAt, end: m.endsAt, number: m.number });
    }
  }
  return found.sort((a, b) => a.start - b.start).map((f) => f.number);
}

/**
 * The lines of `text` worth handing to the phone matcher (those with at least 7 digits, long ones cut at spaces),
 * each with the end of the line before it; at most {@link LEADS_LIMITS}.phoneSegments of them, the first and last.
 */
function phoneLines(text: string): { line: string; before: string }[] {
  const out: { line: string; before: string }[] = [];
  let previous = '';
  for (const line of text.split('\n')) {
    const before = previous;
    if (line.trim()) previous = line.slice(-60);
    if (digits(line, 7) < 7) continue;
    if (line.length <= MAX_SEGMENT) {
      out.push({ line, before });
      continue;
    }
    for (let i = 0; i < line.length; ) {
      let end = Math.min(line.length, i + MAX_SEGMENT);
      if (end < line.length) {
        const space = line.lastIndexOf(' ', end);
        if (space > i + MAX_SEGMENT / 2) end = space;
      }
      const piece = line.slice(i, end);
      if (digits(piece, 7) >= 7) out.push({ line: piece, before: i === 0 ? before : '' });
      i = end;
    }
  }
  return headAndTail(out, LEADS_LIMITS.phoneSegments);
}

/** A number from a `tel:` link or JSON-LD: parsed with each default country in turn, null unless valid. */
function parsePhone(raw: string, countries: CountryCode[]): PhoneNumber | null {
  if (raw.length > LEADS_LIMITS.valueChars) return null;
  const value = percentDecode(raw).replace(/^tel:/i, '').split(/[;?]/)[0]!.trim();
  if (digits(value, 6) < 6) return null;
  for (const country of countries.length ? countries : [undefined]) {
    try {
      const n = parsePhoneNumberFromString(value, country);
      if (n?.isValid()) return n;
    } catch {
      // not a phone number
    }
  }
  return null;
}

// ---- the country of national numbers ----

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
function guessCountry($: CheerioAPI, pageUrl: string, text: string, jsonLdCountries: string[]): { countries: CountryCode[]; from: CountryHint | null } {
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

// ---- social profiles ----

const SEGMENT = /^[A-Za-z0-9._-]+$/;
const X_RESERVED = new Set(['share', 'intent', 'home', 'search', 'hashtag', 'i', 'login', 'signup', 'settings', 'explore', 'messages', 'notifications', 'tos', 'privacy', 'about', 'compose', 'widgets', 'account', 'download', 'oauth', 'statuses', 'status', 'following', 'followers', 'who_to_follow', 'lists', 'jobs', 'en', 'logout', 'rules']);
const FACEBOOK_RESERVED = new Set([
  'sharer', 'sharer.php', 'share.php', 'share', 'dialog', 'plugins', 'tr', 'connect', 'login', 'login.php', 'help', 'about', 'business', 'policies',
  'policy.php', 'privacy', 'legal', 'events', 'groups', 'watch', 'photo.php', 'photo', 'photos', 'story.php', 'permalink.php', 'hashtag', 'home.php',
  '2008', 'ads', 'settings', 'marketplace', 'gaming', 'notes', 'media', 'video.php', 'videos', 'l.php', 'app_scoped_user_id', 'apps', 'developers', 'terms',
  'terms.php', 'careers', 'search', 'friends', 'messages', 'reel', 'reels', 'stories', 'fundraisers', 'offsite_event', 'recover', 'r.php', 'campaign',
  'v2.0', 'v3.0', 'pg', 'fbml', 'bookmarks', 'lite', 'watchparty',
]);
const INSTAGRAM_RESERVED = new Set(['p', 'reel', 'reels', 'explore', 'stories', 'accounts', 'tv', 'direct', 'about', 'developer', 'legal', 'web', 'embed.js', 'share']);
const YOUTUBE_RESERVED = new Set([
  'watch', 'embed', 'results', 'playlist', 'shorts', 'feed', 'redirect', 't', 'about', 'account', 'premium', 'kids', 's', 'live', 'hashtag', 'gaming',
  'music', 'yt', 'iframe_api', 'subscription_center', 'attribution_link', 'howyoutubeworks', 'creators', 'ads', 'player_api', 'v', 'post', 'signin',
  'logout', 'upload', 'channel_switcher', 'oembed', 'get_video_info', 'api', 'sw.js', 'new', 'trending', 'favicon.ico',
]);
const GITHUB_RESERVED = new Set([
  'features', 'about', 'pricing', 'login', 'join', 'topics', 'marketplace', 'explore', 'settings', 'site', 'security', 'enterprise', 'apps', 'collections',
  'trending', 'events', 'notifications', 'contact', 'customer-stories', 'readme', 'team', 'new', 'search', 'sponsors', 'solutions', 'resources',
  'signup', 'logout', 'codespaces', 'copilot', 'issues', 'pulls', 'discussions', 'orgs', 'users', 'blog', 'git-guides', 'mobile', 'premium-support',
]);
const PINTEREST_RESERVED = new Set(['pin', 'search', 'ideas', 'today', 'business', '_', 'explore', 'categories', 'topics', 'discover', 'login', 'about', 'settings', 'resource', 'sitemaps', 'v3', 'oauth', 'pinit.js', 'pinit']);
const TELEGRAM_RESERVED = new Set(['share', 'joinchat', 'addstickers', 'addemoji', 'proxy', 'socks', 'iv', 'login', 'c', 'setlanguage', 'addtheme', 'bg', 'invoice']);
/** Fediverse servers whose `/@user` URLs are Mastodon-style profiles (others count when linked with `rel="me"`). */
const MASTODON_HOSTS = /(?:^|\.)(?:mastodon\.[a-z.]+|mstdn\.[a-z.]+|mas\.to|fosstodon\.org|hachyderm\.io|infosec\.exchange|techhub\.social|social\.vivaldi\.net|mastodon\.social|chaos\.social|toot\.community|universeodon\.com|ioc\.exchange|sigmoid\.social|det\.social|troet\.cafe|norden\.social)$/;
/** Sites with `/@user` paths that are not Mastodon servers. */
const NOT_MASTODON = /(?:^|\.)(?:medium\.com|tiktok\.com|threads\.net|threads\.com|youtube\.com|substack\.com|dev\.to|vimeo\.com|behance\.net|flickr\.com|soundcloud\.com|twitch\.tv|pixiv\.net|letterboxd\.com|linktr\.ee)$/;

/** The profile a URL points to, or null when it is not a profile of a reported network (a share, post or tracking URL, another site). */
export function socialProfile(href: string, relMe = false): { network: SocialNetwork; handle: string; url: string } | null {
  let u: URL;
  try {
    u = new URL(href.trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  // www., mobile and country subdomains (uk.linkedin.com, es-es.facebook.com), not the name of a two-label host (wa.me).
  const base = host.split('.').length > 2 ? host.replace(/^(?:www\d?|m|mobile|touch|[a-z]{2}(?:-[a-z]{2})?)\./, '') : host;
  let path = u.pathname;
  // Old X links: twitter.com/#!/name
  if (u.hash.startsWith('#!/') || u.hash.startsWith('#%21/')) path = u.hash.replace(/^#(?:!|%21)/, '');
  const segs = path.split('/').filter(Boolean).map(percentDecode);
  const first = segs[0] ?? '';
  const lower = first.toLowerCase();
  const make = (network: SocialNetwork, handle: string, urlHost: string, urlPath: string) => ({ network, handle, url: `https://${urlHost}/${urlPath}` });

  if (base === 'linkedin.com') {
    if (segs.length >= 2 && ['in', 'company', 'school', 'showcase'].includes(lower) && /^[\p{L}\p{N}._%-]+$/u.test(segs[1]!)) {
      const handle = `${lower}/${segs[1]!}`;
      return make('linkedin', handle, 'linkedin.com', handle);
    }
    return null;
  }
  if (base === 'twitter.com' || base === 'x.com') {
    if (lower === 'intent' && ['follow', 'user'].includes((segs[1] ?? '').toLowerCase())) {
      const name = u.searchParams.get('screen_name');
      return name && /^[A-Za-z0-9_]{1,15}$/.test(name) ? make('x', name, base, name) : null;
    }
    if (segs.length !== 1) return null;
    const name = first.replace(/^@/, '');
    if (!/^[A-Za-z0-9_]{1,15}$/.test(name) || X_RESERVED.has(name.toLowerCase())) return null;
    return make('x', name, base, name);
  }
  if (base === 'facebook.com' || base === 'fb.com' || base === 'fb.me') {
    if (lower === 'profile.php') {
      const id = u.searchParams.get('id');
      return id && /^\d+$/.test(id) ? make('facebook', id, 'facebook.com', `profile.php?id=${id}`) : null;
    }
    if ((lower === 'pages' || lower === 'people') && segs.length >= 3 && /^\d+$/.test(segs[2]!)) {
      return make('facebook', segs[2]!, 'facebook.com', `${lower}/${segs[1]!}/${segs[2]!}`);
    }
    if (segs.length !== 1 || FACEBOOK_RESERVED.has(lower) || !/^[\p{L}\p{N}.-]{2,150}$/u.test(first) || /\.php$/i.test(first)) return null;
    return make('facebook', first, 'facebook.com', first);
  }
  if (base === 'instagram.com' || base === 'instagr.am') {
    if (segs.length !== 1 || INSTAGRAM_RESERVED.has(lower) || !/^[A-Za-z0-9._]{1,30}$/.test(first)) return null;
    return make('instagram', first, 'instagram.com', first);
  }
  if (base === 'youtube.com') {
    if (first.startsWith('@') && /^@[\p{L}\p{N}._-]{2,100}$/u.test(first)) return make('youtube', first, 'youtube.com', first);
    if (['channel', 'user', 'c'].includes(lower) && segs[1] && /^[\p{L}\p{N}._-]+$/u.test(segs[1])) {
      const handle = `${lower}/${segs[1]}`;
      return make('youtube', handle, 'youtube.com', handle);
    }
    if (segs.length === 1 && !YOUTUBE_RESERVED.has(lower) && /^[A-Za-z0-9_-]{2,100}$/.test(first) && !first.includes('.')) {
      return make('youtube', `c/${first}`, 'youtube.com', `c/${first}`);
    }
    return null;
  }
  if (base === 'github.com') {
    if (segs.length !== 1 || GITHUB_RESERVED.has(lower) || !/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(first)) return null;
    return make('github', first, 'github.com', first);
  }
  if (base === 'tiktok.com') {
    if (segs.length !== 1 || !/^@[A-Za-z0-9._]{2,24}$/.test(first)) return null;
    return make('tiktok', first.slice(1), 'tiktok.com', first);
  }
  if (/^pinterest\.(?:com|co\.uk|ca|fr|de|es|it|at|ch|ie|nz|jp|pt|se|dk|cl|ph|com\.au|com\.mx)$/.test(base)) {
    if (!first || PINTEREST_RESERVED.has(lower) || !/^[A-Za-z0-9_]{3,30}$/.test(first)) return null;
    return make('pinterest', first, 'pinterest.com', first);
  }
  if (base === 'threads.net' || base === 'threads.com') {
    if (segs.length !== 1 || !/^@[A-Za-z0-9._]{1,30}$/.test(first)) return null;
    return make('threads', first.slice(1), base, first);
  }
  if (base === 'bsky.app') {
    if (segs.length !== 2 || lower !== 'profile' || !/^(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}$|^did:plc:[a-z0-9]+$/.test(segs[1]!)) return null;
    return make('bluesky', segs[1]!, 'bsky.app', `profile/${segs[1]!}`);
  }
  if (base === 't.me' || base === 'telegram.me') {
    if (lower === 's' && segs[1]) return /^[A-Za-z0-9_]{4,32}$/.test(segs[1]) ? make('telegram', segs[1], 't.me', segs[1]) : null;
    if (segs.length !== 1 || TELEGRAM_RESERVED.has(lower) || !/^[A-Za-z][A-Za-z0-9_]{3,31}$/.test(first)) return null;
    return make('telegram', first, 't.me', first);
  }
  if (base === 'wa.me') {
    if (segs.length !== 1 || !/^\+?\d{7,15}$/.test(first)) return null;
    const digits = first.replace(/^\+/, '');
    return make('whatsapp', digits, 'wa.me', digits);
  }
  if (base === 'whatsapp.com' && host.startsWith('api.') && lower === 'send') {
    const phone = (u.searchParams.get('phone') ?? '').replace(/\D/g, '');
    return phone.length >= 7 && phone.length <= 15 ? make('whatsapp', phone, 'wa.me', phone) : null;
  }
  // Mastodon-style: https://<server>/@user on a known server, or on any server when linked with rel="me".
  if (segs.length === 1 && /^@[A-Za-z0-9_]{1,30}$/.test(first) && !NOT_MASTODON.test(host) && (MASTODON_HOSTS.test(host) || relMe)) {
    const server = host.replace(/^www\./, '');
    return make('mastodon', `${first.slice(1)}@${server}`, server, first);
  }
  return null;
}

// ---- one page ----

/** Collects findings with their sources, de-duplicated by key. */
class Collector<T extends { sources: LeadSource[] }> {
  readonly items = new Map<string, T>();
  add(key: string, make: () => Omit<T, 'sources'>, source: LeadSource): void {
    const have = this.items.get(key);
    if (have) {
      if (!have.sources.some((s) => s.type === source.type && s.page === source.page)) have.sources.push(source);
      return;
    }
    if (this.items.size >= LEADS_LIMITS.perKind) return;
    this.items.set(key, { ...make(), sources: [source] } as T);
  }
  merge(other: Collector<T>): void {
    for (const [key, item] of other.items) for (const s of item.sources) this.add(key, () => item, s);
  }
  list(): T[] {
    return [...this.items.values()].map((t) => ({ ...t, sources: [...t.sources] }));
  }
}

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
function strings(values: unknown[] | undefined): string[] {
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

function isHtml(page: Pick<ToolPage, 'contentType' | 'html'>): boolean {
  const t = page.contentType.toLowerCase();
  if (t === 'text/html' || t === 'application/xhtml+xml') return true;
  return t === '' && /^\s*(?:<!doctype html|<html|<head|<body|<)/i.test(page.html.slice(0, 512));
}

/** Collectors of one page. */
interface PageFindings {
  emails: Collector<EmailLead>;
  phones: Collector<PhoneLead>;
  social: Collector<SocialLead>;
  country: { countries: CountryCode[]; from: CountryHint | null };
}

function emptyFindings(): PageFindings {
  return { emails: new Collector(), phones: new Collector(), social: new Collector(), country: { countries: [], from: null } };
}

/** Reads one page's findings (see the module comment for the rules). */
function readPage(page: ToolPage): PageFindings {
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

  const textOnly = !isHtml(page);
  if (textOnly && !/^text\//i.test(page.contentType)) return f; // images, PDFs, JSON: nothing to read
  const $ = loadHtml(textOnly ? `<pre>${page.html.replace(/[<&]/g, (c) => (c === '<' ? '&lt;' : '&amp;'))}</pre>` : page.html);
  let base = pageUrl;
  try {
    const b = $('base[href]').first().attr('href');
    if (b) base = new URL(b, pageUrl).href;
  } catch {
    // a broken <base href> is ignored, as browsers do
  }
  const text = pageText($);

  // JSON-LD.
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
    let abs: string;
    try {
      abs = new URL(href.trim(), base).href;
    } catch {
      continue;
    }
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
 * The emails, phone numbers and social profiles of one page (no fetching; see the module comment for the rules).
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
    defaultCountry: { country: f.country.countries[0] ?? null, from: f.country.from },
    pages: [{ url, status: page.status }],
  };
}

// ---- contact pages ----

/** Most follow-up pages read by {@link findLeads}. */
export const MAX_CONTACT_PAGES = 5;

/** Words of contact, about, imprint and team pages in link text and URLs, with their rank (lower first). */
const CONTACT_WORDS: [RegExp, number][] = [
  [/\b(?:contact(?:[-_ ]?us)?|contacts|kontakt|contacto|contato|contatti|contattaci|contactez[-_ ]nous|nous[-_ ]contacter|get[-_ ]in[-_ ]touch|reach[-_ ]us|kontaktieren|yhteystiedot|kapcsolat|kontakty)\b|お問い合わせ|お問合せ|問い合わせ|联系我们|聯絡我們|연락처/i, 0],
  [/\b(?:impressum|imprint|legal[-_ ]notice|mentions[-_ ]l[ée]gales|aviso[-_ ]legal|note[-_ ]legali|colofon|colophon)\b|会社概要|会社情報/i, 1],
  [/\b(?:about(?:[-_ ]us)?|who[-_ ]we[-_ ]are|company|über[-_ ]uns|ueber[-_ ]uns|uber[-_ ]uns|a[-_ ]propos|à propos|qui[-_ ]sommes[-_ ]nous|quienes[-_ ]somos|quiénes somos|sobre[-_ ](?:nosotros|n[oó]s)|chi[-_ ]siamo|over[-_ ]ons|om[-_ ]oss|o[-_ ]nas)\b|关于我们|關於我們/i, 2],
  [/\b(?:team|our[-_ ]team|staff|people|directory|faculty|leadership|equipe|équipe|equipo|mitarbeiter|unser[-_ ]team|ansprechpartner)\b/i, 3],
];

/** Same site: the same host, `www.` aside. */
function sameSite(a: URL, b: URL): boolean {
  const h = (u: URL): string => u.hostname.toLowerCase().replace(/^www\./, '');
  return h(a) === h(b) && (a.protocol === 'http:' || a.protocol === 'https:');
}

/**
 * The site's contact, imprint, about and team pages linked from the page, best first, at most `max`: links to the
 * same host (`www.` aside) whose text, title or path holds one of the words of {@link CONTACT_WORDS} (English,
 * German, French, Spanish, Portuguese, Italian, Dutch and a few more), contact pages first, then imprints, about
 * and team pages; the page itself, fragments of it and files (PDF, images) are left out.
 */
export function contactPageLinks(page: ToolPage, max = MAX_CONTACT_PAGES): string[] {
  if (!isHtml(page)) return [];
  const $ = loadHtml(page.html);
  let here: URL;
  try {
    here = new URL(page.url || page.requestedUrl);
  } catch {
    return [];
  }
  let base = here.href;
  try {
    const b = $('base[href]').first().attr('href');
    if (b) base = new URL(b, here).href;
  } catch {
    // ignored
  }
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
      if (!isHtml(followed)) return void pages.push({ url: link, status: r.status, skipped: `not HTML (${r.contentType || 'no content type'})` });
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
    defaultCountry: { country: first.country.countries[0] ?? null, from: first.country.from },
    pages,
  };
}
