/**
 * The local service's schedule firing (issue 26; on AWS EventBridge Scheduler fires instead): every second the
 * store's due schedules (enabled, `next_run_at` at or before the clock's now) are fired one after another through
 * core/schedules.ts `fireSchedule`, which fires each slot once whoever calls it: a restart neither fires a slot
 * twice nor loses one, and a schedule missed while the service was down fires once, for its latest slot. Runs on
 * the HTTP thread: a firing is a few store writes and a queue message, no page is touched.
 */
import { fireSchedule } from '../../core/schedules.ts';
import { logger } from '../../logger.ts';
import type { LocalServices } from './runtime.ts';

/** How often the store is asked for due schedules, ms. */
const TICK_MS = 1000;
/** Due schedules read at once; a full batch is followed by the next at once. */
const BATCH = 200;

/** Starts firing. @returns a handle whose stop() ends it (a tick under way finishes its current firing). */
export function startScheduleLoop(local: LocalServices): { stop(): Promise<void> } {
  const svc = local.services;
  let stopped = false;
  let running: Promise<void> | null = null;

  async function tick(): Promise<void> {
    for (;;) {
      const due = await svc.store.listDueSchedules(svc.clock.now().toISOString(), BATCH);
      let failed = 0;
      for (const s of due) {
        if (stopped) return;
        try {
          const outcome = await fireSchedule(svc, s);
          if (outcome.kind !== 'not_due') logger.info(`schedule ${s.id}: ${outcome.kind}`, { scheduleId: s.id, accountId: s.account_id, outcome });
        } catch (err) {
          failed++;
          logger.error('schedule firing failed; it is tried again next tick', { scheduleId: s.id, error: err });
        }
        // The store and the queue answer synchronously here: let waiting requests in between two firings.
        await new Promise((r) => setImmediate(r));
      }
      // A full batch goes on at once, unless it all failed (a store that refuses writes): the next tick tries again.
      if (due.length < BATCH || stopped || failed === due.length) return;
    }
  }

  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick().catch((err: unknown) => logger.error('schedule loop tick failed', { error: err })).finally(() => { running = null; });
  }, TICK_MS);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
