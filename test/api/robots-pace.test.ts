/**
 * robots.txt and the pace per host, over HTTP on the local service, on both engines (docs/crawler.md, "robots.txt",
 * "Pace"): a disallowed listing fails the run with `robots_disallowed` and is never requested; disallowed detail
 * pages are skipped with one warning naming the rule; robots.txt is fetched once per host per run; Crawl-delay and
 * `target.politeness` space the requests to a host; the automatic mode slows down on a 429 and speeds up after;
 * `target.robots: ignore` runs only for the operator's accounts (or a plan that allows it).
 * Timing is asserted as lower bounds on the median gap and the span (a loaded machine makes gaps longer, and a late
 * request shortens only the one gap after it) and one comparison of gaps.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { client, createAccount, startService, tempDataDir, type TestService } from '../helpers/service.ts';
import { gaps, startTrackedSite, type TrackedSite } from '../helpers/tracked-site.ts';

const ENGINES = ['lightweight', 'heavy'] as const;
/** How much earlier than its slot a request may reach the server, ms: the one before it may have been slower on its way. */
const SLACK = { lightweight: 100, heavy: 150 } as const;

/**
 * The requests reached the server `delay` ms apart: the median gap is at least `delay` less the slack, and the whole
 * run spans at least (n - 2) × delay. The pace books the starts of requests; a request it let go may reach the server
 * late (a loaded machine; the run's first page on a new connection; in a browser the protocol's round trip after the
 * pace), which shortens the one gap after it. The first request's lateness shortens the whole span as much, and the
 * first page of a run is the one most likely late (CI failed the fixed-pace test once on a loaded machine, with a span
 * of (n - 1) × delay less 100 ms as the bound), so the span allows one whole gap of it. A crawl without a pace (all
 * gaps a few ms) fails both: its median is a few ms and its span a few tens.
 */
function assertPaced(times: number[], delay: number, engine: keyof typeof SLACK): void {
  const g = gaps(times);
  const sorted = [...g].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  assert.ok(median >= delay - SLACK[engine], `median gap ${median} ms of ${g.join(', ')} ms`);
  assert.ok(times.at(-1)! - times[0]! >= (times.length - 2) * delay, `span of ${g.join(', ')} ms`);
}

function config(site: TrackedSite, engine: string, extra = '', o: { detail?: boolean; target?: string } = {}): string {
  return `target:
  url: "${site.url}${o.target ?? '/shop/'}"
  engine: ${engine}
${extra}extract:
  container: li.item
  fields:
    - { name: title, selector: a }
    - { name: url, selector: a, type: link }
${o.detail === false ? '' : 'detail_fields:\n  fields:\n    - { name: sku, selector: .sku }\n'}`;
}

