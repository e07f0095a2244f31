/**
 * Schedules (issue 26, docs/monitoring.md): a saved config run on a 5-field cron rule in a time zone. The routes
 * (lambdas/http/schedules-*.ts) create, read, change and delete them; a firing ({@link fireSchedule}) starts a run
 * job exactly as POST /run/ does (core/run-jobs.ts `startRun`: the plan, metering and quota, the job record, plus
 * `schedule_id`).
 *
 * Who fires: locally the service's loop (adapters/local/schedule-loop.ts) asks the store for due schedules every
 * second; on AWS one EventBridge Scheduler schedule per stored schedule ({@link ScheduleTriggers}) puts a firing
 * message ({@link ScheduleFiringMessage}) on the run queue, and the run worker fires it. Both end in
 * {@link fireSchedule}, which makes a firing happen once per slot whoever calls it and however often:
 * - the slot is the latest cron time at or before now that is after the last firing (core/schedule-times.ts
 *   `dueFiring`): after downtime a missed schedule fires once, for its latest slot;
 * - the job's id is derived from the schedule and the slot, so a second firer of the same slot cannot create a
 *   second job (the store refuses the id and the charge is given back), and a firer that finds the job already
 *   there only records it;
 * - the schedule's record is then claimed with a write conditional on its `last_fired_at`.
 * A firing while the schedule's last job is unfinished is skipped and counted; a firing refused for the plan, the
 * quota or a config gone pauses the schedule with the reason in its record (`paused`), not a silent skip.
 */
import { randomUUID } from 'node:crypto';
import { derivedUuid } from './crypto.ts';
import { CodedError, isCodedError } from '../errors.ts';
import { logger } from '../logger.ts';
import { FINISHED } from './job-states.ts';
import { DEFAULT_SCHEDULE_MIN_INTERVAL_MINUTES, type Plan } from './plans.ts';
import { SCHEDULE_RECENT_JOBS, type AccountRecord, type ScheduleRecord, type SchedulePatch } from './ports.ts';
import { startRun } from './run-jobs.ts';
import { checkScheduleRule, dueFiring, nextRunAt, type ScheduleTimes } from './schedule-times.ts';
import type { Services } from './services.ts';

/** Body of POST /api/v1/schedules/. */
export interface NewSchedule {
  config_id: string;
  cron: string;
  /** IANA time zone; `UTC` when absent. */
  timezone?: string;
  /** @default true */
  enabled?: boolean;
}

/** Body of PUT /api/v1/schedules/{id}/: the fields to change (at least one). Enabling a paused schedule clears its pause. */
export interface ScheduleChange {
  cron?: string;
  timezone?: string;
  enabled?: boolean;
}

/** Schedules one account may have. */
export const MAX_SCHEDULES_PER_ACCOUNT = 100;

/** What the run queue carries for a firing on AWS (EventBridge Scheduler's target input). */
export interface ScheduleFiringMessage {
  schedule_id: string;
  account_id: number;
  /** ISO 8601 UTC, `<aws.scheduler.scheduled-time>`: informative; the slot is computed from the clock. */
  scheduled_time?: string;
}

/** Whether a queue message body is a schedule's firing rather than a job delivery. */
export function isScheduleFiring(body: unknown): body is ScheduleFiringMessage {
  return typeof body === 'object' && body !== null && typeof (body as ScheduleFiringMessage).schedule_id === 'string' && typeof (body as ScheduleFiringMessage).account_id === 'number';
}

/**
 * The API's view of a schedule (docs/monitoring.md). `next_run_at` is the stored next slot while it is still ahead;
 * croner computes it only for a stored one that has passed (a firing under way, a trigger late on AWS).
 */
