/**
 * The MCP tools (issue 27; docs/mcp.md): what an AI agent can do with the service, each tool one or more REST routes
 * run in-process as the caller (./operations.ts). Input schemas are the route table's body schemas
 * (lambdas/http/schemas.ts, the same ones docs/openapi.json publishes), plus the few MCP-only fields a tool reads
 * itself (`max_rows`, `wait_seconds`, …), which are taken out before the route sees the body.
 *
 * Results: `structuredContent` (the JSON) and the same JSON as text for clients that read only text; the screenshot
 * is an image. A refusal is a tool error (`isError: true`) whose text is the route's error body,
 * `{"error", "code", "details"}`: the same code and message as over HTTP.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import openapi from '../../docs/openapi.json' with { type: 'json' };
import { configListAnswer, configAnswer, generateBody, runBody, toolBodies, uuid, type JSONSchema } from '../http/schemas.ts';
import { TOOL_REPORTS } from '../routes.ts';
import { logger } from '../logger.ts';
import type { Invoke, Operation } from './operations.ts';

/** What a tool's call can use besides its arguments. */
export interface ToolCallContext {
  invoke: Invoke;
  /** Tells the client how far a job is (an MCP progress notification when the client asked for them), 0-100. */
  progress(progress: number, message: string): Promise<void>;
  /** The latest time a tool may stop waiting for a job (then it answers with the job still running), ms since the epoch. */
  waitUntil: number;
  /** A place among the account's job waits: the function that gives it back, or null when none is left. */
  waitSlot: () => Promise<(() => Promise<void>) | null>;
  /**
   * Aborted when the server closes: locally when the client's connection goes (the streamed answer is cancelled). A
   * `notifications/cancelled` reaches a new stateless server, not this one, and so changes nothing.
   */
  signal: AbortSignal;
}

/** An MCP tool: its listing (`tools/list`) and its call. */
export interface McpTool {
  listing: Tool;
  call(args: Record<string, unknown>, ctx: ToolCallContext): Promise<CallToolResult>;
}

/** A route's refusal, carried to the tool result unchanged. */
class RouteRefusal extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string) {
    super(body);
    this.status = status;
    this.body = body;
  }
}

/** The route's JSON answer. @throws RouteRefusal for a 4xx/5xx answer (its `{error, code, details}` body). */
async function callJson<T>(ctx: ToolCallContext, op: Operation, req: Parameters<Invoke>[1] = {}): Promise<T> {
  const res = await ctx.invoke(op, req);
  if (res.statusCode >= 400) throw new RouteRefusal(res.statusCode, res.body);
  return JSON.parse(res.body) as T;
}

/** A tool result of JSON: structured, and the same as text. */
function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** A tool error with an error body of the service's shape (docs/errors.md). */
export function toolError(body: { error: string; code: string; details?: unknown[] }): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ details: [], ...body }) }] };
}

/** Runs a tool's work, turning a route's refusal into a tool error with the route's body. */
async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof RouteRefusal) {
      let body: { error: string; code: string; details?: unknown[] };
      try {
        body = JSON.parse(err.body) as typeof body;
      } catch {
        body = { error: `HTTP ${err.status}`, code: 'internal_error' };
      }
      return toolError(body);
    }
    // A fault of the service, not of the call: a tool error the model can read, the details in the log.
    logger.error('MCP tool failed', { error: err });
    return toolError({ error: 'Internal error while running the tool; try again later', code: 'internal_error' });
  }
}

/** The arguments without the MCP-only fields: what the route's body schema judges. */
function without(args: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([k]) => !names.includes(k)));
}

/** A copy of a route's object body schema with MCP-only properties added. */
function extend(schema: JSONSchema, extra: Record<string, JSONSchema>): Tool['inputSchema'] {
  const s = schema as { properties?: Record<string, unknown> };
  return { ...schema, type: 'object', properties: { ...s.properties, ...extra } } as Tool['inputSchema'];
}

