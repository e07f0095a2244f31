/**
 * Plans as data (lambdas/core/plans.json, or the file named by SAI_PLANS_FILE) for both billing
 * variants of docs/spec.md ("Limits"): `credits` (variant B, the default) and `scrapes` (variant A).
 */
import fs from 'node:fs';
import builtin from './plans.json' with { type: 'json' };

export type Billing = 'credits' | 'scrapes';
export type Operation = 'run' | 'generate' | 'tool';

/** One plan; which limits apply depends on the variant. */
export interface Plan {
  name: string;
  label: string;
  price_usd_month: number;
  has_api_access: boolean;
  has_server_execution: boolean;
  /**
   * Jobs (run and generate) of one account running at once, at most; the account's other jobs wait in the
   * queue while other accounts' jobs are served (docs/plans-and-metering.md, "Fair scheduling"). Where the
   * workers are fewer, one worker is always left to other accounts ({@link accountJobLimit}). Optional in a
   * plans file: {@link DEFAULT_MAX_CONCURRENT_JOBS} when absent.
   */
  max_concurrent_jobs: number;
  priority_support: boolean;
  self_healing?: boolean;
  /** Variant B. */
  credits_per_month?: number;
  /** Variant B: calls that start work, per clock hour. */
  rate_limit_per_hour?: number;
  /** Variant A. */
  monthly_scrapes?: number;
  /** Variant A. */
  yaml_generations_per_month?: number;
  /** The API Gateway usage plan of this plan (cloud): per-account throttle and monthly request quota over all calls. */
  gateway?: { rate_per_second: number; burst: number; requests_per_month: number };
  /**
   * Calls per UTC day per account of each tool (`seo-analyzer`, …), `*` for the tools without an entry of
   * their own; absent: no daily limit (docs/spec.md "Other limits": the SEO analyzer, 30 a day).
   */
  tool_calls_per_day?: Record<string, number>;
  /**
   * The SSL checker may check a port other than 443 (its `port`, or the URL's own): a port scan of public hosts
   * through the service is then the plan's to allow. Absent or false: such a call is refused with 403
   * `plan_required` before anything is spent (lambdas/tools/ssl.ts `checkSslPortAllowed`).
   */
  ssl_checker_any_port?: boolean;
  /**
   * Schedules (issue 26, docs/monitoring.md): the shortest interval between two firings of one schedule, minutes. Only
   * plans with server execution have schedules; for them an absent field means {@link DEFAULT_SCHEDULE_MIN_INTERVAL_MINUTES}.
   */
  schedule_min_interval_minutes?: number;
  /**
   * Configs of this plan may say `target.robots: ignore` (docs/crawler.md, "robots.txt"). Absent or false: such a
   * run is refused with 403 `plan_required`, unless the account is one of the plans file's `operator_accounts`.
   */
  robots_ignore?: boolean;
}

/** The shortest schedule interval of a plan with server execution whose plans-file entry does not say, minutes. */
export const DEFAULT_SCHEDULE_MIN_INTERVAL_MINUTES = 15;

/** The plans and operation costs of one variant. */
export interface PlanCatalog {
  billing: Billing;
  default_plan: string;
  /** Cost of each operation in the variant's unit (credits, or scrapes/generations). */
  costs: Record<Operation, number>;
  plans: Record<string, Plan>;
  /**
   * Emails (lower case) of the operator's own accounts: they may run configs with `target.robots: ignore` whatever
   * their plan. Empty by default.
   */
  operator_accounts: string[];
}

type RawPlan = Omit<Plan, 'name' | 'max_concurrent_jobs'> & { max_concurrent_jobs?: number };
type RawVariant = { default_plan: string; costs: Record<Operation, number>; plans: Record<string, RawPlan>; operator_accounts?: string[] };

/** Jobs of one account running at once when its plan does not say (a plans file older than the field). */
export const DEFAULT_MAX_CONCURRENT_JOBS = 1;

function check(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(`plans file: ${msg}`);
}

/**
 * Loads the plan catalog of a variant.
 * @param file a JSON file shaped like lambdas/core/plans.json; the built-in plans when absent.
 * @throws Error naming the problem when the file is unreadable or misshapen.
 */
