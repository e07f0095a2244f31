/**
 * The HTTP side of proxy sessions (./proxy-sessions.ts): one fetcher per proxied session (its connections through the
 * session's proxy, lambdas/net/upstream.ts) and its cookies (tough-cookie, RFC 6265), used by the HTTP loader, the
 * engine probe and robots.txt alike. A direct session is the run's own fetcher, stateless as before.
 */
import { CookieJar } from 'tough-cookie';
import type { FetchedPage, Fetcher, FetchRequestOptions } from '../../net/fetch.ts';
import type { ProxySession } from './proxy-sessions.ts';

/**
 * Fetchers and cookie jars by session.
 *
 * **Example usage:**
 * ```ts
 * const f = new SessionFetchers(jobFetcher);
 * const page = await f.fetch(pool.current, url, { signal });   // through the session's proxy, with its cookies
 * await f.close();                                             // the proxied fetchers made here
 * ```
 */
export class SessionFetchers {
  readonly base: Fetcher;
  private readonly made = new Map<string, { fetcher: Fetcher; jar: CookieJar }>();

  /** @param base the run's fetcher: direct sessions use it, proxied ones a copy of its settings through the proxy. */
  constructor(base: Fetcher) {
    this.base = base;
  }

  /** The fetcher of a session (the base one for a direct session or none). */
  for(session: ProxySession | undefined): Fetcher {
    return this.entry(session)?.fetcher ?? this.base;
  }

  private entry(session: ProxySession | undefined): { fetcher: Fetcher; jar: CookieJar } | null {
    if (!session?.proxy) return null;
    let e = this.made.get(session.id);
    if (!e) {
      e = { fetcher: this.base.withProxy(session.proxy, session.id), jar: new CookieJar() };
      this.made.set(session.id, e);
    }
    return e;
  }

  /**
   * Fetches `url` in `session`: through its proxy, sending its cookies for the URL and keeping those the answer sets.
   * @throws as Fetcher.fetch.
   */
  async fetch(session: ProxySession | undefined, url: string, o: FetchRequestOptions = {}): Promise<FetchedPage> {
    const e = this.entry(session);
    if (!e) return this.base.fetch(url, o);
    const cookie = await e.jar.getCookieString(url).catch(() => '');
    const page = await e.fetcher.fetch(url, cookie ? { ...o, headers: { ...o.headers, cookie } } : o);
    for (const c of page.setCookies.slice(0, 50)) await e.jar.setCookie(c, page.url, { ignoreError: true }).catch(() => undefined);
    return page;
  }

  /** Closes the proxied fetchers (not the base one). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.made.values()].map((e) => e.fetcher.close()));
    this.made.clear();
  }
}