const WAIT_SECONDS: JSONSchema = {
  type: 'integer', minimum: 0, maximum: 600,
  description: 'How long to wait for the job, seconds (default and most: the deployment\'s bound, docs/mcp.md); when it is still running after that, the answer has `finished: false` and its `job_id` for get_job',
};

// ---- jobs: wait, with progress ----

interface JobStatus {
  id: string;
  status: string;
  job_type: 'run' | 'generate';
  progress: number;
  status_message: string;
  items_found: number;
  pages_scraped: number;
  results: { data: Array<Record<string, unknown>>; row_count: number };
  yaml_config: { id: string | null; yaml_content: string };
  /** A generate job made with `run: true`: its run (issue 40). */
  run_job_id?: string | null;
  run_error?: string;
}

/** How often a waiting tool reads the job's status, ms (first, then doubling up to the last). */
const POLL_MS = [250, 500, 1000, 2000] as const;

/** Jobs one account's MCP calls may wait for at once (the HTTP side keeps the count: lambdas/http/mcp.ts). */
export const MAX_WAITS = 4;

const isFinished = (s: JobStatus) => s.status === 'completed' || s.status === 'failed';

/**
 * Reads a job's status until it is finished or `until` (ms since the epoch) has passed, telling the client each
 * progress higher than the last (the protocol wants it to grow). The wait takes one of the account's places
 * ({@link ToolCallContext.waitSlot}); with none left, the status is read once.
 * @returns the last status read.
 */
async function waitForJob(ctx: ToolCallContext, jobId: string, until: number): Promise<JobStatus & { unwaited?: true }> {
  const wanted = until > Date.now();
  const release = wanted ? await ctx.waitSlot() : null;
  const end = release ? until : 0;
  let last = -1;
  try {
    for (let i = 0; ; i++) {
      const s = await callJson<JobStatus>(ctx, 'GET /api/v1/jobs/{id}/status/', { id: jobId });
      if (s.progress > last) {
        last = s.progress;
        await ctx.progress(s.progress, `${s.status}: ${s.status_message}`);
      }
      if (isFinished(s) || Date.now() >= end || ctx.signal.aborted) return wanted && !release ? { ...s, unwaited: true } : s;
      const pause = Math.min(POLL_MS[Math.min(i, POLL_MS.length - 1)]!, end - Date.now());
      await sleep(pause, undefined, { signal: ctx.signal }).catch(() => undefined);
    }
  } finally {
    await release?.();
  }
}

/** When a call's wait ends, ms since the epoch: what it asked for (`wait_seconds`), within the deployment's bound. */
function waitUntil(args: Record<string, unknown>, ctx: ToolCallContext): number {
  return typeof args.wait_seconds === 'number' ? Math.min(Date.now() + args.wait_seconds * 1000, ctx.waitUntil) : ctx.waitUntil;
}

/** The answer for a job still running when the wait ended. */
function stillRunning(s: JobStatus & { unwaited?: true }): CallToolResult {
  return jsonResult({
    finished: false, job_id: s.id, status: s.status, progress: s.progress, status_message: s.status_message,
    next: s.unwaited
      ? `Not waited for: this account's MCP calls already wait for ${MAX_WAITS} jobs; call get_job with job_id "${s.id}" when one of them has answered.`
      : `The job is still ${s.status}; call get_job with job_id "${s.id}" to wait for it.`,
  });
}

/** The answer for a failed job: a tool error with the job's message. */
function failed(s: JobStatus): CallToolResult {
  return toolError({ error: s.status_message, code: 'job_failed', details: [{ job_id: s.id }] });
}

/**
 * Most JSON of rows in one answer, characters: the answer carries them twice (structured and as text) and an SSE
 * frame escapes them again, under Lambda's 6 MB answer and within what a model reads.
 */
export const MAX_ROWS_JSON_CHARS = 1_000_000;

