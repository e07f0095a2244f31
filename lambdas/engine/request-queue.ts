/**
 * The crawler's request queue (Crawlee's RequestQueue, in memory for one run): requests labelled `index`
 * (the page categories are found on), `listing` (a page, or an in-page step, of a listing) and `detail`
 * (an item's own page), each with a unique key, so that no page is loaded twice, and a priority, so that
 * a listing's next page goes before the detail pages of the current one (the listing chain never waits
 * behind its own detail pages and the crawl's frontier keeps growing).
 */
import type { Row } from './extract.ts';
import type { LoadedDocument } from './loaders/page-loader.ts';
import type { ApiPosition } from './api/api-source.ts';

/** What a request is for. */
type RequestLabel = 'index' | 'listing' | 'detail';

/** One listing chain: the target, or one category, with its pages (or in-page steps) in order. */
export interface Listing {
  /** Position among the run's listings (rows keep this order). */
  id: number;
  /** Metadata every row of the listing gets (`_category`, `_category_url`), empty without categories. */
  meta: Row;
  /** The listing's first page: target.url or the category's URL; a relative url_pattern resolves against it. */
  start: string;
  /** Rows of each step, in step order, whatever order detail pages finish in. */
  pages: Row[][];
  /** Items kept so far (after stop_condition.max_items and output.limit). */
  items: number;
  /** Steps that took a slot of the page budget. */
  reserved: number;
  open: boolean;
}

/** A request of the crawl. */
export interface CrawlRequest {
  label: RequestLabel;
  /** The URL to load; null for an in-page step of a listing (a click on a control that is not a link, a scroll). */
  url: string | null;
  /** Requests with a key already seen are not added: the page is not loaded again. */
  uniqueKey: string;
  /** Order of addition, set by the queue: warnings of a run are reported in this order, whatever order pages finish in. */
  seq?: number;
  /** `listing`: the listing and the index of this step in it (0 for its first page). */
  listing?: Listing;
  index?: number;
  /** `listing`, in a browser: the in-page step to take instead of loading a URL. */
  step?: 'click' | 'scroll';
  /** `listing`: a document loaded already under the same key (a category that is the index page itself). */
  reuse?: LoadedDocument;
  /** `listing` of an API config (target.api): the placeholders' values (or the next URL) of this request. */
  api?: ApiPosition;
}

/** Priorities: 0 for index and listing requests, 1 for detail pages. */
export type Priority = 0 | 1;

/**
 * What the queue needs of a request: its unique key, and the order of addition the queue sets. The crawler's
 * requests are {@link CrawlRequest}s; the link checker (tools/links.ts) queues the pages it reads with its own.
 */
export interface QueuedRequest {
  uniqueKey: string;
  seq?: number;
}

/** The key of a page: its URL without the fragment (two links that differ only by #part are one page). */
export function pageKey(url: string): string {
  const i = url.indexOf('#');
  return i === -1 ? url : url.slice(0, i);
}

/**
 * An in-memory request queue with unique keys and two priorities (FIFO within a priority). `R`: the requests it
 * holds (the crawler's by default).
 *
 * **Example usage:**
 * ```ts
 * const q = new RequestQueue();
 * q.add({ label: 'detail', url, uniqueKey: `detail:${pageKey(url)}` }, 1); // false when seen before
 * const next = q.shift(0) ?? q.shift(1);
 * ```
 */
export class RequestQueue<R extends QueuedRequest = CrawlRequest> {
  private readonly queues: [R[], R[]] = [[], []];
  private readonly heads: [number, number] = [0, 0];
  private readonly keys = new Set<string>();
  private added = 0;

  /** Adds a request unless its key was seen. @returns false for a request already seen (nothing added). */
  add(request: R, priority: Priority): boolean {
    if (this.keys.has(request.uniqueKey)) return false;
    this.keys.add(request.uniqueKey);
    request.seq = this.added++;
    this.queues[priority].push(request);
    return true;
  }

  /** Marks a key seen without queueing anything (a page reached by a redirect). */
  markSeen(uniqueKey: string): void {
    this.keys.add(uniqueKey);
  }

  /** Whether a key was seen (queued, loaded, or marked). */
  has(uniqueKey: string): boolean {
    return this.keys.has(uniqueKey);
  }

  /** The next request of a priority without taking it. */
  peek(priority: Priority): R | undefined {
    return this.queues[priority][this.heads[priority]];
  }

  /** Takes the next request of a priority. */
  shift(priority: Priority): R | undefined {
    const q = this.queues[priority];
    const r = q[this.heads[priority]];
    if (r === undefined) return undefined;
    this.heads[priority]++;
    // Compact now and then so a long crawl does not keep every taken request.
    if (this.heads[priority] > 1024 && this.heads[priority] * 2 > q.length) {
      q.splice(0, this.heads[priority]);
      this.heads[priority] = 0;
    }
    return r;
  }

  /** Requests waiting at a priority. */
  size(priority: Priority): number {
    return this.queues[priority].length - this.heads[priority];
  }
}
