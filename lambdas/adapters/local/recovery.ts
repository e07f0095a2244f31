/**
 * Start-up recovery of the local service, so that every job ends `completed` or `failed` after a crash:
 * the messages in flight when the last process died are released at once (their next delivery retries
 * the job or, past `SAI_MAX_RECEIVES`, dead-letters it), and every unfinished job (run or generate) without a
 * message gets one again on its queue, in its account's group (the `recover` transition of core/job-states.ts records why). Runs before the workers
 * start, so nothing races with it.
 */
import { transitionJob, UNFINISHED } from '../../core/job-states.ts';
import type { RunMessage } from '../../core/run-jobs.ts';
import { accountGroup } from '../../core/ports.ts';
import type { LocalServices } from './runtime.ts';

/** What recovery did. */
export interface Recovered {
  /** Messages in flight at the last stop, visible again. */
  released: number;
  /** Unfinished jobs that had no message and were queued again. */
  requeued: number;
}

function jobIdOf(body: string): string | null {
  try {
    return (JSON.parse(body) as Partial<RunMessage>).job_id ?? null;
  } catch {
    return null;
  }
}

/** Releases messages in flight and queues every unfinished job that has no message. */
export async function recoverJobs(local: LocalServices): Promise<Recovered> {
  const released = local.queue.releaseInFlight();
  const queued = new Set([...local.queue.allBodies('run'), ...local.queue.allBodies('generate')].map(jobIdOf));
  let requeued = 0;
  for (const job of await local.store.listJobsByStatus(UNFINISHED)) {
    if (queued.has(job.id)) continue;
    const kept = await transitionJob(local.services, job, 'recover', {
      status_message: job.status === 'pending'
        ? 'Queued again: the service stopped before a worker took this job'
        : job.job_type === 'run'
          ? 'Queued again: the service stopped while this job ran; it starts again from its first page'
          : 'Queued again: the service stopped while this job generated a config; it starts again',
    }, { by: 'recovery' });
    if (!kept) continue;
    const queue = job.job_type === 'run' ? 'run' : 'generate';
    await local.queue.send(queue, JSON.stringify({ job_id: job.id } satisfies RunMessage), { group: accountGroup(job.account_id) });
    requeued++;
  }
  return { released, requeued };
}
