/**
 * The heavy engine: the browser renders, acts and paginates; extraction runs on the rendered page's HTML
 * through the same cheerio code as the lightweight engine (extract.ts; ARCHITECTURE.md, idea 4). Only
 * `eval` fields run inside the page, on the same items (in-page.ts).
 *
 * A run (docs/config-language.md, "The browser engine"):
 * fresh browser context -> target page (wait_selector) -> actions in order -> items of the page ->
 * pagination (click: next or load-more; scroll_infinite; url) -> categories -> detail pages -> output.
 * Images, media and fonts are not loaded unless a script (an eval field or a script action) may need them.
 * XHR/fetch JSON answers are recorded (URL, method, status, a bounded sample); when one carries the
 * items, `apiDiscovered` is true.
 */
import type { HTTPResponse, Page } from 'puppeteer-core';
import { CodedError } from '../../errors.ts';
import type { FieldSpec, ScrapeConfig } from '../config.ts';
import { absoluteUrl, categoryLinks, compileFields, documentBase, extractDetail, extractItems, loadHtml, type CategoryLink, type CompiledField, type Row } from '../extract.ts';
import { finalizeRows } from '../output.ts';
import type { RunProgress } from '../run.ts';
import type { BrowserHost, JobContext } from './host.ts';
import {
  controlState, countItemsInPage, documentMarker, evalFieldsInPage, markDocument, runScriptInPage, scrollPage,
  type EvalField, type EvalOutcome, type ItemQuery,
} from './in-page.ts';
import { sleep } from '../../sleep.ts';

/** A recorded XHR/fetch JSON answer. */
export interface CapturedResponse {
  url: string;
  method: string;
  status: number;
  /** The first 2,000 characters of the body. */
  sample: string;
}

export interface HeavyOptions {
  host: BrowserHost;
  /** Pages loaded at once for detail pages. @default 4 */
  concurrency?: number;
  /** Navigations a run may make, all kinds together. @default 1000 */
  maxPages?: number;
  signal?: AbortSignal;
  onProgress?: (p: RunProgress) => void;
  /** Navigation time-out per page, ms. @default 30000 */
  navigationTimeoutMs?: number;
}

export interface HeavyResult {
  rows: Row[];
  pagesScraped: number;
  itemsFound: number;
  warnings: string[];
  engine: 'heavy';
  apiDiscovered: boolean;
  /** XHR/fetch JSON answers seen (at most 50 kept). */
  apiCapture: CapturedResponse[];
}

const BLOCKED_TYPES = new Set(['image', 'media', 'font']);
/** Longest wait for content the config did not name a wait for (ms). */
const IMPLICIT_WAIT_MS = 5000;
const MAX_CAPTURES = 50;
const MAX_CAPTURE_BYTES = 2 * 1024 * 1024;


function evalFieldsOf(fields: readonly FieldSpec[]): EvalField[] {
  return fields.filter((f) => f.type === 'eval').map((f) => ({ name: f.name, script: f.script!, ...(f.selector ? { selector: f.selector } : {}) }));
}

/** Strings inside a JSON value (bounded), to find the items of a page in an API's answer. */
function jsonStrings(text: string, out: Set<string>): void {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return;
  }
  const stack: unknown[] = [data];
  let seen = 0;
  while (stack.length && seen < 20_000) {
    const v = stack.pop();
    seen++;
    if (typeof v === 'string') { if (v.trim().length >= 3) out.add(v.trim()); }
    else if (typeof v === 'number') out.add(String(v));
    else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object') stack.push(...Object.values(v));
  }
}

/**
 * Runs a config in the browser.
 * @throws CodedError `target_failed` (first page 4xx/5xx or unreachable), `target_forbidden` (refused by
 *   the guard), `action_failed` (an action's selector matches nothing; the message names its index),
 *   `browser_crashed`, `page_crashed` (e.g. out of memory), or the signal's reason.
 */
