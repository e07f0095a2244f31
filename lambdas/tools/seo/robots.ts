/**
 * Robots rules as the SEO analyzer reads them: robots.txt parsed by robots-parser (3.0.1), and the page's own
 * directives (`<meta name="robots">`, `X-Robots-Tag`), with the crawlers Lighthouse's is-crawlable checks.
 */
import robotsParserModule from 'robots-parser';
import type { FetchedText } from '../page.ts';
import type { MetaElement } from './reading.ts';
import type { RobotsDirectives, RobotsTxtSummary } from './types.ts';

/** The part of robots-parser's (3.0.1) parsed robots.txt the analyzer uses. */
export interface Robots {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getMatchingLineNumber(url: string, ua?: string): number;
  getSitemaps(): string[];
}

/**
 * Parses a robots.txt body fetched from `url`. robots-parser is CommonJS (`module.exports = function
 * robotsParser(url, contents)`) and its bundled index.d.ts declares an ES default export, which TypeScript's
 * NodeNext resolution then reads as the module namespace: the import is the function at run time, typed here by hand.
 */
const robotsParser = robotsParserModule as unknown as (url: string, contents: string) => Robots;

/** Crawlers is-crawlable checks one by one; `undefined` is "any crawler" (`*`, `robots`). */
export const CRAWLABILITY_BOTS: ReadonlyArray<string | undefined> = [undefined, 'Googlebot', 'bingbot', 'DuckDuckBot', 'archive.org_bot'];

/** Directives in an X-Robots-Tag value that contain a colon but are not a user-agent prefix. */
const COLON_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);

/** Lighthouse is-crawlable: `noindex` / `none` / a past `unavailable_after`. */
export function hasBlockingDirective(directives: string): boolean {
  return directives
    .split(',')
    .map((d) => d.toLowerCase().trim())
    .some((d) => d === 'noindex' || d === 'none' || isUnavailable(d));
}

/** Whether a directive is `unavailable_after: <date>` with a date in the past. */
function isUnavailable(directive: string): boolean {
  const parts = directive.split(':');
  if (parts.length <= 1 || parts[0].trim() !== 'unavailable_after') return false;
  const date = Date.parse(parts.slice(1).join(':'));
  return !Number.isNaN(date) && date < Date.now();
}

/** The user agent an X-Robots-Tag value is addressed to (`googlebot: noindex`), or undefined. */
export function headerUserAgent(value: string): string | undefined {
  const m = /^\s*([^,:]+):/.exec(value);
  if (m && !COLON_DIRECTIVES.has(m[1].trim().toLowerCase())) return m[1].trim();
  return undefined;
}

/**
 * The separate X-Robots-Tag values inside a header the page's headers carry joined with `, `: a new value
 * starts at each `<user agent>:` prefix (a value cannot hold two), so `googlebot: noindex, otherbot: none`
 * is two values while `noindex, nofollow` stays one.
 */
export function splitRobotsHeader(joined: string): string[] {
  const values: string[] = [];
  for (const part of joined.split(',')) {
    if (headerUserAgent(part) !== undefined || values.length === 0) values.push(part.trim());
    else values[values.length - 1] += `, ${part.trim()}`;
  }
  return values.filter(Boolean);
}

/**
 * What robots.txt says about the page ({@link RobotsTxtSummary}), and the parsed file for the audits.
 * @param fetched the answer to `robotsUrl`; null when none came (or the page URL is not http(s)).
 * @param robotsUrl `<origin>/robots.txt`; '' when the page URL is not http(s).
 * @param pageUrl the page's URL, checked against the rules.
 * @returns the summary, and the parsed robots.txt (null unless it answered 2xx).
 */
export function readRobotsTxt(fetched: FetchedText | null, robotsUrl: string, pageUrl: string): { summary: RobotsTxtSummary; robots: Robots | null } {
  const robotsStatus = fetched?.status ?? null;
  const robotsFound = fetched !== null && fetched.status >= 200 && fetched.status < 300;
  const robots = robotsFound ? robotsParser(robotsUrl, fetched.text) : null;
  const robotsNote =
    fetched === null
      ? robotsUrl
        ? 'robots.txt could not be fetched (no response): read as allowing everything, although Google stops crawling a site whose robots.txt does not answer.'
        : 'The page URL is not http(s): no robots.txt.'
      : fetched.status >= 500 || fetched.status === 429
        ? `robots.txt answered HTTP ${fetched.status}: read as allowing everything, although Google treats a server error as disallowing the whole site.`
        : fetched.status >= 300 && !robotsFound
          ? `robots.txt answered HTTP ${fetched.status}: no robots.txt, everything allowed.`
          : null;
  const summary: RobotsTxtSummary = {
    url: robotsUrl,
    found: robotsFound,
    status: robotsStatus,
    allowed: robots ? robots.isAllowed(pageUrl, undefined) !== false : true,
    disallowed_bots: robots ? CRAWLABILITY_BOTS.filter((b): b is string => b !== undefined && robots.isAllowed(pageUrl, b) === false) : [],
    sitemaps: robots ? robots.getSitemaps() : [],
    note: robotsNote,
  };
  return { summary, robots };
}

/**
 * The page's own robots directives addressed to every crawler ({@link RobotsDirectives}): its
 * `<meta name="robots">` elements and the `X-Robots-Tag` values without a user-agent prefix.
 * @param metas the page's `<meta>` elements.
 * @param xRobots the `X-Robots-Tag` header (repeated ones joined with `, `); null when absent.
 */
export function readRobotsDirectives(metas: readonly MetaElement[], xRobots: string | null): RobotsDirectives {
  const metaRobots = metas.filter((m) => m.name === 'robots' && m.content !== null).map((m) => m.content!.trim());
  const generic = [...metaRobots, ...(xRobots ? splitRobotsHeader(xRobots).filter((v) => headerUserAgent(v) === undefined) : [])];
  const directives = generic.flatMap((v) => v.split(',').map((d) => d.trim().toLowerCase()));
  return {
    meta: metaRobots.length ? metaRobots.join(', ') : null,
    x_robots_tag: xRobots,
    noindex: directives.some((d) => d === 'noindex' || d === 'none' || isUnavailable(d)),
    nofollow: directives.some((d) => d === 'nofollow' || d === 'none'),
  };
}
