/**
 * The one error type that crosses layers: every failure a caller can act on carries a machine code
 * from the closed list in docs/errors.md and optional details. The HTTP layer maps codes to status
 * codes in one place (lambdas/http/middleware.ts); the engine, the guard and the domain only throw.
 *
 * Body on the wire (ARCHITECTURE.md, "Errors"): `{"error": message, "code": code, "details": details}`.
 */
export class CodedError extends Error {
  /** Machine-readable code, e.g. `invalid_config`, `target_forbidden`. */
  readonly code: string;
  /** Structured details, e.g. `[{path, line, column, message}]` for config errors. */
  readonly details: unknown[];
  /** Extra response headers, e.g. `Retry-After` for `rate_limited`. */
  headers?: Record<string, string>;

  constructor(code: string, message: string, details: unknown[] = [], headers?: Record<string, string>) {
    super(message);
    this.name = 'CodedError';
    this.code = code;
    this.details = details;
    if (headers) this.headers = headers;
  }
}

/** True for any error that carries a machine code (also across worker-thread boundaries, where classes are lost). */
export function isCodedError(err: unknown): err is CodedError {
  return err instanceof CodedError
    || (typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
      && Array.isArray((err as { details?: unknown }).details));
}
