/**
 * The page-analysis tools over real HTTP on the local service (docs/spec.md, "Tool endpoints"; docs/tools.md): seo-analyzer,
 * tech-detector, lead-generation, screenshot and content-extractor on pages served on loopback (the fixture's news
 * article, test/fixtures/site/article.ts, and small pages; the same on a real article: test/corpus/tools-api.test.ts), with
 * their refusals (no key, a bad URL, the guard), 422 `target_unreachable` with its reason and the credit given
 * back, metering (0.1 credit a call) and the SEO analyzer's 30 calls a day.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { ARTICLE, articleHtml, articleText } from '../fixtures/site/article.ts';
import { Ajv } from 'ajv';
import { contentReportSchema } from '../../lambdas/tools/content.ts';
import { leadsReportSchema } from '../../lambdas/tools/leads/index.ts';
import { screenshotStoredSchema } from '../../lambdas/tools/screenshot.ts';
import { seoReportSchema } from '../../lambdas/tools/seo/index.ts';
import { techReportSchema } from '../../lambdas/tools/tech/index.ts';
import { tokenF1 } from '../../lambdas/tools/content-score.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

/** Each tool's response schema, beside its code: every answer over HTTP must match it. */
const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
const SCHEMAS: Record<string, (data: unknown) => boolean> = {
  'seo-analyzer': ajv.compile(seoReportSchema),
  'tech-detector': ajv.compile(techReportSchema),
  'lead-generation': ajv.compile(leadsReportSchema),
  'content-extractor': ajv.compile(contentReportSchema),
  screenshot: ajv.compile(screenshotStoredSchema),
};

/** The contact page of the site: written as real university and company pages write them. */
const CONTACT_PAGE = `<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8"><title>Contact us</title></head><body>
<h1>Contact the Department</h1>
<p>Main office: <a href="tel:+16507232300">(650) 723-2300</a>, fax 650.723.4000</p>
<p>Admissions: jsmith [at] stanford [dot] edu</p>
<p>Press: <a href="mailto:press@stanford.edu?subject=Hello">press@stanford.edu</a></p>
<p>Images: <img src="/logo@2x.png" alt="logo"></p>
<footer><a href="https://twitter.com/StanfordEng">Twitter</a> <a href="https://www.linkedin.com/school/stanford-university/">LinkedIn</a>
<a href="https://twitter.com/intent/tweet?text=hi">Share</a></footer>
</body></html>`;