export async function runHeavy(config: ScrapeConfig, o: HeavyOptions): Promise<HeavyResult> {
  const run = new HeavyRun(config, o);
  const context = await o.host.newContext({ images: run.allowImages });
  // Aborting (the job's time limit) closes the context: whatever the page was doing stops at once.
  const onAbort = () => { void context.close().catch(() => undefined); };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (o.signal?.aborted) throw o.signal.reason;
    return await run.run(context);
  } catch (err) {
    throw run.explain(err);
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    await context.close().catch(() => undefined);
  }
}

class HeavyRun {
  private readonly config: ScrapeConfig;
  private readonly o: HeavyOptions;
  private readonly fields: CompiledField[];
  private readonly detailFields: CompiledField[];
  private readonly evalFields: EvalField[];
  private readonly detailEvalFields: EvalField[];
  private readonly linkField: string | undefined;
  private readonly query: ItemQuery;
  /** True when a script may need the images' bytes (eval fields, script actions); else no page loads any. */
  readonly allowImages: boolean;
  private readonly warnings: string[] = [];
  private readonly captures: CapturedResponse[] = [];
  private readonly jsonValues = new Set<string>();
  private captureBytes = 0;
  private readonly refusedAtStart: number;
  private pagesScraped = 0;
  private navigations = 0;
  private itemsFound = 0;
  private lastProgress = 0;
  private listingPlanned = 1;
  /** True until the listing (and every category's) is done: its pages have first claim on the budget. */
  private listingOpen = true;
  private listingDone = 0;
  private crashed: CodedError | null = null;
  private currentUrl = '';
  private pool: DetailPool | null = null;

  constructor(config: ScrapeConfig, o: HeavyOptions) {
    this.config = config;
    this.o = o;
    this.fields = compileFields(config.extract.fields);
    this.detailFields = config.detail_fields ? compileFields(config.detail_fields.fields) : [];
    this.evalFields = evalFieldsOf(config.extract.fields);
    this.detailEvalFields = config.detail_fields ? evalFieldsOf(config.detail_fields.fields) : [];
    this.linkField = config.extract.fields.find((f) => f.type === 'link' && !f.multiple)?.name;
    this.query = { type: config.extract.type, ...(config.extract.container ? { container: config.extract.container } : {}) };
    // A script may measure or draw images; without scripts nothing needs their bytes.
    this.allowImages = this.evalFields.length + this.detailEvalFields.length > 0 || config.actions.some((a) => a.type === 'script');
    this.refusedAtStart = o.host.refused().length;
  }

  /** Turns low-level failures into the job's reasons. */
  explain(err: unknown): unknown {
    if (this.o.signal?.aborted) return this.o.signal.reason;
    if (this.crashed) return this.crashed;
    if (err instanceof CodedError) return err;
    const msg = (err as Error)?.message ?? String(err);
    if (/Target closed|Connection closed|Session closed|browser has disconnected|Protocol error.*(closed|detached)/i.test(msg)) {
      return new CodedError('browser_crashed', `The browser stopped during the run (${msg.split('\n')[0]}); the job failed and the next one starts a new browser`);
    }
    return err;
  }

  async run(context: JobContext): Promise<HeavyResult> {
    // Detail pages load while the listing goes on (pipelined): `concurrency` pages in all, the listing's included.
    const limit = Math.max(1, this.o.concurrency ?? 4);
    this.pool = this.detailFields.length && this.linkField ? new DetailPool((page, url) => this.detail(page, url), () => this.newPage(context), () => this.detailBudget(), limit - 1) : null;
    try {
      return await this.crawl(context, limit);
    } catch (err) {
      // Nothing of this run may go on after it: closing the context makes the pool's pages fail at once.
      if (this.pool) {
        await context.close().catch(() => undefined);
        await this.pool.stop();
      }
      throw err;
    }
  }

