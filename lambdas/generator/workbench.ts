/**
 * The generators' workbench (./tools.ts implemented over the engine): loads a page over HTTP or in the
 * job's browser, keeps it and its analysis, answers selector tests on it, lists the JSON requests a rendered
 * page made, and runs trial crawls of candidate configs with the one crawler, bounded to the first pages and
 * a few items. Every request goes through the outbound guard: the fetcher's and the browser's.
 */
import { isTag, type Element } from 'domhandler';
import { parseConfig, type ScrapeConfig } from '../engine/config.ts';
import { runConfig } from '../engine/engines.ts';
import { BrowserPageLoader } from '../engine/loaders/browser-loader.ts';
import type { CapturedResponse, PageSession } from '../engine/loaders/page-loader.ts';
import type { BrowserHost } from '../engine/browser/host.ts';
import { Fetcher } from '../net/fetch.ts';
import { OutboundGuard, type GuardOptions } from '../net/guard.ts';
import { CodedError, isCodedError } from '../errors.ts';
import { blockMessage, detectBlock, type BlockAnswer } from '../net/blocks.ts';
import { fetchedRobots, RobotsDisallowedError } from '../engine/crawl/access.ts';
import type { RobotsRules } from '../engine/crawl/robots.ts';
import { analyzePage, visibleText, type PageAnalysis } from './analyze.ts';
import { pageKind } from '../engine/page-facts.ts';
import { findLoadMore, findPager } from './navigation.ts';
import type { TrialRun } from './generator.ts';
import type { CandidateSummary, CapturedRequest, ConfigTrial, GeneratorTools, PageOutline, SelectorTest } from './tools.ts';

/** Options of {@link Workbench}. */
export interface WorkbenchOptions {
  /** The guard's options for the fetcher made here (ignored with `fetcher`). */
  outbound?: GuardOptions;
  /** The HTTP client (the job's); made here from `outbound` when absent, and closed with the workbench. */
  fetcher?: Fetcher;
  /** The worker's browser; without it pages are only loaded over HTTP and configs that need a browser fail their trial. */
  browser?: () => BrowserHost;
  signal?: AbortSignal;
  /** Listing pages a trial run reads at most. @default 2 */
  trialMaxPages?: number;
  /** Rows a trial run keeps at most. @default 30 */
  trialMaxItems?: number;
  /** Pages of every kind a trial run loads at most (listing, detail, categories). @default 12 */
  trialPageBudget?: number;
}

/** A page as the workbench holds it. */
export interface LoadedPage {
  url: string;
  status: number;
  html: string;
  rendered: boolean;
  /** JSON answers of XHR/fetch requests (rendered pages). */
  captured: CapturedResponse[];
  analysis: PageAnalysis;
  /** Whether scrolling to the bottom added items to the best candidate (rendered pages; tested on demand). */
  scrollGrows?: boolean;
}

/** What a generate job's trial run reads by default: listing pages and rows (the rows a generate job answers with, issue 40). */
export const TRIAL_LIMITS = { pages: 2, rows: 30 } as const;

/** Longest outline handed to the agent, characters. */
const MAX_OUTLINE = 8000;
/** A browser load waits for this (it never appears) until the page has gone quiet, at most this long. */
const SETTLE = { selector: '[data-sai-settle-never]', timeoutMs: 6000, explicit: false } as const;

/**
 * Fails a page that is a bot-protection page (net/blocks.ts) with `blocked`: "the site answered with a Cloudflare
 * challenge; try the browser engine or a proxy", rather than "found no repeated blocks" on the challenge's HTML.
 */
function throwIfBlocked(answer: BlockAnswer, url: string, advice: 'browser or proxy' | 'proxy'): void {
  const block = detectBlock(answer);
  if (block) throw new CodedError('blocked', blockMessage(block, url, advice), [{ url, service: block.service, kind: block.kind, status: block.status }]);
}

