/**
 * Generate jobs, the API side (docs/spec.md, POST /api/v1/generate/; docs/generate.md): validate the URL and
 * the prompt, check the plan and meter the generation (a YAML generation in variant A, credits in variant
 * B), create the job `pending` with its prompt, queue it. The worker side is core/generate-job-executor.ts.
 */
import { CodedError } from '../errors.ts';
import { checkHeadroom, meter } from './metering.ts';
import { groupedQueue, type AccountRecord, type ConfigRecord, type JobRecord } from './ports.ts';
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
  /**
   * A saved config of the account, of the same URL, whose YAML (and prompt) the generated config replaces, instead of
   * a new config being saved (issue 40; docs/api.md "Generate").
   */
  config_id?: string;
  /**
   * Other pages of the target's template, at most {@link MAX_EXAMPLE_URLS} (issue 36; docs/generate.md "Other pages of
   * the template"): each an absolute http(s) URL the outbound guard allows.
   */
  example_urls?: string[];
}

/** A saved config of the account with the same URL and prompt as a generate request: said in the 202 answer. */
export interface SameConfig {
  id: string;
  name: string;
}

/** What a generate message on the queue carries. */
export interface GenerateMessage {
  job_id: string;
}

/** Example URLs a generate request takes at most (docs/generate.md, "Other pages of the template"). */
export const MAX_EXAMPLE_URLS = 4;

/** Longest prompt accepted, characters (docs/limits.md). */
export const MAX_PROMPT_CHARS = 2000;

/**
 * Starts a generate job.
 * With `run: true` the plan must have server execution and the quota must hold the run's cost too (the run itself is
 * metered when it starts, at the generation's end). With `config_id` the job replaces that config's YAML when it
 * completes (the job's `config_id` names it from the start).
 * @returns the `pending` job, and `existing`: a config of the account with the same URL and prompt, when there is one
 *   and no `config_id` was given (the new config will be saved beside it, named with a suffix).
 * @throws CodedError: `plan_required`, `rate_limited`, `quota_exceeded` (checked first, with reads);
 *   `invalid_url` (not an absolute http or https URL); `invalid_request` (a blank prompt, a `config_id` of another
 *   URL); `not_found` (`config_id` is no config of the account); `target_forbidden` (the outbound guard refuses the
 *   URL); `queue_unavailable`. Nothing is charged when it throws.
 */
export async function startGenerate(svc: Services, account: AccountRecord, body: GenerateBody): Promise<{ job: JobRecord; existing: SameConfig | null }> {
  await checkHeadroom(svc, account, 'generate', undefined, body.run ? 'run' : undefined);
  const prompt = normalizePrompt(body.prompt);
  if (!prompt) throw new CodedError('invalid_request', 'prompt must say what to scrape, e.g. "book titles and prices from every page"', [{ path: 'prompt', message: 'is blank' }]);
  const url = parseTargetUrl(body.url);
  svc.guard.checkUrl(url.href);
  const examples = exampleUrls(svc, body.example_urls);
  let replaced: ConfigRecord | null = null;
  let existing: SameConfig | null = null;
  if (body.config_id !== undefined) {
    replaced = await svc.store.getConfig(account.id, body.config_id.toLowerCase());
    if (!replaced) throw new CodedError('not_found', `Config ${body.config_id} not found`);
    if (!sameUrl(replaced.target_url, url.href)) {
      throw new CodedError('invalid_request', `config_id names a config of another URL (${replaced.target_url}); a generate replaces the YAML of a config of its own URL`, [{ path: 'config_id', message: `is a config of ${replaced.target_url}, not of ${url.href}` }]);
    }
  } else {
    const same = sameConfigs(await svc.store.listConfigs(account.id), url.href, prompt)[0];
    if (same) existing = { id: same.id, name: same.name };
  }

  const charge = await meter(svc, account, 'generate');
  // The message goes in the account's group: accounts are served in turn (docs/plans-and-metering.md, "Fair scheduling").
  const job = await createAndQueueJob({ ...svc, queue: groupedQueue(svc.queue, account.id) }, account,
    { job_type: 'generate', target_url: url.href, config_id: replaced?.id ?? null, config_name: replaced?.name ?? null, yaml_content: '', prompt, run_requested: body.run === true, ...(examples.length ? { example_urls: examples } : {}) }, charge);
  return { job, existing };
}

/**
 * The example URLs of a generate request, parsed and checked as the target is.
 * @returns their absolute forms, in order, duplicates once.
 * @throws CodedError `invalid_request` (more than {@link MAX_EXAMPLE_URLS}), `invalid_url` or `target_forbidden` for the
 *   first bad one, its message and `details[0].path` naming it (`example_urls/2`).
 */
function exampleUrls(svc: Services, urls: readonly string[] | undefined): string[] {
  if (!urls?.length) return [];
  if (urls.length > MAX_EXAMPLE_URLS) {
    throw new CodedError('invalid_request', `example_urls takes at most ${MAX_EXAMPLE_URLS} URLs; ${urls.length} were given`, [{ path: 'example_urls', message: `has ${urls.length} items, more than ${MAX_EXAMPLE_URLS}` }]);
  }
  const out: string[] = [];
  urls.forEach((raw, i) => {
    try {
      const u = parseTargetUrl(raw);
      svc.guard.checkUrl(u.href);
      if (!out.includes(u.href)) out.push(u.href);
    } catch (err) {
      if (err instanceof CodedError) throw new CodedError(err.code, `example_urls[${i}]: ${err.message}`, [{ path: `example_urls/${i}`, message: err.message }]);
      throw err;
    }
  });
  return out;
}

/** A prompt as it is stored and compared: runs of white space made one space, trimmed. */
export function normalizePrompt(prompt: string): string {
  return prompt.replace(/\s+/g, ' ').trim();
}

/** Whether two target URLs are the same once parsed (`HTTPS://Example.com` and `https://example.com/` are). */
function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a.trim()).href === new URL(b.trim()).href;
  } catch {
    return false;
  }
}

/**
 * The configs of `configs` with the same target URL and prompt (white space and letter case aside) as a generate
 * request's, newest first as given: what a repeated generate says it is alike to (issue 40).
 */
export function sameConfigs(configs: readonly ConfigRecord[], url: string, prompt: string): ConfigRecord[] {
  const wanted = normalizePrompt(prompt).toLowerCase();
  return configs.filter((c) => c.prompt !== null && normalizePrompt(c.prompt).toLowerCase() === wanted && sameUrl(c.target_url, url));
}