  /**
   * May a detail page load now? The listing has first claim on the page budget, as in the lightweight engine:
   * while it runs, its remaining planned pages stay reserved and detail pages wait for what is left.
   */
  private detailBudget(): 'yes' | 'wait' | 'no' {
    const max = this.o.maxPages ?? 1000;
    if (!this.budgetLeft()) return 'no';
    const reserve = this.listingOpen ? Math.max(1, this.listingPlanned - this.listingDone) : 0;
    return this.navigations + reserve < max ? 'yes' : 'wait';
  }

  private async crawl(context: JobContext, limit: number): Promise<HeavyResult> {
    const c = this.config;
    const page = await this.newPage(context);
    await this.navigate(page, c.target.url, true);
    await this.waitForSelector(page);
    await this.actions(page);
    const perListingPages = c.pagination ? c.pagination.max_pages : 1;
    const listings: Array<{ meta: Row; rows: Row[] }> = [];
    if (c.categories) {
      const categories = await this.discoverCategories(page);
      this.listingPlanned = Math.max(1, categories.length * perListingPages);
      for (const cat of categories) {
        if (!this.budgetLeft()) break;
        try {
          await this.navigate(page, cat.url, false);
        } catch (err) {
          if (err instanceof CodedError && err.code === 'target_forbidden') throw err;
          this.warnings.push(`category ${cat.url}: ${(err as Error).message}`);
          continue;
        }
        await sleep(c.categories.wait_after, this.o.signal);
        await this.waitForSelector(page);
        const rows = await this.listing(page);
        listings.push({ meta: { _category: cat.name, _category_url: cat.url }, rows });
      }
      if (!categories.length) this.warnings.push(`categories: no category links matched on ${c.target.url}`);
    } else {
      this.listingPlanned = perListingPages;
      listings.push({ meta: {}, rows: await this.listing(page) });
    }
    await page.close().catch(() => undefined);

    let rows: Row[] = [];
    for (const l of listings) rows.push(...(l.meta._category_url !== undefined ? l.rows.map((r) => ({ ...r, ...l.meta })) : l.rows));
    this.listingOpen = false;
    if (this.pool) rows = this.mergeDetails(rows, await this.pool.finish(limit));
    const finalRows = finalizeRows(rows, c.output);
    const refused = this.o.host.refused().slice(this.refusedAtStart);
    if (refused.length) this.warnings.push(`the outbound guard refused ${refused.length} request(s) of the page, e.g. ${refused[0]!.target}`);
    this.report('done', 99);
    return {
      rows: finalRows,
      pagesScraped: this.pagesScraped,
      itemsFound: this.itemsFound,
      warnings: this.warnings,
      engine: 'heavy',
      apiDiscovered: this.apiCarriesItems(finalRows),
      apiCapture: this.captures,
    };
  }

