/**
 * The config generator without an LLM (docs/generate.md): it loads the page (over HTTP, and in a browser when
 * the served HTML lacks the content), finds the repeated record structures (./analyze.ts), picks the one that
 * fits the prompt, infers and names the fields (./fields.ts), finds the pagination, categories and detail
 * fields the prompt asks for (./navigation.ts), writes the YAML config, and runs it for a trial. A config
 * whose trial finds nothing is never the answer: the next candidate is tried, and when none works the
 * generation fails, saying what it tried.
 *
 * **Example usage:**
 * ```ts
 * const result = await generateHeuristic({ url: 'https://books.toscrape.com/', prompt: 'titles and prices from every page' },
 *   { outbound: { allow: [] }, onProgress: (p) => console.log(p.step, p.message) });
 * console.log(result.yaml);
 * ```
 */
import { parseConfig } from '../engine/config.ts';
import type { FieldSpec, ScrapeConfig } from '../engine/config.ts';
import type { CapturedResponse } from '../engine/loaders/page-loader.ts';
import { draftApiConfig, rowsAgree } from './api-draft.ts';
import type { Row } from '../engine/extract.ts';
import { CodedError, isCodedError } from '../errors.ts';
import type { RecordCandidate } from './analyze.ts';
import { findColumns, nameColumns, recordLayout } from './fields.ts';
import { uniqueName } from './naming.ts';
import type { GenerateProgress, GenerateRequest, GenerationResult, TrialRun } from './generator.ts';
import { MAX_EXAMPLE_URLS } from '../core/generate-jobs.ts';
import { findCategories, findDetailFields, findLoadMore, findPager, nextPageUrl } from './navigation.ts';
import { readPrompt, type PromptIntent } from './prompt.ts';
import { filledShare as filled, writeConfigYaml } from './suggest.ts';
import { isChanging, isFurniture, repeatsThePage, templateEvidence, templateFactor } from './template.ts';
import { Workbench, type LoadedPage, type WorkbenchOptions } from './workbench.ts';

/** Options of {@link generateHeuristic}: the workbench's (guard, fetcher, browser, trial bounds) and progress. */
export interface HeuristicOptions extends WorkbenchOptions {
  onProgress?: (p: GenerateProgress) => void;
  /** A workbench to use (the agent's, to share its pages); made here and closed after when absent. */
  workbench?: Workbench;
  /**
   * false: write a config that reads the page even when its items come from a JSON API the generator could read
   * (./api-draft.ts). @default true: the API config is written when its trial gives the page's rows.
   */
  readApi?: boolean;
}

/** Candidates tried at most before the generation gives up. */
const MAX_ATTEMPTS = 4;
/** Listing pages a generated config reads when the prompt asks for every page. */
const ALL_PAGES = 50;

/** A config as the generator builds it, before it is written as YAML. */
interface Draft {
  version: '2.0';
  name: string;
  description: string;
  target: { url: string; engine: 'auto'; browser?: { wait_selector: string; timeout: number } };
  extract: { container: string; type: 'list'; following_siblings?: number; fields: FieldSpec[] };
  detail_fields?: { fields: FieldSpec[] };
  pagination?: Record<string, unknown>;
  categories?: Record<string, unknown>;
}

/** Whether the served HTML looks like an empty shell that scripts fill in. */
function looksLikeShell(page: LoadedPage): boolean {
  const best = page.analysis.candidates[0];
  if (!best || best.count < 3 || best.score < 0.15) return true;
  if (page.analysis.textLength < 300) return true;
  return /enable javascript|requires javascript|javascript is (disabled|required)|<div id="(root|app|__next)">\s*<\/div>/i.test(page.html);
}

/** How much a candidate fits the prompt: its classes or texts name the items or the asked fields. */
function promptFit(c: RecordCandidate, intent: PromptIntent): number {
  const names = `${c.selector} ${c.items[0]?.attribs.class ?? ''}`.toLowerCase();
  let fit = 1;
  if (intent.itemNoun && names.includes(intent.itemNoun.slice(0, Math.max(4, intent.itemNoun.length - 1)))) fit *= 1.6;
  for (const f of intent.fields) if (f.name.length > 3 && names.includes(f.name)) fit *= 1.1;
  return fit;
}

