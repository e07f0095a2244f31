/**
 * A small site on 127.0.0.1 for the tests of robots.txt, the pace, proxies and blocks: a listing of items with detail
 * pages, a robots.txt, and per-path answers a test sets; every request is recorded with its arrival time, so that a
 * test can read the gaps between requests to the host and which pages were loaded at all.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** An answer of the site: status, headers and body (HTML unless a content-type header says otherwise). */
export interface TrackedAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

/** One request the site received. */
export interface TrackedHit {
  path: string;
  /** Arrival, ms since the epoch. */
  at: number;
  headers: IncomingMessage['headers'];
  /** The address the request came from (an upstream proxy's bind address, say). */
  from: string;
}

/** A running tracked site. */
export interface TrackedSite {
  /** `http://127.0.0.1:<port>` */
  url: string;
  hits: TrackedHit[];
  /** Requests of one path so far. */
  count(path: string): number;
  /** Arrival times of the page requests (robots.txt and favicon left out), in order. */
  pageTimes(): number[];
  /** Sets the answer of a path (a function gets the nth request of that path, 1-based). */
  route(path: string, answer: TrackedAnswer | string | ((n: number, req: IncomingMessage) => TrackedAnswer | string)): void;
  close(): Promise<void>;
}

/** The listing page: `items` items, each a link to `/item/<i>` with a title. */
export function listingHtml(items: number, o: { title?: string } = {}): string {
  const lis = Array.from({ length: items }, (_, i) => `<li class="item"><a href="/item/${i + 1}">Item ${i + 1}</a></li>`).join('');
  return `<!doctype html><html><head><title>${o.title ?? 'Shop'}</title></head><body><ul>${lis}</ul></body></html>`;
}

/** A detail page with a `.sku` field. */
export function itemHtml(i: number): string {
  return `<!doctype html><html><head><title>Item ${i}</title></head><body><h1>Item ${i}</h1><p class="sku">SKU-${i}</p></body></html>`;
}

/**
 * Starts a site: `/shop/` lists `items` items (default 4), `/item/<i>` are their pages, `/robots.txt` is `robots`
 * (404 when absent); other paths 404 unless routed.
 */
export async function startTrackedSite(o: { items?: number; robots?: string } = {}): Promise<TrackedSite> {
  const hits: TrackedHit[] = [];
  const counts = new Map<string, number>();
  const routes = new Map<string, TrackedAnswer | string | ((n: number, req: IncomingMessage) => TrackedAnswer | string)>();
  const items = o.items ?? 4;
  routes.set('/shop/', listingHtml(items));
  for (let i = 1; i <= items; i++) routes.set(`/item/${i}`, itemHtml(i));
  if (o.robots !== undefined) routes.set('/robots.txt', { headers: { 'content-type': 'text/plain' }, body: o.robots });
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    hits.push({ path, at: Date.now(), headers: req.headers, from: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '') });
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    const route = routes.get(path);
    const resolved = typeof route === 'function' ? route(n, req) : route;
    const a: TrackedAnswer = resolved === undefined ? { status: 404, body: '<html><body><h1>Not found</h1></body></html>' } : typeof resolved === 'string' ? { body: resolved } : resolved;
    const body = Buffer.from(a.body);
    res.writeHead(a.status ?? 200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length), ...a.headers });
    res.end(body);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    count: (path) => counts.get(path) ?? 0,
    pageTimes: () => hits.filter((h) => h.path !== '/robots.txt' && h.path !== '/favicon.ico').map((h) => h.at),
    route: (path, answer) => { routes.set(path, answer); },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
  };
}

/** The gaps between consecutive times, ms. */
export function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}
