/**
 * The browser steps, written once for both browser loaders: the config's actions, the wait for a page's content
 * (the ready condition: `wait_selector`, or the implicit wait for the items), and the in-page pagination steps
 * (a click on a control that is not a link, infinite scroll). The service's loader (../loaders/browser-loader.ts,
 * puppeteer) and the extension's (clients/extension/src/lib/tab-loader.ts, `chrome.scripting`) each give a
 * {@link StepPage}: how to run a function of ./in-page-steps.ts in the page, how to send trusted input, how to see a
 * navigation. What a step does, how long it waits and what it concludes is decided here, from the same in-page
 * functions, so that a config's steps give the same result in both.
 *
 * Where the extension must differ, the difference is a named option ({@link BrowserStepOptions}, docs/extension.md).
 */
import { CodedError } from '../../errors.ts';
import type { ActionSpec } from '../config.ts';
import type { ItemQuery } from './in-page.ts';
import type { LoadedDocument, ReadyCondition, StepOutcome } from '../loaders/page-loader.ts';
import {
  actionInPage, scriptInPage, stepStartInPage, waitInPage,
  type PageAction, type PageActionOutcome, type PageWait, type PageWaitState,
} from './in-page-steps.ts';

/**
 * How a loader's pages differ in what a step can do: the service drives Chromium over its debugging protocol, the
 * extension drives the user's tabs with `chrome.scripting` and sees neither trusted input nor the tab's requests.
 */
export interface BrowserStepOptions {
  /**
   * How clicks, typing, hovers and keys reach the page: `trusted` (the browser's input events, as a person's: the
   * service, through puppeteer) or `dom` (events dispatched by a script: `el.click()`, input and change events, key
   * events to the focused element: the extension, which has no trusted input without the `debugger` permission).
   * `select` and `scroll` are in-page work in both.
   */
  input: 'trusted' | 'dom';
  /**
   * What ends an implicit wait early on a page that will not get its content (the empty page past a listing's end,
   * a detail page without the field): `network` (no request for {@link NETWORK_QUIET_MS}, as the browser's
   * protocol sees the tab's requests: the service) or `page` (no change to nodes or text, no finished request, no
   * ready-state change for {@link PAGE_QUIET_MS}, as seen from inside the page: the extension, which cannot see a
   * request still in flight and so waits longer for quiet).
   */
  quiet: 'network' | 'page';
}

/** The service's browser loader. */
export const SERVICE_STEPS: BrowserStepOptions = { input: 'trusted', quiet: 'network' };
/** The extension's tab loader. */
export const EXTENSION_STEPS: BrowserStepOptions = { input: 'dom', quiet: 'page' };

/** `quiet: 'network'`: an implicit wait ends once the tab has made no request for this long, ms. */
export const NETWORK_QUIET_MS = 500;
/** `quiet: 'page'`: an implicit wait ends once the page has shown no activity for this long, ms. */
export const PAGE_QUIET_MS = 1500;
/** Longest wait for an action's element, ms (docs/config-language.md, "actions"). */
const ACTION_ELEMENT_WAIT_MS = 5000;
/** Longest single in-page poll, ms: the loop outside the page decides at least this often. */
const POLL_MS = 500;
/** After new items appeared, the time given to a batch still being appended, ms. */
const BATCH_SETTLE_MS = 150;

/** A navigation of the main frame seen by a loader, from {@link StepPage.watchNavigation} on. */
export interface NavigationWatch {
  /** Whether a navigation of the main frame (not one within the document) has started since the watch began. */
  started(): boolean | Promise<boolean>;
  /** Settles when {@link started} turns true (an in-page poll of the old document is then given up at once). */
  readonly starting: Promise<void>;
  /** Waits until the navigation that started has its new document, at most the loader's navigation time-out. */
  done(): Promise<void>;
  /** Stops watching. */
  stop(): void;
}

