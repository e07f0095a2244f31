/**
 * What the Claude agent (./agent.ts) may do to a site, as plain functions: load a page (over HTTP or in a
 * browser) and read a compact outline of it, test a CSS selector on the loaded page, list the JSON requests
 * the page made, and run a candidate config. The agent never sees whole raw pages, only outlines and
 * samples, so a generation stays within a bounded number of tokens. Every request goes through the
 * outbound guard (the loaders of lambdas/engine/loaders/).
 *
 * The workbench that implements these over the engine is ./workbench.ts; tests give the agent a scripted
 * stand-in.
 */
import type { Row } from '../engine/extract.ts';

/** A repeated block the page analysis found: a candidate for the items' container. */
export interface CandidateSummary {
  /** CSS selector of the items. */
  selector: string;
  /** Items it matches on the page. */
  count: number;
  /** The first item's text, shortened. */
  sample: string;
  /** How well it looks like the page's main list (higher is better; comparable within one page). */
  score: number;
}

/** Answer of {@link GeneratorTools.loadPage}. */
export interface PageOutline {
  /** The URL after redirects. */
  url: string;
  status: number;
  /** Whether the page was rendered in a browser (its scripts ran). */
  rendered: boolean;
  title: string;
  /** An indented outline of the DOM: tags with id and classes, repeated siblings folded, text shortened; at most about 8,000 characters. */
  outline: string;
  /** The repeated blocks found, best first (at most 10). */
  candidates: CandidateSummary[];
  /** Links that look like pagination (`rel=next`, "next", `?page=2`), as absolute URLs or selectors. */
  pagination: string[];
}

/** Answer of {@link GeneratorTools.testSelector}. */
export interface SelectorTest {
  selector: string;
  /** Elements it matches on the loaded page (0 when it is invalid). */
  count: number;
  /** Texts (or the asked attribute) of the first matches, shortened. */
  samples: string[];
  /** Why the selector is invalid, when it is. */
  error?: string;
}

/** A JSON request a rendered page made (XHR or fetch). */
export interface CapturedRequest {
  url: string;
  method: string;
  status: number;
  /** The first characters of the body. */
  sample: string;
  /** The request's body (a POST's), its first characters: an API config sends it again. */
  request_body?: string;
}

/** Answer of {@link GeneratorTools.runConfig}. */
export interface ConfigTrial {
  /** True when the YAML is a valid config and its trial run returned at least one row. */
  ok: boolean;
  /** The config's problems when it does not validate: path, line, column, message. */
  problems?: Array<{ path: string; line?: number; column?: number; message: string }>;
  /** Why the run failed, when it did (`target_failed`, `browser_required`, …). */
  error?: { code: string; message: string };
  /** Rows of the trial run. */
  rowCount: number;
  /** The first rows (at most 5). */
  rows: Row[];
  pagesScraped: number;
  warnings: string[];
}

/**
 * The agent's tools.
 *
 * **Example usage:**
 * ```ts
 * const page = await tools.loadPage('https://books.toscrape.com/', { render: false });
 * const t = await tools.testSelector('article.product_pod h3 a', { attribute: 'title' });
 * const trial = await tools.runConfig(yaml);
 * ```
 */
export interface GeneratorTools {
  /**
   * Loads a page and makes it the one the other tools look at.
   * @param options.render load it in a browser (scripts run, JSON requests are captured) instead of over HTTP.
   * @throws CodedError for a page that cannot be loaded (`target_forbidden`, `dns_failed`, `fetch_failed`).
   */
  loadPage(url: string, options: { render: boolean }): Promise<PageOutline>;
  /**
   * Tests a selector on the loaded page.
   * @param options.within count and sample inside each match of this selector instead (the item container).
   * @param options.attribute sample this attribute instead of the text.
   */
  testSelector(selector: string, options?: { within?: string; attribute?: string }): Promise<SelectorTest>;
  /** The JSON requests of the last rendered page (empty after an HTTP load). */
  listRequests(): Promise<CapturedRequest[]>;
  /** Validates a config and runs it for a trial (the first pages, a bounded number of items). */
  runConfig(yaml: string): Promise<ConfigTrial>;
}
