/**
 * The SEO analyzer (lambdas/tools/seo.ts, docs/tools.md "SEO analyzer").
 *
 * - The fixture's news article (test/fixtures/site/article.ts): its title, language, description, Open Graph, JSON-LD
 *   and headings. Real pages (the extruct pages with extruct's expected output, the Readability articles):
 *   test/corpus/tools-seo.test.ts.
 * - Inline pages built so that each Lighthouse SEO audit passes and fails, and the score moves by the
 *   audit's weight in Lighthouse's SEO category (weights restated here from Lighthouse's
 *   core/config/default-config.js, not read from the module).
 * - Bad input: an empty body, a non-HTML response, broken markup, a 5 MB page.
 * Every report any test produces is validated against `seoReportSchema` with ajv in strict mode.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { analyzeSeo, seoReportSchema, SEO_AUDIT_WEIGHTS, type SeoAudit, type SeoAuditId, type SeoReport } from '../../lambdas/tools/seo/index.ts';
import type { FetchedText, PageFetch, ToolPage } from '../../lambdas/tools/page.ts';
import { toolPage } from '../helpers/tool-page.ts';
import { ARTICLE, articleHtml } from '../fixtures/site/article.ts';

const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
const validate = ajv.compile(seoReportSchema);

/** Asserts the report matches the published schema, then returns it. */
function valid(report: SeoReport): SeoReport {
  const ok = validate(report);
  assert.ok(ok, `report does not match seoReportSchema: ${ajv.errorsText(validate.errors)}`);
  return report;
}

const URL_ = 'https://example.com/widgets/blue';

/** A PageFetch answering robots.txt with `status` and `text`, recording the URLs asked for. */
function robotsAnswer(text: string, status = 200, asked: string[] = []): PageFetch {
  return async (url: string): Promise<FetchedText> => {
    asked.push(url);
    return { url, status, headers: { 'content-type': 'text/plain' }, contentType: 'text/plain', text };
  };
}
const ALLOW_ALL = robotsAnswer('User-agent: *\nAllow: /\nSitemap: https://example.com/sitemap.xml\n');
const UNREACHABLE: PageFetch = async () => null;

async function analyze(html: string, fetch: PageFetch = ALLOW_ALL, extra: Partial<ToolPage> = {}, url = URL_): Promise<SeoReport> {
  return valid(await analyzeSeo(toolPage(html, url, extra), fetch));
}

function auditOf(report: SeoReport, id: SeoAuditId): SeoAudit {
  const a = report.audits.find((x) => x.id === id);
  assert.ok(a, `audit ${id} missing`);
  return a;
}

// ---------------------------------------------------------------------------------------------------------
// Lighthouse's SEO weights, restated from core/config/default-config.js (12.0.0 and later).
// ---------------------------------------------------------------------------------------------------------
const LIGHTHOUSE_WEIGHTS: Record<SeoAuditId, number> = {
  'is-crawlable': 93 / 23,
  'document-title': 1,
  'meta-description': 1,
  'http-status-code': 1,
  'link-text': 1,
  'crawlable-anchors': 1,
  'robots-txt': 1,
  'image-alt': 1,
  hreflang: 1,
  canonical: 1,
};

/** Lighthouse's category score for the given failing and not-applicable audits. */
function expectedScore(failing: SeoAuditId[], notApplicable: SeoAuditId[] = []): number {
  let total = 0;
  let passed = 0;
  for (const [id, w] of Object.entries(LIGHTHOUSE_WEIGHTS) as Array<[SeoAuditId, number]>) {
    if (notApplicable.includes(id)) continue;
    total += w;
    if (!failing.includes(id)) passed += w;
  }
  return Math.round((passed / total) * 100);
}

/** A page on which every audit applies and passes; `head` and `body` are added to it. */
function goodPage({ head = '', body = '', lang = 'en', title = '<title>Blue widgets – Example</title>' } = {}): string {
  return `<!DOCTYPE html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
${title}
<meta name="description" content="Hand-made blue widgets, shipped worldwide.">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="canonical" href="https://example.com/widgets/blue">
<link rel="alternate" hreflang="de" href="https://example.com/de/widgets/blue">
<link rel="alternate" hreflang="x-default" href="https://example.com/widgets/blue">
${head}
</head>
<body>
<h1>Blue widgets</h1>
<p>Our widgets are blue.</p>
<a href="/widgets/red">Red widgets</a>
<img src="/img/blue.png" alt="A blue widget">
${body}
</body>
</html>`;
}

