/**
 * Page facts (lambdas/engine/page-facts.ts, issue 25 item 4): the document base URL as the HTML standard defines
 * it (the first `base` element with `href`, resolved against the document URL; unusable ones fall back to the
 * document URL, never to a later `<base>`), URL resolution of bad input, and whether a response is HTML (by MIME
 * type, and by the MIME Sniffing standard's HTML signatures when it names none). Then the same base as each
 * reader of pages uses it: the field extractor, the SEO analyzer, the tech detector and the lead generator.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseHtml } from '../../lambdas/engine/html/parse.ts';
import { baseUrlFromHref, documentBaseUrl, firstBaseHref, isHtmlResponse, mayBeHtml, pageKind, sameSite, siteKey, mimeEssence, resolveUrl, sniffsAsHtml } from '../../lambdas/engine/page-facts.ts';
import { absoluteUrl, documentBase, loadHtml } from '../../lambdas/engine/extract.ts';
import { analyzeSeo } from '../../lambdas/tools/seo/index.ts';
import { detectTechnologies } from '../../lambdas/tools/tech/index.ts';
import { contactPageLinks, extractLeads } from '../../lambdas/tools/leads/index.ts';
import { toolPage } from '../helpers/tool-page.ts';
import { unreadable } from '../../lambdas/engine/crawl/documents.ts';

const PAGE = 'https://example.com/a/b/page.html?x=1#frag';
const base = (html: string, url = PAGE): string => documentBaseUrl(parseHtml(html), url);

describe('documentBaseUrl', () => {
  it('no <base>: the document URL, unchanged', () => {
    assert.equal(base('<p>no base</p>'), PAGE);
    assert.equal(base(''), PAGE);
  });

  it('an absolute <base href>', () => {
    assert.equal(base('<base href="https://cdn.example.org/root/">'), 'https://cdn.example.org/root/');
  });

  it('a relative <base href> resolves against the document URL', () => {
    assert.equal(base('<head><base href="../shop/"></head>'), 'https://example.com/a/shop/');
    assert.equal(base('<base href="/docs/">'), 'https://example.com/docs/');
    assert.equal(base('<base href="?y=2">'), 'https://example.com/a/b/page.html?y=2');
    assert.equal(base('<base href="//other.example/x/">'), 'https://other.example/x/');
  });

  it('whitespace around the href is dropped', () => {
    assert.equal(base('<base href="  /docs/ \n">'), 'https://example.com/docs/');
  });

  it('an empty href is the document URL without its fragment (as a browser parses "")', () => {
    assert.equal(base('<base href="">'), 'https://example.com/a/b/page.html?x=1');
  });

  it('the first <base> with href wins, wherever it is (a <base> without href does not count)', () => {
    assert.equal(base('<base target="_blank"><base href="/first/"><base href="/second/">'), 'https://example.com/first/');
    assert.equal(base('<body><p>text</p><base href="/in-body/"></body>'), 'https://example.com/in-body/');
  });

  it('an invalid href falls back to the document URL; a later <base> is not tried', () => {
    assert.equal(base('<base href="http://[bad"><base href="/second/">'), PAGE);
    assert.equal(base('<base href="https://exa mple.com/">'), PAGE);
  });

  it('a javascript: or data: base is ignored (HTML standard, "set the frozen base URL")', () => {
    assert.equal(base('<base href="javascript:alert(1)">'), PAGE);
    assert.equal(base('<base href=" JavaScript:void(0)">'), PAGE);
    assert.equal(base('<base href="data:text/html,x">'), PAGE);
  });

  it('other schemes are kept', () => {
    assert.equal(base('<base href="ftp://files.example/pub/">'), 'ftp://files.example/pub/');
  });

  it('a <base> inside <template> content or in SVG is not the document\'s', () => {
    assert.equal(base('<template><base href="/tpl/"></template><base href="/real/">'), 'https://example.com/real/');
    assert.equal(base('<svg><base href="/svg/"></svg>'), PAGE);
    assert.equal(base('<svg><foreignObject><base href="/fo/"></foreignObject></svg>'), 'https://example.com/fo/');
  });

  it('an invalid document URL stays as it is', () => {
    assert.equal(base('<base href="/x/">', 'not a url'), 'not a url');
    assert.equal(base('<p>', ''), '');
  });

  it('a cheerio document is walked the same way, and deep or wide trees cost one walk', () => {
    const $ = loadHtml('<template><base href="/tpl/"></template><base href="/real/">');
    assert.equal(documentBase($, PAGE), 'https://example.com/real/');
    const deep = `${'<div>'.repeat(5000)}<base href="/deep/">`;
    assert.equal(base(deep), 'https://example.com/deep/');
    const wide = `${'<i></i>'.repeat(200_000)}<base href="/wide/">`;
    assert.equal(base(wide), 'https://example.com/wide/');
  });

  it('firstBaseHref gives the attribute as written; baseUrlFromHref takes it from a reader that walked the tree', () => {
    assert.equal(firstBaseHref(parseHtml('<base href=" /x/ ">')), ' /x/ ');
    assert.equal(firstBaseHref(parseHtml('<base>')), null);
    assert.equal(baseUrlFromHref(null, PAGE), PAGE);
    assert.equal(baseUrlFromHref(undefined, PAGE), PAGE);
    assert.equal(baseUrlFromHref('/x/', PAGE), 'https://example.com/x/');
  });
});

describe('resolveUrl', () => {
  it('resolves relative and absolute URLs, trimmed', () => {
    assert.equal(resolveUrl('c', 'https://example.com/a/b'), 'https://example.com/a/c');
    assert.equal(resolveUrl(' ../d?q#f\n', 'https://example.com/a/b/c'), 'https://example.com/a/d?q#f');
    assert.equal(resolveUrl('HTTPS://EXAMPLE.com', 'https://other.example/'), 'https://example.com/');
    assert.equal(resolveUrl('', 'https://example.com/a#x'), 'https://example.com/a');
  });

  it('keeps every scheme', () => {
    assert.equal(resolveUrl('mailto:a@b.c', 'https://example.com/'), 'mailto:a@b.c');
    assert.equal(resolveUrl('javascript:void(0)', 'https://example.com/'), 'javascript:void(0)');
  });

  it('bad input gives null, never a throw', () => {
    assert.equal(resolveUrl('http://[bad', 'https://example.com/'), null);
    assert.equal(resolveUrl('https://exa mple.com/', 'https://example.com/'), null);
    assert.equal(resolveUrl('x', 'not a base'), null);
    assert.equal(resolveUrl('x', ''), null);
    assert.equal(resolveUrl('relative/only'), null);
    assert.equal(resolveUrl('https://example.com/ok'), 'https://example.com/ok');
    assert.equal(resolveUrl('\u0000'.repeat(10) + 'a', 'https://example.com/'), 'https://example.com/a');
  });

  it('the field extractor keeps refusing empty and javascript: URLs', () => {
    assert.equal(absoluteUrl(undefined, 'https://example.com/'), null);
    assert.equal(absoluteUrl('  ', 'https://example.com/'), null);
    assert.equal(absoluteUrl('javascript:alert(1)', 'https://example.com/'), null);
    assert.equal(absoluteUrl('http://[bad', 'https://example.com/'), null);
    assert.equal(absoluteUrl(' /p ', 'https://example.com/a/'), 'https://example.com/p');
  });
});

describe('siteKey and sameSite: one answer to "same site" (issue 41)', () => {
  it('host name in lower case without a leading www.; scheme and port do not count', () => {
    assert.equal(siteKey('https://www.Shop.example:8443/a?b'), 'shop.example');
    assert.equal(siteKey(new URL('http://shop.example/')), 'shop.example');
    assert.equal(siteKey('not a url'), '');
    assert.ok(sameSite('http://www.shop.example/a', 'https://shop.example:8080/b'));
    assert.ok(!sameSite('https://shop.example/', 'https://blog.shop.example/'));
    assert.ok(!sameSite('https://wwwshop.example/', 'https://shop.example/'));
    assert.ok(!sameSite('x', 'x'), 'nothing that does not parse');
  });
});

describe('isHtmlResponse', () => {
  it('by MIME type, whatever the body', () => {
    assert.equal(isHtmlResponse('text/html', 'plain words'), true);
    assert.equal(isHtmlResponse('Text/HTML; charset=UTF-8', ''), true);
    assert.equal(isHtmlResponse('application/xhtml+xml', '<?xml version="1.0"?><html/>'), true);
    assert.equal(isHtmlResponse('application/json', '<html>'), false);
    assert.equal(isHtmlResponse('image/png', '<html>'), false);
  });

  it('text/plain and XML: HTML only when the body starts as HTML does (a server that labels its pages wrongly)', () => {
    assert.equal(isHtmlResponse('text/plain', '<!doctype html><html>'), true);
    assert.equal(isHtmlResponse('text/plain; charset=utf-8', '\n<html lang="en"><p>x'), true);
    assert.equal(isHtmlResponse('text/plain', 'First line of the note. <b>bold</b>'), false, 'plain text');
    assert.equal(isHtmlResponse('text/plain', ''), false);
    assert.equal(isHtmlResponse('application/xml', '<html>'), true);
    assert.equal(isHtmlResponse('text/xml', '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'), true, 'after the declaration');
    assert.equal(isHtmlResponse('application/xml', '<?xml version="1.0"?><rss version="2.0"><channel>'), false, 'real XML');
    assert.equal(isHtmlResponse('text/csv', '<html>'), false);
  });

  it('pageKind: html, xml (feeds, sitemaps), text, other: the one answer runs, the generator and the tools take', () => {
    assert.equal(pageKind('text/html', ''), 'html');
    assert.equal(pageKind('text/plain', '<!DOCTYPE html><p>x'), 'html');
    assert.equal(pageKind('application/rss+xml', '<?xml version="1.0"?><rss><channel><item><title>a</title>'), 'xml');
    assert.equal(pageKind('text/xml', '<urlset><url><loc>https://x/</loc>'), 'xml');
    assert.equal(pageKind('', '<?xml version="1.0"?><urlset>'), 'xml');
    assert.equal(pageKind('application/xhtml+xml', '<?xml version="1.0"?><html>'), 'html');
    assert.equal(pageKind('text/plain', 'a note'), 'text');
    assert.equal(pageKind('application/json', '{}'), 'other');
    assert.equal(pageKind('', 'a note'), 'other');
    assert.equal(pageKind('image/png', ''), 'other');
  });

  it('no type (or an unknown one): sniffed by the HTML signatures', () => {
    assert.equal(isHtmlResponse('', '<!DOCTYPE html><title>x</title>'), true);
    assert.equal(isHtmlResponse('', ' \t\r\n\f<HTML lang="en">'), true);
    assert.equal(isHtmlResponse('', '<p>para</p>'), true);
    assert.equal(isHtmlResponse('', '<!-- comment -->'), true);
    assert.equal(isHtmlResponse('unknown/unknown', '<div class="x">'), true);
    assert.equal(isHtmlResponse('*/*', '<body>'), true);
    assert.equal(isHtmlResponse('', ''), false);
    assert.equal(isHtmlResponse('', 'plain text <b>later</b>'), false);
    assert.equal(isHtmlResponse('', '{"html": "<p>"}'), false);
    assert.equal(isHtmlResponse('', '\u0089PNG\r\n\u001a\n'), false);
  });

  it('sniffing: a signature needs a space or ">" after it, and sits in the first 1,445 characters', () => {
    assert.equal(sniffsAsHtml('<section>'), false, 'not one of the signatures');
    assert.equal(sniffsAsHtml('<abbr>'), false, '<a must end there');
    assert.equal(sniffsAsHtml('<a href="/">'), true);
    assert.equal(sniffsAsHtml('<br>'), true);
    assert.equal(sniffsAsHtml('<h1 id=t>'), true);
    assert.equal(sniffsAsHtml('<html'), false, 'no terminating byte');
    assert.equal(sniffsAsHtml('<?xml version="1.0"?><html>'), false, 'XML, not HTML');
    assert.equal(sniffsAsHtml('\uFEFF<html>'), false, 'a BOM is no whitespace');
    assert.equal(sniffsAsHtml(`${' '.repeat(1440)}<html>`), false, 'past the resource header');
    assert.equal(sniffsAsHtml(`${' '.repeat(1430)}<html>`), true);
  });

  it('mayBeHtml: by the type alone (a HEAD answer), an HTML type or none', () => {
    assert.equal(mayBeHtml('text/html; charset=utf-8'), true);
    assert.equal(mayBeHtml(''), true);
    assert.equal(mayBeHtml('application/unknown'), true);
    assert.equal(mayBeHtml('text/plain'), false);
    assert.equal(mayBeHtml('application/pdf'), false);
  });

  it('mimeEssence drops parameters and case', () => {
    assert.equal(mimeEssence(' Text/Html ; charset=utf-8'), 'text/html');
    assert.equal(mimeEssence(''), '');
  });
});