/** One loader's page, as the steps drive it. */
export interface StepPage {
  readonly options: BrowserStepOptions;
  /**
   * Runs a function of ./in-page-steps.ts in the page once (the extension: in its isolated world) and returns its
   * result. When the document goes away during the call it throws an error {@link isNavigation} recognises, or
   * never settles (callers bound it).
   */
  run<A extends unknown[], R>(fn: (...args: A) => R, args: A): Promise<Awaited<R>>;
  /** As {@link run}, but a read that waits out a page navigating itself (the service: whenSettled). */
  read<A extends unknown[], R>(fn: (...args: A) => R, args: A): Promise<Awaited<R>>;
  /** Runs a `script` action in the page's own world ({@link scriptInPage}). */
  script(script: string): Promise<Awaited<ReturnType<typeof scriptInPage>>>;
  /** Whether an error of a call means the page's document went away under it (a navigation). */
  isNavigation(err: unknown): boolean;
  /**
   * `input: 'trusted'`: sends a click, a hover, a triple-click and typed keys, or a key press, as the browser's own
   * input. @returns `missing` when no element matches the selector, `unusable` when the element is there but cannot
   * take the input (hidden or no size: no box to point at; or gone from the page before the input reached it).
   */
  trustedInput?(a: { type: 'click' | 'hover' | 'type' | 'keyboard'; selector: string | null; value: string | null; key: string | null }): Promise<'ok' | 'missing' | 'unusable'>;
  /** `quiet: 'network'`: resolves once the tab has made no request for `idleMs`, or after `timeoutMs`. */
  networkIdle?(idleMs: number, timeoutMs: number): Promise<void>;
  /** Starts watching for a navigation of the main frame. */
  watchNavigation(): NavigationWatch;
  /** Throws when the page can no longer be driven: it crashed, the run was aborted. */
  check(): void;
  /** Waits `ms` (rejects when the run is aborted). */
  sleep(ms: number): Promise<void>;
  /** The page's URL now, for messages. */
  url(): string | Promise<string>;
}

/**
 * An in-page poll bounded outside the page too: a throttled page may answer late, and one that navigated away may
 * never answer (`no answer`); a navigation starting (`interrupt`) gives it up at once.
 */
