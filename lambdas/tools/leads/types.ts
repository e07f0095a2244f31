/**
 * The lead generator's report (docs/tools.md "Lead generation"): the response body of
 * POST /api/v1/tools/lead-generation/ and its parts. Its JSON Schema is schema.ts's.
 */

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

/** Where the default country for numbers written without a country code came from (country.ts, guessCountry). */
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
  default_country: { country: string | null; from: CountryHint | null };
  /** The page itself, then the contact pages followed (with `followContactPages`). */
  pages: LeadsPage[];
}
