/**
 * The tech detector's input caps and time budget (docs/tools.md, "Limits (`LIMITS` in tech/limits.ts)").
 */

/**
 * Input caps, so that a huge or hostile page costs bounded time. Wappalyzer's drivers cap the HTML the same
 * way (the npm driver and the extension keep the first and last rows of 2,000-character lines); these are
 * smaller because the detector answers an API call.
 */
export const LIMITS = {
  /** HTML characters matched by `html` patterns: the first 512 KiB and the last 64 KiB. */
  htmlHeadChars: 512 * 1024,
  htmlTailChars: 64 * 1024,
  /** HTML characters parsed for the DOM (meta, scripts, styles, text, `dom` selectors): the first 2 MiB. */
  domChars: 2 * 1024 * 1024,
  /** `<meta>` elements read (in document order). */
  metaTags: 500,
  /** External script URLs read (each distinct URL once, in document order). */
  scriptSrcs: 500,
  /** Characters of inline script text matched by `scripts` patterns (scripts joined by newlines). */
  inlineScriptChars: 512 * 1024,
  /** Characters of inline `<style>` text matched by `css` patterns. */
  cssChars: 256 * 1024,
  /** Characters of the body's text matched by `text` patterns. */
  textChars: 256 * 1024,
  /** Elements a `dom` selector's rule is tested on (the first ones found). */
  domMatches: 50,
  /** Characters of one value (header, cookie, meta content, script URL, JS global) a pattern is tested on. */
  valueChars: 4096,
  /** Cookies read from `Set-Cookie`. */
  cookies: 100,
  /**
   * Milliseconds of wall time a detection may spend (parsing included) before it stops testing patterns: a
   * hostile page can make each of the few hundred `html` patterns scan 250 characters from every `<`.
   */
  budgetMs: 1500,
} as const;

/** `value` cut to its first `max` characters. */
export function clip(value: string, max: number): string {
  return value.length > max ? value.slice(0, max) : value;
}
