/**
 * The S3, SQS, API Gateway and Secrets Manager adapters against aws-sdk-client-mock (the calls they make,
 * what they do with each answer), and the wiring from the environment.
 */
import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mockClient } from 'aws-sdk-client-mock';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  APIGatewayClient, ConflictException, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteUsagePlanKeyCommand, GetApiKeyCommand, NotFoundException,
} from '@aws-sdk/client-api-gateway';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { S3BlobStore } from '../../lambdas/adapters/aws/s3-blobs.ts';
import { SqsQueue } from '../../lambdas/adapters/aws/sqs-queue.ts';
import { ApiGatewayUsageKeys } from '../../lambdas/adapters/aws/usage-keys.ts';
import { createAwsServices } from '../../lambdas/adapters/aws/services.ts';

/** The part of the SDK's streaming body the adapter uses. */
const body = (s: string) => ({ transformToByteArray: async () => new Uint8Array(Buffer.from(s)) }) as never;

describe('S3BlobStore', () => {
  const s3 = mockClient(S3Client);
  beforeEach(() => s3.reset());

  it('puts with the content type, gets bytes back, maps NoSuchKey to null, deletes', async () => {
    const store = new S3BlobStore({ bucket: 'b', client: new S3Client({ region: 'us-east-1' }) });
    s3.on(PutObjectCommand).resolves({});
    s3.on(GetObjectCommand, { Key: 'results/1/a.json' }).resolves({ Body: body('[{"a":1}]') });
    s3.on(GetObjectCommand, { Key: 'results/1/none.json' }).rejects(new NoSuchKey({ message: 'no', $metadata: {} }));
    s3.on(DeleteObjectCommand).resolves({});
    await store.put('results/1/a.json', '[{"a":1}]', 'application/json');
    assert.deepEqual(s3.commandCalls(PutObjectCommand)[0]!.args[0].input, { Bucket: 'b', Key: 'results/1/a.json', Body: '[{"a":1}]', ContentType: 'application/json' });
    assert.equal((await store.get('results/1/a.json'))?.toString(), '[{"a":1}]');
    assert.equal(await store.get('results/1/none.json'), null);
    await store.delete('results/1/a.json');
    assert.equal(s3.commandCalls(DeleteObjectCommand).length, 1);
  });

  it('other S3 errors propagate', async () => {
    s3.on(GetObjectCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDenied' }));
    await assert.rejects(new S3BlobStore({ bucket: 'b', client: new S3Client({ region: 'us-east-1' }) }).get('k'), /denied/);
  });

  it('presigns GET URLs for the bucket and key, with an expiry', async () => {
    const store = new S3BlobStore({ bucket: 'results-bucket', client: new S3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' } }) });
    const url = new URL(await store.presignGet('screenshots/1/x.png', 600));
    assert.match(url.hostname, /^results-bucket\.s3\.eu-west-1\.amazonaws\.com$/);
    assert.equal(url.pathname, '/screenshots/1/x.png');
    assert.equal(url.searchParams.get('X-Amz-Expires'), '600');
    assert.ok(url.searchParams.get('X-Amz-Signature'));
  });
});

describe('SqsQueue', () => {
  const sqs = mockClient(SQSClient);
  beforeEach(() => sqs.reset());

  it('sends each job type to its queue URL and refuses an unconfigured one', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm1' });
    const q = new SqsQueue({ urls: { run: 'https://sqs.local/run' }, client: new SQSClient({ region: 'us-east-1' }) });
    await q.send('run', '{"job_id":"j"}');
    assert.deepEqual(sqs.commandCalls(SendMessageCommand)[0]!.args[0].input, { QueueUrl: 'https://sqs.local/run', MessageBody: '{"job_id":"j"}' });
    await assert.rejects(q.send('generate', '{}'), /no queue URL configured for "generate"/);
  });

  it("sends a message's group (its account) as the MessageGroupId of a fair queue, and a delay within SQS's 900 s", async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm1' });
    const q = new SqsQueue({ urls: { run: 'https://sqs.local/run' }, client: new SQSClient({ region: 'us-east-1' }) });
    await q.send('run', '{"job_id":"j"}', { group: '42' });
    await q.send('run', '{"job_id":"k"}', { group: '42', delaySeconds: 5000 });
    const inputs = sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input);
    assert.deepEqual(inputs[0], { QueueUrl: 'https://sqs.local/run', MessageBody: '{"job_id":"j"}', MessageGroupId: '42' });
    assert.deepEqual(inputs[1], { QueueUrl: 'https://sqs.local/run', MessageBody: '{"job_id":"k"}', MessageGroupId: '42', DelaySeconds: 900 });
  });

  it('defers a delivery with ChangeMessageVisibility on its queue (at most 12 hours)', async () => {
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    const q = new SqsQueue({ urls: { run: 'https://sqs.local/run', generate: 'https://sqs.local/gen' }, client: new SQSClient({ region: 'us-east-1' }) });
    await q.deferDelivery('generate', 'rh-1', 30);
    await q.deferDelivery('run', 'rh-2', 1e9);
    assert.deepEqual(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input), [
      { QueueUrl: 'https://sqs.local/gen', ReceiptHandle: 'rh-1', VisibilityTimeout: 30 },
      { QueueUrl: 'https://sqs.local/run', ReceiptHandle: 'rh-2', VisibilityTimeout: 43_200 },
    ]);
  });

  it('SQS failures propagate (startRun turns them into queue_unavailable and refunds)', async () => {
    sqs.on(SendMessageCommand).rejects(new Error('throttled'));
    await assert.rejects(new SqsQueue({ urls: { run: 'u' }, client: new SQSClient({ region: 'us-east-1' }) }).send('run', 'x'), /throttled/);
  });
});

