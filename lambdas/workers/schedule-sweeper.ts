/**
 * AWS only (issue 26): the safety net of EventBridge Scheduler's one-time triggers (adapters/aws/schedule-triggers.ts).
 * Every 5 minutes (an EventBridge rule), an enabled schedule whose stored `next_run_at` is more than {@link LATE_MS}
 * past has not fired: its trigger was lost (a re-arm that failed for good, a message the queue gave up on). It gets a
 * firing message on the run queue, as its trigger would have sent; the run worker fires it (once per slot, whoever
 * sends: core/schedules.ts) and arms the trigger again. The local service needs none: its loop reads the store.
 */
import { accountGroup } from '../core/ports.ts';
import type { ScheduleFiringMessage } from '../core/schedules.ts';
import { services } from '../core/services.ts';
import { logger } from '../logger.ts';

/** How late a slot may be before its schedule is taken for lost, ms (EventBridge fires within a minute, SQS adds some). */
export const LATE_MS = 3 * 60_000;
/** Schedules sent per run, at most; the next run takes the rest. */
const BATCH = 1000;

export async function handler(): Promise<{ requeued: number }> {
  const svc = await services();
  const late = await svc.store.listDueSchedules(new Date(svc.clock.now().getTime() - LATE_MS).toISOString(), BATCH);
  for (const s of late) {
    const message: ScheduleFiringMessage = { schedule_id: s.id, account_id: s.account_id };
    await svc.queue.send('run', JSON.stringify(message), { group: accountGroup(s.account_id) });
  }
  if (late.length) logger.warn('schedules whose trigger did not fire were fired by the sweeper', { count: late.length, ids: late.slice(0, 20).map((s) => s.id) });
  return { requeued: late.length };
}
