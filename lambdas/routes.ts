/**
 * The route table (docs/architecture.md, idea 2): the one list of the HTTP API. It drives the local router
 * (bin/local.ts), the API Gateway resources and per-route Lambdas (lib/), and the API docs. Adding an
 * endpoint is a line here plus its handler in lambdas/http/.
 *
 * Paths are docs/spec.md's, with their trailing slash; `{id}` is a path parameter.
 */

import type { ErrorCode } from './errors.ts';
import {
  configAnswer, configCreateBody, configListAnswer, configValidAnswer, configYamlBody, generateBody, jobChangesAnswer, jobCreatedAnswer, jobListAnswer, jobResultsAnswer, jobRowsAnswer,
  jobStatusAnswer, loginAnswer, loginBody, meAnswer, runBody, scheduleAnswer, scheduleCreateBody, scheduleListAnswer, scheduleUpdateBody, screenshotStoredAnswer, toolBodies,
  webhookAnswer, webhookCreateBody, webhookCreatedAnswer, webhookDeliveriesAnswer, webhookListAnswer, type JSONSchema,
} from './http/schemas.ts';

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One answer of a route besides its errors: JSON with a schema, or a file of a media type. */
interface ResponseDef {
  description: string;
  /** JSON Schema of the JSON body (`application/json`). */
  schema?: JSONSchema;
  /** Other media types the same status can answer with (an image, a CSV file), with their body schema. */
  content?: Record<string, JSONSchema>;
}

/** A query parameter (OpenAPI `in: query`). */
interface QueryParam {
  name: string;
  description: string;
  schema: JSONSchema;
}

export interface RouteDef {
  method: HttpMethod;
  /** docs/spec.md path, e.g. `/api/v1/jobs/{id}/status/`. */
  path: string;
  /** Handler module under lambdas/, exporting `handler`. */
  handler: string;
  /**
   * Whether the route needs `Authorization: Bearer sai_…` (checked by lambdas/authorizer on API Gateway and by
   * the local router; lambdas/http/middleware.ts then loads the account).
   */
  auth: boolean;
  /**
   * Whether the call starts metered work (counted by the rate limit and the quota): docs/openapi.json marks its
   * operation `x-metered: true`, and test/unit/openapi.test.ts checks that exactly these handlers meter.
   */
  startsWork: boolean;
  /** What the route's Lambda may touch (lib/ grants exactly this, nothing more). */
  access: Access;
  /**
   * The route renders pages in Chromium (the screenshot tool, the tech detector's `render`): on AWS its Lambda
   * gets the Chromium layer, x86_64 and the browser's memory; locally the service's own browser serves it.
   */
  browser?: boolean;
  summary: string;
  /** JSON Schema the JSON body is validated with (lambdas/http/middleware.ts); routes without one ignore the body. */
  body?: JSONSchema;
  /** Query parameters the handler reads. */
  query?: readonly QueryParam[];
  /** The answers other than errors, by HTTP status. */
  responses: Readonly<Record<number, ResponseDef>>;
  /** The error codes (lambdas/errors.ts) the route can answer with, besides the HTTP server's own (docs/errors.md). */
  errors: readonly ErrorCode[];
}

/** What the data a function needs: its IAM policy is built from this (least privilege). */
interface Access {
  table: 'read' | 'write';
  /** Queues it sends to (`webhook`: a job it ends tells the account's webhooks, core/webhooks.ts). */
  queues?: readonly ('run' | 'generate' | 'webhook')[];
  /** `read`: GetObject; `write`: PutObject; `read-write`: both (a stored object handed out by presigned URL). */
  bucket?: 'read' | 'write' | 'read-write';
  /** Reads the API-key sealing secret. */
  secret?: boolean;
  /** Creates, changes and deletes the stage's EventBridge Scheduler schedules (issue 26), passing the scheduler's role. */
  scheduler?: boolean;
}

const READ: Access = { table: 'read' };
const WRITE: Access = { table: 'write' };
/** A tool call: metering writes the account's counters; nothing else is kept. */
const TOOL: Access = { table: 'write' };