/** A home page that links to the contact page (follow_contact_pages) and names its CMS. */
const HOME_PAGE = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Example Engineering</title>
<meta name="generator" content="WordPress 5.2.4"><meta name="description" content="The home page of an example school of engineering.">
</head><body><h1>Welcome</h1><p>Read about our work.</p><a href="/contact/">Contact us</a> <a href="/private/">Staff</a></body></html>`;

/** A page whose version of jQuery only a browser can see (set by script). */
const SCRIPTED_PAGE = `<!DOCTYPE html><html><head><title>Scripted</title>
<script>window.jQuery = function () {}; window.jQuery.fn = { jquery: '3.6.0' };</script></head><body><p>Hello</p></body></html>`;

/** The site the tools look at: the fixture's article and small pages on loopback. */
async function startToolSite(): Promise<{ url: string; close(): Promise<void> }> {
  const article = articleHtml();
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    const html = (body: string | Buffer, status = 200, headers: Record<string, string | string[]> = {}) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (p === '/robots.txt') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('User-agent: *\nDisallow: /private/\n'); return; }
    if (p === '/') return html(HOME_PAGE, 200, { 'x-powered-by': 'Express', 'set-cookie': ['PHPSESSID=abc123; Path=/', 'theme=dark; Path=/'] });
    if (p === '/article/') return html(article);
    if (p === '/moved/') { res.writeHead(301, { location: '/article/' }); res.end(); return; }
    if (p === '/contact/') return html(CONTACT_PAGE);
    if (p === '/private/') return html('<!DOCTYPE html><html><head><title>Staff only</title></head><body><p>Staff</p></body></html>');
    if (p === '/scripted/') return html(SCRIPTED_PAGE);
    if (p === '/gone/') return html('<!DOCTYPE html><html><head><title>Not found</title></head><body><h1>Not found</h1></body></html>', 404);
    html('<p>no such page</p>', 404);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** PNG width and height from the IHDR chunk. */
function pngSize(b: Buffer): { width: number; height: number } {
  assert.equal(b.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', 'a PNG signature');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe('page-analysis tools over HTTP', () => {
  let site: Awaited<ReturnType<typeof startToolSite>>;
  let svc: TestService;
  let pro: Awaited<ReturnType<typeof createAccount>>;
  let api: ReturnType<typeof client>;
  const credits = async () => (await api.get('/api/v1/me/')).body.subscription.credits_remaining as number;

  before(async () => {
    site = await startToolSite();
    svc = await startService();
    pro = await createAccount(svc.dataDir, { plan: 'pro' });
    const raw = client(svc.url, pro.api_key);
    // Every 200 answer of a tool is checked against the tool's response schema.
    api = {
      ...raw,
      post: async (p: string, b?: unknown, h?: Record<string, string>) => {
        const r = await raw.post(p, b, h);
        const tool = /^\/api\/v1\/tools\/([\w-]+)\/$/.exec(p)?.[1];
        if (tool && r.status === 200 && typeof r.body === 'object') {
          const validate = SCHEMAS[tool]! as ((d: unknown) => boolean) & { errors?: unknown };
          assert.ok(validate(r.body), `${tool} answer matches its schema: ${JSON.stringify(validate.errors)}`);
        }
        return r;
      },
    };
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('seo-analyzer on an article: its title, language, Open Graph, JSON-LD, robots.txt and the ten audits; a redirect, a 404, a disallowed page', async () => {
    const expected = ARTICLE;
    const r = await api.post('/api/v1/tools/seo-analyzer/', { url: `${site.url}/moved/` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const seo = r.body;
    assert.equal(seo.url, `${site.url}/article/`, 'the final URL after the redirect');
    assert.equal(seo.status, 200);
    assert.ok(seo.title.startsWith(expected.title), `${seo.title} starts with the article's title`);
    assert.equal(seo.lang, expected.lang);
    assert.equal(seo.open_graph.site_name, expected.siteName);
    assert.equal(seo.open_graph.description, expected.excerpt);
    assert.ok(seo.structured_data.types.includes('NewsArticle'), 'the JSON-LD NewsArticle');
    assert.deepEqual(seo.audits.map((a: { id: string }) => a.id).sort(),
      ['canonical', 'crawlable-anchors', 'document-title', 'hreflang', 'http-status-code', 'image-alt', 'is-crawlable', 'link-text', 'meta-description', 'robots-txt']);
    assert.equal(seo.robots_txt.found, true);
    assert.equal(seo.robots_txt.allowed, true);
    assert.ok(seo.score >= 0 && seo.score <= 100);
    assert.ok(seo.headings.h1.length >= 1 && seo.word_count > 500 && seo.links.internal > 0 && seo.images.count > 0);

    const blocked = (await api.post('/api/v1/tools/seo-analyzer/', { url: `${site.url}/private/` })).body;
    assert.equal(blocked.robots_txt.allowed, false, 'robots.txt disallows /private/');
    const audit = (report: { audits: Array<{ id: string; passed: boolean }> }, id: string) => report.audits.find((a) => a.id === id)!.passed;
    assert.equal(audit(blocked, 'is-crawlable'), false);
    assert.ok(blocked.score < seo.score, `${blocked.score} < ${seo.score}`);
    const gone = (await api.post('/api/v1/tools/seo-analyzer/', { url: `${site.url}/gone/` })).body;
    assert.equal(gone.status, 404, 'a 404 page is analysed, not refused');
    assert.equal(audit(gone, 'http-status-code'), false);
  });

  it('content-extractor on an article: the text is the article\'s, with its metadata', async () => {
    const expected = ARTICLE;
    const r = await api.post('/api/v1/tools/content-extractor/', { url: `${site.url}/article/` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const c = r.body;
    assert.equal(c.url, `${site.url}/article/`, 'the answer names the page it read');
    assert.equal(c.title, expected.title);
    assert.equal(c.byline, expected.byline);
    assert.equal(c.site_name, expected.siteName);
    assert.equal(c.lang, expected.lang);
    assert.equal(c.excerpt, expected.excerpt);
    assert.equal(c.readerable, true);
    assert.equal(c.published_time, expected.publishedTime);
    const f1 = tokenF1(c.text, articleText()).f1;
    assert.ok(f1 > 0.95, `token F1 ${f1}`);
    assert.ok(!/Sign up|Related|Copy link|About us/.test(c.text), 'no newsletter box, related links, share bar or footer');
    assert.ok(c.word_count > 500 && c.reading_time_minutes >= 1);
    for (const img of c.images) assert.match(img.src, /^https?:\/\//, 'image URLs are absolute');
  });

  it('lead-generation: obfuscated emails, phone forms, social profiles without share links; follow_contact_pages reaches the contact page', async () => {
    const r = await api.post('/api/v1/tools/lead-generation/', { url: `${site.url}/contact/` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const emails = r.body.emails.map((e: { email: string }) => e.email).sort();
    assert.deepEqual(emails, ['jsmith@stanford.edu', 'press@stanford.edu']);
    const phones = r.body.phones.map((p: { e164: string }) => p.e164).sort();
    assert.deepEqual(phones, ['+16507232300', '+16507234000']);
    assert.ok(r.body.phones.every((p: { country: string }) => p.country === 'US'));
    const social = r.body.social.map((s: { network: string; handle: string }) => `${s.network}:${s.handle.toLowerCase()}`).sort();
    assert.deepEqual(social, ['linkedin:school/stanford-university', 'x:stanfordeng']);

    const home = (await api.post('/api/v1/tools/lead-generation/', { url: `${site.url}/` })).body;
    assert.deepEqual(home.emails, [], 'the home page itself has no address');
    const followed = (await api.post('/api/v1/tools/lead-generation/', { url: `${site.url}/`, follow_contact_pages: true })).body;
    assert.deepEqual(followed.emails.map((e: { email: string }) => e.email).sort(), emails);
    const source = followed.emails[0].sources[0];
    assert.match(JSON.stringify(source), /\/contact\//, 'each finding says which page it came from');
  });

  it('tech-detector: the generator meta, headers and cookies over HTTP; JavaScript globals only when the page is rendered', async () => {
    const r = await api.post('/api/v1/tools/tech-detector/', { url: `${site.url}/` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const byName = (report: { technologies: Array<{ name: string; version: string | null; categories: string[]; confidence: number }> }) => new Map(report.technologies.map((t) => [t.name, t]));
    const found = byName(r.body);
    assert.equal(found.get('WordPress')?.version, '5.2.4', 'the generator meta names WordPress and its version');
    assert.ok(found.get('WordPress')!.categories.includes('CMS'));
    assert.ok(found.has('Express'), 'X-Powered-By: Express');
    assert.ok(found.has('PHP'), 'the PHPSESSID cookie');
    for (const t of r.body.technologies) assert.ok(t.confidence > 0 && t.confidence <= 100, `${t.name} ${t.confidence}`);
    assert.equal(r.body.rendered, false);

    const plain = byName((await api.post('/api/v1/tools/tech-detector/', { url: `${site.url}/scripted/` })).body);
    assert.equal(plain.has('jQuery'), false, 'a global set by script is invisible in the served HTML');
    const rendered = await api.post('/api/v1/tools/tech-detector/', { url: `${site.url}/scripted/`, render: true });
    assert.equal(rendered.status, 200, JSON.stringify(rendered.body));
    assert.equal(rendered.body.rendered, true);
    assert.equal(byName(rendered.body).get('jQuery')?.version, '3.6.0', 'jQuery.fn.jquery read from the live page');
    const refused = await api.post('/api/v1/tools/tech-detector/', { url: 'http://10.0.0.1/', render: true });
    assert.equal(refused.body.code, 'target_forbidden');
  });

  it('refuses what it cannot take: no key 401, a bad URL 400 invalid_url, a missing url 400, a forbidden target 400; nothing charged', async () => {
    const before = await credits();
    for (const tool of ['seo-analyzer', 'tech-detector', 'lead-generation', 'screenshot', 'content-extractor']) {
      const anon = await client(svc.url).post(`/api/v1/tools/${tool}/`, { url: `${site.url}/` });
      assert.equal(anon.status, 401, tool);
      for (const url of ['not a url', 'ftp://example.com/file', 'javascript:alert(1)']) {
        const r = await api.post(`/api/v1/tools/${tool}/`, { url });
        assert.equal(r.status, 400, `${tool} ${url}`);
        assert.equal(r.body.code, 'invalid_url');
        assert.deepEqual(r.body.details, [{ url }]);
      }
      const missing = await api.post(`/api/v1/tools/${tool}/`, {});
      assert.equal(missing.status, 400);
      assert.equal(missing.body.code, 'invalid_request');
      const unknown = await api.post(`/api/v1/tools/${tool}/`, { url: `${site.url}/`, colour: 'red' });
      assert.equal(unknown.status, 400);
      assert.match(unknown.body.error, /colour is not a known field/);
      for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/', 'http://[::ffff:192.168.0.1]/']) {
        const r = await api.post(`/api/v1/tools/${tool}/`, { url });
        assert.equal(r.status, 400, `${tool} ${url}`);
        assert.equal(r.body.code, 'target_forbidden');
      }
    }
    assert.equal(await credits(), before, 'refused calls cost nothing');
  });

  it('a target that cannot be reached: 422 target_unreachable with the reason, and the credit given back', async () => {
    const before = await credits();
    const port = await closedPort();
    for (const tool of ['seo-analyzer', 'content-extractor', 'screenshot']) {
      const r = await api.post(`/api/v1/tools/${tool}/`, { url: `http://127.0.0.1:${port}/` });
      assert.equal(r.status, 422, `${tool}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 'target_unreachable');
      assert.equal(r.body.details[0].reason, 'refused');
      assert.match(r.body.error, /connection was refused/);
    }
    const dns = await api.post('/api/v1/tools/seo-analyzer/', { url: 'http://no-such-host.invalid/' });
    assert.equal(dns.status, 422, JSON.stringify(dns.body));
    assert.equal(dns.body.details[0].reason, 'dns');
    assert.equal(await credits(), before, 'no credit spent on targets that could not be reached');
  });

  it('ports: the SSL checker checks 443 only below pro (403 plan_required, not charged, not counted), dns-whois asks port 53 only', async () => {
    const free = await createAccount(svc.dataDir, { plan: 'free' });
    const freeApi = client(svc.url, free.api_key);
    const freeCredits = async () => (await freeApi.get('/api/v1/me/')).body.subscription.credits_remaining as number;
    const before = await freeCredits();
    const port = await closedPort();
    // 12 refusals: more than the free plan's 10 calls an hour, so a refusal that counted would end in a 429.
    for (let i = 0; i < 6; i++) {
      for (const body of [{ url: `https://127.0.0.1:${port}/` }, { url: 'https://127.0.0.1/', port }]) {
        const r = await freeApi.post('/api/v1/tools/ssl-checker/', body);
        assert.equal(r.status, 403, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'plan_required');
        assert.deepEqual(r.body.details, [{ plan: 'free', required: 'ssl_checker_any_port', plans_with_it: ['pro'] }]);
      }
    }
    for (const servers of [['8.8.8.8:5353'], ['1.1.1.1', '[2606:4700:4700::1111]:853']]) {
      const r = await freeApi.post('/api/v1/tools/dns-whois/', { url: 'https://example.com/', servers });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.code, 'invalid_request');
      assert.match(r.body.details[0].path, /^servers\[\d\]$/);
      assert.equal(r.body.details[0].message, 'port must be 53');
    }
    assert.equal(await freeCredits(), before, 'refused before metering: nothing charged');
    // Port 443 passes the gate on every plan (the name does not resolve: 422, credit given back).
    const on443 = await freeApi.post('/api/v1/tools/ssl-checker/', { url: 'https://no-such-host.invalid/' });
    assert.equal(on443.status, 422, JSON.stringify(on443.body));
    assert.equal(on443.body.details[0].reason, 'dns');
    // Pro checks any port: the closed loopback port is reached (refused), not refused by the plan.
    const pro8443 = await api.post('/api/v1/tools/ssl-checker/', { url: `https://127.0.0.1:${port}/` });
    assert.equal(pro8443.status, 422, JSON.stringify(pro8443.body));
    assert.equal(pro8443.body.details[0].reason, 'refused');
  });

  it('screenshot: a PNG of the viewport by default, JPEG on request, JSON with a stored URL that works without the key', async () => {
    const res = await fetch(`${svc.url}/api/v1/tools/screenshot/`, {
      method: 'POST', headers: { authorization: `Bearer ${pro.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${site.url}/article/`, width: 640, height: 480 }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    const png = Buffer.from(await res.arrayBuffer());
    assert.deepEqual(pngSize(png), { width: 640, height: 480 });

    const jpeg = await fetch(`${svc.url}/api/v1/tools/screenshot/`, {
      method: 'POST', headers: { authorization: `Bearer ${pro.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${site.url}/article/`, format: 'jpeg', width: 400, height: 300, device_scale_factor: 2 }),
    });
    assert.equal(jpeg.headers.get('content-type'), 'image/jpeg');
    assert.equal(Buffer.from(await jpeg.arrayBuffer()).subarray(0, 3).toString('hex'), 'ffd8ff');

    const stored = await api.post('/api/v1/tools/screenshot/', { url: `${site.url}/article/`, width: 800, height: 600, full_page: true }, { accept: 'application/json' });
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.deepEqual(Object.keys(stored.body).sort(), ['bytes', 'expires_at', 'format', 'height', 'url', 'width']);
    assert.equal(stored.body.format, 'png');
    assert.equal(stored.body.width, 800);
    assert.ok(stored.body.height > 600, 'the full page is taller than the viewport');
    const image = await fetch(stored.body.url);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/png');
    const bytes = Buffer.from(await image.arrayBuffer());
    assert.equal(bytes.length, stored.body.bytes);
    assert.deepEqual(pngSize(bytes), { width: stored.body.width, height: stored.body.height });
    // Another id, a malformed one, or one whose expiry passed: 404.
    const forged = stored.body.url.replace(/\/screenshots\/([0-9a-z]+)-/, '/screenshots/1-');
    for (const u of [stored.body.url.replace(/-[A-Za-z0-9_-]{22}\./, '-AAAAAAAAAAAAAAAAAAAAAA.'), `${svc.url}/api/v1/screenshots/..%2F..%2Fscrape-ai.db/`, forged]) {
      const r = await fetch(u);
      assert.equal(r.status, 404, u);
    }
    for (const bad of [{ width: 50 }, { width: 5000 }, { format: 'gif' }, { delay: 60_000 }, { device_scale_factor: 10 }]) {
      const r = await api.post('/api/v1/tools/screenshot/', { url: `${site.url}/article/`, ...bad });
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.body.code, 'invalid_request');
    }
  });

  it('the SEO analyzer: 30 calls a day per account, then 429 rate_limited with Retry-After; each call 0.1 credit', async () => {
    const account = await createAccount(svc.dataDir, { plan: 'pro' });
    const own = client(svc.url, account.api_key);
    const start = (await own.get('/api/v1/me/')).body.subscription.credits_remaining as number;
    for (let i = 0; i < 30; i++) {
      const r = await own.post('/api/v1/tools/seo-analyzer/', { url: `${site.url}/private/` });
      assert.equal(r.status, 200, `call ${i + 1}: ${JSON.stringify(r.body)}`);
    }
    const refused = await own.post('/api/v1/tools/seo-analyzer/', { url: `${site.url}/private/` });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'rate_limited');
    assert.equal(refused.body.details[0].reason, 'tool_daily_limit');
    assert.equal(refused.body.details[0].limit, 30);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 86_400, `Retry-After ${retryAfter} s is within the day`);
    // Other tools have their own allowance.
    assert.equal((await own.post('/api/v1/tools/content-extractor/', { url: `${site.url}/article/` })).status, 200);
    const end = (await own.get('/api/v1/me/')).body.subscription.credits_remaining as number;
    assert.equal(Math.round((start - end) * 10) / 10, 3.1, '31 successful calls at 0.1 credit each');
  });
});
