/**
 * The cloud wiring: the domain's ports on DynamoDB, SQS, S3, Secrets Manager and API Gateway, from the
 * environment each Lambda gets from the stack (lib/). Nothing is read before it is needed: the sealing
 * secret only by the functions that seal or open keys (login), usage keys only where USAGE_PLAN_IDS is set.
 *
 * Environment: STAGE, TABLE_NAME, RUN_QUEUE_URL, GENERATE_QUEUE_URL, WEBHOOK_QUEUE_URL, RUN_QUEUE_ARN, SCHEDULE_GROUP,
 * SCHEDULER_ROLE_ARN (EventBridge Scheduler triggers of schedules, issue 26), PUBLIC_URL (absolute links in webhook
 * payloads), BUCKET_NAME, SEALING_SECRET_ARN,
 * SAI_BILLING, SAI_OUTBOUND_ALLOW, JOB_TIMEOUT_MS, MAX_PAGES, JOB_CONCURRENCY, MAX_RECEIVES,
 * JOB_RETENTION_DAYS, USAGE_PLAN_IDS (JSON: plan name to usage plan id), and optionally the throttles
 * SAI_BAD_REQUEST_LIMIT, SAI_FAILED_LOGINS_PER_EMAIL, SAI_FAILED_LOGINS_PER_ADDRESS (0 turns one off);
 * ANTHROPIC_SECRET_ARN (a Secrets Manager secret holding the Anthropic API key; without it configs are generated
 * without an LLM) and ANTHROPIC_MODEL; PROXIES_SECRET_ARN (a Secrets Manager secret holding the operator's proxy groups,
 * the JSON of SAI_PROXIES, docs/crawler.md "Upstream proxies"; without it runs go direct).
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { KeySealer } from '../../core/crypto.ts';
import { billingFromEnv, loadPlans } from '../../core/plans.ts';
import { systemClock } from '../../core/ports.ts';
import { DEFAULT_THROTTLES } from '../../core/throttles.ts';
import type { AnthropicSettings, Services } from '../../core/services.ts';
import { OutboundGuard, parseAllowList } from '../../net/guard.ts';
import { parseProxyGroups, type ProxyGroups } from '../../net/upstream.ts';
import { DynamoStore } from './dynamo-store.ts';
import { EventBridgeScheduleTriggers } from './schedule-triggers.ts';
import { S3BlobStore } from './s3-blobs.ts';
import { SqsQueue } from './sqs-queue.ts';
import { ApiGatewayUsageKeys } from './usage-keys.ts';

/** Clients to use instead of the default ones (tests point them at DynamoDB Local and mocks). */
export interface AwsClients {
  dynamodb?: DynamoDBClient;
  s3?: S3Client;
  sqs?: SQSClient;
  secrets?: SecretsManagerClient;
  apigateway?: APIGatewayClient;
  scheduler?: SchedulerClient;
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const v = env[name];
  if (!v) throw new Error(`${name} is not set; the stack sets it on every function`);
  return v;
}