/**
 * Names of the tools' answer schemas in docs/openapi.json (`components.schemas`). The schemas live with their tool
 * (e.g. `techReportSchema` of lambdas/tools/tech.ts, which loads megabytes of fingerprints): the route table names
 * them by reference so that a handler's bundle does not hold every tool; scripts/openapi.ts resolves the names.
 */
export const TOOL_REPORTS = {
  'seo-analyzer': 'SeoReport',
  'tech-detector': 'TechReport',
  'lead-generation': 'LeadsReport',
  'content-extractor': 'ContentReport',
  'broken-link-checker': 'LinksReport',
  'dns-whois': 'DnsWhoisReport',
  'ssl-checker': 'SslReport',
} as const;

/** A `$ref` to a component schema of docs/openapi.json. */
function ref(name: string): JSONSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** Codes every keyed route can answer with (the key, the plan). */
const KEYED: readonly ErrorCode[] = ['unauthorized', 'internal_error'];
/** Codes of a keyed route with a JSON body (parsing, validation, the bad-request throttle). */
const WITH_BODY: readonly ErrorCode[] = [...KEYED, 'invalid_request', 'invalid_json', 'payload_too_large', 'rate_limited'];
/** Codes of metered work on a target URL. */
const METERED: readonly ErrorCode[] = [...WITH_BODY, 'invalid_url', 'target_forbidden', 'plan_required', 'plan_unknown', 'quota_exceeded'];
/** A tool's codes; all but the screenshot tool's work in a tool worker (lambdas/core/tool-pool.ts: its limits, its queue). */
const TOOL_ERRORS: readonly ErrorCode[] = [...METERED, 'target_unreachable', 'analysis_limit_exceeded', 'service_busy'];

/** A tool's codes when it renders the page in Chromium: the page crashed, the browser went, the page never settled. */
const BROWSER_TOOL_ERRORS: readonly ErrorCode[] = ['page_crashed', 'browser_crashed', 'page_unsettled', 'render_timeout', 'page_load_timeout'];
/** The tools that read the target page: a bot-protection page instead of it is 422 `blocked` (net/blocks.ts). */
const PAGE_TOOL_ERRORS: readonly ErrorCode[] = [...TOOL_ERRORS, 'blocked'];

/** A tool's route: POST, metered, `{url, …}` in, its report out. */
function tool(name: keyof typeof toolBodies, summary: string, extra: Partial<RouteDef> = {}): RouteDef {
  return {
    method: 'POST', path: `/api/v1/tools/${name}/`, handler: `http/tools-${name}.ts`, auth: true, startsWork: true, access: TOOL, summary,
    body: toolBodies[name], responses: name === 'screenshot' ? {} : { 200: { description: 'The report', schema: ref(TOOL_REPORTS[name]) } }, errors: TOOL_ERRORS, ...extra,
  };
}

const ID_404: readonly ErrorCode[] = [...KEYED, 'not_found'];