describe('ApiGatewayUsageKeys', () => {
  const apigw = mockClient(APIGatewayClient);
  beforeEach(() => apigw.reset());
  const keys = () => new ApiGatewayUsageKeys({ usagePlanIds: { free: 'up-free', growth: 'up-growth', pro: 'up-pro' }, namePrefix: 'scrape-ai-prod', client: new APIGatewayClient({ region: 'us-east-1' }) });

  it('creates a key for a new account and puts it in its plan only', async () => {
    apigw.on(CreateApiKeyCommand).resolves({ id: 'k1', value: 'v1' });
    apigw.on(DeleteUsagePlanKeyCommand).rejects(new NotFoundException({ message: 'not in plan', $metadata: {} }));
    apigw.on(CreateUsagePlanKeyCommand).resolves({});
    assert.deepEqual(await keys().assign(7, 'growth', null), { id: 'k1', value: 'v1' });
    assert.equal(apigw.commandCalls(CreateApiKeyCommand)[0]!.args[0].input.name, 'scrape-ai-prod-account-7');
    assert.deepEqual(apigw.commandCalls(CreateUsagePlanKeyCommand).map((c) => c.args[0].input), [{ usagePlanId: 'up-growth', keyId: 'k1', keyType: 'API_KEY' }]);
    assert.deepEqual(apigw.commandCalls(DeleteUsagePlanKeyCommand).map((c) => c.args[0].input.usagePlanId).sort(), ['up-free', 'up-pro']);
  });

  it('moves an existing key to the new plan, tolerating a key already there', async () => {
    apigw.on(GetApiKeyCommand).resolves({ id: 'k1', value: 'v1' });
    apigw.on(DeleteUsagePlanKeyCommand, { usagePlanId: 'up-growth' }).resolves({});
    apigw.on(DeleteUsagePlanKeyCommand, { usagePlanId: 'up-free' }).rejects(new NotFoundException({ message: 'no', $metadata: {} }));
    apigw.on(CreateUsagePlanKeyCommand).rejects(new ConflictException({ message: 'exists', $metadata: {} }));
    assert.deepEqual(await keys().assign(7, 'pro', 'k1'), { id: 'k1', value: 'v1' });
    assert.equal(apigw.commandCalls(CreateApiKeyCommand).length, 0, 'no second key');
    assert.equal(apigw.commandCalls(GetApiKeyCommand)[0]!.args[0].input.includeValue, true);
  });

  it('refuses a plan without a usage plan and propagates other errors', async () => {
    await assert.rejects(keys().assign(1, 'gold', null), /no usage plan for plan "gold"/);
    apigw.on(CreateApiKeyCommand).resolves({ id: 'k2', value: 'v2' });
    apigw.on(DeleteUsagePlanKeyCommand).rejects(Object.assign(new Error('boom'), { name: 'TooManyRequestsException' }));
    await assert.rejects(keys().assign(1, 'pro', null), /boom/);
  });
});

