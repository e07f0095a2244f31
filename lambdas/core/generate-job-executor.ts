/**
 * Generate jobs, the worker side: one delivery of a generate message ({@link executeGenerate}), on the
 * skeleton of ./job-delivery.ts. The job goes `analyzing` (the page is loaded and read), `generating` (the
 * config is built), `validating` (it runs for a trial), then `completed` with the config saved to the
 * account's configs (named from the prompt, the prompt kept), the trial's rows as the job's results, and
 * `api_discovered`; or `failed`, saying what was tried. A job made with `run: true` then starts a run job of the saved
 * config (`run_job_id`, issue 40). The generation itself is generator/generate-config.ts
 * (heuristic, then the Claude agent when the service has its settings; docs/generate.md).
 */
import type { BrowserHost } from '../engine/browser/host.ts';
import { isCodedError } from '../errors.ts';
import type { GenerateProgress, GenerateStep } from '../generator/generator.ts';
import { generateConfig } from '../generator/generate-config.ts';
import { TRIAL_LIMITS, Workbench } from '../generator/workbench.ts';
import { derivedUuid } from './crypto.ts';
import { executeJobDelivery, type JobAttempt } from './job-delivery.ts';
import type { ConfigRecord, Delivery, DeliveryOutcome, JobRecord } from './ports.ts';
import { sameConfigs } from './generate-jobs.ts';
import { startRun } from './run-jobs.ts';
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
    const result = await generateConfig({ url: job.target_url, prompt: job.prompt ?? '', ...(job.example_urls?.length ? { exampleUrls: job.example_urls } : {}) }, {
      workbench: bench, onProgress, signal: a.signal, ...(svc.anthropic ? { agent: svc.anthropic } : {}),
    });
    onProgress({ step: 'validating', progress: 95, message: 'saving the config' });
    await a.settled();
    const saved = await saveConfig(svc, job, result.config.name ?? `Generated from ${job.target_url}`, result.yaml);
    const { config } = saved;
    const rows = result.trial.rows;
    const key = await a.saveRows(rows);
    const run = job.run_requested ? await startConfigRun(svc, job, config.id) : null;
    const api = result.apiEndpoint ? `; the items come from the JSON API ${result.apiEndpoint}` : '';
    const found = `Generated a config${result.generator === 'agent' ? ' with Claude' : ''} that found ${rows.length} item(s) on ${result.trial.pagesScraped} page(s) in its trial${api}; ${savedSentence(saved)}`;
    return {
      row_count: rows.length,
      items_found: result.trial.itemsFound,
      pages_scraped: result.trial.pagesScraped,
      results_key: key,
      api_discovered: result.apiDiscovered,
      config_id: config.id,
      config_name: config.name,
      yaml_content: result.yaml,
      ...(run ?? {}),
      status_message: `${found} ${runSentence(config.id, run)} ${summaryNotes(result.notes).join('; ')}`.trim(),
    };
  } finally {
    await bench.close();
  }
}

/** The generation's notes a status message carries: what it found first (the blocks), and the last four (what it decided). */
function summaryNotes(notes: readonly string[]): string[] {
  return notes.length > 5 ? [notes[0]!, ...notes.slice(-4)] : [...notes];
}

/**
 * What the message says of the rows and the run: with `run: true`, the run job that gives all the rows (or why it could
 * not start); without, that the rows are a trial of the first pages and how to get all of them (issue 40).
 */
function runSentence(configId: string, run: RunStart | null): string {
  const trial = `The job's rows are a trial of the first pages only (at most ${TRIAL_LIMITS.pages} listing pages and ${TRIAL_LIMITS.rows} rows)`;
  if (!run) return `${trial}; for all the rows, run the saved config (POST /api/v1/run/ with config_id ${configId}), or generate with "run": true.`;
  if (run.run_job_id !== undefined) return `Running the saved config for all the rows: run job ${run.run_job_id}.`;
  return `${trial}; the run of the saved config for all the rows could not start (${run.run_error}): run config ${configId} when it can.`;
}

