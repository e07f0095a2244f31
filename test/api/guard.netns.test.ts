/**
 * The outbound guard seen through the API. test/run.ts runs this file inside a network namespace with
 * only loopback (`unshare -n`) when the machine allows it, so even a guard bug could not send a packet
 * out; the guard refuses these targets before any socket opens anyway (test/unit/guard.test.ts).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

const cfg = (url: string) => `target: { url: "${url}" }
extract:
  container: p.ok
  fields:
    - { name: text, type: text }
`;

describe('outbound guard through the API', () => {
  let site: FixtureSite;
  let open: TestService;
  let closed: TestService;
  let openKey: string;
  let closedKey: string;

  before(async () => {
    site = await startFixtureSite();
    [open, closed] = await Promise.all([startService({ SAI_OUTBOUND_ALLOW: '127.0.0.0/8' }), startService({ SAI_OUTBOUND_ALLOW: '' })]);
    openKey = (await createAccount(open.dataDir, { plan: 'pro' })).api_key;
    closedKey = (await createAccount(closed.dataDir, { plan: 'pro' })).api_key;
  });
  after(async () => {
    await open?.stop();
    await closed?.stop();
    await site?.close();
  });

  it('with no allowlist, loopback in every notation is refused at submission (400 target_forbidden)', async () => {
    const api = client(closed.url, closedKey);
    const port = site.port;
    for (const host of ['127.0.0.1', '2130706433', '0x7f000001', '0x7f.1', '0177.0.0.1', '127.1', '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '0.0.0.0']) {
      const r = await api.post('/api/v1/run/', { yaml_content: cfg(`http://${host}:${port}/flaky/a/?fail=0`) });
      assert.equal(r.status, 400, `${host}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 'target_forbidden', host);
      assert.match(r.body.error, /loopback|unspecified/);
    }
    assert.equal(site.hits.size, 0, 'the site saw no request');
  });

  it('with no allowlist, a name that resolves inside (localhost) fails the job with target_forbidden', async () => {
    const api = client(closed.url, closedKey);
    const r = await api.post('/api/v1/run/', { yaml_content: cfg(`http://localhost:${site.port}/flaky/b/?fail=0`) });
    assert.equal(r.status, 202, 'a name is resolved when the job runs');
    const { job } = await api.waitForJob(r.body.id);
    assert.equal(job.status, 'failed');
    assert.match(job.status_message, /^target_forbidden: .*localhost.*loopback/);
    assert.equal(site.hits.size, 0, 'no connection reached the site');
  });

  it('with 127.0.0.0/8 allowed, other notations of an allowed address work', async () => {
    const api = client(open.url, openKey);
    const r = await api.post('/api/v1/run/', { yaml_content: cfg(`http://0x7f.1:${site.port}/flaky/c/?fail=0`) });
    assert.equal(r.status, 202);
    const { job } = await api.waitForJob(r.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    assert.deepEqual(job.results.data, [{ text: 'ok c' }]);
  });

  it('a redirect from an allowed site into a private or metadata address fails the job, and nothing is fetched there', async () => {
    const api = client(open.url, openKey);
    for (const to of ['http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/', 'http://[::ffff:10.0.0.1]/', 'http://192.168.1.1:8080/', 'file:///etc/passwd']) {
      const r = await api.post('/api/v1/run/', { yaml_content: cfg(`${site.url}/redirect/?to=${encodeURIComponent(to)}`) });
      assert.equal(r.status, 202);
      const { job } = await api.waitForJob(r.body.id);
      assert.equal(job.status, 'failed', to);
      assert.match(job.status_message, /^target_forbidden: Refused/, to);
    }
  });

  it('metadata and private addresses are refused even when loopback is allowed', async () => {
    const api = client(open.url, openKey);
    for (const url of ['http://169.254.169.254/', 'http://[fd00:ec2::254]/', 'http://100.64.0.1/', 'http://172.16.0.1/']) {
      const r = await api.post('/api/v1/run/', { yaml_content: cfg(url) });
      assert.equal(r.body.code, 'target_forbidden', url);
    }
  });
});
