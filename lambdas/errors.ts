/**
 * The one error type that crosses layers, and the closed list of its machine codes.
 *
 * Every failure a caller can act on carries a code of {@link ERROR_CODES} and optional details. The
 * list says, per code, the HTTP status it answers with (when it is an HTTP answer at all), where it can
 * arise and what it means; `STATUS_BY_CODE` in lambdas/http/middleware.ts and docs/errors.md
 * (`node scripts/generate.ts`) are derived from it, so a code exists in one place. The engine, the guard
 * and the domain only throw.
 *
 * Body on the wire (docs/architecture.md, "Errors"): `{"error": message, "code": code, "details": details}`;
 * in a failed job's status_message: `<code>: <message>`.
 */

/**
 * Where a code can reach a person or a program:
 * - `http`: an API answer `{error, code, details}` with the code's status;
 * - `job`: a failed job's status_message, `<code>: <text>`;
 * - `cli`: the accounts CLI (`npm run accounts`) prints it;
 * - `fetcher`: thrown by the fetcher (lambdas/net/fetch.ts) to its callers, which report it in their
 *   own terms; never shown as is.
 */
type ErrorPlace = 'http' | 'job' | 'cli' | 'fetcher';

/** One entry of {@link ERROR_CODES}. */
export interface ErrorCodeSpec {
  /** HTTP status of the API answer; present exactly when `where` has `http`. */
  readonly status?: number;
  readonly where: readonly ErrorPlace[];
  /** When the code arises, for people (one sentence, Markdown). */
  readonly description: string;
  /** Shape of `details` when it is not empty, e.g. `[{path, message}]`. */
  readonly details?: string;
}

/**
 * The closed list of error codes (docs/architecture.md, "Errors"). Statuses are docs/spec.md's ("Errors"): 400 bad
 * request data, 401 bad key or login, 404 no such resource, 429 rate limit or quota, 500 server error;
 * 403, 405, 408, 409, 413, 417, 422, 431, 501 and 503 where docs/spec.md is silent (docs/decisions.md).
 */
