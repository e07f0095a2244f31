/**
 * The browser steps' in-page half, one implementation for both browser loaders: the service's (puppeteer's
 * `page.evaluate`, lambdas/engine/loaders/browser-loader.ts) and the extension's (`chrome.scripting.executeScript`
 * with `func`, clients/extension/src/lib/tab-loader.ts). The other half, the loop that decides (./steps.ts), runs
 * outside the page.
 *
 * Each function is serialised into the page on its own (its source text is sent, not its module): it may use only
 * its arguments and the page's globals, never an import, a constant or another function of this module, and it
 * returns structured-clonable values. Helpers a function needs are written inside it.
 *
 * Waits are short in-page "long polls" ({@link waitInPage}): a MutationObserver answers as soon as the page changes,
 * and the caller bounds each poll with its own timer. Long waits are never left to the page's timers alone: a tab in
 * the background has its timers throttled (once a second; once a minute after five minutes hidden), and a promise
 * pending in a document that navigates away is never settled by `executeScript`.
 */
import type { ItemQuery } from './in-page.ts';

/** What one {@link waitInPage} poll waits for; it ends at the first that holds, or after `ms`. */
export interface PageWait {
  /** A selector to match (a content wait, an action's element). */
  selector: string | null;
  /** Items to count, with `above`: ends once there are more than `above`. */
  query: ItemQuery | null;
  above: number;
  /** The document's marker ({@link stepStartInPage}): ends once the document no longer has it (a new document). */
  marker: string | null;
  /** Longest poll, ms. */
  ms: number;
}

/** The page as one {@link waitInPage} poll saw it at its end. */
export interface PageWaitState {
  /** Whether the selector matches (`invalid`: the selector does not parse; `missing` without a selector). */
  match: 'found' | 'missing' | 'invalid';
  /** Items counted (0 without a query). */
  count: number;
  /** Whether the document still has the marker (true without one). */
  sameDocument: boolean;
  /**
   * Whether the page showed signs of activity during the poll: nodes or text changed (not attributes alone), a
   * request finished, its ready state moved on. The extension's implicit wait ends after a quiet spell (./steps.ts, `quiet: 'page'`).
   */
  active: boolean;
  /** Resources (requests) the page has finished so far, and `document.readyState`: compared poll to poll. */
  resources: number;
  readyState: string;
}

/**
 * Waits in the page, at most `w.ms`, until the selector matches, the items outnumber `w.above`, or the document lost
 * its marker; answers at once when one already holds.
 */
export function waitInPage(w: PageWait): Promise<PageWaitState> {
  const w2 = window as unknown as Record<string, unknown>;
  const countItems = (): number => {
    const q = w.query;
    if (!q) return 0;
    if (q.type === 'single') return 1;
    try {
      return document.querySelectorAll(q.container!).length;
    } catch {
      return 0;
    }
  };
  const resources = () => performance.getEntriesByType('resource').length;
  const startResources = resources();
  const startReady = document.readyState;
  let mutated = false;
  const state = (): PageWaitState => {
    let match: PageWaitState['match'] = 'missing';
    if (w.selector) {
      try {
        match = document.querySelector(w.selector) ? 'found' : 'missing';
      } catch {
        match = 'invalid';
      }
    }
    const r = resources();
    return {
      match, count: countItems(), sameDocument: w.marker === null || w2.__saiDocument === w.marker,
      active: mutated || r !== startResources || document.readyState !== startReady, resources: r, readyState: document.readyState,
    };
  };
  const holds = (s: PageWaitState) => s.match !== 'missing' || (w.query !== null && s.count > w.above) || !s.sameDocument;
  const first = state();
  if (holds(first) || w.ms <= 0) return Promise.resolve(first);
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (s: PageWaitState) => {
      observer.disconnect();
      clearTimeout(timer);
      resolve(s);
    };
    const observer = new MutationObserver((records) => {
      // Content arriving is nodes or text; attributes alone (an animation, a carousel's classes) are not activity.
      if (records.some((r) => r.type !== 'attributes')) mutated = true;
      const s = state();
      if (holds(s)) finish(s);
    });
    observer.observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
    timer = setTimeout(() => finish(state()), w.ms);
  });
}

/** One action as the page runs it ({@link actionInPage}). */
export interface PageAction {
  type: string;
  selector: string | null;
  value: string | null;
  key: string | null;
  /** `scroll`: `down` or `up`, and `full` or pixels. */
  direction: 'down' | 'up' | null;
  amount: 'full' | number | null;
}

