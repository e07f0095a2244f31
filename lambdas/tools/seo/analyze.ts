/**
 * The SEO analyzer (POST /api/v1/tools/seo-analyzer/; docs/spec.md, "Tool endpoints"; docs/tools.md "SEO analyzer"): what a
 * search engine reads from one page (title, description, canonical, robots directives, hreflang, Open
 * Graph and Twitter cards, structured data, headings, text, links, images, robots.txt) and Lighthouse's SEO
 * audits over it, with Lighthouse's SEO category score.
 *
 * The audits follow the Lighthouse sources (GoogleChrome/lighthouse, core/audits/seo/*.js, and the axe-core
 * rules `document-title` and `image-alt` that Lighthouse runs for the two accessibility audits its SEO
 * category includes); the weights are those of the SEO category in core/config/default-config.js, the same
 * from Lighthouse 12.0.0 (2024-04-22) to the main branch read for this module. Lighthouse audits a page
 * loaded in Chrome; this module audits the HTML it is given (fetched, or rendered by the browser loader), so
 * where Lighthouse reads the live DOM (an anchor's `innerText`, whether an image is displayed) the nearest
 * reading of the markup stands in, each such place named in docs/tools.md.
 *
 * A pure function of a {@link ToolPage} plus one follow-up request for `/robots.txt` through the
 * {@link PageFetch} it is given. The parts, each in its module of this folder: the report's types (types.ts)
 * and schema (schema.ts), the page walk (reading.ts), text (text.ts), social cards (fields.ts), robots rules
 * (robots.ts), one module per audit (audit-*.ts, built with audit.ts) and the score (score.ts).
 */
import type { Element } from 'domhandler';
import { parseHtml } from '../../engine/html/parse.ts';
import { documentBaseUrl, isHtmlResponse, resolveUrl, siteKey } from '../../engine/page-facts.ts';
import type { PageFetch, ToolPage } from '../page.ts';
import { collectStructuredDataSources, extractStructuredData } from '../structured-data.ts';
import { auditCanonical, readCanonicals } from './audit-canonical.ts';
import { auditIsCrawlable } from './audit-crawlable.ts';
import { auditDocumentTitle, auditHttpStatus, auditMetaDescription } from './audit-document.ts';
import { auditHreflang } from './audit-hreflang.ts';
import { auditImageAlt } from './audit-image-alt.ts';
import { auditCrawlableAnchors, auditLinkText, nonDescriptiveLinks } from './audit-links.ts';
import { auditRobotsTxt } from './audit-robots-txt.ts';
import { openGraph, twitterCard } from './fields.ts';
import { collectIds, linksFromHeader, readPage, type AnchorElement, type ImageElement } from './reading.ts';
import { readRobotsDirectives, readRobotsTxt } from './robots.ts';
import { seoScore } from './score.ts';
import { countWords } from './text.ts';
import type { HreflangLink, ImageSummary, LinkSummary, SeoAudit, SeoReport } from './types.ts';

/**
 * Analyses one page for SEO: the fields of {@link SeoReport} and Lighthouse's SEO audits and score.
 *
 * Fetches `<origin>/robots.txt` once through `fetch`: a 2xx answer is parsed with robots-parser (3.0.1);
 * a 4xx is no robots.txt (everything allowed, the robots-txt audit not applicable); no answer at all is
 * reported (`robots_txt.note`), read as allowed, and fails the robots-txt audit as in Lighthouse.
 *
 * A response that is not HTML (engine/page-facts.ts's isHtmlResponse: text/html or application/xhtml+xml, or
 * no content type and a body a browser sniffs as HTML) is not parsed: the report describes an empty document and
 * says so in `warnings`.
 *
 * @param page the fetched (or rendered) page.
 * @param fetch how to fetch robots.txt (through the outbound guard).
 * @returns the report; never throws for anything a page or robots.txt contains.
 */