// ---------------------------------------------------------------------------------------------------------
// The audits, one by one
// ---------------------------------------------------------------------------------------------------------

describe('Lighthouse SEO audits on inline pages', () => {
  it('uses Lighthouse 12’s SEO weights and scores a clean page 100', async () => {
    assert.deepEqual({ ...SEO_AUDIT_WEIGHTS }, LIGHTHOUSE_WEIGHTS);
    const asked: string[] = [];
    const report = await analyze(goodPage(), robotsAnswer('User-agent: *\nAllow: /\n', 200, asked));
    assert.deepEqual(asked, ['https://example.com/robots.txt']);
    assert.deepEqual(
      report.audits.map((a) => a.id),
      Object.keys(LIGHTHOUSE_WEIGHTS),
    );
    for (const a of report.audits) assert.ok(a.passed && a.applicable, `${a.id}: ${JSON.stringify(a.details)}`);
    assert.equal(report.score, 100);
    assert.equal(report.title, 'Blue widgets – Example');
    assert.equal(report.meta_description, 'Hand-made blue widgets, shipped worldwide.');
    assert.equal(report.canonical, 'https://example.com/widgets/blue');
    assert.equal(report.lang, 'en');
    assert.equal(report.viewport, 'width=device-width, initial-scale=1');
    assert.deepEqual(report.hreflang, [
      { lang: 'de', url: 'https://example.com/de/widgets/blue' },
      { lang: 'x-default', url: 'https://example.com/widgets/blue' },
    ]);
  });

  describe('is-crawlable', () => {
    it('fails on <meta name="robots" content="noindex">, and the score drops by its weight', async () => {
      const report = await analyze(goodPage({ head: '<meta name="robots" content="noindex, follow">' }));
      const a = auditOf(report, 'is-crawlable');
      assert.equal(a.passed, false);
      assert.match(String(a.details.items[0].source), /noindex/);
      assert.deepEqual(report.robots, { meta: 'noindex, follow', x_robots_tag: null, noindex: true, nofollow: false });
      assert.equal(report.score, expectedScore(['is-crawlable']));
      assert.ok(report.score < 70, 'failing is-crawlable alone must fail the category');
    });

    it('fails on content="none" and on an X-Robots-Tag: noindex header', async () => {
      assert.equal(auditOf(await analyze(goodPage({ head: '<meta name="ROBOTS" content="NONE">' })), 'is-crawlable').passed, false);
      const report = await analyze(goodPage(), ALLOW_ALL, { headers: { 'content-type': 'text/html', 'x-robots-tag': 'noindex' } });
      assert.equal(auditOf(report, 'is-crawlable').passed, false);
      assert.deepEqual(report.robots, { meta: null, x_robots_tag: 'noindex', noindex: true, nofollow: false });
    });

    it('fails on an unavailable_after date in the past, not one in the future', async () => {
      const past = await analyze(goodPage(), ALLOW_ALL, { headers: { 'x-robots-tag': 'unavailable_after: 25 Jun 2010 15:00:00 PST' } });
      assert.equal(auditOf(past, 'is-crawlable').passed, false);
      const future = await analyze(goodPage(), ALLOW_ALL, { headers: { 'x-robots-tag': 'unavailable_after: 2999-01-01' } });
      assert.equal(auditOf(future, 'is-crawlable').passed, true);
    });

    it('passes when only one crawler is blocked (header or meta for googlebot), saying which', async () => {
      const header = await analyze(goodPage(), ALLOW_ALL, { headers: { 'x-robots-tag': 'googlebot: noindex' } });
      const a = auditOf(header, 'is-crawlable');
      assert.equal(a.passed, true);
      assert.match(String(a.details.explanation), /Googlebot/);
      assert.equal(header.robots.noindex, false);
      const meta = await analyze(goodPage({ head: '<meta name="googlebot" content="noindex">' }));
      assert.equal(auditOf(meta, 'is-crawlable').passed, true);
      assert.equal(meta.robots.noindex, false);
    });

    it('fails when robots.txt disallows the page for every crawler', async () => {
      const report = await analyze(goodPage(), robotsAnswer('User-agent: *\nDisallow: /widgets/\n'));
      assert.equal(auditOf(report, 'is-crawlable').passed, false);
      assert.match(String(auditOf(report, 'is-crawlable').details.items[0].source), /robots\.txt line 2/);
      assert.equal(report.robots_txt.allowed, false);
      assert.deepEqual(report.robots_txt.disallowed_bots, ['Googlebot', 'bingbot', 'DuckDuckBot', 'archive.org_bot']);
      assert.equal(auditOf(report, 'robots-txt').passed, true, 'the file itself is valid');
    });

    it('passes when robots.txt disallows only Googlebot', async () => {
      const report = await analyze(goodPage(), robotsAnswer('User-agent: Googlebot\nDisallow: /\n\nUser-agent: *\nAllow: /\n'));
      assert.equal(auditOf(report, 'is-crawlable').passed, true);
      assert.equal(report.robots_txt.allowed, true);
      assert.deepEqual(report.robots_txt.disallowed_bots, ['Googlebot']);
    });
  });

  describe('robots-txt', () => {
    it('reads sitemaps and passes on a valid file', async () => {
      const report = await analyze(goodPage());
      assert.deepEqual(report.robots_txt, {
        url: 'https://example.com/robots.txt',
        found: true,
        status: 200,
        allowed: true,
        disallowed_bots: [],
        sitemaps: ['https://example.com/sitemap.xml'],
        note: null,
      });
    });

    it('fails on lines Lighthouse’s validator rejects, naming the line', async () => {
      const report = await analyze(goodPage(), robotsAnswer('Disallow: /tmp\nUser-agent: *\nDisalow: /x\nAllow: admin\nSitemap: /sitemap.xml\n'));
      const a = auditOf(report, 'robots-txt');
      assert.equal(a.passed, false);
      assert.deepEqual(
        a.details.items.map((i) => [i.line, i.message]),
        [
          [1, 'No user-agent specified'],
          [3, 'Unknown directive'],
          [4, 'Pattern should either be empty, start with "/" or "*"'],
          [5, 'Invalid sitemap URL'],
        ],
      );
      assert.equal(report.score, expectedScore(['robots-txt']));
    });

    it('is not applicable on a 404 (then it does not count), fails on a 5xx', async () => {
      const missing = await analyze(goodPage(), robotsAnswer('<html>Not found</html>', 404));
      assert.equal(auditOf(missing, 'robots-txt').applicable, false);
      assert.equal(missing.robots_txt.found, false);
      assert.equal(missing.robots_txt.allowed, true);
      assert.equal(missing.score, 100);
      const broken = await analyze(goodPage({ head: '' }).replace('<meta name="description" content="Hand-made blue widgets, shipped worldwide.">', ''), robotsAnswer('oops', 503));
      assert.equal(auditOf(broken, 'robots-txt').passed, false);
      assert.equal(broken.score, expectedScore(['robots-txt', 'meta-description']));
      const missingAndNoDescription = await analyze(goodPage().replace('<meta name="description" content="Hand-made blue widgets, shipped worldwide.">', ''), robotsAnswer('', 404));
      assert.equal(missingAndNoDescription.score, expectedScore(['meta-description'], ['robots-txt']));
    });

    it('unreachable robots.txt: allowed, said so, and the audit fails as Lighthouse’s does', async () => {
      const report = await analyze(goodPage(), UNREACHABLE);
      assert.equal(report.robots_txt.found, false);
      assert.equal(report.robots_txt.status, null);
      assert.equal(report.robots_txt.allowed, true);
      assert.match(String(report.robots_txt.note), /could not be fetched/);
      assert.equal(auditOf(report, 'is-crawlable').passed, true);
      assert.equal(auditOf(report, 'robots-txt').passed, false);
    });

    it('a PageFetch that throws is treated as unreachable', async () => {
      const report = await analyze(goodPage(), async () => {
        throw new Error('boom');
      });
      assert.equal(report.robots_txt.status, null);
    });
  });

  describe('http-status-code, document-title, meta-description', () => {
    it('fails on 404 and 500, passes on 200 and 304', async () => {
      for (const [status, passed] of [[404, false], [500, false], [200, true], [304, true]] as const) {
        const report = await analyze(goodPage(), ALLOW_ALL, { status });
        assert.equal(report.status, status);
        assert.equal(auditOf(report, 'http-status-code').passed, passed, `status ${status}`);
      }
    });

    it('fails with no title, an empty one, or one only inside SVG; takes the first', async () => {
      const none = await analyze(goodPage({ title: '' }));
      assert.equal(none.title, null);
      assert.equal(auditOf(none, 'document-title').passed, false);
      assert.equal(none.score, expectedScore(['document-title']));
      const empty = await analyze(goodPage({ title: '<title>  \n </title>' }));
      assert.equal(empty.title, '');
      assert.equal(auditOf(empty, 'document-title').passed, false);
      const svg = await analyze(goodPage({ title: '', body: '<svg><title>Icon</title></svg>' }));
      assert.equal(svg.title, null);
      const two = await analyze(goodPage({ title: '<title>\n  First\n  title </title><title>Second</title>' }));
      assert.equal(two.title, 'First title');
    });

    it('fails without a description or with an empty one; the name is case-insensitive', async () => {
      const without = goodPage().replace(/<meta name="description"[^>]*>/, '');
      assert.equal(auditOf(await analyze(without), 'meta-description').passed, false);
      const empty = await analyze(without.replace('<head>', '<head><meta name="description" content="  ">'));
      assert.equal(empty.meta_description, '');
      assert.equal(auditOf(empty, 'meta-description').passed, false);
      const upper = await analyze(without.replace('<head>', '<head><meta name="Description" content="Widgets">'));
      assert.equal(upper.meta_description, 'Widgets');
      assert.equal(auditOf(upper, 'meta-description').passed, true);
    });
  });

  describe('link-text', () => {
    it('fails on "click here", "Read more" and a bare URL as text; the links are listed', async () => {
      const report = await analyze(
        goodPage({ body: '<a href="/a">click here</a> <a href="https://other.example/b"> Read   more </a> <a href="/c">https://example.com/c</a> <a href="/d">Blue widget care</a>' }),
      );
      const a = auditOf(report, 'link-text');
      assert.equal(a.passed, false);
      assert.deepEqual(report.links.non_descriptive, [
        { href: 'https://example.com/a', text: 'click here' },
        { href: 'https://other.example/b', text: 'Read more' },
        { href: 'https://example.com/c', text: 'https://example.com/c' },
      ]);
      assert.equal(a.details.items.length, 3);
      assert.equal(report.score, expectedScore(['link-text']));
    });

    it('skips nofollow links, links to the page itself, javascript: and mailto:', async () => {
      const report = await analyze(
        goodPage({ body: '<a href="/x" rel="nofollow">here</a> <a href="#top">more</a> <a href="mailto:a@example.com">here</a> <a href="javascript:go()">more</a>' }),
      );
      assert.equal(auditOf(report, 'link-text').passed, true);
    });

    it('uses the language of the link: "hier" fails on a German page, not on an English one', async () => {
      assert.equal(auditOf(await analyze(goodPage({ lang: 'de', body: '<a href="/x">hier</a>' })), 'link-text').passed, false);
      assert.equal(auditOf(await analyze(goodPage({ lang: 'en', body: '<a href="/x">hier</a>' })), 'link-text').passed, true);
      assert.equal(auditOf(await analyze(goodPage({ lang: 'en', body: '<p lang="es"><a href="/x">más información</a></p>' })), 'link-text').passed, false);
      // Without any lang, every language's list applies.
      assert.equal(auditOf(await analyze('<title>t</title><a href="/x">läs mer</a>'), 'link-text').passed, false);
    });
  });

  describe('crawlable-anchors', () => {
    it('fails on javascript:void(0) and on an <a onclick> without href', async () => {
      for (const anchor of ['<a href="javascript:void(0)">Open</a>', '<a href="javascript:void 0">Open</a>', '<a onclick="go()">Go</a>', '<a href="file:///etc/hosts">Hosts</a>', '<a href="http://[bad">Bad</a>']) {
        const report = await analyze(goodPage({ body: anchor }));
        const a = auditOf(report, 'crawlable-anchors');
        assert.equal(a.passed, false, anchor);
        assert.equal(a.details.items.length, 1);
        assert.equal(report.score, expectedScore(['crawlable-anchors']), anchor);
      }
    });

    it('passes named anchors, role=button, mailto:, aria-current placeholders and an empty href', async () => {
      for (const anchor of ['<a id="top"></a>', '<a name="section"></a>', '<a role="button" onclick="go()">Go</a>', '<a href="mailto:a@example.com">Mail</a>', '<a aria-current="page">Home</a>', '<a href="">Self</a>', '<a href="?page=2">Next page</a>']) {
        assert.equal(auditOf(await analyze(goodPage({ body: anchor })), 'crawlable-anchors').passed, true, anchor);
      }
    });
  });

  describe('image-alt', () => {
    it('fails on an image without alt, and on alt=" "; lists their src', async () => {
      const report = await analyze(goodPage({ body: '<img src="/a.png"><img src="b.png" alt=" ">' }));
      const a = auditOf(report, 'image-alt');
      assert.equal(a.passed, false);
      assert.deepEqual(a.details.items.map((i) => i.src), ['https://example.com/a.png', 'https://example.com/widgets/b.png']);
      assert.deepEqual(report.images, { count: 3, without_alt: 1, without_alt_srcs: ['https://example.com/a.png'] });
      assert.equal(report.score, expectedScore(['image-alt']));
    });

    it('passes decorative, labelled and presentational images', async () => {
      const body = '<img src="/a.png" alt=""><img src="/b.png" role="presentation"><img src="/c.png" aria-label="Chart"><img src="/d.png" title="Logo"><span id="cap">Caption</span><img src="/e.png" aria-labelledby="cap">';
      const report = await analyze(goodPage({ body }));
      assert.equal(auditOf(report, 'image-alt').passed, true);
      assert.equal(report.images.without_alt, 4);
    });

    it('is not applicable when no image is shown, and then does not count', async () => {
      const html = goodPage().replace('<img src="/img/blue.png" alt="A blue widget">', '<div hidden><img src="/x.png"></div>');
      const report = await analyze(html);
      const a = auditOf(report, 'image-alt');
      assert.equal(a.applicable, false);
      assert.equal(report.score, 100);
      const failing = await analyze(html.replace('<meta name="description" content="Hand-made blue widgets, shipped worldwide.">', ''));
      assert.equal(failing.score, expectedScore(['meta-description'], ['image-alt']));
    });
  });

  describe('hreflang', () => {
    it('fails on codes that are no ISO 639 language and on relative hrefs', async () => {
      for (const link of ['<link rel="alternate" hreflang="english" href="https://example.com/en/">', '<link rel="alternate" hreflang="en_US" href="https://example.com/us/">', '<link rel="alternate" hreflang="qqq" href="https://example.com/q/">', '<link rel="alternate" hreflang="fr" href="/fr/">']) {
        const report = await analyze(goodPage({ head: link }));
        const a = auditOf(report, 'hreflang');
        assert.equal(a.passed, false, link);
        assert.equal(report.score, expectedScore(['hreflang']), link);
      }
    });

    it('passes region and script subtags, three-letter codes and x-default; reads Link headers; ignores <link> in the body', async () => {
      const head = '<link rel="alternate" hreflang="zh-Hant-TW" href="https://example.com/tw/"><link rel="alternate" hreflang="gsw" href="https://example.com/ch/"><link rel="alternate" hreflang="es-419" href="https://example.com/la/">';
      const report = await analyze(goodPage({ head, body: '<link rel="alternate" hreflang="english" href="/x">' }), ALLOW_ALL, {
        headers: { link: '<https://example.com/pt/widgets/blue>; rel="alternate"; hreflang="pt-BR"' },
      });
      assert.equal(auditOf(report, 'hreflang').passed, true, JSON.stringify(auditOf(report, 'hreflang').details));
      assert.deepEqual(report.hreflang.map((h) => h.lang), ['de', 'x-default', 'zh-Hant-TW', 'gsw', 'es-419', 'pt-BR']);
      const bad = await analyze(goodPage(), ALLOW_ALL, { headers: { link: '<https://example.com/xx/>; rel="alternate"; hreflang="xyzzy"' } });
      assert.equal(auditOf(bad, 'hreflang').passed, false);
    });
  });

  describe('canonical', () => {
    const withCanonical = (links: string) => goodPage().replace('<link rel="canonical" href="https://example.com/widgets/blue">', links);

    it('fails on a relative canonical, still reporting it absolute (against <base href>)', async () => {
      const report = await analyze(withCanonical('<base href="https://cdn.example.net/shop/"><link rel="canonical" href="widgets/blue">'));
      const a = auditOf(report, 'canonical');
      assert.equal(a.passed, false);
      assert.match(String(a.details.explanation), /not an absolute URL/);
      assert.equal(report.canonical, null, 'no valid canonical');
      assert.equal(report.score, expectedScore(['canonical']));
    });

    it('fails on multiple conflicting canonicals, not on the same one twice', async () => {
      const two = await analyze(withCanonical('<link rel="canonical" href="https://example.com/widgets/blue"><link rel="canonical" href="https://example.com/widgets/blue?color=navy">'));
      assert.equal(auditOf(two, 'canonical').passed, false);
      assert.match(String(auditOf(two, 'canonical').details.explanation), /Multiple conflicting URLs/);
      assert.equal(two.canonical, 'https://example.com/widgets/blue');
      const same = await analyze(withCanonical('<link rel="canonical" href="https://example.com/widgets/blue"><link rel="canonical" href="https://example.com/widgets/blue">'));
      assert.equal(auditOf(same, 'canonical').passed, true);
    });

    it('passes a canonical on another domain (as Lighthouse does since 2021) and notes it', async () => {
      const report = await analyze(withCanonical('<link rel="canonical" href="https://widgets.example.org/blue">'));
      const a = auditOf(report, 'canonical');
      assert.equal(a.passed, true);
      assert.match(String(a.details.explanation), /another domain/);
      assert.equal(report.canonical, 'https://widgets.example.org/blue');
    });

    it('fails on a canonical to the site root from a deeper page, on an invalid URL, and on one pointing to another hreflang version', async () => {
      assert.equal(auditOf(await analyze(withCanonical('<link rel="canonical" href="https://example.com/">')), 'canonical').passed, false);
      assert.equal(auditOf(await analyze(withCanonical('<link rel="canonical" href="http://[::1">')), 'canonical').passed, false);
      const elsewhere = await analyze(withCanonical('<link rel="canonical" href="https://example.com/de/widgets/blue">'));
      assert.match(String(auditOf(elsewhere, 'canonical').details.explanation), /another `hreflang` location/);
    });

    it('is not applicable without a canonical; a canonical in the body does not count; a Link header does', async () => {
      const none = await analyze(withCanonical(''));
      assert.equal(auditOf(none, 'canonical').applicable, false);
      assert.equal(none.canonical, null);
      assert.equal(none.score, 100);
      const body = await analyze(withCanonical('') + '<link rel="canonical" href="/elsewhere">');
      assert.equal(auditOf(body, 'canonical').applicable, false);
      const header = await analyze(withCanonical(''), ALLOW_ALL, { headers: { link: '<https://example.com/widgets/blue>; rel="canonical"' } });
      assert.equal(header.canonical, 'https://example.com/widgets/blue');
      assert.equal(auditOf(header, 'canonical').applicable, true);
    });
  });

  it('several failures add up by their weights', async () => {
    const html = goodPage({ title: '', head: '<meta name="robots" content="noindex">', body: '<a href="/x">click here</a><img src="/y.png">' });
    const report = await analyze(html, ALLOW_ALL, { status: 410 });
    const failing = report.audits.filter((a) => !a.passed).map((a) => a.id);
    assert.deepEqual(failing, ['is-crawlable', 'document-title', 'http-status-code', 'link-text', 'image-alt']);
    assert.equal(report.score, expectedScore(failing));
  });
});

