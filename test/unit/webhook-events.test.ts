/**
 * What a finished job tells the account's webhooks (core/webhook-events.ts, issue 26), on the real SQLite store: one
 * queue message per subscribed webhook and event, in the webhook's own queue group, with a `webhook-id` derived from
 * the job, the webhook and the event; a delivery of a job message that finds its job finished already (the worker that
 * finished it stopped before telling the webhooks) tells them again under the same ids.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { executeJobDelivery, type JobExecutor } from '../../lambdas/core/job-delivery.ts';
import type { JobRecord } from '../../lambdas/core/ports.ts';
import type { SendOptions } from '../../lambdas/core/ports.ts';
import { jobEvents, messageId, webhookGroup, type WebhookMessage } from '../../lambdas/core/webhook-events.ts';
import { testServices } from '../helpers/services.ts';

async function setup() {
  const sent: Array<{ queue: string; body: string; options?: SendOptions }> = [];
  const t = testServices({ overrides: { queue: { send: async (queue, body, options) => { sent.push({ queue, body, ...(options ? { options } : {}) }); } } } });
  const account = await t.svc.store.createAccount({ email: 'w@example.com', first_name: '', last_name: '', plan: 'pro', password_hash: 'x', api_key_digest: null, api_key_sealed: null });
  const now = t.svc.clock.now().toISOString();
  for (const [id, events] of [['11111111-1111-4111-8111-111111111111', ['job.completed', 'job.changed']], ['22222222-2222-4222-8222-222222222222', ['job.failed']]] as const) {
    await t.svc.store.createWebhook({ id, account_id: account.id, url: 'https://hooks.example/x', events: [...events], secret_sealed: 'v1.x', created_at: now });
  }
  const job: JobRecord = {
    id: '33333333-3333-4333-8333-333333333333', account_id: account.id, job_type: 'run', status: 'completed', progress: 100, status_message: 'Completed: 3 rows', items_found: 3,
    pages_scraped: 1, api_discovered: false, target_url: 'https://shop.example/', config_id: null, yaml_content: 'x', prompt: null, created_at: now, updated_at: now,
    started_at: now, completed_at: now, attempts: 1, row_count: 3, results_key: 'r', changes: { added: 1, removed: 0, changed: 0, compared_with: '44444444-4444-4444-8444-444444444444', key_fields: null, changes_key: 'c' },
  };
  await t.svc.store.createJob(job);
  // The store writes a run's changes with its completion.
  await t.svc.store.updateJob(job.id, ['completed'], { changes: job.changes! });
  return { ...t, account, job, sent };
}

const executor: JobExecutor = { jobType: 'run', actor: 'run_worker', startMessage: () => 'x', noun: 'run', body: async () => { throw new Error('must not run'); } };

describe('webhook events of a finished job (core/webhook-events.ts)', () => {
  it('jobEvents: completed, completed and changed (compared, with a change), failed; nothing for unfinished jobs', () => {
    assert.deepEqual(jobEvents({ status: 'completed', changes: null }), ['job.completed']);
    assert.deepEqual(jobEvents({ status: 'completed', changes: { added: 0, removed: 1, changed: 0, compared_with: 'j', key_fields: null, changes_key: 'c' } }), ['job.completed', 'job.changed']);
    assert.deepEqual(jobEvents({ status: 'completed', changes: { added: 0, removed: 0, changed: 0, compared_with: 'j', key_fields: null, changes_key: 'c' } }), ['job.completed']);
    assert.deepEqual(jobEvents({ status: 'failed', changes: null }), ['job.failed']);
    assert.deepEqual(jobEvents({ status: 'running', changes: null }), []);
  });

  it('a delivery that finds the job finished tells the subscribed webhooks again, under the same ids and in each webhook\'s group', async () => {
    const t = await setup();
    assert.equal(await executeJobDelivery(t.svc, t.job.id, { receiveCount: 2, maxReceives: 3 }, executor), 'done');
    assert.equal(await executeJobDelivery(t.svc, t.job.id, { receiveCount: 3, maxReceives: 3 }, executor), 'done');
    const messages = t.sent.map((s) => ({ ...s, m: JSON.parse(s.body) as WebhookMessage }));
    assert.equal(messages.length, 4, `completed and changed to the first webhook, twice; nothing to the failed-only one: ${JSON.stringify(messages.map((x) => [x.queue, x.m.event, x.body.slice(0, 80)]))}`);
    assert.ok(messages.every((x) => x.queue === 'webhook' && x.m.webhook_id === '11111111-1111-4111-8111-111111111111' && x.options?.group === webhookGroup(x.m.account_id)));
    assert.deepEqual(messages.map((x) => x.m.event), ['job.completed', 'job.changed', 'job.completed', 'job.changed']);
    assert.equal(messages[0]!.m.message_id, messages[2]!.m.message_id);
    assert.equal(messages[1]!.m.message_id, messages[3]!.m.message_id);
    assert.equal(messages[0]!.m.message_id, messageId(t.job.id, messages[0]!.m.webhook_id, 'job.completed'));
    assert.notEqual(messages[0]!.m.message_id, messages[1]!.m.message_id);
    assert.match(messages[0]!.m.message_id, /^msg_[0-9a-f]{32}$/);
    assert.equal(messages[0]!.body, messages[2]!.body, 'the same bytes');
  });
});
