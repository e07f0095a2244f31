// Generates the browser benchmark's script-rendered site into .bench/browser-site/ from the real
// books.toscrape.com pages of the shared corpus (listings/books-toscrape-home.html, listings/books-toscrape-book.html):
//   catalogue/page-1.html … page-20.html   HTML shells with an empty <ol class="row"> and an empty pager; an inline
//                                           script fetches ../data/page-N.json and renders 10 article.product_pod
//                                           items (the real item markup: h3 a, p.price_color, p.star-rating, 3 <img>
//                                           each) and the pager (li.next a → the next page; none on page 20)
//   catalogue/book-1/index.html … book-200 HTML shells with an empty <article class="product_page">; an inline script
//                                           fetches ../../data/book-K.json and renders the real product markup
//                                           (h1, p.price_color, p.star-rating, the product table with the UPC first,
//                                           #product_description + p) with a 4-image gallery
//   data/page-N.json, data/book-K.json      what the scripts render
//   media/cache/xx/yy/<hash>.jpg            1,400 distinct real JPEG files of 5–20 KB (600 on listing pages, 800 on
//                                           detail pages), drawn on a canvas in Chromium and encoded by its JPEG
//                                           encoder (so generating needs the same Chromium as the bench)
// The corpus pages' stylesheets and scripts (not in the corpus) and the jQuery CDN script are left out: the only
// subresources of a page are its JSON file and its images.
//
// A second shape of the same site, .bench/browser-site-assets/ (`--shape assets` of the bench), has what real sites
// carry on top: every page links a stylesheet with three web fonts (@font-face; Debian's DejaVu TTFs when the
// machine has them, else random bytes) and loads a synchronous vendor script in its <head> (about 120 KB that
// builds and sorts a table at load, as a UI library does), and every image is `loading="lazy"`. Its data and
// media folders are links to the first site's. Titles, prices, ratings, UPCs and descriptions vary per
// book, deterministically (sha256 of the book number). The expected rows go to .bench/browser-site-manifest.json,
// outside the served root. The site is regenerated only when the generator or the corpus pages change.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as cheerio from 'cheerio';
import { OUT_DIR, corpusDir } from './paths.ts';
import { type Book, RATINGS, bookPath, digest, listingPath, money, relink, replaceExact, shortTitle, write } from './site.ts';

export const BROWSER_SITE_DIR = join(OUT_DIR, 'browser-site');
export const BROWSER_MANIFEST_FILE = join(OUT_DIR, 'browser-site-manifest.json');
/** The `assets` shape: the same pages with a stylesheet, web fonts, a synchronous vendor script and lazy images. */
export const BROWSER_ASSETS_SITE_DIR = join(OUT_DIR, 'browser-site-assets');
export const LISTING_PAGES = 20;
export const ITEMS_PER_PAGE = 10;
export const BOOKS = LISTING_PAGES * ITEMS_PER_PAGE;
/** Images per listing item (the cover and two previews) and per detail page (a 4-image gallery). */
export const IMAGES_PER_ITEM = 3;
export const IMAGES_PER_DETAIL = 4;
export const MIN_IMAGE_BYTES = 5 * 1024;
export const MAX_IMAGE_BYTES = 20 * 1000;
/** Bump when the generated files change, so cached sites are rebuilt. */
const GENERATOR_VERSION = 4;

/** A book of the browser site: the same fields as the engine bench's. */
export type BrowserBook = Book;

export interface BrowserManifest {
  generator: number;
  templates: string;
  listingPages: number;
  books: BrowserBook[];
  /** Every file the site serves, from the root (pages, JSON, images), for the warm-up and the cache check. */
  files: { pages: string[]; data: string[]; images: string[]; assets: string[] };
  sizes: { listing: [number, number]; detail: [number, number]; data: [number, number]; image: [number, number]; imagesTotal: number };
}

export { bookPath, listingPath };


/** Seeds per book, apart from the engine bench site's. */
const bookDigest = (n: number, salt: string): Buffer => digest(n, `browser-${salt}`);


