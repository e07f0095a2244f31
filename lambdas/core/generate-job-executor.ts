/**
 * Generate jobs, the worker side: one delivery of a generate message ({@link executeGenerate}). The job goes
 * `analyzing` (the page is loaded and read), `generating` (the config is built), `validating` (it runs for a
 * trial), then `completed` with the config saved to the account's configs (named from the prompt, the prompt
 * kept), the trial's rows as the job's results, and `api_discovered`; or `failed`, saying what was tried.
 *
 * Without Anthropic settings the heuristic generator (generator/heuristic.ts) answers. With them the Claude
 * agent (generator/agent.ts) starts from the heuristic result and improves on it; when the agent fails (the
 * API's errors, time-outs, rate limits, its round or token budget), the heuristic config stands and the
 * status message says why; when both fail, the job fails with both reasons (docs/generate.md).
 */
import { randomUUID } from 'node:crypto';
import { CodedError, isCodedError } from '../errors.ts';
import { parseConfig } from '../engine/config.ts';
import type { BrowserHost } from '../engine/browser/host.ts';
import { Fetcher } from '../net/fetch.ts';
import type { GenerateProgress, GenerateStep, GenerationResult } from '../generator/generator.ts';
import { generateHeuristic } from '../generator/heuristic.ts';
import { Workbench } from '../generator/workbench.ts';
import { logger } from '../logger.ts';
import { FINISHED, transitionJob, type TransitionActor } from './job-states.ts';
import type { DeliveryOutcome } from './run-job-executor.ts';
import { previewKey, resultsKey, STATUS_ROWS_PREVIEW } from './jobs.ts';
import type { ConfigRecord } from './ports.ts';
import type { Services } from './services.ts';


/** How often progress is written, at most (ms). */
const PROGRESS_WRITE_MS = 300;
const STEP_ORDER: GenerateStep[] = ['analyzing', 'generating', 'validating'];

/** What a generation needs besides the services: the worker's browser. */
export interface GenerateDeps {
  browser: () => BrowserHost;
}

/**
 * Generates a config from the URL and prompt of a job, and runs it for a trial.
 * @returns the result (a config whose trial found rows).
 * @throws CodedError `generation_failed` (nothing found items; the message says what was tried) or the
 *   target's own codes (`target_forbidden`, `dns_failed`, `fetch_failed`, `target_failed`); the signal's reason.
 */
export async function generateConfig(svc: Services, request: { url: string; prompt: string }, bench: Workbench, onProgress: (p: GenerateProgress) => void, signal: AbortSignal): Promise<GenerationResult> {
  let heuristic: GenerationResult | null = null;
  let heuristicError: unknown = null;
  try {
    heuristic = await generateHeuristic(request, { workbench: bench, onProgress });
  } catch (err) {
    if (!isCodedError(err) || err.code !== 'generation_failed') throw err;
    heuristicError = err;
  }
  const anthropic = await svc.anthropic?.();
  if (!anthropic) {
    if (heuristic) return heuristic;
    throw heuristicError;
  }
  // The agent is loaded only when it is used: the SDK stays out of runs without it.
  const { runAgent, AgentError } = await import('../generator/agent.ts');
  onProgress({ step: 'generating', progress: 50, message: heuristic ? 'asking Claude to check and improve the config' : 'asking Claude to write a config' });
  try {
    const agent = await runAgent(request, heuristic ? { yaml: heuristic.yaml, summary: heuristic.notes.join('; ') } : null, bench, {
      apiKey: anthropic.apiKey,
      ...(anthropic.model ? { model: anthropic.model } : {}),
      ...(anthropic.baseURL ? { baseURL: anthropic.baseURL } : {}),
      signal,
      onProgress: (message) => onProgress({ step: 'generating', progress: 60, message: `Claude: ${message}` }),
    });
    onProgress({ step: 'validating', progress: 90, message: `Claude's config found ${agent.trial.rowCount} item(s) in its trial` });
    const trial = bench.lastTrial!;
    return {
      yaml: agent.yaml,
      config: parseConfig(agent.yaml),
      trial,
      apiDiscovered: trial.apiDiscovered || (heuristic?.apiDiscovered ?? false),
      ...(heuristic?.apiEndpoint ? { apiEndpoint: heuristic.apiEndpoint } : {}),
      generator: 'agent',
      notes: [...(heuristic?.notes ?? []), ...agent.notes, `Claude (${agent.rounds} round(s), ${agent.usage.inputTokens + agent.usage.outputTokens} tokens)`],
    };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (!(err instanceof AgentError)) throw err;
    logger.warn('the agent failed', { reason: err.reason, error: err.message });
    if (heuristic) return { ...heuristic, notes: [...heuristic.notes, `Claude could not improve it (${err.message}); kept the config found without it`] };
    throw new CodedError('generation_failed', `${(heuristicError as Error).message}; and Claude could not write one either: ${err.message}`);
  }
}

