/**
 * `engine: auto` (docs/config-language.md, "Engines"): the lightweight engine when the config needs no
 * browser and the page as served already has the items; the browser otherwise. The reason is kept for
 * the job's status_message.
 */
import { browserFeatures, type ScrapeConfig } from './config.ts';
import { documentBase, loadHtml } from './extract.ts';
import { pagerControl } from './pager.ts';
import type { FetchedPage, Fetcher } from '../net/fetch.ts';
import { CodedError } from '../errors.ts';
import { describeBlock } from '../net/blocks.ts';
import { BlockedError } from './crawl/access.ts';

/** How the probe fetches the target: through the run's robots.txt, pace and retries (crawl/access.ts). */
export type ProbeFetch = (url: string, signal?: AbortSignal) => Promise<FetchedPage>;

export interface EngineChoice {
  engine: 'lightweight' | 'heavy';
  reason: string;
  /** The target page fetched to decide, for the lightweight engine to use rather than fetch it again. */
  page?: FetchedPage;
}

/**
 * Picks the engine for a run.
 * @param fetcher the probe: a function through the run's SiteAccess (runConfig), or a bare fetcher.
 * @throws CodedError `target_forbidden` when probing the page is refused by the guard, `robots_disallowed` when
 *   robots.txt disallows it (no engine may fetch it).
 */
export async function chooseEngine(config: ScrapeConfig, fetcher: Fetcher | ProbeFetch, signal?: AbortSignal): Promise<EngineChoice> {
  const probe: ProbeFetch = typeof fetcher === 'function' ? fetcher : (url, s) => fetcher.fetch(url, s ? { signal: s } : {});
  const features = browserFeatures(config);
  if (config.target.engine === 'heavy') return { engine: 'heavy', reason: 'target.engine is heavy' };
  if (config.target.engine === 'lightweight') return { engine: 'lightweight', reason: 'target.engine is lightweight' };
  if (features.length) return { engine: 'heavy', reason: `auto: the config needs a browser (${features.map((f) => f.path).join(', ')})` };
  if (config.target.api) return { engine: 'lightweight', reason: 'auto: the config reads a JSON API (target.api) over plain HTTP, no browser needed' };
  const container = config.extract.container;
  if (!container) return { engine: 'lightweight', reason: 'auto: a single item from the whole page needs no browser' };
  let html: string;
  let page: FetchedPage;
  try {
    page = await probe(config.target.url, signal);
    // Refusals aimed at non-browsers (401, 403, 429, 5xx) may not be aimed at a browser; a 404 is a 404.
    if ([401, 403, 429].includes(page.status) || page.status >= 500) return { engine: 'heavy', reason: `auto: the page answered HTTP ${page.status} to a plain request; trying a browser` };
    if (page.status >= 400) return { engine: 'lightweight', reason: `auto: the page answered HTTP ${page.status}`, page };
    html = page.text;
  } catch (err) {
    // No engine may load a page the guard or robots.txt refuses.
    if (err instanceof CodedError && (err.code === 'target_forbidden' || err.code === 'robots_disallowed')) throw err;
    if (signal?.aborted) throw signal.reason;
    if (err instanceof BlockedError) {
      return { engine: 'heavy', reason: `auto: the site answered a plain request with ${describeBlock(err.block)} (HTTP ${err.block.status}); trying a browser` };
    }
    return { engine: 'heavy', reason: `auto: the page could not be fetched without a browser (${(err as Error).message})` };
  }
  const $ = loadHtml(html);
  const n = $(container).length;
  if (n === 0) return { engine: 'heavy', reason: `auto: the page as served has no item matching "${container}"; it renders them with JavaScript` };
  const p = config.pagination;
  if (p?.type === 'click' && pagerControl($, p.selector!, documentBase($, page.url, html)).kind === 'control') {
    return { engine: 'heavy', reason: `auto: pagination.selector "${p.selector}" is not a link on the page as served; it needs clicking in a browser` };
  }
  return { engine: 'lightweight', reason: `auto: the page as served has ${n} item(s) matching "${container}", no browser needed`, page };
}
