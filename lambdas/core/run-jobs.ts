/**
 * Run jobs, the API side (docs/architecture.md, "The path of a run"):
 * POST /run/ -> {@link startRun} (validate, check the plan, meter, create `pending`, enqueue) -> queue ->
 * run worker -> executeRun (core/run-job-executor.ts) -> status and results endpoints. Kept apart from the
 * worker side so that the API function's bundle carries no HTTP client or crawler.
 */
import { CodedError } from '../errors.ts';
import { assertLightweight } from '../engine/config.ts';
import { parseConfigText } from './configs.ts';
import { checkHeadroom, meter } from './metering.ts';
import { robotsIgnoreAllowed } from './plans.ts';
import { proxyGroupFor } from '../net/upstream.ts';
import { groupedQueue, type AccountRecord, type JobRecord } from './ports.ts';
import type { Services } from './services.ts';
import { createAndQueueJob } from './jobs.ts';

/** Body of POST /api/v1/run/. Exactly one of the two. */
export interface RunRequest {
  config_id?: string;
  yaml_content?: string;
}

/**
 * A run started by the service rather than by a call: a schedule's firing (core/schedules.ts), or a generate job with
 * `run: true` (core/generate-job-executor.ts). The job's id is the starter's own.
 */
export interface ScheduledOrigin {
  /** The schedule that fired; absent for a generate job's run. */
  schedule_id?: string;
  /**
   * The job id (one per schedule and slot, one per generate job), so that a second firer of the same slot, or a second
   * delivery of the same generate job, cannot create a second job.
   */
  job_id: string;
}

/** What a run message on the queue carries. */
export interface RunMessage {
  job_id: string;
}

/**
 * Starts a run job: for POST /run/, and for a schedule's firing or a generate job's run (`origin`), which go through
 * exactly the same checks, metering and job record (plus `schedule_id`).
 * @returns the `pending` job.
 * @throws CodedError: `plan_required`, `rate_limited`, `quota_exceeded` (checked first with reads, before the YAML is parsed, and again when charged), `invalid_request` (not exactly one of config_id and yaml_content), `not_found`
 *   (config), `invalid_config`, `browser_required`, `target_forbidden`, `plan_required`, `rate_limited`,
 *   `quota_exceeded`, `queue_unavailable`. Nothing is charged when it throws.
 */
export async function startRun(svc: Services, account: AccountRecord, req: RunRequest, origin?: ScheduledOrigin): Promise<JobRecord> {
  const hasId = req.config_id !== undefined && req.config_id !== null;
  const hasYaml = req.yaml_content !== undefined && req.yaml_content !== null;
  // The plan, the rate limit and the quota first (reads only): a call that cannot be paid for gets its
  // answer without its YAML being parsed. meter() still decides atomically below.
  await checkHeadroom(svc, account, 'run');
  if (hasId === hasYaml) {
    throw new CodedError('invalid_request', 'Give exactly one of config_id and yaml_content', [
      { path: hasId ? 'config_id, yaml_content' : 'config_id | yaml_content', message: hasId ? 'both given' : 'neither given' },
    ]);
  }
  let configId: string | null = null;
  let configName: string | null = null;
  let yaml: string;
  if (hasId) {
    const saved = await svc.store.getConfig(account.id, req.config_id!.toLowerCase());
    if (!saved) throw new CodedError('not_found', `Config ${req.config_id} not found`);
    configId = saved.id;
    configName = saved.name;
    yaml = saved.yaml_content;
  } else {
    yaml = req.yaml_content!;
  }
  const config = await parseConfigText(svc, yaml);
  // A browser-only config is fine with engine heavy or auto; with engine lightweight it cannot run.
  if (config.target.engine === 'lightweight') assertLightweight(config);
  svc.guard.checkUrl(config.target.url);
  // A proxy group the operator did not declare is the config's mistake: 400 now, not a failed job later.
  if (config.target.proxy !== undefined && svc.proxies) proxyGroupFor(config.target.proxy, await svc.proxies());
  if (config.target.robots === 'ignore' && !robotsIgnoreAllowed(svc.plans, account)) {
    const plansWithIt = Object.values(svc.plans.plans).filter((p) => p.robots_ignore === true).map((p) => p.name);
    throw new CodedError('plan_required', `target.robots: ignore is not allowed for the ${account.plan} plan: robots.txt is obeyed (the operator allows ignoring it per plan, robots_ignore, or for its own accounts, operator_accounts, in the plans file)`,
      [{ plan: account.plan, required: 'robots_ignore', plans_with_it: plansWithIt }]);
  }

  const charge = await meter(svc, account, 'run');
  // The message goes in the account's group: accounts are served in turn (docs/plans-and-metering.md, "Fair scheduling").
  return createAndQueueJob({ ...svc, queue: groupedQueue(svc.queue, account.id) }, account,
    { job_type: 'run', target_url: config.target.url, config_id: configId, config_name: configName ?? config.name ?? null, yaml_content: yaml, prompt: null, schedule_id: origin?.schedule_id ?? null, ...(origin ? { id: origin.job_id } : {}) }, charge);
}