/**
 * Rows of a finished run from `offset`: at most `limit`, and fewer when their JSON would pass
 * {@link MAX_ROWS_JSON_CHARS} (at least one); `next_offset` is where the next page starts, null after the last row.
 */
async function rowsOf(ctx: ToolCallContext, jobId: string, offset: number, limit: number) {
  const [entry] = await callJson<Array<{ data: Array<Record<string, unknown>>; row_count: number }>>(ctx, 'GET /api/v1/jobs/{id}/results/', { id: jobId });
  return { job_id: jobId, row_count: entry?.row_count ?? 0, offset, ...pageOfRows(entry?.data ?? [], offset, limit) };
}

/**
 * A page of `data` from `offset`: at most `limit` rows, fewer when their JSON would pass `maxChars` (at least one).
 * @returns the rows, whether more follow, and where the next page starts (null after the last row).
 */
export function pageOfRows<T>(data: readonly T[], offset: number, limit: number, maxChars = MAX_ROWS_JSON_CHARS): { rows: T[]; has_more: boolean; next_offset: number | null } {
  const rows: T[] = [];
  let chars = 0;
  for (let i = offset; i < data.length && rows.length < limit; i++) {
    chars += JSON.stringify(data[i]).length + 1;
    if (rows.length > 0 && chars > maxChars) break;
    rows.push(data[i]!);
  }
  const next = offset + rows.length < data.length ? offset + rows.length : null;
  return { rows, has_more: next !== null, next_offset: next };
}

const MAX_ROWS: JSONSchema = { type: 'integer', minimum: 0, maximum: 1000, default: 50, description: 'Rows to return in the answer (default 50); get_results pages through all of them' };

/** A finished job's answer for the tool that waited for it. */
async function finishedJob(ctx: ToolCallContext, s: JobStatus, maxRows: number): Promise<CallToolResult> {
  if (s.status === 'failed') return failed(s);
  return jsonResult({ finished: true, ...(await rowsOf(ctx, s.id, 0, maxRows)), status_message: s.status_message, pages_scraped: s.pages_scraped });
}

/** What a finished generate job's answer says of its rows: a trial, and how to get all of them (issue 40). */
function trialNote(s: JobStatus): string {
  if (s.run_job_id) return `preview_rows are the trial's; the saved config is running for all the rows: call get_job with job_id "${s.run_job_id}".`;
  const why = s.run_error ? ` Its run could not start (${s.run_error}).` : '';
  return `preview_rows are a trial of the first pages only (at most 2 listing pages, 30 rows).${why} For all the rows, call run_config with config_id "${s.yaml_config.id}" (or generate_config with run: true).`;
}

/** A finished generate job's answer: the saved config, its YAML and the rows its trial extracted. */
function generated(s: JobStatus): CallToolResult {
  if (s.status === 'failed') return failed(s);
  return jsonResult({
    finished: true, job_id: s.id, config_id: s.yaml_config.id, yaml_content: s.yaml_config.yaml_content,
    preview_rows: s.results.data, row_count: s.results.row_count, status_message: s.status_message,
    ...(s.run_job_id !== undefined ? { run_job_id: s.run_job_id } : {}), ...(s.run_error ? { run_error: s.run_error } : {}),
    next: trialNote(s),
  });
}

/** A generate job with `run: true` and its finished run: the saved config and the run's first `maxRows` rows. */
async function generatedAndRun(ctx: ToolCallContext, g: JobStatus, run: JobStatus, maxRows: number): Promise<CallToolResult> {
  if (run.status === 'failed') return failed(run);
  // `job_id` stays the generate job's; the rows are the run's (`run_job_id`, which get_results pages through).
  return jsonResult({
    finished: true, ...(await rowsOf(ctx, run.id, 0, maxRows)), job_id: g.id, run_job_id: run.id, config_id: g.yaml_config.id, yaml_content: g.yaml_config.yaml_content,
    status_message: run.status_message, pages_scraped: run.pages_scraped,
  });
}

