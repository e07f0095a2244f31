/**
 * Generate jobs, the API side (SPEC.md, POST /api/v1/generate/; docs/generate.md): validate the URL and
 * the prompt, check the plan and meter the generation (a YAML generation in variant A, credits in variant
 * B), create the job `pending` with its prompt, queue it. The worker side is core/generate-job-executor.ts.
 */
import { CodedError } from '../errors.ts';
import { checkHeadroom, meter } from './metering.ts';
import { groupedQueue, type AccountRecord, type JobRecord } from './ports.ts';
import type { Services } from './services.ts';
import { createAndQueueJob } from './jobs.ts';
import { parseTargetUrl } from './target-url.ts';

/** Body of POST /api/v1/generate/. */
export interface GenerateBody {
  url: string;
  prompt: string;
  /**
   * Run the saved config once it is generated (issue 40; docs/api.md "Generate"): the generate job's status then
   * carries `run_job_id`, a normal, metered run job that gives all the rows. Needs a plan with server execution.
   */
  run?: boolean;
}

/** What a generate message on the queue carries. */
export interface GenerateMessage {
  job_id: string;
}

/** Longest prompt accepted, characters (docs/limits.md). */
export const MAX_PROMPT_CHARS = 2000;

/**
 * Starts a generate job.
 * @returns the `pending` job.
 * With `run: true` the plan must have server execution and the quota must hold the run's cost too (the run itself is
 * metered when it starts, at the generation's end).
 * @throws CodedError: `plan_required`, `rate_limited`, `quota_exceeded` (checked first, with reads);
 *   `invalid_url` (not an absolute http or https URL); `invalid_request` (a blank prompt);
 *   `target_forbidden` (the outbound guard refuses the URL); `queue_unavailable`. Nothing is charged when it throws.
 */
export async function startGenerate(svc: Services, account: AccountRecord, body: GenerateBody): Promise<JobRecord> {
  await checkHeadroom(svc, account, 'generate', undefined, body.run ? 'run' : undefined);
  const prompt = body.prompt.replace(/\s+/g, ' ').trim();
  if (!prompt) throw new CodedError('invalid_request', 'prompt must say what to scrape, e.g. "book titles and prices from every page"', [{ path: 'prompt', message: 'is blank' }]);
  const url = parseTargetUrl(body.url);
  svc.guard.checkUrl(url.href);

  const charge = await meter(svc, account, 'generate');
  // The message goes in the account's group: accounts are served in turn (docs/plans-and-metering.md, "Fair scheduling").
  return createAndQueueJob({ ...svc, queue: groupedQueue(svc.queue, account.id) }, account, { job_type: 'generate', target_url: url.href, config_id: null, yaml_content: '', prompt: prompt, run_requested: body.run === true }, charge);
}