describe('createAwsServices', () => {
  const secrets = mockClient(SecretsManagerClient);
  beforeEach(() => secrets.reset());
  const env = { TABLE_NAME: 't', RUN_QUEUE_URL: 'https://q/run', BUCKET_NAME: 'b', SEALING_SECRET_ARN: 'arn:secret', STAGE: 'dev' };

  it('reads the sealing secret once, on first use only', async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'the secret' });
    const svc = createAwsServices(env, { secrets: new SecretsManagerClient({ region: 'us-east-1' }) });
    assert.equal(secrets.commandCalls(GetSecretValueCommand).length, 0, 'not read at cold start');
    const a = await svc.sealer();
    const b = await svc.sealer();
    assert.equal(a, b);
    assert.equal(secrets.commandCalls(GetSecretValueCommand).length, 1);
    assert.equal(a.open(a.seal('sai_x', 3), 3), 'sai_x');
  });

  it('retries the secret after a failed read', async () => {
    secrets.on(GetSecretValueCommand).rejectsOnce(new Error('throttled')).resolves({ SecretString: 's' });
    const svc = createAwsServices(env, { secrets: new SecretsManagerClient({ region: 'us-east-1' }) });
    await assert.rejects(svc.sealer(), /throttled/);
    assert.ok(await svc.sealer());
  });

  it('takes limits, billing and usage plans from the environment, and names what is missing', () => {
    const svc = createAwsServices({ ...env, SAI_BILLING: 'scrapes', MAX_RECEIVES: '5', JOB_TIMEOUT_MS: '60000', USAGE_PLAN_IDS: '{"pro":"up1"}' });
    assert.equal(svc.plans.billing, 'scrapes');
    assert.equal(svc.maxReceives, 5);
    assert.equal(svc.jobTimeoutMs, 60000);
    assert.ok(svc.usageKeys);
    assert.equal(createAwsServices(env).usageKeys, null);
    assert.throws(() => createAwsServices({}), /TABLE_NAME is not set/);
    assert.throws(() => createAwsServices({ ...env, MAX_PAGES: 'lots' }), /MAX_PAGES must be a positive integer/);
    assert.deepEqual(createAwsServices(env).throttles, { badRequestsPerWindow: 100, failedLoginsPerEmail: 10, failedLoginsPerAddress: 100 });
    assert.deepEqual(createAwsServices({ ...env, SAI_BAD_REQUEST_LIMIT: '0', SAI_FAILED_LOGINS_PER_EMAIL: '5' }).throttles, { badRequestsPerWindow: 0, failedLoginsPerEmail: 5, failedLoginsPerAddress: 100 });
    assert.throws(() => createAwsServices({ ...env, SAI_FAILED_LOGINS_PER_ADDRESS: '-1' }), /SAI_FAILED_LOGINS_PER_ADDRESS must be a non-negative integer/);
    assert.throws(() => createAwsServices({ ...env, SAI_BILLING: 'coins' }), /SAI_BILLING/);
  });
});
