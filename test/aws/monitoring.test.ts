/**
 * Monitoring on AWS (issue 26): schedules fired through EventBridge Scheduler and webhooks delivered by the webhook
 * worker, on DynamoDB Local with SQS, EventBridge Scheduler and Secrets Manager behind aws-sdk-client-mock.
 *
 * - EventBridgeScheduleTriggers (adapters/aws/schedule-triggers.ts): a stored schedule is one one-time `at()` schedule
 *   targeting the run queue with a firing message; Update falls back to Create when absent; a disabled schedule is a
 *   DISABLED trigger with a valid expression; Delete ignores an absent schedule.
 * - The run worker (workers/run-queue-consumer.ts) fires a firing message: one run job with `schedule_id`, its message on
 *   the run queue, the schedule's claim in DynamoDB and the trigger re-armed for the next slot; the same message again
 *   (SQS delivers at least once), or two Lambdas given it at once, fire the slot once; a deleted schedule's message
 *   is dropped quietly.
 * - The webhook worker (workers/webhook-queue-consumer.ts) signs a delivery a standardwebhooks receiver verifies,
 *   records it in DynamoDB, and on a 503 records `will_retry` and queues attempt 2 after about 5 s.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { mockClient } from 'aws-sdk-client-mock';
import {
  ConflictException, CreateScheduleCommand, DeleteScheduleCommand, ResourceNotFoundException, SchedulerClient, UpdateScheduleCommand, ValidationException,
  type CreateScheduleCommandInput,
} from '@aws-sdk/client-scheduler';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { Webhook } from 'standardwebhooks';
import { createAwsServices } from '../../lambdas/adapters/aws/services.ts';
import { atExpression, EventBridgeScheduleTriggers, triggerName } from '../../lambdas/adapters/aws/schedule-triggers.ts';
import { installServices, type Services } from '../../lambdas/core/services.ts';
import type { AccountRecord, ConfigRecord, ScheduleRecord } from '../../lambdas/core/ports.ts';
import { createConfig } from '../../lambdas/core/configs.ts';
import { createSchedule, deleteSchedule, firingJobId, isScheduleFiring, type ScheduleFiringMessage } from '../../lambdas/core/schedules.ts';
import { createWebhook } from '../../lambdas/core/webhooks.ts';
import type { WebhookMessage } from '../../lambdas/core/webhook-events.ts';
import { handler as runHandler } from '../../lambdas/workers/run-queue-consumer.ts';
import { handler as webhookHandler } from '../../lambdas/workers/webhook-queue-consumer.ts';
import { handler as sweepHandler } from '../../lambdas/workers/schedule-sweeper.ts';
import { startDynamoLocal, type DynamoLocal } from '../helpers/dynamodb-local.ts';
import { sqsEvent, sqsRecord } from '../helpers/aws-events.ts';

const GROUP = 'scrape-ai-test';
const RUN_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/scrape-ai-test-run';
const RUN_QUEUE_ARN = 'arn:aws:sqs:us-east-1:123456789012:scrape-ai-test-run';
const WEBHOOK_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/scrape-ai-test-webhook';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/scrape-ai-test-scheduler';

const YAML = `target: { url: "https://shop.example/", engine: lightweight }
extract:
  container: li
  fields:
    - { name: name, selector: a }
`;

/** A schedule record as the store holds it. */
function schedule(over: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    id: randomUUID(), account_id: 7, config_id: randomUUID(), cron: '0 * * * *', timezone: 'Europe/Berlin', enabled: true,
    next_run_at: '2026-11-22T15:00:00.000Z', last_fired_at: null, since: '2026-11-22T14:00:10.000Z', paused: null, fired_count: 0, skipped_count: 0,
    recent_jobs: [], created_at: '2026-11-22T14:00:10.000Z', updated_at: '2026-11-22T14:00:10.000Z', ...over,
  };
}

const notFound = () => new ResourceNotFoundException({ Message: 'Schedule sai-x does not exist.', message: 'Schedule sai-x does not exist.', $metadata: {} });