/** Implements the agent's tools and gives the heuristic generator its pages and trials. Close it when done. */
export class Workbench implements GeneratorTools {
  private readonly o: WorkbenchOptions;
  readonly fetcher: Fetcher;
  private readonly ownsFetcher: boolean;
  private browserLoader: BrowserPageLoader | null = null;
  private browserSession: PageSession | null = null;
  /** The page the tools look at (the last one loaded). */
  page: LoadedPage | null = null;
  /** The last trial run, whole. */
  lastTrial: TrialRun | null = null;

  constructor(o: WorkbenchOptions = {}) {
    this.o = o;
    this.ownsFetcher = !o.fetcher;
    this.fetcher = o.fetcher ?? new Fetcher(new OutboundGuard(o.outbound), { perHostConcurrency: 4 });
    this.robots = fetchedRobots(this.fetcher, () => undefined);
  }

  /** robots.txt of the generation, shared by its page loads and its trial runs (each host's file fetched once). */
  private readonly robots: RobotsRules;

  /** Whether a browser is at hand. */
  get canRender(): boolean {
    return !!this.o.browser;
  }

  /**
   * Loads a page: over HTTP, or rendered in the job's browser (scripts run, JSON requests recorded).
   * @throws CodedError `target_forbidden`, `dns_failed`, `fetch_failed`, `response_too_large`; `target_failed`
   *   for a 4xx/5xx answer or a page that is not HTML; `browser_required` when `render` is asked with no browser.
   */
  async load(url: string, render: boolean): Promise<LoadedPage> {
    let html: string;
    let finalUrl: string;
    let status: number;
    let captured: CapturedResponse[] = [];
    // Generations obey robots.txt as runs do (engine/crawl/robots.ts; one fetch per host for the whole generation).
    const refusal = await this.robots.check(url, this.o.signal);
    if (refusal) throw new RobotsDisallowedError(refusal);
    if (render) {
      const session = await this.session();
      const doc = await session.load(url, { ready: SETTLE, boxes: true, ...(this.o.signal ? { signal: this.o.signal } : {}) });
      ({ html, url: finalUrl, status } = doc);
      captured = this.browserLoader!.apiCapture().responses;
      throwIfBlocked({ status, ...(doc.headers ? { headers: doc.headers } : {}), body: html }, url, 'proxy');
      if (status >= 400) throw new CodedError('target_failed', `${url} answered HTTP ${status} in the browser`, [{ url, status }]);
    } else {
      const page = await this.fetcher.fetch(url, this.o.signal ? { signal: this.o.signal } : {});
      ({ text: html, url: finalUrl, status } = page);
      throwIfBlocked({ status, headers: page.headers, body: html }, url, 'browser or proxy');
      if (status >= 400) throw new CodedError('target_failed', `${url} answered HTTP ${status}`, [{ url, status }]);
      // What a run reads (engine/page-facts.ts, pageKind): HTML, or XML such as a feed.
      if (!['html', 'xml'].includes(pageKind(page.contentType, html))) {
        throw new CodedError('target_failed', `${url} is ${page.contentType || 'a body with no content type'}, not an HTML page`, [{ url, content_type: page.contentType }]);
      }
    }
    const analysis = analyzePage(html, finalUrl, { rendered: render });
    this.page = { url: finalUrl, status, html, rendered: render, captured, analysis };
    return this.page;
  }

  private async session(): Promise<PageSession> {
    if (!this.o.browser) throw new CodedError('browser_required', 'This page needs a browser to render, and none is available here');
    if (!this.browserSession) {
      this.browserLoader = await BrowserPageLoader.open({ host: this.o.browser(), captureApi: true, ...(this.o.signal ? { signal: this.o.signal } : {}) });
      this.browserSession = await this.browserLoader.openSession();
    }
    return this.browserSession;
  }

  /**
   * Whether scrolling the rendered page to its bottom adds items matching `selector` (infinite scroll).
   * The page is the last rendered one; it is left scrolled.
   */
  async scrollGrows(selector: string): Promise<boolean> {
    const page = this.page;
    if (!page?.rendered || !this.browserSession?.browser) return false;
    try {
      const r = await this.browserSession.browser.step('scroll', undefined, { type: 'list', container: selector }, 2500, SETTLE);
      page.scrollGrows = r.outcome === 'more';
    } catch {
      page.scrollGrows = false;
    }
    return page.scrollGrows;
  }

