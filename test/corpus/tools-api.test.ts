/**
 * The seo-analyzer and the content-extractor over real HTTP on the local service, on a real article page of the corpus
 * (Mozilla Readability's bbc-1, served on loopback), against Readability's expected metadata and content. The same
 * checks on the fixture's own article page, with the other tools: test/api/tools.test.ts.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Ajv } from 'ajv';
import { corpusDir } from '../fixtures/corpus.ts';
import { contentReportSchema, htmlText } from '../../lambdas/tools/content.ts';
import { seoReportSchema } from '../../lambdas/tools/seo/index.ts';
import { tokenF1 } from '../../lambdas/tools/content-score.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

const ARTICLE = 'bbc-1';

const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
const SCHEMAS: Record<string, (data: unknown) => boolean> = {
  'seo-analyzer': ajv.compile(seoReportSchema),
  'content-extractor': ajv.compile(contentReportSchema),
};

/** The article at /article/ (and /moved/, a 301 to it), a disallowed /private/ page, a 404 at /gone/. */
async function startArticleSite(): Promise<{ url: string; close(): Promise<void> }> {
  const article = fs.readFileSync(path.join(corpusDir(), 'articles/readability', ARTICLE, 'source.html'));
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    const html = (body: string | Buffer, status = 200) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (p === '/robots.txt') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('User-agent: *\nDisallow: /private/\n'); return; }
    if (p === '/article/') return html(article);
    if (p === '/moved/') { res.writeHead(301, { location: '/article/' }); res.end(); return; }
    if (p === '/private/') return html('<!DOCTYPE html><html><head><title>Staff only</title></head><body><p>Staff</p></body></html>');
    if (p === '/gone/') return html('<!DOCTYPE html><html><head><title>Not found</title></head><body><h1>Not found</h1></body></html>', 404);
    html('<p>no such page</p>', 404);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

describe('page-analysis tools over HTTP on a real article', () => {
  let site: Awaited<ReturnType<typeof startArticleSite>>;
  let svc: TestService;
  let api: ReturnType<typeof client>;

  before(async () => {
    site = await startArticleSite();
    svc = await startService();
    const pro = await createAccount(svc.dataDir, { plan: 'pro' });
    const raw = client(svc.url, pro.api_key);
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

  it('seo-analyzer on a real article: its title, language, Open Graph, JSON-LD, robots.txt and the ten audits; a redirect, a 404, a disallowed page', async () => {
    const expected = JSON.parse(fs.readFileSync(path.join(corpusDir(), 'articles/readability', ARTICLE, 'expected-metadata.json'), 'utf8'));
    const r = await api.post('/api/v1/tools/seo-analyzer/', { url: `${site.url}/moved/` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const seo = r.body;
    assert.equal(seo.url, `${site.url}/article/`, 'the final URL after the redirect');
    assert.equal(seo.status, 200);
    assert.ok(seo.title.startsWith(expected.title), `${seo.title} starts with the article's title`);
    assert.equal(seo.lang, expected.lang);
    assert.equal(seo.open_graph.site_name, expected.siteName);
    assert.equal(seo.open_graph.description, expected.excerpt);
    assert.ok(seo.structured_data.types.includes('Article'), 'the JSON-LD Article');
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

  it('content-extractor on a real article: the text agrees with Readability\'s expected content, with its metadata', async () => {
    const dir = path.join(corpusDir(), 'articles/readability', ARTICLE);
    const expected = JSON.parse(fs.readFileSync(path.join(dir, 'expected-metadata.json'), 'utf8'));
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
    const f1 = tokenF1(c.text, htmlText(fs.readFileSync(path.join(dir, 'expected.html'), 'utf8'))).f1;
    assert.ok(f1 > 0.95, `token F1 ${f1}`);
    assert.ok(c.word_count > 500 && c.reading_time_minutes >= 1);
    for (const img of c.images) assert.match(img.src, /^https?:\/\//, 'image URLs are absolute');
  });
});
