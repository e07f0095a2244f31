/**
 * The job state machine (docs/spec.md, "States and transitions"; docs/architecture.md, "The path of a run"):
 * one table of the named transitions a job can make, the states each may start from per job type, the
 * state it leads to, and who may make it. Every write of a job's state goes through
 * {@link transitionJob}, which turns a named transition into the conditional write
 * `Store.updateJob(id, fromStates, update, attempt)`: a write whose job is no longer in one of the
 * transition's states changes nothing, so a finished job never moves again, and progress never goes down
 * (the store raises it only).
 *
 * Run jobs: `pending -> running -> completed | failed` (a redelivered message restarts a `running` job with
 * attempts + 1). Generate jobs: `pending -> analyzing -> generating -> validating -> completed | failed` (a
 * redelivered message starts again from `analyzing`).
 *
 * **Example usage:**
 * ```ts
 * const started = await transitionJob(svc, job, 'start', { status_message: 'Running' }, { by: 'run_worker' });
 * if (!started) return; // another delivery finished it, or the job is gone
 * ```
 */
import type { JobRecord, JobStatus, JobType, JobUpdate } from './ports.ts';
import type { Services } from './services.ts';
import { announceJobEnd } from './webhook-events.ts';

/** Finished states: no transition leaves them. */
export const FINISHED: readonly JobStatus[] = ['completed', 'failed'];
/** Every state a job can be in before it finishes, across job types. */
export const UNFINISHED: readonly JobStatus[] = ['pending', 'analyzing', 'generating', 'validating', 'running'];

/** Who changes jobs. */
export type JobActor =
  /** The HTTP handlers (POST /run/, POST /generate/). */
  | 'api'
  /** One delivery of a run message (core/run-job-executor.ts). */
  | 'run_worker'
  /** One delivery of a generate message (core/generate-job-executor.ts). */
  | 'generate_worker'
  /** The consumer of the dead-letter queues (workers/dead-letter.ts). */
  | 'dead_letter_consumer'
  /** The local service's watchdog of stuck worker threads (adapters/local/watchdog.ts). */
  | 'watchdog'
  /** The local service's start-up recovery (adapters/local/recovery.ts). */
  | 'recovery';

/** The named transitions of {@link JOB_TRANSITIONS}. */
export type JobTransition =
  | 'start' | 'progress' | 'advance' | 'complete' | 'fail' | 'retry'
  | 'recover' | 'queue_failed' | 'dead_letter' | 'watchdog_timeout';

/** One allowed move: from a state to a state (the same state for writes that keep it). */
type Move = readonly [from: JobStatus, to: JobStatus];

/** A row of the table. */
interface TransitionRule {
  /** The moves it allows, per job type; a job type that is absent cannot make it. */
  moves: Readonly<Partial<Record<JobType, readonly Move[]>>>;
  /** Who may make it. */
  by: readonly JobActor[];
  /** Adds one to `attempts` (a delivery of the job's message starts work). */
  countsAttempt?: boolean;
  /** Sets `started_at` (kept from the first time by the store). */
  setsStartedAt?: boolean;
  /** Sets `completed_at`: the transition finishes the job. */
  setsCompletedAt?: boolean;
  /** What it is for. */
  summary: string;
}

const same = (...states: JobStatus[]): Move[] => states.map((s) => [s, s] as const);
const to = (target: JobStatus, ...states: JobStatus[]): Move[] => states.map((s) => [s, target] as const);
const GENERATE_UNFINISHED: JobStatus[] = ['pending', 'analyzing', 'generating', 'validating'];
const RUN_UNFINISHED: JobStatus[] = ['pending', 'running'];