describe('EventBridgeScheduleTriggers (EventBridge Scheduler mocked)', () => {
  const scheduler = mockClient(SchedulerClient);
  const triggers = new EventBridgeScheduleTriggers({ groupName: GROUP, runQueueArn: RUN_QUEUE_ARN, roleArn: ROLE_ARN, client: new SchedulerClient({ region: 'us-east-1' }) });
  beforeEach(() => scheduler.reset());
  after(() => scheduler.restore());

  it('puts an enabled schedule as a one-time at() of its next slot, targeting the run queue with a firing message', async () => {
    scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: 'arn:x' });
    const s = schedule({ next_run_at: '2026-11-22T15:00:00.000Z' });
    await triggers.put(s);
    const calls = scheduler.commandCalls(UpdateScheduleCommand);
    assert.equal(calls.length, 1);
    assert.equal(scheduler.commandCalls(CreateScheduleCommand).length, 0);
    const input = calls[0]!.args[0].input;
    assert.equal(input.Name, `sai-${s.id}`);
    assert.equal(input.Name, triggerName(s.id));
    assert.ok(input.Name!.length <= 64);
    assert.equal(input.GroupName, GROUP);
    assert.equal(input.ScheduleExpression, 'at(2026-11-22T15:00:00)');
    assert.equal(input.ScheduleExpressionTimezone, 'UTC', 'the slot is an instant: the time zone is the cron rule\'s business, not the trigger\'s');
    assert.equal(input.State, 'ENABLED');
    assert.deepEqual(input.FlexibleTimeWindow, { Mode: 'OFF' });
    assert.equal(input.ActionAfterCompletion, 'NONE', 'the trigger is kept (re-armed), not deleted after it fires');
    assert.equal(input.Target!.Arn, RUN_QUEUE_ARN);
    assert.equal(input.Target!.RoleArn, ROLE_ARN);
    const message = JSON.parse(input.Target!.Input!);
    assert.deepEqual(message, { schedule_id: s.id, account_id: 7, scheduled_time: '<aws.scheduler.scheduled-time>' });
    assert.ok(isScheduleFiring(message), 'the run worker recognises the input as a firing');
    // As EventBridge delivers it, the placeholder replaced.
    assert.ok(isScheduleFiring(JSON.parse(input.Target!.Input!.replace('<aws.scheduler.scheduled-time>', '2026-11-22T15:00:00Z'))));
    assert.ok(!isScheduleFiring({ job_id: randomUUID() }), 'a job message is not a firing');
  });

  it('an at() is to the second, in UTC, whatever the ISO form', () => {
    assert.equal(atExpression('2026-11-22T15:00:00.999Z'), 'at(2026-11-22T15:00:00)');
    assert.equal(atExpression('2026-11-22T16:30:05+01:00'), 'at(2026-11-22T15:30:05)');
  });

  it('creates the EventBridge schedule when Update finds none, with the same input', async () => {
    scheduler.on(UpdateScheduleCommand).rejects(notFound());
    scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:x' });
    const s = schedule();
    await triggers.put(s);
    const update = scheduler.commandCalls(UpdateScheduleCommand);
    const create = scheduler.commandCalls(CreateScheduleCommand);
    assert.equal(update.length, 1);
    assert.equal(create.length, 1);
    assert.deepEqual(create[0]!.args[0].input, update[0]!.args[0].input);
    assert.deepEqual(create[0]!.args[0].input, triggers.input(s));
  });

  it('a Create that loses to a concurrent put updates instead; other errors are thrown', async () => {
    scheduler.on(UpdateScheduleCommand).rejectsOnce(notFound()).resolves({ ScheduleArn: 'arn:x' });
    scheduler.on(CreateScheduleCommand).rejects(new ConflictException({ Message: 'exists', message: 'exists', $metadata: {} }));
    await triggers.put(schedule());
    assert.equal(scheduler.commandCalls(UpdateScheduleCommand).length, 2);

    scheduler.reset();
    scheduler.on(UpdateScheduleCommand).rejects(new ValidationException({ Message: 'bad expression', message: 'bad expression', $metadata: {} }));
    await assert.rejects(triggers.put(schedule()), /bad expression/);
    assert.equal(scheduler.commandCalls(CreateScheduleCommand).length, 0);
  });

  it('a disabled or paused schedule (next_run_at null) is a DISABLED trigger that still has a valid at()', async () => {
    scheduler.on(UpdateScheduleCommand).resolves({});
    const paused = schedule({ enabled: false, next_run_at: null, last_fired_at: '2026-11-22T15:00:00.000Z', paused: { code: 'quota_exceeded', message: 'no credits', at: '2026-11-22T15:00:01.000Z' } });
    const never = schedule({ enabled: false, next_run_at: null, created_at: '2026-11-22T14:00:10.000Z' });
    await triggers.put(paused);
    await triggers.put(never);
    const [a, b] = scheduler.commandCalls(UpdateScheduleCommand).map((c) => c.args[0].input);
    assert.equal(a!.State, 'DISABLED');
    assert.equal(b!.State, 'DISABLED');
    // A year ahead: never an at() in the past, which EventBridge Scheduler might refuse.
    for (const i of [a!, b!]) {
      const at = Date.parse(`${/^at\((.*)\)$/.exec(i.ScheduleExpression!)![1]}Z`);
      assert.ok(at > Date.now() + 300 * 86_400_000 && at < Date.now() + 400 * 86_400_000, i.ScheduleExpression);
    }
    for (const i of [a!, b!]) assert.match(i.ScheduleExpression!, /^at\(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\)$/);
    // Enabled but with no slot left (a rule that never fires again): DISABLED too.
    scheduler.reset();
    scheduler.on(UpdateScheduleCommand).resolves({});
    await triggers.put(schedule({ enabled: true, next_run_at: null }));
    assert.equal(scheduler.commandCalls(UpdateScheduleCommand)[0]!.args[0].input.State, 'DISABLED');
  });

  it('remove deletes the EventBridge schedule, ignores one already gone and throws other errors', async () => {
    const id = randomUUID();
    scheduler.on(DeleteScheduleCommand).resolves({});
    await triggers.remove(id);
    assert.deepEqual(scheduler.commandCalls(DeleteScheduleCommand)[0]!.args[0].input, { Name: `sai-${id}`, GroupName: GROUP });

    scheduler.reset();
    scheduler.on(DeleteScheduleCommand).rejects(notFound());
    await triggers.remove(id);

    scheduler.reset();
    scheduler.on(DeleteScheduleCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    await assert.rejects(triggers.remove(id), /Rate exceeded/);
  });
});