export async function analyzeSeo(page: ToolPage, fetch: PageFetch): Promise<SeoReport> {
  const warnings: string[] = [];
  const pageUrl = page.url;
  let origin: string | null = null;
  try {
    const u = new URL(pageUrl);
    if (u.protocol === 'http:' || u.protocol === 'https:') origin = u.origin;
  } catch {
    origin = null;
  }
  const robotsUrl = origin ? `${origin}/robots.txt` : '';
  const robotsFetch = origin ? fetch(robotsUrl).catch(() => null) : Promise.resolve(null);

  const isHtml = isHtmlResponse(page.contentType, page.html);
  const html = isHtml ? page.html : '';
  if (!isHtml && page.html) {
    warnings.push(page.contentType
      ? `The response is ${page.contentType}, not HTML: its body was not analysed.`
      : 'The response names no content type and its body does not start as HTML: it was not analysed.');
  }
  const doc = parseHtml(html);
  const reading = readPage(doc);
  const baseUrl = documentBaseUrl(doc, pageUrl);

  for (const link of reading.links) link.href = resolveUrl(link.hrefRaw, baseUrl);
  const allLinks = [...reading.links, ...linksFromHeader(page.headers.link, pageUrl)];
  const metas = reading.metas;

  // robots.txt
  const fetched = await robotsFetch;
  const { summary: robotsTxt, robots } = readRobotsTxt(fetched, robotsUrl, pageUrl);

  // Page-level robots directives addressed to every crawler.
  const robotsDirectives = readRobotsDirectives(metas, page.headers['x-robots-tag'] ?? null);

  // Links.
  const nonDescriptive = nonDescriptiveLinks(reading.anchors, baseUrl, pageUrl);
  const links = linkSummary(reading.anchors, baseUrl, origin ? siteKey(pageUrl) : '');
  links.non_descriptive = nonDescriptive.slice(0, 50);

  // Images.
  const images = imageSummary(reading.images, baseUrl);

  // Canonical and hreflang.
  const canonicals = readCanonicals(allLinks);
  const hreflang: HreflangLink[] = allLinks
    .filter((l) => l.rel === 'alternate' && l.hreflang && l.source !== 'body' && l.href !== null)
    .map((l) => ({ lang: l.hreflang, url: l.href! }));

  const ids = new Map<string, Element>();
  if (reading.images.some((img) => img.el.attribs['aria-labelledby'])) collectIds(doc, ids);

  const audits: SeoAudit[] = [
    auditIsCrawlable(page, metas, robots, robotsUrl),
    auditDocumentTitle(reading.title),
    auditMetaDescription(metas),
    auditHttpStatus(page.status),
    auditLinkText(nonDescriptive),
    auditCrawlableAnchors(reading.anchors, baseUrl, pageUrl),
    auditRobotsTxt(fetched && { status: fetched.status, text: fetched.text }),
    auditImageAlt(reading.images, ids, baseUrl),
    auditHreflang(allLinks),
    auditCanonical(canonicals, pageUrl),
  ];

  const viewport = metas.find((m) => m.name === 'viewport');
  const description = metas.find((m) => m.name === 'description');
  return {
    url: pageUrl,
    status: page.status,
    content_type: page.contentType,
    title: reading.title,
    meta_description: description ? (description.content ?? '').trim() : null,
    canonical: canonicals.urls[0] ?? null,
    robots: robotsDirectives,
    lang: reading.lang,
    viewport: viewport ? (viewport.content ?? '').trim() : null,
    hreflang,
    open_graph: openGraph(metas),
    twitter_card: twitterCard(metas),
    structured_data: extractStructuredData(collectStructuredDataSources(doc)),
    headings: reading.headings,
    word_count: countWords(reading.bodyText.join('')),
    links,
    images,
    robots_txt: robotsTxt,
    audits,
    score: seoScore(audits),
    warnings,
  };
}

/** Counts the page's `<a href>` links by kind ({@link LinkSummary}; `non_descriptive` left empty for the caller). */
function linkSummary(anchors: readonly AnchorElement[], baseUrl: string, pageHost: string): LinkSummary {
  const links: LinkSummary = { internal: 0, external: 0, nofollow: 0, other: 0, non_descriptive: [] };
  for (const { el } of anchors) {
    const raw = el.attribs.href ?? el.attribs['xlink:href'];
    if (raw === undefined) continue;
    const resolved = resolveUrl(raw, baseUrl);
    let url: URL | null = null;
    try {
      url = resolved ? new URL(resolved) : null;
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      links.other++;
      continue;
    }
    if (siteKey(url) === pageHost) links.internal++;
    else links.external++;
    if ((el.attribs.rel ?? '').toLowerCase().split(/\s+/).includes('nofollow')) links.nofollow++;
  }
  return links;
}

/** Counts the page's images and those without `alt` ({@link ImageSummary}). */
function imageSummary(images: readonly ImageElement[], baseUrl: string): ImageSummary {
  const withoutAlt = images.filter((img) => img.el.attribs.alt === undefined);
  return {
    count: images.length,
    without_alt: withoutAlt.length,
    without_alt_srcs: withoutAlt.slice(0, 20).map(({ el }) => (el.attribs.src !== undefined ? (resolveUrl(el.attribs.src, baseUrl) ?? el.attribs.src) : '')),
  };
}