/** What {@link actionInPage} did: `ok`, or why it could not. */
export type PageActionOutcome = 'ok' | 'missing' | 'no_option' | 'not_select';

/**
 * Runs an action in the page: `scroll` and `select` for both loaders (puppeteer's `page.select` is itself in-page
 * work), and with DOM events (`input: 'dom'`, the extension) `click`, `hover`, `type` and `keyboard`.
 * @returns `ok`, `missing` (no element matches), `no_option` (select: no option has the value), `not_select`.
 */
export function actionInPage(a: PageAction): PageActionOutcome {
  if (a.type === 'scroll') {
    const sign = a.direction === 'up' ? -1 : 1;
    const amount = a.amount ?? 'full';
    if (amount === 'full') window.scrollTo(0, a.direction === 'up' ? 0 : document.documentElement.scrollHeight);
    else window.scrollBy(0, sign * amount);
    return 'ok';
  }
  if (a.type === 'keyboard') {
    const target = document.activeElement ?? document.body;
    for (const type of ['keydown', 'keypress', 'keyup']) target.dispatchEvent(new KeyboardEvent(type, { key: a.key ?? '', bubbles: true, cancelable: true }));
    if (a.key === 'Enter' && target instanceof HTMLInputElement && target.form) target.form.requestSubmit();
    return 'ok';
  }
  let el: Element | null = null;
  try {
    el = a.selector ? document.querySelector(a.selector) : null;
  } catch {
    el = null;
  }
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
      if (!(el instanceof HTMLSelectElement)) return 'not_select';
      // As puppeteer's page.select: the option with the value is selected, then input and change are dispatched.
      const options = Array.from(el.options);
      if (!options.some((o) => o.value === a.value)) return 'no_option';
      for (const o of options) o.selected = o.value === a.value;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return 'ok';
    }
    default:
      return 'ok';
  }
}

/** What a `script` action did. */
export type ScriptOutcome = { ok: true } | { ok: false; error: string };

/**
 * Runs a `script` action in the page's own world: an expression or a function body; a promise it returns is
 * awaited. A script that throws is reported, not thrown (`executeScript` would turn a throw into a null result).
 */
export async function scriptInPage(script: string): Promise<ScriptOutcome> {
  try {
    let fn: () => unknown;
    try {
      fn = new Function(`return (${script}\n);`) as () => unknown;
    } catch {
      fn = new Function(script) as () => unknown;
    }
    await fn();
    return { ok: true };
  } catch (err) {
    const e = err as { name?: unknown; message?: unknown } | null;
    return { ok: false, error: e && typeof e === 'object' && 'message' in e ? `${String(e.name ?? 'Error')}: ${String(e.message)}` : String(err) };
  }
}

/** The start of an in-page pagination step ({@link stepStartInPage}). */
export interface StepStart {
  /** The click control: `ready`, `missing` (absent or hidden) or `disabled`; always `ready` for a scroll. */
  state: 'missing' | 'disabled' | 'ready';
  /** Items in the document before the step. */
  before: number;
}

/**
 * Starts an in-page pagination step. `click`: whether the control is there and usable and, when it is, the items
 * counted and the document marked with `marker` (a later poll tells a new document by its missing marker).
 * `scroll`: the items counted, then the window scrolled to the bottom.
 */
export function stepStartInPage(kind: 'click' | 'scroll', selector: string | null, q: ItemQuery, marker: string): StepStart {
  const count = () => (q.type === 'single' ? 1 : document.querySelectorAll(q.container!).length);
  if (kind === 'scroll') {
    const before = count();
    window.scrollTo(0, document.documentElement.scrollHeight);
    return { state: 'ready', before };
  }
  let el: Element | null = null;
  try {
    el = document.querySelector(selector!);
  } catch {
    el = null;
  }
  if (!el) return { state: 'missing', before: 0 };
  const html = el as HTMLElement & { disabled?: boolean };
  if (html.disabled || el.getAttribute('aria-disabled') === 'true' || el.classList.contains('disabled')) return { state: 'disabled', before: 0 };
  const style = window.getComputedStyle(el);
  if (style.display === 'none' || style.visibility === 'hidden') return { state: 'missing', before: 0 };
  (window as unknown as Record<string, unknown>).__saiDocument = marker;
  return { state: 'ready', before: count() };
}
