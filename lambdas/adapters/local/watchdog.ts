/**
 * The watchdog of the local job workers. A job whose thread is busy past its time limit (a regular
 * expression that backtracks for ever, a page the engine cannot leave) cannot be stopped from inside,
 * because the thread's own timer never runs. The job ends `failed` (`watchdog_timeout`, core/job-states.ts),
 * its message is deleted, and the thread is terminated; a fresh thread takes its place (worker-pool.ts).
 * On Lambda the function's own timeout plays this part.
 */
import { transitionJob } from '../../core/job-states.ts';
import { logger } from '../../logger.ts';
import type { LocalServices, LocalSettings } from './runtime.ts';
import type { WorkerSlot } from './worker-pool.ts';

/** Time past a job's limit before the watchdog steps in (ms): the job's own timer gets the first chance. */
function watchdogGraceMs(s: Pick<LocalSettings, 'jobTimeoutMs'>): number {
  return Math.min(30_000, Math.max(1000, s.jobTimeoutMs / 2));
}

/** Ends the job of a slot whose thread has held its message past the limit, and the thread with it. */
async function enforceTimeLimit(settings: LocalSettings, local: LocalServices, slot: WorkerSlot): Promise<void> {
  const svc = local.services;
  const held = slot.held;
  if (!held || svc.clock.now().getTime() - held.since < settings.jobTimeoutMs + watchdogGraceMs(settings)) return;
  // Taken before any await: the thread's exit must not hand the message back for another delivery.
  slot.takeHeld();
  logger.error('job worker stuck past the time limit; restarting it', { jobId: held.jobId, worker: slot.index });
  const job = held.jobId ? await svc.store.getJobById(held.jobId) : null;
  if (job) {
    await transitionJob(svc, job, 'watchdog_timeout', {
      status_message: `job_timeout: the run did not stop at the limit of ${Math.round(settings.jobTimeoutMs / 1000)} s per job (a page or a pattern kept the worker busy) and its worker was restarted`,
    }, { by: 'watchdog' });
  }
  local.queue.delete(held.receipt);
  await slot.terminate();
}

/**
 * Checks every slot every few seconds (at most every 5 s, and at least as often as the grace period).
 * @returns a handle whose stop() ends the checks.
 */
export function startWatchdog(settings: LocalSettings, local: LocalServices, slots: readonly WorkerSlot[]): { stop(): void } {
  const timer = setInterval(() => {
    for (const slot of slots) {
      enforceTimeLimit(settings, local, slot).catch((err: unknown) => logger.error('watchdog check failed', { worker: slot.index, error: err }));
    }
  }, Math.min(5_000, watchdogGraceMs(settings)));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
