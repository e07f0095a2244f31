/**
 * {@link JobQueue} on Amazon SQS: SendMessage to the queue of each job type, and ChangeMessageVisibility for a
 * delivery the consumer defers (its account runs as many jobs as its plan allows, workers/job-queue-handler.ts).
 * The consumers are Lambda event source mappings (lib/workers.ts) delivering SQS events to lambdas/workers/*.
 *
 * A message's group (its account) is sent as its MessageGroupId: on a standard queue that makes it an SQS
 * fair queue, which serves quiet accounts' messages before a noisy account's backlog
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html).
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient, type SendMessageCommandInput } from '@aws-sdk/client-sqs';
import type { JobQueue, QueueName, SendOptions } from '../../core/ports.ts';

export interface SqsQueueOptions {
  /** Queue URL per job type (RUN_QUEUE_URL, GENERATE_QUEUE_URL). */
  urls: Partial<Record<QueueName, string>>;
  client?: SQSClient;
}

/** Longest SendMessage delay SQS allows, seconds. */
const MAX_DELAY_S = 900;
/** Longest visibility timeout SQS allows, seconds (12 hours). */
const MAX_VISIBILITY_S = 43_200;

export class SqsQueue implements JobQueue {
  private readonly client: SQSClient;
  private readonly urls: Partial<Record<QueueName, string>>;

  constructor(o: SqsQueueOptions) {
    this.client = o.client ?? new SQSClient({});
    this.urls = o.urls;
  }

  private url(queue: QueueName): string {
    const url = this.urls[queue];
    if (!url) throw new Error(`no queue URL configured for "${queue}" jobs`);
    return url;
  }

  /** @throws Error when no queue URL is configured for `queue`, or SQS refuses the message. */
  async send(queue: QueueName, body: string, options: SendOptions = {}): Promise<void> {
    const input: SendMessageCommandInput = { QueueUrl: this.url(queue), MessageBody: body };
    if (options.group !== undefined) input.MessageGroupId = options.group;
    if (options.delaySeconds) input.DelaySeconds = Math.min(MAX_DELAY_S, Math.max(0, Math.round(options.delaySeconds)));
    await this.client.send(new SendMessageCommand(input));
  }

  /**
   * ChangeMessageVisibility of the delivery: received again after `seconds`. The receive still counts
   * (ApproximateReceiveCount is never lowered), which the consumer allows for.
   * @throws Error when SQS refuses (e.g. a receipt handle that is no longer current).
   */
  async deferDelivery(queue: QueueName, receipt: string, seconds: number): Promise<void> {
    await this.client.send(new ChangeMessageVisibilityCommand({
      QueueUrl: this.url(queue), ReceiptHandle: receipt, VisibilityTimeout: Math.min(MAX_VISIBILITY_S, Math.max(0, Math.round(seconds))),
    }));
  }
}