function int(env: NodeJS.ProcessEnv, name: string, def: number, min = 1): number {
  const v = env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a ${min === 0 ? 'non-negative' : 'positive'} integer, got "${v}"`);
  return n;
}

/**
 * Builds the services of a Lambda from its environment.
 * @throws Error naming a missing or invalid variable.
 */
export function createAwsServices(env: NodeJS.ProcessEnv = process.env, clients: AwsClients = {}): Services {
  const billing = billingFromEnv(env);
  let sealer: Promise<KeySealer> | null = null;
  const usagePlans = env.USAGE_PLAN_IDS ? (JSON.parse(env.USAGE_PLAN_IDS) as Record<string, string>) : null;
  const retention = env.JOB_RETENTION_DAYS ? int(env, 'JOB_RETENTION_DAYS', 0) : undefined;
  let anthropic: Promise<AnthropicSettings | null> | null = null;
  let proxies: Promise<ProxyGroups> | null = null;
  return {
    // Only the run worker is given the secret (lib/workers.ts): elsewhere a config's group is checked when it runs.
    ...(env.PROXIES_SECRET_ARN ? { proxies: () => proxies ??= (async () => {
      const client = clients.secrets ?? new SecretsManagerClient({});
      const r = await client.send(new GetSecretValueCommand({ SecretId: env.PROXIES_SECRET_ARN }));
      return parseProxyGroups(r.SecretString, 'the proxies secret');
    })().catch((err: unknown) => {
      proxies = null; // a throttled or failed read is retried by the next job
      throw err;
    }) } : {}),
    anthropic: () => anthropic ??= (async () => {
      if (!env.ANTHROPIC_SECRET_ARN) return null;
      const client = clients.secrets ?? new SecretsManagerClient({});
      const r = await client.send(new GetSecretValueCommand({ SecretId: env.ANTHROPIC_SECRET_ARN }));
      const apiKey = r.SecretString?.trim();
      if (!apiKey) return null;
      return { apiKey, ...(env.ANTHROPIC_MODEL ? { model: env.ANTHROPIC_MODEL } : {}) };
    })().catch((err: unknown) => {
      anthropic = null; // a throttled or failed read is retried by the next job
      throw err;
    }),
    store: new DynamoStore({ tableName: required(env, 'TABLE_NAME'), ...(clients.dynamodb ? { client: clients.dynamodb } : {}), ...(retention ? { jobRetentionDays: retention } : {}) }),
    queue: new SqsQueue({
      urls: {
        ...(env.RUN_QUEUE_URL ? { run: env.RUN_QUEUE_URL } : {}), ...(env.GENERATE_QUEUE_URL ? { generate: env.GENERATE_QUEUE_URL } : {}),
        ...(env.WEBHOOK_QUEUE_URL ? { webhook: env.WEBHOOK_QUEUE_URL } : {}),
      },
      ...(clients.sqs ? { client: clients.sqs } : {}),
    }),
    blobs: new S3BlobStore({ bucket: env.BUCKET_NAME ?? '', ...(clients.s3 ? { client: clients.s3 } : {}) }),
    clock: systemClock,
    sealer: () => sealer ??= (async () => {
      const client = clients.secrets ?? new SecretsManagerClient({});
      const r = await client.send(new GetSecretValueCommand({ SecretId: required(env, 'SEALING_SECRET_ARN') }));
      if (!r.SecretString) throw new Error('the sealing secret has no string value');
      return new KeySealer(r.SecretString);
    })().catch((err: unknown) => {
      sealer = null; // a throttled or failed read is retried by the next call
      throw err;
    }),
    plans: loadPlans(billing),
    scheduleTriggers: env.SCHEDULE_GROUP && env.RUN_QUEUE_ARN && env.SCHEDULER_ROLE_ARN
      ? new EventBridgeScheduleTriggers({ groupName: env.SCHEDULE_GROUP, runQueueArn: env.RUN_QUEUE_ARN, roleArn: env.SCHEDULER_ROLE_ARN, ...(clients.scheduler ? { client: clients.scheduler } : {}) })
      : null,
    ...(env.PUBLIC_URL ? { publicUrl: env.PUBLIC_URL.replace(/\/+$/, '') } : {}),
    guard: new OutboundGuard({ allow: parseAllowList(env.SAI_OUTBOUND_ALLOW) }),
    usageKeys: usagePlans ? new ApiGatewayUsageKeys({ usagePlanIds: usagePlans, namePrefix: `scrape-ai-${env.STAGE ?? 'dev'}`, ...(clients.apigateway ? { client: clients.apigateway } : {}) }) : null,
    maxReceives: int(env, 'MAX_RECEIVES', 3),
    jobTimeoutMs: int(env, 'JOB_TIMEOUT_MS', 14 * 60_000),
    maxPagesPerJob: int(env, 'MAX_PAGES', 1000),
    jobConcurrency: int(env, 'JOB_CONCURRENCY', 4),
    throttles: {
      badRequestsPerWindow: int(env, 'SAI_BAD_REQUEST_LIMIT', DEFAULT_THROTTLES.badRequestsPerWindow, 0),
      failedLoginsPerEmail: int(env, 'SAI_FAILED_LOGINS_PER_EMAIL', DEFAULT_THROTTLES.failedLoginsPerEmail, 0),
      failedLoginsPerAddress: int(env, 'SAI_FAILED_LOGINS_PER_ADDRESS', DEFAULT_THROTTLES.failedLoginsPerAddress, 0),
    },
  };
}
