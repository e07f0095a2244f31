/**
 * The job queues: one per job type, each with a dead-letter queue after `maxReceives` deliveries (plus the
 * receives that only deferred a job whose account was at its limit: SQS counts them too), a visibility
 * time-out above the worker's time-out, SSE and TLS only. Messages carry their account as MessageGroupId, which
 * makes these standard queues SQS fair queues.
 */
import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { StageConfig } from './stage.ts';

export interface JobQueue {
  queue: Queue;
  deadLetters: Queue;
}

export class Queues extends Construct {
  readonly run: JobQueue;
  readonly generate: JobQueue;
  /**
   * Webhook deliveries (issue 26, core/webhooks.ts): one message per attempt; a back-off longer than SQS's 15-minute
   * delay is waited out in steps by the consumer. Its dead-letter queue only takes messages whose attempt could not
   * be recorded five times (the store down): a receiver's failures are retried by new messages, never by redelivery.
   */
  readonly webhook: JobQueue;

  constructor(scope: Construct, id: string, stage: StageConfig) {
    super(scope, id);
    this.run = this.jobQueue('Run', 'run', stage);
    this.generate = this.jobQueue('Generate', 'generate', stage);
    const webhookDeadLetters = new Queue(this, 'WebhookDeadLetters', {
      queueName: `${stage.prefix}-webhook-dlq`, retentionPeriod: Duration.days(14), encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true,
    });
    this.webhook = {
      deadLetters: webhookDeadLetters,
      queue: new Queue(this, 'Webhook', {
        queueName: `${stage.prefix}-webhook`,
        // Above the webhook worker's time-out (60 s).
        visibilityTimeout: Duration.minutes(3),
        retentionPeriod: Duration.days(4),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: webhookDeadLetters, maxReceiveCount: 5 },
      }),
    };
  }

  private jobQueue(id: string, name: string, stage: StageConfig): JobQueue {
    const deadLetters = new Queue(this, `${id}DeadLetters`, {
      queueName: `${stage.prefix}-${name}-dlq`,
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const queue = new Queue(this, id, {
      queueName: `${stage.prefix}-${name}`,
      // Above the worker's time-out, so a message is never handed to a second worker while the first runs.
      visibilityTimeout: stage.workerTimeout.plus(Duration.minutes(2)),
      retentionPeriod: Duration.days(4),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: stage.maxReceives + stage.maxDeferrals },
    });
    return { queue, deadLetters };
  }
}