/** A name for the config from the prompt (first words) and the site. */
function configName(request: GenerateRequest): string {
  let host = '';
  try {
    host = new URL(request.url).hostname.replace(/^www\./, '');
  } catch {
    // a bad URL is refused before this
  }
  const words = request.prompt.replace(/\s+/g, ' ').trim();
  const short = words.length > 60 ? `${words.slice(0, 57).replace(/\s+\S*$/, '')}…` : words;
  return (short ? `${short[0]!.toUpperCase()}${short.slice(1)}` : 'Generated config') + (host ? ` (${host})` : '');
}

/**
 * Generates a config from a URL and a prompt without an LLM.
 * @returns the config (YAML and parsed), its trial run (at least one row), whether an API carried the items.
 * @throws CodedError for a target that cannot be loaded (`target_forbidden`, `dns_failed`, `fetch_failed`,
 *   `target_failed`), and `generation_failed` when no candidate's trial finds items (the message says what
 *   was tried).
 */
export async function generateHeuristic(request: GenerateRequest, options: HeuristicOptions = {}): Promise<GenerationResult> {
  const bench = options.workbench ?? new Workbench(options);
  const progress = (step: GenerateProgress['step'], value: number, message: string) => options.onProgress?.({ step, progress: value, message });
  const notes: string[] = [];
  try {
    progress('analyzing', 5, `loading ${request.url}`);
    let page = await bench.load(request.url, false);
    if (looksLikeShell(page) && bench.canRender) {
      progress('analyzing', 15, 'the page as served has little repeated content; rendering it in a browser');
      const served = page;
      try {
        const rendered = await bench.load(request.url, true);
        const a = served.analysis.candidates[0]?.score ?? 0;
        const b = rendered.analysis.candidates[0]?.score ?? 0;
        page = b >= a ? rendered : served;
        notes.push(page.rendered ? `rendered the page in a browser: its items are drawn by scripts${page.analysis.hasLayout ? '; its blocks were weighed by their boxes on the page (size, alignment, the main column)' : ''}` : 'rendered the page, but the served HTML had more');
      } catch (err) {
        if (!isCodedError(err)) throw err;
        notes.push(`rendering failed (${err.message}); used the page as served`);
      }
    }
    const candidates = page.analysis.candidates;
    if (!candidates.length) {
      throw new CodedError('generation_failed', `Found no repeated blocks of content on ${page.url}${page.rendered ? ' (rendered in a browser)' : ''}: nothing looks like a list of items`);
    }
    const top = candidates[0]!;
    notes.push(`found ${candidates.length} repeated block(s); the best has ${top.count} items (${top.selector})`);
    progress('analyzing', 30, `found ${candidates.length} repeated block(s); the best has ${top.count} items`);

    const intent = readPrompt(request.prompt);
    const others = await loadOtherPages(request, page, bench, notes);
    if (others.length) progress('analyzing', 35, `compared the page with ${others.length} other page(s) of its template`);
    const ranks = candidates.slice(0, 8);
    // A page showing this page's items again tells nothing of records versus furniture; the config is still tried on it.
    const telling = others.filter((o) => {
      const again = repeatsThePage(ranks, o.analysis.$);
      if (again) notes.push(`${o.url} shows the same items as the page: not used to tell the records from the template`);
      return !again;
    });
    const evidence = ranks.map((c) => templateEvidence(c, telling.map((o) => o.analysis.$)));
    const dataChanges = evidence.some((e, i) => isChanging(e, ranks[i]!.count));
    const scored = ranks.map((c, i) => ({ c, evidence: evidence[i]!, s: c.score * promptFit(c, intent) * templateFactor(evidence[i]!, dataChanges) }));
    if (telling.length) {
      const furniture = scored.filter((x) => isFurniture(x.evidence)).map((x) => x.c.selector);
      notes.push(`compared with ${telling.length} other page(s) of the template: ${telling.map((o) => o.url).join(', ')}${furniture.length ? ` (the same items there, so template furniture: ${furniture.slice(0, 4).join(', ')})` : ''}`);
    }
    const ranked = scored.sort((x, y) => y.s - x.s).map((x) => x.c);
    const tried: string[] = [];
    /** A config whose rows came from the first page only: the answer when no candidate does better. */
    let fallback: GenerationResult | null = null;
    for (const candidate of ranked.slice(0, MAX_ATTEMPTS)) {
      progress('generating', 40, `building a config for the ${candidate.count} items of ${candidate.selector}`);
      const draft = await buildDraft(request, intent, candidate, page, bench, notes);
      if (!draft) {
        tried.push(`${candidate.selector} (${candidate.count} items): no fields found`);
        continue;
      }
      const yaml = writeConfigYaml(draft);
      const config = parseConfig(yaml);
      progress('validating', 60, `trying the config on the first page${config.pagination ? 's' : ''}`);
      let trial: TrialRun;
      try {
        trial = await bench.trial(config);
      } catch (err) {
        if (!isCodedError(err) || ['target_forbidden', 'dns_failed'].includes(err.code)) throw err;
        tried.push(`${candidate.selector}: the trial failed (${err.code}: ${err.message})`);
        continue;
      }
      const named = config.extract.fields.filter((f) => f.type !== 'link' && f.type !== 'image_url');
      const mainFilled = named.length ? Math.max(...named.map((f) => filled(trial.rows, f.name))) : 1;
      if (!trial.rows.length || mainFilled < 0.5) {
        tried.push(`${candidate.selector}: the trial found ${trial.rows.length} row(s)${trial.rows.length ? ' with empty fields' : ''}`);
        continue;
      }
      progress('validating', 90, `the config found ${trial.rows.length} item(s) on ${trial.pagesScraped} page(s)`);
      notes.push(`the trial run found ${trial.rows.length} item(s) on ${trial.pagesScraped} page(s) (${trial.engine} engine)`);
      if (others.length) {
        const counts = await trialOnOthers(config, others, bench);
        notes.push(`tried on ${counts.length} other page(s) of the template: ${counts.map((n) => (n === null ? 'failed' : `${n} row(s)`)).join(', ')}`);
        if (counts.some((n) => n === 0) && counts.every((n) => !n)) {
          tried.push(`${candidate.selector}: rows on this page only, none on the template's other pages`);
          fallback ??= { yaml, config, trial, apiDiscovered: trial.apiDiscovered, generator: 'heuristic', notes: [...notes] };
          continue;
        }
      }
      const capture = apiCapture(page, trial);
      const endpoint = capture?.url ?? null;
      if (capture && options.readApi !== false) {
        progress('validating', 92, `the items come from the JSON API ${capture.url}: trying a config that reads it`);
        const viaApi = await apiConfig(draft, capture, trial, bench, notes);
        if (viaApi) return { ...viaApi, apiDiscovered: true, apiEndpoint: capture.url, generator: 'heuristic', notes };
      } else if (endpoint) {
        notes.push(`the items come from the JSON API ${endpoint}`);
      }
      return { yaml, config, trial, apiDiscovered: trial.apiDiscovered || !!endpoint, ...(endpoint ? { apiEndpoint: endpoint } : {}), generator: 'heuristic', notes };
    }
    if (fallback) {
      fallback.notes.push(`no block gave rows on the template's other pages: the config reads the block that gave rows here. Tried: ${tried.join('; ')}`);
      return fallback;
    }
    throw new CodedError('generation_failed', `No config found items on ${page.url}. Tried: ${tried.join('; ')}`, tried.map((t) => ({ tried: t })));
  } finally {
    if (!options.workbench) await bench.close();
  }
}

