/**
 * Plans enforced: server execution, the hourly rate limit (variant B) and the monthly quota, with
 * atomic counters so that concurrent requests never spend more than is left (Store.consume is a
 * conditional write). Costs and periods: docs/plans-and-metering.md.
 *
 * Periods are UTC: quotas per calendar month (`2026-11`), the rate limit per clock hour
 * (`2026-11-22T14`, a fixed window). Credits are counted in millicredits so that fractional costs
 * (0.1 per tool call) add up exactly.
 */
import { CodedError } from '../errors.ts';
import { DAY_MS, fixedWindow, HOUR_MS } from './fixed-window.ts';
import type { Operation, Plan } from './plans.ts';
import type { AccountRecord } from './ports.ts';
import type { Services } from './services.ts';

const MILLI = 1000;

function monthKey(d: Date): string {
  return d.toISOString().slice(0, 7);
}

/** First instant of the next month, UTC, as ISO (the quota's reset time). */
function nextMonth(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/** The account's plan; an unknown plan name (a plans file edited under a live account) is an error. */
function planOf(svc: Services, account: AccountRecord): Plan {
  const plan = svc.plans.plans[account.plan];
  if (!plan) throw new CodedError('plan_unknown', `The account's plan "${account.plan}" is not defined; an operator must move it to a known plan`);
  return plan;
}

/** The counter an operation spends from, its limit, and its cost in counter units (variant-specific). */
function quotaFor(svc: Services, plan: Plan, op: Operation, now: Date): { counter: string; limit: number; cost: number; unit: string } | null {
  const cost = svc.plans.costs[op];
  if (svc.plans.billing === 'credits') {
    return { counter: `credits:${monthKey(now)}`, limit: Math.round(plan.credits_per_month! * MILLI), cost: Math.round(cost * MILLI), unit: 'credits' };
  }
  if (op === 'tool') return null;
  if (op === 'generate') return { counter: `generations:${monthKey(now)}`, limit: plan.yaml_generations_per_month!, cost, unit: 'YAML generations' };
  return { counter: `scrapes:${monthKey(now)}`, limit: plan.monthly_scrapes!, cost, unit: 'scrapes' };
}

/** A spent quota that can be given back if the work cannot be queued after all. */
export interface Charge {
  counter: string;
  amount: number;
}

/**
 * Whether the account's plan allows an operation at all: API access, and server execution for a run.
 * Cheap and needs no store: callers check it before any costly validation of the request.
 * @returns the plan.
 * @throws CodedError `plan_required` (403) or `plan_unknown` (403).
 */
function checkPlan(svc: Services, account: AccountRecord, op: Operation): Plan {
  const plan = planOf(svc, account);
  if (!plan.has_api_access) throw new CodedError('plan_required', `The ${plan.label} plan has no API access`, [{ plan: plan.name }]);
  if (op === 'run' && !plan.has_server_execution) {
    const upgrade = Object.values(svc.plans.plans).filter((p) => p.has_server_execution).map((p) => p.label);
    throw new CodedError('plan_required',
      `Running configs on the server needs a plan with server execution (${upgrade.join(' or ')}); the ${plan.label} plan runs configs locally through the clients`,
      [{ plan: plan.name, required: 'has_server_execution', plans_with_it: upgrade }]);
  }
  return plan;
}

/** The hour window of the rate limit: its counter, when it ends, and the seconds until then. */
function hourWindow(now: Date): { counter: string; end: Date; retryAfter: number } {
  const w = fixedWindow(now, HOUR_MS);
  return { counter: `calls:${w.key}`, end: w.end, retryAfter: w.retryAfterSeconds };
}

/** The day window of a tool's daily limit: its counter, when it ends (next 00:00 UTC), and the seconds until then. */
function dayWindow(tool: string, now: Date): { counter: string; end: Date; retryAfter: number } {
  const w = fixedWindow(now, DAY_MS);
  return { counter: `tool:${tool}:${w.key}`, end: w.end, retryAfter: w.retryAfterSeconds };
}

/** Calls a day the plan allows of a tool (its own entry, else `*`); undefined when the plan sets none. */
function toolDailyLimit(plan: Plan, tool: string): number | undefined {
  return plan.tool_calls_per_day?.[tool] ?? plan.tool_calls_per_day?.['*'];
}

function toolLimited(plan: Plan, tool: string, limit: number, retryAfter: number): CodedError {
  return new CodedError('rate_limited',
    `Daily limit of the ${tool} tool on the ${plan.label} plan reached: ${limit} calls per day (UTC); retry in ${retryAfter} s`,
    [{ limit, window: 'day', retry_after_seconds: retryAfter, reason: 'tool_daily_limit', tool }],
    { 'Retry-After': String(retryAfter) });
}

function rateLimited(plan: Plan, retryAfter: number): CodedError {
  return new CodedError('rate_limited',
    `Rate limit of the ${plan.label} plan reached: ${plan.rate_limit_per_hour} calls that start work per hour; retry in ${retryAfter} s`,
    [{ limit: plan.rate_limit_per_hour, window: 'hour', retry_after_seconds: retryAfter }],
    { 'Retry-After': String(retryAfter) });
}

function quotaExceeded(svc: Services, plan: Plan, op: string, q: NonNullable<ReturnType<typeof quotaFor>>, used: number, now: Date): CodedError {
  const scale = svc.plans.billing === 'credits' ? MILLI : 1;
  const left = Math.max(0, q.limit - used) / scale;
  return new CodedError('quota_exceeded',
    `Monthly quota of the ${plan.label} plan used up: ${left} of ${q.limit / scale} ${q.unit} left, this ${op} costs ${q.cost / scale}; it resets on ${nextMonth(now).toISOString().slice(0, 10)}`,
    [{ unit: q.unit, remaining: left, limit: q.limit / scale, cost: q.cost / scale, resets_at: nextMonth(now).toISOString() }]);
}

/**
 * Refuses an operation the account cannot pay for now, with reads only, before the request's costly
 * validation (a saved config parsed again): the plan ({@link checkPlan}), the hourly rate limit, the monthly
 * quota. {@link meter} still decides atomically afterwards.
 * @param then an operation the request starts later on its own (a generate with `run: true` runs its config): the plan
 *   must allow it too, and where both spend from one counter (credits) the quota must hold both costs.
 * @throws CodedError `plan_required`, `plan_unknown`, `rate_limited`, `quota_exceeded`, as {@link meter}.
 */
export async function checkHeadroom(svc: Services, account: AccountRecord, op: Operation, tool?: string, then?: Operation): Promise<void> {
  const plan = checkPlan(svc, account, op);
  if (then) checkPlan(svc, account, then);
  const now = svc.clock.now();
  if (svc.plans.billing === 'credits' && plan.rate_limit_per_hour !== undefined) {
    const w = hourWindow(now);
    if ((await svc.store.getCounter(account.id, w.counter)) >= plan.rate_limit_per_hour) throw rateLimited(plan, w.retryAfter);
  }
  const perDay = tool === undefined ? undefined : toolDailyLimit(plan, tool);
  if (tool !== undefined && perDay !== undefined) {
    const d = dayWindow(tool, now);
    if ((await svc.store.getCounter(account.id, d.counter)) >= perDay) throw toolLimited(plan, tool, perDay, d.retryAfter);
  }
  const q = quotaFor(svc, plan, op, now);
  const after = then ? quotaFor(svc, plan, then, now) : null;
  if (q && q.cost > 0) {
    const used = await svc.store.getCounter(account.id, q.counter);
    const both = after && after.counter === q.counter ? { ...q, cost: q.cost + after.cost } : q;
    if (used + both.cost > q.limit) throw quotaExceeded(svc, plan, after && after.counter === q.counter ? `${op} and its ${then}` : op, both, used, now);
  }
  if (after && after.cost > 0 && after.counter !== q?.counter) {
    const used = await svc.store.getCounter(account.id, after.counter);
    if (used + after.cost > after.limit) throw quotaExceeded(svc, plan, then!, after, used, now);
  }
}

/**
 * Checks and spends for an operation that starts work, in this order: API access and server execution
 * ({@link checkPlan}: 403 `plan_required`), the hourly rate limit (429 `rate_limited` with Retry-After; variant B),
 * for a tool its daily limit (429 `rate_limited`, reason `tool_daily_limit`, Retry-After to 00:00 UTC), the
 * monthly quota (429 `quota_exceeded`). A call refused by the quota still counts against the rate limit, not
 * against the tool's daily limit.
 * @param tool the tool's name (`seo-analyzer`) when `op` is `tool`.
 * @returns the charge, for {@link refund}.
 * @throws CodedError with the codes above.
 */
export async function meter(svc: Services, account: AccountRecord, op: Operation, tool?: string): Promise<Charge | null> {
  const plan = checkPlan(svc, account, op);
  const now = svc.clock.now();
  if (svc.plans.billing === 'credits' && plan.rate_limit_per_hour !== undefined) {
    const w = hourWindow(now);
    const { ok } = await svc.store.consume(account.id, w.counter, 1, plan.rate_limit_per_hour, new Date(w.end.getTime() + 3600_000).toISOString());
    if (!ok) throw rateLimited(plan, w.retryAfter);
  }
  const perDay = tool === undefined ? undefined : toolDailyLimit(plan, tool);
  const day = tool !== undefined && perDay !== undefined ? dayWindow(tool, now) : null;
  if (day) {
    const { ok } = await svc.store.consume(account.id, day.counter, 1, perDay!, new Date(day.end.getTime() + 86_400_000).toISOString());
    if (!ok) throw toolLimited(plan, tool!, perDay!, day.retryAfter);
  }
  const q = quotaFor(svc, plan, op, now);
  if (!q || q.cost === 0) return null;
  const { ok, used } = await svc.store.consume(account.id, q.counter, q.cost, q.limit, nextMonth(now).toISOString());
  if (!ok) {
    if (day) await svc.store.refund(account.id, day.counter, 1);
    throw quotaExceeded(svc, plan, op, q, used, now);
  }
  return { counter: q.counter, amount: q.cost };
}

/** Gives back a charge (when the job could not be queued). */
export async function refund(svc: Services, account: AccountRecord, charge: Charge | null): Promise<void> {
  if (charge) await svc.store.refund(account.id, charge.counter, charge.amount);
}

/** docs/spec.md subscription object of GET /me/, in the configured variant. */
export async function subscriptionView(svc: Services, account: AccountRecord): Promise<Record<string, unknown>> {
  const plan = planOf(svc, account);
  const now = svc.clock.now();
  if (svc.plans.billing === 'credits') {
    const used = await svc.store.getCounter(account.id, `credits:${monthKey(now)}`);
    const limit = Math.round(plan.credits_per_month! * MILLI);
    return {
      plan: plan.name,
      credits_remaining: Math.max(0, limit - used) / MILLI,
      credits_per_month: plan.credits_per_month!,
      has_api_access: plan.has_api_access,
      has_server_execution: plan.has_server_execution,
    };
  }
  const scrapes = await svc.store.getCounter(account.id, `scrapes:${monthKey(now)}`);
  const gens = await svc.store.getCounter(account.id, `generations:${monthKey(now)}`);
  return {
    plan: plan.name,
    yaml_generations_remaining: Math.max(0, plan.yaml_generations_per_month! - gens),
    monthly_scrapes_remaining: Math.max(0, plan.monthly_scrapes! - scrapes),
    has_api_access: plan.has_api_access,
    has_server_execution: plan.has_server_execution,
  };
}
