/**
 * The stored changes of a run (lambdas/core/run-changes.ts, issue 26): written in chunks of CHANGES_CHUNK entries per
 * kind, and a page of GET /jobs/{id}/changes/ reads only the chunks it needs, across chunk and kind boundaries,
 * with and without a kind filter.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { BlobStore, JobRecord } from '../../lambdas/core/ports.ts';
import { CHANGES_CHUNK, computeRunChanges, jobChangesPage, recordLastRun } from '../../lambdas/core/run-changes.ts';
import { createAccount } from '../../lambdas/core/accounts.ts';
import { testServices } from '../helpers/services.ts';

/** An in-memory blob store that counts reads. */
function countingBlobs(): BlobStore & { reads: number; keys(): string[] } {
  const m = new Map<string, Buffer>();
  const b = {
    reads: 0,
    keys: () => [...m.keys()],
    async put(key: string, body: Uint8Array | string) { m.set(key, Buffer.from(body)); },
    async get(key: string) { b.reads++; return m.get(key) ?? null; },
    async delete(key: string) { m.delete(key); },
  };
  return b as unknown as BlobStore & { reads: number; keys(): string[] };
}

describe('run changes in the blob store', () => {
  it('writes chunks per kind and pages across chunk and kind boundaries reading only the chunks a page needs', async () => {
    const blobs = countingBlobs();
    const { svc } = testServices({ overrides: { blobs } });
    const { account } = await createAccount(svc, { email: 'changes@example.com', password: 'correct horse battery', plan: 'pro' });
    const configId = randomUUID();
    const now = new Date().toISOString();
    const job = (over: Partial<JobRecord>): JobRecord => ({
      id: randomUUID(), account_id: account.id, job_type: 'run', status: 'completed', progress: 100, status_message: '', items_found: 0, pages_scraped: 1,
      api_discovered: false, target_url: 'https://example.com/', config_id: configId, yaml_content: 'y', created_at: now, updated_at: now, started_at: now,
      completed_at: now, attempts: 1, row_count: 0, results_key: null, prompt: null, ...over,
    });
    // Previous run: rows 0..2999; this run: rows 500..4999 with 100 price changes among the kept ones.
    const previousRows = Array.from({ length: 3000 }, (_, i) => ({ url: `/p/${i}`, price: i }));
    const currentRows = Array.from({ length: 4500 }, (_, k) => { const i = k + 500; return { url: `/p/${i}`, price: i < 600 ? i + 1 : i }; });
    const previous = job({ results_key: 'results/prev.json', row_count: previousRows.length });
    await blobs.put('results/prev.json', JSON.stringify(previousRows), 'application/json');
    await svc.store.createJob(previous);
    await recordLastRun(svc, previous);
    const current = job({ status: 'running', completed_at: null });
    const changes = await computeRunChanges(svc, current, currentRows, ['url']);
    assert.deepEqual({ ...changes, changes_key: undefined }, { added: 2000, removed: 500, changed: 100, compared_with: previous.id, key_fields: ['url'], changes_key: undefined });
    assert.equal(blobs.keys().filter((k) => k.startsWith(changes.changes_key!)).length, Math.ceil(2000 / CHANGES_CHUNK) + 1 + 1, 'chunks: 2 added, 1 removed, 1 changed');
    const done = { ...current, status: 'completed' as const, completed_at: now, changes };

    const page = async (q: { change?: 'added' | 'removed' | 'changed'; offset: number; limit: number }) => {
      const before = blobs.reads;
      const body = await jobChangesPage(svc, done, q);
      return { body, reads: blobs.reads - before };
    };
    // Across the first two chunks of added.
    const a = await page({ offset: 900, limit: 200 });
    assert.deepEqual(a.body.results.map((e) => e.row.url), Array.from({ length: 200 }, (_, k) => `/p/${3000 + 900 + k}`));
    assert.equal(a.reads, 2);
    // Across kinds: the last 10 added, then the first 5 removed.
    const b = await page({ offset: 1990, limit: 15 });
    assert.deepEqual(b.body.results.map((e) => `${e.change} ${e.row.url}`), [
      ...Array.from({ length: 10 }, (_, k) => `added /p/${3000 + 1990 + k}`),
      ...Array.from({ length: 5 }, (_, k) => `removed /p/${k}`),
    ]);
    assert.equal(b.body.total, 2600);
    // One kind: changed rows with their fields.
    const c = await page({ change: 'changed', offset: 98, limit: 10 });
    assert.equal(c.body.total, 100);
    assert.deepEqual(c.body.results.map((e) => e.change === 'changed' && e.fields), [{ price: { old: 598, new: 599 } }, { price: { old: 599, new: 600 } }]);
    assert.equal(c.reads, 1);
    // Past the end: nothing, and nothing read.
    const d = await page({ offset: 5000, limit: 10 });
    assert.deepEqual(d.body.results, []);
    assert.equal(d.reads, 0);
  });
});