// ---------------------------------------------------------------------------------------------------------
// The other fields
// ---------------------------------------------------------------------------------------------------------

describe('structured data read as extruct reads it', () => {
  it('reads broken JSON-LD as extruct does: comments, control characters, trailing junk; null and false are no items', async () => {
    const html = `<script type="application/ld+json">
      // a comment
      {"@context": "https://schema.org", "@type": "Product", "name": "a
b", /* note */ "offers": {"@type": "Offer", "price": "1"},}
    </script>
    <script type="application/ld+json">null</script>
    <script type="application/ld+json">{"@type": "Event"}{"@type": "Place"} trailing words</script>
    <script type="application/ld+json">{&quot;@type&quot;:&quot;WebPage&quot;}</script>
    <script type="application/ld+json">{"@type": "Broken", </script>
    <script type="application/ld+json">{"@context": "https://schema.org", "@graph": [{"@type": "Organization", "@id": "#org"}, {"@type": ["WebSite", "CreativeWork"]}]}</script>`;
    const sd = (await analyze(html)).structured_data;
    assert.deepEqual(
      sd.json_ld.map((i) => i.type),
      [['Product'], ['Event'], ['Place'], ['WebPage'], ['Organization'], ['WebSite', 'CreativeWork']],
    );
    assert.deepEqual(sd.json_ld[0].nested_types, ['Offer']);
    assert.equal(sd.json_ld[4].id, '#org');
    assert.equal(sd.errors.length, 1);
    assert.equal(sd.errors[0].index, 4);
    assert.deepEqual(sd.types, ['Product', 'Offer', 'Event', 'Place', 'WebPage', 'Organization', 'WebSite', 'CreativeWork']);
  });
});

