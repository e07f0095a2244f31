/**
 * The queue consumers: the webhook worker (issue 26), the run worker and the generate worker (browser engine: x86_64 with the Chromium
 * layer, ≥1600 MB, large /tmp, 15 minutes), each fed by its queue one message at a time with partial batch
 * failure reporting, and the dead-letter consumer that ends jobs the queues gave up on.
 *
 * Fair scheduling: each worker takes a running-job slot of the job's account in the table before it starts a
 * job (the plan's `max_concurrent_jobs`, never all of `WORKER_CONCURRENCY`); a job whose account holds all its
 * slots goes back to its queue with ChangeMessageVisibility (part of the event source's consume permissions), or
 * after `MAX_DEFERRALS` deferrals is sent again (SendMessage on its own queue). The event source's maximum
 * concurrency stays the ceiling of all accounts together.
 */
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Architecture } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { chromiumLayer } from './chromium-layer.ts';
import type { Data } from './data.ts';
import { serviceFunction } from './lambda.ts';
import type { Queues } from './queues.ts';
import type { Scheduling } from './scheduler.ts';
import type { StageConfig } from './stage.ts';

export interface WorkersProps {
  stage: StageConfig;
  data: Data;
  queues: Queues;
  scheduling: Scheduling;
  environment: Record<string, string>;
  /**
   * The Secrets Manager secret that holds the Anthropic API key, when the deployment uses the Claude agent
   * (`-c anthropicSecretArn=…`); without it the generate worker writes configs without an LLM.
   */
  anthropicSecret?: ISecret;
  /** The Secrets Manager secret of the operator's upstream proxy groups (`-c proxiesSecretArn=…`): read by the run worker. */
  proxiesSecret?: ISecret;
}

export class Workers extends Construct {
  readonly run: NodejsFunction;
  readonly generate: NodejsFunction;
  readonly deadLetters: NodejsFunction;
  readonly webhooks: NodejsFunction;
  readonly scheduleSweeper: NodejsFunction;

  constructor(scope: Construct, id: string, p: WorkersProps) {
    super(scope, id);
    const { stage } = p;
    const concurrency = Math.max(2, stage.workerConcurrency);
    const fairness = { WORKER_CONCURRENCY: String(concurrency), MAX_DEFERRALS: String(stage.maxDeferrals) };
    this.run = serviceFunction(this, 'worker-run', {
      entry: 'workers/run-queue-consumer.ts',
      stage,
      environment: { ...p.environment, ...fairness, JOB_TIMEOUT_MS: String(stage.workerTimeout.toMilliseconds() - 60_000), ...(p.proxiesSecret ? { PROXIES_SECRET_ARN: p.proxiesSecret.secretArn } : {}) },
      architecture: Architecture.X86_64,
      memoryMb: stage.workerMemoryMb,
      ephemeralStorageMb: stage.workerEphemeralMb,
      timeout: stage.workerTimeout,
      layers: [chromiumLayer(this, 'Chromium')],
      description: 'Runs run jobs from the run queue',
    });
    p.data.table.grantReadWriteData(this.run);
    // Runs go through the operator's proxies when it declared some (the secret's JSON, docs/crawler.md).
    p.proxiesSecret?.grantRead(this.run);
    p.data.bucket.grantPut(this.run);
    // A run of a saved config reads the rows of the config's previous completed run to say what changed (issue 26).
    p.data.bucket.grantRead(this.run);
    p.queues.run.queue.grantSendMessages(this.run);
    // Schedules' firings arrive on the run queue (issue 26): the run worker creates their jobs and re-arms each
    // schedule's trigger for its next slot; a job it ends tells the account's webhooks.
    p.scheduling.grantManage(this.run);
    p.queues.webhook.queue.grantSendMessages(this.run);
    this.run.addEventSource(new SqsEventSource(p.queues.run.queue, {
      batchSize: 1,
      reportBatchItemFailures: true,
      maxConcurrency: concurrency,
    }));

    // Generations load and render pages like runs do (the Chromium layer), and may call Anthropic.
    this.generate = serviceFunction(this, 'worker-generate', {
      entry: 'workers/generate-queue-consumer.ts',
      stage,
      environment: {
        ...p.environment,
        ...fairness,
        JOB_TIMEOUT_MS: String(stage.workerTimeout.toMilliseconds() - 60_000),
        ...(p.anthropicSecret ? { ANTHROPIC_SECRET_ARN: p.anthropicSecret.secretArn } : {}),
      },
      architecture: Architecture.X86_64,
      memoryMb: stage.workerMemoryMb,
      ephemeralStorageMb: stage.workerEphemeralMb,
      timeout: stage.workerTimeout,
      layers: [chromiumLayer(this, 'GenerateChromium')],
      description: 'Runs generate jobs from the generate queue',
    });
    p.data.table.grantReadWriteData(this.generate);
    p.data.bucket.grantPut(this.generate);
    p.queues.generate.queue.grantSendMessages(this.generate);
    // A generate job with `run: true` starts a run job of the config it saved, on the run queue (issue 40).
    p.queues.run.queue.grantSendMessages(this.generate);
    p.queues.webhook.queue.grantSendMessages(this.generate);
    p.anthropicSecret?.grantRead(this.generate);
    this.generate.addEventSource(new SqsEventSource(p.queues.generate.queue, {
      batchSize: 1,
      reportBatchItemFailures: true,
      maxConcurrency: concurrency,
    }));

    this.deadLetters = serviceFunction(this, 'worker-dead-letters', {
      entry: 'workers/dead-letter.ts', stage, environment: p.environment, memoryMb: 256, description: 'Ends the jobs whose messages were dead-lettered',
    });
    p.data.table.grantReadWriteData(this.deadLetters);
    p.queues.webhook.queue.grantSendMessages(this.deadLetters);
    for (const q of [p.queues.run, p.queues.generate]) {
      this.deadLetters.addEventSource(new SqsEventSource(q.deadLetters, { batchSize: 10, reportBatchItemFailures: false }));
    }

    // Webhook deliveries (issue 26): small and I/O-bound; the records of a batch are attempted at once, each within
    // its 10 s time-out. Reads the webhook and records the attempt (table), opens the sealed signing secret, and
    // queues the next attempt (its own queue).
    this.webhooks = serviceFunction(this, 'worker-webhooks', {
      entry: 'workers/webhook-queue-consumer.ts', stage, environment: p.environment, memoryMb: 256, timeout: Duration.seconds(60), description: 'Delivers signed webhook messages (Standard Webhooks)',
    });
    p.data.table.grantReadWriteData(this.webhooks);
    p.data.sealingSecret.grantRead(this.webhooks);
    p.queues.webhook.queue.grantSendMessages(this.webhooks);
    this.webhooks.addEventSource(new SqsEventSource(p.queues.webhook.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 5 }));

    // The safety net of the schedules' one-time EventBridge triggers (issue 26): every 5 minutes, a schedule whose
    // slot passed unfired gets a firing message on the run queue. Reads the table; sends to the run queue only.
    this.scheduleSweeper = serviceFunction(this, 'worker-schedule-sweeper', {
      entry: 'workers/schedule-sweeper.ts', stage, environment: p.environment, memoryMb: 256, timeout: Duration.seconds(60), description: 'Fires schedules whose EventBridge trigger did not fire',
    });
    p.data.table.grantReadData(this.scheduleSweeper);
    p.queues.run.queue.grantSendMessages(this.scheduleSweeper);
    new Rule(this, 'ScheduleSweep', { schedule: Schedule.rate(Duration.minutes(5)), targets: [new LambdaFunction(this.scheduleSweeper)] });
  }
}