  private async newPage(context: JobContext): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(this.o.navigationTimeoutMs ?? 30_000);
    await page.setBypassCSP(true);
    await page.setRequestInterception(true);
    page.on('request', (req) => {
      if (req.isInterceptResolutionHandled()) return;
      const scheme = req.url().slice(0, req.url().indexOf(':'));
      if (!['http', 'https', 'data', 'blob', 'about'].includes(scheme)) {
        void req.abort('accessdenied');
        return;
      }
      if (!this.allowImages && BLOCKED_TYPES.has(req.resourceType())) {
        void req.abort('blockedbyclient');
        return;
      }
      void req.continue();
    });
    page.on('response', (res) => { void this.capture(res); });
    page.on('error', (err) => {
      this.crashed = new CodedError('page_crashed', `The page crashed at ${page.url() || this.currentUrl || this.config.target.url} (${err.message}); a page that allocates without bound ends its job, not the worker`);
      // Whatever was waiting on the dead page fails now instead of at the protocol time-out.
      void page.close().catch(() => undefined);
    });
    return page;
  }

  private async capture(res: HTTPResponse): Promise<void> {
    const req = res.request();
    const type = req.resourceType();
    if (type !== 'xhr' && type !== 'fetch') return;
    if (!/json/i.test(res.headers()['content-type'] ?? '')) return;
    if (this.captureBytes > MAX_CAPTURE_BYTES) return;
    let text: string;
    try {
      text = await res.text();
    } catch {
      return;
    }
    this.captureBytes += text.length;
    if (this.captures.length < MAX_CAPTURES) this.captures.push({ url: res.url(), method: req.method(), status: res.status(), sample: text.slice(0, 2000) });
    jsonStrings(text, this.jsonValues);
  }

  /** True when most rows have a value that an XHR/fetch JSON answer carried: the page's data API. */
  private apiCarriesItems(rows: Row[]): boolean {
    if (!rows.length || !this.jsonValues.size) return false;
    const hits = rows.filter((r) => Object.values(r).some((v) => (typeof v === 'string' || typeof v === 'number') && String(v).trim().length >= 3 && this.jsonValues.has(String(v).trim())));
    return hits.length / rows.length >= 0.5;
  }

  private budgetLeft(): boolean {
    const max = this.o.maxPages ?? 1000;
    if (this.navigations < max) return true;
    if (!this.warnings.some((w) => w.startsWith('stopped at the page limit'))) this.warnings.push(`stopped at the page limit of ${max} pages per run`);
    return false;
  }

  private guardRefusal(url: string): CodedError | null {
    const refused = this.o.host.refused().slice(this.refusedAtStart);
    let host = '';
    try { host = new URL(url).host; } catch { return null; }
    const hit = [...refused].reverse().find((r) => r.target === url || r.target.startsWith(host) || r.target.includes(`//${host}`));
    return hit ? new CodedError('target_forbidden', hit.reason, [{ url }]) : null;
  }

  /** Loads a URL in the page; a 4xx/5xx or a failed load throws (target_failed, target_forbidden). */
  private async navigate(page: Page, url: string, first: boolean): Promise<void> {
    this.o.host.guardCheck(url);
    this.navigations++;
    this.currentUrl = url;
    let status = 0;
    try {
      const res = await page.goto(url, { waitUntil: 'load', timeout: this.o.navigationTimeoutMs ?? 30_000, signal: this.o.signal } as Parameters<Page['goto']>[1]);
      status = res?.status() ?? 200;
    } catch (err) {
      if (this.crashed) throw this.crashed;
      if (this.o.signal?.aborted) throw this.o.signal.reason;
      if (!page.browser().connected) throw this.explain(new Error('Target closed: browser has disconnected'));
      const refusal = this.guardRefusal(url);
      if (refusal) throw refusal;
      throw new CodedError(first ? 'target_failed' : 'fetch_failed', `${url} could not be loaded in the browser: ${(err as Error).message.split('\n')[0]}`, [{ url }]);
    }
    if (status === 403) {
      const refusal = this.guardRefusal(url);
      if (refusal) throw refusal;
    }
    if (status >= 400) throw new CodedError('target_failed', `${url} answered HTTP ${status}`, [{ url, status }]);
    this.pagesScraped++;
  }

  /**
   * Waits for a listing page to be ready: `target.browser.wait_selector` up to `timeout` ms; without one,
   * the items themselves (`extract.container`) up to 5 s (a page rendered by script has them after load;
   * an empty page at the end of a listing should not cost the whole time-out).
   */
  private async waitForSelector(page: Page): Promise<void> {
    const explicit = this.config.target.browser.wait_selector;
    const sel = explicit ?? (this.config.extract.type !== 'single' ? this.config.extract.container : undefined);
    if (!sel) return;
    const timeout = explicit ? this.config.target.browser.timeout : Math.min(this.config.target.browser.timeout, IMPLICIT_WAIT_MS);
    try {
      await page.waitForSelector(sel, { timeout });
    } catch (err) {
      if (this.crashed) throw this.crashed;
      if (explicit) this.warnings.push(`target.browser.wait_selector "${sel}" did not appear within ${timeout} ms on ${page.url()}`);
    }
  }

  /** A detail page is ready when its first field's element is there (up to 5 s): scripts may render it after load. */
  private async waitForDetail(page: Page): Promise<void> {
    const sel = this.config.detail_fields?.fields.find((f) => f.selector && f.type !== 'eval' && f.type !== 'exists' && f.type !== 'count')?.selector;
    if (!sel) return;
    await page.waitForSelector(sel, { timeout: Math.min(this.config.target.browser.timeout, IMPLICIT_WAIT_MS) }).catch(() => {
      if (this.crashed) throw this.crashed;
    });
  }

  private async actions(page: Page): Promise<void> {
    const list = this.config.actions;
    for (let i = 0; i < list.length; i++) {
      const a = list[i]!;
      const where = `actions[${i}] (${a.type}${a.selector ? ` "${a.selector}"` : ''})`;
      const element = async () => {
        const el = await page.waitForSelector(a.selector!, { timeout: 5000 }).catch(() => null);
        if (!el) throw new CodedError('action_failed', `${where}: no element matches the selector "${a.selector}" on ${page.url()}`, [{ path: `actions[${i}].selector`, selector: a.selector }]);
        return el;
      };
      switch (a.type) {
        case 'click':
          await (await element()).click();
          break;
        case 'scroll':
          await page.evaluate(scrollPage, a.direction ?? 'down', a.amount ?? 'full');
          break;
        case 'type': {
          const el = await element();
          await el.click({ count: 3 });
          await el.type(a.value ?? '');
          break;
        }
        case 'select': {
          await element();
          const chosen = await page.select(a.selector!, a.value ?? '');
          if (!chosen.length) throw new CodedError('action_failed', `${where}: no option with the value "${a.value}"`, [{ path: `actions[${i}].value` }]);
          break;
        }
        case 'hover':
          await (await element()).hover();
          break;
        case 'keyboard':
          await page.keyboard.press(a.key as Parameters<Page['keyboard']['press']>[0]);
          break;
        case 'script':
          try {
            await page.evaluate(runScriptInPage, a.script!);
          } catch (err) {
            throw new CodedError('action_failed', `${where}: the script threw ${(err as Error).message.split('\n')[0]}`, [{ path: `actions[${i}].script` }]);
          }
          break;
      }
      // Let the page react (requests, rendering) before the next action.
      await this.settle(page, a.wait_after ?? 500);
    }
  }

  /** Waits `ms`, and for a navigation the last action or click may have started. */
  private async settle(page: Page, ms: number): Promise<void> {
    await Promise.race([sleep(ms, this.o.signal), page.waitForNavigation({ waitUntil: 'load', timeout: ms }).catch(() => undefined)]);
    if (this.crashed) throw this.crashed;
  }

  /** Items of the current document from index `start` on: cheerio on the HTML, eval fields in the page. */
  private async extract(page: Page, start = 0): Promise<Row[]> {
    const html = await page.content();
    const $ = loadHtml(html);
    const url = page.url();
    const rows = extractItems($, this.config.extract, this.fields, url, documentBase($, url, html)).slice(start);
    if (this.evalFields.length && rows.length) {
      const outcomes: EvalOutcome[][] = await page.evaluate(evalFieldsInPage, this.query, this.evalFields, start);
      this.mergeEval(rows, outcomes, this.evalFields, this.config.extract.fields);
    }
    return rows;
  }

  private mergeEval(rows: Row[], outcomes: EvalOutcome[][], evalFields: EvalField[], specs: readonly FieldSpec[]): void {
    if (outcomes.length !== rows.length) this.warnings.push(`eval fields: the page has ${outcomes.length} items where the HTML had ${rows.length}; values matched by position`);
    const compiled = evalFields.map((f) => compileFields([specs.find((s) => s.name === f.name)!])[0]!);
    rows.forEach((row, i) => evalFields.forEach((f, j) => {
      const spec = compiled[j]!.spec;
      const out = outcomes[i]?.[j];
      if (out?.ok) {
        let v = out.value;
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null) {
          for (const t of compiled[j]!.transforms) v = t(v as string | number | boolean | null);
        }
        row[f.name] = v === null || v === undefined || v === '' ? ('default' in spec ? spec.default : null) : v;
      } else {
        row[f.name] = 'default' in spec ? spec.default : null;
        const msg = `eval field "${f.name}": ${out ? out.error : 'no matching item in the page'}`;
        if (!this.warnings.includes(msg)) this.warnings.push(msg);
      }
    }));
  }

  /** One listing (the target or a category) with its pagination. */
  private async listing(page: Page): Promise<Row[]> {
    const c = this.config;
    const p = c.pagination;
    const maxItems = p?.stop_condition.max_items;
    const cap = c.output.deduplicate ? undefined : c.output.limit;
    const rows: Row[] = [];
    const add = (more: Row[]) => {
      const room = Math.min(maxItems ?? Infinity, cap ?? Infinity) - rows.length;
      const taken = more.slice(0, Math.max(0, room));
      rows.push(...taken);
      this.itemsFound += taken.length;
      this.pool?.add(taken.map((r) => r[this.linkField!]));
      this.listingDone++;
      this.report(`page ${this.listingDone}: ${taken.length} items`);
      return rows.length < Math.min(maxItems ?? Infinity, cap ?? Infinity);
    };
    let going = add(await this.extract(page));
    if (!p || !going) return rows;
    for (let step = 1; step < p.max_pages && going && this.budgetLeft(); step++) {
      if (p.type === 'url') {
        const url = absoluteUrl(p.url_pattern!.replaceAll('{page}', String(step + 1)), c.target.url);
        if (!url) break;
        try {
          await this.navigate(page, url, false);
        } catch (err) {
          if (err instanceof CodedError && err.code === 'target_forbidden') throw err;
          this.warnings.push(`listing page ${url}: ${(err as Error).message}`);
          break;
        }
        await sleep(p.wait_after, this.o.signal);
        await this.waitForSelector(page);
        const more = await this.extract(page);
        if (!more.length) break;
        going = add(more);
      } else if (p.type === 'scroll_infinite') {
        const before = await page.evaluate(countItemsInPage, this.query);
        await page.evaluate(scrollPage, 'down' as const, 'full' as const);
        if (!(await this.waitForMore(page, before, p.wait_after || 2000))) break;
        this.navigations++;
        going = add(await this.extract(page, before));
      } else {
        const state = await page.evaluate(controlState, p.selector!);
        if (state !== 'ready') break;
        const before = await page.evaluate(countItemsInPage, this.query);
        const marker = `m${step}-${Date.now()}`;
        await page.evaluate(markDocument, marker);
        this.navigations++;
        const timeout = Math.max(3000, p.wait_after);
        const navigation = page.waitForNavigation({ waitUntil: 'load', timeout }).then(() => true, () => false);
        await page.click(p.selector!).catch(() => undefined);
        const change = await this.waitForChange(page, before, marker, timeout, navigation);
        if (change === 'navigated') {
          await navigation;
          this.pagesScraped++;
          await sleep(p.wait_after, this.o.signal);
          await this.waitForSelector(page);
          going = add(await this.extract(page));
        } else if (change === 'more') {
          // Load more: new items in the same document.
          await sleep(p.wait_after, this.o.signal);
          going = add(await this.extract(page, before));
        } else {
          break; // the page stopped changing
        }
      }
    }
    return rows;
  }

  /**
   * After a click: did the page navigate (the marked document is gone), grow (more items), or neither
   * within `ms`? A navigation destroys the page's context mid-poll; that counts as navigated.
   */
  private async waitForChange(page: Page, before: number, marker: string, ms: number, navigation: Promise<boolean>): Promise<'navigated' | 'more' | 'none'> {
    let navigated = false;
    void navigation.then((v) => { navigated ||= v; });
    const end = Date.now() + ms;
    for (;;) {
      if (this.crashed) throw this.crashed;
      if (navigated) return 'navigated';
      try {
        if ((await page.evaluate(documentMarker)) !== marker) return 'navigated';
        if ((await page.evaluate(countItemsInPage, this.query)) > before) {
          await sleep(150, this.o.signal);
          return 'more';
        }
      } catch {
        return 'navigated';
      }
      if (Date.now() >= end) return 'none';
      await sleep(100, this.o.signal);
    }
  }

  /** Polls until the page has more items than `before`; false when it stopped changing within `ms`. */
  private async waitForMore(page: Page, before: number, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    for (;;) {
      if (this.crashed) throw this.crashed;
      const now = await page.evaluate(countItemsInPage, this.query);
      if (now > before) {
        // Give a batch that is still being appended a moment to finish.
        await sleep(150, this.o.signal);
        return true;
      }
      if (Date.now() >= end) return false;
      await sleep(100, this.o.signal);
    }
  }

  private async discoverCategories(page: Page): Promise<CategoryLink[]> {
    const html = await page.content();
    const $ = loadHtml(html);
    return categoryLinks($, this.config.categories!, documentBase($, page.url(), html));
  }

  /** The listing's rows with their detail page's fields (the fields' defaults where a page gave nothing). */
  private mergeDetails(rows: Row[], results: ReadonlyMap<string, Row | null>): Row[] {
    return rows.map((row) => {
      const d = results.get(row[this.linkField!] as string) ?? null;
      const merged: Row = { ...row };
      const meta = { _category: row._category, _category_url: row._category_url };
      for (const f of this.config.detail_fields!.fields) merged[f.name] = d ? d[f.name] : 'default' in f ? f.default : null;
      if (meta._category_url !== undefined) Object.assign(merged, meta);
      return merged;
    });
  }

  /** One detail page in a reused page; `pageUsable` false when the page should be replaced. */
  private async detail(page: Page, url: string): Promise<{ row: Row | null; pageUsable: boolean }> {
    try {
      await this.navigate(page, url, false);
      await this.waitForDetail(page);
      const html = await page.content();
      const $ = loadHtml(html);
      const row = extractDetail($, this.detailFields, page.url(), documentBase($, page.url(), html));
      if (this.detailEvalFields.length) {
        const outcomes = await page.evaluate(evalFieldsInPage, { type: 'single' } as ItemQuery, this.detailEvalFields, 0);
        this.mergeEval([row], outcomes, this.detailEvalFields, this.config.detail_fields!.fields);
      }
      return { row, pageUsable: true };
    } catch (err) {
      if (this.crashed || this.o.signal?.aborted) throw this.crashed ?? err;
      if (err instanceof CodedError && err.code === 'target_forbidden') throw err;
      this.warnings.push(`detail page ${url}: ${(err as Error).message.split('\n')[0]}`);
      return { row: null, pageUsable: !(err instanceof CodedError) || err.code === 'target_failed' };
    } finally {
      this.report('');
    }
  }

  private report(message: string, force?: number): void {
    if (!this.o.onProgress) return;
    const detailsPerPage = this.detailFields.length && this.listingDone ? this.itemsFound / this.listingDone : 0;
    const expected = Math.max(this.listingPlanned * (1 + detailsPerPage), this.pagesScraped, 1);
    const ratio = force ?? Math.floor((99 * this.pagesScraped) / expected);
    this.lastProgress = Math.max(this.lastProgress, Math.min(99, ratio));
    this.o.onProgress({ progress: this.lastProgress, pagesScraped: this.pagesScraped, itemsFound: this.itemsFound, message: message || `${this.pagesScraped} pages, ${this.itemsFound} items` });
  }
}