describe('fields on the fixture article', () => {
  it('title, lang, description, Open Graph, JSON-LD NewsArticle with its nested types, headings, images and links', async () => {
    const r = await analyze(articleHtml(), ALLOW_ALL, {}, 'https://news.example/article/');
    assert.equal(r.title, `${ARTICLE.title} | ${ARTICLE.siteName}`);
    assert.equal(r.lang, ARTICLE.lang);
    assert.equal(r.meta_description, ARTICLE.excerpt);
    assert.equal(r.open_graph.site_name, ARTICLE.siteName);
    assert.equal(r.open_graph.description, ARTICLE.excerpt);
    assert.deepEqual(r.open_graph.image, ['/media/quay-street-barrier.jpg']);
    assert.deepEqual(r.structured_data.json_ld.map((i) => i.type), [['NewsArticle']]);
    assert.deepEqual(new Set(r.structured_data.json_ld[0]!.nested_types), new Set(['Person', 'Organization']));
    assert.deepEqual(r.headings.h1, [ARTICLE.title]);
    assert.deepEqual(r.headings.h2, ['Two summers of building', 'What the engineers want changed', 'Get the Courier in your inbox', 'Related']);
    assert.equal(r.images.count, 2);
    assert.ok(r.word_count > 600, `${r.word_count} words`);
    assert.ok(r.links.internal > 10);
    assert.equal(auditOf(r, 'document-title').passed, true);
    assert.equal(auditOf(r, 'meta-description').passed, true);
    assert.equal(auditOf(r, 'image-alt').passed, true);
  });
});

