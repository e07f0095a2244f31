/**
 * The Retry-After header (RFC 9110, section 10.2.3), read without Node's modules: the crawler's retries
 * (lambdas/engine/crawl/access.ts), which the browser extension bundles too, and the fetcher (./fetch.ts, which
 * re-exports it) read it the same way.
 */

/** Parses Retry-After (seconds or an HTTP date) to milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  // An HTTP date has a weekday and a month name; "-1" or "soon" is not one (Date.parse reads "-1" as a year).
  if (!/[a-z]{3}/i.test(value)) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}
