/**
 * Lighthouse's robots-txt audit (core/audits/seo/robots-txt.js): robots.txt answers and follows the syntax
 * crawlers understand.
 */
import { audit } from './audit.ts';
import type { SeoAudit } from './types.ts';

/**
 * Lighthouse robots-txt: the validator of core/audits/seo/robots-txt.js (known directives only, sitemap
 * URLs absolute http(s)/ftp, allow/disallow patterns starting with `/` or `*`, `$` only at the end, rules
 * only inside a user-agent group).
 */
function validateRobotsTxt(content: string): Array<{ line: number; content: string; message: string }> {
  const known = new Set(['user-agent', 'disallow', 'allow', 'sitemap', 'crawl-delay', 'clean-param', 'host', 'request-rate', 'visit-time', 'noindex', 'content-signal', 'license']);
  const errors: Array<{ line: number; content: string; message: string }> = [];
  let inGroup = false;
  content.split(/\r\n|\r|\n/).forEach((original, index) => {
    let line = original;
    const hash = line.indexOf('#');
    if (hash !== -1) line = line.slice(0, hash);
    line = line.trim();
    if (!line) return;
    const colon = line.indexOf(':');
    const fail = (message: string): void => {
      errors.push({ line: index + 1, content: original, message });
    };
    if (colon === -1) return fail('Syntax not understood');
    const directive = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (!known.has(directive)) return fail('Unknown directive');
    if (directive === 'sitemap') {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return fail('Invalid sitemap URL');
      }
      if (!['https:', 'http:', 'ftp:'].includes(url.protocol)) return fail('Invalid sitemap URL protocol');
    }
    if (directive === 'user-agent' && !value) return fail('No user-agent specified');
    if (directive === 'allow' || directive === 'disallow') {
      if (value !== '' && value[0] !== '/' && value[0] !== '*') return fail('Pattern should either be empty, start with "/" or "*"');
      const dollar = value.indexOf('$');
      if (dollar !== -1 && dollar !== value.length - 1) return fail('"$" should only be used at the end of the pattern');
    }
    if (directive === 'user-agent') inGroup = true;
    else if (!inGroup && (directive === 'allow' || directive === 'disallow')) fail('No user-agent specified');
  });
  return errors;
}

/**
 * Lighthouse robots-txt on the answer to `/robots.txt`: null when none came (fails); 5xx or 429 fails; 4xx or an
 * empty body is not applicable; otherwise passes when {@link validateRobotsTxt} finds no error.
 */
export function auditRobotsTxt(fetched: { status: number; text: string } | null): SeoAudit {
  if (fetched === null) return audit('robots-txt', false, 'Fetch of robots.txt failed.');
  const { status, text } = fetched;
  if (status >= 500 || status === 429) return audit('robots-txt', false, `Request for robots.txt returned HTTP status: ${status}`);
  if (status >= 400 || text === '') return audit('robots-txt', true, status >= 400 ? `No robots.txt (HTTP ${status}).` : 'robots.txt is empty.', [], false);
  const errors = validateRobotsTxt(text);
  if (!errors.length) return audit('robots-txt', true);
  return audit('robots-txt', false, `${errors.length} error${errors.length === 1 ? '' : 's'} found`, errors.slice(0, 50));
}