describe('fields on inline pages', () => {
  it('Open Graph: og: prefix dropped, every og:image in order, first value of the rest; name= read too', async () => {
    const report = await analyze(`<head>
      <meta property="og:title" content="First"><meta property="og:title" content="Second">
      <meta property="og:image" content="https://example.com/1.png"><meta property="og:image:width" content="600">
      <meta property="og:image" content="https://example.com/2.png"><meta property="og:image:width" content="300">
      <meta name="og:description" content="Named">
      <meta property="article:published_time" content="2024-01-02">
      <meta property="twitter:card" content="summary_large_image"><meta name="twitter:site" content="@example"><meta name="twitter:title" content="T1"><meta property="twitter:title" content="T2">
    </head>`);
    assert.deepEqual(report.open_graph, {
      title: 'First',
      image: ['https://example.com/1.png', 'https://example.com/2.png'],
      'image:width': ['600', '300'],
      description: 'Named',
      'article:published_time': '2024-01-02',
    });
    assert.deepEqual(report.twitter_card, { card: 'summary_large_image', site: '@example', title: 'T1' });
  });

  it('headings folded, word count of visible text only, links counted by host', async () => {
    const report = await analyze(`<html><body>
      <h1>  Blue
        widgets </h1><h2>One</h2><h2>Two <span>parts</span></h2><h6>Six</h6>
      <p>Our wid<b>gets</b> are blue.</p><p>Second paragraph</p>
      <script>var words = "not counted at all";</script><style>p { color: blue }</style>
      <noscript>Enable JavaScript please</noscript><template><p>Template words</p></template>
      <a href="/about">About us</a> <a href="https://www.example.com/x">Home</a> <a href="https://other.example/y" rel="nofollow sponsored">Partner</a>
      <a href="mailto:a@example.com">Mail</a> <a href="tel:+100">Call</a> <a>Placeholder</a><a href="/glued">Glued</a>
    </body></html>`);
    assert.deepEqual(report.headings, { h1: ['Blue widgets'], h2: ['One', 'Two parts'], h3: [], h4: [], h5: [], h6: ['Six'] });
    // Blue widgets / One / Two parts / Six / Our widgets are blue. / Second paragraph / About us / Home / Partner / Mail / Call /
    // PlaceholderGlued (inline elements with nothing between them run together, as a browser renders them)
    assert.equal(report.word_count, 2 + 1 + 2 + 1 + 4 + 2 + 2 + 1 + 1 + 1 + 1 + 1);
    assert.deepEqual(
      { internal: report.links.internal, external: report.links.external, nofollow: report.links.nofollow, other: report.links.other },
      { internal: 3, external: 1, nofollow: 1, other: 2 },
    );
  });

  it('counts words in scripts without spaces', async () => {
    const report = await analyze('<html lang="zh"><body><p>我们的产品质量很好</p><p>hello world</p></body></html>');
    assert.ok(report.word_count >= 4 && report.word_count <= 11, String(report.word_count));
  });

  it('X-Robots-Tag joined from several headers: per-agent parts kept apart', async () => {
    const report = await analyze(goodPage(), ALLOW_ALL, { headers: { 'x-robots-tag': 'googlebot: noindex, nofollow, otherbot: noarchive, max-snippet: 20' } });
    assert.equal(report.robots.noindex, false);
    assert.equal(report.robots.nofollow, false);
    assert.equal(auditOf(report, 'is-crawlable').passed, true);
    const generic = await analyze(goodPage(), ALLOW_ALL, { headers: { 'x-robots-tag': 'nofollow, googlebot: noarchive' } });
    assert.equal(generic.robots.nofollow, true);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------------------------------

describe('bad input', () => {
  it('an empty body: nothing found, the content audits fail', async () => {
    const report = await analyze('');
    assert.equal(report.title, null);
    assert.equal(report.lang, null);
    assert.equal(report.word_count, 0);
    assert.deepEqual(report.headings.h1, []);
    assert.equal(auditOf(report, 'document-title').passed, false);
    assert.equal(auditOf(report, 'meta-description').passed, false);
    assert.equal(report.score, expectedScore(['document-title', 'meta-description'], ['image-alt', 'canonical']));
  });

  it('a non-HTML response is not parsed, and the report says so', async () => {
    const json = '{"title": "<title>Not a title</title>", "text": "<h1>no</h1>"}';
    const report = await analyze(json, ALLOW_ALL, { contentType: 'application/json', headers: { 'content-type': 'application/json' } });
    assert.equal(report.title, null);
    assert.deepEqual(report.headings.h1, []);
    assert.equal(report.content_type, 'application/json');
    assert.equal(report.warnings.length, 1);
    assert.match(report.warnings[0], /application\/json/);
    const image = await analyze('\u0089PNG\r\n\u001a\n\u0000\u0000', ALLOW_ALL, { contentType: 'image/png' });
    assert.equal(image.word_count, 0);
  });

  it('broken markup is read as a browser reads it', async () => {
    const report = await analyze('<title>Broken <b>page</title><h1>Head<p>para<a href=/x>click here<div>block</h1><img src=x.png alt><table><tr><td><h2>Cell');
    assert.equal(report.title, 'Broken <b>page');
    assert.equal(report.headings.h1.length, 1);
    assert.equal(report.headings.h2[0], 'Cell');
    assert.equal(auditOf(report, 'link-text').passed, false);
    assert.equal(report.images.without_alt, 0);
  });

  it('a 5 MB page finishes in reasonable time', async () => {
    const chunk = '<div class="card"><h2>Widget number 1234</h2><p>Some descriptive text about this widget and why you may like it.</p><a href="/w/1234">click here</a><img src="/w/1234.png"></div>\n';
    const html = `<!DOCTYPE html><html lang="en"><head><title>Big</title></head><body>${chunk.repeat(Math.ceil((5 * 1024 * 1024) / chunk.length))}</body></html>`;
    assert.ok(html.length >= 5 * 1024 * 1024);
    const started = performance.now();
    const report = await analyze(html);
    const ms = performance.now() - started;
    const cards = Math.ceil((5 * 1024 * 1024) / chunk.length);
    assert.equal(report.headings.h2.length, cards);
    assert.equal(report.images.count, cards);
    assert.equal(report.images.without_alt_srcs.length, 20);
    assert.equal(report.links.non_descriptive.length, 50);
    // The title is not body text; each card has 3 + 12 + 2 words.
    assert.equal(report.word_count, cards * (3 + 12 + 2));
    assert.ok(ms < 20_000, `took ${Math.round(ms)} ms`);
  });
});
