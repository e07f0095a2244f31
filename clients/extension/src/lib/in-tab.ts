/**
 * Functions that run inside a tab's page (serialised by `chrome.scripting.executeScript`, as puppeteer's
 * `page.evaluate` serialises those of lambdas/engine/browser/in-page.ts): they may use only their arguments and
 * the page's globals, nothing imported, and return structured-clonable values.
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

/** Whether a selector has a match in the page (false for an invalid selector). */
export function waitingSelectorInPage(selector: string): boolean {
  try {
    return document.querySelector(selector) !== null;
  } catch {
    return false;
  }
}

/** One action as the page runs it. */
export interface PageAction {
  type: string;
  selector: string | null;
  value: string | null;
  key: string | null;
}

/**
 * Runs a click, type, select, hover or keyboard action with DOM events.
 * @returns `ok`, `missing` (no element matches), or `no_option` (select: no option has the value).
 */
export function actionInPage(a: PageAction): 'ok' | 'missing' | 'no_option' {
  if (a.type === 'keyboard') {
    const target = document.activeElement ?? document.body;
    for (const type of ['keydown', 'keypress', 'keyup']) target.dispatchEvent(new KeyboardEvent(type, { key: a.key ?? '', bubbles: true, cancelable: true }));
    if (a.key === 'Enter' && target instanceof HTMLInputElement && target.form) target.form.requestSubmit();
    return 'ok';
  }
  const el = a.selector ? document.querySelector(a.selector) : null;
  if (!el) return 'missing';
  const html = el as HTMLElement;
  switch (a.type) {
    case 'click':
      html.scrollIntoView({ block: 'center' });
      html.click();
      return 'ok';
    case 'hover':
      for (const type of ['pointerover', 'pointerenter', 'mouseover', 'mouseenter']) el.dispatchEvent(new MouseEvent(type, { bubbles: type.endsWith('over'), cancelable: true }));
      return 'ok';
    case 'type': {
      const input = el as HTMLInputElement | HTMLTextAreaElement;
      input.focus();
      // The prototype's setter, so that frameworks that track the value (React) see the change.
      const proto = input instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
      Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(input, a.value ?? '');
      input.dispatchEvent(new Event('input', { bubbles: true }));
      input.dispatchEvent(new Event('change', { bubbles: true }));
      return 'ok';
    }
    case 'select': {
      const select = el as HTMLSelectElement;
      if (!Array.from(select.options).some((o) => o.value === a.value)) return 'no_option';
      select.value = a.value ?? '';
      select.dispatchEvent(new Event('input', { bubbles: true }));
      select.dispatchEvent(new Event('change', { bubbles: true }));
      return 'ok';
    }
    default:
      return 'ok';
  }
}
