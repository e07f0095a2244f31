/**
 * The local stand-in for DynamoDB's time-to-live on usage counters: every 15 minutes, counters whose period
 * is over (hourly rate windows, past months, the 15-minute throttle windows of core/throttles.ts, whose
 * names carry attacker-chosen emails and addresses) are deleted, so a long-running service does not keep them.
 */
import { logger } from '../../logger.ts';
import type { LocalServices } from './runtime.ts';

/** How often expired counters are deleted (ms): the throttles' window. */
const SWEEP_MS = 15 * 60_000;

/** Deletes expired counters now and then every {@link SWEEP_MS}. @returns a handle whose stop() ends it. */
export function startCounterSweeper(local: LocalServices): { stop(): void } {
  const sweep = () => {
    try {
      local.store.deleteExpiredCounters(local.services.clock.now());
    } catch (err) {
      logger.warn('expired counters not deleted', { error: err });
    }
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
