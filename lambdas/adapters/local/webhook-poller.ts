/**
 * The local stand-in for the webhook worker's event source mapping (issue 26): the webhook queue's messages are
 * handed to the same consumer the cloud runs (workers/webhook-queue-consumer.ts), one message per call, at most
 * {@link MAX_IN_FLIGHT} at once and {@link PER_WEBHOOK_IN_FLIGHT} of one webhook (the webhooks served in turn: one
 * account's slow receiver holds two slots, not all), on the HTTP thread (an attempt is one POST through the guarded agent whose answer
 * body is never parsed; its time-out bounds it). A message is deleted once its attempt is recorded; one whose
 * attempt could not be recorded becomes visible again after {@link VISIBILITY_MS}. A slow receiver holds one of the
 * slots, never a job worker or a request.
 */
import { handler as webhookConsumer } from '../../workers/webhook-queue-consumer.ts';
import { logger } from '../../logger.ts';
import { toSqsEvent, type LocalServices } from './runtime.ts';

/** Deliveries attempted at once. */
export const MAX_IN_FLIGHT = 8;
/** Deliveries of one webhook attempted at once (its queue group, core/webhook-events.ts `webhookGroup`). */
export const PER_WEBHOOK_IN_FLIGHT = 2;
/** How long a received message is hidden while its attempt runs (above the attempt's 10 s time-out), ms. */
const VISIBILITY_MS = 60_000;
const POLL_MS = 200;

/** Starts polling. @returns a handle whose stop() ends it and waits for the attempts under way. */
export function startWebhookPoller(local: LocalServices): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  const timer = setInterval(() => {
    if (stopped || inFlight.size >= MAX_IN_FLIGHT) return;
    const messages = local.queue.receive('webhook', MAX_IN_FLIGHT - inFlight.size, VISIBILITY_MS, () => PER_WEBHOOK_IN_FLIGHT);
    for (const m of messages) {
      const p = webhookConsumer(toSqsEvent('webhook', [m])).then(
        (r) => { if (!r.batchItemFailures.length) local.queue.delete(m.receipt); },
        (err: unknown) => logger.error('webhook consumer failed', { error: err }),
      ).finally(() => inFlight.delete(p));
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