export const ERROR_CODES = {
  invalid_request: {
    status: 400, where: ['http', 'cli'],
    description: 'A body field is missing, of the wrong type or unknown; both or neither of config_id and yaml_content; a bad `limit`; in the accounts CLI a bad email, a short password or an unknown plan',
    details: '`[{path, message}]`, at most 10 (the message counts the rest)',
  },
  invalid_json: { status: 400, where: ['http'], description: 'The body is not JSON (the message names a non-JSON Content-Type)' },
  invalid_config: {
    status: 400, where: ['http', 'job'],
    description: 'yaml_content is not a valid config; in a job: the stored YAML no longer validates',
    details: '`[{path, line, column, message}]`, at most 50',
  },
  invalid_url: { status: 400, where: ['http'], description: 'A URL that does not parse', details: '`[{url}]`' },
  invalid_cursor: { status: 400, where: ['http'], description: 'A `cursor` this service did not issue' },
  browser_required: {
    status: 400, where: ['http', 'job'],
    description: 'The config needs the browser engine but `engine: lightweight` runs it; in a job: a click pagination control on the first page that is not a link',
    details: '`[{path, reason}]`',
  },
  target_forbidden: {
    status: 400, where: ['http', 'job'],
    description: 'The target URL is refused by the outbound guard (scheme, private, loopback or metadata address); in a job: the target, a redirect hop or the address its name resolves to is refused',
    details: '`[{url}]`',
  },
  unauthorized: { status: 401, where: ['http'], description: 'Missing, malformed, unknown or replaced API key' },
  invalid_credentials: { status: 401, where: ['http'], description: 'Login with a wrong email or password (same answer for both)' },
  plan_required: {
    status: 403, where: ['http'],
    description: 'The plan lacks server execution (POST /run/) or API access, or the SSL checker is asked about a port other than 443 on a plan without `ssl_checker_any_port`',
    details: '`[{plan, required, plans_with_it}]`',
  },
  plan_unknown: {
    status: 403, where: ['http'],
    description: "The account's plan is not offered by this service; an operator must set a plan (`npm run accounts -- set-plan`)",
  },
  not_found: { status: 404, where: ['http', 'cli'], description: "No such route, config or job, or another account's; in the accounts CLI no account with that email" },
  method_not_allowed: { status: 405, where: ['http'], description: 'Known path, other method (the `Allow` header lists the methods)' },
  not_acceptable: { status: 406, where: ['http'], description: '`POST /mcp` without `Accept: application/json, text/event-stream` (the MCP Streamable HTTP transport answers both)' },
  unsupported_media_type: { status: 415, where: ['http'], description: '`POST /mcp` with a body that is not `Content-Type: application/json`' },
  email_taken: { where: ['cli'], description: 'An account with this email exists' },
  job_not_finished: { status: 409, where: ['http'], description: 'Results of a job that is pending or running', details: '`[{status, progress}]`' },
  payload_too_large: { status: 413, where: ['http'], description: 'A body above 1 MiB' },
  bad_http_request: { status: 400, where: ['http'], description: 'A request that is not valid HTTP/1.1 (a malformed request line, header or chunk; no `Host` header, or two); the connection is closed' },
  request_timeout: { status: 408, where: ['http'], description: 'The request did not arrive whole in time (headers within 60 s, the whole request within 5 min); the connection is closed' },
  expectation_failed: { status: 417, where: ['http'], description: 'An `Expect` header other than `100-continue`' },
  headers_too_large: { status: 431, where: ['http'], description: 'Request headers above 16 KiB in all; the connection is closed' },
  method_not_implemented: { status: 501, where: ['http'], description: 'A method the service does not know at all (CONNECT, or one outside HTTP\'s registry); the connection is closed' },
  rate_limited: {
    status: 429, where: ['http'],
    description: "The plan's hourly rate limit is spent, or a throttle on refused calls holds: too many bad requests of the account (`reason: bad_requests`) or failed logins for the email or from the address (`reason: failed_logins`); `Retry-After` header (seconds)",
    details: '`[{limit, window, retry_after_seconds, reason?}]`',
  },
  quota_exceeded: {
    status: 429, where: ['http'],
    description: "The month's credits (or scrapes) are spent",
    details: '`[{unit, remaining, limit, cost, resets_at}]`',
  },
  internal_error: {
    status: 500, where: ['http', 'job'],
    description: 'A bug; the message carries the request id (also in the `x-request-id` header), in a job the job id under which it is logged',
  },
  queue_unavailable: { status: 503, where: ['http'], description: 'The job could not be queued; nothing was charged' },
  service_busy: { status: 503, where: ['http'], description: 'The local service has too many large configs waiting to be parsed, or too many tool calls waiting for a tool worker (or none became free before the call\'s time limit: not charged); `Retry-After` header (seconds)' },
  target_failed: {
    where: ['job'],
    description: 'The first page answered 4xx or 5xx (after retries), is not HTML, or could not be fetched (network error, time-out, too many redirects)',
    details: '`[{url, status?, content_type?}]`',
  },
  dns_failed: { where: ['job'], description: "The target's host name resolves to no address", details: '`[{host}]`' },
  response_too_large: { where: ['job', 'fetcher'], description: "The first page, or an API config's first answer, is larger than 10 MiB (after decompression)", details: '`[{url}]`' },
  api_not_json: {
    where: ['job'],
    description: "An API config's answer (target.api) is not JSON: it does not parse (the message names its content type and first characters), or it nests deeper than 100 levels. The first answer fails the run; a later one ends the listing with a warning",
    details: '`[{url, status, content_type}]`',
  },
  api_no_records: {
    where: ['job'],
    description: "`extract.records` gives no records on an API config's first answer: nothing (the path names no key of the answer), or a string, number or boolean instead of a list or an object; the message lists the answer's top-level keys. A later answer without them ends the listing with a warning",
    details: '`[{url, records, found, keys}]`',
  },
  api_query_limit: {
    where: ['job'],
    description: "A JMESPath query of an API config passed a bound on an answer: 20,000,000 steps or 10 s for the answer's queries together, an array of more than 1,000,000 elements, a string of more than 2,000,000 characters (docs/limits.md)",
    details: '`[{query, limit}]`',
  },
  action_failed: {
    where: ['job'],
    description: 'A browser action failed: no element matches its selector within 5 s, its element cannot take the browser\'s input (hidden, no size, or gone from the page), a `select` value has no option, or its script threw',
    details: '`[{path, selector?}]`',
  },
  browser_crashed: {
    status: 422, where: ['http', 'job'],
    description: 'The browser stopped while it rendered the page (in a job: during the run); the next job or call starts a new one. A tool call is not charged',
  },
  page_crashed: {
    status: 422, where: ['http', 'job'],
    description: 'A page crashed its renderer or ran out of memory (the JavaScript heap of a renderer is capped at 512 MB). A tool call is not charged',
    details: '`[{url}]`',
  },
  page_unsettled: {
    status: 422, where: ['http', 'job'],
    description: 'The page kept navigating itself (a script redirecting or reloading it) while it was being read, for longer than the 5 s a read waits for it to settle. A tool call is not charged',
    details: '`[{url, navigations?}]`',
  },
  render_timeout: {
    status: 422, where: ['http'],
    description: "The page loaded but did not finish rendering within the tool's time budget (a script kept its renderer busy, or the shot could not be taken). Not charged",
    details: '`[{url, budget_ms}]`',
  },
  page_load_timeout: {
    status: 422, where: ['http'],
    description: "The target answered, but its page did not finish loading within the tool's time (a script that never ends, a body still arriving, a resource the page's load waits for). Not charged",
    details: '`[{url, timeout_ms}]`',
  },
  job_timeout: { where: ['job'], description: 'The run passed `SAI_JOB_TIMEOUT_MS`' },
  worker_lost: { where: ['job'], description: 'Every delivery of the job died (crash, time-out, out of memory) and the queue moved it to the dead-letter queue' },
  generation_failed: {
    where: ['job'],
    description: 'A generate job found no config whose trial run returned items: the message lists each candidate tried and why it failed',
    details: '`[{tried}]`',
  },
  target_unreachable: {
    status: 422, where: ['http'],
    description: "A tool's target could not be reached: its name does not resolve, the connection is refused or reset, it timed out, TLS failed, too many redirects, or the answer is larger than the tool reads; the message says which",
    details: '`[{url, reason}]`, reason one of `dns`, `refused`, `reset`, `timeout`, `tls`, `redirects`, `too_large`, `network`',
  },
  analysis_limit_exceeded: {
    status: 422, where: ['http'],
    description: "A tool's work on the page was stopped at a limit the page made it reach: the call's time limit (25 s from the request; locally `SAI_TOOL_DEADLINE_MS`), the tool worker's memory cap (`SAI_TOOL_MEMORY_MB` locally, 512 MB by default), or nesting deeper than the analysis can follow. The call is not charged",
    details: '`[{url, limit, deadline_ms?, memory_mb?}]`, limit one of `time`, `memory`, `stack`',
  },
  robots_disallowed: {
    where: ['job'],
    description: "The run's first page (the target, or the categories' index) is disallowed by its host's robots.txt for the `scrape-ai` agent, or every listing page that would have given rows was; detail pages it disallows are skipped with a warning naming the rule. `target.robots: ignore` turns it off where the plans file allows it (`robots_ignore`)",
    details: '`[{url, robots_url, rule, line}]`',
  },
  blocked: {
    status: 422, where: ['http', 'job'],
    description: "The site answered with a bot-protection page (a challenge, a captcha wall or an access-denied page of Cloudflare, Akamai, PerimeterX/HUMAN, DataDome, Imperva, AWS WAF, reCAPTCHA or hCaptcha) instead of its page, on every proxy session the run could use; the message names the service. In a job: the first page, or every listing page that would have given rows; a tool call is not charged",
    details: '`[{url, service, kind, status}]`, kind one of `challenge`, `captcha`, `block`',
  },
  fetch_failed: {
    where: ['fetcher'],
    description: "A page could not be fetched after the fetcher's retries (network error, time-out, too many or bad redirects, a body that does not decode); the crawler reports it as `target_failed` for the first page and as a warning for later ones",
    details: '`[{url, status?}]`',
  },
} as const satisfies Record<string, ErrorCodeSpec>;

