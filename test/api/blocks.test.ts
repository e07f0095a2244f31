/**
 * Blocks reported as blocks, over HTTP on the local service (docs/crawler.md, "Blocks"): each test page written after
 * what a bot-protection service serves fails a run with `blocked` naming the service, on both engines (never a run
 * completed with 0 rows); a generation says "the site answered with a … challenge; try the browser engine or a
 * proxy"; the page tools answer 422 `blocked` with the same words and are not charged; ordinary pages that mention
 * captchas or Cloudflare are read as pages; a detail page that is blocked is a warning.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { startTrackedSite, type TrackedSite } from '../helpers/tracked-site.ts';
import { BLOCK_PAGES, ORDINARY_PAGES } from '../fixtures/blocks.ts';

const yaml = (url: string, engine: string, detail = false) => `target: { url: "${url}", engine: ${engine} }
extract:
  container: li.item
  fields:
    - { name: title, selector: a }
    - { name: url, selector: a, type: link }
${detail ? 'detail_fields:\n  fields:\n    - { name: sku, selector: .sku }\n' : ''}`;

describe('blocks through the API', () => {
  let svc: TestService;
  let api: ReturnType<typeof client>;
  let site: TrackedSite;
  const run = async (body: string) => {
    const r = await api.post('/api/v1/run/', { yaml_content: body });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    return (await api.waitForJob(r.body.id, 600_000)).job;
  };

  before(async () => {
    site = await startTrackedSite();
    for (const p of [...BLOCK_PAGES, ...ORDINARY_PAGES]) site.route(`/page/${p.name}`, { status: p.status, headers: p.headers, body: p.body });
    site.route('/mixed/', `<html><body><ul><li class="item"><a href="/item/1">One</a></li><li class="item"><a href="/page/datadome-captcha">Two</a></li></ul></body></html>`);
    svc = await startService({ SAI_WORKERS: '2' });
    api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  for (const engine of ['lightweight', 'heavy'] as const) {
    it(`${engine}: each bot-protection page fails the run with blocked, naming the service`, async () => {
      const jobs = await Promise.all(BLOCK_PAGES.map((p) => run(yaml(`${site.url}/page/${p.name}`, engine))));
      BLOCK_PAGES.forEach((p, i) => {
        const job = jobs[i]!;
        assert.equal(job.status, 'failed', `${p.name}: ${job.status_message}`);
        const kind = p.kind === 'block' ? 'access-denied page' : p.kind;
        assert.ok(job.status_message.startsWith(`blocked: the site answered with `), `${p.name}: ${job.status_message}`);
        assert.ok(job.status_message.includes(`${p.service} ${kind}`), `${p.name}: ${job.status_message}`);
        assert.ok(job.status_message.includes(engine === 'heavy' ? 'try a proxy' : 'try the browser engine or a proxy'), `${p.name}: ${job.status_message}`);
      });
    });

    it(`${engine}: ordinary pages that mention captchas or Cloudflare are pages`, async () => {
      const jobs = await Promise.all(ORDINARY_PAGES.map((p) => run(yaml(`${site.url}/page/${p.name}`, engine))));
      ORDINARY_PAGES.forEach((p, i) => {
        const job = jobs[i]!;
        assert.doesNotMatch(job.status_message, /blocked/, p.name);
        if (p.status >= 400) assert.match(job.status_message, /^target_failed: .*HTTP 403/, p.name);
        else assert.equal(job.status, 'completed', `${p.name}: ${job.status_message}`);
        if (p.body.includes('li class="item"')) assert.equal(job.results.row_count, 4, p.name);
      });
    });

    it(`${engine}: a blocked detail page is a warning naming the service; its fields take their defaults`, async () => {
      const job = await run(yaml(`${site.url}/mixed/`, engine, true));
      assert.equal(job.status, 'completed', job.status_message);
      assert.deepEqual(job.results.data.map((r: { sku: string | null }) => r.sku), ['SKU-1', null]);
      assert.match(job.status_message, /; 1 warning \(listed in the job's warnings\)$/);
      assert.match(job.warnings.join('\n'), /detail page .*\/page\/datadome-captcha: the site answered with a DataDome captcha/);
    });
  }

  it('engine auto: a challenge to a plain request is tried in a browser, and the run then fails as blocked there', async () => {
    const job = await run(yaml(`${site.url}/page/cloudflare-challenge`, 'auto'));
    assert.equal(job.status, 'failed');
    assert.match(job.status_message, /^blocked: the site answered with a Cloudflare challenge; try a proxy/);
  });

  it('a generation says which service answered instead of "no repeated blocks"', async () => {
    const ids = await Promise.all(BLOCK_PAGES.map(async (p) => {
      const r = await api.post('/api/v1/generate/', { url: `${site.url}/page/${p.name}`, prompt: 'the items and their links' });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      return r.body.id as string;
    }));
    for (const [i, id] of ids.entries()) {
      const p = BLOCK_PAGES[i]!;
      const { job } = await api.waitForJob(id, 120_000);
      assert.equal(job.status, 'failed');
      const kind = p.kind === 'block' ? 'access-denied page' : p.kind;
      assert.ok(job.status_message.startsWith(`blocked: the site answered with `) && job.status_message.includes(`${p.service} ${kind}; try the browser engine or a proxy`), `${p.name}: ${job.status_message}`);
      assert.doesNotMatch(job.status_message, /repeated block/);
    }
    const { job } = await api.waitForJob(ids[0]!);
    assert.match(job.status_message, /^blocked: the site answered with a Cloudflare challenge; try the browser engine or a proxy/);
  });

  it('the page tools answer 422 blocked with the service, and are not charged', async () => {
    const credits = async () => (await api.get('/api/v1/me/')).body.subscription.credits_remaining as number;
    const before = await credits();
    const tools = ['content-extractor', 'seo-analyzer', 'lead-generation', 'tech-detector'];
    const calls = BLOCK_PAGES.map((p, i) => ({ p, tool: tools[i % tools.length]! }));
    // The screenshot tool renders the page: three of the services there.
    for (const name of ['cloudflare-challenge', 'datadome-captcha', 'aws-waf-challenge']) calls.push({ p: BLOCK_PAGES.find((x) => x.name === name)!, tool: 'screenshot' });
    for (const { p, tool } of calls) {
      const r = await api.post(`/api/v1/tools/${tool}/`, { url: `${site.url}/page/${p.name}` }, { accept: 'application/json' });
      assert.equal(r.status, 422, `${tool} ${p.name}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 'blocked');
      const kind = p.kind === 'block' ? 'access-denied page' : p.kind;
      assert.ok(r.body.error.startsWith('the site answered with ') && r.body.error.includes(`${p.service} ${kind}`), `${tool} ${p.name}: ${r.body.error}`);
      assert.equal(r.body.details[0].service, p.service);
    }
    assert.equal(await credits(), before, 'no credit spent on a blocked page');
    const ok = await api.post('/api/v1/tools/content-extractor/', { url: `${site.url}/page/article-about-captchas` });
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 300));
    assert.ok(await credits() < before, 'an ordinary page that mentions captchas is analysed and charged');
  });
});