describe('robots.txt and pace through the API', () => {
  let svc: TestService;
  let api: ReturnType<typeof client>;
  let operator: ReturnType<typeof client>;
  const sites: TrackedSite[] = [];
  const site = async (o: Parameters<typeof startTrackedSite>[0]) => {
    const s = await startTrackedSite(o);
    sites.push(s);
    return s;
  };
  const run = async (who: ReturnType<typeof client>, yaml: string) => {
    const r = await who.post('/api/v1/run/', { yaml_content: yaml });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    return (await who.waitForJob(r.body.id, 90_000)).job;
  };

  before(async () => {
    const dataDir = tempDataDir();
    const plans = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../lambdas/core/plans.json'), 'utf8'));
    plans.credits.operator_accounts = ['ops@example.com'];
    const plansFile = path.join(dataDir, 'plans.json');
    fs.writeFileSync(plansFile, JSON.stringify(plans));
    svc = await startService({ DATA_DIR: dataDir, SAI_WORKERS: '2', SAI_PLANS_FILE: plansFile });
    api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
    operator = client(svc.url, (await createAccount(svc.dataDir, { plan: 'growth', email: 'ops@example.com' })).api_key);
  });
  after(async () => {
    await svc?.stop();
    for (const s of sites) await s.close();
  });

  for (const engine of ENGINES) {
    it(`${engine}: a listing robots.txt disallows fails the run with robots_disallowed, naming the rule, and is never requested`, async () => {
      const s = await site({ robots: 'User-agent: *\nAllow: /item/\n\nUser-agent: scrape-ai\nDisallow: /shop/\n' });
      const job = await run(api, config(s, engine));
      assert.equal(job.status, 'failed');
      assert.match(job.status_message, /^robots_disallowed: .*\/shop\/ is disallowed by .*\/robots\.txt \(line 5: "Disallow: \/shop\/"\)/);
      assert.equal(s.count('/shop/'), 0, 'the listing was never requested');
      assert.equal(s.count('/robots.txt'), 1);
    });

    it(`${engine}: detail pages robots.txt disallows are skipped with one warning naming the rule; robots.txt is fetched once`, async () => {
      const s = await site({ items: 5, robots: '# shop rules\nUser-agent: *\nDisallow: /item/2\nDisallow: /item/4\n' });
      const job = await run(api, config(s, engine));
      assert.equal(job.status, 'completed', job.status_message);
      assert.deepEqual(job.results.data.map((r: { sku: string | null }) => r.sku), ['SKU-1', null, 'SKU-3', null, 'SKU-5']);
      assert.match(job.warnings.join('\n'), /robots\.txt: 1 detail page\(s\) not loaded, disallowed by http:\/\/127\.0\.0\.1:\d+\/robots\.txt line 3 \("Disallow: \/item\/2"\)/);
      assert.match(job.warnings.join('\n'), /line 4 \("Disallow: \/item\/4"\)/);
      assert.equal(s.count('/item/2') + s.count('/item/4'), 0);
      assert.equal(s.count('/robots.txt'), 1, 'one fetch per host per run');
    });

    it(`${engine}: Crawl-delay spaces the requests to the host`, async () => {
      const s = await site({ items: 2, robots: 'User-agent: *\nCrawl-delay: 1\n' });
      const job = await run(api, config(s, engine));
      assert.equal(job.status, 'completed', job.status_message);
      const times = s.pageTimes();
      assert.equal(times.length, 3, JSON.stringify(s.hits.map((h) => h.path)));
      assertPaced(times, 1000, engine);
    });

    it(`${engine}: target.politeness fixed keeps its delay between requests to one host`, async () => {
      const s = await site({ items: 5 });
      const job = await run(api, config(s, engine, '  politeness: { mode: fixed, delay: 400 }\n'));
      assert.equal(job.status, 'completed', job.status_message);
      const times = s.pageTimes();
      assert.equal(times.length, 6);
      assertPaced(times, 400, engine);
      assert.equal(s.count('/robots.txt'), 1);
    });

    it(`${engine}: the automatic pace slows down after a 429 and speeds up again`, async () => {
      const s = await site({ items: 12 });
      s.route('/item/3', (n) => (n === 1 ? { status: 429, body: 'slow down' } : '<html><body><p class="sku">SKU-3</p></body></html>'));
      const job = await run(api, config(s, engine));
      assert.equal(job.status, 'completed', job.status_message);
      assert.equal(job.results.data[2].sku, 'SKU-3', 'the 429 was retried');
      const first429 = s.hits.findIndex((h) => h.path === '/item/3');
      const after = s.hits.slice(first429).filter((h) => h.path !== '/robots.txt').map((h) => h.at);
      const g = gaps(after);
      const slowest = Math.max(...g);
      assert.ok(slowest >= 1000 - SLACK[engine], `after the 429 the gap grows to 1 s: ${g.join(', ')} ms`);
      assert.ok(g[g.length - 1]! < slowest / 2, `and comes down again: ${g.join(', ')} ms`);
    });
  }

  it('a 429 with Retry-After is retried after that time', async () => {
    const s = await site({ items: 1 });
    s.route('/item/1', (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '2' }, body: 'later' } : '<html><body><p class="sku">SKU-1</p></body></html>'));
    const job = await run(api, config(s, 'lightweight'));
    assert.equal(job.status, 'completed', job.status_message);
    const t = s.hits.filter((h) => h.path === '/item/1').map((h) => h.at);
    assert.equal(t.length, 2);
    assert.ok(t[1]! - t[0]! >= 1950, `${t[1]! - t[0]!} ms`);
  });

  it('a generation obeys robots.txt too: a disallowed page is never requested', async () => {
    const s = await site({ robots: 'User-agent: *\nDisallow: /shop/\n' });
    const r = await api.post('/api/v1/generate/', { url: `${s.url}/shop/`, prompt: 'the items and their links' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const { job } = await api.waitForJob(r.body.id, 120_000);
    assert.equal(job.status, 'failed');
    assert.match(job.status_message, /^robots_disallowed: .*\/shop\/ is disallowed by .*line 2: "Disallow: \/shop\/"/);
    assert.equal(s.count('/shop/'), 0);
    assert.equal(s.count('/robots.txt'), 1);
  });

  it('target.robots: ignore is refused with plan_required unless the plans file allows it; the operator\'s account may', async () => {
    const s = await site({ robots: 'User-agent: *\nDisallow: /\n' });
    const yaml = config(s, 'lightweight', '  robots: ignore\n', { detail: false });
    const refused = await api.post('/api/v1/run/', { yaml_content: yaml });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'plan_required');
    assert.deepEqual(refused.body.details[0].required, 'robots_ignore');
    const job = await run(operator, yaml);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.results.row_count, 4);
    assert.equal(s.count('/robots.txt'), 0, 'robots.txt is not even read');
  });
});
