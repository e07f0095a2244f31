/**
 * A listing's pagination, as pure functions: where its next step goes (a URL from url_pattern or from a
 * pagination link, a click on a control that is not a link, a scroll) and when it stops (max_pages, an empty
 * numbered page, no or a disabled control, a scroll that found nothing, stop_condition.max_items, output.limit),
 * and the pauses between steps. The control is read by ../pager.ts, as `engine: auto` reads it.
 */
import { BrowserRequiredError, type ScrapeConfig } from '../config.ts';
import { absoluteUrl, type Row } from '../extract.ts';
import type { PagerControl } from '../pager.ts';

/** A listing's next step: a URL to load, or (browser) an in-page step. */
export type NextStep = { url: string } | { step: 'click' | 'scroll'; url?: undefined };

/** Where a listing is, for {@link nextStep}. */
export interface StepContext {
  /**
   * The page's pagination control (../pager.ts, read with the page by ./page-reader.ts), for `click` pagination;
   * null for the other types.
   */
  control: PagerControl | null;
  /** The page's URL (after redirects), for messages. */
  pageUrl: string;
  /** The listing's first page: a relative url_pattern resolves against it. */
  start: string;
  /** Index of this step in the listing (0: its first page). */
  index: number;
  /** Items the step kept (after the item caps). */
  itemsOnPage: number;
  /** Whether a browser reads the listing (it can click controls that are not links). */
  browser: boolean;
  /** Whether every listing is stopped (output.limit, the page limit). */
  stopped: boolean;
}

/**
 * The next step of a listing, or null at its end: none without pagination, at `max_pages`, when the listings are
 * stopped; `scroll_infinite`: a scroll after the first page or one that brought items; `url`: the url_pattern's
 * next page unless this one was empty; `click`: the control's link, or (browser) a click on a control that is not
 * a link; none when the control is absent or disabled.
 * @param warn gets a warning when, over HTTP, a later page's control stopped being a link (the listing ends).
 * @throws BrowserRequiredError over HTTP when the first page's control is not a link.
 */
export function nextStep(pagination: ScrapeConfig['pagination'], at: StepContext, warn: (message: string) => void): NextStep | null {
  const p = pagination;
  const { index } = at;
  if (!p || index + 1 >= p.max_pages || at.stopped) return null;
  if (p.type === 'scroll_infinite') return at.itemsOnPage || index === 0 ? { step: 'scroll' } : null;
  if (p.type === 'url') {
    // An empty page ends a numbered listing: there is nothing after it.
    if (at.itemsOnPage === 0) return null;
    // Relative to the listing's first page, so "page/{page}/" pages each category, not the target again.
    const url = absoluteUrl(p.url_pattern!.replaceAll('{page}', String(index + 2)), at.start);
    return url ? { url } : null;
  }
  const control = at.control ?? { kind: 'none' };
  if (control.kind === 'none' || control.kind === 'disabled') return null;
  if (control.kind === 'link') return { url: control.url };
  if (at.browser) return { step: 'click' };
  const tag = control.tag;
  if (index > 0) {
    // Rows are already in: a control that stopped being a link (href="#") ends the listing.
    warn(`pagination: on ${at.pageUrl} "${p.selector}" is a <${tag}> without a usable href; the listing ends there`);
    return null;
  }
  throw new BrowserRequiredError(
    `pagination.selector "${p.selector}" matches a <${tag}> that is not a link; clicking it needs a browser: set target.engine to heavy or auto`,
    [{ path: 'pagination.selector', reason: `matches <${tag}> without href on ${at.pageUrl}` }],
  );
}

/** The item caps of a run: `pagination.stop_condition.max_items` per listing, output.limit for the run. */
export interface ItemCaps {
  /** Items a listing keeps at most (stop_condition.max_items). */
  perListing?: number;
  /** Items the run keeps at most: output.limit, only without deduplication (rows may merge after it). */
  total?: number;
}

/** The caps of a config. */
export function itemCaps(config: ScrapeConfig): ItemCaps {
  const perListing = config.pagination?.stop_condition.max_items;
  const total = config.output.deduplicate ? undefined : config.output.limit;
  return { ...(perListing !== undefined ? { perListing } : {}), ...(total !== undefined ? { total } : {}) };
}

/**
 * The rows of a step that fit the caps (the first ones).
 * @param listingItems items the listing kept before this step; @param totalItems items every listing kept before it.
 */
export function keepWithinCaps(rows: Row[], caps: ItemCaps, listingItems: number, totalItems: number): Row[] {
  if (caps.perListing !== undefined && listingItems + rows.length > caps.perListing) rows = rows.slice(0, Math.max(0, caps.perListing - listingItems));
  if (caps.total !== undefined) {
    const room = caps.total - totalItems;
    if (rows.length > room) rows = rows.slice(0, Math.max(0, room));
  }
  return rows;
}

/**
 * Which caps are reached, counting the step's rows: `listing` ends this listing, `total` stops every listing.
 * @param listingItems and @param totalItems counted after the step.
 */
export function capsReached(caps: ItemCaps, listingItems: number, totalItems: number): { listing: boolean; total: boolean } {
  const total = caps.total !== undefined && totalItems >= caps.total;
  return { listing: total || (caps.perListing !== undefined && listingItems >= caps.perListing), total };
}

/**
 * The pause before a listing step (ms), before its request so that a server sees requests spaced out: for a
 * first page, categories.wait_after (before each category) or none; for a later step pagination.wait_after,
 * except a scroll, which waits for more as it goes ({@link stepWaitMs}).
 */
export function pauseBefore(config: ScrapeConfig, index: number, step?: 'click' | 'scroll'): number {
  return index === 0 ? (config.categories ? config.categories.wait_after : 0) : step === 'scroll' ? 0 : config.pagination!.wait_after;
}

/** How long an in-page step waits for the page to navigate or grow (ms): wait_after (2,000 if 0) for a scroll, else wait_after but at least 3,000. */
export function stepWaitMs(p: NonNullable<ScrapeConfig['pagination']>): number {
  return p.type === 'scroll_infinite' ? p.wait_after || 2000 : Math.max(3000, p.wait_after);
}
