/**
 * Phone numbers (step 3 of index.ts's module comment): found in text, `tel:` links and JSON-LD by
 * libphonenumber-js (`max` metadata), with the shapes and labels that are no phone number left out.
 */
import { findPhoneNumbersInText, parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max';
import { headAndTail } from '../page.ts';
import { LEADS_LIMITS } from './limits.ts';
import { digits, percentDecode } from './text.ts';
import type { PhoneLead } from './types.ts';

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
export function phoneLead(n: PhoneNumber): Omit<PhoneLead, 'sources'> {
  return { e164: n.number, national: n.formatNational(), country: n.country ?? null };
}

/** The numbers in one line of text, read with each default country in turn (a later country only where nothing was found); `before` is the end of the previous line, for labels on their own line. */
export function phonesInLine(line: string, before: string, countries: CountryCode[]): PhoneNumber[] {
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
export function phoneLines(text: string): { line: string; before: string }[] {
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
export function parsePhone(raw: string, countries: CountryCode[]): PhoneNumber | null {
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
