/**
 * Self-healing over real HTTP (docs/generate.md): a saved config whose run used to find items and now finds
 * none is regenerated once from its stored prompt on plans that have self-healing (variant B, Pro), saved
 * in place, and the run goes on with it, saying so; on a plan without it the run ends with no rows.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

/** A shop page in two markups: the site's redesign changes every class and tag of the listing. */
function shopPage(version: 'old' | 'new'): string {
  const items = Array.from({ length: 12 }, (_, i) => ({ name: `Lamp model ${i + 1}`, price: (19.5 + i * 3).toFixed(2) }));
  const body = version === 'old'
    ? `<div class="catalog">${items.map((x) => `<div class="product"><h2 class="name"><a href="/p/${x.name.replace(/\D/g, '')}">${x.name}</a></h2><span class="price">$${x.price}</span><p class="blurb">A lamp for reading, number ${x.name.replace(/\D/g, '')}.</p></div>`).join('')}</div>`
    : `<main><ul class="grid">${items.map((x) => `<li class="card"><a class="card-link" href="/item/${x.name.replace(/\D/g, '')}"><h3 class="card-title">${x.name}</h3></a><b class="amount">$${x.price}</b><p class="card-text">A lamp for reading, number ${x.name.replace(/\D/g, '')}.</p></li>`).join('')}</ul></main>`;
  return `<!doctype html><html><head><title>Lamps</title></head><body><header><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>${body}<footer>© Lamps</footer></body></html>`;
}

describe('self-healing', () => {
  let version: 'old' | 'new' = 'old';
  let server: http.Server;
  let shop: string;
  let svc: TestService;

  before(async () => {
    server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(shopPage(version)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    shop = `http://127.0.0.1:${(server.address() as AddressInfo).port}/lamps/`;
    svc = await startService();
  });
  after(async () => {
    await svc?.stop();
    await new Promise<void>((r) => server.close(() => r()));
  });

  /** Generates a config for the shop, runs it once on the old markup; returns the config id. */
  async function savedAndRun(api: ReturnType<typeof client>): Promise<string> {
    const gen = await api.post('/api/v1/generate/', { url: shop, prompt: 'lamp names and prices' });
    const g = (await api.waitForJob(gen.body.id, 60_000)).job;
    assert.equal(g.status, 'completed', g.status_message);
    const run = await api.post('/api/v1/run/', { config_id: g.yaml_config.id });
    const r = (await api.waitForJob(run.body.id, 60_000)).job;
    assert.equal(r.results.row_count, 12, r.status_message);
    return g.yaml_config.id;
  }

  it('Pro: after a redesign the run regenerates the config from its prompt, saves it and finds the items', async () => {
    version = 'old';
    const api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
    const id = await savedAndRun(api);
    const oldYaml = (await api.get(`/api/v1/configs/${id}/`)).body.yaml_content;
    version = 'new';
    const run = await api.post('/api/v1/run/', { config_id: id });
    const { job } = await api.waitForJob(run.body.id, 60_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.results.row_count, 12);
    assert.match(job.status_message, /found no items \(it found 12 on .*\); regenerated it from its prompt and saved the new version/);
    assert.equal(job.results.data[0].price, 19.5);
    assert.match(job.results.data[0].name, /Lamp model 1/);
    const saved = await api.get(`/api/v1/configs/${id}/`);
    assert.notEqual(saved.body.yaml_content, oldYaml);
    assert.match(saved.body.yaml_content, /li\.card/);
    assert.equal(job.yaml_config.yaml_content, saved.body.yaml_content, 'the job shows the config it ran');
    assert.equal(saved.body.prompt, 'lamp names and prices');
  });

  it('Growth (no self-healing): the run ends with no rows and the config is left as it was', async () => {
    version = 'old';
    const api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'growth' })).api_key);
    const id = await savedAndRun(api);
    const oldYaml = (await api.get(`/api/v1/configs/${id}/`)).body.yaml_content;
    version = 'new';
    const run = await api.post('/api/v1/run/', { config_id: id });
    const { job } = await api.waitForJob(run.body.id, 60_000);
    assert.equal(job.status, 'completed');
    assert.equal(job.results.row_count, 0);
    assert.doesNotMatch(job.status_message, /regenerated/);
    assert.equal((await api.get(`/api/v1/configs/${id}/`)).body.yaml_content, oldYaml);
  });

  it('a config that never found items is not regenerated (nothing says what it used to find)', async () => {
    version = 'new';
    const api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
    const yaml = `target: { url: "${shop}" }\nextract:\n  container: div.product\n  fields:\n    - { name: name, selector: h2 }\n`;
    const created = await api.post('/api/v1/configs/', { name: 'never worked', target_url: shop, yaml_content: yaml, prompt: 'lamp names' });
    const run = await api.post('/api/v1/run/', { config_id: created.body.id });
    const { job } = await api.waitForJob(run.body.id, 60_000);
    assert.equal(job.results.row_count, 0);
    assert.doesNotMatch(job.status_message, /regenerated/);
  });
});