/**
 * Detail pages loaded while the listing is still paginating: each item's detail URL (its first link field) is
 * queued as its listing page is extracted, and up to `slots` pages load them, each page reused for URL after
 * URL (opening a page costs more than loading a URL). While the listing runs it holds one of the run's
 * `concurrency` pages, so the pool gets `concurrency - 1` slots; finish() gives it all of them. Each URL is
 * loaded once. A fatal error of a detail page (crash, abort, a refused target) stops the pool and is thrown by
 * add()'s next caller and by finish().
 */
class DetailPool {
  private readonly load: (page: Page, url: string) => Promise<{ row: Row | null; pageUsable: boolean }>;
  private readonly open: () => Promise<Page>;
  private readonly budget: () => 'yes' | 'wait' | 'no';
  private slots: number;
  private readonly queue: string[] = [];
  private readonly seen = new Set<string>();
  private readonly results = new Map<string, Row | null>();
  private readonly idle: Page[] = [];
  private readonly running = new Set<Promise<void>>();
  private fatal: unknown = null;
  private stopped = false;
  /** Set when the budget said 'wait' (the listing's pages are reserved): nothing starts until finish(). */
  private paused = false;

  constructor(load: DetailPool['load'], open: DetailPool['open'], budget: DetailPool['budget'], slots: number) {
    this.load = load;
    this.open = open;
    this.budget = budget;
    this.slots = slots;
  }

