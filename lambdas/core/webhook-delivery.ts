/**
 * One delivery of a webhook message from the `webhook` queue (issue 26, docs/monitoring.md): loaded only by the
 * webhook queue's consumer (workers/webhook-queue-consumer.ts), with the HTTP attempt of ./webhook-attempt.ts.
 */
import { randomUUID } from 'node:crypto';
import { logger } from '../logger.ts';
import { attemptWebhookDelivery, nextAttemptDelaySeconds } from './webhook-attempt.ts';
import { webhookGroup, type WebhookMessage } from './webhook-events.ts';
import type { WebhookDeliveryRecord } from './ports.ts';
import type { Services } from './services.ts';

/** Longest wait of one message on the queue, s (SQS DelaySeconds' maximum). */
export const MAX_QUEUE_DELAY_SECONDS = 900;

/**
 * One delivery of a webhook message: waits on the queue again when it is not due yet; else attempts it, records the
 * attempt, and queues the next attempt after the back-off when the attempt may be retried.
 * @returns what happened, for logs and tests. Store and queue errors are thrown (the queue delivers the message again).
 */
export async function deliverWebhookMessage(svc: Services, m: WebhookMessage): Promise<'waiting' | 'gone' | WebhookDeliveryRecord['outcome']> {
  const now = svc.clock.now();
  if (m.not_before && Date.parse(m.not_before) > now.getTime()) {
    const wait = Math.min(MAX_QUEUE_DELAY_SECONDS, Math.ceil((Date.parse(m.not_before) - now.getTime()) / 1000));
    await svc.queue.send('webhook', JSON.stringify(m), { delaySeconds: wait, group: webhookGroup(m.account_id) });
    return 'waiting';
  }
  const w = await svc.store.getWebhook(m.account_id, m.webhook_id);
  if (!w) return 'gone';
  const sealer = await svc.sealer();
  let secret: string | null = null;
  try {
    secret = sealer.open(w.secret_sealed, w.account_id);
  } catch {
    // The sealing secret was reset (`accounts reset-secret`): nothing can sign for this webhook any more.
  }
  const result = secret === null
    ? { status_code: null, duration_ms: 0, error: 'secret_unreadable: the signing secret no longer opens (the service\'s sealing secret was reset); delete this webhook and create it again', retryable: false }
    : await attemptWebhookDelivery({ url: w.url, secret, messageId: m.message_id, timestamp: now, payload: m.payload, guard: svc.guard });
  const delay = result.error === null ? null : result.retryable ? nextAttemptDelaySeconds(m.attempt) : null;
  const outcome: WebhookDeliveryRecord['outcome'] = result.error === null ? 'delivered' : delay !== null ? 'will_retry' : 'given_up';
  const nextAt = delay !== null ? new Date(now.getTime() + delay * 1000).toISOString() : null;
  await svc.store.addWebhookDelivery({
    id: randomUUID(), webhook_id: w.id, account_id: w.account_id, message_id: m.message_id, event: m.event, job_id: m.job_id, attempt: m.attempt,
    attempted_at: now.toISOString(), status_code: result.status_code, duration_ms: result.duration_ms, error: result.error, outcome, next_attempt_at: nextAt,
  });
  if (delay !== null) {
    const again: WebhookMessage = { ...m, attempt: m.attempt + 1, not_before: nextAt! };
    await svc.queue.send('webhook', JSON.stringify(again), { delaySeconds: Math.min(MAX_QUEUE_DELAY_SECONDS, delay), group: webhookGroup(m.account_id) });
  }
  if (outcome === 'given_up') logger.info('webhook delivery given up', { webhookId: w.id, messageId: m.message_id, attempt: m.attempt, error: result.error });
  return outcome;
}
