/**
 * When a page is ready to be read in a browser (ignored over HTTP): the config's `target.browser.wait_selector`
 * when it names one (its time-out is reported), else an implicit wait of at most {@link IMPLICIT_WAIT_MS} for the
 * content the config reads, since scripts may render it after DOMContentLoaded.
 */
import type { FieldSpec, ScrapeConfig } from '../config.ts';
import type { ReadyCondition } from '../loaders/page-loader.ts';

/** Longest wait for content the config did not name a wait for (ms). */
export const IMPLICIT_WAIT_MS = 5000;

function implicit(config: ScrapeConfig, selector: string | undefined): ReadyCondition | undefined {
  if (!selector) return undefined;
  return { selector, timeoutMs: Math.min(config.target.browser.timeout, IMPLICIT_WAIT_MS), explicit: false };
}

/** The first field selector whose element a page must have (not `eval`, `exists` or `count` fields). */
function firstWaitableSelector(fields: readonly FieldSpec[]): string | undefined {
  return fields.find((f) => f.selector && f.type !== 'eval' && f.type !== 'exists' && f.type !== 'count')?.selector;
}

/** A listing page is ready when the config's wait_selector is there, else its items (or first field). */
export function listingReady(config: ScrapeConfig): ReadyCondition | undefined {
  const b = config.target.browser;
  if (b.wait_selector) return { selector: b.wait_selector, timeoutMs: b.timeout, explicit: true };
  const ex = config.extract;
  if (ex.container) return implicit(config, ex.container);
  return implicit(config, firstWaitableSelector(ex.fields));
}

/** The categories' index page is ready when the wait_selector is there, else its category links. Needs `categories`. */
export function indexReady(config: ScrapeConfig): ReadyCondition | undefined {
  const b = config.target.browser;
  if (b.wait_selector) return { selector: b.wait_selector, timeoutMs: b.timeout, explicit: true };
  const cat = config.categories!;
  return implicit(config, cat.container ? `${cat.container} ${cat.link_selector}` : cat.link_selector);
}

/** A detail page is ready when its first field's element is there. */
export function detailReady(config: ScrapeConfig): ReadyCondition | undefined {
  return implicit(config, firstWaitableSelector(config.detail_fields?.fields ?? []));
}
