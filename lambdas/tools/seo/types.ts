/**
 * The SEO analyzer's report (docs/tools.md "SEO analyzer"): the response body of POST /api/v1/tools/seo-analyzer/
 * and its parts. Its JSON Schema is schema.ts's; the analyzer that fills it is analyze.ts.
 */
import type { StructuredData } from '../structured-data.ts';

/** Robots directives of the page itself (not robots.txt). */
export interface RobotsDirectives {
  /** `content` of the `<meta name="robots">` elements, joined with `, ` in document order; null when none. */
  meta: string | null;
  /** The `X-Robots-Tag` response header(s) as received (repeated headers joined with `, `); null when absent. */
  x_robots_tag: string | null;
  /**
   * True when a directive addressed to all crawlers (meta robots, or an X-Robots-Tag directive without a
   * user-agent prefix) says `noindex`, `none`, or `unavailable_after: <a past date>`.
   */
  noindex: boolean;
  /** True when such a directive says `nofollow` or `none`. */
  nofollow: boolean;
}

/** One `hreflang` alternate of the page. */
export interface HreflangLink {
  /** The `hreflang` value as written (trimmed). */
  lang: string;
  /** Its URL, absolute (resolved against the document's base URL; a `Link` header's against the page URL). */
  url: string;
}

/** A link whose text says nothing about where it leads (Lighthouse `link-text`). */
export interface NonDescriptiveLink {
  href: string;
  text: string;
}

/** Link counts over the page's `<a href>` elements whose URL is http(s). */
export interface LinkSummary {
  /** Links to the page's host (a leading `www.` ignored on both sides). */
  internal: number;
  /** Links to any other host. */
  external: number;
  /** Of internal and external, those whose `rel` has `nofollow`. */
  nofollow: number;
  /** `<a href>` elements whose URL is not http(s): `mailto:`, `tel:`, `javascript:`, …. */
  other: number;
  /** Links failing Lighthouse's `link-text` audit (first 50). */
  non_descriptive: NonDescriptiveLink[];
}

/** Image counts over the page's `<img>` elements. */
export interface ImageSummary {
  count: number;
  /** Images with no `alt` attribute at all (`alt=""`, a decorative image, counts as having one). */
  without_alt: number;
  /** The absolute `src` of the first 20 of those ('' for an image without `src`). */
  without_alt_srcs: string[];
}

/** What robots.txt says about the page. */
export interface RobotsTxtSummary {
  /** `<origin>/robots.txt`. */
  url: string;
  /** True when it was fetched with a 2xx status (then it is parsed; any other answer is no robots.txt). */
  found: boolean;
  /** HTTP status of the answer; null when no answer came (network error, time-out, refused by the guard). */
  status: number | null;
  /**
   * Whether a crawler obeying robots.txt may fetch the page: its `*` group (or no group) allows the URL.
   * True when there is no robots.txt or it could not be fetched (what crawlers do for a 4xx; after a network
   * error Google holds back, which `note` says).
   */
  allowed: boolean;
  /** Of the crawlers Lighthouse checks (Googlebot, bingbot, DuckDuckBot, archive.org_bot), those disallowed. */
  disallowed_bots: string[];
  /** `Sitemap:` URLs it lists. */
  sitemaps: string[];
  /** Why the answer was read as it was, when it was not a plain 2xx; null otherwise. */
  note: string | null;
}

/** The Lighthouse SEO audits, by id. */
export type SeoAuditId =
  | 'is-crawlable'
  | 'document-title'
  | 'meta-description'
  | 'http-status-code'
  | 'link-text'
  | 'crawlable-anchors'
  | 'robots-txt'
  | 'image-alt'
  | 'hreflang'
  | 'canonical';

/** A row of an audit's details table (the offending element, line or URL). */
export type AuditItem = Record<string, string | number | boolean | null>;

/** One Lighthouse SEO audit, as Lighthouse would score it on this HTML. */
export interface SeoAudit {
  id: SeoAuditId;
  /** Lighthouse's title for the outcome (its `title` when passed, `failureTitle` when failed). */
  title: string;
  /** Lighthouse score 1 (true) or 0 (false); a not applicable audit is passed. */
  passed: boolean;
  /** False when Lighthouse marks the audit not applicable (no canonical, no images, robots.txt 4xx): then it does not count in the score. */
  applicable: boolean;
  /** Its weight in Lighthouse's SEO category. */
  weight: number;
  details: {
    /** Why it failed (or a note when it passed), in words; null when there is nothing to say. */
    explanation: string | null;
    /** The offending items, as Lighthouse lists them. */
    items: AuditItem[];
  };
}

/** The SEO analyzer's response. Field names are the (scrape-ai issue 11); docs/tools.md documents each. */
export interface SeoReport {
  /** The final URL (after redirects). */
  url: string;
  /** HTTP status of the final response. */
  status: number;
  /** The response's MIME type ('' when it named none). */
  content_type: string;
  /** The document title as a browser has it (first `<title>` outside SVG, whitespace folded); null when there is none. */
  title: string | null;
  /** `content` of the first `<meta name="description">`, trimmed; null when there is none. */
  meta_description: string | null;
  /** The first valid canonical URL (`<link rel="canonical">` in the head, else a `Link: rel="canonical"` header), absolute; null when none. */
  canonical: string | null;
  robots: RobotsDirectives;
  /** `lang` of `<html>` (else `xml:lang`), trimmed; null when absent or empty. */
  lang: string | null;
  /** `content` of `<meta name="viewport">`; null when absent. */
  viewport: string | null;
  hreflang: HreflangLink[];
  /**
   * Open Graph properties keyed without the `og:` prefix (`title`, `type`, `url`, `image`, `image:width`,
   * …); other Open Graph namespaces keep theirs (`article:published_time`). Keys starting with `image`,
   * `video` or `audio` (the properties the protocol lets a page repeat) are arrays of every value in order;
   * every other key holds its first value.
   */
  open_graph: Record<string, string | string[]>;
  /** Twitter card properties keyed without `twitter:` (`card`, `site`, `title`, `image`, …), from `name=` or `property=`; first value wins. */
  twitter_card: Record<string, string>;
  structured_data: StructuredData;
  /** Text of each heading level in document order, whitespace folded. */
  headings: { h1: string[]; h2: string[]; h3: string[]; h4: string[]; h5: string[]; h6: string[] };
  /** Words of the body's text (scripts, styles, `<noscript>`, `<template>` and frames' fallback excluded). */
  word_count: number;
  links: LinkSummary;
  images: ImageSummary;
  robots_txt: RobotsTxtSummary;
  /** Every Lighthouse SEO audit, in the order of Lighthouse's category. */
  audits: SeoAudit[];
  /** Lighthouse's SEO category score, 0-100: the weighted mean of the applicable audits, rounded. */
  score: number;
  /** What limited the analysis (a non-HTML response, …). */
  warnings: string[];
}
