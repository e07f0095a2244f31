/**
 * GET /api/v1/jobs/{id}/status/ of a finished job over real HTTP (lambdas/http/job-status.ts): the answer is the same
 * on every poll, carries a strong ETag, and `If-None-Match` with it gets a 304 without a body; another account's poll
 * of the same id is still a 404 (the kept answer is per account); an unfinished job has no ETag.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

describe('status of a finished job: kept answer, ETag, 304', () => {
  let site: FixtureSite;
  let svc: TestService;
  let key: string;
  let other: string;

  before(async () => {
    site = await startFixtureSite();
    svc = await startService();
    key = (await createAccount(svc.dataDir, { plan: 'pro' })).api_key;
    other = (await createAccount(svc.dataDir, { plan: 'pro' })).api_key;
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  const yaml = (path: string) => `target: { url: "${site.url}${path}" }\nextract: { container: div.quote, fields: [{ name: text, selector: span.text }] }\n`;

  it('a completed job: the same body on every poll, a strong ETag, 304 for If-None-Match, 404 for another account', async () => {
    const api = client(svc.url, key);
    const run = await api.post('/api/v1/run/', { yaml_content: yaml('/quotes/') });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    const { job } = await api.waitForJob(run.body.id);
    assert.equal(job.status, 'completed', job.status_message);
    const path = `/api/v1/jobs/${run.body.id}/status/`;
    const first = await fetch(svc.url + path, { headers: { authorization: `Bearer ${key}` } });
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[A-Za-z0-9_-]{27}"$/);
    const text = await first.text();
    assert.equal(JSON.parse(text).results.row_count, 10);
    for (let i = 0; i < 3; i++) {
      const again = await fetch(svc.url + path, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(await again.text(), text);
      assert.equal(again.headers.get('etag'), etag);
      assert.equal(again.headers.get('cache-control'), 'no-store');
    }
    for (const ifNoneMatch of [etag!, `W/${etag}`, `"x", ${etag}`, '*']) {
      const notModified = await fetch(svc.url + path, { headers: { authorization: `Bearer ${key}`, 'if-none-match': ifNoneMatch } });
      assert.equal(notModified.status, 304, ifNoneMatch);
      assert.equal(notModified.headers.get('etag'), etag);
      assert.equal(await notModified.text(), '');
    }
    const changed = await fetch(svc.url + path, { headers: { authorization: `Bearer ${key}`, 'if-none-match': '"something-else"' } });
    assert.equal(changed.status, 200);
    assert.equal(await changed.text(), text);
    for (const headers of [{ authorization: `Bearer ${other}` }, { authorization: `Bearer ${other}`, 'if-none-match': etag! }] as Array<Record<string, string>>) {
      const theirs = await fetch(svc.url + path, { headers });
      assert.equal(theirs.status, 404, "another account's poll");
      assert.equal((await theirs.json()).code, 'not_found');
    }
    const noKey = await fetch(svc.url + path, { headers: { 'if-none-match': etag! } });
    assert.equal(noKey.status, 401, 'the key is checked before the kept answer is used');
  });

  it('an unfinished job has no ETag and ignores If-None-Match; once it fails its answer is kept too', async () => {
    const api = client(svc.url, key);
    const run = await api.post('/api/v1/run/', { yaml_content: yaml('/slow/1500/quotes/') });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    const path = `/api/v1/jobs/${run.body.id}/status/`;
    const running = await fetch(svc.url + path, { headers: { authorization: `Bearer ${key}`, 'if-none-match': '*' } });
    assert.equal(running.status, 200);
    assert.equal(running.headers.get('etag'), null);
    assert.notEqual(JSON.parse(await running.text()).status, 'completed');
    await api.waitForJob(run.body.id);
    const failedRun = await api.post('/api/v1/run/', { yaml_content: yaml('/status/404/') });
    const { job } = await api.waitForJob(failedRun.body.id);
    assert.equal(job.status, 'failed', JSON.stringify(job));
    const failed = await fetch(`${svc.url}/api/v1/jobs/${failedRun.body.id}/status/`, { headers: { authorization: `Bearer ${key}` } });
    assert.ok(failed.headers.get('etag'));
    assert.equal(JSON.parse(await failed.text()).status, 'failed');
  });
});