const readOnly = { readOnlyHint: true, openWorldHint: false } as const;
const metered = { readOnlyHint: false, destructiveHint: false, openWorldHint: true } as const;

const jobTools: McpTool[] = [
  {
    listing: {
      name: 'generate_config',
      title: 'Generate a scraping config',
      description: 'Writes a YAML scraping config for a page from a plain-language prompt (what to extract), tests it on the first pages and saves it to the account. '
        + 'Costs one generation (1 credit, or 1 YAML generation on scrape plans). Usually 5-60 s; waits for the job with progress notifications. '
        + 'Returns the YAML, `config_id` of the saved config and `preview_rows`: a trial of the first pages only (at most 2 listing pages, 30 rows). '
        + 'With `run: true` the saved config is then run for all the rows (one more run\'s cost; plans with server execution), and the answer has the run\'s first `max_rows` rows, `row_count` and `run_job_id` (get_results pages through the rest).',
      inputSchema: extend(generateBody, { max_rows: MAX_ROWS, wait_seconds: WAIT_SECONDS }),
      annotations: metered,
    },
    call: (args, ctx) => guarded(async () => {
      const until = waitUntil(args, ctx);
      const job = await callJson<{ id: string }>(ctx, 'POST /api/v1/generate/', { body: without(args, ['wait_seconds', 'max_rows']) });
      const s = await waitForJob(ctx, job.id, until);
      if (!isFinished(s)) return stillRunning(s);
      if (s.status === 'failed' || !s.run_job_id) return generated(s);
      const run = await waitForJob(ctx, s.run_job_id, until);
      if (!isFinished(run)) return stillRunning(run);
      return generatedAndRun(ctx, s, run, typeof args.max_rows === 'number' ? args.max_rows : 50);
    }),
  },
  {
    listing: {
      name: 'run_config',
      title: 'Run a scraping config',
      description: 'Runs a saved config (`config_id`) or YAML (`yaml_content`) as a job on the service and waits for it with progress notifications. '
        + 'Costs one run (1 credit, or 1 scrape), whatever its page count up to the plan\'s page limit. Seconds for one page, minutes for a large crawl. '
        + 'Returns the first `max_rows` rows, `row_count` and `job_id`; get_results pages through the rest.',
      inputSchema: extend(runBody, { max_rows: MAX_ROWS, wait_seconds: WAIT_SECONDS }),
      annotations: metered,
    },
    call: (args, ctx) => guarded(async () => {
      const job = await callJson<{ id: string }>(ctx, 'POST /api/v1/run/', { body: without(args, ['max_rows', 'wait_seconds']) });
      const s = await waitForJob(ctx, job.id, waitUntil(args, ctx));
      if (!isFinished(s)) return stillRunning(s);
      return finishedJob(ctx, s, typeof args.max_rows === 'number' ? args.max_rows : 50);
    }),
  },
  {
    listing: {
      name: 'get_job',
      title: 'Wait for a job',
      description: 'A job\'s state (generate or run); waits for it to finish (up to `wait_seconds`) with progress notifications. Free. '
        + 'For a finished run, the first `max_rows` rows as run_config returns them; for a finished generation, its YAML and `config_id`.',
      inputSchema: {
        type: 'object', required: ['job_id'], additionalProperties: false,
        properties: { job_id: uuid, max_rows: MAX_ROWS, wait_seconds: WAIT_SECONDS },
      },
      annotations: readOnly,
    },
    call: (args, ctx) => guarded(async () => {
      const s = await waitForJob(ctx, String(args.job_id), waitUntil(args, ctx));
      if (!isFinished(s)) return stillRunning(s);
      return s.job_type === 'generate' ? generated(s) : finishedJob(ctx, s, typeof args.max_rows === 'number' ? args.max_rows : 50);
    }),
  },
  {
    listing: {
      name: 'get_results',
      title: 'Page through a run\'s rows',
      description: 'Rows of a finished run job, `limit` (at most 1000) from `offset`. Free. `has_more` says whether rows follow.',
      inputSchema: {
        type: 'object', required: ['job_id'], additionalProperties: false,
        properties: {
          job_id: uuid,
          offset: { type: 'integer', minimum: 0, default: 0 },
          limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
        },
      },
      annotations: readOnly,
    },
    call: (args, ctx) => guarded(async () => jsonResult(await rowsOf(ctx, String(args.job_id), Number(args.offset ?? 0), Number(args.limit ?? 100)))),
  },
  {
    listing: {
      name: 'list_configs',
      title: 'List saved configs',
      description: 'The account\'s saved scraping configs (id, name, target URL, created), newest first. Free.',
      inputSchema: { type: 'object', additionalProperties: false, properties: {} },
      outputSchema: configListAnswer as unknown as Tool['outputSchema'],
      annotations: readOnly,
    },
    call: (_args, ctx) => guarded(async () => jsonResult(await callJson(ctx, 'GET /api/v1/configs/'))),
  },
  {
    listing: {
      name: 'get_config',
      title: 'Read a saved config',
      description: 'One saved config: its name, target URL, prompt and YAML (run it with run_config, or edit the YAML and pass it as `yaml_content`). Free.',
      inputSchema: { type: 'object', required: ['config_id'], additionalProperties: false, properties: { config_id: uuid } },
      outputSchema: configAnswer as unknown as Tool['outputSchema'],
      annotations: readOnly,
    },
    call: (args, ctx) => guarded(async () => jsonResult(await callJson(ctx, 'GET /api/v1/configs/{id}/', { id: String(args.config_id) }))),
  },
];

