/**
 * Proxy sessions of a run (Crawlee's SessionPool idea; docs/crawler.md, "Upstream proxies"): a session is one upstream
 * proxy of the run's group plus its cookies. A run uses one session at a time; a session that met a block, or whose
 * proxy failed, is retired and the request goes again on the next one, at most {@link MAX_SESSION_ROTATIONS} times per
 * request. A proxy whose user name has `{session}` (a rotating proxy's sticky session) gives a new exit per
 * session, up to {@link MAX_SESSIONS_PER_PROXY}; another proxy is one session. Without a group there is one direct
 * session, which cannot be replaced.
 *
 * The pool lives in the run's one SiteAccess, not in a page worker: the session every worker uses is the pool's.
 */
import type { UpstreamProxy } from '../../net/upstream.ts';

/** Times one request goes to another session after a block or a proxy failure. */
export const MAX_SESSION_ROTATIONS = 3;
/** Sessions one `{session}` proxy gives a run at most. */
export const MAX_SESSIONS_PER_PROXY = 10;

/** One session: a proxy (null: direct) and its cookies (kept by the loader under its id). */
export interface ProxySession {
  /** Unique in the run, also the `{session}` of the proxy's user name. */
  readonly id: string;
  readonly proxy: UpstreamProxy | null;
  retired: boolean;
}

/** Why a session was retired. */
export interface Retirement {
  /** The proxy's label (no credential). */
  proxy: string;
  reason: string;
}

/**
 * The sessions of one run.
 *
 * **Example usage:**
 * ```ts
 * const pool = new ProxySessionPool(group);          // group: the UpstreamProxy list, or null
 * const s = pool.current;                            // the session every request uses now
 * if (pool.retire(s, 'blocked by Cloudflare')) … // true: another session took over
 * ```
 */
export class ProxySessionPool {
  private readonly order: UpstreamProxy[];
  private index = 0;
  private exits = 0;
  private session: ProxySession;
  private readonly runId = Math.random().toString(36).slice(2, 8);
  readonly retirements: Retirement[] = [];

  /** @param group the run's proxies in the operator's order (the run starts at a random one), or null for direct. */
  constructor(group: readonly UpstreamProxy[] | null) {
    const list = group ?? [];
    const start = list.length ? Math.floor(Math.random() * list.length) : 0;
    this.order = [...list.slice(start), ...list.slice(0, start)];
    this.session = this.make();
  }

  private make(): ProxySession {
    const proxy = this.order[this.index] ?? null;
    return { id: `${this.runId}${this.exits++}`, proxy, retired: false };
  }

  /** The session requests use now. */
  get current(): ProxySession {
    return this.session;
  }

  /** Whether the run goes through proxies at all. */
  get proxied(): boolean {
    return this.order.length > 0;
  }

  /**
   * Retires `s` (once) and moves to the next session: the same `{session}` proxy's next exit, else the next proxy.
   * @returns whether a new session is current (false: none left, or the run is direct).
   */
  retire(s: ProxySession, reason: string): boolean {
    if (s !== this.session) return !this.session.retired;
    if (!s.proxy) return false;
    s.retired = true;
    this.retirements.push({ proxy: s.proxy.label, reason });
    const sameProxyAgain = s.proxy.perSession && this.exitsOf(s.proxy) < MAX_SESSIONS_PER_PROXY;
    if (!sameProxyAgain) this.index++;
    if (this.index >= this.order.length) return false;
    this.session = this.make();
    return true;
  }

  private exitsOf(proxy: UpstreamProxy): number {
    return this.retirements.filter((r) => r.proxy === proxy.label).length;
  }

  /** "2 proxy session(s) retired (Cloudflare challenge ×2)", or '' when none was. */
  summary(): string {
    if (!this.retirements.length) return '';
    const counts = new Map<string, number>();
    for (const r of this.retirements) counts.set(r.reason, (counts.get(r.reason) ?? 0) + 1);
    return `${this.retirements.length} proxy session(s) retired (${[...counts].map(([r, n]) => (n > 1 ? `${r} ×${n}` : r)).join(', ')})`;
  }
}
