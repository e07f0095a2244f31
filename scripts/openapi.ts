/**
 * The OpenAPI 3.1 document of the HTTP API (docs/openapi.json, also served at GET /api/v1/openapi.json), built
 * from the route table (lambdas/routes.ts: paths, auth, bodies, answers, error codes, query parameters), the tools'
 * answer schemas (lambdas/tools/*.ts) and the closed list of error codes (lambdas/errors.ts).
 * Spec: https://spec.openapis.org/oas/v3.1.0 (Schema Objects are JSON Schema 2020-12).
 */
import { ERROR_CODES, type ErrorCode, type ErrorCodeSpec } from '../lambdas/errors.ts';
import { routes, TOOL_REPORTS, type RouteDef } from '../lambdas/routes.ts';
import { errorBody, type JSONSchema } from '../lambdas/http/schemas.ts';
import { seoReportSchema } from '../lambdas/tools/seo/index.ts';
import { techReportSchema } from '../lambdas/tools/tech/index.ts';
import { leadsReportSchema } from '../lambdas/tools/leads/index.ts';
import { contentReportSchema } from '../lambdas/tools/content.ts';
import { linksReportSchema } from '../lambdas/tools/links.ts';
import { dnsWhoisReportSchema } from '../lambdas/tools/dns-whois.ts';
import { sslReportSchema } from '../lambdas/tools/ssl.ts';

/** The tools' answer schemas by their name in `components.schemas` (routes.ts `TOOL_REPORTS`). */
const TOOL_REPORT_SCHEMAS: Readonly<Record<(typeof TOOL_REPORTS)[keyof typeof TOOL_REPORTS], JSONSchema>> = {
  SeoReport: seoReportSchema,
  TechReport: techReportSchema,
  LeadsReport: leadsReportSchema,
  ContentReport: contentReportSchema,
  LinksReport: linksReportSchema,
  DnsWhoisReport: dnsWhoisReportSchema,
  SslReport: sslReportSchema,
};

/** Error codes with an HTTP status, in list order. */
export const HTTP_ERROR_CODES: readonly ErrorCode[] = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => 'status' in ERROR_CODES[c]);

/**
 * Codes the HTTP server itself answers on any path, before a route's handler runs (lambdas/adapters/local/http-server.ts
 * and API Gateway): malformed HTTP, time-outs, no such route or method.
 */
const SERVER_CODES: readonly ErrorCode[] = ['not_found', 'method_not_allowed', 'bad_http_request', 'request_timeout', 'expectation_failed', 'headers_too_large', 'method_not_implemented'];

function status(code: ErrorCode): number {
  return (ERROR_CODES[code] as ErrorCodeSpec).status!;
}

/** A schema without the keywords OpenAPI documents should not carry inside components (`$id`, `$schema`). */
function component(schema: JSONSchema): JSONSchema {
  const { $id: _id, $schema: _schema, ...rest } = schema;
  return rest;
}

/** `/api/v1/jobs/{id}/status/` → `jobs_id_status` (a stable, unique operationId with the method). */
function operationId(r: RouteDef): string {
  const words = r.path.replace(/^\/api\/v1\//, '').split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [r.method.toLowerCase(), ...words].join('_');
}

/** The error answers of a route, one per status, each listing its codes (schema enum and description). */
function errorResponses(r: RouteDef): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(r.errors)) byStatus.set(status(code), [...(byStatus.get(status(code)) ?? []), code]);
  const out: Record<string, unknown> = {};
  for (const [st, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(st)] = {
      description: codes.map((c) => `\`${c}\`: ${(ERROR_CODES[c] as ErrorCodeSpec).description}`).join('; '),
      ...(st === 429 || codes.includes('service_busy') ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer', minimum: 0 } } } } : {}),
      content: {
        'application/json': {
          schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', properties: { code: { enum: codes } } }] },
        },
      },
    };
  }
  return out;
}

function operation(r: RouteDef): Record<string, unknown> {
  const params: unknown[] = [];
  if (r.path.includes('{id}')) params.push({ name: 'id', in: 'path', required: true, description: r.path.startsWith('/api/v1/screenshots/') ? 'The stored screenshot id' : 'UUID', schema: { type: 'string' } });
  for (const q of r.query ?? []) params.push({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema });
  const responses: Record<string, unknown> = {};
  for (const [st, res] of Object.entries(r.responses)) {
    const content: Record<string, unknown> = {};
    if (res.schema) content['application/json'] = { schema: res.schema };
    for (const [type, schema] of Object.entries(res.content ?? {})) content[type] = { schema };
    responses[st] = { description: res.description, ...(Object.keys(content).length ? { content } : {}) };
  }
  Object.assign(responses, errorResponses(r));
  return {
    operationId: operationId(r),
    summary: r.summary,
    tags: [r.path.startsWith('/api/v1/tools/') ? 'tools' : r.path === '/mcp' ? 'mcp' : r.path.split('/')[3]],
    security: r.auth ? [{ apiKey: [] }] : [],
    ...(params.length ? { parameters: params } : {}),
    ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } } : {}),
    responses,
    ...(r.startsWork ? { 'x-metered': true } : {}),
  };
}

/** The whole document. */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r);
  return {
    openapi: '3.1.0',
    info: {
      title: 'scrape-ai',
      version: '1.0.0',
      description: 'Web scraping and website analysis: YAML scraping configs run as jobs, and site tools. Errors answer `{error, code, details}` '
        + '(docs/errors.md). Any path can also answer the HTTP server\'s own errors: '
        + SERVER_CODES.map((c) => `\`${c}\` (${status(c)})`).join(', ') + '. Operations marked `x-metered` count against the rate limit and the quota.',
    },
    servers: [{ url: '/', description: 'The service this document is served by (locally http://127.0.0.1:8787)' }],
    security: [{ apiKey: [] }],
    tags: [
      { name: 'auth' }, { name: 'me' }, { name: 'configs' }, { name: 'generate' }, { name: 'run' }, { name: 'jobs' }, { name: 'tools' }, { name: 'screenshots' }, { name: 'openapi.json' },
      { name: 'mcp', description: 'The Model Context Protocol server for AI agents (docs/mcp.md)' },
    ],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'The API key, `sai_` and 40 letters and digits, from POST /api/v1/auth/login/: `Authorization: Bearer sai_…`' },
      },
      schemas: {
        Error: { ...errorBody, properties: { ...errorBody.properties, code: { ...errorBody.properties.code, enum: HTTP_ERROR_CODES } } },
        ...Object.fromEntries(Object.entries(TOOL_REPORT_SCHEMAS).map(([name, s]) => [name, component(s)])),
      },
    },
  };
}