  // --- the agent's tools (./tools.ts) ---

  async loadPage(url: string, options: { render: boolean }): Promise<PageOutline> {
    const page = await this.load(url, options.render);
    const a = page.analysis;
    const candidates: CandidateSummary[] = a.candidates.slice(0, 10).map((c) => ({ selector: c.selector, count: c.count, sample: c.sample.slice(0, 120), score: Math.round(c.score * 1000) / 1000 }));
    const pager = findPager(a.$, page.url);
    const more = findLoadMore(a.$);
    const pagination = [
      ...(pager ? [pager.type === 'url' ? `url_pattern ${pager.urlPattern}` : `click ${pager.selector}`] : []),
      ...(more ? [`load more: click ${more.selector}`] : []),
    ];
    return { url: page.url, status: page.status, rendered: page.rendered, title: a.title, outline: outline(a), candidates, pagination };
  }

  async testSelector(selector: string, options: { within?: string; attribute?: string } = {}): Promise<SelectorTest> {
    const page = this.page;
    if (!page) return { selector, count: 0, samples: [], error: 'no page is loaded: call load_page first' };
    const $ = page.analysis.$;
    try {
      let els: Element[];
      if (options.within) {
        els = ($(options.within).toArray().filter(isTag) as Element[]).flatMap((it) => $(it).find(selector).toArray().filter(isTag).slice(0, 1) as Element[]);
      } else {
        els = $(selector).toArray().filter(isTag) as Element[];
      }
      const samples = els.slice(0, 8).map((el) => (options.attribute ? el.attribs[options.attribute] ?? '' : visibleText(el)).slice(0, 160));
      return { selector, count: els.length, samples };
    } catch (err) {
      return { selector, count: 0, samples: [], error: (err as Error).message };
    }
  }

  async listRequests(): Promise<CapturedRequest[]> {
    return (this.page?.captured ?? []).slice(0, 20).map((c) => ({ url: c.url, method: c.method, status: c.status, sample: c.sample.slice(0, 600), ...(c.requestBody ? { request_body: c.requestBody.slice(0, 600) } : {}) }));
  }

  async runConfig(yaml: string): Promise<ConfigTrial> {
    let config: ScrapeConfig;
    try {
      config = parseConfig(yaml);
    } catch (err) {
      if (isCodedError(err)) return { ok: false, problems: err.details as ConfigTrial['problems'], rowCount: 0, rows: [], pagesScraped: 0, warnings: [] };
      throw err;
    }
    try {
      const t = await this.trial(config);
      return { ok: t.rows.length > 0, rowCount: t.rows.length, rows: t.rows.slice(0, 5), pagesScraped: t.pagesScraped, warnings: t.warnings.slice(0, 10) };
    } catch (err) {
      if (isCodedError(err)) return { ok: false, error: { code: err.code, message: err.message }, rowCount: 0, rows: [], pagesScraped: 0, warnings: [] };
      throw err;
    }
  }

  /**
   * Runs a config for a trial: its first pages (listing pages and detail pages within a small budget) and
   * a bounded number of rows, with the engine `auto` would choose.
   * @throws CodedError as a run's first page would fail (`target_failed`, `browser_required`, …).
   */
  async trial(config: ScrapeConfig): Promise<TrialRun> {
    const maxPages = this.o.trialMaxPages ?? TRIAL_LIMITS.pages;
    const maxItems = this.o.trialMaxItems ?? TRIAL_LIMITS.rows;
    const bounded: ScrapeConfig = {
      ...config,
      ...(config.pagination ? { pagination: { ...config.pagination, max_pages: Math.min(config.pagination.max_pages, maxPages) } } : {}),
      ...(config.categories ? { categories: { ...config.categories, max_categories: Math.min(config.categories.max_categories, 2), wait_after: Math.min(config.categories.wait_after, 200) } } : {}),
      output: { ...config.output, limit: Math.min(config.output.limit ?? maxItems, config.detail_fields ? Math.min(maxItems, 8) : maxItems) },
    };
    const budget = this.o.trialPageBudget ?? 12;
    // The run's own way to run a config (engine/engines.ts): the trial loads pages as the real run will.
    const { result } = await runConfig(bounded, {
      fetcher: this.fetcher, concurrency: 4, maxPages: budget, robots: this.robots,
      ...(this.o.browser ? { browser: this.o.browser } : {}), ...(this.o.signal ? { signal: this.o.signal } : {}),
    });
    this.lastTrial = { rows: result.rows, itemsFound: result.itemsFound, pagesScraped: result.pagesScraped, engine: result.engine, warnings: result.warnings, apiDiscovered: result.apiDiscovered };
    return this.lastTrial;
  }