describe('the tools use the one base URL', () => {
  const page = 'https://example.com/a/page';
  const withBase = (href: string, body: string) => `<html><head><base href="${href}"></head><body>${body}</body></html>`;

  it('seo-analyzer: an image without alt resolves against the base; a javascript: base is ignored', async () => {
    const noRobots = async () => null;
    const a = await analyzeSeo(toolPage(withBase('/static/', '<img src="i.png">'), page), noRobots);
    assert.deepEqual(a.images.without_alt_srcs, ['https://example.com/static/i.png']);
    const b = await analyzeSeo(toolPage(withBase('javascript:x', '<img src="i.png">'), page), noRobots);
    assert.deepEqual(b.images.without_alt_srcs, ['https://example.com/a/i.png']);
  });

  it('seo-analyzer: a response without a content type is sniffed', async () => {
    const noRobots = async () => null;
    const html = await analyzeSeo(toolPage('<!doctype html><title>T</title>', page, { contentType: '' }), noRobots);
    assert.equal(html.title, 'T');
    assert.deepEqual(html.warnings, []);
    const text = await analyzeSeo(toolPage('just words, <title>T</title>', page, { contentType: '' }), noRobots);
    assert.equal(text.title, null);
    assert.equal(text.warnings.length, 1);
  });

  it('a run and the tools agree on the same answer (issue 41): text/plain markup is a page for both, plain text for neither', async () => {
    const noRobots = async () => null;
    const markup = '<!DOCTYPE html><html><head><title>Shop</title></head><body><p>x</p></body></html>';
    const doc = (html: string) => ({ requestedUrl: page, url: page, status: 200, contentType: 'text/plain; charset=utf-8', html });
    assert.equal(unreadable(doc(markup)), null, 'the run reads it');
    assert.equal((await analyzeSeo(toolPage(markup, page, { contentType: 'text/plain; charset=utf-8' }), noRobots)).title, 'Shop', 'so does the SEO tool');
    assert.match(unreadable(doc('Shop. A note.'))?.message ?? '', /is text\/plain; charset=utf-8, not an HTML page$/, 'the run refuses plain text');
    const text = await analyzeSeo(toolPage('Shop. A note.', page, { contentType: 'text/plain; charset=utf-8' }), noRobots);
    assert.equal(text.title, null);
    assert.equal(text.warnings.length, 1, 'and so does the SEO tool');
  });

  it('tech-detector: a script src resolves against a <base> in the body too, and a broken base is ignored', () => {
    const names = (html: string) => detectTechnologies(toolPage(html, page)).technologies.map((t) => t.name);
    // jsDelivr's fingerprint is its host in a script URL (scriptSrc: cdn\.jsdelivr\.net): seen only through the base.
    const inBody = '<html><body><p>x</p><base href="https://cdn.jsdelivr.net/npm/"><script src="lib@1/lib.min.js"></script></body></html>';
    assert.ok(names(inBody).includes('jsDelivr'));
    const broken = '<html><head><base href="http://[bad"></head><body><script src="/npm/lib@1/lib.min.js"></script></body></html>';
    assert.ok(!names(broken).includes('jsDelivr'));
    const inputs = detectTechnologies(toolPage('<base href="http://[bad"><script src="//cdn.jsdelivr.net/npm/x.js"></script>', page));
    assert.ok(inputs.technologies.some((t) => t.name === 'jsDelivr'), 'a protocol-relative src resolves against the page URL');
  });

  it('lead-generation: contact links resolve against the base; a page without a content type is sniffed', () => {
    const links = contactPageLinks(toolPage(withBase('/en/', '<a href="contact">Contact</a><a href="javascript:x">x</a>'), page));
    assert.deepEqual(links, ['https://example.com/en/contact']);
    const jsBase = contactPageLinks(toolPage(withBase('javascript:void(0)', '<a href="contact">Contact</a>'), page));
    assert.deepEqual(jsBase, ['https://example.com/a/contact']);
    const sniffed = extractLeads(toolPage('<p>Write to info@acme-ltd.com</p>', page, { contentType: '' }));
    assert.deepEqual(sniffed.emails.map((e) => e.email), ['info@acme-ltd.com']);
    const notHtml = extractLeads(toolPage('info@acme-ltd.com', page, { contentType: '' }));
    assert.deepEqual(notHtml.emails, []);
  });
});
