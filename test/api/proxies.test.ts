/**
 * Upstream proxies and proxy sessions over HTTP on the local service, on both engines, through real proxies on
 * loopback (tinyproxy with Basic credentials, microsocks with SOCKS5 credentials; test/helpers/upstream-proxies.ts):
 * the pages (robots.txt included) reach the site from the proxy's address; a session blocked by a bot-protection
 * page is retired and the request goes on the next, and the status message counts it; the guard still refuses a
 * private target before anything is sent to the proxy; a proxy whose credentials are refused fails the run without
 * its credentials in the status or the service's output; a config naming an undeclared group is refused.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { startTrackedSite, type TrackedSite } from '../helpers/tracked-site.ts';
import { startMicrosocks, startTinyproxy, type LoopbackProxy } from '../helpers/upstream-proxies.ts';
import { BLOCK_PAGES } from '../fixtures/blocks.ts';

const HTTP_PASSWORD = 'tp-Secret-4711';
const SOCKS_PASSWORD = 'ms-Secret-0815';

const yaml = (url: string, engine: string, proxy: string) => `target: { url: "${url}", engine: ${engine}, proxy: ${proxy} }
extract:
  container: li.item
  fields:
    - { name: title, selector: a }
    - { name: url, selector: a, type: link }
detail_fields:
  fields:
    - { name: sku, selector: .sku }
`;

describe('upstream proxies through the API', () => {
  let svc: TestService;
  let api: ReturnType<typeof client>;
  let http: LoopbackProxy;
  let socks: LoopbackProxy;
  let badHttp: LoopbackProxy;
  const sites: TrackedSite[] = [];
  const site = async (o: Parameters<typeof startTrackedSite>[0] = {}) => {
    const s = await startTrackedSite(o);
    sites.push(s);
    return s;
  };
  const run = async (body: string) => {
    const r = await api.post('/api/v1/run/', { yaml_content: body });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    return (await api.waitForJob(r.body.id, 300_000)).job;
  };

  before(async () => {
    http = await startTinyproxy({ user: 'alice', password: HTTP_PASSWORD, bind: '127.0.0.3' });
    socks = await startMicrosocks({ user: 'bob', password: SOCKS_PASSWORD, bind: '127.0.0.2' });
    badHttp = await startTinyproxy({ user: 'carol', password: 'the-right-one', bind: '127.0.0.4' });
    const wrong = badHttp.url.replace('the-right-one', 'Wrong-Pass-999');
    svc = await startService({
      SAI_WORKERS: '2',
      SAI_PROXIES: JSON.stringify({ default: null, groups: { http: [http.url], socks: [socks.url], pair: [http.url, socks.url], wrong: [wrong] } }),
    });
    api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
  });
  after(async () => {
    await svc?.stop();
    for (const p of [http, socks, badHttp]) await p?.stop();
    for (const s of sites) await s.close();
  });

  for (const engine of ['lightweight', 'heavy'] as const) {
    for (const [group, bind] of [['http', '127.0.0.3'], ['socks', '127.0.0.2']] as const) {
      it(`${engine} through the ${group} proxy: every request, robots.txt included, comes from the proxy`, async () => {
        const s = await site({ items: 2 });
        const job = await run(yaml(`${s.url}/shop/`, engine, group));
        assert.equal(job.status, 'completed', job.status_message);
        assert.deepEqual(job.results.data.map((r: { sku: string }) => r.sku), ['SKU-1', 'SKU-2']);
        assert.ok(s.hits.length >= 4, s.hits.map((h) => h.path).join(', '));
        assert.deepEqual([...new Set(s.hits.map((h) => h.from))], [bind], `requests came from ${[...new Set(s.hits.map((h) => h.from))].join(', ')}`);
        if (group === 'http') assert.match(http.log(), new RegExp(`CONNECT 127\\.0\\.0\\.1:${new URL(s.url).port}`));
      });
    }

    it(`${engine}: a session blocked by a bot-protection page is retired and the request goes on the next one`, async () => {
      const s = await site({ items: 2 });
      const challenge = BLOCK_PAGES.find((p) => p.name === 'cloudflare-challenge')!;
      // The first proxy address seen is blocked, the other gets the pages (the pool starts at a random proxy).
      let blocked = '';
      for (const path of ['/shop/', '/item/1', '/item/2', '/robots.txt']) {
        s.route(path, (_n, req) => {
          const from = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
          if (path !== '/robots.txt') blocked ||= from;
          if (from === blocked) return { status: challenge.status, headers: challenge.headers, body: challenge.body };
          if (path === '/robots.txt') return { status: 404, body: '' };
          return path === '/shop/' ? '<html><body><ul><li class="item"><a href="/item/1">A</a></li><li class="item"><a href="/item/2">B</a></li></ul></body></html>'
            : `<html><body><p class="sku">SKU-${path.slice(-1)}</p></body></html>`;
        });
      }
      const job = await run(yaml(`${s.url}/shop/`, engine, 'pair'));
      assert.equal(job.status, 'completed', job.status_message);
      assert.deepEqual(job.results.data.map((r: { sku: string }) => r.sku), ['SKU-1', 'SKU-2']);
      assert.match(job.status_message, /1 proxy session\(s\) retired \(Cloudflare challenge\)/);
      const used = new Set(s.hits.map((h) => h.from));
      assert.deepEqual([...used].sort(), ['127.0.0.2', '127.0.0.3']);
    });

    it(`${engine}: the guard refuses a private target before the proxy is asked`, async () => {
      const s = await site({ items: 2 });
      s.route('/item/2', { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' }, body: '' });
      const before = http.log();
      const job = await run(yaml(`${s.url}/shop/`, engine, 'http'));
      assert.equal(job.status, 'completed', job.status_message);
      assert.deepEqual(job.results.data.map((r: { sku: string | null }) => r.sku), ['SKU-1', null]);
      assert.match(job.warnings.join('\n'), /169\.254\.169\.254/);
      assert.doesNotMatch(http.log().slice(before.length), /169\.254/, 'no tunnel to the metadata address was asked for');
    });

    it(`${engine}: a proxy that refuses its credentials fails the run without the credentials anywhere`, async () => {
      const s = await site({ items: 1 });
      const job = await run(yaml(`${s.url}/shop/`, engine, 'wrong'));
      assert.equal(job.status, 'failed');
      assert.match(job.status_message, /wrong#1 \(127\.0\.0\.1:\d+\)/);
      for (const secret of ['Wrong-Pass-999', HTTP_PASSWORD, SOCKS_PASSWORD, 'carol:']) {
        assert.ok(!job.status_message.includes(secret), job.status_message);
        assert.ok(!svc.output().includes(secret), `the service printed ${secret}`);
      }
      assert.equal(s.hits.length, 0);
    });
  }

  it('a config naming a group the operator did not declare is refused with invalid_config', async () => {
    const r = await api.post('/api/v1/run/', { yaml_content: yaml('http://127.0.0.1:9/', 'lightweight', 'nosuch') });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'invalid_config');
    assert.match(r.body.error, /no proxy group named "nosuch" \(the operator declares: http, socks, pair, wrong; or none\)/);
  });
});
