/**
 * {@link JobQueue} on Amazon SQS: SendMessage to the queue of each job type. The consumers are Lambda
 * event source mappings (lib/workers.ts) delivering SQS events to lambdas/workers/*.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { JobQueue, QueueName } from '../../core/ports.ts';

export interface SqsQueueOptions {
  /** Queue URL per job type (RUN_QUEUE_URL, GENERATE_QUEUE_URL). */
  urls: Partial<Record<QueueName, string>>;
  client?: SQSClient;
}

export class SqsQueue implements JobQueue {
  private readonly client: SQSClient;
  private readonly urls: Partial<Record<QueueName, string>>;

  constructor(o: SqsQueueOptions) {
    this.client = o.client ?? new SQSClient({});
    this.urls = o.urls;
  }

  /** @throws Error when no queue URL is configured for `queue`, or SQS refuses the message. */
  async send(queue: QueueName, body: string): Promise<void> {
    const url = this.urls[queue];
    if (!url) throw new Error(`no queue URL configured for "${queue}" jobs`);
    await this.client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
  }
}
