/**
 * Self-healing of saved configs (docs/generate.md, "Self-healing"), for plans that have it (variant B, Pro):
 * a run of a saved config that used to find items and now finds none regenerates the config once from its
 * stored prompt, saves the new version in place of the old one, and the run goes on with it. Sites change
 * their markup; the prompt says what the user wanted.
 */
import type { ScrapeConfig } from '../engine/config.ts';
import type { BrowserHost } from '../engine/browser/host.ts';
import type { Fetcher } from '../net/fetch.ts';
import { Workbench } from '../generator/workbench.ts';
import { isCodedError } from '../errors.ts';
import { logger } from '../logger.ts';
import { generateConfig } from '../generator/generate-config.ts';
import type { JobRecord } from './ports.ts';
import type { Services } from './services.ts';

/** Jobs looked at to tell whether a config used to find items. */
const HISTORY = 100;

/** A config regenerated for a run. */
export interface HealedConfig {
  config: ScrapeConfig;
  yaml: string;
  /** For the job's status_message: what was found and done. */
  message: string;
}

/**
 * Regenerates the saved config of a run that found nothing, when the account's plan has self-healing, the
 * config has a prompt and an earlier run of it found items.
 * @returns the new config (already saved in place of the old), or null when none of that applies or the
 *   regeneration found nothing either (the run then ends as it is).
 * @throws the signal's reason when the run is stopped meanwhile.
 */
export async function healConfig(svc: Services, job: JobRecord, deps: { fetcher: Fetcher; browser: () => BrowserHost; signal: AbortSignal }): Promise<HealedConfig | null> {
  if (!job.config_id) return null;
  const account = await svc.store.getAccount(job.account_id);
  if (!account || !svc.plans.plans[account.plan]?.self_healing) return null;
  const saved = await svc.store.getConfig(account.id, job.config_id);
  if (!saved?.prompt) return null;
  const before = (await svc.store.listJobs(account.id, HISTORY)).items
    .find((j) => j.id !== job.id && j.config_id === saved.id && j.job_type === 'run' && j.status === 'completed' && j.row_count > 0);
  if (!before) return null;
  const bench = new Workbench({ fetcher: deps.fetcher, browser: deps.browser, signal: deps.signal });
  try {
    const result = await generateConfig({ url: saved.target_url, prompt: saved.prompt }, {
      workbench: bench, onProgress: () => undefined, signal: deps.signal, ...(svc.anthropic ? { agent: svc.anthropic } : {}),
    });
    await svc.store.updateConfigYaml(account.id, saved.id, result.yaml);
    return {
      config: result.config,
      yaml: result.yaml,
      message: `the saved config found no items (it found ${before.row_count} on ${before.completed_at?.slice(0, 10) ?? 'an earlier run'}); regenerated it from its prompt and saved the new version`,
    };
  } catch (err) {
    if (deps.signal.aborted) throw deps.signal.reason;
    if (!isCodedError(err)) throw err;
    logger.warn('self-healing found no new config', { jobId: job.id, configId: saved.id, error: err.message });
    return null;
  } finally {
    await bench.close();
  }
}