// ---- the analysis tools ----

type ToolRoute = keyof typeof toolBodies;

const components = (openapi as { components: { schemas: Record<string, JSONSchema> } }).components.schemas;

/**
 * A tool report's schema from docs/openapi.json, standalone: the components it refers to become `$defs`.
 * @throws Error when the document lacks a referenced component (docs/openapi.json is stale: run scripts/generate.ts).
 */
function reportSchema(name: string): Tool['outputSchema'] {
  const defs: Record<string, JSONSchema> = {};
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string' && x.startsWith('#/components/schemas/')) {
        const ref = x.slice('#/components/schemas/'.length);
        if (!(ref in defs)) {
          if (!components[ref]) throw new Error(`docs/openapi.json has no component ${ref}`);
          defs[ref] = {};
          defs[ref] = rewrite(components[ref]) as JSONSchema;
        }
        out.$ref = `#/$defs/${ref}`;
      } else if (k !== '$id') out[k] = rewrite(x);
    }
    return out;
  };
  const root = rewrite(components[name] ?? (() => { throw new Error(`docs/openapi.json has no component ${name}`); })()) as JSONSchema;
  return { ...root, type: 'object', ...(Object.keys(defs).length ? { $defs: defs } : {}) } as Tool['outputSchema'];
}

const TOOL_TEXT: Record<ToolRoute, { title: string; description: string }> = {
  'seo-analyzer': { title: 'SEO analysis', description: 'Title, meta description, canonical, robots, Open Graph and Twitter cards, headings, links, images, structured data, Lighthouse-style SEO audits and a score.' },
  'tech-detector': { title: 'Technology detection', description: 'Technologies, frameworks, analytics and infrastructure of a site (Wappalyzer-format fingerprints); `render: true` runs the page in Chromium first (slower).' },
  'lead-generation': { title: 'Emails, phones, social links', description: 'Email addresses, phone numbers (E.164) and social profile links on a page; `follow_contact_pages` also reads its contact and about pages.' },
  screenshot: { title: 'Screenshot', description: 'A screenshot of the page rendered in Chromium, as an image (PNG unless `format` says otherwise); viewport, full page and device options as the REST tool.' },
  'content-extractor': { title: 'Article extraction', description: 'The main article of a page: title, byline, date, text, cleaned HTML, images and metadata; `format: "markdown"` adds it as Markdown.' },
  'broken-link-checker': { title: 'Broken links', description: 'Checks the links and resources of a page (to `depth` and at most `max_links`): broken URLs, redirects and time-outs.' },
  'dns-whois': { title: 'DNS and WHOIS', description: 'DNS records, addresses and reverse names, nameservers and the domain\'s registration data (RDAP).' },
  'ssl-checker': { title: 'SSL certificate', description: 'The site\'s certificate and chain, expiry, TLS versions, HSTS and a grade.' },
};