export function loadPlans(billing: Billing, file?: string): PlanCatalog {
  const raw = (file ? JSON.parse(fs.readFileSync(file, 'utf8')) : builtin) as Record<Billing, RawVariant>;
  const v = raw[billing];
  check(v && typeof v === 'object', `no "${billing}" variant`);
  check(v.plans && Object.keys(v.plans).length > 0, `"${billing}.plans" is empty`);
  check(v.plans[v.default_plan], `"${billing}.default_plan" names no plan`);
  for (const op of ['run', 'generate', 'tool'] as const) check(typeof v.costs?.[op] === 'number' && v.costs[op] >= 0, `"${billing}.costs.${op}" must be a number >= 0`);
  const plans: Record<string, Plan> = {};
  for (const [name, p] of Object.entries(v.plans)) {
    check(typeof p.has_server_execution === 'boolean', `plan "${name}" lacks has_server_execution`);
    const maxJobs = p.max_concurrent_jobs === undefined ? DEFAULT_MAX_CONCURRENT_JOBS : p.max_concurrent_jobs;
    check(Number.isInteger(maxJobs) && maxJobs >= 1, `plan "${name}" max_concurrent_jobs must be an integer >= 1`);
    if (billing === 'credits') {
      check(typeof p.credits_per_month === 'number', `plan "${name}" lacks credits_per_month`);
      check(typeof p.rate_limit_per_hour === 'number', `plan "${name}" lacks rate_limit_per_hour`);
    } else {
      check(typeof p.monthly_scrapes === 'number', `plan "${name}" lacks monthly_scrapes`);
      check(typeof p.yaml_generations_per_month === 'number', `plan "${name}" lacks yaml_generations_per_month`);
    }
    for (const [tool, n] of Object.entries(p.tool_calls_per_day ?? {})) check(Number.isInteger(n) && n >= 0, `plan "${name}" tool_calls_per_day.${tool} must be an integer >= 0`);
    check(p.ssl_checker_any_port === undefined || typeof p.ssl_checker_any_port === 'boolean', `plan "${name}" ssl_checker_any_port must be true or false`);
    check(p.schedule_min_interval_minutes === undefined || (Number.isInteger(p.schedule_min_interval_minutes) && p.schedule_min_interval_minutes >= 1),
      `plan "${name}" schedule_min_interval_minutes must be an integer >= 1`);
    check(p.robots_ignore === undefined || typeof p.robots_ignore === 'boolean', `plan "${name}" robots_ignore must be true or false`);
    plans[name] = { ...p, name, max_concurrent_jobs: maxJobs };
  }
  const operators = v.operator_accounts ?? [];
  check(Array.isArray(operators) && operators.every((e) => typeof e === 'string' && e.includes('@')), `"${billing}.operator_accounts" must be a list of emails`);
  return { billing, default_plan: v.default_plan, costs: v.costs, plans, operator_accounts: operators.map((e) => e.trim().toLowerCase()) };
}

/**
 * Jobs of one account that may run at once on `workers` job workers (local worker threads, or the run
 * worker's concurrency on AWS): the plan's `max_concurrent_jobs`, but never every worker while there are two
 * or more, so another account's job always finds one free (docs/architecture.md, idea 7). A plan that is not in
 * the catalog (403 `plan_unknown` at the API) gets {@link DEFAULT_MAX_CONCURRENT_JOBS}.
 */
export function accountJobLimit(plan: Pick<Plan, 'max_concurrent_jobs'> | undefined, workers: number): number {
  const own = plan?.max_concurrent_jobs ?? DEFAULT_MAX_CONCURRENT_JOBS;
  return Math.max(1, Math.min(own, workers - 1));
}

/** The billing variant from SAI_BILLING (`credits` by default). @throws Error for another value. */
export function billingFromEnv(env: NodeJS.ProcessEnv = process.env): Billing {
  const b = (env.SAI_BILLING ?? 'credits').trim() || 'credits';
  if (b !== 'credits' && b !== 'scrapes') throw new Error(`SAI_BILLING must be "credits" or "scrapes", got "${b}"`);
  return b;
}

/**
 * Whether an account may run configs with `target.robots: ignore`: its plan says `robots_ignore: true`, or it is one
 * of the operator's own accounts (`operator_accounts` of the plans file). By default neither holds for any account.
 */
export function robotsIgnoreAllowed(catalog: PlanCatalog, account: { email: string; plan: string }): boolean {
  return catalog.plans[account.plan]?.robots_ignore === true || catalog.operator_accounts.includes(account.email.trim().toLowerCase());
}
