/**
 * The page sessions of a run (a browser tab each; stateless over HTTP): one for the listings and the index page,
 * so that in-page steps act on the listing's own tab, and one per worker for detail pages, each reused URL
 * after URL. All are closed once the run's workers have ended.
 */
import type { LoadedDocument, LoadOptions, PageLoader, PageSession } from '../loaders/page-loader.ts';
import type { SiteAccess } from './access.ts';
import type { ApiAnswer, ApiRequest } from '../api/api-source.ts';
import { CodedError } from '../../errors.ts';

/**
 * A session whose loads go through the run's {@link SiteAccess} (robots.txt, the host's pace, 429/5xx retries);
 * the session itself as it is without one.
 */
function underAccess(session: PageSession, access: SiteAccess | undefined, engine: 'lightweight' | 'heavy'): PageSession {
  if (!access) return session;
  // The engine probe's page went through the access already: served as it is.
  const load = (url: string, o: LoadOptions = {}): Promise<LoadedDocument> => session.serves?.(url)
    ? session.load(url, o)
    : access.load(url, (beforeRequest, proxy) => session.load(url, { ...o, retryStatuses: false, beforeRequest, session: proxy }), (d) => ({ ...d, body: d.html }), o.signal, { engine });
  return { load, ...(session.browser ? { browser: session.browser } : {}), close: () => session.close() };
}

/**
 * Opens sessions on first use and closes each once.
 *
 * **Example usage:**
 * ```ts
 * const s = new Sessions(loader);
 * const tab = await s.listing();   // the same session every call
 * const d = await s.detail(2);     // worker 2's detail session
 * await s.closeAll();
 * ```
 */
export class Sessions {
  private listingSession: Promise<PageSession> | null = null;
  private readonly detailSessions = new Map<number, Promise<PageSession>>();
  /** Whether the listing tab still shows the index page (browser): a category that is that page is read as it is. */
  listingTabAtIndex = false;

  private readonly loader: PageLoader;
  /** The run's robots.txt and pace, when it keeps them (absent: the extension's runs on the user's own tab). */
  readonly access: SiteAccess | undefined;

  constructor(loader: PageLoader, access?: SiteAccess) {
    this.loader = loader;
    this.access = access;
  }

  private open(): Promise<PageSession> {
    return this.loader.openSession().then((s) => underAccess(s, this.access, this.loader.engine));
  }

  /**
   * Sends an API config's request (target.api) through the loader, under the run's SiteAccess when it has one
   * (robots.txt, the host's pace, 429/5xx retries, bot-protection pages and proxy sessions), as a page is loaded.
   * @throws as a page load; `target_failed` on a loader that cannot send API requests.
   */
  async fetchApi(request: ApiRequest, signal?: AbortSignal): Promise<ApiAnswer> {
    const loader = this.loader;
    if (!loader.fetchApi) throw new CodedError('target_failed', `This page loader cannot send the API request ${request.method} ${request.url}`, [{ url: request.url }]);
    const send = loader.fetchApi.bind(loader);
    if (!this.access) return send(request, signal ? { signal } : {});
    return this.access.load(request.url, (beforeRequest, session) => send(request, { retryStatuses: false, beforeRequest, session, ...(signal ? { signal } : {}) }),
      (a) => ({ status: a.status, ...(a.headers ? { headers: a.headers } : {}), ...(a.latencyMs !== undefined ? { latencyMs: a.latencyMs } : {}), body: a.text }), signal, { engine: loader.engine, plainHttp: true });
  }

  /** Waits for the host's pace before an in-page step of a listing (a click, a scroll) that may reach the server. */
  async paceStep(url: string, signal?: AbortSignal): Promise<void> {
    if (this.access) await this.access.pace.acquire(new URL(url).origin, signal);
  }

  /** The listings' session (also the index page's), opened on first call. @throws as `PageLoader.openSession`. */
  listing(): Promise<PageSession> {
    this.listingSession ??= this.open();
    return this.listingSession;
  }

  /** Worker `worker`'s session for detail pages, opened on its first call. @throws as `PageLoader.openSession`. */
  detail(worker: number): Promise<PageSession> {
    let s = this.detailSessions.get(worker);
    if (!s) {
      s = this.open();
      this.detailSessions.set(worker, s);
    }
    return s;
  }

  /** Closes every session opened (one that failed to open is skipped; a failing close is ignored). */
  async closeAll(): Promise<void> {
    const sessions = await Promise.allSettled([this.listingSession, ...this.detailSessions.values()]);
    const seen = new Set<PageSession>();
    for (const s of sessions) {
      if (s.status !== 'fulfilled' || !s.value || seen.has(s.value)) continue;
      seen.add(s.value);
      await s.value.close().catch(() => undefined);
    }
  }
}