/** How the generated config was saved: replacing the config `config_id` named, or as a new one (beside alike ones). */
interface SavedConfig {
  config: ConfigRecord;
  /** The config `config_id` named, whose YAML and prompt were replaced. */
  replaced: boolean;
  /** `config_id` named a config deleted before the generation ended: saved as a new one instead. */
  replacedGone: boolean;
  /** Other configs of the account with the same URL and prompt (none when one was replaced). */
  alike: ConfigRecord[];
}

/** What the message says of the saved config (issue 40: a repeated generate says so, and how to replace instead). */
function savedSentence(s: SavedConfig): string {
  const name = `"${s.config.name}" (config ${s.config.id})`;
  if (s.replaced) return `replaced the YAML of ${name}, as config_id asked.`;
  const gone = s.replacedGone ? ' The config config_id named was deleted meanwhile, so it is saved as a new one.' : '';
  const first = s.alike[0];
  const alike = first
    ? ` A config with the same URL and prompt exists: "${first.name}" (config ${first.id})${s.alike.length > 1 ? ` and ${s.alike.length - 1} more` : ''}; generate with "config_id": "${first.id}" to replace its YAML instead of saving another.`
    : '';
  return `saved as ${name}.${gone}${alike}`;
}

/** `name`, or `name (2)`, `name (3)`, … : the first that no config of `taken` has (issue 40). */
function freeConfigName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const candidate = `${name} (${n})`;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * Saves the generated config: over the config the job's `config_id` names (its YAML and prompt; id, name and creation
 * time stay), else as a new config under an id made from the job's (so a second delivery of the job finds the config
 * the first one saved and replaces its YAML, rather than saving a second), named with a suffix when the account has a
 * config of that name.
 */
async function saveConfig(svc: Services, job: JobRecord, name: string, yaml: string): Promise<SavedConfig> {
  if (job.config_id) {
    const replaced = await svc.store.updateConfigYaml(job.account_id, job.config_id, yaml, job.prompt);
    if (replaced) return { config: replaced, replaced: true, replacedGone: false, alike: [] };
  }
  const id = derivedUuid(`${job.id}/config`);
  const others = (await svc.store.listConfigs(job.account_id)).filter((c) => c.id !== id);
  const alike = sameConfigs(others, job.target_url, job.prompt ?? '');
  const again = await svc.store.updateConfigYaml(job.account_id, id, yaml, job.prompt);
  if (again) return { config: again, replaced: false, replacedGone: Boolean(job.config_id), alike };
  const config: ConfigRecord = {
    id, account_id: job.account_id, name: freeConfigName(name, new Set(others.map((c) => c.name))), target_url: job.target_url, yaml_content: yaml,
    prompt: job.prompt, created_at: svc.clock.now().toISOString(),
  };
  await svc.store.createConfig(config);
  return { config, replaced: false, replacedGone: Boolean(job.config_id), alike };
}

/** The run a generate job with `run: true` started: its job, or why it could not start (`code: message`). */
type RunStart = { run_job_id: string } | { run_job_id?: undefined; run_error: string };

/**
 * Starts the run of the saved config as POST /run/ would (the plan, the rate limit, the quota: a normal, metered run
 * job), under an id made from the generate job's, so a second delivery finds the run the first one started. A refusal
 * (the quota used up since the generate was accepted, the plan changed) is said, not thrown: the config and the trial
 * rows stand. Any other error is thrown, and the delivery is retried.
 */
async function startConfigRun(svc: Services, job: JobRecord, configId: string): Promise<RunStart> {
  const runId = derivedUuid(`${job.id}/run`);
  if (await svc.store.getJobById(runId)) return { run_job_id: runId };
  const account = await svc.store.getAccount(job.account_id);
  if (!account) return { run_error: `not_found: account ${job.account_id} is gone` };
  try {
    return { run_job_id: (await startRun(svc, account, { config_id: configId }, { job_id: runId })).id };
  } catch (err) {
    if (await svc.store.getJobById(runId)) return { run_job_id: runId };
    if (!isCodedError(err)) throw err;
    return { run_error: `${err.code}: ${err.message}` };
  }
}
