/**
 * Fair scheduling on AWS (lambdas/workers/job-queue-handler.ts): the queue consumer takes a running-job slot of
 * the job's account in DynamoDB (DynamoDB Local here) before it starts a job; a job whose account holds all of its
 * slots is not started and goes back to SQS with ChangeMessageVisibility (aws-sdk-client-mock), deferrals are
 * not counted as attempts, a much-deferred message is sent again fresh, a slot is given back in a `finally` and
 * a slot whose Lambda died frees itself when its lease ends.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mockClient } from 'aws-sdk-client-mock';
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { createAwsServices } from '../../lambdas/adapters/aws/services.ts';
import { installServices, type Services } from '../../lambdas/core/services.ts';
import type { JobRecord } from '../../lambdas/core/ports.ts';
import { configureJobAdmission, DEFERRAL_BUDGET, jobQueueHandler, type Delivery } from '../../lambdas/workers/job-queue-handler.ts';
import { handler as deadLetterHandler } from '../../lambdas/workers/dead-letter.ts';
import { startDynamoLocal, type DynamoLocal } from '../helpers/dynamodb-local.ts';

function record(jobId: string, receiveCount = 1, receipt = `rh-${randomUUID()}`): SQSEvent['Records'][number] {
  return {
    messageId: `m-${randomUUID()}`, receiptHandle: receipt, body: JSON.stringify({ job_id: jobId }),
    attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:1:scrape-ai-dev-run', awsRegion: 'us-east-1',
  };
}
const event = (...records: SQSEvent['Records']): SQSEvent => ({ Records: records });

describe('fair scheduling in the AWS queue consumer (DynamoDB Local, SQS mocked)', () => {
  const sqs = mockClient(SQSClient);
  let ddb: DynamoLocal;
  let svc: Services;
  /** Deliveries the fake executor saw, and a gate that keeps a job "running" until opened. */
  let seen: Array<{ jobId: string; delivery: Delivery }>;
  let gates: Map<string, { open: () => void; wait: Promise<void> }>;
  const handler = jobQueueHandler('run', async (_svc, jobId, delivery) => {
    seen.push({ jobId, delivery });
    await gates.get(jobId)?.wait;
    return 'done';
  });

  function gate(jobId: string): () => void {
    let open!: () => void;
    const wait = new Promise<void>((r) => { open = r; });
    gates.set(jobId, { open, wait });
    return open;
  }

  async function account(plan = 'pro'): Promise<number> {
    return (await svc.store.createAccount({ email: `${randomUUID()}@example.com`, first_name: '', last_name: '', plan, password_hash: 'x', api_key_digest: null, api_key_sealed: null })).id;
  }

  async function job(accountId: number, over: Partial<JobRecord> = {}): Promise<string> {
    const now = new Date().toISOString();
    const id = randomUUID();
    await svc.store.createJob({
      id, account_id: accountId, job_type: 'run', status: 'pending', progress: 0, status_message: 'Queued', items_found: 0, pages_scraped: 0,
      api_discovered: false, target_url: 'https://example.com/', config_id: null, yaml_content: 'x', created_at: now, updated_at: now,
      started_at: null, completed_at: null, attempts: 0, row_count: 0, results_key: null, prompt: null, ...over,
    });
    return id;
  }

  before(async () => {
    ddb = await startDynamoLocal();
    const table = await ddb.createTable();
    svc = createAwsServices({ TABLE_NAME: table, RUN_QUEUE_URL: 'https://sqs.local/run', BUCKET_NAME: 'b', STAGE: 'dev', MAX_RECEIVES: '3' }, {
      dynamodb: ddb.client(), sqs: new SQSClient({ region: 'us-east-1' }),
    });
    installServices(svc);
    // The dev stage: the run worker's event source runs 2 at most, so an account may hold 1.
    configureJobAdmission({ mode: 'store', workers: 2 });
  });
  after(async () => { await ddb?.stop(); });
  beforeEach(() => {
    sqs.reset();
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    sqs.on(SendMessageCommand).resolves({ MessageId: 'fresh' });
    seen = [];
    gates = new Map();
  });

  it("does not start a job of an account at its limit: the message goes back with a delay, another account's job runs", async () => {
    const a = await account();
    const b = await account();
    const [a1, a2, b1] = [await job(a), await job(a), await job(b)];
    const openA1 = gate(a1);
    const running = handler(event(record(a1)));
    while (!seen.length) await new Promise((r) => setTimeout(r, 10));
    assert.equal(await svc.store.countJobSlots(a, new Date().toISOString()), 1, 'a1 holds a slot while it runs');

    const deferred = record(a2, 1, 'rh-a2');
    assert.deepEqual(await handler(event(deferred)), { batchItemFailures: [{ itemIdentifier: deferred.messageId }] }, 'kept on the queue');
    assert.deepEqual(seen.map((s) => s.jobId), [a1], 'a2 was not started');
    const [cmv] = sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input);
    assert.equal(cmv?.ReceiptHandle, 'rh-a2');
    assert.equal(cmv?.QueueUrl, 'https://sqs.local/run');
    assert.ok(cmv!.VisibilityTimeout! >= 4 && cmv!.VisibilityTimeout! <= 6, `first deferral about 5 s: ${cmv!.VisibilityTimeout}`);
    assert.equal((await svc.store.getJobById(a2))!.status, 'pending');

    assert.deepEqual(await handler(event(record(b1))), { batchItemFailures: [] }, "B's job is not held up by A's");
    assert.deepEqual(seen.map((s) => s.jobId), [a1, b1]);

    openA1();
    assert.deepEqual(await running, { batchItemFailures: [] });
    assert.equal(await svc.store.countJobSlots(a, new Date().toISOString()), 0, 'given back in the finally');
    // a2's second receive: SQS counts the deferred one, the executor is told this is its first delivery.
    assert.deepEqual(await handler(event(record(a2, 2))), { batchItemFailures: [] });
    assert.deepEqual(seen.at(-1), { jobId: a2, delivery: { receiveCount: 1, maxReceives: 3 } });
  });

  it('gives the slot back when the delivery throws', async () => {
    const a = await account();
    const a1 = await job(a);
    const failing = jobQueueHandler('run', async () => { throw new Error('boom'); });
    const r = record(a1);
    assert.deepEqual(await failing(event(r)), { batchItemFailures: [{ itemIdentifier: r.messageId }] });
    assert.equal(await svc.store.countJobSlots(a, new Date().toISOString()), 0);
  });

  it("a slot whose Lambda died is free once its lease ends; a redelivery of that same job renews it", async () => {
    const a = await account();
    const [dead, next] = [await job(a, { status: 'running', attempts: 1 }), await job(a)];
    const past = new Date(Date.now() - svc.jobTimeoutMs - 10 * 60_000);
    await svc.store.acquireJobSlot(a, dead, 1, new Date(past.getTime() + 60_000).toISOString(), past.toISOString());
    assert.deepEqual(await handler(event(record(next))), { batchItemFailures: [] }, 'the expired lease holds up nobody');
    const held = await job(a, { status: 'running', attempts: 1 });
    await svc.store.acquireJobSlot(a, held, 1, new Date(Date.now() + 600_000).toISOString(), new Date().toISOString());
    assert.deepEqual(await handler(event(record(held, 2))), { batchItemFailures: [] }, 'its own live slot does not hold up the redelivery of the job');
    assert.deepEqual(seen.map((s) => s.jobId), [next, held]);
  });

  it(`after ${DEFERRAL_BUDGET} deferrals the message is sent again fresh (in its account's group) and this one deleted`, async () => {
    const a = await account();
    const [running, waiting] = [await job(a), await job(a)];
    await svc.store.acquireJobSlot(a, running, 1, new Date(Date.now() + 600_000).toISOString(), new Date().toISOString());
    await svc.store.consume(a, `deferrals:${waiting}`, DEFERRAL_BUDGET - 1, Number.MAX_SAFE_INTEGER);
    assert.deepEqual(await handler(event(record(waiting, DEFERRAL_BUDGET))), { batchItemFailures: [] }, 'this message is deleted');
    const [sent] = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    assert.equal(sent?.MessageBody, JSON.stringify({ job_id: waiting }));
    assert.equal(sent?.MessageGroupId, String(a));
    assert.ok(sent!.DelaySeconds! >= 1);
    assert.equal(sqs.commandCalls(ChangeMessageVisibilityCommand).length, 0);
    assert.equal(await svc.store.getCounter(a, `deferrals:${waiting}`), 0, 'the fresh message starts its count over');
    assert.equal(seen.length, 0);
    await svc.store.releaseJobSlot(a, running);
  });

  it('a job whose deliveries all died (deferrals not counted) ends failed without starting again, and the dead-letter consumer frees slots', async () => {
    const a = await account();
    const j = await job(a, { status: 'running', attempts: 3 });
    await svc.store.consume(a, `deferrals:${j}`, 2, Number.MAX_SAFE_INTEGER);
    // 6 receives, 2 of them deferrals: 3 deliveries started it and died; this is the 4th.
    assert.deepEqual(await handler(event(record(j, 6))), { batchItemFailures: [] });
    assert.equal(seen.length, 0);
    const failed = (await svc.store.getJobById(j))!;
    assert.equal(failed.status, 'failed');
    assert.match(failed.status_message, /^worker_lost: the job was attempted 3 time/);

    const k = await job(a, { status: 'running', attempts: 1 });
    await svc.store.acquireJobSlot(a, k, 1, new Date(Date.now() + 600_000).toISOString(), new Date().toISOString());
    await deadLetterHandler(event(record(k, 103)));
    assert.equal((await svc.store.getJobById(k))!.status, 'failed');
    assert.equal(await svc.store.countJobSlots(a, new Date().toISOString()), 0, 'the dead worker\'s slot is given back at once');
  });
});
