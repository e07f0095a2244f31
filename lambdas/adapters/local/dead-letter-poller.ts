/**
 * The local stand-in for the dead-letter queues' event source mappings: every second, messages the run
 * and generate queues gave up on (past `SAI_MAX_RECEIVES` deliveries) go to the dead-letter consumer
 * (lambdas/workers/dead-letter.ts, the same handler the cloud runs), which ends their jobs `failed`.
 * A message stays in the dead-letter queue until the consumer has handled it.
 */
import { handler as deadLetterConsumer } from '../../workers/dead-letter.ts';
import { logger } from '../../logger.ts';
import { toSqsEvent, type LocalServices } from './runtime.ts';

/** Dead-lettered messages handed to the consumer at once (the cloud mapping's batch size). */
const BATCH_SIZE = 10;
/** How long a batch is hidden from the next poll while the consumer works on it (ms). */
const VISIBILITY_MS = 60_000;
const POLL_MS = 1000;

/** Starts polling. @returns a handle whose stop() ends it. */
export function startDeadLetterPoller(local: LocalServices): { stop(): void } {
  const timer = setInterval(() => {
    for (const queue of ['run', 'generate'] as const) {
      const messages = local.queue.receiveDead(queue, BATCH_SIZE, VISIBILITY_MS);
      if (!messages.length) continue;
      deadLetterConsumer(toSqsEvent(queue, messages)).then(
        () => messages.forEach((m) => local.queue.delete(m.receipt)),
        (err: unknown) => logger.error('dead-letter handler failed', { error: err }),
      );
    }
  }, POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
