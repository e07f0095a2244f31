/**
 * Generating a config (docs/generate.md): the heuristic generator (./heuristic.ts) first; with Claude's
 * settings, the agent (./agent.ts) starts from the heuristic result and improves on it. When the agent fails
 * (the API's errors, time-outs, rate limits, its round or token budget) the heuristic config stands and the
 * notes say why; when both fail, the error carries both reasons. Used by the generate job
 * (core/generate-job-executor.ts) and by self-healing (core/self-healing.ts).
 */
import { CodedError, isCodedError } from '../errors.ts';
import { parseConfig } from '../engine/config.ts';
import { logger } from '../logger.ts';
import type { GenerateProgress, GenerateRequest, GenerationResult } from './generator.ts';
import { generateHeuristic } from './heuristic.ts';
import type { Workbench } from './workbench.ts';

/** The Claude agent's settings (the service's `ANTHROPIC_*` settings). */
export interface AgentSettings {
  apiKey: string;
  /** The agent's default model when absent. */
  model?: string;
  /** Another endpoint speaking the Messages API (a local stub in tests). */
  baseURL?: string;
}

/** Options of {@link generateConfig}. */
export interface GenerateConfigOptions {
  /** Loads pages and runs trials (closed by the caller). */
  workbench: Workbench;
  /** Claude's settings; null or absent: the heuristic generator alone. Read only when called. */
  agent?: () => Promise<AgentSettings | null>;
  onProgress: (p: GenerateProgress) => void;
  signal: AbortSignal;
}

/**
 * Generates a config from a URL and a prompt, and runs it for a trial.
 * @returns the result (a config whose trial found rows).
 * @throws CodedError `generation_failed` (nothing found items; the message says what was tried) or the
 *   target's own codes (`target_forbidden`, `dns_failed`, `fetch_failed`, `target_failed`); the signal's reason.
 */
export async function generateConfig(request: GenerateRequest, o: GenerateConfigOptions): Promise<GenerationResult> {
  const { workbench: bench, onProgress, signal } = o;
  let heuristic: GenerationResult | null = null;
  let heuristicError: unknown = null;
  try {
    heuristic = await generateHeuristic(request, { workbench: bench, onProgress });
  } catch (err) {
    if (!isCodedError(err) || err.code !== 'generation_failed') throw err;
    heuristicError = err;
  }
  const anthropic = await o.agent?.();
  if (!anthropic) {
    if (heuristic) return heuristic;
    throw heuristicError;
  }
  // The agent is loaded only when it is used: the SDK stays out of runs without it.
  const { runAgent, AgentError } = await import('./agent.ts');
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
