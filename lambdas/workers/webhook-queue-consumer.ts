/**
 * The webhook queue's consumer (issue 26): the webhook-worker Lambda on AWS (an SQS event source with
 * ReportBatchItemFailures), and locally the service's webhook poller (adapters/local/webhook-poller.ts) with the same
 * event shape. Each record is one delivery attempt of one message (core/webhooks.ts `deliverWebhookMessage`); the
 * records of a batch are attempted at once, each bounded by the attempt's time-out, so one slow receiver holds up
 * no other. A record whose attempt could not be recorded or re-queued (a store or queue error) is reported failed
 * and delivered again; an unreadable one is logged and dropped.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deliverWebhookMessage } from '../core/webhook-delivery.ts';
import { isWebhookMessage } from '../core/webhook-events.ts';
import { services } from '../core/services.ts';
import { logger } from '../logger.ts';

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const svc = await services();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(event.Records.map(async (record) => {
    let message: unknown;
    try {
      message = JSON.parse(record.body);
    } catch {
      message = null;
    }
    if (!isWebhookMessage(message)) {
      logger.error('unreadable webhook message dropped', { messageId: record.messageId });
      return;
    }
    try {
      await deliverWebhookMessage(svc, message);
    } catch (err) {
      logger.error('webhook delivery not recorded; the message is delivered again', { webhookId: message.webhook_id, messageId: message.message_id, error: err });
      failures.push({ itemIdentifier: record.messageId });
    }
  }));
  return { batchItemFailures: failures };
}
