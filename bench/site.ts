// Generates the benchmark's static listing site into .bench/site/ from the real books.toscrape.com pages
// in the shared corpus (listings/books-toscrape-home.html and listings/books-toscrape-book.html):
//   catalogue/page-1.html … page-50.html   20 article.product_pod each, li.next a → the next page (none on 50)
//   index.html                              page 1 again, with root-relative links
//   catalogue/book-1/index.html … book-1000 the real detail template, with title, price, rating, UPC, description
// Titles, prices, ratings, UPCs and descriptions vary per book, deterministically (sha256 of the book number).
// Every page is 20–40 KB (asserted). The expected rows are written to .bench/site-manifest.json, outside the
// served root, so the runner can check every contender against the truth.
//
//   node bench/run.ts site [--force]
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as cheerio from 'cheerio';
import { MANIFEST_FILE, SITE_DIR, corpusDir } from './paths.ts';

export const LISTING_PAGES = 50;
export const ITEMS_PER_PAGE = 20;
export const BOOKS = LISTING_PAGES * ITEMS_PER_PAGE;
/** Smallest and largest page in bytes: at least 20 KiB and at most 40 KB, whichever way "KB" is read. */
export const MIN_PAGE_BYTES = 20 * 1024;
export const MAX_PAGE_BYTES = 40 * 1000;
/** Bump when the generated pages change, so cached sites are rebuilt. */
const GENERATOR_VERSION = 3;

export const RATINGS = ['One', 'Two', 'Three', 'Four', 'Five'] as const;

export interface Book {
  n: number;
  /** Path of the detail page from the site root, e.g. /catalogue/book-7/index.html. */
  path: string;
  title: string;
  price: number;
  rating: string;
  upc: string;
  description: string;
}

export interface Manifest {
  generator: number;
  templates: string;
  listingPages: number;
  books: Book[];
  sizes: { listing: [number, number]; detail: [number, number] };
}

export const listingPath = (page: number): string => `/catalogue/page-${page}.html`;
export const bookPath = (n: number): string => `/catalogue/book-${n}/index.html`;

