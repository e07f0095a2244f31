/**
 * The status response of a job (lambdas/core/jobs.ts jobStatusJson): docs/spec.md's fields, the first rows
 * spliced in from the preview blob as stored, a completed job's preview read once per process, jobs
 * older than previews served from their rows; a finished job's answer kept per process with its entity tag, an
 * unfinished job's never.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cachedFinishedStatus, jobStatusAnswer, jobStatusJson, previewKey, STATUS_ROWS_PREVIEW } from '../../lambdas/core/jobs.ts';
import type { BlobStore, JobRecord } from '../../lambdas/core/ports.ts';
import { testServices } from '../helpers/services.ts';

/** A blob store in memory that counts reads. */
function countingBlobs(): BlobStore & { reads: number; data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    reads: 0,
    data,
    async put(key, body) { data.set(key, typeof body === 'string' ? body : Buffer.from(body).toString('utf8')); },
    async get(key) { this.reads++; const v = data.get(key); return v === undefined ? null : Buffer.from(v); },
    async delete(key) { data.delete(key); },
  };
}

function job(over: Partial<JobRecord>): JobRecord {
  return {
    id: randomUUID(), account_id: 1, job_type: 'run', status: 'completed', progress: 100,
    status_message: 'Completed: "quoted" \\ text', items_found: 3, pages_scraped: 2, api_discovered: false,
    target_url: 'https://e.com/', config_id: null, yaml_content: 'target: {url: "https://e.com/"}\n', created_at: '2026-11-24T10:00:00.000Z',
    updated_at: '2026-11-24T10:00:01.000Z', started_at: '2026-11-24T10:00:00.500Z', completed_at: '2026-11-24T10:00:01.000Z',
    attempts: 1, row_count: 3, results_key: `results/1/${Math.random()}/1.json`, prompt: null, ...over,
  };
}

describe('jobStatusJson', () => {
  it('is docs/spec.md\'s job with the preview rows, read from the blob store once', async () => {
    const blobs = countingBlobs();
    const { svc } = testServices({ overrides: { blobs } });
    const rows = [{ a: 'x', n: 1.5 }, { a: 'ü "y"', n: null }, { a: '</script>', n: 3 }];
    const j = job({});
    await blobs.put(previewKey(j.results_key!), JSON.stringify(rows), 'application/json');
    const parsed = JSON.parse(await jobStatusJson(svc, j));
    assert.deepEqual(parsed, {
      id: j.id, status: 'completed', progress: 100, job_type: 'run', target_url: j.target_url, status_message: j.status_message,
      items_found: 3, pages_scraped: 2, api_discovered: false, created_at: j.created_at,
      config_id: null, config_name: null, warning_count: 0, completed_at: j.completed_at,
      results: { data: rows, row_count: 3 }, yaml_config: { id: null, yaml_content: j.yaml_content }, warnings: [],
    });
    const reads = blobs.reads;
    assert.deepEqual(JSON.parse(await jobStatusJson(svc, j)), parsed);
    assert.equal(blobs.reads, reads, 'the second poll reads no blob');
    // A completed run of a saved config also says what changed since the config's last run (issue 26).
    const compared = job({ config_id: '11111111-1111-4111-8111-111111111111', changes: { added: 2, removed: 1, changed: 0, compared_with: '22222222-2222-4222-8222-222222222222', key_fields: ['url'], changes_key: 'changes/1/x.json' } });
    assert.deepEqual(JSON.parse(await jobStatusJson(svc, compared)).changes, { added: 2, removed: 1, changed: 0, compared_with: '22222222-2222-4222-8222-222222222222' });
  });

  it('a running job has no rows and row_count 0; a job older than previews gets the first rows of its rows blob', async () => {
    const blobs = countingBlobs();
    const { svc } = testServices({ overrides: { blobs } });
    const running = JSON.parse(await jobStatusJson(svc, job({ status: 'running', completed_at: null, results_key: null })));
    assert.deepEqual(running.results, { data: [], row_count: 0 });
    assert.equal('completed_at' in running, false);
    const old = job({ row_count: 150 });
    const rows = Array.from({ length: 150 }, (_, i) => ({ i }));
    await blobs.put(old.results_key!, JSON.stringify(rows), 'application/json');
    assert.deepEqual(JSON.parse(await jobStatusJson(svc, old)).results, { data: rows.slice(0, STATUS_ROWS_PREVIEW), row_count: 150 });
  });

  it("keeps a finished job's answer (completed or failed) with a strong ETag, by account and id; never an unfinished job's", async () => {
    const blobs = countingBlobs();
    const { svc } = testServices({ overrides: { blobs } });
    const done = job({});
    await blobs.put(previewKey(done.results_key!), '[{"a":1}]', 'application/json');
    assert.equal(cachedFinishedStatus(done.account_id, done.id), undefined, 'nothing before the first poll');
    const first = await jobStatusAnswer(svc, done);
    assert.match(first.etag!, /^"[A-Za-z0-9_-]{27}"$/);
    assert.deepEqual(cachedFinishedStatus(done.account_id, done.id), first);
    assert.equal(cachedFinishedStatus(2, done.id), undefined, "another account's poll of the id finds nothing");
    const failed = job({ status: 'failed', results_key: null, row_count: 0, status_message: 'target_failed: 404' });
    const f = await jobStatusAnswer(svc, failed);
    assert.equal(JSON.parse(f.text).status, 'failed');
    assert.deepEqual(cachedFinishedStatus(failed.account_id, failed.id), f);
    assert.notEqual(f.etag, first.etag);
    for (const status of ['pending', 'running'] as const) {
      const j = job({ status, completed_at: null, results_key: null });
      const a = await jobStatusAnswer(svc, j);
      assert.equal(a.etag, undefined, status);
      assert.equal(cachedFinishedStatus(j.account_id, j.id), undefined, `${status}: not kept`);
    }
  });
});
