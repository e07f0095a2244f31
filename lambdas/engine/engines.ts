/**
 * The two engines of docs/spec.md's `target.engine`: the one crawler (./crawler.ts) over the HTTP page loader
 * (`lightweight`) or over the browser page loader (`heavy`). `engine: auto` picks one per run (./choose.ts).
 * {@link runConfig} is how every caller runs a config; {@link runLightweight} and {@link runHeavy} are its two halves.
 */
import { assertLightweight, type ScrapeConfig } from './config.ts';
import { crawl, type CrawlOptions, type CrawlResult } from './crawler.ts';
import { HttpPageLoader, type HttpLoaderOptions } from './loaders/http-loader.ts';
import { BrowserPageLoader, type BrowserLoaderOptions } from './loaders/browser-loader.ts';
import { chooseEngine, type EngineChoice } from './choose.ts';
import type { BrowserHost } from './browser/host.ts';
import { Fetcher } from '../net/fetch.ts';
import { SiteAccess } from './crawl/access.ts';
import type { RobotsRules } from './crawl/robots.ts';
import { ProxySessionPool } from './crawl/proxy-sessions.ts';
import { SessionFetchers } from './crawl/session-fetchers.ts';
import type { UpstreamProxy } from '../net/upstream.ts';
import { CodedError } from '../errors.ts';

import type { RunProgress } from './crawler.ts';

export type { CrawlOptions, CrawlResult, RunProgress } from './crawler.ts';
export type { EngineChoice } from './choose.ts';

/** Options of {@link runLightweight}: the crawl's and the HTTP loader's. */
export type LightweightOptions = CrawlOptions & Omit<HttpLoaderOptions, 'signal' | 'perHostConcurrency'>;

/** Options of {@link runHeavy}: the crawl's and the browser loader's. */
export type HeavyOptions = CrawlOptions & Omit<BrowserLoaderOptions, 'signal' | 'images'> & {
  /** The HTTP client robots.txt is fetched with (without `access`); one on the host's guard is made when absent. */
  fetcher?: Fetcher;
};

/**
 * Runs a config with the lightweight engine (HTTP, no browser).
 * @throws BrowserRequiredError for a config that needs a browser, before any request; otherwise as {@link crawl}.
 */
export async function runLightweight(config: ScrapeConfig, o: LightweightOptions = {}): Promise<CrawlResult> {
  assertLightweight(config);
  const loader = new HttpPageLoader({ ...o, perHostConcurrency: Math.max(1, o.concurrency ?? 4), ...(o.signal ? { signal: o.signal } : {}), ...(o.access ? { sessionFetchers: o.access.fetchers } : {}) });
  try {
    const access = o.access ?? new SiteAccess(config, { fetcher: loader.fetcher, concurrency: o.concurrency ?? 4 });
    return await crawl(config, loader, { ...o, access });
  } finally {
    await loader.close();
  }
}

/**
 * Runs a config with the heavy engine: the pages in a fresh browser context of `o.host`'s browser. Images are
 * loaded only when a script may need them (`eval` fields, `script` actions).
 * @throws as {@link crawl}.
 */
export async function runHeavy(config: ScrapeConfig, o: HeavyOptions): Promise<CrawlResult> {
  const images = [...config.extract.fields, ...(config.detail_fields?.fields ?? [])].some((f) => f.type === 'eval')
    || config.actions.some((a) => a.type === 'script');
  // robots.txt is fetched over HTTP, through the same guard as the pages.
  const fetcher = o.access || o.fetcher ? null : new Fetcher(o.host.guard);
  try {
    const access = o.access ?? new SiteAccess(config, { fetcher: o.fetcher ?? fetcher!, concurrency: o.concurrency ?? 4 });
    // An API config's requests go over HTTP through the run's session fetchers, as on the lightweight engine.
    const loader = await BrowserPageLoader.open({ ...o, images, apiFetchers: access.fetchers, ...(o.signal ? { signal: o.signal } : {}) });
    try {
      return await crawl(config, loader, { ...o, access });
    } finally {
      await loader.close();
    }
  } finally {
    await fetcher?.close();
  }
}

