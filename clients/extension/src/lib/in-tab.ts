/**
 * Functions that run inside a tab's page and only there (serialised by `chrome.scripting.executeScript`, as
 * puppeteer's `page.evaluate` serialises those of lambdas/engine/browser/in-page.ts): they may use only their
 * arguments and the page's globals, nothing imported, and return structured-clonable values. The browser steps'
 * in-page functions (actions, waits, pagination) are the service's own, lambdas/engine/browser/in-page-steps.ts.
 */

/** What the extension reads of a page: its DOM serialised, as the browser loader's `page.content()`. */
export interface PageSnapshot {
  /** `location.href`. */
  url: string;
  /** `<!DOCTYPE …>` (when the page has one) and `document.documentElement.outerHTML`. */
  html: string;
  /** `document.contentType` (`text/html` for HTML pages). */
  contentType: string;
  /** The navigation's HTTP status (Navigation Timing `responseStatus`; 0 when the browser does not say). */
  status: number;
}

/** Reads the page: its URL, serialised DOM, content type and HTTP status. */
export function snapshotInPage(): PageSnapshot {
  const dt = document.doctype;
  const doctype = dt ? `<!DOCTYPE ${dt.name}${dt.publicId ? ` PUBLIC "${dt.publicId}"` : ''}${dt.systemId ? ` "${dt.systemId}"` : ''}>` : '';
  const nav = performance.getEntriesByType('navigation')[0] as (PerformanceEntry & { responseStatus?: number }) | undefined;
  return { url: location.href, html: doctype + document.documentElement.outerHTML, contentType: document.contentType, status: nav?.responseStatus ?? 0 };
}
