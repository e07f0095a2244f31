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

/** An API config's request (lambdas/engine/api/api-source.ts, `ApiRequest`) as the tab sends it. */
export interface TabApiRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** What {@link fetchInPage} gives: the answer, or why there is none. */
export type TabApiAnswer =
  | { url: string; status: number; contentType: string; headers: Record<string, string>; text: string; tooLarge: false }
  | { tooLarge: true; status: number; url: string }
  | { error: string };

/**
 * Sends an API config's request from the page (its origin: the site's CORS rules and the extension's access to the
 * site apply), without the user's cookies (`credentials: "omit"`), reading at most `maxChars` characters of the body.
 * @returns the answer, `tooLarge` past the cap (the rest is not read), or the fetch's error message.
 */
export async function fetchInPage(req: TabApiRequest, maxChars: number): Promise<TabApiAnswer> {
  try {
    const r = await fetch(req.url, { method: req.method, headers: req.headers, credentials: 'omit', redirect: 'follow', ...(req.body !== undefined ? { body: req.body } : {}) });
    const headers: Record<string, string> = {};
    r.headers.forEach((v, k) => { headers[k] = v; });
    let text = '';
    if (r.body) {
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += value;
        if (text.length > maxChars) {
          await reader.cancel();
          return { tooLarge: true, status: r.status, url: r.url || req.url };
        }
      }
    }
    return { url: r.url || req.url, status: r.status, contentType: (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase(), headers, text, tooLarge: false };
  } catch (err) {
    return { error: String((err as Error)?.message ?? err) };
  }
}