  /** Queues the http(s) URLs not seen yet; throws the pool's fatal error, if any, so the listing stops too. */
  add(urls: unknown[]): void {
    if (this.fatal) throw this.fatal;
    for (const u of urls) {
      if (typeof u !== 'string' || !/^https?:/.test(u) || this.seen.has(u)) continue;
      this.seen.add(u);
      this.queue.push(u);
    }
    this.pump();
  }

  /** Runs the rest with `slots` pages; resolves with every URL's row (null: no row) once all are done. */
  async finish(slots: number): Promise<ReadonlyMap<string, Row | null>> {
    this.slots = slots;
    this.paused = false;
    this.pump();
    while (this.running.size) await Promise.all(this.running);
    await this.closePages();
    if (this.fatal) throw this.fatal;
    return this.results;
  }

  /** Starts nothing more and waits for what runs (which fails fast once the job's browser context is closed). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.length = 0;
    while (this.running.size) await Promise.all(this.running);
    await this.closePages();
  }

  private pump(): void {
    while (!this.stopped && !this.fatal && !this.paused && this.running.size < this.slots && this.queue.length) {
      const task = this.worker().finally(() => {
        this.running.delete(task);
        this.pump();
      });
      this.running.add(task);
    }
  }

  /** One slot: takes URLs until the queue is empty, then gives its page back. Never rejects. */
  private async worker(): Promise<void> {
    let page: Page | null = null;
    try {
      while (!this.stopped && !this.fatal && !this.paused && this.queue.length) {
        page ??= this.idle.pop() ?? (await this.open());
        // Decided after any await and right before load(), whose navigation counts the page synchronously:
        // no two slots can both take the last page of the budget.
        const verdict = this.budget();
        if (verdict === 'wait') {
          this.paused = true;
          break;
        }
        const url = this.queue.shift();
        if (url === undefined) break;
        if (verdict === 'no') {
          this.results.set(url, null);
          continue;
        }
        const { row, pageUsable } = await this.load(page, url);
        this.results.set(url, row);
        if (!pageUsable) {
          await page.close().catch(() => undefined);
          page = null;
        }
      }
    } catch (err) {
      this.fatal ??= err;
    } finally {
      if (page) this.idle.push(page);
    }
  }

  private async closePages(): Promise<void> {
    await Promise.all(this.idle.splice(0).map((p) => p.close().catch(() => undefined)));
  }
}