/** Drops the corpus page's stylesheets, favicon and scripts (jQuery from a CDN, Bootstrap, Oscar): not served here. */
function stripAssets(html: string): string {
  let out = html
    .replace(/[ \t]*<link rel="(stylesheet|shortcut icon)"[^>]*>\n?/g, '')
    .replace(/[ \t]*<script[^>]*\bsrc="[^"]*"[^>]*><\/script>\n?/g, '')
    .replace(/[ \t]*<script>window\.jQuery[^\n]*<\/script>\n?/g, '')
    .replace(/[ \t]*<script type="text\/javascript">\s*\$\(function\(\) \{[\s\S]*?<\/script>\n?/g, '');
  // The html5shim script inside an IE-only conditional comment stays: a comment to every browser today.
  if (/<script[^>]*\bsrc=/.test(out.replace(/<!--[\s\S]*?-->/g, ''))) throw new Error('browser site template: a script file is left');
  return out;
}

interface Templates {
  listingHead: string;
  listingTail: string;
  item: string;
  baseTitles: string[];
  sidebar: string;
  detailHead: string;
  detailArticle: string;
  detailTail: string;
  bookDescription: string;
  hash: string;
}

/** Marks a placeholder in a render template: the page's script replaces `@@name@@`. */
const ph = (name: string): string => `@@${name}@@`;

function loadTemplates(): Templates {
  const dir = join(corpusDir(), 'listings');
  const home = readFileSync(join(dir, 'books-toscrape-home.html'), 'utf8');
  const book = readFileSync(join(dir, 'books-toscrape-book.html'), 'utf8');
  const hash = createHash('sha256').update(home).update(book).digest('hex').slice(0, 16);

  // ---- listing: the page up to <ol class="row">, the first item as the item template, the rest ----
  const olStart = home.indexOf('<ol class="row">');
  const olEnd = home.indexOf('</ol>');
  if (olStart < 0 || olEnd < 0) throw new Error('browser site template: no <ol class="row"> in books-toscrape-home.html');
  const listingHead = home.slice(0, olStart + '<ol class="row">'.length);
  let listingTail = home.slice(olEnd);
  listingTail = replaceExact(listingTail, /<ul class="pager">[\s\S]*?<\/ul>/g, '<ul class="pager"></ul>');
  const items = home.slice(olStart + '<ol class="row">'.length, olEnd);
  const liStart = items.indexOf('<li class="col-xs-6');
  const liEnd = items.indexOf('</li>', liStart) + '</li>'.length;
  let item = items.slice(liStart, liEnd);
  item = replaceExact(item, 'catalogue/a-light-in-the-attic_1000/index.html', ph('href'), 2);
  item = replaceExact(item, /src="media\/cache\/[0-9a-f/]+\.jpg"/g, `src="${ph('img')}"`);
  item = replaceExact(item, 'class="thumbnail"></a>', `class="thumbnail"></a>${ph('previews')}`);
  item = replaceExact(item, 'alt="A Light in the Attic"', `alt="${ph('title')}"`);
  item = replaceExact(item, 'star-rating Three', `star-rating ${ph('rating')}`);
  item = replaceExact(item, 'title="A Light in the Attic">A Light in the ...</a>', `title="${ph('title')}">${ph('short')}</a>`);
  item = replaceExact(item, '£51.77', ph('price'));

  const $ = cheerio.load(home);
  const baseTitles = $('article.product_pod h3 a').map((_, a) => $(a).attr('title') ?? '').get();
  if (baseTitles.length < ITEMS_PER_PAGE) throw new Error(`browser site template: ${baseTitles.length} product_pod titles`);
  const asideStart = home.indexOf('<aside class="sidebar');
  const asideEnd = home.indexOf('</aside>') + '</aside>'.length;
  const sidebar = home.slice(asideStart, asideEnd);

  // ---- detail: the page around <article class="product_page">, the article as the render template ----
  const $b = cheerio.load(book);
  const bookDescription = $b('#product_description + p').text().trim();
  if (!bookDescription) throw new Error('browser site template: no #product_description + p in books-toscrape-book.html');
  const aStart = book.indexOf('<article class="product_page">');
  const aEnd = book.indexOf('</article>');
  if (aStart < 0 || aEnd < 0) throw new Error('browser site template: no <article class="product_page"> in books-toscrape-book.html');
  let detailHead = book.slice(0, aStart + '<article class="product_page">'.length);
  let detailArticle = book.slice(aStart + '<article class="product_page">'.length, aEnd);
  const detailTail = book.slice(aEnd);
  detailHead = replaceExact(detailHead, '<title>\n    A Light in the Attic |', '<title>\n   ');
  detailHead = replaceExact(detailHead, /<meta name="description" content="[^"]*" \/>\n/g, '');
  detailHead = replaceExact(detailHead, '<li class="active">A Light in the Attic</li>', '<li class="active"></li>');
  detailHead = replaceExact(detailHead, '<div class="content">', `<div class="row">\n${sidebar.replace(/\b(href|src)="(?!([a-z]+:|\/\/|\/|#))([^"]*)"/gi, '$1="../../$3"')}\n</div>\n                <div class="content">`);
  detailArticle = replaceExact(detailArticle, /<div class="item active">[\s\S]*?<\/div>/g, ph('gallery'));
  detailArticle = replaceExact(detailArticle, '<h1>A Light in the Attic</h1>', `<h1>${ph('title')}</h1>`);
  detailArticle = replaceExact(detailArticle, '£51.77', ph('price'), 3);
  detailArticle = replaceExact(detailArticle, 'star-rating Three', `star-rating ${ph('rating')}`);
  detailArticle = replaceExact(detailArticle, 'a897fe39b1053632', ph('upc'));
  detailArticle = replaceExact(detailArticle, 'a-light-in-the-attic_1000', ph('slug'), 2);
  detailArticle = replaceExact(detailArticle, 'In stock (22 available)', `In stock (${ph('stock')} available)`, 2);
  detailArticle = replaceExact(detailArticle, /<\/div>\n\s*<p>[^<]*<\/p>/g, `</div>\n        <p>${ph('description')}</p>`);
  return {
    listingHead: stripAssets(listingHead), listingTail: stripAssets(listingTail), item, baseTitles, sidebar,
    detailHead: stripAssets(detailHead), detailArticle, detailTail: stripAssets(detailTail), bookDescription, hash,
  };
}

function makeBook(n: number, t: Templates): BrowserBook {
  const d = bookDigest(n, 'data');
  const title = `${t.baseTitles[(n - 1) % t.baseTitles.length]!} (No. ${n})`;
  const price = (1000 + (d.readUInt32BE(0) % 5000)) / 100; // £10.00 – £59.99
  const rating = RATINGS[d[4]! % RATINGS.length]!;
  const upc = bookDigest(n, 'upc').toString('hex').slice(0, 16);
  const sentences = t.bookDescription.split(/(?<=[.?!])\s+/);
  const k = n % sentences.length;
  const rotated = [...sentences.slice(k), ...sentences.slice(0, k)].join(' ');
  const description = [`${title}.`, ...Array.from({ length: 1 + (d[5]! % 3) }, () => rotated)].join(' ');
  return { n, path: bookPath(n), title, price, rating, upc, description };
}


/** An image of the site: its path from the root, its size in pixels, its seed. */
interface ImageSpec { path: string; w: number; h: number; seed: number; label: string }

function imageSpec(n: number, slot: string, w: number, h: number, label: string): ImageSpec {
  const d = bookDigest(n, `img-${slot}`);
  const hex = d.toString('hex');
  return { path: `/media/cache/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex.slice(0, 32)}.jpg`, w, h, seed: d.readUInt32BE(0), label };
}

/** The inline script of a page: fetch the JSON, fill the templates (values escaped in the page), insert. */
function renderScript(kind: 'listing' | 'detail', dataUrl: string, templates: Record<string, string>): string {
  const json = JSON.stringify(templates).replace(/<\//g, '<\\/');
  const body = kind === 'listing'
    ? `var ol = document.querySelector('ol.row');
      ol.innerHTML = d.items.map(function (it) {
        var previews = it.previews.map(function (p) { return '<img src="' + esc(p) + '" alt="" class="thumbnail preview">'; }).join('');
        return fill(T.item, { href: esc(it.href), img: esc(it.img), previews: previews, title: esc(it.title), short: esc(it.short), rating: esc(it.rating), price: esc(it.price) });
      }).join('');
      var pager = '';
      if (d.previous) pager += '<li class="previous"><a href="' + esc(d.previous) + '">previous</a></li>';
      pager += '<li class="current">Page ' + d.page + ' of ' + d.pages + '</li>';
      if (d.next) pager += '<li class="next"><a href="' + esc(d.next) + '">next</a></li>';
      document.querySelector('ul.pager').innerHTML = pager;`
    : `var gallery = d.images.map(function (src, i) { return '<div class="item' + (i ? '' : ' active') + '"><img src="' + esc(src) + '" alt="' + esc(d.title) + '" /></div>'; }).join('');
      document.querySelector('article.product_page').innerHTML = fill(T.article, { gallery: gallery, title: esc(d.title), price: esc(d.price), rating: esc(d.rating), upc: esc(d.upc), slug: esc(d.slug), stock: esc(String(d.stock)), description: esc(d.description) });
      document.querySelector('ul.breadcrumb li.active').textContent = d.title;
      document.title = d.title + ' | Books to Scrape - Sandbox';`;
  return `<script>
  (function () {
    var T = ${json};
    var ENT = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
    function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return ENT[c]; }); }
    function fill(tpl, v) { return tpl.replace(/@@(\\w+)@@/g, function (_, k) { return v[k]; }); }
    fetch(${JSON.stringify(dataUrl)}).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then(function (d) {
      ${body}
    });
  })();
</script>
`;
}

/** Draws and JPEG-encodes the images in Chromium (canvas, toDataURL), in batches. */
async function drawImages(specs: ImageSpec[]): Promise<Buffer[]> {
  const { launchBrowser } = await import('./contenders/browser-common.ts');
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    const out: Buffer[] = [];
    for (let i = 0; i < specs.length; i += 100) {
      const batch = specs.slice(i, i + 100);
      const urls = await page.evaluate((list: ImageSpec[], min: number, max: number) => {
        return list.map((s) => {
          let a = s.seed >>> 0;
          const rnd = (): number => {
            a = (a + 0x6d2b79f5) >>> 0;
            let t = a;
            t = Math.imul(t ^ (t >>> 15), t | 1);
            t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
            return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
          };
          const c = document.createElement('canvas');
          c.width = s.w;
          c.height = s.h;
          const g = c.getContext('2d')!;
          const grad = g.createLinearGradient(0, 0, s.w, s.h);
          grad.addColorStop(0, `hsl(${Math.floor(rnd() * 360)},60%,45%)`);
          grad.addColorStop(1, `hsl(${Math.floor(rnd() * 360)},50%,80%)`);
          g.fillStyle = grad;
          g.fillRect(0, 0, s.w, s.h);
          for (let k = 0; k < 12; k++) {
            g.fillStyle = `hsla(${Math.floor(rnd() * 360)},70%,50%,0.5)`;
            g.beginPath();
            g.arc(rnd() * s.w, rnd() * s.h, 5 + (rnd() * s.w) / 3, 0, 7);
            g.fill();
          }
          const img = g.getImageData(0, 0, s.w, s.h);
          for (let k = 0; k < img.data.length; k += 4) {
            const n = (rnd() - 0.5) * 40;
            img.data[k] += n;
            img.data[k + 1] += n;
            img.data[k + 2] += n;
          }
          g.putImageData(img, 0, 0);
          g.fillStyle = '#fff';
          g.font = `bold ${Math.round(s.w / 9)}px sans-serif`;
          g.fillText(s.label, 6, s.h - 12);
          // The first quality from 0.8 down (or up) whose file is within [min, max] bytes.
          let url = '';
          for (const q of [0.8, 0.7, 0.6, 0.5, 0.4, 0.9, 0.95]) {
            url = c.toDataURL('image/jpeg', q);
            const bytes = Math.floor(((url.length - url.indexOf(',') - 1) * 3) / 4);
            if (bytes >= min && bytes <= max) break;
          }
          return url;
        });
      }, batch, MIN_IMAGE_BYTES, MAX_IMAGE_BYTES);
      for (const u of urls) out.push(Buffer.from(u.slice(u.indexOf(',') + 1), 'base64'));
    }
    return out;
  } finally {
    await browser.close();
  }
}


const range = (xs: number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];

/** A deterministic pseudo-random byte stream (for the stand-in fonts when the machine has no TTF). */
function pseudoRandom(bytes: number, seed: string): Buffer {
  const chunks: Buffer[] = [];
  for (let i = 0; chunks.length * 32 < bytes; i++) chunks.push(createHash('sha256').update(`${seed}-${i}`).digest());
  return Buffer.concat(chunks).subarray(0, bytes);
}

/** The vendor script of the `assets` shape: ~120 KB of code that builds and sorts a table when it runs. */
function vendorScript(): string {
  const fns = Array.from({ length: 900 }, (_, i) => `  function f${i}(a, b) { var x = (a * ${(i * 7919) % 1000 + 1} + b) % ${(i * 104729) % 9973 + 7}; return x < 0 ? -x : x; }\n  registry['widget${i}'] = f${i};`).join('\n');
  return `/* vendor.js: a UI library's worth of code, generated for the benchmark; it runs synchronously in <head>. */
(function () {
  var registry = {};
${fns}
  var table = [];
  for (var i = 0; i < 50000; i++) table.push(registry['widget' + (i % 900)](i, 17));
  table.sort(function (a, b) { return a - b; });
  window.__vendorReady = table.length;
})();
`;
}

/** The stylesheet of the `assets` shape: three @font-face families and enough rules to style the pages. */
function siteCss(fonts: string[]): string {
  const faces = fonts.map((f, i) => `@font-face { font-family: "Bench${i}"; src: url("fonts/${f}") format("truetype"); font-display: swap; }`).join('\n');
  const rules = Array.from({ length: 600 }, (_, i) => `.c${i} > .d${i % 37}, .row .c${i}:hover { margin: ${i % 9}px ${i % 13}px; color: #${(i * 2654435761 >>> 8).toString(16).padStart(6, '0').slice(0, 6)}; }`).join('\n');
  return `${faces}\nbody { font-family: "Bench0", sans-serif; }\nh1, h3 { font-family: "Bench1", serif; }\n.price_color { font-family: "Bench2", monospace; }\n${rules}\n`;
}

/** Writes the `assets` shape of the site (see the file's comment). @returns the files it added beside the pages. */
function writeAssetsShape(pages: readonly string[]): string[] {
  const dir = BROWSER_ASSETS_SITE_DIR;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const d of ['data', 'media']) symlinkSync(join(BROWSER_SITE_DIR, d), join(dir, d), 'dir');
  const dejavu = '/usr/share/fonts/truetype/dejavu';
  const fonts = ['DejaVuSans.ttf', 'DejaVuSerif.ttf', 'DejaVuSansMono.ttf'];
  const assets: string[] = [];
  for (const [i, f] of fonts.entries()) {
    const src = join(dejavu, f);
    write(join(dir, 'static/fonts', f), existsSync(src) ? readFileSync(src) : pseudoRandom(60_000 + i * 10_000, f));
    assets.push(`/static/fonts/${f}`);
  }
  write(join(dir, 'static/site.css'), siteCss(fonts));
  write(join(dir, 'static/vendor.js'), vendorScript());
  assets.push('/static/site.css', '/static/vendor.js');
  for (const page of pages) {
    const prefix = '../'.repeat(page.split('/').length - 2);
    let html = readFileSync(join(BROWSER_SITE_DIR, page), 'utf8');
    html = replaceExact(html, '</head>', `    <link rel="stylesheet" href="${prefix}static/site.css">\n    <script src="${prefix}static/vendor.js"></script>\n</head>`);
    // Unquoted: the templates sit inside the render script's string literals.
    html = html.replaceAll('<img ', '<img loading=lazy ');
    write(join(dir, page), html);
  }
  return assets;
}

export async function generateBrowserSite(): Promise<BrowserManifest> {
  const t = loadTemplates();
  rmSync(BROWSER_SITE_DIR, { recursive: true, force: true });
  const root = BROWSER_SITE_DIR;
  const books = Array.from({ length: BOOKS }, (_, i) => makeBook(i + 1, t));
  const images: ImageSpec[] = [];
  const files: BrowserManifest['files'] = { pages: [], data: [], images: [], assets: [] };
  const listing: number[] = [];
  const detail: number[] = [];
  const data: number[] = [];

  const itemTemplate = t.item;
  for (let p = 1; p <= LISTING_PAGES; p++) {
    const first = (p - 1) * ITEMS_PER_PAGE;
    const items = books.slice(first, first + ITEMS_PER_PAGE).map((b) => {
      const cover = imageSpec(b.n, 'cover', 120, 180, `No. ${b.n}`);
      const previews = [imageSpec(b.n, 'preview-1', 100, 150, 'p. 1'), imageSpec(b.n, 'preview-2', 100, 150, 'p. 2')];
      images.push(cover, ...previews);
      return {
        href: `book-${b.n}/index.html`,
        img: `..${cover.path}`,
        previews: previews.map((s) => `..${s.path}`),
        title: b.title,
        short: shortTitle(b.title),
        rating: b.rating,
        price: money(b.price),
      };
    });
    const json = { page: p, pages: LISTING_PAGES, total: BOOKS, items, previous: p > 1 ? `page-${p - 1}.html` : null, next: p < LISTING_PAGES ? `page-${p + 1}.html` : null };
    data.push(write(join(root, `data/page-${p}.json`), JSON.stringify(json)));
    files.data.push(`/data/page-${p}.json`);
    let head = replaceExact(
      t.listingHead,
      '<strong>1000</strong> results - showing <strong>1</strong> to <strong>20</strong>.',
      `<strong>${BOOKS}</strong> results - showing <strong>${first + 1}</strong> to <strong>${first + ITEMS_PER_PAGE}</strong>.`,
    );
    if (p > 1) head = replaceExact(head, '<title>\n    All products |', `<title>\n    All products | Page ${p} |`);
    // Relinked before the script goes in: the script's own href/src strings are already right for catalogue/.
    const html = replaceExact(relink(`${head}${t.listingTail}`, 1), '</body>', `${renderScript('listing', `../data/page-${p}.json`, { item: itemTemplate })}</body>`);
    listing.push(write(join(root, listingPath(p)), html));
    files.pages.push(listingPath(p));
  }

  const article = t.detailArticle;
  for (const b of books) {
    const main = imageSpec(b.n, 'main', 200, 300, `No. ${b.n}`);
    const gallery = [1, 2, 3].map((i) => imageSpec(b.n, `gallery-${i}`, 120, 180, `${b.n}/${i}`));
    images.push(main, ...gallery);
    const json = {
      title: b.title, price: money(b.price), rating: b.rating, upc: b.upc, slug: `book-${b.n}`,
      stock: 1 + (bookDigest(b.n, 'stock')[0]! % 30), description: b.description,
      images: [main, ...gallery].map((s) => `../..${s.path}`),
    };
    data.push(write(join(root, `data/book-${b.n}.json`), JSON.stringify(json)));
    files.data.push(`/data/book-${b.n}.json`);
    const tail = replaceExact(t.detailTail, '</body>', `${renderScript('detail', `../../data/book-${b.n}.json`, { article })}</body>`);
    detail.push(write(join(root, b.path), `${t.detailHead}${tail}`));
    files.pages.push(b.path);
  }

  const jpegs = await drawImages(images);
  const imageSizes = images.map((s, i) => {
    const buf = jpegs[i]!;
    if (buf[0] !== 0xff || buf[1] !== 0xd8 || buf[2] !== 0xff) throw new Error(`browser site: ${s.path} is not a JPEG`);
    if (buf.length < MIN_IMAGE_BYTES || buf.length > MAX_IMAGE_BYTES) throw new Error(`browser site: ${s.path} is ${buf.length} bytes, outside ${MIN_IMAGE_BYTES}–${MAX_IMAGE_BYTES}`);
    files.images.push(s.path);
    return write(join(root, s.path), buf);
  });
  write(join(root, 'robots.txt'), 'User-agent: *\nDisallow:\n');
  files.assets = writeAssetsShape(files.pages);

  const manifest: BrowserManifest = {
    generator: GENERATOR_VERSION,
    templates: t.hash,
    listingPages: LISTING_PAGES,
    books,
    files,
    sizes: { listing: range(listing), detail: range(detail), data: range(data), image: range(imageSizes), imagesTotal: imageSizes.reduce((a, b) => a + b, 0) },
  };
  writeFileSync(BROWSER_MANIFEST_FILE, JSON.stringify(manifest));
  return manifest;
}

/** The cached site when it is complete and was made by this generator from the same templates, else undefined. */
export function cachedBrowserSite(): BrowserManifest | undefined {
  if (!existsSync(BROWSER_MANIFEST_FILE)) return undefined;
  try {
    const m = JSON.parse(readFileSync(BROWSER_MANIFEST_FILE, 'utf8')) as BrowserManifest;
    if (m.generator !== GENERATOR_VERSION || m.books?.length !== BOOKS) return undefined;
    if (m.templates !== loadTemplates().hash) return undefined;
    for (const f of [...m.files.pages, ...m.files.data, ...m.files.images]) {
      const file = join(BROWSER_SITE_DIR, f);
      if (!existsSync(file) || statSync(file).size === 0) return undefined;
    }
    for (const f of [...m.files.pages, ...m.files.assets]) {
      if (!existsSync(join(BROWSER_ASSETS_SITE_DIR, f))) return undefined;
    }
    return m;
  } catch {
    return undefined;
  }
}

export async function ensureBrowserSite(force = false): Promise<{ manifest: BrowserManifest; cached: boolean }> {
  const cached = force ? undefined : cachedBrowserSite();
  if (cached) return { manifest: cached, cached: true };
  return { manifest: await generateBrowserSite(), cached: false };
}
