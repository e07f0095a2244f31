/**
 * The HTTP page loader: a page is one GET through the outbound guard (lambdas/net/fetch.ts: redirects hop by
 * hop through the guard, time and size caps, retries of 429/5xx/network errors, charset detection), no browser.
 * Sessions are stateless: every session is the same object.
 */
import { Fetcher, type FetchedPage } from '../../net/fetch.ts';
import { OutboundGuard, type GuardOptions } from '../../net/guard.ts';
import type { SessionFetchers } from '../crawl/session-fetchers.ts';
import type { CapturedResponse, LoadedDocument, LoadOptions, PageLoader, PageSession } from './page-loader.ts';
import type { ApiAnswer, ApiRequest } from '../api/api-source.ts';

/** Options of {@link HttpPageLoader}. */
export interface HttpLoaderOptions {
  /** The HTTP client; when absent one is made from `outbound` and closed with the loader. */
  fetcher?: Fetcher;
  /** Guard options for the fetcher made here (ignored with `fetcher`). */
  outbound?: GuardOptions;
  /** Connections per host of the fetcher made here. @default 4 */
  perHostConcurrency?: number;
  /** The run's proxy sessions' fetchers and cookies (crawl/session-fetchers.ts); absent: `fetcher` alone, direct. */
  sessionFetchers?: SessionFetchers;
  /** A page fetched already (engine auto probes target.url): served once instead of fetching it again. */
  preloaded?: FetchedPage;
  /** Aborts every fetch. */
  signal?: AbortSignal;
}

function toDocument(page: FetchedPage, requestedUrl: string, latencyMs?: number): LoadedDocument {
  return { requestedUrl, url: page.url, status: page.status, contentType: page.contentType, html: page.text, headers: page.headers, ...(latencyMs !== undefined ? { latencyMs } : {}) };
}

const NO_CAPTURE = { responses: [] as CapturedResponse[], values: new Set<string>() as ReadonlySet<string> };

/**
 * Loads pages over HTTP.
 *
 * **Example usage:**
 * ```ts
 * const loader = new HttpPageLoader({ outbound: { allow: ['127.0.0.0/8'] } });
 * const result = await crawl(parseConfig(yaml), loader);
 * await loader.close();
 * ```
 */
export class HttpPageLoader implements PageLoader {
  readonly engine = 'lightweight' as const;
  /** The HTTP client pages are fetched with (robots.txt too, crawl/access.ts). */
  readonly fetcher: Fetcher;
  private readonly ownsFetcher: boolean;
  private preloaded: FetchedPage | null;
  private readonly sessionFetchers: SessionFetchers | null;
  private readonly signal: AbortSignal | undefined;
  /** The one session: HTTP needs no per-session state. */
  private readonly session: PageSession = { load: (url, o) => this.load(url, o), serves: (url) => this.isPreloaded(url), close: async () => undefined };

  constructor(o: HttpLoaderOptions = {}) {
    this.ownsFetcher = !o.fetcher;
    this.fetcher = o.fetcher ?? new Fetcher(new OutboundGuard(o.outbound), { perHostConcurrency: o.perHostConcurrency ?? 4 });
    this.preloaded = o.preloaded ?? null;
    this.sessionFetchers = o.sessionFetchers ?? null;
    this.signal = o.signal;
  }

  private isPreloaded(url: string): boolean {
    const p = this.preloaded;
    return p !== null && (p.requestedUrl === url || p.url === url);
  }

  async openSession(): Promise<PageSession> {
    return this.session;
  }

  /**
   * Fetches a URL.
   * @throws CodedError `target_forbidden`, `dns_failed`, `fetch_failed`, `response_too_large` (lambdas/net/fetch.ts);
   *   the signal's reason when aborted.
   */
  async load(url: string, o: LoadOptions = {}): Promise<LoadedDocument> {
    const p = this.preloaded;
    if (p && (p.requestedUrl === url || p.url === url)) {
      this.preloaded = null;
      return toDocument(p, url);
    }
    const signal = o.signal && this.signal ? AbortSignal.any([o.signal, this.signal]) : o.signal ?? this.signal;
    await o.beforeRequest?.();
    const started = Date.now();
    const options = { signal, ...(o.retryStatuses === false ? { retryStatuses: false } : {}) };
    const page = this.sessionFetchers ? await this.sessionFetchers.fetch(o.session, url, options) : await this.fetcher.fetch(url, options);
    return toDocument(page, url, Date.now() - started);
  }

  /**
   * Sends an API config's request through the fetcher (the session's proxy and cookies when it has them).
   * @throws as {@link load}.
   */
  async fetchApi(request: ApiRequest, o: Omit<LoadOptions, 'ready'> = {}): Promise<ApiAnswer> {
    const signal = o.signal && this.signal ? AbortSignal.any([o.signal, this.signal]) : o.signal ?? this.signal;
    return fetchApiWith(this.sessionFetchers, this.fetcher, request, { ...o, ...(signal ? { signal } : {}) });
  }

  warnings(): string[] {
    return [];
  }

  apiCapture(): { responses: CapturedResponse[]; values: ReadonlySet<string> } {
    return NO_CAPTURE;
  }

  async close(): Promise<void> {
    if (this.ownsFetcher) await this.fetcher.close();
  }
}

/**
 * One API request through a fetcher: the session's (its proxy and cookies) when `fetchers` is given, else `fetcher`;
 * `beforeRequest` (the host's pace) right before it goes out. The HTTP loader and the browser loader both send API
 * requests this way: plain HTTP through the outbound guard.
 * @throws as Fetcher.fetch.
 */
export async function fetchApiWith(fetchers: SessionFetchers | null, fetcher: Fetcher, request: ApiRequest, o: Omit<LoadOptions, 'ready'>): Promise<ApiAnswer> {
  await o.beforeRequest?.();
  const started = Date.now();
  const options = {
    method: request.method, headers: request.headers, ...(request.body !== undefined ? { body: request.body } : {}),
    ...(o.signal ? { signal: o.signal } : {}), ...(o.retryStatuses === false ? { retryStatuses: false } : {}),
  };
  const page = fetchers ? await fetchers.fetch(o.session, request.url, options) : await fetcher.fetch(request.url, options);
  return { requestedUrl: request.url, url: page.url, status: page.status, contentType: page.contentType, headers: page.headers, text: page.text, latencyMs: Date.now() - started };
}