const escText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escAttr = (s: string): string => escText(s).replace(/"/g, '&quot;');

/** sha256 of `<salt>:book-<n>`: the seed of everything that varies per book (the same on every machine). */
export function digest(n: number, salt: string): Buffer {
  return createHash('sha256').update(`${salt}:book-${n}`).digest();
}

/** Replaces exactly `count` occurrences (or fails: the template changed and the generator must be looked at). */
export function replaceExact(html: string, find: string | RegExp, by: string, count = 1): string {
  const re = typeof find === 'string' ? new RegExp(find.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : find;
  const found = html.match(re)?.length ?? 0;
  if (found !== count) throw new Error(`site template: expected ${count} × ${String(find)}, found ${found}`);
  return html.replace(re, () => by);
}

/** Rewrites the relative links of a page written for the site root to a page `depth` folders down. */
export function relink(html: string, depth: number): string {
  if (depth === 0) return html;
  const up = '../'.repeat(depth);
  return html.replace(/\b(href|src)="([^"]*)"/g, (m, attr: string, url: string) => {
    if (/^([a-z]+:|\/\/|\/|#)/i.test(url) || url === '') return m;
    // The real site keeps catalogue pages' links to catalogue/ relative to catalogue/ itself.
    if (depth === 1 && url.startsWith('catalogue/')) return `${attr}="${url.slice('catalogue/'.length)}"`;
    return `${attr}="${up}${url}"`;
  });
}

interface Templates {
  head: string;
  item: string;
  tail: string;
  baseTitles: string[];
  sidebar: string;
  book: string;
  bookDescription: string;
  hash: string;
}

function loadTemplates(): Templates {
  const dir = join(corpusDir(), 'listings');
  const home = readFileSync(join(dir, 'books-toscrape-home.html'), 'utf8');
  const book = readFileSync(join(dir, 'books-toscrape-book.html'), 'utf8');
  const hash = createHash('sha256').update(home).update(book).digest('hex').slice(0, 16);

  const olStart = home.indexOf('<ol class="row">');
  const olEnd = home.indexOf('</ol>');
  if (olStart < 0 || olEnd < 0) throw new Error('site template: no <ol class="row"> in books-toscrape-home.html');
  const head = home.slice(0, olStart + '<ol class="row">'.length) + '\n';
  const tail = '\n                ' + home.slice(olEnd);
  const items = home.slice(olStart + '<ol class="row">'.length, olEnd);
  const liStart = items.indexOf('<li class="col-xs-6');
  const liEnd = items.indexOf('</li>', liStart) + '</li>'.length;
  const item = '                        ' + items.slice(liStart, liEnd) + '\n\n';

  const $ = cheerio.load(home);
  const baseTitles = $('article.product_pod h3 a')
    .map((_, a) => $(a).attr('title') ?? '')
    .get();
  if (baseTitles.length !== ITEMS_PER_PAGE) throw new Error(`site template: ${baseTitles.length} product_pod titles`);

  const asideStart = home.indexOf('<aside class="sidebar');
  const asideEnd = home.indexOf('</aside>') + '</aside>'.length;
  const sidebar = home.slice(asideStart, asideEnd);

  const $b = cheerio.load(book);
  const bookDescription = $b('#product_description + p').text().trim();
  if (!bookDescription) throw new Error('site template: no #product_description + p in books-toscrape-book.html');
  return { head, item, tail, baseTitles, sidebar, book, bookDescription, hash };
}

function makeBook(n: number, t: Templates): Book {
  const d = digest(n, 'data');
  const base = t.baseTitles[(n - 1) % t.baseTitles.length]!;
  const title = `${base} (No. ${n})`;
  const price = (1000 + (d.readUInt32BE(0) % 5000)) / 100; // £10.00 – £59.99
  const rating = RATINGS[d[4]! % RATINGS.length]!;
  const upc = digest(n, 'upc').toString('hex').slice(0, 16);
  // The real description, its sentences rotated per book and given once to three times (real ones vary as much).
  const sentences = t.bookDescription.split(/(?<=[.?!])\s+/);
  const k = n % sentences.length;
  const rotated = [...sentences.slice(k), ...sentences.slice(0, k)].join(' ');
  const description = [`${title}.`, ...Array.from({ length: 1 + (d[5]! % 3) }, () => rotated)].join(' ');
  return { n, path: bookPath(n), title, price, rating, upc, description };
}

export const money = (p: number): string => `£${p.toFixed(2)}`;
/** The listing's shortened title, as books.toscrape.com shows it ("A Light in the ..."). */
export const shortTitle = (s: string): string => (s.length > 25 ? `${s.slice(0, 20).replace(/\s+\S*$/, '')} ...` : s);

function listingPage(page: number, books: Book[], t: Templates, depth: number): string {
  const first = (page - 1) * ITEMS_PER_PAGE;
  let head = replaceExact(
    t.head,
    '<strong>1000</strong> results - showing <strong>1</strong> to <strong>20</strong>.',
    `<strong>${BOOKS}</strong> results - showing <strong>${first + 1}</strong> to <strong>${first + ITEMS_PER_PAGE}</strong>.`,
  );
  if (page > 1) head = replaceExact(head, '<title>\n    All products |', `<title>\n    All products | Page ${page} |`);
  const items = books.slice(first, first + ITEMS_PER_PAGE).map((b) => {
    const d = digest(b.n, 'img').toString('hex');
    let li = t.item;
    li = replaceExact(li, 'catalogue/a-light-in-the-attic_1000/index.html', `catalogue/book-${b.n}/index.html`, 2);
    li = replaceExact(li, /media\/cache\/[0-9a-f/]+\.jpg/g, `media/cache/${d.slice(0, 2)}/${d.slice(2, 4)}/${d.slice(0, 32)}.jpg`);
    li = replaceExact(li, 'alt="A Light in the Attic"', `alt="${escAttr(b.title)}"`);
    li = replaceExact(li, 'star-rating Three', `star-rating ${b.rating}`);
    li = replaceExact(li, 'title="A Light in the Attic">A Light in the ...</a>', `title="${escAttr(b.title)}">${escText(shortTitle(b.title))}</a>`);
    li = replaceExact(li, '£51.77', money(b.price));
    return li;
  });
  let pager = `Page ${page} of ${LISTING_PAGES}`;
  let tail = replaceExact(t.tail, 'Page 1 of 50', pager);
  pager = '';
  if (page > 1) pager += `<li class="previous"><a href="catalogue/page-${page - 1}.html">previous</a></li>\n\n                `;
  if (page < LISTING_PAGES) pager += `<li class="next"><a href="catalogue/page-${page + 1}.html">next</a></li>`;
  tail = replaceExact(tail, '<li class="next"><a href="catalogue/page-2.html">next</a></li>', pager);
  return relink(head + items.join('') + tail, depth);
}

function detailPage(b: Book, t: Templates): string {
  let html = t.book;
  html = replaceExact(html, '<title>\n    A Light in the Attic |', `<title>\n    ${escText(b.title)} |`);
  html = replaceExact(html, /<meta name="description" content="[^"]*" \/>/g, `<meta name="description" content="\n    ${escAttr(b.description)}\n" />`);
  html = replaceExact(html, '<li class="active">A Light in the Attic</li>', `<li class="active">${escText(b.title)}</li>`);
  html = replaceExact(html, 'alt="A Light in the Attic"', `alt="${escAttr(b.title)}"`);
  html = replaceExact(html, '<h1>A Light in the Attic</h1>', `<h1>${escText(b.title)}</h1>`);
  html = replaceExact(html, '£51.77', money(b.price), 3);
  html = replaceExact(html, 'star-rating Three', `star-rating ${b.rating}`);
  html = replaceExact(html, 'a897fe39b1053632', b.upc);
  html = replaceExact(html, 'a-light-in-the-attic_1000', `book-${b.n}`, 2);
  const stock = 1 + (digest(b.n, 'stock')[0]! % 30);
  html = replaceExact(html, 'In stock (22 available)', `In stock (${stock} available)`, 2);
  html = replaceExact(html, /<\/div>\n\s*<p>[^<]*<\/p>/g, `</div>\n        <p>${escText(b.description)}</p>`);
  // Padding with realistic markup: the real category sidebar of the listing pages, before the content.
  html = replaceExact(
    html,
    '<div class="content">',
    `<div class="row">\n${relink(t.sidebar, 2)}\n</div>\n                <div class="content">`,
  );
  return html;
}

/** Writes a file (folders made as needed); returns its size in bytes. */
export function write(file: string, data: string | Buffer): number {
  mkdirSync(dirname(file), { recursive: true });
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  writeFileSync(file, buf);
  return buf.length;
}

function checkSize(kind: string, name: string, size: number): void {
  if (size < MIN_PAGE_BYTES || size > MAX_PAGE_BYTES) {
    throw new Error(`site: ${kind} page ${name} is ${size} bytes, outside ${MIN_PAGE_BYTES}–${MAX_PAGE_BYTES}`);
  }
}

export function generateSite(): Manifest {
  const t = loadTemplates();
  rmSync(SITE_DIR, { recursive: true, force: true });
  const books = Array.from({ length: BOOKS }, (_, i) => makeBook(i + 1, t));
  const listing: number[] = [];
  for (let p = 1; p <= LISTING_PAGES; p++) {
    const size = write(join(SITE_DIR, listingPath(p)), listingPage(p, books, t, 1));
    checkSize('listing', listingPath(p), size);
    listing.push(size);
  }
  checkSize('listing', '/index.html', write(join(SITE_DIR, 'index.html'), listingPage(1, books, t, 0)));
  const detail: number[] = [];
  for (const b of books) {
    const size = write(join(SITE_DIR, b.path), detailPage(b, t));
    checkSize('detail', b.path, size);
    detail.push(size);
  }
  write(join(SITE_DIR, 'robots.txt'), 'User-agent: *\nDisallow:\n');
  const manifest: Manifest = {
    generator: GENERATOR_VERSION,
    templates: t.hash,
    listingPages: LISTING_PAGES,
    books,
    sizes: { listing: [Math.min(...listing), Math.max(...listing)], detail: [Math.min(...detail), Math.max(...detail)] },
  };
  writeFileSync(MANIFEST_FILE, JSON.stringify(manifest));
  return manifest;
}

/** The cached site when it is complete and was made by this generator from the same templates, else undefined. */
export function cachedSite(): Manifest | undefined {
  if (!existsSync(MANIFEST_FILE)) return undefined;
  try {
    const m = JSON.parse(readFileSync(MANIFEST_FILE, 'utf8')) as Manifest;
    if (m.generator !== GENERATOR_VERSION || m.books?.length !== BOOKS) return undefined;
    if (m.templates !== loadTemplates().hash) return undefined;
    const files = [join(SITE_DIR, 'index.html')];
    for (let p = 1; p <= LISTING_PAGES; p++) files.push(join(SITE_DIR, listingPath(p)));
    for (const b of m.books) files.push(join(SITE_DIR, b.path));
    for (const f of files) {
      if (!existsSync(f)) return undefined;
      const size = statSync(f).size;
      if (size < MIN_PAGE_BYTES || size > MAX_PAGE_BYTES) return undefined;
    }
    return m;
  } catch {
    return undefined;
  }
}

export function ensureSite(force = false): { manifest: Manifest; cached: boolean } {
  const cached = force ? undefined : cachedSite();
  if (cached) return { manifest: cached, cached: true };
  return { manifest: generateSite(), cached: false };
}

export async function main(args: string[]): Promise<number> {
  const t0 = performance.now();
  const { manifest, cached } = ensureSite(args.includes('--force'));
  const { listing, detail } = manifest.sizes;
  console.log(
    `site ${cached ? 'up to date' : 'generated'} in ${SITE_DIR} (${((performance.now() - t0) / 1000).toFixed(2)} s): ` +
      `${manifest.listingPages} listing pages of ${listing[0]}–${listing[1]} bytes, ` +
      `${manifest.books.length} detail pages of ${detail[0]}–${detail[1]} bytes`,
  );
  return 0;
}
