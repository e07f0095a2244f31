/**
 * The two engines of SPEC.md's `target.engine`: the one crawler (./crawler.ts) over the HTTP page loader
 * (`lightweight`) or over the browser page loader (`heavy`). `engine: auto` picks one per run (./choose.ts).
 */
import { assertLightweight, type ScrapeConfig } from './config.ts';
import { crawl, type CrawlOptions, type CrawlResult } from './crawler.ts';
import { HttpPageLoader, type HttpLoaderOptions } from './loaders/http-loader.ts';
import { BrowserPageLoader, type BrowserLoaderOptions } from './loaders/browser-loader.ts';

export type { CrawlOptions, CrawlResult, RunProgress } from './crawler.ts';

/** Options of {@link runLightweight}: the crawl's and the HTTP loader's. */
export type LightweightOptions = CrawlOptions & Omit<HttpLoaderOptions, 'signal' | 'perHostConcurrency'>;

/** Options of {@link runHeavy}: the crawl's and the browser loader's. */
export type HeavyOptions = CrawlOptions & Omit<BrowserLoaderOptions, 'signal' | 'images'>;

/**
 * Runs a config with the lightweight engine (HTTP, no browser).
 * @throws BrowserRequiredError for a config that needs a browser, before any request; otherwise as {@link crawl}.
 */
export async function runLightweight(config: ScrapeConfig, o: LightweightOptions = {}): Promise<CrawlResult> {
  assertLightweight(config);
  const loader = new HttpPageLoader({ ...o, perHostConcurrency: Math.max(1, o.concurrency ?? 4), ...(o.signal ? { signal: o.signal } : {}) });
  try {
    return await crawl(config, loader, o);
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
  const loader = await BrowserPageLoader.open({ ...o, images, ...(o.signal ? { signal: o.signal } : {}) });
  try {
    return await crawl(config, loader, o);
  } finally {
    await loader.close();
  }
}
