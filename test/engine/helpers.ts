/**
 * Helpers for the engine tests: running a YAML config against loopback, a tiny inline HTTP server for
 * pages the fixture site does not have, error-code assertions, and an independent reading of the fixture's
 * books home page (plain regexes over its HTML, not the engine) to compare the engine's rows with.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runLightweight as runConfig, type LightweightOptions as RunOptions, type CrawlResult as RunResult } from '../../lambdas/engine/engines.ts';
import { bookshopPage } from '../fixtures/site/books.ts';
import { decodeEntities } from '../fixtures/site/http.ts';

/**
 * The books config of the fixture's books site (/books/): title, link, price, rating and image from the listing, UPC
 * and description from each detail page; `rest` is appended (pagination, output).
 */
export const BOOK_CONFIG = (url: string, rest = '') => `version: "2.0"
name: Books with UPC
target:
  url: ${url}
  engine: lightweight
extract:
  container: article.product_pod
  fields:
    - { name: title, selector: h3 a, type: attribute, attribute: title }
    - { name: url, selector: h3 a, type: link }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number] }
    - { name: rating, selector: p.star-rating, type: attribute, attribute: class, transform: ["replace:star-rating:", strip] }
    - { name: image, selector: img, type: image_url }
detail_fields:
  fields:
    - { name: upc, selector: "table tr:first-child td" }
    - { name: description, selector: "#product_description + p", transform: [strip] }
${rest}`;

/** The guard allowlist that lets the engine reach the loopback fixture servers (and nothing else). */
export const LOOPBACK: Pick<RunOptions, 'outbound'> = { outbound: { allow: ['127.0.0.0/8'] } };

/** Parses and runs a config with the lightweight engine, loopback allowed. */
export function runYaml(yaml: string, options: RunOptions = {}): Promise<RunResult> {
  return runConfig(parseConfig(yaml), { ...LOOPBACK, ...options });
}

/** Asserts that `promise` rejects with an error carrying `code` (and a message matching `message`). */
export async function rejectsWithCode(promise: Promise<unknown>, code: string, message?: RegExp): Promise<Error & { code: string; details?: unknown[] }> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof Error, `expected a rejection with code ${code}, got ${caught === undefined ? 'a resolved promise' : String(caught)}`);
  const err = caught as Error & { code: string; details?: unknown[] };
  assert.equal(err.code, code, `code of: ${err.message}`);
  if (message) assert.match(err.message, message);
  return err;
}

/** A page the inline server answers with. */
export interface InlinePage {
  status?: number;
  type?: string;
  /** Extra response headers (e.g. `location` of a redirect). */
  headers?: Record<string, string>;
  body: string;
}

/** A running inline server. */
export interface InlineServer {
  /** Base URL without a trailing slash. */
  url: string;
  /** Requests per path+query. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/**
 * Serves fixed pages on 127.0.0.1 (a free port). `pages` maps a path to a page or to a function of the
 * server's base URL (for pages that link to themselves); unknown paths answer 404.
 */
export async function serveInline(pages: Record<string, InlinePage | string | ((base: string) => InlinePage | string)>): Promise<InlineServer> {
  const hits = new Map<string, number>();
  const sockets = new Set<Socket>();
  let base = '';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const entry = pages[path];
    const resolved = typeof entry === 'function' ? entry(base) : entry;
    const page: InlinePage = resolved === undefined
      ? { status: 404, body: '<html><body><h1>404</h1></body></html>' }
      : typeof resolved === 'string' ? { body: resolved } : resolved;
    const body = Buffer.from(page.body, 'utf8');
    res.writeHead(page.status ?? 200, { 'Content-Type': page.type ?? 'text/html; charset=utf-8', 'Content-Length': String(body.length), ...page.headers });
    res.end(body);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  base = `http://127.0.0.1:${address.port}`;
  return {
    url: base,
    hits,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
  };
}

/** One product of the fixture's books home page, read with plain regexes. */
export interface PodExpectation {
  title: string;
  href: string;
  /** The price as the page writes it, e.g. "£51.20". */
  priceText: string;
  rating: string;
  imgSrc: string;
  /** `<i class="icon-star">` elements in the product's star-rating paragraph. */
  stars: number;
  inStock: boolean;
  /** The text of the h3 link (truncated titles end with "..."). */
  linkText: string;
}

/** The fixture's books home page (/books/), as served. */
export function booksHomeHtml(): string {
  return bookshopPage('/books/')!;
}

/** The products of the books home page (/books/), in page order, without cheerio. */
export function homePods(): PodExpectation[] {
  const html = booksHomeHtml();
  return html.split('<article class="product_pod">').slice(1).map((chunk) => {
    const pod = chunk.slice(0, chunk.indexOf('</article>'));
    const one = (re: RegExp): string => {
      const m = re.exec(pod);
      assert.ok(m?.[1] !== undefined, `book pod without ${re}`);
      return m[1];
    };
    const ratingBlock = one(/(<p class="star-rating [\s\S]*?<\/p>)/);
    return {
      title: decodeEntities(one(/<h3><a [^>]*title="([^"]*)"/)),
      href: one(/<h3><a href="([^"]+)"/),
      priceText: one(/<p class="price_color">([^<]*)<\/p>/),
      rating: one(/class="star-rating (\w+)"/),
      imgSrc: one(/<img src="([^"]+)"/),
      stars: (ratingBlock.match(/class="icon-star"/g) ?? []).length,
      inStock: /class="instock availability">\s*<i class="icon-ok">/.test(pod),
      linkText: decodeEntities(one(/<h3><a [^>]*>([^<]*)<\/a>/)),
    };
  });
}

/** A name key that ignores spacing, punctuation and accents ("Renée Duval" = "Renee-Duval"). */
export function nameKey(name: string): string {
  return name.normalize('NFD').replace(/[^A-Za-z]/g, '').toLowerCase();
}

/** "£51.20" -> 51.2, by hand: the pound sign off, the rest a plain decimal. */
export function poundsToNumber(text: string): number {
  const m = /^£(\d+\.\d{2})$/.exec(text);
  assert.ok(m, `not a £NN.NN price: ${text}`);
  return Number(m[1]);
}
