/**
 * How the lightweight engine crawls (lambdas/engine/run.ts): pages never fetched twice, progress,
 * controls only a browser can click, browser-only configs refused before any fetch, failing first,
 * listing and detail pages, the per-run page limit, categories, charsets, the outbound guard and abort.
 * The fixture site and small inline servers on 127.0.0.1 provide the pages.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes, quotesWithTag, topTags, QUOTES_PER_PAGE } from '../fixtures/site/quotes.ts';
import { CHARSET_TEXT, CHARSET_TITLE } from '../fixtures/site/charset.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runLightweight as runConfig, type RunProgress } from '../../lambdas/engine/engines.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { LOOPBACK, nameKey, rejectsWithCode, runYaml, serveInline, type InlineServer } from './helpers.ts';

const QUOTES = `extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
`;

/** A listing page of the inline servers: `.item` elements, then whatever pager markup. */
const listing = (items: string[], pager = '') =>
  `<!DOCTYPE html><html><body><ul>${items.map((i) => `<li class="item"><span class="name">${i}</span></li>`).join('')}</ul>${pager}</body></html>`;

const ITEMS = `extract:
  container: li.item
  fields:
    - { name: name, selector: span.name }
`;

describe('crawl behaviour on the fixture site', () => {
  let site: FixtureSite;
  before(async () => { site = await startFixtureSite(); });
  after(async () => { await site.close(); });
  beforeEach(() => { site.hits.clear(); });

  describe('progress', () => {
    it('never goes down, stays within 0-99, ends at 99 before runConfig returns', async () => {
      const seen: RunProgress[] = [];
      let returned = false;
      const lateCalls: number[] = [];
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: about, selector: 'a[href*="/author/"]', type: link }
detail_fields:
  fields:
    - { name: born, selector: .author-born-date }
pagination: { type: click, selector: "li.next a", max_pages: 4 }
`, {
        concurrency: 3,
        onProgress: (p) => {
          if (returned) lateCalls.push(p.progress);
          seen.push({ ...p });
        },
      });
      returned = true;
      assert.ok(seen.length >= r.pagesScraped, `a report per page at least (${seen.length} for ${r.pagesScraped} pages)`);
      for (let i = 1; i < seen.length; i++) {
        assert.ok(seen[i]!.progress >= seen[i - 1]!.progress, `progress went down at report ${i}: ${seen[i - 1]!.progress} -> ${seen[i]!.progress}`);
        assert.ok(seen[i]!.pagesScraped >= seen[i - 1]!.pagesScraped, 'pagesScraped never goes down');
        assert.ok(seen[i]!.itemsFound >= seen[i - 1]!.itemsFound, 'itemsFound never goes down');
      }
      assert.ok(seen.every((p) => Number.isInteger(p.progress) && p.progress >= 0 && p.progress <= 99));
      const last = seen.at(-1)!;
      assert.equal(last.progress, 99);
      assert.equal(last.pagesScraped, r.pagesScraped);
      assert.equal(last.itemsFound, 40);
      assert.ok(new Set(seen.map((p) => p.progress)).size > 5, 'progress moves in steps along the way');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(lateCalls, [], 'no report after the run returned');
    });
  });

  describe('browser-only configs', () => {
    const cases: Array<[string, (url: string) => string, string]> = [
      ['an eval field', (url) => `target: { url: "${url}" }\nextract:\n  container: div.quote\n  fields:\n    - { name: t, type: eval, script: "document.title" }\n`, 'extract.fields[0]'],
      ['actions', (url) => `target: { url: "${url}" }\n${QUOTES}actions:\n  - { type: click, selector: button.accept }\n`, 'actions'],
      ['scroll_infinite pagination', (url) => `target: { url: "${url}" }\n${QUOTES}pagination: { type: scroll_infinite, max_pages: 3 }\n`, 'pagination.type'],
      ['an eval detail field', (url) => `target: { url: "${url}" }\nextract:\n  container: div.quote\n  fields:\n    - { name: u, selector: a, type: link }\ndetail_fields:\n  fields:\n    - { name: d, type: eval, script: "1" }\n`, 'detail_fields.fields[0]'],
    ];
    for (const [what, yaml, path] of cases) {
      it(`${what}: browser_required before any fetch`, async () => {
        const err = await rejectsWithCode(runYaml(yaml(`${site.url}/quotes/`)), 'browser_required');
        assert.ok((err.details as Array<{ path: string }>).some((d) => d.path === path), JSON.stringify(err.details));
        assert.equal(site.hits.size, 0, `no request reached the site: ${[...site.hits.keys()].join(', ')}`);
      });
    }
  });

  describe('failures', () => {
    it('first page 404: target_failed with the URL and status', async () => {
      const err = await rejectsWithCode(runYaml(`target: { url: "${site.url}/status/404/" }\n${QUOTES}`), 'target_failed', /HTTP 404/);
      assert.deepEqual(err.details, [{ url: `${site.url}/status/404/`, status: 404 }]);
      assert.equal(site.hits.get('/status/404/'), 1, '4xx is not retried');
    });

    it('first page that is not HTML: target_failed', async () => {
      await rejectsWithCode(runYaml(`target: { url: "${site.url}/books/media/cover.jpg" }\n${QUOTES}`), 'target_failed', /image\/jpeg/);
    });

    it('first page 5xx: target_failed after the retries', async () => {
      const fetcher = new Fetcher(new OutboundGuard(LOOPBACK.outbound), { retries: 1, retryBaseMs: 10 });
      try {
        await rejectsWithCode(runYaml(`target: { url: "${site.url}/status/503/" }\n${QUOTES}`, { fetcher }), 'target_failed', /HTTP 503/);
        assert.equal(site.hits.get('/status/503/'), 2, 'one retry');
      } finally {
        await fetcher.close();
      }
    });

    it('a flaky first page that recovers within the retries succeeds', async () => {
      const fetcher = new Fetcher(new OutboundGuard(LOOPBACK.outbound), { retries: 2, retryBaseMs: 10 });
      try {
        const r = await runYaml(`target: { url: "${site.url}/flaky/crawl-first/?fail=2&code=502" }\nextract:\n  type: single\n  fields:\n    - { name: ok, selector: p.ok }\n`, { fetcher });
        assert.deepEqual(r.rows, [{ ok: 'ok crawl-first' }]);
      } finally {
        await fetcher.close();
      }
    });

    it('without the loopback allowlist the guard refuses the target and nothing is sent', async () => {
      await rejectsWithCode(runConfig(parseConfig(`target: { url: "${site.url}/quotes/" }\n${QUOTES}`)), 'target_forbidden');
      assert.equal(site.hits.size, 0);
    });
  });

  describe('page limit of a run (maxPages)', () => {
    it('stops click pagination with a warning', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTES}pagination: { type: click, selector: "li.next a", max_pages: 10 }\n`, { maxPages: 4 });
      assert.deepEqual(r.rows.map((x) => x.text), allQuotes().slice(0, 40).map((q) => q.text));
      assert.equal(r.pagesScraped, 4);
      assert.equal(site.hits.get('/quotes/page/5/'), undefined);
      assert.deepEqual(r.warnings, ['stopped at the page limit of 4 pages per run']);
    });

    it('counts detail pages: the rows past the limit get defaults', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
    - { name: about, selector: 'a[href*="/author/"]', type: link }
detail_fields:
  fields:
    - { name: born, selector: .author-born-date, default: "unknown" }
`, { maxPages: 3, concurrency: 1 });
      assert.equal(r.pagesScraped, 3);
      assert.equal(r.rows.length, QUOTES_PER_PAGE);
      const fetched = [...site.hits.keys()].filter((k) => k.startsWith('/quotes/author/'));
      assert.equal(fetched.length, 2, 'the listing page and two author pages');
      for (const row of r.rows) {
        const slug = new URL(row.about as string).pathname;
        if (fetched.includes(slug)) assert.notEqual(row.born, 'unknown');
        else assert.equal(row.born, 'unknown');
      }
      assert.ok(r.warnings.includes('stopped at the page limit of 3 pages per run'));
    });

    it('counts the first page of each category too', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTES}categories: { container: div.tags-box, link_selector: a.tag, wait_after: 0 }\n`, { maxPages: 3 });
      assert.equal(r.pagesScraped, 3, 'the category page and two categories');
      assert.deepEqual([...site.hits.keys()].filter((p) => p !== '/robots.txt').length, 3, [...site.hits.keys()].join(', '));
      const tags = topTags(2);
      assert.deepEqual([...new Set(r.rows.map((x) => x._category))], tags);
      assert.equal(r.rows.length, tags.reduce((n, t) => n + Math.min(QUOTES_PER_PAGE, quotesWithTag(t).length), 0));
      assert.deepEqual(r.warnings, ['stopped at the page limit of 3 pages per run']);
    });
  });

  describe('pages fetched once', () => {
    it('a category that links back to the page the categories were found on reuses it', async () => {
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTES}categories: { link_selector: "h1 a, div.tags-box a.tag", max_categories: 3, wait_after: 0 }\n`);
      assert.equal(site.hits.get('/quotes/'), 1, '/quotes/ is the target and the first category');
      assert.equal(r.pagesScraped, 3);
      const [home, ...tags] = [...new Set(r.rows.map((x) => x._category))];
      assert.equal(home, 'Quotes to Scrape');
      assert.deepEqual(tags, topTags(2));
      assert.deepEqual(r.rows.filter((x) => x._category === home).map((x) => x.text), allQuotes().slice(0, QUOTES_PER_PAGE).map((q) => q.text));
      assert.equal(r.rows.filter((x) => x._category === home)[0]!._category_url, `${site.url}/quotes/`);
    });

    it('duplicate category links are crawled once', async () => {
      // Every quote links its tags: the same tag URLs appear many times on the page.
      const r = await runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTES}categories: { container: div.quote, link_selector: a.tag, wait_after: 0 }\n`);
      const tagUrls = [...new Set(allQuotes().slice(0, QUOTES_PER_PAGE).flatMap((q) => q.tags))];
      assert.equal(new Set(r.rows.map((x) => x._category)).size, tagUrls.length);
      const tagHits = [...site.hits.entries()].filter(([k]) => k.startsWith('/quotes/tag/'));
      assert.equal(tagHits.length, tagUrls.length);
      assert.ok(tagHits.every(([, n]) => n === 1));
    });
  });

  describe('charsets', () => {
    const single = (url: string) => runYaml(`target: { url: "${url}" }\nextract:\n  type: single\n  fields:\n    - { name: title, selector: title }\n    - { name: text, selector: p.text }\n`);
    for (const key of ['latin1', 'meta', 'sjis'] as const) {
      it(`/charset/${key}/ decodes to the page's text`, async () => {
        const r = await single(`${site.url}/charset/${key}/`);
        assert.deepEqual(r.rows, [{ title: CHARSET_TITLE, text: CHARSET_TEXT[key] }]);
      });
    }
  });

  describe('abort', () => {
    it('rejects promptly with the signal reason while the first page hangs', async () => {
      const controller = new AbortController();
      const reason = new Error('stop: test abort');
      setTimeout(() => controller.abort(reason), 100);
      const started = Date.now();
      await assert.rejects(runYaml(`target: { url: "${site.url}/hang/" }\n${QUOTES}`, { signal: controller.signal }), (err) => err === reason);
      assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
      assert.equal(site.hits.get('/hang/'), 1);
    });

    it('rejects promptly during a slow page later in the run', async () => {
      const controller = new AbortController();
      const started = Date.now();
      const run = runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTES}pagination: { type: url, url_pattern: "${site.url}/slow/5000/quotes/page/{page}/" }\n`, {
        signal: controller.signal,
        onProgress: (p) => { if (p.pagesScraped === 1) setTimeout(() => controller.abort(new Error('enough')), 50); },
      });
      await assert.rejects(run, /enough/);
      assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
      assert.equal(site.hits.get('/slow/5000/quotes/page/2/'), 1, 'the slow page was in flight');
    });

    it('rejects promptly while waiting out wait_after', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('no more waiting')), 150);
      const started = Date.now();
      await assert.rejects(
        runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTES}pagination: { type: click, selector: "li.next a", wait_after: 10000 }\n`, { signal: controller.signal }),
        /no more waiting/,
      );
      assert.ok(Date.now() - started < 1500);
      assert.equal(site.hits.get('/quotes/page/2/'), undefined);
    });

    it('an already aborted signal rejects without a request', async () => {
      const reason = new Error('aborted before start');
      await assert.rejects(runYaml(`target: { url: "${site.url}/quotes/" }\n${QUOTES}`, { signal: AbortSignal.abort(reason) }), (err) => err === reason);
      assert.equal(site.hits.size, 0);
    });
  });
});

