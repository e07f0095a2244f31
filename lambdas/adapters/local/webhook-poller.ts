/**
 * The local stand-in for the webhook worker's event source mapping (issue 26): the webhook queue's messages are
 * handed to the same consumer the cloud runs (workers/webhook-queue-consumer.ts), one message per call, at most
 * {@link MAX_IN_FLIGHT} at once, {@link PER_ACCOUNT_IN_FLIGHT} of one account (its queue group, core/webhook-events.ts
 * `webhookGroup`; the accounts served in turn) and {@link PER_WEBHOOK_IN_FLIGHT} of one webhook inside it. So one
 * account's receivers that hang hold half of the slots at most, whatever number of webhooks it has (issue 37: with
 * the limit per webhook only, ten hanging webhooks of one account held all 8 and another account's delivery waited
 * 8-9.6 s), and one slow webhook of an account leaves its other webhooks slots too. On the HTTP thread: an attempt is
 * one POST through the guarded agent whose answer body is never parsed; its time-out bounds it. A message is deleted
 * once its attempt is recorded; one whose attempt could not be recorded becomes visible again after
 * {@link VISIBILITY_MS}. A slow receiver holds one of the slots, never a job worker or a request.
 */
import { handler as webhookConsumer } from '../../workers/webhook-queue-consumer.ts';
import { logger } from '../../logger.ts';
import { toSqsEvent, type LocalServices } from './runtime.ts';

/** Deliveries attempted at once. */
export const MAX_IN_FLIGHT = 8;
/** Deliveries of one account attempted at once: half of {@link MAX_IN_FLIGHT} (its queue group's limit). */
export const PER_ACCOUNT_IN_FLIGHT = 4;
/** Deliveries of one webhook attempted at once, inside its account's share. */
export const PER_WEBHOOK_IN_FLIGHT = 2;
/** How long a received message is hidden while its attempt runs (above the attempt's 10 s time-out), ms. */
const VISIBILITY_MS = 60_000;
const POLL_MS = 200;

/** The webhook a queue body is for ('' for a body that is not a webhook message: the consumer logs and drops it). */
function webhookOf(body: string): string {
  try {
    const id = (JSON.parse(body) as { webhook_id?: unknown }).webhook_id;
    return typeof id === 'string' ? id : '';
  } catch {
    return '';
  }
}

/** Starts polling. @returns a handle whose stop() ends it and waits for the attempts under way. */
export function startWebhookPoller(local: LocalServices): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  /** Attempts under way per webhook. */
  const perWebhook = new Map<string, number>();
  let stopped = false;
  const accept = (body: string) => (perWebhook.get(webhookOf(body)) ?? 0) < PER_WEBHOOK_IN_FLIGHT;
  const timer = setInterval(() => {
    // One message a receive, so that each webhook's count includes the one taken just before.
    while (!stopped && inFlight.size < MAX_IN_FLIGHT) {
      const [m] = local.queue.receive('webhook', 1, VISIBILITY_MS, () => PER_ACCOUNT_IN_FLIGHT, accept);
      if (!m) break;
      const webhook = webhookOf(m.body);
      perWebhook.set(webhook, (perWebhook.get(webhook) ?? 0) + 1);
      const p = webhookConsumer(toSqsEvent('webhook', [m])).then(
        (r) => { if (!r.batchItemFailures.length) local.queue.delete(m.receipt); },
        (err: unknown) => logger.error('webhook consumer failed', { error: err }),
      ).finally(() => {
        inFlight.delete(p);
        const n = (perWebhook.get(webhook) ?? 1) - 1;
        if (n > 0) perWebhook.set(webhook, n);
        else perWebhook.delete(webhook);
      });
      inFlight.add(p);
    }
  }, POLL_MS);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}
