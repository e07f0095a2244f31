/**
 * Runs a config on the user's tabs (the background service worker does, so a run outlives the popup): the
 * service's parser (`parseConfig`) and crawler (`crawl`) over the {@link TabPageLoader}. Two modes:
 * - **Quick Test** (docs/spec.md, "What the service does": the current page only, at most 20 items): the current page as it is, its actions,
 *   no pagination, no categories, no detail pages, at most {@link QUICK_TEST_MAX_ITEMS} rows;
 * - **Run**: the whole config from the current page: pagination in the current tab, detail pages in one
 *   background tab, one page at a time; stoppable (the rows read so far are kept).
 * Either way the run starts on the current tab's page: `target.url` is replaced by the tab's URL
 * (docs/extension.md, "Runs").
 */
import { parseConfig, type ScrapeConfig } from '../../../../lambdas/engine/config.ts';
import { crawl, describePages, type RunProgress } from '../../../../lambdas/engine/crawler.ts';
import type { Row } from '../../../../lambdas/engine/extract.ts';
import { isCodedError } from '../../../../lambdas/errors.ts';
import { TabPageLoader } from './tab-loader.ts';

/** Rows a Quick Test keeps at most (docs/spec.md, "Other limits"). */
export const QUICK_TEST_MAX_ITEMS = 20;

/** Which run. */
export type RunMode = 'quick' | 'full';

/** A run as the popup shows it. */
export interface RunState {
  mode: RunMode;
  status: 'running' | 'completed' | 'failed' | 'stopped';
  configName: string;
  /** The page the run started on. */
  startUrl: string;
  /** 0-100; never goes down. */
  progress: number;
  pagesScraped: number;
  itemsFound: number;
  message: string;
  warnings: string[];
  /** The rows (when the run has ended). */
  rows: Row[];
  /** Why a run failed: the crawler's or the parser's code, message and details (line and column). */
  error?: { code: string; message: string; details: unknown[] };
  /** Epoch ms. */
  startedAt: number;
  finishedAt?: number;
}

/**
 * The config a run on a tab uses: the tab's URL as `target.url`; for a Quick Test also no pagination,
 * categories or detail pages, and an output limit of at most 20.
 */
export function configForTab(config: ScrapeConfig, tabUrl: string, mode: RunMode): ScrapeConfig {
  const onTab: ScrapeConfig = { ...config, target: { ...config.target, url: tabUrl } };
  if (mode === 'full') return onTab;
  const { pagination: _p, categories: _c, detail_fields: _d, ...rest } = onTab;
  return { ...rest, output: { ...config.output, limit: Math.min(config.output.limit ?? QUICK_TEST_MAX_ITEMS, QUICK_TEST_MAX_ITEMS) } } as ScrapeConfig;
}

/** Options of {@link runOnTab}. */
export interface RunOnTabOptions {
  onProgress?: (p: RunProgress) => void;
  /** Stops gracefully: the rows read so far are kept (crawler's stopSignal). */
  stopSignal?: AbortSignal;
}

/**
 * Parses and runs a config on a tab.
 * @returns the ended run's state: `completed` (or `stopped`) with rows, or `failed` with the error's code,
 *   message and details (an invalid config: `invalid_config` with line and column per problem).
 */
export async function runOnTab(yaml: string, tab: { id: number; url: string }, mode: RunMode, o: RunOnTabOptions = {}): Promise<RunState> {
  const startedAt = Date.now();
  const base = { mode, configName: '', startUrl: tab.url, progress: 0, pagesScraped: 0, itemsFound: 0, warnings: [] as string[], rows: [] as Row[], startedAt };
  let config: ScrapeConfig;
  try {
    config = configForTab(parseConfig(yaml), tab.url, mode);
  } catch (err) {
    return { ...base, status: 'failed', message: (err as Error).message, error: errorOf(err), finishedAt: Date.now() };
  }
  const loader = new TabPageLoader({ tabId: tab.id, navigationTimeoutMs: Math.max(config.target.browser.timeout, 10_000) });
  try {
    const result = await crawl(config, loader, { concurrency: 1, maxPages: mode === 'quick' ? 1 : undefined, ...o });
    const stopped = o.stopSignal?.aborted ?? false;
    return {
      ...base, configName: config.name ?? '', status: stopped ? 'stopped' : 'completed', progress: 100, pagesScraped: result.pagesScraped, itemsFound: result.itemsFound,
      rows: result.rows, warnings: result.warnings, finishedAt: Date.now(),
      message: `${stopped ? 'Stopped' : 'Completed'}: ${result.rows.length} row(s) from ${describePages(result.pageCounts)}`,
    };
  } catch (err) {
    return { ...base, configName: config.name ?? '', status: 'failed', message: (err as Error).message ?? String(err), error: errorOf(err), finishedAt: Date.now() };
  } finally {
    await loader.close();
  }
}

function errorOf(err: unknown): RunState['error'] {
  if (isCodedError(err)) return { code: err.code, message: err.message, details: (err.details ?? []) as unknown[] };
  return { code: 'internal_error', message: (err as Error)?.message ?? String(err), details: [] };
}