export function scheduleView(svc: Pick<Services, 'clock'>, s: ScheduleRecord): Record<string, unknown> {
  const now = svc.clock.now();
  const next = !s.enabled ? null : s.next_run_at && Date.parse(s.next_run_at) > now.getTime() ? s.next_run_at : nextRunAt(s, now)?.toISOString() ?? null;
  return {
    id: s.id,
    config_id: s.config_id,
    cron: s.cron,
    timezone: s.timezone,
    enabled: s.enabled,
    next_run_at: next,
    last_fired_at: s.last_fired_at,
    paused: s.paused,
    fired_count: s.fired_count,
    skipped_count: s.skipped_count,
    recent_jobs: s.recent_jobs,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

/** The plan's shortest interval, or a refusal when the plan has no schedules. @throws CodedError `plan_required`, `plan_unknown`. */
function scheduleInterval(svc: Services, account: AccountRecord): { plan: Plan; minutes: number } {
  const plan = svc.plans.plans[account.plan];
  if (!plan) throw new CodedError('plan_unknown', `The account's plan "${account.plan}" is not defined; an operator must move it to a known plan`);
  if (!plan.has_server_execution) {
    const upgrade = Object.values(svc.plans.plans).filter((p) => p.has_server_execution).map((p) => p.label);
    throw new CodedError('plan_required', `Schedules run configs on the server, which needs a plan with server execution (${upgrade.join(' or ')}); the ${plan.label} plan has none`,
      [{ plan: plan.name, required: 'has_server_execution', plans_with_it: upgrade }]);
  }
  return { plan, minutes: plan.schedule_min_interval_minutes ?? DEFAULT_SCHEDULE_MIN_INTERVAL_MINUTES };
}

/**
 * The rule of a request, checked against the plan's shortest interval (off the local service's HTTP thread: the
 * check can take up to about 2 s of CPU for the worst expressions).
 * @throws CodedError `invalid_request` (core/schedule-times.ts), `plan_required` (fires more often than the plan allows).
 */
async function checkedTimes(svc: Services, account: AccountRecord, input: { cron: unknown; timezone?: unknown }): Promise<ScheduleTimes> {
  const { plan, minutes } = scheduleInterval(svc, account);
  const opts = { minIntervalMinutes: minutes, now: svc.clock.now() };
  const { times, shortestIntervalMinutes: shortest } = svc.configParser?.checkSchedule
    ? await svc.configParser.checkSchedule(input, opts)
    : checkScheduleRule(input, opts);
  if (shortest !== null && shortest < minutes) {
    const faster = Object.values(svc.plans.plans).filter((p) => p.has_server_execution && (p.schedule_min_interval_minutes ?? DEFAULT_SCHEDULE_MIN_INTERVAL_MINUTES) <= shortest).map((p) => p.label);
    throw new CodedError('plan_required',
      `"${times.cron}" fires as often as every ${shortest} min; the ${plan.label} plan runs a schedule at most every ${minutes} min${faster.length ? ` (${faster.join(' or ')}: more often)` : ''}`,
      [{ plan: plan.name, required: 'schedule_min_interval_minutes', min_interval_minutes: minutes, shortest_interval_minutes: shortest, plans_with_it: faster }]);
  }
  return times;
}

/** The first slot after `from` as ISO, or null. */
function nextSlot(times: ScheduleTimes, from: Date): string | null {
  return nextRunAt(times, from)?.toISOString() ?? null;
}

/**
 * Creates a schedule of a saved config.
 * @throws CodedError `plan_required` (no server execution, or more often than the plan allows), `plan_unknown`,
 *   `not_found` (config), `invalid_request` (cron, timezone, too many schedules).
 */
export async function createSchedule(svc: Services, account: AccountRecord, input: NewSchedule): Promise<ScheduleRecord> {
  const times = await checkedTimes(svc, account, input);
  const config = await svc.store.getConfig(account.id, String(input.config_id).toLowerCase());
  if (!config) throw new CodedError('not_found', `Config ${input.config_id} not found`);
  if ((await svc.store.listSchedules(account.id)).length >= MAX_SCHEDULES_PER_ACCOUNT) {
    throw new CodedError('invalid_request', `An account has at most ${MAX_SCHEDULES_PER_ACCOUNT} schedules; delete one first`, [{ path: '', message: 'too many schedules' }]);
  }
  const now = svc.clock.now();
  const enabled = input.enabled ?? true;
  const s: ScheduleRecord = {
    id: randomUUID(), account_id: account.id, config_id: config.id, cron: times.cron, timezone: times.timezone, enabled,
    next_run_at: enabled ? nextSlot(times, now) : null, last_fired_at: null, since: now.toISOString(), paused: null,
    fired_count: 0, skipped_count: 0, recent_jobs: [], created_at: now.toISOString(), updated_at: now.toISOString(),
  };
  await svc.store.createSchedule(s);
  try {
    await svc.scheduleTriggers?.put(s);
  } catch (err) {
    await svc.store.deleteSchedule(account.id, s.id);
    throw err;
  }
  return s;
}

/** One schedule of the account. @throws CodedError `not_found`. */
export async function getSchedule(svc: Services, accountId: number, id: string): Promise<ScheduleRecord> {
  const s = await svc.store.getSchedule(accountId, id);
  if (!s) throw new CodedError('not_found', `Schedule ${id} not found`);
  return s;
}

/**
 * Changes a schedule's rule or turns it on or off. Turning it on (again) clears a pause and counts from now: the
 * slots it was off for are not fired.
 * @throws CodedError `not_found`, `invalid_request`, `plan_required`, `plan_unknown`.
 */
export async function updateSchedule(svc: Services, account: AccountRecord, id: string, change: ScheduleChange): Promise<ScheduleRecord> {
  if (change.cron === undefined && change.timezone === undefined && change.enabled === undefined) {
    throw new CodedError('invalid_request', 'Give at least one of cron, timezone and enabled', [{ path: '', message: 'nothing to change' }]);
  }
  const before = await getSchedule(svc, account.id, id);
  const enabled = change.enabled ?? before.enabled;
  // The rule is checked against the plan whenever the schedule will fire: a plan changed since may refuse it now.
  const times = enabled || change.cron !== undefined || change.timezone !== undefined
    ? await checkedTimes(svc, account, { cron: change.cron ?? before.cron, timezone: change.timezone ?? before.timezone })
    : { cron: before.cron, timezone: before.timezone };
  const now = svc.clock.now();
  const turnedOn = enabled && !before.enabled;
  const patch: SchedulePatch = {
    cron: times.cron, timezone: times.timezone, enabled,
    next_run_at: enabled ? nextSlot(times, now) : null,
    ...(turnedOn ? { since: now.toISOString(), paused: null } : {}),
    // A new rule counts from now too: a slot of the old rule is never fired late under the new one.
    ...(times.cron !== before.cron || times.timezone !== before.timezone ? { since: now.toISOString() } : {}),
    updated_at: now.toISOString(),
  };
  const after = await svc.store.updateSchedule(account.id, id, patch);
  if (!after) throw new CodedError('not_found', `Schedule ${id} not found`);
  await svc.scheduleTriggers?.put(after);
  return after;
}

/** Deletes a schedule and its platform trigger. @throws CodedError `not_found`. */
export async function deleteSchedule(svc: Services, accountId: number, id: string): Promise<void> {
  if (!(await svc.store.deleteSchedule(accountId, id))) throw new CodedError('not_found', `Schedule ${id} not found`);
  await svc.scheduleTriggers?.remove(id);
}

/** Deletes every schedule of a config (the config is being deleted). */
export async function deleteConfigSchedules(svc: Services, accountId: number, configId: string): Promise<void> {
  for (const s of await svc.store.listSchedules(accountId)) {
    if (s.config_id === configId) await deleteSchedule(svc, accountId, s.id).catch((err: unknown) => { if (!isCodedError(err) || err.code !== 'not_found') throw err; });
  }
}

/**
 * The job id of a schedule's firing for a slot: a UUID (version 8, RFC 9562 section 5.8) from SHA-256 of the
 * schedule id and the slot, so every firer of that slot names the same job.
 */
export function firingJobId(scheduleId: string, slot: Date): string {
  return derivedUuid(`${scheduleId}@${slot.toISOString()}`);
}

/** What a call of {@link fireSchedule} did. */
export type FiringOutcome =
  /** A run job was created (or an earlier firer's job of this slot was found and recorded). */
  | { kind: 'fired'; job_id: string; slot: string }
  /** The schedule's last job was unfinished: counted in `skipped_count`. */
  | { kind: 'skipped'; slot: string; reason: string }
  /** The firing was refused: the schedule is paused with the reason. */
  | { kind: 'paused'; slot: string; code: string }
  /** Nothing was due (disabled, not yet, or another firer claimed the slot first). */
  | { kind: 'not_due' };

/** Refusals that leave the schedule on, the firing skipped: limits that lift by themselves within the hour. */
const SKIP_CODES = new Set(['rate_limited', 'service_busy']);

/**
 * Fires a schedule if a slot is due at the clock's now (see the module comment for why it fires once per slot).
 * @param s the schedule as read (its `last_fired_at` is the claim's condition).
 * @returns what it did. Errors of the store or the queue are thrown (the caller logs them; the slot stays due and the
 *   next call fires it).
 */
export async function fireSchedule(svc: Services, s: ScheduleRecord): Promise<FiringOutcome> {
  if (!s.enabled) return { kind: 'not_due' };
  const now = svc.clock.now();
  const times: ScheduleTimes = { cron: s.cron, timezone: s.timezone };
  const slotDate = dueFiring(times, { now, lastFiredAt: s.last_fired_at ? new Date(s.last_fired_at) : null, since: new Date(s.since) });
  const next = nextSlot(times, now);
  if (!slotDate) {
    // Not due: keep next_run_at right for the loop's index (an edited rule, a clock that moved), and arm the platform's
    // trigger again (on AWS a trigger that fired a little before its slot, or was lost, would otherwise never fire).
    const moved = s.next_run_at !== next ? await svc.store.updateSchedule(s.account_id, s.id, { next_run_at: next }, s.last_fired_at) : s;
    if (moved) await rearm(svc, moved);
    return { kind: 'not_due' };
  }
  const slot = slotDate.toISOString();
  const claim = async (patch: SchedulePatch) => {
    let claimed = await svc.store.updateSchedule(s.account_id, s.id, { last_fired_at: slot, next_run_at: next, ...patch }, s.last_fired_at);
    if (claimed?.enabled && (claimed.cron !== s.cron || claimed.timezone !== s.timezone)) {
      // The rule was changed (PUT) between this firer's read and its claim: the next slot is the new rule's.
      claimed = await svc.store.updateSchedule(s.account_id, s.id, { next_run_at: nextSlot(claimed, now) }, slot) ?? claimed;
    }
    if (claimed) await rearm(svc, claimed);
    return claimed;
  };
  const pause = async (code: string, message: string): Promise<FiringOutcome> => {
    await claim({ enabled: false, next_run_at: null, paused: { code, message, at: now.toISOString() }, updated_at: now.toISOString() });
    logger.info('schedule paused: its firing was refused', { scheduleId: s.id, slot, code });
    return { kind: 'paused', slot, code };
  };

  const jobId = firingJobId(s.id, slotDate);
  const recorded = (id: string) => [{ job_id: id, scheduled_for: slot }, ...s.recent_jobs.filter((r) => r.job_id !== id)].slice(0, SCHEDULE_RECENT_JOBS);
  // A firer before this one (a restart, a duplicate message) created the job and stopped before its claim.
  if (await svc.store.getJobById(jobId)) {
    await claim({ fired_count: s.fired_count + (s.recent_jobs.some((r) => r.job_id === jobId) ? 0 : 1), recent_jobs: recorded(jobId) });
    return { kind: 'fired', job_id: jobId, slot };
  }
  const last = s.recent_jobs[0];
  if (last) {
    const lastJob = await svc.store.getJob(s.account_id, last.job_id);
    if (lastJob && !FINISHED.includes(lastJob.status)) {
      const claimed = await claim({ skipped_count: s.skipped_count + 1 });
      return claimed ? { kind: 'skipped', slot, reason: `job ${last.job_id} is still ${lastJob.status}` } : { kind: 'not_due' };
    }
  }
  const account = await svc.store.getAccount(s.account_id);
  if (!account) return pause('not_found', `Account ${s.account_id} not found`);
  // The plan may have changed since the rule was written: a rule more frequent than it allows now pauses.
  const plan = svc.plans.plans[account.plan];
  const minutes = plan?.schedule_min_interval_minutes ?? DEFAULT_SCHEDULE_MIN_INTERVAL_MINUTES;
  const following = nextRunAt(times, slotDate);
  if (plan?.has_server_execution && following && (following.getTime() - slotDate.getTime()) / 60_000 < minutes) {
    return pause('plan_required', `"${s.cron}" fires more often than the ${plan.label} plan allows (every ${minutes} min at most); change the rule, then enable the schedule again`);
  }
  try {
    const job = await startRun(svc, account, { config_id: s.config_id }, { schedule_id: s.id, job_id: jobId });
    await claim({ fired_count: s.fired_count + 1, recent_jobs: recorded(job.id) });
    return { kind: 'fired', job_id: job.id, slot };
  } catch (err) {
    // Another firer of this slot created the job meanwhile (this one's charge was given back by startRun, or it was
    // refused because the other one spent the last of the quota): the slot fired; that firer records it.
    if (await svc.store.getJobById(jobId)) return { kind: 'not_due' };
    if (!isCodedError(err)) throw err;
    if (SKIP_CODES.has(err.code)) {
      await claim({ skipped_count: s.skipped_count + 1 });
      logger.info('scheduled firing skipped', { scheduleId: s.id, slot, code: err.code });
      return { kind: 'skipped', slot, reason: `${err.code}: ${err.message}` };
    }
    return pause(err.code, err.message);
  }
}

/**
 * Points the platform's trigger (AWS: a one-time EventBridge schedule) at the schedule's next slot after a firing, a
 * pause or an early trigger. Only an existing trigger is updated (a schedule deleted meanwhile keeps none). An error
 * is thrown: the firing message is delivered again, finds its slot claimed, and arms the trigger then; a trigger lost
 * for good is found by the sweeper (workers/schedule-sweeper.ts).
 */
async function rearm(svc: Services, s: ScheduleRecord): Promise<void> {
  await svc.scheduleTriggers?.put(s, { onlyIfExists: true });
}

/**
 * A firing message from the run queue (AWS): the schedule read and fired. An absent or disabled schedule fires
 * nothing (its trigger is deleted or disabled with it).
 */
export async function fireScheduleMessage(svc: Services, m: ScheduleFiringMessage): Promise<FiringOutcome> {
  const s = await svc.store.getSchedule(m.account_id, m.schedule_id);
  if (!s) return { kind: 'not_due' };
  return fireSchedule(svc, s);
}
