/**
 * Errors thrown by the scrape-ai client.
 *
 * Every error answer of the service has the body `{error, code, details}` (docs/errors.md, the `Error` schema of
 * docs/openapi.json). The client throws one {@link ScrapeAIError} subclass per answer, chosen by `code` first
 * and by the HTTP status when the code is unknown (a newer service, a proxy's answer) — the same table as the
 * Python client (clients/python/scrape_ai/errors.py):
 *
 * | class                | status / code |
 * |----------------------|---------------|
 * | AuthenticationError  | 401 (`unauthorized`, `invalid_credentials`); no API key configured |
 * | ForbiddenError       | 403 (`plan_required`, `plan_unknown`) |
 * | NotFoundError        | 404 (`not_found`) |
 * | ConflictError        | 409 (`job_not_finished`) |
 * | ValidationError      | 400 and 422 (`invalid_request`, `invalid_config`, `invalid_url`, `target_unreachable`, …) |
 * | QuotaExceededError   | 429 `quota_exceeded` (the month's credits or scrapes are spent) |
 * | RateLimitError       | 429 `rate_limited` (hourly limit, a tool's daily allowance, throttles), `retryAfterSeconds` |
 * | ServerError          | 5xx (`internal_error`, `queue_unavailable`, `service_busy`) |
 * | NetworkError         | no HTTP answer at all: refused, reset, DNS, TLS, time-out |
 * | JobTimeoutError      | `waitForJob` ran out of time |
 * | JobFailedError       | `generate({…, run: true})`: the generation or its run ended `failed`, or the run could not start |
 */

/** Options of every {@link ScrapeAIError}. */
export interface ScrapeAIErrorOptions {
  /** The HTTP status code; `null` when there was no HTTP answer. */
  status?: number | null;
  /** The service's machine-readable `code` (`not_found`, `plan_required`, …); `null` when the body had none. */
  code?: string | null;
  /** The `details` list of the error body (its shape per code is in docs/errors.md); `[]` when absent. */
  details?: unknown[];
  /** The `x-request-id` header of the answer, for support requests. */
  requestId?: string | null;
  /** The parsed body (JSON) or its text. */
  body?: unknown;
  /** The `Retry-After` header in seconds (RFC 9110, section 10.2.3), when the answer had one. */
  retryAfterSeconds?: number | null;
  /** The underlying error (a fetch failure). */
  cause?: unknown;
}

/** Any error of the service or of the transport. `status` is `null` for a {@link NetworkError}. */
export class ScrapeAIError extends Error {
  readonly status: number | null;
  readonly code: string | null;
  readonly details: unknown[];
  readonly requestId: string | null;
  readonly body: unknown;
  /** Seconds the service asked to wait (`Retry-After`), `null` when it said nothing. */
  readonly retryAfterSeconds: number | null;

  constructor(message: string, opts: ScrapeAIErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.status = opts.status ?? null;
    this.code = opts.code ?? null;
    this.details = opts.details ?? [];
    this.requestId = opts.requestId ?? null;
    this.body = opts.body;
    this.retryAfterSeconds = opts.retryAfterSeconds ?? null;
  }
}

/** 401: a missing, wrong or revoked API key, or wrong login credentials. */
export class AuthenticationError extends ScrapeAIError {}
/** 403: the plan does not include this (`plan_required`: e.g. server-side runs on Free and Starter). */
export class ForbiddenError extends ScrapeAIError {}
/** 404: no such config, job or screenshot for this account. */
export class NotFoundError extends ScrapeAIError {}
/** 409: the results of a job that has not finished. */
export class ConflictError extends ScrapeAIError {}
/** 400 and 422: the request or the config is invalid; `details` says where (e.g. `[{line, column, message}]`). */
export class ValidationError extends ScrapeAIError {}
/** 429 `quota_exceeded`: the month's credits or scrapes are spent. Never worth retrying before the month ends. */
export class QuotaExceededError extends ScrapeAIError {}
/** 429 `rate_limited`: an hourly limit, a tool's daily allowance or a throttle; wait `retryAfterSeconds`. */
export class RateLimitError extends ScrapeAIError {}
/** 5xx: the service failed or is busy. Idempotent calls are retried before this is thrown. */
export class ServerError extends ScrapeAIError {}
/** No HTTP answer: connection refused or reset, DNS or TLS failure, or the request's time-out. */
export class NetworkError extends ScrapeAIError {}
/** `waitForJob` gave up waiting (its `timeoutMs`); the job itself keeps going. */
export class JobTimeoutError extends ScrapeAIError {}
/**
 * A job the client waited for on the caller's behalf (`generate({…, run: true})`) ended `failed`, or the generate job's
 * run could not start. `body` is that job; `code` is the code its message starts with (`target_failed`,
 * `generation_failed`, `quota_exceeded`, …), `null` without one.
 */
export class JobFailedError extends ScrapeAIError {}

type ErrorClass = new (message: string, opts?: ScrapeAIErrorOptions) => ScrapeAIError;

/** The class of each `code` of the `Error` schema's enum (docs/openapi.json). */
const BY_CODE: Record<string, ErrorClass> = {
  unauthorized: AuthenticationError,
  invalid_credentials: AuthenticationError,
  plan_required: ForbiddenError,
  plan_unknown: ForbiddenError,
  not_found: NotFoundError,
  job_not_finished: ConflictError,
  invalid_request: ValidationError,
  invalid_json: ValidationError,
  invalid_config: ValidationError,
  invalid_url: ValidationError,
  invalid_cursor: ValidationError,
  browser_required: ValidationError,
  target_forbidden: ValidationError,
  target_unreachable: ValidationError,
  blocked: ValidationError,
  payload_too_large: ValidationError,
  rate_limited: RateLimitError,
  quota_exceeded: QuotaExceededError,
  internal_error: ServerError,
  queue_unavailable: ServerError,
  service_busy: ServerError,
};

function classForStatus(status: number): ErrorClass {
  if (status === 401) return AuthenticationError;
  if (status === 403) return ForbiddenError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 400 || status === 422) return ValidationError;
  // A 429 without a code (a proxy's, an API Gateway throttle): too many requests, not a spent quota.
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  return ScrapeAIError;
}

/**
 * Builds the error for one non-2xx answer.
 *
 * @param status the HTTP status code.
 * @param body the parsed JSON body (normally `{error, code, details}`), or its text, or `undefined`.
 * @param retryAfterSeconds the `Retry-After` header in seconds, if any. A {@link RateLimitError} without the
 *   header takes it from `details[0].retry_after_seconds`.
 * @param requestId the `x-request-id` header, if any.
 * @returns the subclass for the body's `code`, else for the status.
 */
export function errorFromResponse(status: number, body: unknown, retryAfterSeconds: number | null = null, requestId: string | null = null): ScrapeAIError {
  let code: string | null = null;
  let details: unknown[] = [];
  let message = '';
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if (typeof b.code === 'string') code = b.code;
    if (Array.isArray(b.details)) details = b.details;
    if (typeof b.error === 'string') message = b.error;
  } else if (typeof body === 'string' && body.trim()) {
    message = body.trim().slice(0, 500);
  }
  if (!message) message = `HTTP ${status}`;
  const cls = (code !== null && BY_CODE[code]) || classForStatus(status);
  if (cls === RateLimitError && retryAfterSeconds === null && details[0] && typeof details[0] === 'object') {
    const seconds = (details[0] as Record<string, unknown>).retry_after_seconds;
    if (typeof seconds === 'number' && Number.isFinite(seconds)) retryAfterSeconds = seconds;
  }
  return new cls(message, { status, code, details, requestId, body, retryAfterSeconds });
}
