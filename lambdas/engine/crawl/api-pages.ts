/**
 * The listing of an API config (target.api; docs/config-language.md, "Reading a JSON API"): each step is one request
 * to the JSON endpoint, sent by the run's page loader under the run's SiteAccess (robots.txt, pace, retries, blocks,
 * proxy sessions: crawl/sessions.ts, `fetchApi`), read by ../api/api-source.ts into rows; then the next request is
 * queued (before this answer's detail pages, as for HTML listings) and the rows' detail pages. The run's first answer
 * failing fails the run with a code (`target_failed`, `api_not_json`, `api_no_records`, `api_query_limit`, the
 * fetcher's); a later answer failing ends the listing with a warning, the rows so far kept.
 */
import { CodedError, isCodedError } from '../../errors.ts';
import type { ScrapeConfig } from '../config.ts';
import { ApiSource, parseAnswer, requestKey, type ApiAnswer, type ApiPageRead } from '../api/api-source.ts';
import { QueryBudget } from '../api/json-query.ts';
import type { CrawlRequest } from '../request-queue.ts';
import { sleep } from '../../sleep.ts';
import { firstPageError, isLoadFailure, messageOf } from './documents.ts';
import type { Listings } from './listings.ts';
import { capsReached, itemCaps, keepWithinCaps, type ItemCaps } from './pagination.ts';
import type { ListingPagesDeps } from './listing-pages.ts';

/** What {@link ApiPages} works with: the same parts as the HTML listing pages'. */
export type ApiPagesDeps = Omit<ListingPagesDeps, 'reader'>;

/** Codes of an answer that cannot be read: fatal on the first answer, a warning on a later one. */
const READ_FAILURES = new Set(['api_not_json', 'api_no_records', 'api_query_limit', 'target_failed']);

/**
 * Reads the API requests of a run.
 *
 * **Example usage:**
 * ```ts
 * const pages = new ApiPages(config, { queue, sessions, listings, details, warnings, progress, signal });
 * listings.start({}, config.target.url, pages.firstRequest()); // the listing's first request
 * await pages.handle(req);                                     // req.label === 'listing'
 * ```
 */
export class ApiPages {
  readonly source: ApiSource;
  private readonly caps: ItemCaps;
  /** Records read by the listing so far (before the caps), for a total count. */
  private recordsSoFar = 0;

  private readonly config: ScrapeConfig;
  private readonly d: ApiPagesDeps;

  constructor(config: ScrapeConfig, deps: ApiPagesDeps) {
    this.config = config;
    this.d = deps;
    this.source = new ApiSource(config);
    this.caps = itemCaps(config);
  }

  /** The listing's first request, for {@link Listings.start}: its URL, unique key and position. */
  firstRequest(): Pick<CrawlRequest, 'url' | 'uniqueKey' | 'api'> {
    const pos = this.source.first();
    const req = this.source.request(pos);
    return { url: req.url, uniqueKey: requestKey(req), api: pos };
  }

  /**
   * Takes one step: a slot of the page budget, the pause (pagination.wait_after), the request, its rows, the next
   * request and the rows' detail pages.
   * @throws for the first answer: `target_failed` (an error status, or not reachable), `api_not_json`,
   *   `api_no_records`, `api_query_limit`, the fetcher's codes; the loader's fatal errors; the signal's reason.
   */
  async handle(req: CrawlRequest): Promise<void> {
    const { queue, listings, progress, signal } = this.d;
    const listing = req.listing!;
    const index = req.index!;
    const warn = (message: string) => this.d.warnings.add(message, req.seq);
    if (!listings.reserve(listing)) {
      listings.end(listing, index - 1);
      return;
    }
    if (index > 0 && this.config.pagination!.wait_after > 0) await sleep(this.config.pagination!.wait_after, signal);
    const pos = req.api ?? this.source.first();
    const request = this.source.request(pos);
    const what = `API request ${request.method} ${request.url}`;
    let read: ApiPageRead;
    let answer: ApiAnswer;
    try {
      try {
        answer = await this.d.sessions.fetchApi(request, signal);
      } catch (err) {
        throw index === 0 ? firstPageError(err, request.url) : err;
      }
      if (answer.status >= 400) {
        throw new CodedError('target_failed', `${request.url} answered HTTP ${answer.status}`, [{ url: request.url, status: answer.status, content_type: answer.contentType }]);
      }
      read = this.source.read(answer, parseAnswer(answer), pos, { index, recordsSoFar: this.recordsSoFar }, new QueryBudget());
    } catch (err) {
      if (signal.aborted || index === 0 || !isCodedError(err) || !(isLoadFailure(err) || READ_FAILURES.has(err.code))) throw err;
      listings.noteFailure(err);
      warn(`${what}: ${messageOf(err)}; the listing ends there`);
      listings.end(listing, index - 1);
      return;
    }
    progress.pageRead('listing');
    for (const w of read.warnings) warn(w);
    if (index === 0 && read.recordCount === 0) warn(`the API's first answer has no records at extract.records "${this.source.recordsText}" (an empty list)`);
    this.recordsSoFar += read.recordCount;

    const rows = keepWithinCaps(read.rows, this.caps, listing.items, listings.totalItems());
    listing.pages[index] = rows;
    listing.items += rows.length;
    progress.listingStepRead(rows.length);

    const reached = capsReached(this.caps, listing.items, listings.totalItems());
    if (reached.total) listings.stop();
    const next = reached.listing || listings.stopped ? null : read.next;
    if (next) {
      const nextRequest = this.source.request(next);
      const key = requestKey(nextRequest);
      if (queue.has(key)) {
        warn(`pagination: the API's next request ${nextRequest.method} ${nextRequest.url} was sent already; the listing ends there`);
        listings.end(listing, index);
      } else {
        queue.add({ label: 'listing', url: nextRequest.url, uniqueKey: key, listing, index: index + 1, api: next }, 0);
      }
    } else {
      listings.end(listing, index);
    }
    this.d.details.enqueue(rows);
    progress.report(`listing page ${index + 1} (API): ${rows.length} items`);
  }
}
