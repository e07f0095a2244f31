/**
 * The lead generator's limits on one page (docs/tools.md, "Limits of the analysis").
 */

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