/** A machine code of {@link ERROR_CODES}; a code outside the list is a compile error. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** True when `code` is in the closed list (for codes that arrive as plain strings, e.g. across threads). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/**
 * An error a caller can act on: a code of {@link ERROR_CODES}, a message for people that says what was
 * wrong and the limit crossed, and structured details.
 *
 * **Example usage:**
 * ```ts
 * throw new CodedError('job_not_finished', `Job ${id} is running (40%)`, [{ status: 'running', progress: 40 }]);
 * ```
 */
export class CodedError extends Error {
  /** Machine-readable code, e.g. `invalid_config`, `target_forbidden`. */
  readonly code: ErrorCode;
  /** Structured details, e.g. `[{path, line, column, message}]` for config errors. */
  readonly details: unknown[];
  /** Extra response headers, e.g. `Retry-After` for `rate_limited`. */
  headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, details: unknown[] = [], headers?: Record<string, string>) {
    super(message);
    this.name = 'CodedError';
    this.code = code;
    this.details = details;
    if (headers) this.headers = headers;
  }
}

/**
 * True for any error that carries a code of the list and a details array (also across worker-thread
 * boundaries, where classes are lost).
 */
export function isCodedError(err: unknown): err is CodedError {
  return err instanceof CodedError
    || (typeof err === 'object' && err !== null && isErrorCode((err as { code?: unknown }).code)
      && Array.isArray((err as { details?: unknown }).details));
}