/** Options of {@link runConfig}: the crawl's limits plus what both engines need. */
export interface RunConfigOptions extends Omit<CrawlOptions, 'onProgress'> {
  /** The HTTP client, bound to the outbound guard: it probes the page (`engine: auto`) and loads pages of the lightweight engine. */
  fetcher: Fetcher;
  /**
   * The browser the heavy engine uses, asked for only when the heavy engine runs (a worker starts its browser
   * on first use). Without it a run that needs a browser fails with `browser_required`.
   */
  browser?: () => BrowserHost;
  /** Called after each page with the engine chosen; cheap to call often (the caller throttles writes). */
  onProgress?: (p: RunProgress, choice: EngineChoice) => void;
  /** Called once the engine is chosen, before any page of the run is loaded. */
  onEngineChosen?: (choice: EngineChoice) => void;
  /** robots.txt rules read already (a generation's), shared with this run; absent: the run reads its own. */
  robots?: RobotsRules;
  /** The run's upstream proxies (its config's group, lambdas/net/upstream.ts); absent or null: direct. */
  proxies?: readonly UpstreamProxy[] | null;
}

/** What {@link runConfig} produced: the rows and counts, and which engine ran them and why. */
export interface ConfigRun {
  choice: EngineChoice;
  result: CrawlResult;
}

/**
 * Runs a config: the one way every caller does it (the run job, `sai run --local`, the generator's trial runs,
 * self-healing). Picks the engine (./choose.ts, `engine: auto` probing the page with `o.fetcher`), then runs
 * {@link runLightweight} (the probed page served once, not fetched again) or {@link runHeavy} in `o.browser()`,
 * so that every caller gets the same loader settings: the lightweight assertion, the image decision, API capture.
 * @throws CodedError `target_forbidden` (the guard refused the page), `browser_required` (the heavy engine with
 *   no browser at hand), BrowserRequiredError (a lightweight config that needs a browser); otherwise as {@link crawl}.
 */
export async function runConfig(config: ScrapeConfig, o: RunConfigOptions): Promise<ConfigRun> {
  // One SiteAccess for the run: the probe and every page after it share robots.txt (fetched once), the pace and the
  // proxy sessions.
  const fetcher = o.fetcher;
  const fetchers = new SessionFetchers(fetcher);
  try {
    const access = o.access ?? new SiteAccess(config, {
      fetcher, concurrency: o.concurrency ?? 4, ...(o.robots ? { robots: o.robots } : {}), sessions: new ProxySessionPool(o.proxies ?? null), fetchers,
    });
    return await runWith(config, access, o);
  } finally {
    await fetchers.close();
  }
}

/** {@link runConfig} with its SiteAccess made. */
async function runWith(config: ScrapeConfig, access: SiteAccess, o: RunConfigOptions): Promise<ConfigRun> {
  const { fetcher, browser, onProgress, onEngineChosen, robots: _robots, proxies: _proxies, ...crawlOptions } = o;
  const probe = (url: string, signal?: AbortSignal) =>
    access.load(url, async (beforeRequest, session) => {
      await beforeRequest();
      return access.fetchers.fetch(session, url, { retryStatuses: false, ...(signal ? { signal } : {}) });
    }, (p) => ({ ...p, body: p.text }), signal, { engine: 'lightweight' });
  const choice = await chooseEngine(config, probe, o.signal);
  onEngineChosen?.(choice);
  const options: CrawlOptions = { ...crawlOptions, access, ...(onProgress ? { onProgress: (p: RunProgress) => onProgress(p, choice) } : {}) };
  if (choice.engine === 'heavy') {
    if (!browser) throw new CodedError('browser_required', `The config needs a browser (${choice.reason}), and none is available here`);
    return { choice, result: await runHeavy(config, { ...options, host: browser(), fetcher }) };
  }
  return { choice, result: await runLightweight(config, { ...options, fetcher, ...(choice.page ? { preloaded: choice.page } : {}) }) };
}