const restRoutes: readonly RouteDef[] = [
  {
    method: 'POST', path: '/api/v1/auth/login/', handler: 'http/login.ts', auth: false, startsWork: false, access: { table: 'write', secret: true }, summary: 'Exchange email and password for the API key',
    body: loginBody, responses: { 200: { description: 'The API key', schema: loginAnswer } },
    errors: ['invalid_request', 'invalid_json', 'payload_too_large', 'invalid_credentials', 'rate_limited', 'internal_error'],
  },
  { method: 'GET', path: '/api/v1/me/', handler: 'http/me.ts', auth: true, startsWork: false, access: READ, summary: 'Account and subscription', responses: { 200: { description: 'The account and its subscription', schema: meAnswer } }, errors: KEYED },
  { method: 'GET', path: '/api/v1/configs/', handler: 'http/configs-list.ts', auth: true, startsWork: false, access: READ, summary: 'List configs', responses: { 200: { description: 'The configs, newest first', schema: configListAnswer } }, errors: KEYED },
  {
    method: 'POST', path: '/api/v1/configs/', handler: 'http/configs-create.ts', auth: true, startsWork: false, access: WRITE, summary: 'Create a config',
    body: configCreateBody, responses: { 201: { description: 'The stored config', schema: configAnswer } }, errors: [...WITH_BODY, 'invalid_config', 'service_busy'],
  },
  { method: 'GET', path: '/api/v1/configs/{id}/', handler: 'http/configs-get.ts', auth: true, startsWork: false, access: READ, summary: 'Read one config with its YAML', responses: { 200: { description: 'The config', schema: configAnswer } }, errors: ID_404 },
  {
    method: 'PUT', path: '/api/v1/configs/{id}/', handler: 'http/configs-update.ts', auth: true, startsWork: false, access: WRITE, summary: "Replace a config's YAML (not in docs/spec.md)",
    body: configYamlBody, responses: { 200: { description: 'The updated config', schema: configAnswer } }, errors: [...WITH_BODY, 'not_found', 'invalid_config', 'service_busy'],
  },
  {
    method: 'POST', path: '/api/v1/configs/validate/', handler: 'http/configs-validate.ts', auth: true, startsWork: false, access: READ, summary: 'Validate config YAML without storing it (not in docs/spec.md)',
    body: configYamlBody, responses: { 200: { description: 'The config is valid', schema: configValidAnswer } }, errors: [...WITH_BODY, 'invalid_config', 'service_busy'],
  },
  { method: 'DELETE', path: '/api/v1/configs/{id}/', handler: 'http/configs-delete.ts', auth: true, startsWork: false, access: { table: 'write', scheduler: true }, summary: 'Delete a config (and its schedules)', responses: { 204: { description: 'Deleted' } }, errors: ID_404 },
  {
    method: 'POST', path: '/api/v1/generate/', handler: 'http/generate.ts', auth: true, startsWork: true, access: { table: 'write', queues: ['generate', 'webhook'] }, summary: 'Start a generation job',
    body: generateBody, responses: { 202: { description: 'The pending job; poll its status', schema: jobCreatedAnswer } }, errors: [...METERED, 'queue_unavailable'],
  },
  {
    method: 'POST', path: '/api/v1/run/', handler: 'http/run.ts', auth: true, startsWork: true, access: { table: 'write', queues: ['run', 'webhook'] }, summary: 'Start a run job',
    body: runBody, responses: { 202: { description: 'The pending job; poll its status', schema: jobCreatedAnswer } },
    errors: [...METERED, 'not_found', 'invalid_config', 'browser_required', 'service_busy', 'queue_unavailable'],
  },
  {
    method: 'GET', path: '/api/v1/jobs/', handler: 'http/jobs-list.ts', auth: true, startsWork: false, access: READ, summary: 'List jobs',
    query: [
      { name: 'limit', description: 'Jobs per page', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
      { name: 'cursor', description: "The previous page's `next_cursor`", schema: { type: 'string' } },
    ],
    responses: { 200: { description: 'A page of jobs, newest first; `next_cursor` is null on the last page', schema: jobListAnswer } },
    errors: [...KEYED, 'invalid_request', 'invalid_cursor'],
  },
  { method: 'GET', path: '/api/v1/jobs/{id}/status/', handler: 'http/job-status.ts', auth: true, startsWork: false, access: { table: 'read', bucket: 'read' }, summary: 'Job status and progress', responses: { 200: { description: 'The job with a preview of its rows', schema: jobStatusAnswer } }, errors: ID_404 },
  {
    method: 'GET', path: '/api/v1/jobs/{id}/changes/', handler: 'http/job-changes.ts', auth: true, startsWork: false, access: { table: 'read', bucket: 'read' },
    summary: "What a completed run of a saved config changed since the config's previous completed run (not in docs/spec.md; docs/monitoring.md)",
    query: [
      { name: 'change', description: 'Only changes of this kind', schema: { type: 'string', enum: ['added', 'removed', 'changed'] } },
      { name: 'offset', description: 'Changes to skip (added first, then removed, then changed)', schema: { type: 'integer', minimum: 0, default: 0 } },
      { name: 'limit', description: 'Changes to return', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
    ],
    responses: { 200: { description: 'The counts and a page of the changes; `compared_with` is null when there was nothing to compare with', schema: jobChangesAnswer } },
    errors: [...ID_404, 'invalid_request', 'job_not_finished'],
  },
  {
    // The table is written for the account's exports at once (core/exports.ts: a counter).
    method: 'GET', path: '/api/v1/jobs/{id}/results/', handler: 'http/job-results.ts', auth: true, startsWork: false, access: { table: 'write', bucket: 'read' }, summary: 'Scraped rows',
    query: [
      { name: 'format', description: 'Answer the rows as a file (docs/exports.md): `json` (the rows alone), `csv` or `xlsx` (attachments)', schema: { type: 'string', enum: ['json', 'csv', 'xlsx'] } },
      { name: 'raw', description: "CSV: `1` writes text cells exactly as scraped; by default a cell a spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a CR and is not a plain number) gets a `'` in front (docs/exports.md)", schema: { type: 'string', enum: ['0', '1'], default: '0' } },
      { name: 'lists', description: 'CSV and XLSX: how a list (a `multiple: true` field) is written: `json`, its JSON text (`["a","b"]`, lossless; the default), or `join`, its items joined with `list_separator` (docs/exports.md, "Lists"); JSON and the answer without `format` keep lists as lists', schema: { type: 'string', enum: ['json', 'join'], default: 'json' } },
      { name: 'list_separator', description: 'With `lists=join` only: what goes between a list\'s items, 1 to 10 characters; default `; ` (a semicolon and a space)', schema: { type: 'string', minLength: 1, maxLength: 10, default: '; ' } },
    ],
    responses: {
      200: {
        description: 'Without `format`: `[{data, row_count}]` (`[]` for a failed job); with it, the file',
        schema: { anyOf: [jobResultsAnswer, jobRowsAnswer] },
        content: { 'text/csv': { type: 'string' }, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { type: 'string', contentMediaType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' } },
      },
    },
    errors: [...ID_404, 'invalid_request', 'job_not_finished', 'rate_limited', 'service_busy'],
  },
  { method: 'GET', path: '/api/v1/schedules/', handler: 'http/schedules-list.ts', auth: true, startsWork: false, access: READ, summary: "The account's schedules (not in docs/spec.md; docs/monitoring.md)", responses: { 200: { description: 'The schedules, newest first', schema: scheduleListAnswer } }, errors: KEYED },
  {
    method: 'POST', path: '/api/v1/schedules/', handler: 'http/schedules-create.ts', auth: true, startsWork: false, access: { table: 'write', scheduler: true },
    summary: 'Run a saved config on a cron schedule (not in docs/spec.md; docs/monitoring.md)', body: scheduleCreateBody,
    responses: { 201: { description: 'The schedule, with its next run', schema: scheduleAnswer } }, errors: [...WITH_BODY, 'not_found', 'plan_required', 'plan_unknown'],
  },
  { method: 'GET', path: '/api/v1/schedules/{id}/', handler: 'http/schedules-get.ts', auth: true, startsWork: false, access: READ, summary: 'One schedule, with its next run and the jobs it started', responses: { 200: { description: 'The schedule', schema: scheduleAnswer } }, errors: ID_404 },
  {
    method: 'PUT', path: '/api/v1/schedules/{id}/', handler: 'http/schedules-update.ts', auth: true, startsWork: false, access: { table: 'write', scheduler: true },
    summary: "Change a schedule's cron, time zone or enabled (enabling a paused schedule resumes it)", body: scheduleUpdateBody,
    responses: { 200: { description: 'The changed schedule', schema: scheduleAnswer } }, errors: [...WITH_BODY, 'not_found', 'plan_required', 'plan_unknown'],
  },
  { method: 'DELETE', path: '/api/v1/schedules/{id}/', handler: 'http/schedules-delete.ts', auth: true, startsWork: false, access: { table: 'write', scheduler: true }, summary: 'Delete a schedule', responses: { 204: { description: 'Deleted' } }, errors: ID_404 },
  { method: 'GET', path: '/api/v1/webhooks/', handler: 'http/webhooks-list.ts', auth: true, startsWork: false, access: READ, summary: "The account's webhooks (not in docs/spec.md; docs/monitoring.md)", responses: { 200: { description: 'The webhooks, newest first', schema: webhookListAnswer } }, errors: KEYED },
  {
    method: 'POST', path: '/api/v1/webhooks/', handler: 'http/webhooks-create.ts', auth: true, startsWork: false, access: { table: 'write', secret: true },
    summary: 'Be told when jobs end: signed POSTs (Standard Webhooks) to a URL (not in docs/spec.md; docs/monitoring.md)', body: webhookCreateBody,
    responses: { 201: { description: 'The webhook and its signing secret, shown only here', schema: webhookCreatedAnswer } }, errors: [...WITH_BODY, 'invalid_url', 'target_forbidden'],
  },
  { method: 'GET', path: '/api/v1/webhooks/{id}/', handler: 'http/webhooks-get.ts', auth: true, startsWork: false, access: READ, summary: 'One webhook', responses: { 200: { description: 'The webhook', schema: webhookAnswer } }, errors: ID_404 },
  { method: 'DELETE', path: '/api/v1/webhooks/{id}/', handler: 'http/webhooks-delete.ts', auth: true, startsWork: false, access: WRITE, summary: 'Delete a webhook (messages queued for it are dropped)', responses: { 204: { description: 'Deleted' } }, errors: ID_404 },
  {
    method: 'GET', path: '/api/v1/webhooks/{id}/deliveries/', handler: 'http/webhooks-deliveries.ts', auth: true, startsWork: false, access: READ, summary: "A webhook's delivery attempts, newest first",
    query: [{ name: 'limit', description: 'Attempts to return', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } }],
    responses: { 200: { description: 'Attempts, newest first: time, status code, duration, error, and what follows', schema: webhookDeliveriesAnswer } }, errors: [...ID_404, 'invalid_request'],
  },
  tool('seo-analyzer', 'SEO metadata, Open Graph, headings, content metrics, Lighthouse SEO audits and a score', { errors: PAGE_TOOL_ERRORS }),
  tool('tech-detector', 'Technologies, frameworks, infrastructure (Wappalyzer-format fingerprints)', { browser: true, errors: [...PAGE_TOOL_ERRORS, ...BROWSER_TOOL_ERRORS] }),
  tool('lead-generation', 'Emails, phone numbers, social links', { errors: PAGE_TOOL_ERRORS }),
  tool('screenshot', 'Screenshot image', {
    access: { table: 'write', bucket: 'read-write' }, browser: true, errors: [...PAGE_TOOL_ERRORS, ...BROWSER_TOOL_ERRORS],
    responses: {
      200: {
        description: 'The image; with `Accept: application/json`, where the stored image is for an hour',
        schema: screenshotStoredAnswer,
        content: { 'image/png': { type: 'string', contentMediaType: 'image/png' }, 'image/jpeg': { type: 'string', contentMediaType: 'image/jpeg' }, 'image/webp': { type: 'string', contentMediaType: 'image/webp' } },
      },
    },
  }),
  tool('content-extractor', 'Article text, metadata, images', { errors: PAGE_TOOL_ERRORS }),
  tool('broken-link-checker', 'The links and resources of a page checked: broken URLs, redirects, time-outs', { errors: PAGE_TOOL_ERRORS }),
  tool('dns-whois', 'DNS records, IP addresses and reverse names, nameservers, WHOIS (RDAP) data'),
  tool('ssl-checker', 'Certificate details and chain, expiry, TLS versions, HSTS and a grade'),
  {
    method: 'GET', path: '/api/v1/screenshots/{id}/', handler: 'http/screenshots-get.ts', auth: false, startsWork: false, access: { table: 'read', bucket: 'read' }, summary: 'A stored screenshot (the URL the screenshot tool gives with Accept: application/json), for an hour',
    responses: { 200: { description: 'The image', content: { 'image/png': { type: 'string', contentMediaType: 'image/png' }, 'image/jpeg': { type: 'string', contentMediaType: 'image/jpeg' }, 'image/webp': { type: 'string', contentMediaType: 'image/webp' } } } },
    errors: ['not_found', 'internal_error'],
  },
  {
    method: 'GET', path: '/api/v1/openapi.json', handler: 'http/openapi.ts', auth: false, startsWork: false, access: READ, summary: 'This API as an OpenAPI 3.1 document',
    responses: { 200: { description: 'docs/openapi.json', schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } } } } }, errors: ['internal_error'],
  },
];

