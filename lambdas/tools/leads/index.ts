/**
 * Lead generation (docs/spec.md, "Tool endpoints", `POST /api/v1/tools/lead-generation/`; docs/tools.md): the email addresses,
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
 * {@link findLeads} (contact-pages.ts) adds, on request, the site's contact, about, imprint and team pages linked
 * from the page.
 *
 * Every page is hostile input ({@link LEADS_LIMITS}): the tree is walked without recursion, the text read for
 * emails and phone numbers is at most its first and last half million characters, libphonenumber reads at most
 * {@link LEADS_LIMITS}.phoneSegments pieces of 2,000 characters (the first and the last ones) and gives up on a
 * piece after 20 candidates that are no number, and at most 10,000 links are read. Every regular expression that
 * runs on page text is linear (no nested quantifiers over overlapping characters) or runs on a bounded slice.
 *
 * The parts, each in its module of this folder: the report's types (types.ts) and schema (schema.ts), the limits
 * (limits.ts), the page's text (text.ts), JSON-LD (json-ld.ts), emails (emails.ts), phones (phones.ts) and the
 * country they are read in (country.ts), social profiles (social.ts), one page's findings (one-page.ts,
 * collector.ts) and the contact pages (contact-pages.ts).
 */
export { contactPageLinks, findLeads, MAX_CONTACT_PAGES, type FindLeadsOptions } from './contact-pages.ts';
export { decodeCloudflareEmail } from './emails.ts';
export { LEADS_LIMITS } from './limits.ts';
export { extractLeads } from './one-page.ts';
export { leadsReportSchema } from './schema.ts';
export { socialProfile } from './social.ts';
export type {
  CountryHint, EmailLead, LeadSource, LeadSourceType, LeadsPage, LeadsReport, PhoneLead, SocialLead, SocialNetwork,
} from './types.ts';
