/**
 * An API config's requests go through the run's rules exactly as pages do (issue 38, on issue 39's SiteAccess):
 * robots.txt (a disallowed endpoint is never requested), the 429/5xx retries under the host's pace, bot-protection
 * pages (`blocked`, with the advice that fits a request the run sends over HTTP), and `runConfig` (the path of run jobs
 * and `sai run --local`) choosing the lightweight engine for them.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runConfig } from '../../lambdas/engine/engines.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import { BLOCK_PAGES } from '../fixtures/blocks.ts';
import { serveInline, type InlineServer } from './helpers.ts';

const items = (page: number) => JSON.stringify({ items: page <= 2 ? [{ n: `${page}a` }, { n: `${page}b` }] : [] });

describe('API configs under robots.txt, the pace, retries and block detection', () => {
  let server: InlineServer;
  let fetcher: Fetcher;
  let flaky = 0;
  before(async () => {
    const challenge = BLOCK_PAGES.find((b) => b.name === 'cloudflare-challenge')!;
    server = await serveInline({
      '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nDisallow: /private/\nCrawl-delay: 0\n' },
      '/page': '<html><body>the page</body></html>',
      '/api/items?page=1': { type: 'application/json', body: items(1) },
      '/api/items?page=2': { type: 'application/json', body: items(2) },
      '/api/items?page=3': { type: 'application/json', body: items(3) },
      '/private/api': { type: 'application/json', body: items(1) },
      '/flaky': () => (++flaky === 1 ? { status: 429, type: 'application/json', headers: { 'retry-after': '1' }, body: '{"error":"slow down"}' } : { type: 'application/json', body: items(1) }),
      '/guarded': { status: challenge.status, headers: challenge.headers, body: challenge.body },
    });
    fetcher = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8'] }), { retryBaseMs: 50 });
  });
  after(async () => {
    await fetcher?.close();
    await server?.close();
  });

  const config = (apiUrl: string, extra = '') => parseConfig(`target: { url: "${server.url}/page", api: { url: "${apiUrl}" } }
extract: { records: items, fields: [{ name: n, path: n }] }
${extra}`);

  it('runConfig: auto reads the API over HTTP, robots.txt read once, the page itself never loaded', async () => {
    const before = new Map(server.hits);
    const { choice, result } = await runConfig(config('/api/items?page={page}', 'pagination: { type: page }\n'), { fetcher });
    assert.equal(choice.engine, 'lightweight');
    assert.match(choice.reason, /reads a JSON API/);
    assert.deepEqual(result.rows.map((r) => r.n), ['1a', '1b', '2a', '2b']);
    const delta = (p: string) => (server.hits.get(p) ?? 0) - (before.get(p) ?? 0);
    assert.equal(delta('/robots.txt'), 1);
    assert.equal(delta('/page'), 0, 'an API config loads no page');
    assert.equal(delta('/api/items?page=3'), 1, 'the empty answer ends the listing');
  });

  it('a disallowed endpoint is never requested: robots_disallowed', async () => {
    await assert.rejects(runConfig(config('/private/api'), { fetcher }), (e: Error & { code: string }) => e.code === 'robots_disallowed' && /line 2: "Disallow: \/private\/"/.test(e.message));
    assert.equal(server.hits.get('/private/api') ?? 0, 0);
  });

  it('a 429 with Retry-After is retried under the host\'s pace, then read', async () => {
    const started = Date.now();
    const { result } = await runConfig(config('/flaky'), { fetcher });
    assert.deepEqual(result.rows.map((r) => r.n), ['1a', '1b']);
    assert.equal(server.hits.get('/flaky'), 2);
    assert.ok(Date.now() - started >= 900, 'waited for Retry-After');
  });

  it('a bot-protection answer fails the run with blocked, advising a proxy (a browser would send the same request)', async () => {
    await assert.rejects(runConfig(config('/guarded'), { fetcher }), (e: Error & { code: string }) => e.code === 'blocked' && /Cloudflare challenge/.test(e.message) && /try a proxy/.test(e.message) && !/browser engine/.test(e.message));
  });

  it('ignore robots.txt where the config says so', async () => {
    const { result } = await runConfig(parseConfig(`target: { url: "${server.url}/page", robots: ignore, api: { url: /private/api } }\nextract: { records: items, fields: [{ name: n, path: n }] }\n`), { fetcher });
    assert.equal(result.rows.length, 2);
  });
});