/**
 * The REST routes the MCP server calls in-process (lambdas/mcp/: each MCP tool is one of these routes' handlers run
 * with the caller's key, so validation, throttles, metering and errors are the route's own), as `METHOD path`.
 */
export const MCP_OPERATIONS = [
  'GET /api/v1/configs/', 'GET /api/v1/configs/{id}/', 'POST /api/v1/generate/', 'POST /api/v1/run/', 'GET /api/v1/jobs/{id}/status/', 'GET /api/v1/jobs/{id}/results/',
  ...(Object.keys(toolBodies) as Array<keyof typeof toolBodies>).map((name) => `POST /api/v1/tools/${name}/`),
] as const;

/** What a function that runs every one of `defs` needs: the union of their access. */
function unionAccess(defs: readonly RouteDef[]): Access {
  const queues = [...new Set(defs.flatMap((d) => d.access.queues ?? []))];
  const reads = defs.some((d) => d.access.bucket === 'read' || d.access.bucket === 'read-write');
  const writes = defs.some((d) => d.access.bucket === 'write' || d.access.bucket === 'read-write');
  return {
    table: defs.some((d) => d.access.table === 'write') ? 'write' : 'read',
    ...(queues.length ? { queues } : {}),
    ...(reads || writes ? { bucket: reads && writes ? 'read-write' : reads ? 'read' : 'write' } : {}),
    ...(defs.some((d) => d.access.secret) ? { secret: true } : {}),
    ...(defs.some((d) => d.access.scheduler) ? { scheduler: true } : {}),
  };
}