  /**
   * Sends one API request over HTTP (the generation's fetcher: the outbound guard, robots.txt, its size and time
   * limits) and parses its answer as JSON.
   * @throws CodedError `robots_disallowed`, the fetcher's codes, `target_failed` for a 4xx/5xx answer, `api_not_json`
   *   for an answer that is not JSON.
   */
  async fetchJson(r: { url: string; method: 'GET' | 'POST'; body?: string; headers: Record<string, string> }): Promise<unknown> {
    const refusal = await this.robots.check(r.url, this.o.signal);
    if (refusal) throw new RobotsDisallowedError(refusal);
    const page = await this.fetcher.fetch(r.url, { method: r.method, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}), ...(this.o.signal ? { signal: this.o.signal } : {}) });
    if (page.status >= 400) throw new CodedError('target_failed', `${r.url} answered HTTP ${page.status}`, [{ url: r.url, status: page.status }]);
    try {
      return JSON.parse(page.text) as unknown;
    } catch {
      throw new CodedError('api_not_json', `${r.url} did not answer JSON (${page.contentType || 'no content type'})`, [{ url: r.url }]);
    }
  }

  /** Releases the browser context and, when made here, the HTTP client. */
  async close(): Promise<void> {
    await this.browserSession?.close().catch(() => undefined);
    await this.browserLoader?.close().catch(() => undefined);
    this.browserSession = null;
    this.browserLoader = null;
    if (this.ownsFetcher) await this.fetcher.close();
  }
}

/**
 * A compact outline of a page for the agent: the body's elements with tag, id and stable classes, their own
 * short text, repeated siblings folded into one line with a count, at most {@link MAX_OUTLINE} characters.
 */
function outline(a: PageAnalysis): string {
  const $ = a.$;
  const lines: string[] = [];
  let size = 0;
  const skip = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'link', 'meta', 'br', 'hr']);
  const walk = (el: Element, depth: number) => {
    if (size > MAX_OUTLINE || depth > 14) return;
    const kids = el.children.filter((c): c is Element => isTag(c) && !skip.has(c.name));
    let i = 0;
    while (i < kids.length) {
      const k = kids[i]!;
      const sig = signature(k);
      let j = i + 1;
      while (j < kids.length && signature(kids[j]!) === sig) j++;
      const own = k.children.filter((c) => c.type === 'text').map((c) => (c as unknown as { data: string }).data).join(' ').replace(/\s+/g, ' ').trim();
      const line = `${'  '.repeat(depth)}${sig}${j - i > 1 ? ` ×${j - i}` : ''}${own ? ` "${own.slice(0, 60)}"` : ''}${k.name === 'a' && k.attribs.href ? ` href=${k.attribs.href.slice(0, 60)}` : ''}`;
      lines.push(line);
      size += line.length + 1;
      walk(k, depth + 1);
      i = j;
    }
  };
  const body = $('body')[0] as Element | undefined;
  if (body) walk(body, 0);
  const text = lines.join('\n');
  return text.length > MAX_OUTLINE ? `${text.slice(0, MAX_OUTLINE)}\n… (outline cut at ${MAX_OUTLINE} characters)` : text;
}

function signature(el: Element): string {
  const id = el.attribs.id ? `#${el.attribs.id}` : '';
  const cls = (el.attribs.class ?? '').split(/\s+/).filter(Boolean).slice(0, 3).map((c) => `.${c}`).join('');
  return `${el.name}${id}${cls}`;
}
