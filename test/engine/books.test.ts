/**
 * The lightweight engine over the fixture books site (a books.toscrape.com look-alike over the fixture's catalogue):
 * the listing with detail pages (the acceptance line), pagination over the catalogue pages with
 * shared detail pages, and deduplication of the rows that repeat. Expected values come from
 * bookDetails() (the fixture's catalogue) and from the home page's HTML read with plain regexes.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { bookDetails, CATALOGUE_PAGES } from '../fixtures/site/books.ts';
import { BOOK_CONFIG, homePods, poundsToNumber, runYaml } from './helpers.ts';


describe('books site', () => {
  let site: FixtureSite;
  before(async () => { site = await startFixtureSite(); });
  after(async () => { await site.close(); });
  beforeEach(() => { site.hits.clear(); });

  it('/books/ with detail_fields: 20 rows with title, absolute link, price, rating; UPC and description from each detail page', async () => {
    const r = await runYaml(BOOK_CONFIG(`${site.url}/books/`));
    const books = bookDetails();
    const pods = homePods();
    assert.equal(books.length, 20);
    assert.equal(r.rows.length, 20);
    r.rows.forEach((row, i) => {
      const b = books[i]!;
      const pod = pods[i]!;
      assert.deepEqual(row, {
        title: b.title,
        url: `${site.url}/books/catalogue/${b.slug}/index.html`,
        price: b.price,
        rating: b.rating,
        image: new URL(pod.imgSrc, `${site.url}/books/`).href,
        upc: b.upc,
        description: b.description,
      }, `book ${i + 1}: ${b.title}`);
      // The same values read straight from the page's HTML, not through the fixture's data.
      assert.equal(row.title, pod.title);
      assert.equal(row.price, poundsToNumber(pod.priceText));
      assert.equal(row.rating, pod.rating);
      assert.equal(typeof row.price, 'number');
      assert.match(row.upc as string, /^[0-9a-f]{16}$/);
    });
    const lantern = r.rows.find((row) => row.title === 'A Lantern for the Lighthouse Keeper');
    assert.equal(lantern?.upc, '6a31a6d75bb4e6de');
    assert.equal(lantern?.price, 51.2);
    assert.equal(lantern?.rating, 'Three');
    assert.match(lantern?.description as string, /^Forty short poems written on a rock in the North Sea, one for each week the supply boat didn't come\./);
    assert.equal(r.rows.find((row) => row.title === 'Small Arithmetic')?.price, 10, '£10.00');
    assert.equal(r.pagesScraped, 21, 'the listing and 20 detail pages');
    assert.equal(r.itemsFound, 20);
    assert.deepEqual(r.warnings, []);
    for (const b of books) assert.equal(site.hits.get(`/books/catalogue/${b.slug}/index.html`), 1, b.slug);
    // Every URL the rows give is real on the site.
    assert.equal((await fetch(r.rows[0]!.image as string)).headers.get('content-type'), 'image/jpeg');
  });

  it('detail values land in the row they belong to, with concurrency 1 and 8, over slow pages', async () => {
    for (const concurrency of [1, 8]) {
      site.hits.clear();
      const r = await runYaml(BOOK_CONFIG(`${site.url}/slow/20/books/`), { concurrency });
      assert.deepEqual(r.rows.map((row) => [row.title, row.upc]), bookDetails().map((b) => [b.title, b.upc]), `concurrency ${concurrency}`);
      // Links keep the /slow/ prefix: they resolve against the page they were found on.
      assert.ok((r.rows[0]!.url as string).startsWith(`${site.url}/slow/20/books/catalogue/`));
    }
  });

  it('click pagination over the catalogue: every page once, each detail page fetched once although listed on every page', async () => {
    const r = await runYaml(BOOK_CONFIG(`${site.url}/books/`, 'pagination: { type: click, selector: "li.next a", max_pages: 10 }\n'));
    const books = bookDetails();
    // Home page, then catalogue/page-2.html, page-3.html (page 3 has no next link).
    assert.equal(r.rows.length, 20 * CATALOGUE_PAGES);
    assert.equal(site.hits.get('/books/'), 1);
    for (let p = 2; p <= CATALOGUE_PAGES; p++) assert.equal(site.hits.get(`/books/catalogue/page-${p}.html`), 1, `page ${p}`);
    assert.equal(site.hits.get('/books/catalogue/page-1.html'), undefined);
    for (const b of books) assert.equal(site.hits.get(`/books/catalogue/${b.slug}/index.html`), 1, `${b.slug} once`);
    assert.equal(r.pagesScraped, CATALOGUE_PAGES + books.length);
    // Each listing page gives the same 20 books with their details, in page order.
    for (let p = 0; p < CATALOGUE_PAGES; p++) {
      assert.deepEqual(r.rows.slice(p * 20, p * 20 + 20).map((row) => [row.url, row.upc]), books.map((b) => [`${site.url}/books/catalogue/${b.slug}/index.html`, b.upc]), `page ${p + 1}`);
    }
  });

  it('deduplicate_fields [url] keeps one row per book, limit keeps the first N', async () => {
    const r = await runYaml(BOOK_CONFIG(`${site.url}/books/`, 'pagination: { type: click, selector: "li.next a" }\noutput: { deduplicate_fields: [url], limit: 7 }\n'));
    assert.deepEqual(r.rows.map((row) => row.title), bookDetails().slice(0, 7).map((b) => b.title));
    const all = await runYaml(BOOK_CONFIG(`${site.url}/books/`, 'pagination: { type: click, selector: "li.next a" }\noutput: { deduplicate: true }\n'));
    assert.equal(all.rows.length, 20, 'the three pages list the same 20 books');
    assert.equal(all.itemsFound, 60);
  });

  it('a redirected target (/books -> /books/) resolves relative links against the final URL', async () => {
    const r = await runYaml(BOOK_CONFIG(`${site.url}/books`));
    assert.equal(site.hits.get('/books'), 1);
    assert.deepEqual(r.rows.map((row) => row.url), bookDetails().map((b) => `${site.url}/books/catalogue/${b.slug}/index.html`));
    assert.deepEqual(r.rows.map((row) => row.upc), bookDetails().map((b) => b.upc));
    assert.deepEqual(r.warnings, []);
  });
});