/**
 * One delivery of a generate message. Deterministic failures end the job `failed` and count as done;
 * unexpected errors return `retry` until the last delivery, which ends the job `failed`.
 */
export async function executeGenerate(svc: Services, jobId: string, delivery: { receiveCount: number; maxReceives: number }, deps: GenerateDeps): Promise<DeliveryOutcome> {
  const job = await svc.store.getJobById(jobId);
  if (!job || FINISHED.includes(job.status) || job.job_type !== 'generate') return 'done';
  const started = await transitionJob(svc, job, 'start', {
    status_message: job.status === 'pending' ? `Loading ${job.target_url}` : `Starting again (attempt ${job.attempts + 1}) after an interrupted attempt`,
  }, { by: 'generate_worker' });
  if (!started) return 'done';
  const attempt = started.attempts;
  const worker: TransitionActor = { by: 'generate_worker', attempt };

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CodedError('job_timeout',
    `The generation took longer than the limit of ${Math.round(svc.jobTimeoutMs / 1000)} s per job and was stopped`)), svc.jobTimeoutMs);
  const fetcher = new Fetcher(svc.guard, { perHostConcurrency: svc.jobConcurrency });
  const bench = new Workbench({ fetcher, browser: deps.browser, signal: controller.signal });
  let step: GenerateStep = 'analyzing';
  let lastWrite = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const onProgress = (p: GenerateProgress) => {
    const t = Date.now();
    const advance = STEP_ORDER.indexOf(p.step) > STEP_ORDER.indexOf(step);
    if (!advance && t - lastWrite < PROGRESS_WRITE_MS) return;
    lastWrite = t;
    const patch = { progress: p.progress, status_message: p.message };
    if (advance) {
      // One step at a time: analyzing -> generating -> validating.
      for (let i = STEP_ORDER.indexOf(step) + 1; i <= STEP_ORDER.indexOf(p.step); i++) {
        const to = STEP_ORDER[i]!;
        writing = writing.then(() => transitionJob(svc, job, 'advance', { ...patch, status: to }, worker)).catch(() => undefined);
      }
      step = p.step;
    } else {
      writing = writing.then(() => transitionJob(svc, job, 'progress', patch, worker)).catch(() => undefined);
    }
  };
  try {
    const result = await generateConfig(svc, { url: job.target_url, prompt: job.prompt ?? '' }, bench, onProgress, controller.signal);
    onProgress({ step: 'validating', progress: 95, message: 'saving the config' });
    await writing;
    const config: ConfigRecord = {
      id: randomUUID(),
      account_id: job.account_id,
      name: result.config.name ?? `Generated from ${job.target_url}`,
      target_url: job.target_url,
      yaml_content: result.yaml,
      prompt: job.prompt,
      created_at: svc.clock.now().toISOString(),
    };
    await svc.store.createConfig(config);
    const key = resultsKey(job, attempt);
    const rows = result.trial.rows;
    await svc.blobs.put(key, JSON.stringify(rows), 'application/json');
    await svc.blobs.put(previewKey(key), JSON.stringify(rows.slice(0, STATUS_ROWS_PREVIEW)), 'application/json');
    const api = result.apiEndpoint ? `; the items come from the JSON API ${result.apiEndpoint}` : '';
    await transitionJob(svc, job, 'complete', {
      progress: 100,
      row_count: rows.length,
      items_found: result.trial.itemsFound,
      pages_scraped: result.trial.pagesScraped,
      results_key: key,
      api_discovered: result.apiDiscovered,
      config_id: config.id,
      yaml_content: result.yaml,
      status_message: `Generated a config${result.generator === 'agent' ? ' with Claude' : ''} that found ${rows.length} item(s) on ${result.trial.pagesScraped} page(s) in its trial${api}; saved as "${config.name}" (config ${config.id}). ${result.notes.slice(-4).join('; ')}`.slice(0, 2000),
    }, worker);
    return 'done';
  } catch (err) {
    await writing;
    if (isCodedError(err) || controller.signal.aborted) {
      const e = controller.signal.aborted ? controller.signal.reason : err;
      await transitionJob(svc, job, 'fail', { status_message: `${(e as CodedError).code}: ${(e as Error).message}`.slice(0, 2000) }, worker);
      return 'done';
    }
    logger.error('generate attempt failed', { jobId, attempt, delivery: delivery.receiveCount, error: err });
    if (delivery.receiveCount >= delivery.maxReceives) {
      await transitionJob(svc, job, 'fail', { status_message: `internal_error: Gave up after ${delivery.receiveCount} attempts, each ended by an internal error (logged with job id ${jobId})` }, worker);
      return 'done';
    }
    await transitionJob(svc, job, 'retry', { status_message: `Attempt ${delivery.receiveCount} failed with an internal error; it will be retried` }, worker);
    return 'retry';
  } finally {
    clearTimeout(timer);
    await bench.close();
    await fetcher.close();
  }
}
