/**
 * What a run changed since the last one (issue 26), over HTTP on the local service: a saved config runs twice on a
 * loopback site whose rows change in between. Keyed (`output.deduplicate_fields: [url]`): a row added, one removed,
 * one whose price changed; unkeyed (matched on all values): the changed row is one removed and one added. The status
 * answer carries the counts; GET /jobs/{id}/changes/ pages through them; a first run says it had nothing to compare
 * with; another account's job is 404.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

/** The site's products: the test changes them between runs. */
let products: Array<{ name: string; price: string; slug: string }> = [];

function listing(): string {
  const items = products.map((p) => `<li class="product"><a href="/p/${p.slug}">${p.name}</a> <span class="price">${p.price}</span></li>`).join('');
  return `<!doctype html><html><head><title>Shop</title></head><body><ul>${items}</ul></body></html>`;
}

function yaml(base: string, keyed: boolean): string {
  return `target: { url: "${base}/shop/", engine: lightweight }
extract:
  container: li.product
  fields:
    - { name: name, selector: a }
    - { name: price, selector: .price }
    - { name: url, selector: a, type: attribute, attribute: href }
${keyed ? 'output: { deduplicate_fields: [url] }\n' : ''}`;
}

describe('changes between runs of a saved config (issue 26)', () => {
  let site: http.Server;
  let base: string;
  let svc: TestService;
  let api: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;

  before(async () => {
    site = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(listing());
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    svc = await startService();
    api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
    other = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
  });
  after(async () => {
    await svc?.stop();
    await new Promise((r) => site?.close(r));
  });

  /** Runs the saved config to completion; returns its job id and final status answer. */
  async function run(configId: string): Promise<{ id: string; status: any }> {
    const r = await api.post('/api/v1/run/', { config_id: configId });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const { job } = await api.waitForJob(r.body.id, 60_000);
    assert.equal(job.status, 'completed', job.status_message);
    return { id: r.body.id, status: job };
  }

  async function saveConfig(keyed: boolean): Promise<string> {
    const r = await api.post('/api/v1/configs/', { name: keyed ? 'keyed' : 'unkeyed', target_url: `${base}/shop/`, yaml_content: yaml(base, keyed) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id;
  }

  it('keyed on url: added, removed, and changed with the old and new values; paged; a first run had nothing to compare with', async () => {
    products = [{ name: 'Alpha', price: '$10', slug: 'a' }, { name: 'Beta', price: '$20', slug: 'b' }, { name: 'Gamma', price: '$30', slug: 'c' }];
    const configId = await saveConfig(true);
    const first = await run(configId);
    assert.deepEqual(first.status.changes, { added: 0, removed: 0, changed: 0, compared_with: null });
    const firstChanges = await api.get(`/api/v1/jobs/${first.id}/changes/`);
    assert.equal(firstChanges.status, 200);
    assert.equal(firstChanges.body.compared_with, null);
    assert.deepEqual(firstChanges.body.results, []);
    assert.match(firstChanges.body.message, /first completed run/);

    // Beta goes, Delta comes, Alpha's price changes.
    products = [{ name: 'Alpha', price: '$12', slug: 'a' }, { name: 'Gamma', price: '$30', slug: 'c' }, { name: 'Delta', price: '$40', slug: 'd' }];
    const second = await run(configId);
    assert.deepEqual(second.status.changes, { added: 1, removed: 1, changed: 1, compared_with: first.id });
    const all = await api.get(`/api/v1/jobs/${second.id}/changes/`);
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.key_fields, ['url']);
    assert.equal(all.body.total, 3);
    assert.deepEqual(all.body.results, [
      { change: 'added', row: { name: 'Delta', price: '$40', url: '/p/d' } },
      { change: 'removed', row: { name: 'Beta', price: '$20', url: '/p/b' } },
      { change: 'changed', row: { name: 'Alpha', price: '$12', url: '/p/a' }, key: { url: '/p/a' }, fields: { price: { old: '$10', new: '$12' } } },
    ]);
    const changedOnly = await api.get(`/api/v1/jobs/${second.id}/changes/?change=changed`);
    assert.equal(changedOnly.body.total, 1);
    assert.deepEqual(changedOnly.body.results.map((e: { change: string }) => e.change), ['changed']);
    const page2 = await api.get(`/api/v1/jobs/${second.id}/changes/?offset=1&limit=1`);
    assert.deepEqual(page2.body.results.map((e: { change: string }) => e.change), ['removed']);
    assert.equal((await api.get(`/api/v1/jobs/${second.id}/changes/?offset=3`)).body.results.length, 0);

    // A third run with nothing new: compared with the second, no change.
    const third = await run(configId);
    assert.deepEqual(third.status.changes, { added: 0, removed: 0, changed: 0, compared_with: second.id });
  });

  it('unkeyed (all values): a changed row is one removed and one added, and duplicates count as often as they occur', async () => {
    products = [{ name: 'One', price: '$1', slug: '1' }, { name: 'Two', price: '$2', slug: '2' }, { name: 'Two', price: '$2', slug: '2' }];
    const configId = await saveConfig(false);
    await run(configId);
    products = [{ name: 'One', price: '$1.50', slug: '1' }, { name: 'Two', price: '$2', slug: '2' }];
    const second = await run(configId);
    assert.equal(second.status.changes.added, 1);
    assert.equal(second.status.changes.removed, 2, 'One at $1 and one of the two Twos');
    assert.equal(second.status.changes.changed, 0);
    const body = (await api.get(`/api/v1/jobs/${second.id}/changes/`)).body;
    assert.equal(body.key_fields, null);
    assert.match(body.message, /all values/);
  });

  it('a run of inline YAML has no changes; another account gets 404; bad paging is a 400', async () => {
    const r = await api.post('/api/v1/run/', { yaml_content: yaml(base, true) });
    const { job } = await api.waitForJob(r.body.id, 60_000);
    assert.equal('changes' in job, false, "a run of inline YAML keeps docs/spec.md's status shape");
    const inline = await api.get(`/api/v1/jobs/${r.body.id}/changes/`);
    assert.equal(inline.status, 200);
    assert.match(inline.body.message, /saved config/);
    const theirs = await other.get(`/api/v1/jobs/${r.body.id}/changes/`);
    assert.equal(theirs.status, 404);
    assert.equal(theirs.body.code, 'not_found');
    for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'change=moved', 'limit=abc']) {
      const bad = await api.get(`/api/v1/jobs/${r.body.id}/changes/?${q}`);
      assert.equal(bad.status, 400, q);
      assert.equal(bad.body.code, 'invalid_request', q);
    }
  });
});
