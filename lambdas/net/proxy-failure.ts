/**
 * Telling a failure of the upstream proxy from one of the target, without Node's modules: the crawler
 * (lambdas/engine/crawl/access.ts), which the browser extension bundles too, asks it of any error; ./tunnel.ts, whose
 * ProxyFailure sets `proxyFailure`, re-exports it.
 */

/** Whether an error is a failure of the upstream proxy (its connection, its credentials, its refusal). */
export function isProxyFailure(err: unknown): boolean {
  for (let e = err as { proxyFailure?: unknown; cause?: unknown } | undefined, d = 0; e && d < 4; e = e.cause as typeof e, d++) if (e.proxyFailure === true) return true;
  return false;
}