describe('crawl behaviour on inline pages', () => {
  let server: InlineServer;
  let fixture: FixtureSite;
  before(async () => {
    fixture = await startFixtureSite();
    server = await serveInline({
      // A pager that comes back to where it started, once through a #fragment.
      '/loop/a': listing(['a1', 'a2'], '<a class="next" href="/loop/b">next</a>'),
      '/loop/b': listing(['b1'], '<a class="next" href="/loop/c#top">next</a>'),
      '/loop/c': listing(['c1'], '<a class="next" href="/loop/a#again">next</a>'),
      // Controls that are not links.
      '/button': listing(['x1', 'x2'], '<button class="next" type="button">Load more</button>'),
      '/hash': listing(['y1'], '<a class="next" href="#">More</a>'),
      '/js': listing(['z1'], '<a class="next" href="javascript:loadMore()">More</a>'),
      '/later-button': listing(['p1'], '<a class="next" href="/button">next</a>'),
      // Controls that end a listing.
      '/disabled': listing(['d1'], '<li class="next disabled"><a href="/loop/b">next</a></li>'),
      '/aria': listing(['e1'], '<a class="next" aria-disabled="true" href="/loop/b">next</a>'),
      '/disabled-parent': listing(['g1'], '<ul class="pager"><li class="next disabled"><a href="#">next</a></li></ul>'),
      '/wrapped': listing(['w1'], '<li class="next"><a href="/loop/c">next</a></li>'),
      // A listing page that fails after the first one.
      '/list-then-404': listing(['f1', 'f2'], '<a class="next" href="/gone">next</a>'),
      // Items whose detail pages partly fail.
      '/details': (base) => `<html><body>
        <div class="row"><a href="/detail/1">one</a></div>
        <div class="row"><a href="/detail/missing">two</a></div>
        <div class="row"><a href="${base}/detail/3">three</a></div>
        <div class="row"><a href="/detail/error">four</a></div>
        <div class="row"><a href="/detail/1#again">five</a></div>
        <div class="row"><span>no link</span></div>
      </body></html>`,
      '/detail/1': '<html><body><p class="code">D-1</p><p class="extra">x</p></body></html>',
      '/detail/3': '<html><body><p class="code">D-3</p></body></html>',
      '/detail/error': { status: 500, body: '<html><body>boom</body></html>' },
      // Categories: names inside the link, the URL in another attribute, one category 404.
      '/cats': `<html><body><nav>
        <a href="#" data-url="/cat/one"><span class="n">One</span> <em>(2)</em></a>
        <a href="#" data-url="/cat/two"><span class="n">Two</span> <em>(1)</em></a>
        <a href="#" data-url="/cat/missing"><span class="n">Missing</span></a>
        <a href="#" data-url="mailto:someone@example.com"><span class="n">Mail</span></a>
        <a href="#" data-url="/cat/three">  Three
          words </a>
      </nav></body></html>`,
      '/cat/one': listing(['o1', 'o2']),
      '/cat/two': listing(['t1']),
      '/cat/three': listing(['h1']),
    });
  });
  after(async () => {
    await server.close();
    await fixture.close();
  });
  beforeEach(() => { server.hits.clear(); });

  it('a pager that links back to a page already seen (also with a #fragment) ends the listing; each page fetched once', async () => {
    const r = await runYaml(`target: { url: "${server.url}/loop/a" }\n${ITEMS}pagination: { type: click, selector: a.next, max_pages: 20 }\n`);
    assert.deepEqual(r.rows.map((x) => x.name), ['a1', 'a2', 'b1', 'c1']);
    assert.deepEqual(Object.fromEntries(server.hits), { '/robots.txt': 1, '/loop/a': 1, '/loop/b': 1, '/loop/c': 1 });
    assert.equal(r.pagesScraped, 3);
    assert.deepEqual(r.warnings, []);
  });

  for (const [path, tag] of [['/button', 'button'], ['/hash', 'a'], ['/js', 'a']] as const) {
    it(`a click control that is not a link (${path}) fails with browser_required naming the selector and element`, async () => {
      const err = await rejectsWithCode(
        runYaml(`target: { url: "${server.url}${path}" }\n${ITEMS}pagination: { type: click, selector: .next }\n`),
        'browser_required',
        new RegExp(`"\\.next" matches a <${tag}> that is not a link`),
      );
      assert.deepEqual((err.details as Array<{ path: string }>).map((d) => d.path), ['pagination.selector']);
    });
  }

  it('a control that is not a link on a later page ends the listing with a warning; the rows so far are kept', async () => {
    const r = await runYaml(`target: { url: "${server.url}/later-button" }\n${ITEMS}pagination: { type: click, selector: .next }\n`);
    assert.ok(r.rows.length >= 1);
    assert.ok(r.warnings.some((w) => /is a <button> without a usable href; the listing ends there/.test(w)), r.warnings.join('\n'));
    assert.equal(server.hits.get('/button'), 1);
  });

  it('a disabled control ends the listing; a control wrapping a link is followed', async () => {
    for (const [path, selector] of [['/disabled', 'li.next'], ['/aria', 'a.next'], ['/disabled', 'li.next a'], ['/disabled-parent', 'li.next a']] as const) {
      server.hits.clear();
      const r = await runYaml(`target: { url: "${server.url}${path}" }\n${ITEMS}pagination: { type: click, selector: "${selector}" }\n`);
      assert.equal(r.rows.length, 1, path);
      assert.equal(server.hits.get('/loop/b'), undefined, `${path}: the disabled control is not followed`);
    }
    // ".next" is the <li> here and the <a> on the pages after it.
    const r = await runYaml(`target: { url: "${server.url}/wrapped" }\n${ITEMS}pagination: { type: click, selector: .next }\n`);
    assert.deepEqual(r.rows.map((x) => x.name), ['w1', 'c1', 'a1', 'a2', 'b1']);
  });

  it('a listing page after the first that fails ends the listing with a warning; earlier rows are kept', async () => {
    const r = await runYaml(`target: { url: "${server.url}/list-then-404" }\n${ITEMS}pagination: { type: click, selector: a.next }\n`);
    assert.deepEqual(r.rows.map((x) => x.name), ['f1', 'f2']);
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /listing page .*\/gone.*404/);
  });

  it('detail pages that fail give the defaults and a warning, not a failed run; shared detail URLs are fetched once', async () => {
    const fetcher = new Fetcher(new OutboundGuard(LOOPBACK.outbound), { retries: 0 });
    try {
      const r = await runYaml(`target: { url: "${server.url}/details" }
extract:
  container: div.row
  fields:
    - { name: label, selector: "a, span" }
    - { name: url, selector: a, type: link }
detail_fields:
  fields:
    - { name: code, selector: p.code, default: "n/a" }
    - { name: extra, selector: p.extra }
`, { fetcher });
      assert.deepEqual(r.rows.map((x) => [x.label, x.code, x.extra]), [
        ['one', 'D-1', 'x'],
        ['two', 'n/a', null],
        ['three', 'D-3', null],
        ['four', 'n/a', null],
        ['five', 'D-1', 'x'],
        ['no link', 'n/a', null],
      ]);
      assert.equal(server.hits.get('/detail/1'), 1, 'one fetch for /detail/1 and /detail/1#again');
      assert.equal(r.warnings.length, 2, r.warnings.join('\n'));
      assert.ok(r.warnings.some((w) => /detail page .*\/detail\/missing.*404/.test(w)));
      assert.ok(r.warnings.some((w) => /detail page .*\/detail\/error.*500/.test(w)));
      assert.equal(r.pagesScraped, 3, 'the listing and the two detail pages that answered');
    } finally {
      await fetcher.close();
    }
  });

  it('categories: link_attribute, name_selector (else the link text, whitespace collapsed), non-http links skipped, a failing category warns', async () => {
    const r = await runYaml(`target: { url: "${server.url}/cats" }
${ITEMS}categories:
  container: nav
  link_selector: a
  link_attribute: data-url
  name_selector: span.n
  wait_after: 0
`);
    assert.deepEqual(r.rows, [
      { name: 'o1', _category: 'One', _category_url: `${server.url}/cat/one` },
      { name: 'o2', _category: 'One', _category_url: `${server.url}/cat/one` },
      { name: 't1', _category: 'Two', _category_url: `${server.url}/cat/two` },
      { name: 'h1', _category: 'Three words', _category_url: `${server.url}/cat/three` },
    ]);
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /\/cat\/missing.*404/);
    assert.equal(server.hits.get('/cat/missing'), 1);
  });

  it('categories that match nothing: no rows and a warning naming the selector', async () => {
    const r = await runYaml(`target: { url: "${server.url}/cats" }\n${ITEMS}categories: { container: aside, link_selector: a.cat, wait_after: 0 }\n`);
    assert.deepEqual(r.rows, []);
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /no category links matched "aside a\.cat"/);
  });

  it('detail pages on another loopback server, slow ones included, keep the row order', async () => {
    const pages = await serveInline({
      '/': () => `<html><body>${[300, 10, 150, 0].map((ms, i) => `<div class="q"><a href="${fixture.url}/slow/${ms}/quotes/author/${allQuotes()[i]!.authorSlug}/">${i}</a></div>`).join('')}</body></html>`,
    });
    try {
      const r = await runYaml(`target: { url: "${pages.url}/" }
extract:
  container: div.q
  fields:
    - { name: i, selector: a, transform: [to_number] }
    - { name: u, selector: a, type: link }
detail_fields:
  fields:
    - { name: author, selector: h3.author-title }
`, { concurrency: 4 });
      assert.deepEqual(r.rows.map((x) => [x.i, nameKey(x.author as string)]), [0, 1, 2, 3].map((i) => [i, nameKey(allQuotes()[i]!.author)]));
    } finally {
      await pages.close();
    }
  });
});