/** The transitions of every job. The unit tests (test/unit/job-states.test.ts) try each against each state. */
const JOB_TRANSITIONS: Readonly<Record<JobTransition, TransitionRule>> = {
  start: {
    moves: { run: [['pending', 'running'], ['running', 'running']], generate: to('analyzing', ...GENERATE_UNFINISHED) },
    by: ['run_worker', 'generate_worker'],
    countsAttempt: true,
    setsStartedAt: true,
    summary: 'a delivery of the job message starts the job (a generation from its first step); from a started state it is a redelivery after an interrupted attempt',
  },
  progress: {
    moves: { run: same('running'), generate: same('analyzing', 'generating', 'validating') },
    by: ['run_worker', 'generate_worker'],
    summary: 'progress, counters and status message of the current step; progress is only raised',
  },
  advance: {
    moves: { generate: [['analyzing', 'generating'], ['generating', 'validating']] },
    by: ['generate_worker'],
    summary: 'the next step of a generate job',
  },
  complete: {
    moves: { run: to('completed', 'running'), generate: to('completed', 'validating') },
    by: ['run_worker', 'generate_worker'],
    setsCompletedAt: true,
    summary: 'the work is done; rows and counts are written with it',
  },
  fail: {
    moves: { run: to('failed', ...RUN_UNFINISHED), generate: to('failed', ...GENERATE_UNFINISHED) },
    by: ['run_worker', 'generate_worker'],
    setsCompletedAt: true,
    summary: 'the work cannot succeed (invalid config, refused or failing target, time-out, last attempt failed)',
  },
  retry: {
    moves: { run: same('running'), generate: same('analyzing', 'generating', 'validating') },
    by: ['run_worker', 'generate_worker'],
    summary: 'the status message of an attempt that failed and whose message will be delivered again',
  },
  recover: {
    moves: { run: same(...RUN_UNFINISHED), generate: same(...GENERATE_UNFINISHED) },
    by: ['recovery'],
    summary: 'an unfinished job whose message was lost with the last process is queued again at start-up',
  },
  queue_failed: {
    moves: { run: to('failed', 'pending'), generate: to('failed', 'pending') },
    by: ['api'],
    setsCompletedAt: true,
    summary: 'the job was created but its message could not be queued (the charge is refunded)',
  },
  dead_letter: {
    moves: { run: to('failed', ...RUN_UNFINISHED), generate: to('failed', ...GENERATE_UNFINISHED) },
    by: ['dead_letter_consumer'],
    setsCompletedAt: true,
    summary: 'the queue gave up on the message after its maximum receives',
  },
  watchdog_timeout: {
    moves: { run: to('failed', ...RUN_UNFINISHED), generate: to('failed', ...GENERATE_UNFINISHED) },
    by: ['watchdog'],
    setsCompletedAt: true,
    summary: 'the worker stayed busy past the job time limit and was restarted',
  },
};

/** The fields a transition's caller may set; status only for `advance`, which has more than one target. */
export type JobPatch = Omit<JobUpdate, 'status' | 'increment_attempts' | 'started_at' | 'completed_at'> & { status?: JobStatus };

/** Who makes a transition, and which attempt it belongs to. */
export interface TransitionActor {
  by: JobActor;
  /**
   * The job's `attempts` when this delivery started it: a write of a stale attempt (an older duplicate
   * delivery still running) changes nothing. Left out by writers outside a delivery.
   */
  attempt?: number;
}

/**
 * Makes a named transition as one conditional write.
 * @param job the job (its id and type: a job's type never changes, so no read is needed).
 * @param patch fields written with it; `status` only for `advance` (the step to go to).
 * A transition that finishes the job (`complete`, `fail`, …) then queues the deliveries of its events to the account's
 * webhooks (core/webhooks.ts `announceJobEnd`) when `svc` has a queue.
 * @returns the updated job, or null when the job is no longer in a state the transition starts from (or,
 *   with `who.attempt`, a newer attempt has started), or is absent.
 * @throws Error (a programming error, not a caller's) when `who.by` may not make the transition, the job
 *   type cannot make it, or `patch.status` is missing, superfluous or not one of its targets.
 */
export async function transitionJob(
  svc: Pick<Services, 'store' | 'clock'>,
  job: Pick<JobRecord, 'id' | 'job_type'>,
  transition: JobTransition,
  patch: JobPatch,
  who: TransitionActor,
): Promise<JobRecord | null> {
  const rule = JOB_TRANSITIONS[transition];
  if (!rule.by.includes(who.by)) throw new Error(`job transition "${transition}" may be made by ${rule.by.join(', ')}, not by ${who.by}`);
  const moves = rule.moves[job.job_type];
  if (!moves) throw new Error(`job transition "${transition}" does not apply to ${job.job_type} jobs`);
  const targets = [...new Set(moves.filter(([f, t]) => f !== t).map(([, t]) => t))];
  const { status: requested, ...fields } = patch;
  let target: JobStatus | undefined;
  if (targets.length > 1) {
    if (!requested || !targets.includes(requested)) throw new Error(`job transition "${transition}" needs status, one of ${targets.join(', ')}; got ${requested ?? 'none'}`);
    target = requested;
  } else if (requested !== undefined && requested !== targets[0]) {
    throw new Error(`job transition "${transition}" sets status ${targets[0] ?? '(unchanged)'}, not ${requested}`);
  } else {
    target = targets[0];
  }
  // A transition with moves to itself and to another state (start: pending -> running, running -> running)
  // has one target; the state-keeping moves are the sources that are already there.
  const from = moves.filter(([f, t]) => target === undefined ? f === t : t === target).map(([f]) => f);
  const now = svc.clock.now().toISOString();
  const update: JobUpdate = {
    ...fields,
    ...(target ? { status: target } : {}),
    ...(rule.countsAttempt ? { increment_attempts: true } : {}),
    ...(rule.setsStartedAt ? { started_at: now } : {}),
    ...(rule.setsCompletedAt ? { completed_at: now } : {}),
  };
  const updated = await svc.store.updateJob(job.id, from, update, who.attempt);
  // A job that just finished tells the account's webhooks (issue 26): messages queued, never a wait for a receiver.
  if (updated && rule.setsCompletedAt && 'queue' in svc) await announceJobEnd(svc as Services, updated);
  return updated;
}
