/**
 * Lighthouse's is-crawlable audit (core/audits/seo/is-crawlable.js): the page is blocked from indexing when every
 * crawler it checks is held back by a meta robots element, an `X-Robots-Tag` header or robots.txt.
 */
import type { ToolPage } from '../page.ts';
import { audit } from './audit.ts';
import type { MetaElement } from './reading.ts';
import { CRAWLABILITY_BOTS, hasBlockingDirective, headerUserAgent, splitRobotsHeader, type Robots } from './robots.ts';
import type { AuditItem, SeoAudit } from './types.ts';

/**
 * Lighthouse is-crawlable on the page.
 * @param page the page (its URL and `X-Robots-Tag` header).
 * @param metas its `<meta>` elements.
 * @param robots its site's robots.txt, parsed; null when there is none.
 * @param robotsUrl the robots.txt URL, for the details.
 */
export function auditIsCrawlable(page: ToolPage, metas: MetaElement[], robots: Robots | null, robotsUrl: string): SeoAudit {
  const headerValues = page.headers['x-robots-tag'] !== undefined ? splitRobotsHeader(page.headers['x-robots-tag']) : [];
  const blockedBots: Array<string | undefined> = [];
  let generic: AuditItem[] = [];
  for (const bot of CRAWLABILITY_BOTS) {
    const blocking: AuditItem[] = [];
    // A meta element for the bot wins over the generic `robots` one (Google Search Central, robots meta tag).
    let meta = bot ? metas.find((m) => m.name === bot.toLowerCase()) : undefined;
    meta ??= metas.find((m) => m.name === 'robots');
    if (meta && hasBlockingDirective(meta.content ?? '')) blocking.push({ source: `<meta name="${meta.name}" content="${meta.content ?? ''}" />` });
    for (const value of headerValues) {
      const ua = headerUserAgent(value);
      if (ua !== undefined && ua.toLowerCase() !== bot?.toLowerCase()) continue;
      const directives = ua !== undefined ? value.slice(value.indexOf(':') + 1) : value;
      if (hasBlockingDirective(directives)) blocking.push({ source: `X-Robots-Tag: ${value}` });
    }
    if (robots && robots.isAllowed(page.url, bot) === false) {
      blocking.push({ source: `${robotsUrl} line ${robots.getMatchingLineNumber(page.url, bot)}` });
    }
    if (blocking.length) blockedBots.push(bot);
    if (bot === undefined) generic = blocking;
  }
  const passed = blockedBots.length < CRAWLABILITY_BOTS.length;
  if (!passed) return audit('is-crawlable', false, 'Every crawler is blocked from indexing the page.', generic);
  const note = blockedBots.length
    ? `The following bot user agents are blocked from crawling: ${blockedBots.map((b) => b ?? 'all crawlers (*)').join(', ')}. The audit is otherwise passing, because at least one bot is allowed.`
    : null;
  return audit('is-crawlable', true, note);
}