/**
 * The other pages of the page's template that the generator reads: the request's `exampleUrls` and the listing's
 * next page, loaded as the page was (rendered when it was). A page that cannot be loaded is noted and left out.
 * The workbench looks at the first page again afterwards.
 */
async function loadOtherPages(request: GenerateRequest, page: LoadedPage, bench: Workbench, notes: string[]): Promise<LoadedPage[]> {
  const strip = (u: string) => u.replace(/#.*$/, '');
  const seen = new Set([strip(request.url), strip(page.url)]);
  const urls: string[] = [];
  for (const u of [...(request.exampleUrls ?? []).slice(0, MAX_EXAMPLE_URLS), nextPageUrl(page.analysis.$, page.url)]) {
    if (u && !seen.has(strip(u))) {
      seen.add(strip(u));
      urls.push(u);
    }
  }
  const loaded: LoadedPage[] = [];
  try {
    for (const url of urls) {
      try {
        const other = await bench.load(url, page.rendered);
        // A page that redirects to the first one is not another page.
        if (strip(other.url) !== strip(page.url)) loaded.push(other);
      } catch (err) {
        if (!isCodedError(err)) throw err;
        notes.push(`could not read ${url} as another page of the template (${err.code}: ${err.message})`);
      }
    }
  } finally {
    bench.page = page;
  }
  return loaded;
}

/** Rows a config's first page gives on each other page (null: its trial failed), read as that page's own config. */
async function trialOnOthers(config: ScrapeConfig, others: LoadedPage[], bench: Workbench): Promise<(number | null)[]> {
  const counts: (number | null)[] = [];
  const firstTrial = bench.lastTrial;
  const { pagination: _p, categories: _c, detail_fields: _d, ...rest } = config;
  for (const other of others) {
    try {
      const t = await bench.trial({ ...rest, target: { ...config.target, url: other.url } } as ScrapeConfig);
      counts.push(t.rows.length);
    } catch (err) {
      if (!isCodedError(err)) throw err;
      counts.push(null);
    }
  }
  bench.lastTrial = firstTrial;
  return counts;
}

/** The config for one candidate, or null when its items have no usable fields. */
async function buildDraft(request: GenerateRequest, intent: PromptIntent, candidate: RecordCandidate, page: LoadedPage, bench: Workbench, notes: string[]): Promise<Draft | null> {
  const { $ } = page.analysis;
  const columns = findColumns($, candidate.items, page.url, recordLayout(candidate));
  let { fields, missing } = nameColumns(columns, intent.fields, { everyColumn: intent.everyColumn });
  if (!fields.length) return null;
  const draft: Draft = {
    version: '2.0',
    name: configName(request),
    description: `Generated from the prompt: ${request.prompt.replace(/\s+/g, ' ').trim().slice(0, 300)}`,
    target: { url: request.url, engine: 'auto', ...(page.rendered ? { browser: { wait_selector: candidate.selector, timeout: 15000 } } : {}) },
    extract: { container: candidate.selector, type: 'list', ...(candidate.span ? { following_siblings: candidate.span } : {}), fields },
  };

  // Fields the listing lacks, on each item's own page.
  const link = columns.find((c) => c.spec.type === 'link' && c.presence >= 0.8);
  if ((missing.length || intent.detailPage) && link) {
    const asked = missing.length ? missing : [];
    if (asked.length) {
      const detailUrl = link.samples[0];
      try {
        const detail = await bench.load(detailUrl!, page.rendered);
        const found = findDetailFields(detail.analysis.$, asked);
        if (found.fields.length) {
          draft.detail_fields = { fields: found.fields };
          if (!fields.some((f) => f.type === 'link')) fields = [...fields, { ...link.spec, name: uniqueName(['url', 'detail_url', 'link'], new Set(fields.map((f) => f.name))) } as FieldSpec];
          draft.extract.fields = fields;
          notes.push(`on each item's own page: ${found.fields.map((f) => f.name).join(', ')}`);
        }
        missing = found.missing;
      } catch (err) {
        if (!isCodedError(err)) throw err;
        notes.push(`could not read an item's own page (${err.message})`);
      } finally {
        // The tools look at the listing again.
        bench.page = page;
      }
    }
  }
  if (missing.length) notes.push(`not found on the page: ${missing.map((m) => m.words).join(', ')}`);

  if (intent.allPages) {
    const pager = findPager($, page.url);
    if (pager?.type === 'click') {
      draft.pagination = { type: 'click', selector: pager.selector, max_pages: ALL_PAGES };
      notes.push(`pagination: ${pager.how}`);
    } else if (pager?.type === 'url') {
      draft.pagination = { type: 'url', url_pattern: pager.urlPattern, max_pages: ALL_PAGES };
      notes.push(`pagination: ${pager.how}`);
    } else if (page.rendered) {
      const more = findLoadMore($);
      if (more) {
        draft.pagination = { type: 'click', selector: more.selector, max_pages: ALL_PAGES, wait_after: 1000 };
        notes.push(`pagination: ${more.how}`);
      } else if (await bench.scrollGrows(candidate.selector)) {
        draft.pagination = { type: 'scroll_infinite', max_pages: ALL_PAGES, wait_after: 1000 };
        notes.push('pagination: the page loads more items when scrolled to the bottom');
      }
    }
    if (!draft.pagination) notes.push('no pagination found: the config reads the first page');
  }
  if (intent.allCategories) {
    const cats = findCategories($, page.url, candidate.selector);
    if (cats) {
      draft.categories = { container: cats.container, link_selector: 'a' };
      notes.push(`categories: ${cats.how}`);
    } else {
      notes.push('no category links found');
    }
  }
  return draft;
}

/**
 * The config that reads the JSON API the page drew its items from (./api-draft.ts), when its trial gives the HTML
 * config's rows; null (a note says why) otherwise. docs/generate.md, "Reading the site's JSON API".
 */
async function apiConfig(html: Draft, capture: CapturedResponse, htmlTrial: TrialRun, bench: Workbench, notes: string[]): Promise<{ yaml: string; config: ScrapeConfig; trial: TrialRun } | null> {
  const keepPage = (why: string) => {
    notes.push(`the items come from the JSON API ${capture.url}, but ${why}: the config reads the page`);
    return null;
  };
  // Categories are links of the page: a config that reads the API has no page to find them on.
  if (html.categories) return keepPage('the config reads the categories linked from the page');
  let answer: unknown;
  try {
    answer = await bench.fetchJson({ url: capture.url, method: capture.method === 'POST' ? 'POST' : 'GET', ...(capture.requestBody ? { body: capture.requestBody } : {}), headers: { Accept: 'application/json', ...(capture.method === 'POST' ? { 'Content-Type': 'application/json' } : {}) } });
  } catch (err) {
    if (!isCodedError(err)) throw err;
    return keepPage(`asking it again failed (${err.code}: ${err.message})`);
  }
  const api = await draftApiConfig(capture, answer, htmlTrial.rows, html.extract.fields, { paginate: !!html.pagination, probe: (r) => bench.fetchJson(r) });
  if (!api) return keepPage('no list in its answer gives every field of the page\'s rows');
  const { browser: _browser, ...target } = html.target;
  const draft = {
    version: html.version, name: html.name, description: html.description,
    target: { ...target, api: api.api },
    extract: { ...(api.records ? { records: api.records } : {}), fields: api.fields },
    // Each record's own page is read as from an HTML record: its first link field.
    ...(html.detail_fields ? { detail_fields: html.detail_fields } : {}),
    ...(api.pagination ? { pagination: { ...api.pagination, max_pages: Number(html.pagination?.max_pages ?? ALL_PAGES) } } : {}),
  };
  const yaml = writeConfigYaml(draft);
  let config: ScrapeConfig;
  let trial: TrialRun;
  try {
    config = parseConfig(yaml);
    trial = await bench.trial(config);
  } catch (err) {
    if (!isCodedError(err)) throw err;
    return keepPage(`a config reading it failed its trial (${err.code}: ${err.message})`);
  }
  if (!rowsAgree(trial.rows, htmlTrial.rows, api.fields.map((f) => f.name))) return keepPage(`the rows it gave (${trial.rows.length}) are not the page's`);
  notes.push(`the config reads the site's JSON API instead of the page (${api.how}): its trial gave the page's rows over plain HTTP, no browser needed`);
  return { yaml, config, trial };
}

/** The captured JSON request whose answer holds the first rows' texts, when the page was rendered. */
function apiCapture(page: LoadedPage, trial: TrialRun): CapturedResponse | null {
  if (!page.rendered || !page.captured.length) return null;
  const values = trial.rows.slice(0, 5).flatMap((r) => Object.values(r).filter((v): v is string => typeof v === 'string' && v.length >= 8 && !/^https?:/.test(v)));
  if (!values.length) return null;
  let best: { capture: CapturedResponse; hits: number } | null = null;
  for (const c of page.captured) {
    const sample = c.sample.toLowerCase();
    const hits = values.filter((v) => sample.includes(v.toLowerCase().slice(0, 40).replace(/["\\]/g, ''))).length;
    if (hits && (!best || hits > best.hits)) best = { capture: c, hits };
  }
  return best && best.hits >= Math.min(2, values.length) ? best.capture : null;
}