/** The MCP name of a tool route: `seo-analyzer` → `seo_analyzer`. */
export const mcpToolName = (route: string) => route.replaceAll('-', '_');

const COST = ' Costs one tool call (0.1 credit, or free within the tool\'s rate limit on scrape plans); a few seconds, at most 25 s.';

const analysisTools: McpTool[] = (Object.keys(toolBodies) as ToolRoute[]).map((name) => {
  const op = `POST /api/v1/tools/${name}/` as Operation;
  const listing: Tool = {
    name: mcpToolName(name),
    title: TOOL_TEXT[name].title,
    description: TOOL_TEXT[name].description + COST,
    inputSchema: toolBodies[name] as Tool['inputSchema'],
    ...(name === 'screenshot' ? {} : { outputSchema: reportSchema(TOOL_REPORTS[name]) }),
    annotations: { readOnlyHint: true, openWorldHint: true },
  };
  if (name === 'screenshot') {
    return {
      listing,
      call: (args, ctx) => guarded(async () => {
        const res = await ctx.invoke(op, { body: args, headers: { accept: 'image/*' } });
        if (res.statusCode >= 400) throw new RouteRefusal(res.statusCode, res.body);
        return { content: [{ type: 'image', data: res.body, mimeType: contentType(res) }] };
      }),
    };
  }
  return { listing, call: (args, ctx) => guarded(async () => jsonResult(await callJson(ctx, op, { body: args }))) };
});

function contentType(res: APIGatewayProxyResult): string {
  const h = Object.entries(res.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type');
  return String(h?.[1] ?? 'image/png').split(';')[0]!.trim();
}

// ---- scrape_page ----

const scrapePage: McpTool = {
  listing: {
    name: 'scrape_page',
    title: 'Read a page',
    description: 'The main content of one page (the article or main text, without navigation, ads or scripts) as Markdown (default), plain text or cleaned HTML, with its title. '
      + 'The same extraction as the content extractor tool.' + COST,
    inputSchema: {
      type: 'object', required: ['url'], additionalProperties: false,
      properties: {
        url: (toolBodies['content-extractor'] as { properties: { url: JSONSchema } }).properties.url,
        format: { type: 'string', enum: ['markdown', 'text', 'html'], default: 'markdown' },
      },
    },
    outputSchema: {
      type: 'object', required: ['url', 'format', 'title', 'content'],
      properties: { url: { type: 'string' }, format: { type: 'string' }, title: { type: ['string', 'null'] }, byline: { type: ['string', 'null'] }, published_time: { type: ['string', 'null'] }, content: { type: 'string' }, word_count: { type: 'integer' } },
    },
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  call: (args, ctx) => guarded(async () => {
    const format = args.format === 'text' || args.format === 'html' ? args.format : 'markdown';
    const report = await callJson<{ title: string | null; byline: string | null; published_time: string | null; text: string; html: string; markdown?: string; word_count: number }>(
      ctx, 'POST /api/v1/tools/content-extractor/', { body: { url: args.url, ...(format === 'markdown' ? { format: 'markdown' } : {}) } },
    );
    const content = format === 'markdown' ? report.markdown ?? '' : format === 'html' ? report.html : report.text;
    return jsonResult({ url: String(args.url), format, title: report.title, byline: report.byline, published_time: report.published_time, content, word_count: report.word_count });
  }),
};

/** Every MCP tool, in the order `tools/list` gives them. */
export const mcpTools: readonly McpTool[] = [...jobTools, scrapePage, ...analysisTools];
