/**
 * URL checks the SEO analyzer's audits share. Resolution and the document base URL are page-facts.ts's
 * (engine/page-facts.ts), the one implementation every page reader uses.
 */


/** Whether `raw` parses as an absolute URL on its own (no base). */
export function isAbsoluteUrl(raw: string): boolean {
  try {
    new URL(raw);
    return true;
  } catch {
    return false;
  }
}
