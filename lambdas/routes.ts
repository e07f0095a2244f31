/**
 * The route table (ARCHITECTURE.md, idea 2): the one list of the HTTP API. It drives the local router
 * (bin/local.ts), the API Gateway resources and per-route Lambdas (lib/), and the API docs. Adding an
 * endpoint is a line here plus its handler in lambdas/http/.
 *
 * Paths are SPEC.md's, with their trailing slash; `{id}` is a path parameter.
 */

type HttpMethod = 'GET' | 'POST' | 'DELETE';

export interface RouteDef {
  method: HttpMethod;
  /** SPEC.md path, e.g. `/api/v1/jobs/{id}/status/`. */
  path: string;
  /** Handler module under lambdas/, exporting `handler`. */
  handler: string;
  /** Whether the route needs `Authorization: Bearer sai_…` (checked by lambdas/authorizer). */
  auth: boolean;
  /** Whether the call starts work (counted by the rate limit and the quota). */
  startsWork: boolean;
  /** What the route's Lambda may touch (lib/ grants exactly this, nothing more). */
  access: Access;
  /**
   * The route renders pages in Chromium (the screenshot tool, the tech detector's `render`): on AWS its Lambda
   * gets the Chromium layer, x86_64 and the browser's memory; locally the service's own browser serves it.
   */
  browser?: boolean;
  summary: string;
}

/** The data a function needs: its IAM policy is built from this (least privilege). */
interface Access {
  table: 'read' | 'write';
  /** Queues it sends to. */
  queues?: readonly ('run' | 'generate')[];
  /** `read`: GetObject; `write`: PutObject; `read-write`: both (a stored object handed out by presigned URL). */
  bucket?: 'read' | 'write' | 'read-write';
  /** Reads the API-key sealing secret. */
  secret?: boolean;
}

const READ: Access = { table: 'read' };
const WRITE: Access = { table: 'write' };
/** A tool call: metering writes the account's counters; nothing else is kept. */
const TOOL: Access = { table: 'write' };

export const routes: readonly RouteDef[] = [
  { method: 'POST', path: '/api/v1/auth/login/', handler: 'http/login.ts', auth: false, startsWork: false, access: { table: 'write', secret: true }, summary: 'Exchange email and password for the API key' },
  { method: 'GET', path: '/api/v1/me/', handler: 'http/me.ts', auth: true, startsWork: false, access: READ, summary: 'Account and subscription' },
  { method: 'GET', path: '/api/v1/configs/', handler: 'http/configs-list.ts', auth: true, startsWork: false, access: READ, summary: 'List configs' },
  { method: 'POST', path: '/api/v1/configs/', handler: 'http/configs-create.ts', auth: true, startsWork: false, access: WRITE, summary: 'Create a config' },
  { method: 'GET', path: '/api/v1/configs/{id}/', handler: 'http/configs-get.ts', auth: true, startsWork: false, access: READ, summary: 'Read one config with its YAML' },
  { method: 'DELETE', path: '/api/v1/configs/{id}/', handler: 'http/configs-delete.ts', auth: true, startsWork: false, access: WRITE, summary: 'Delete a config' },
  { method: 'POST', path: '/api/v1/generate/', handler: 'http/generate.ts', auth: true, startsWork: true, access: { table: 'write', queues: ['generate'] }, summary: 'Start a generation job' },
  { method: 'POST', path: '/api/v1/run/', handler: 'http/run.ts', auth: true, startsWork: true, access: { table: 'write', queues: ['run'] }, summary: 'Start a run job' },
  { method: 'GET', path: '/api/v1/jobs/', handler: 'http/jobs-list.ts', auth: true, startsWork: false, access: READ, summary: 'List jobs' },
  { method: 'GET', path: '/api/v1/jobs/{id}/status/', handler: 'http/job-status.ts', auth: true, startsWork: false, access: { table: 'read', bucket: 'read' }, summary: 'Job status and progress' },
  { method: 'GET', path: '/api/v1/jobs/{id}/results/', handler: 'http/job-results.ts', auth: true, startsWork: false, access: { table: 'read', bucket: 'read' }, summary: 'Scraped rows' },
  { method: 'POST', path: '/api/v1/tools/seo-analyzer/', handler: 'http/tools-seo-analyzer.ts', auth: true, startsWork: true, access: TOOL, summary: 'SEO metadata, Open Graph, headings, content metrics, Lighthouse SEO audits and a score' },
  { method: 'POST', path: '/api/v1/tools/tech-detector/', handler: 'http/tools-tech-detector.ts', auth: true, startsWork: true, access: TOOL, browser: true, summary: 'Technologies, frameworks, infrastructure (Wappalyzer-format fingerprints)' },
  { method: 'POST', path: '/api/v1/tools/lead-generation/', handler: 'http/tools-lead-generation.ts', auth: true, startsWork: true, access: TOOL, summary: 'Emails, phone numbers, social links' },
  { method: 'POST', path: '/api/v1/tools/screenshot/', handler: 'http/tools-screenshot.ts', auth: true, startsWork: true, access: { table: 'write', bucket: 'read-write' }, browser: true, summary: 'Screenshot image' },
  { method: 'POST', path: '/api/v1/tools/content-extractor/', handler: 'http/tools-content-extractor.ts', auth: true, startsWork: true, access: TOOL, summary: 'Article text, metadata, images' },
  { method: 'POST', path: '/api/v1/tools/broken-link-checker/', handler: 'http/tools-broken-link-checker.ts', auth: true, startsWork: true, access: TOOL, summary: 'The links and resources of a page checked: broken URLs, redirects, time-outs' },
  { method: 'POST', path: '/api/v1/tools/dns-whois/', handler: 'http/tools-dns-whois.ts', auth: true, startsWork: true, access: TOOL, summary: 'DNS records, IP addresses and reverse names, nameservers, WHOIS (RDAP) data' },
  { method: 'POST', path: '/api/v1/tools/ssl-checker/', handler: 'http/tools-ssl-checker.ts', auth: true, startsWork: true, access: TOOL, summary: 'Certificate details and chain, expiry, TLS versions, HSTS and a grade' },
  { method: 'GET', path: '/api/v1/screenshots/{id}/', handler: 'http/screenshots-get.ts', auth: false, startsWork: false, access: { table: 'read', bucket: 'read' }, summary: 'A stored screenshot (the URL the screenshot tool gives with Accept: application/json), for an hour' },
];

/** A compiled matcher for a route path: `/api/v1/jobs/{id}/status/` -> regex with named groups. */
export function pathMatcher(path: string): RegExp {
  const body = path.replace(/\/$/, '').split('/').map((seg) => {
    const m = /^\{(\w+)\}$/.exec(seg);
    return m ? `(?<${m[1]}>[^/]+)` : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('/');
  // API Gateway treats a path with and without its trailing slash alike; so does the local router.
  return new RegExp(`^${body}/?$`);
}
