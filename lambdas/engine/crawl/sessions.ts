/**
 * The page sessions of a run (a browser tab each; stateless over HTTP): one for the listings and the index page,
 * so that in-page steps act on the listing's own tab, and one per worker for detail pages, each reused URL
 * after URL. All are closed once the run's workers have ended.
 */
import type { PageLoader, PageSession } from '../loaders/page-loader.ts';

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

  constructor(loader: PageLoader) {
    this.loader = loader;
  }

  /** The listings' session (also the index page's), opened on first call. @throws as `PageLoader.openSession`. */
  listing(): Promise<PageSession> {
    this.listingSession ??= this.loader.openSession();
    return this.listingSession;
  }

  /** Worker `worker`'s session for detail pages, opened on its first call. @throws as `PageLoader.openSession`. */
  detail(worker: number): Promise<PageSession> {
    let s = this.detailSessions.get(worker);
    if (!s) {
      s = this.loader.openSession();
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