describe('the run and webhook workers on DynamoDB Local (SQS, EventBridge Scheduler, Secrets Manager mocked)', () => {
  const sqs = mockClient(SQSClient);
  const scheduler = mockClient(SchedulerClient);
  const secrets = mockClient(SecretsManagerClient);
  let ddb: DynamoLocal;
  let svc: Services;
  /** The services' clock: a fixed instant, or the real time when null (signatures are checked against the real time). */
  let fixedNow: string | null = null;
  let receiver: http.Server;
  let receiverUrl: string;
  /** What the receiver got, and the status it answers with. */
  let received: Array<{ headers: http.IncomingHttpHeaders; body: string }>;
  let answer = 204;

  const sent = () => sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
  const armed = () => scheduler.commandCalls(UpdateScheduleCommand).map((c) => c.args[0].input as CreateScheduleCommandInput);

  async function account(plan = 'pro'): Promise<AccountRecord> {
    return svc.store.createAccount({ email: `${randomUUID()}@example.com`, first_name: '', last_name: '', plan, password_hash: 'x', api_key_digest: null, api_key_sealed: null });
  }

  /** A pro account, a config and an hourly schedule created at 14:00:10 (next slot 15:00). */
  async function scheduled(): Promise<{ account: AccountRecord; config: ConfigRecord; schedule: ScheduleRecord }> {
    fixedNow = '2026-11-22T14:00:10.000Z';
    const a = await account();
    const config = await createConfig(svc, a.id, { name: 'shop', target_url: 'https://shop.example/', yaml_content: YAML });
    const s = await createSchedule(svc, a, { config_id: config.id, cron: '0 * * * *', timezone: 'UTC' });
    assert.equal(s.next_run_at, '2026-11-22T15:00:00.000Z');
    return { account: a, config, schedule: s };
  }

  /** The body EventBridge Scheduler puts on the run queue for a schedule (its trigger's input, placeholder filled). */
  function firing(s: Pick<ScheduleRecord, 'id' | 'account_id'>, at = '2026-11-22T15:00:00Z'): string {
    const m: ScheduleFiringMessage = { schedule_id: s.id, account_id: s.account_id, scheduled_time: at };
    return JSON.stringify(m);
  }

  before(async () => {
    ddb = await startDynamoLocal();
    const table = await ddb.createTable();
    received = [];
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const base = createAwsServices({
      STAGE: 'test', TABLE_NAME: table, RUN_QUEUE_URL, WEBHOOK_QUEUE_URL, RUN_QUEUE_ARN, SCHEDULE_GROUP: GROUP, SCHEDULER_ROLE_ARN: ROLE_ARN,
      BUCKET_NAME: 'results', SEALING_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:sealing', SAI_OUTBOUND_ALLOW: '127.0.0.0/8', MAX_RECEIVES: '3',
    }, {
      dynamodb: ddb.client(), sqs: new SQSClient({ region: 'us-east-1' }), scheduler: new SchedulerClient({ region: 'us-east-1' }),
      secrets: new SecretsManagerClient({ region: 'us-east-1' }),
    });
    assert.ok(base.scheduleTriggers instanceof EventBridgeScheduleTriggers, 'SCHEDULE_GROUP, RUN_QUEUE_ARN and SCHEDULER_ROLE_ARN give EventBridge triggers');
    svc = { ...base, clock: { now: () => (fixedNow ? new Date(fixedNow) : new Date()) } };
    installServices(svc);
  });
  after(async () => {
    sqs.restore();
    scheduler.restore();
    secrets.restore();
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
    await ddb?.stop();
  });
  beforeEach(() => {
    sqs.reset();
    sqs.on(SendMessageCommand).resolves({ MessageId: randomUUID() });
    scheduler.reset();
    scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: 'arn:x' });
    secrets.reset();
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'sealing secret of the test stage' });
    received = [];
    answer = 204;
    fixedNow = null;
  });

  it('createSchedule arms the trigger at the first slot', async () => {
    const { account: a, schedule: s } = await scheduled();
    assert.deepEqual(armed().map((i) => [i.Name, i.ScheduleExpression, i.State]), [[`sai-${s.id}`, 'at(2026-11-22T15:00:00)', 'ENABLED']]);
    assert.deepEqual(JSON.parse(armed()[0]!.Target!.Input!), { schedule_id: s.id, account_id: a.id, scheduled_time: '<aws.scheduler.scheduled-time>' });
    assert.deepEqual(await svc.store.getSchedule(a.id, s.id), s, 'stored as created (null fields read back as null)');
  });

  it('the sweeper: a schedule whose slot passed unfired (its trigger lost) gets a firing message on the run queue, which fires it', async () => {
    const { account: a, schedule: s } = await scheduled();
    fixedNow = '2026-11-22T15:10:00.000Z';
    const r = await sweepHandler();
    const bodies = sent().filter((m) => m.QueueUrl === RUN_QUEUE_URL).map((m) => JSON.parse(m.MessageBody!));
    assert.equal(r.requeued, bodies.length);
    assert.ok(bodies.every((b) => isScheduleFiring(b)), 'firing messages only');
    assert.ok(bodies.some((b) => b.schedule_id === s.id && b.account_id === a.id), 'this schedule among the late ones');
    sqs.resetHistory();
    scheduler.resetHistory();
    assert.deepEqual(await runHandler(sqsEvent(sqsRecord(JSON.stringify({ schedule_id: s.id, account_id: a.id }), 1))), { batchItemFailures: [] });
    const after = (await svc.store.getSchedule(a.id, s.id))!;
    assert.equal(after.fired_count, 1);
    assert.equal(after.last_fired_at, '2026-11-22T15:00:00.000Z');
    assert.deepEqual(armed().map((i) => i.ScheduleExpression), ['at(2026-11-22T16:00:00)'], 'and its trigger is armed again');
    // Not late any more: the next sweep leaves it alone.
    sqs.resetHistory();
    await sweepHandler();
    assert.ok(!sent().some((m) => JSON.parse(m.MessageBody!).schedule_id === s.id));
  });

  it('a firing message on the run queue creates one run job, queues it, claims the slot and re-arms the trigger; the same message again fires nothing', async () => {
    const { account: a, config, schedule: s } = await scheduled();
    scheduler.resetHistory();
    fixedNow = '2026-11-22T15:00:02.000Z';

    const record = sqsRecord(firing(s));
    assert.deepEqual(await runHandler(sqsEvent(record)), { batchItemFailures: [] });

    const jobs = (await svc.store.listJobs(a.id, 10)).items;
    assert.equal(jobs.length, 1);
    const job = jobs[0]!;
    assert.equal(job.id, firingJobId(s.id, new Date('2026-11-22T15:00:00.000Z')), 'the job id is the slot\'s');
    assert.equal(job.schedule_id, s.id);
    assert.equal(job.config_id, config.id);
    assert.equal(job.job_type, 'run');
    assert.equal(job.status, 'pending');
    assert.deepEqual(sent().map((m) => [m.QueueUrl, JSON.parse(m.MessageBody!)]), [[RUN_QUEUE_URL, { job_id: job.id }]]);
    assert.equal(sent()[0]!.MessageGroupId, String(a.id), "in the account's group (fair scheduling)");
    assert.equal(await svc.store.getCounter(a.id, 'credits:2026-11'), 1000, 'metered as POST /run/ is');

    const after = (await svc.store.getSchedule(a.id, s.id))!;
    assert.equal(after.fired_count, 1);
    assert.equal(after.skipped_count, 0);
    assert.equal(after.last_fired_at, '2026-11-22T15:00:00.000Z');
    assert.equal(after.next_run_at, '2026-11-22T16:00:00.000Z');
    assert.deepEqual(after.recent_jobs, [{ job_id: job.id, scheduled_for: '2026-11-22T15:00:00.000Z' }]);
    assert.deepEqual(armed().map((i) => [i.Name, i.ScheduleExpression, i.State]), [[`sai-${s.id}`, 'at(2026-11-22T16:00:00)', 'ENABLED']], 're-armed for the next slot');

    // SQS delivers at least once: the same message again, a little later.
    sqs.resetHistory();
    scheduler.resetHistory();
    fixedNow = '2026-11-22T15:00:40.000Z';
    assert.deepEqual(await runHandler(sqsEvent(sqsRecord(record.body, 2))), { batchItemFailures: [] });
    assert.equal((await svc.store.listJobs(a.id, 10)).items.length, 1, 'no second job for the slot');
    assert.equal(sent().length, 0);
    // The trigger is armed again for the same next slot (a delivery that finds its slot claimed cannot tell a duplicate
    // from a trigger that fired early), and only updated, never created.
    assert.deepEqual(armed().map((i) => i.ScheduleExpression), ['at(2026-11-22T16:00:00)']);
    assert.equal((await svc.store.getSchedule(a.id, s.id))!.fired_count, 1);
    assert.equal(await svc.store.getCounter(a.id, 'credits:2026-11'), 1000, 'charged once');
  });

  it('two Lambdas given the same firing at once create one job and charge once', async () => {
    const { account: a, schedule: s } = await scheduled();
    fixedNow = '2026-11-22T15:00:01.000Z';
    const body = firing(s);
    const results = await Promise.all([runHandler(sqsEvent(sqsRecord(body))), runHandler(sqsEvent(sqsRecord(body)))]);
    assert.deepEqual(results, [{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    const jobs = (await svc.store.listJobs(a.id, 10)).items;
    assert.equal(jobs.length, 1);
    assert.equal(sent().filter((m) => m.QueueUrl === RUN_QUEUE_URL).length, 1, 'one job message');
    assert.equal(await svc.store.getCounter(a.id, 'credits:2026-11'), 1000, "the loser's charge was given back");
    const after = (await svc.store.getSchedule(a.id, s.id))!;
    assert.equal(after.fired_count, 1);
    assert.deepEqual(after.recent_jobs.map((r) => r.job_id), [jobs[0]!.id]);
  });

  it('a firing message of a deleted schedule does nothing and is not a batch failure', async () => {
    const { account: a, schedule: s } = await scheduled();
    scheduler.on(DeleteScheduleCommand).resolves({});
    await deleteSchedule(svc, a.id, s.id);
    assert.equal(scheduler.commandCalls(DeleteScheduleCommand)[0]!.args[0].input.Name, `sai-${s.id}`);
    scheduler.resetHistory();
    fixedNow = '2026-11-22T15:00:02.000Z';
    // And one naming no schedule that ever existed, in the same batch.
    const records = [sqsRecord(firing(s)), sqsRecord(firing({ id: randomUUID(), account_id: a.id }))];
    assert.deepEqual(await runHandler(sqsEvent(...records)), { batchItemFailures: [] });
    assert.equal((await svc.store.listJobs(a.id, 10)).items.length, 0);
    assert.equal(sent().length, 0);
    assert.equal(armed().length, 0);
  });

  it('a webhook delivery is signed (standardwebhooks verifies it) and recorded as delivered', async () => {
    const a = await account();
    const { webhook, secret } = await createWebhook(svc, a.id, { url: receiverUrl, events: ['job.completed'] });
    assert.match(secret, /^whsec_/);
    assert.equal(secrets.commandCalls(GetSecretValueCommand)[0]?.args[0].input.SecretId, 'arn:aws:secretsmanager:us-east-1:123456789012:secret:sealing');
    const stored = (await svc.store.getWebhook(a.id, webhook.id))!;
    assert.ok(!stored.secret_sealed.includes(secret.slice(6)), 'the secret is stored sealed');

    const jobId = randomUUID();
    const payload = JSON.stringify({ type: 'job.completed', timestamp: new Date().toISOString(), data: { job_id: jobId, status: 'completed' } });
    const m: WebhookMessage = {
      webhook_id: webhook.id, account_id: a.id, message_id: `msg_${randomUUID()}`, event: 'job.completed', job_id: jobId, payload,
      created_at: new Date().toISOString(), attempt: 1,
    };
    assert.deepEqual(await webhookHandler(sqsEvent(sqsRecord(JSON.stringify(m), 1, 'scrape-ai-test-webhook'))), { batchItemFailures: [] });

    assert.equal(received.length, 1);
    const got = received[0]!;
    assert.equal(got.body, payload, 'the message\'s bytes, as queued');
    assert.equal(got.headers['webhook-id'], m.message_id);
    const verified = new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    assert.deepEqual(verified, JSON.parse(payload));
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got.body, got.headers as Record<string, string>), 'another secret does not verify');

    const deliveries = await svc.store.listWebhookDeliveries(a.id, webhook.id, 10);
    assert.equal(deliveries.length, 1);
    const d = deliveries[0]!;
    assert.equal(d.outcome, 'delivered');
    assert.equal(d.status_code, 204);
    assert.equal(d.message_id, m.message_id);
    assert.equal(d.attempt, 1);
    assert.equal(d.job_id, jobId);
    assert.equal(d.error, null);
    assert.equal(d.next_attempt_at, null);
    assert.equal(sent().length, 0, 'nothing queued again');
    assert.deepEqual(await svc.store.listWebhookDeliveries(a.id + 1, webhook.id, 10), [], "another account does not read the webhook's deliveries");
  });

  it('a 503 is recorded will_retry and attempt 2 goes on the webhook queue after about 5 s, same message id', async () => {
    const a = await account();
    const { webhook } = await createWebhook(svc, a.id, { url: receiverUrl, events: ['job.failed'] });
    answer = 503;
    const m: WebhookMessage = {
      webhook_id: webhook.id, account_id: a.id, message_id: `msg_${randomUUID()}`, event: 'job.failed', job_id: randomUUID(),
      payload: JSON.stringify({ type: 'job.failed' }), created_at: new Date().toISOString(), attempt: 1,
    };
    const before = Date.now();
    assert.deepEqual(await webhookHandler(sqsEvent(sqsRecord(JSON.stringify(m), 1, 'scrape-ai-test-webhook'))), { batchItemFailures: [] });
    assert.equal(received.length, 1);

    const [d] = await svc.store.listWebhookDeliveries(a.id, webhook.id, 10);
    assert.equal(d!.outcome, 'will_retry');
    assert.equal(d!.status_code, 503);
    assert.ok(d!.next_attempt_at);
    const wait = (Date.parse(d!.next_attempt_at!) - Date.parse(d!.attempted_at)) / 1000;
    assert.ok(wait >= 4 && wait <= 6, `next attempt about 5 s later: ${wait}`);

    const again = sent();
    assert.equal(again.length, 1);
    assert.equal(again[0]!.QueueUrl, WEBHOOK_QUEUE_URL);
    assert.ok([4, 5, 6].includes(again[0]!.DelaySeconds!), `DelaySeconds 5 ±10%: ${again[0]!.DelaySeconds}`);
    const next = JSON.parse(again[0]!.MessageBody!) as WebhookMessage;
    assert.equal(next.attempt, 2);
    assert.equal(next.message_id, m.message_id, 'the same webhook-id on every attempt');
    assert.equal(next.payload, m.payload);
    assert.equal(next.not_before, d!.next_attempt_at);
    assert.ok(Date.parse(next.not_before!) >= before + 3_500);

    // Attempt 2 received before its time (SQS delay rounding): it waits on the queue again rather than being attempted.
    sqs.resetHistory();
    assert.deepEqual(await webhookHandler(sqsEvent(sqsRecord(again[0]!.MessageBody!, 1, 'scrape-ai-test-webhook'))), { batchItemFailures: [] });
    assert.equal(received.length, 1, 'not attempted early');
    const waiting = sent();
    assert.equal(waiting.length, 1);
    assert.ok(waiting[0]!.DelaySeconds! >= 1 && waiting[0]!.DelaySeconds! <= 6);
    assert.equal(JSON.parse(waiting[0]!.MessageBody!).attempt, 2);

    // Attempt 2 when due: the receiver answers now.
    answer = 200;
    sqs.resetHistory();
    fixedNow = new Date(Date.parse(next.not_before!) + 100).toISOString();
    assert.deepEqual(await webhookHandler(sqsEvent(sqsRecord(again[0]!.MessageBody!, 1, 'scrape-ai-test-webhook'))), { batchItemFailures: [] });
    assert.equal(received.length, 2);
    assert.equal(received[1]!.headers['webhook-id'], m.message_id);
    const all = await svc.store.listWebhookDeliveries(a.id, webhook.id, 10);
    assert.deepEqual(all.map((x) => [x.attempt, x.outcome]), [[2, 'delivered'], [1, 'will_retry']], 'newest first');
    assert.equal(sent().length, 0);
  });

  it('a message of a deleted webhook is dropped; an unreadable one too; neither is a batch failure', async () => {
    const a = await account();
    const { webhook } = await createWebhook(svc, a.id, { url: receiverUrl, events: ['job.completed'] });
    assert.equal(await svc.store.deleteWebhook(a.id, webhook.id), true);
    const m: WebhookMessage = {
      webhook_id: webhook.id, account_id: a.id, message_id: `msg_${randomUUID()}`, event: 'job.completed', job_id: randomUUID(),
      payload: '{}', created_at: new Date().toISOString(), attempt: 1,
    };
    assert.deepEqual(await webhookHandler(sqsEvent(sqsRecord(JSON.stringify(m)), sqsRecord('not json'))), { batchItemFailures: [] });
    assert.equal(received.length, 0);
    assert.equal(sent().length, 0);
  });
});