async function poll(page: StepPage, w: PageWait, interrupt?: Promise<void>): Promise<PageWaitState | 'navigated' | 'no answer'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'no answer'>((resolve) => { timer = setTimeout(() => resolve('no answer'), w.ms + 250); });
  const polled = page.run(waitInPage, [w]);
  polled.catch(() => undefined);
  try {
    return await Promise.race([polled, late, ...(interrupt ? [interrupt.then(() => 'no answer' as const)] : [])]);
  } catch (err) {
    page.check();
    if (page.isNavigation(err)) return 'navigated';
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits for a page's ready condition: until its selector matches, for at most its `timeoutMs`; an implicit wait also
 * ends once the page has gone quiet (`options.quiet`). A navigation meanwhile is waited out (the new document is
 * polled). An invalid selector ends the wait at once.
 * @returns the time-out of an explicit wait whose selector did not appear.
 */
export async function waitForContent(page: StepPage, ready: ReadyCondition | undefined): Promise<LoadedDocument['waitTimedOut']> {
  if (!ready) return undefined;
  const end = Date.now() + ready.timeoutMs;
  const timedOut = ready.explicit ? { selector: ready.selector, timeoutMs: ready.timeoutMs } : undefined;
  const quiet = ready.explicit ? null : page.options.quiet;
  const idle = quiet === 'network' && page.networkIdle
    ? page.networkIdle(NETWORK_QUIET_MS, ready.timeoutMs).then(() => 'idle' as const, () => new Promise<never>(() => undefined))
    : null;
  let quietSince = Date.now();
  let last: { resources: number; readyState: string } | null = null;
  for (;;) {
    page.check();
    const w: PageWait = { selector: ready.selector, query: null, above: 0, marker: null, ms: Math.max(0, Math.min(POLL_MS, end - Date.now())) };
    const s = await (idle ? Promise.race([poll(page, w), idle]) : poll(page, w));
    if (s === 'idle') return undefined;
    if (typeof s === 'object') {
      if (s.match === 'found') return undefined;
      if (s.match === 'invalid') return timedOut;
      if (s.active || (last && (last.resources !== s.resources || last.readyState !== s.readyState))) quietSince = Date.now();
      last = { resources: s.resources, readyState: s.readyState };
      if (quiet === 'page' && s.readyState === 'complete' && Date.now() - quietSince >= PAGE_QUIET_MS) return undefined;
    } else {
      // A new document (or none answering): its quiet is measured afresh.
      quietSince = Date.now();
      last = null;
      if (s === 'navigated') await page.sleep(50);
    }
    if (Date.now() >= end) return timedOut;
  }
}

/** The action as ./in-page-steps.ts runs it. */
function pageAction(a: ActionSpec): PageAction {
  return {
    type: a.type, selector: a.selector ?? null, value: a.value ?? null, key: a.key ?? null,
    direction: a.direction ?? null, amount: (a.amount as PageAction['amount'] | undefined) ?? null,
  };
}

/**
 * Runs the config's actions in order. An action with a selector waits up to {@link ACTION_ELEMENT_WAIT_MS} for its
 * element. After each: `wait_after` ms, then a navigation the action started until its new document is there.
 * @throws CodedError `action_failed` naming the action (no element, an element that cannot take the browser's input,
 *   no option with the value, not a `<select>`, a script that threw); the page's own errors as they are (the loader
 *   explains them).
 */
export async function runActions(page: StepPage, actions: readonly ActionSpec[]): Promise<void> {
  for (let i = 0; i < actions.length; i++) {
    page.check();
    const a = actions[i]!;
    const where = `actions[${i}] (${a.type}${a.selector ? ` "${a.selector}"` : ''})`;
    const missing = async () => new CodedError('action_failed', `${where}: no element matches the selector "${a.selector}" on ${await page.url()}`, [{ path: `actions[${i}].selector`, selector: a.selector }]);
    if (a.selector && a.type !== 'scroll' && a.type !== 'keyboard' && a.type !== 'script' && !(await elementAppears(page, a.selector))) throw await missing();
    const nav = page.watchNavigation();
    try {
      let outcome: PageActionOutcome | 'unusable' = 'ok';
      if (a.type === 'script') {
        let r: Awaited<ReturnType<StepPage['script']>>;
        try {
          r = await page.script(a.script!);
        } catch (err) {
          // A script that navigates the page (location.href = …) has done its work: the settle below waits for the new page.
          page.check();
          if (!page.isNavigation(err)) throw err;
          r = { ok: true };
        }
        if (!r.ok) throw new CodedError('action_failed', `${where}: the script threw ${r.error.split('\n')[0]}`, [{ path: `actions[${i}].script` }]);
      } else if (a.type === 'scroll' || a.type === 'select' || page.options.input === 'dom') {
        outcome = await page.read(actionInPage, [pageAction(a)]);
      } else {
        outcome = await page.trustedInput!({ type: a.type, selector: a.selector ?? null, value: a.value ?? null, key: a.key ?? null });
      }
      if (outcome === 'missing') throw await missing();
      if (outcome === 'unusable') {
        const done = a.type === 'type' ? 'typed into' : a.type === 'hover' ? 'hovered' : 'clicked';
        throw new CodedError('action_failed', `${where}: the element matched by "${a.selector}" cannot be ${done}: it is hidden or has no size, or it left the page before the input reached it (input: trusted sends the browser's own input, as a person's; a hidden control takes input: dom or a script action)`, [{ path: `actions[${i}].selector`, selector: a.selector }]);
      }
      if (outcome === 'no_option') throw new CodedError('action_failed', `${where}: no option with the value "${a.value}"`, [{ path: `actions[${i}].value` }]);
      if (outcome === 'not_select') throw new CodedError('action_failed', `${where}: the element is not a <select>`, [{ path: `actions[${i}].selector`, selector: a.selector }]);
      // Let the page react (requests, rendering) before the next action; a navigation it started is waited out.
      await page.sleep(a.wait_after);
      if (await nav.started()) await nav.done();
    } finally {
      nav.stop();
    }
  }
}

/** Whether an element matches `selector` within {@link ACTION_ELEMENT_WAIT_MS} (false at once for an invalid selector). */
async function elementAppears(page: StepPage, selector: string): Promise<boolean> {
  const end = Date.now() + ACTION_ELEMENT_WAIT_MS;
  for (;;) {
    page.check();
    const s = await poll(page, { selector, query: null, above: 0, marker: null, ms: Math.max(0, Math.min(POLL_MS, end - Date.now())) });
    if (typeof s === 'object' && s.match !== 'missing') return s.match === 'found';
    if (s === 'navigated') await page.sleep(50);
    if (Date.now() >= end) return false;
  }
}

/**
 * One in-page pagination step. `scroll`: scrolls to the bottom, then waits up to `waitMs` for more items.
 * `click`: when the control is there and usable, clicks it (`options.input`), then waits up to `waitMs` for a new
 * document (the page navigated: its content is then waited for with `ready`) or more items in the same one.
 * @returns `more` (new items from `before` on), `navigated`, or `end` (nothing changed, or no usable control).
 */
export async function paginationStep(page: StepPage, kind: 'click' | 'scroll', selector: string | undefined, query: ItemQuery, waitMs: number, ready?: ReadyCondition): Promise<StepOutcome> {
  page.check();
  const marker = `m${Date.now()}-${Math.random()}`;
  if (kind === 'scroll') {
    const { before } = await page.read(stepStartInPage, ['scroll', null, query, marker]);
    return { outcome: (await watchStep(page, query, before, null, waitMs, null)) === 'more' ? 'more' : 'end', before };
  }
  const start = await page.read(stepStartInPage, ['click', selector!, query, marker]);
  if (start.state !== 'ready') return { outcome: 'end', before: 0 };
  const nav = page.watchNavigation();
  try {
    if (page.options.input === 'trusted') await page.trustedInput!({ type: 'click', selector: selector!, value: null, key: null }).catch(() => undefined);
    else await page.run(actionInPage, [{ type: 'click', selector: selector!, value: null, key: null, direction: null, amount: null }]);
    const change = await watchStep(page, query, start.before, marker, waitMs, nav);
    if (change === 'navigated') await waitForContent(page, ready);
    return { outcome: change === 'none' ? 'end' : change, before: start.before };
  } finally {
    nav.stop();
  }
}

/**
 * After a step: did the document change (its marker is gone: a navigation), grow (more items than `before`), or
 * neither within `ms`? A navigation that started is waited out before the document is looked at again, so the old
 * document is never taken for the new one; a navigation within the document (history.pushState) is not a new one.
 */
async function watchStep(page: StepPage, query: ItemQuery, before: number, marker: string | null, ms: number, nav: NavigationWatch | null): Promise<'navigated' | 'more' | 'none'> {
  const end = Date.now() + ms;
  let navigating = false;
  for (;;) {
    page.check();
    if (nav && !navigating && (await nav.started())) {
      navigating = true;
      await nav.done();
    }
    const s = await poll(page, { selector: null, query, above: before, marker, ms: Math.max(0, Math.min(POLL_MS, end - Date.now())) }, nav && !navigating ? nav.starting : undefined);
    if (s === 'navigated' && marker !== null) {
      // The document went away under the poll: what replaces it is a new document.
      if (nav && !navigating) {
        navigating = true;
        await nav.done();
      }
      return 'navigated';
    }
    if (typeof s === 'object') {
      if (!s.sameDocument) {
        if (nav && (await nav.started())) await nav.done();
        return 'navigated';
      }
      if (s.count > before) {
        // Give a batch that is still being appended a moment to finish.
        await page.sleep(BATCH_SETTLE_MS);
        return 'more';
      }
    }
    if (Date.now() >= end) return 'none';
  }
}