/**
 * POST /mcp (issue 27; docs/mcp.md): the Model Context Protocol's Streamable HTTP transport, stateless, with the same
 * key as every route. Not under /api/v1/ (MCP clients are given the endpoint's URL as it is). Its Lambda renders pages
 * (the screenshot tool) and may touch what the routes of {@link MCP_OPERATIONS} may, together.
 */
function mcpRoute(rest: readonly RouteDef[]): RouteDef {
  const used = MCP_OPERATIONS.map((op) => {
    const r = rest.find((x) => `${x.method} ${x.path}` === op);
    if (!r) throw new Error(`MCP_OPERATIONS names ${op}, which is not a route`);
    return r;
  });
  return {
    method: 'POST', path: '/mcp', handler: 'http/mcp.ts', auth: true, startsWork: false, access: unionAccess(used), browser: true,
    summary: 'Model Context Protocol (Streamable HTTP, stateless): the service as tools for AI agents (docs/mcp.md)',
    responses: {
      200: { description: 'The JSON-RPC answer, as an SSE stream (`text/event-stream`: progress notifications, then the answer)', content: { 'text/event-stream': { type: 'string' } } },
      202: { description: 'A notification or response was accepted' },
    },
    errors: [...KEYED, 'payload_too_large', 'invalid_request', 'invalid_json', 'not_acceptable', 'unsupported_media_type'],
  };
}

export const routes: readonly RouteDef[] = [...restRoutes, mcpRoute(restRoutes)];

/**
 * The route of a method and path of {@link routes}, for its handler (`apiHandler(route('POST', '/api/v1/run/'), …)`).
 * @throws Error when the table has no such route (a programming error, caught by the type-check of every handler's test).
 */
export function route(method: HttpMethod, path: string): RouteDef {
  const r = routes.find((x) => x.method === method && x.path === path);
  if (!r) throw new Error(`No route ${method} ${path} in lambdas/routes.ts`);
  return r;
}

/** A compiled matcher for a route path: `/api/v1/jobs/{id}/status/` -> regex with named groups. */
export function pathMatcher(path: string): RegExp {
  const body = path.replace(/\/$/, '').split('/').map((seg) => {
    const m = /^\{(\w+)\}$/.exec(seg);
    return m ? `(?<${m[1]}>[^/]+)` : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('/');
  // API Gateway treats a path with and without its trailing slash alike; so does the local router.
  return new RegExp(`^${body}/?$`);
}
