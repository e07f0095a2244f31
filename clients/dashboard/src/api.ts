/**
 * The dashboard's only way to the service: `fetch` on the same origin's `/api/v1/…` with the session's key
 * (`Authorization: Bearer sai_…`), JSON in and out, and every error answer (`{error, code, details}`,
 * docs/errors.md) turned into an {@link ApiError}. A 401 on a keyed call ends the session (see
 * {@link onUnauthorized}). The key lives in `sessionStorage` (this tab, until it closes), never in
 * localStorage or a cookie.
 */

const KEY_ITEM = 'sai.api_key';
const BASE = '/api/v1';

/** One entry of an error's `details`, as `invalid_config` gives them (other codes have their own keys). */
export interface ErrorDetail {
  path?: string;
  line?: number;
  column?: number;
  message?: string;
  [key: string]: unknown;
}

/** An error answer of the API, or a network failure (`status` 0, `code` `network_error`). */
export class ApiError extends Error {
  /** HTTP status; 0 when no answer came. */
  status: number;
  /** The answer's machine-readable `code` (docs/errors.md), e.g. `invalid_config`, `not_found`. */
  code: string;
  /** The answer's `details` array ([] when it had none). */
  details: ErrorDetail[];
  constructor(status: number, code: string, message: string, details: ErrorDetail[] = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

let unauthorized: (message: string) => void = () => {};

/** Sets what happens when a keyed call answers 401 (the app: drop the key, show the sign-in form). */
export function onUnauthorized(handler: (message: string) => void): void {
  unauthorized = handler;
}

/** The session's API key, or null when signed out. */
export function sessionKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

/** Stores the key for this tab's session; `null` removes it (sign out). */
export function setSessionKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_ITEM);
  else sessionStorage.setItem(KEY_ITEM, key);
}

/** Options of {@link request}. */
export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Sent as JSON. */
  body?: unknown;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | undefined>;
  /** Send no key (login). @default false */
  anonymous?: boolean;
  /** The Accept header. @default "application/json" */
  accept?: string;
  signal?: AbortSignal;
}

async function send(path: string, opts: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
  if (!opts.anonymous) {
    const key = sessionKey();
    if (key) headers.authorization = `Bearer ${key}`;
  }
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) qs.set(k, String(v));
  const url = BASE + path + (qs.size ? `?${qs}` : '');
  let res: Response;
  try {
    res = await fetch(url, {
      method: opts.method ?? 'GET',
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network_error', 'The service could not be reached. Check the connection and try again.');
  }
  if (!res.ok) throw await toError(res, opts.anonymous === true);
  return res;
}

async function toError(res: Response, anonymous: boolean): Promise<ApiError> {
  let body: { error?: unknown; code?: unknown; details?: unknown } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  const message = typeof body.error === 'string' && body.error ? body.error : `The service answered HTTP ${res.status}.`;
  const code = typeof body.code === 'string' ? body.code : `http_${res.status}`;
  const details = Array.isArray(body.details) ? (body.details as ErrorDetail[]) : [];
  const error = new ApiError(res.status, code, message, details);
  if (res.status === 401 && !anonymous) unauthorized(message);
  return error;
}

/**
 * Calls `/api/v1<path>` and parses its JSON answer (`undefined` for 204).
 * @throws ApiError for a non-2xx answer or no answer; the AbortError of `opts.signal`.
 */
export async function request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await send(path, opts);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/**
 * Calls `/api/v1<path>` and returns the answer's bytes as a Blob (exports, screenshots), with its type.
 * @throws ApiError as {@link request}.
 */
export async function requestBlob(path: string, opts: RequestOptions = {}): Promise<Blob> {
  const res = await send(path, opts);
  return res.blob();
}

/**
 * Calls `/api/v1<path>` and returns the Response itself, for answers that may be JSON or bytes (the
 * screenshot tool). @throws ApiError as {@link request}.
 */
export function requestRaw(path: string, opts: RequestOptions = {}): Promise<Response> {
  return send(path, opts);
}

/** Saves a Blob as a file through a temporary `<a download>` (the browser's own download). */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // The download has taken the URL by the next task; a minute is ample for slow disks.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The user-facing text of any thrown value. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

// ---- Shapes of the answers the dashboard reads (docs/openapi.json) ----

/** POST /auth/login/ answer. */
export interface LoginResult {
  api_key: string;
  email: string;
  plan: string;
}

/** GET /me/ answer: variant A has the `*_remaining` counts, variant B the credits (SPEC.md, "Account"). */
export interface Me {
  user: { id: number; email: string; first_name: string; last_name: string };
  subscription: {
    plan: string;
    credits_remaining?: number;
    credits_per_month?: number;
    yaml_generations_remaining?: number;
    monthly_scrapes_remaining?: number;
    has_api_access: boolean;
    has_server_execution: boolean;
  };
}

/** A config list item. */
export interface ConfigSummary {
  id: string;
  name: string;
  target_url: string;
  created_at: string;
}

/** A whole config (GET /configs/{id}/). */
export interface Config extends ConfigSummary {
  yaml_content: string;
  prompt: string | null;
}

/** A job as GET /jobs/ lists it. */
export interface JobSummary {
  id: string;
  status: string;
  progress: number;
  job_type: string;
  target_url?: string;
  status_message?: string;
  items_found?: number;
  pages_scraped?: number;
  api_discovered?: boolean;
  created_at: string;
  completed_at?: string;
}

/** A row of results: field name → value, keys in the config's field order. */
export type Row = Record<string, unknown>;

/** GET /jobs/{id}/status/ answer. */
export interface Job extends JobSummary {
  results?: { data: Row[]; row_count: number };
  yaml_config?: { id: string | null; yaml_content: string };
}

/** Whether a job status is final (`completed` or `failed`). */
export function isFinished(status: string): boolean {
  return status === 'completed' || status === 'failed';
}
