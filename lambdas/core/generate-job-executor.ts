/**
 * Generate jobs, the worker side: one delivery of a generate message ({@link executeGenerate}), on the
 * skeleton of ./job-delivery.ts. The job goes `analyzing` (the page is loaded and read), `generating` (the
 * config is built), `validating` (it runs for a trial), then `completed` with the config saved to the
 * account's configs (named from the prompt, the prompt kept), the trial's rows as the job's results, and
 * `api_discovered`; or `failed`, saying what was tried. The generation itself is generator/generate-config.ts
 * (heuristic, then the Claude agent when the service has its settings; docs/generate.md).
 */
import { randomUUID } from 'node:crypto';
import type { BrowserHost } from '../engine/browser/host.ts';
import type { GenerateProgress, GenerateStep } from '../generator/generator.ts';
import { generateConfig } from '../generator/generate-config.ts';
import { Workbench } from '../generator/workbench.ts';
import { executeJobDelivery, type JobAttempt } from './job-delivery.ts';
import type { ConfigRecord, Delivery, DeliveryOutcome } from './ports.ts';
import type { Services } from './services.ts';

const STEP_ORDER: GenerateStep[] = ['analyzing', 'generating', 'validating'];

/** What a generation needs besides the services: the worker's browser. */
export interface GenerateDeps {
  browser: () => BrowserHost;
}

/**
 * One delivery of a generate message. Deterministic failures end the job `failed` and count as done;
 * unexpected errors return `retry` until the last delivery, which ends the job `failed`.
 */
export function executeGenerate(svc: Services, jobId: string, delivery: Delivery, deps: GenerateDeps): Promise<DeliveryOutcome> {
  return executeJobDelivery(svc, jobId, delivery, {
    jobType: 'generate',
    actor: 'generate_worker',
    noun: 'generation',
    startMessage: (job) => (job.status === 'pending' ? `Loading ${job.target_url}` : `Starting again (attempt ${job.attempts + 1}) after an interrupted attempt`),
    body: (a) => generateBody(svc, a, deps),
  });
}

async function generateBody(svc: Services, a: JobAttempt, deps: GenerateDeps) {
  const { job } = a;
  const bench = new Workbench({ fetcher: a.fetcher, browser: deps.browser, signal: a.signal });
  let step: GenerateStep = 'analyzing';
  const onProgress = (p: GenerateProgress) => {
    const patch = { progress: p.progress, status_message: p.message };
    const from = STEP_ORDER.indexOf(step);
    const to = STEP_ORDER.indexOf(p.step);
    if (to <= from) return a.progress(patch);
    // One step at a time: analyzing -> generating -> validating; a step change is always written.
    for (let i = from + 1; i <= to; i++) a.progress({ ...patch, status: STEP_ORDER[i]! }, { transition: 'advance', force: true });
    step = p.step;
  };
  try {
    const result = await generateConfig({ url: job.target_url, prompt: job.prompt ?? '' }, {
      workbench: bench, onProgress, signal: a.signal, ...(svc.anthropic ? { agent: svc.anthropic } : {}),
    });
    onProgress({ step: 'validating', progress: 95, message: 'saving the config' });
    await a.settled();
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
    const rows = result.trial.rows;
    const key = await a.saveRows(rows);
    const api = result.apiEndpoint ? `; the items come from the JSON API ${result.apiEndpoint}` : '';
    return {
      row_count: rows.length,
      items_found: result.trial.itemsFound,
      pages_scraped: result.trial.pagesScraped,
      results_key: key,
      api_discovered: result.apiDiscovered,
      config_id: config.id,
      yaml_content: result.yaml,
      status_message: `Generated a config${result.generator === 'agent' ? ' with Claude' : ''} that found ${rows.length} item(s) on ${result.trial.pagesScraped} page(s) in its trial${api}; saved as "${config.name}" (config ${config.id}). ${result.notes.slice(-4).join('; ')}`,
    };
  } finally {
    await bench.close();
  }
}
