/**
 * Settings per deployment stage (`-c stage=dev|prod`). Names, sizes, retention and alarms differ; the
 * code does not. Physical names are derived from the stage so that the accounts CLI can find the table,
 * the secret and the usage plans of a stage without CloudFormation look-ups.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';

export interface StageConfig {
  /** `dev` or `prod`. */
  name: string;
  /** Prefix of every physical name: `scrape-ai-<stage>`. */
  prefix: string;
  /** What happens to the table, bucket and secret when the stack is deleted. */
  removalPolicy: RemovalPolicy;
  /** CloudWatch log retention of every function and of the API access log, days. */
  logRetentionDays: number;
  /** Days before results and screenshots expire from the bucket. */
  resultRetentionDays: number;
  /** Days before a job item expires from the table (DynamoDB TTL). */
  jobRetentionDays: number;
  /** Memory of the run worker (Chromium needs at least 1600 MB), MB. */
  workerMemoryMb: number;
  /** Ephemeral /tmp of the run worker (Chromium unpacks there), MiB. */
  workerEphemeralMb: number;
  /** Worker Lambda time-out; the queues' visibility time-out is above it. */
  workerTimeout: Duration;
  /** Concurrent run workers at most (SQS event source maximum concurrency). */
  workerConcurrency: number;
  /** Memory of the API functions, MB. */
  apiMemoryMb: number;
  /** Stage-wide API Gateway throttle (requests per second and burst), over the per-account usage plans. */
  apiThrottle: { rateLimit: number; burstLimit: number };
  /** Deliveries of a job message before it goes to the dead-letter queue. */
  maxReceives: number;
  /**
   * Receives of a job message that are deferrals (its account runs as many jobs as its plan allows) before
   * the worker sends it again as a fresh message: SQS counts every receive, so a queue's maxReceiveCount is
   * maxReceives + maxDeferrals (lambdas/workers/job-queue-handler.ts).
   */
  maxDeferrals: number;
  /** Alarm when a dead-letter queue holds messages, or functions error, or the API answers 5xx. */
  alarms: boolean;
}

const base = {
  workerEphemeralMb: 2048,
  workerTimeout: Duration.minutes(15),
  maxReceives: 3,
  maxDeferrals: 100,
  alarms: true,
};

const STAGES: Record<string, Omit<StageConfig, 'name' | 'prefix'>> = {
  dev: {
    ...base,
    removalPolicy: RemovalPolicy.DESTROY,
    logRetentionDays: 14,
    resultRetentionDays: 7,
    jobRetentionDays: 30,
    workerMemoryMb: 2048,
    workerConcurrency: 2,
    apiMemoryMb: 512,
    apiThrottle: { rateLimit: 20, burstLimit: 40 },
  },
  prod: {
    ...base,
    removalPolicy: RemovalPolicy.RETAIN,
    logRetentionDays: 90,
    resultRetentionDays: 30,
    jobRetentionDays: 365,
    workerMemoryMb: 3008,
    workerConcurrency: 20,
    apiMemoryMb: 1024,
    apiThrottle: { rateLimit: 200, burstLimit: 400 },
  },
};

/** The stage names the app knows. */
export const STAGE_NAMES = Object.keys(STAGES);

/** @throws Error for a stage that is not defined here. */
export function stageConfig(name: string): StageConfig {
  const s = STAGES[name];
  if (!s) throw new Error(`unknown stage "${name}"; use -c stage=${STAGE_NAMES.join('|')}`);
  return { ...s, name, prefix: `scrape-ai-${name}` };
}

/** Physical names shared by the stack and the accounts CLI (`npm run accounts -- … --stage prod`). */
export function physicalNames(stage: string) {
  const prefix = `scrape-ai-${stage}`;
  return {
    table: prefix,
    secret: `${prefix}/api-key-sealing`,
    usagePlan: (plan: string) => `${prefix}-${plan}`,
    restApi: prefix,
  };
}
