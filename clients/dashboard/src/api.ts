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

/** GET /me/ answer: variant A has the `*_remaining` counts, variant B the credits (docs/spec.md, "Account"). */
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
  /** The saved config the job runs or saved (null for inline YAML) and its name then (issue 40). */
  config_id?: string | null;
  config_name?: string | null;
  /** A finished run's warnings, counted (the status lists them in `warnings`). */
  warning_count?: number;
  /** A generate job made with `run: true`: the run job of the saved config (null until it completes; issue 40). */
  run_job_id?: string | null;
  /** A generate job made with `run: true` whose run could not start: `code: message`. */
  run_error?: string;
}

/** A row of results: field name → value, keys in the config's field order. */
export type Row = Record<string, unknown>;

/**
 * What a completed run of a saved config changed since the config's previous completed run (issue 26,
 * docs/monitoring.md): in its status answer; `compared_with` null when there was nothing to compare with.
 */
export interface JobChangesSummary {
  added: number;
  removed: number;
  changed: number;
  compared_with: string | null;
}

/** GET /jobs/{id}/status/ answer. */
export interface Job extends JobSummary {
  results?: { data: Row[]; row_count: number };
  yaml_config?: { id: string | null; yaml_content: string };
  /** Runs of saved configs, once completed; absent (or null) for other jobs. */
  changes?: JobChangesSummary | null;
  /** A finished run's warnings, each naming its page once. */
  warnings?: string[];
}

/** Whether a job status is final (`completed` or `failed`). */
export function isFinished(status: string): boolean {
  return status === 'completed' || status === 'failed';
}

// ---- Monitoring (issue 26, docs/monitoring.md): changes between runs, schedules, webhooks ----

/** A kind of change between two runs. */
export type ChangeKind = 'added' | 'removed' | 'changed';

/** One entry of GET /jobs/{id}/changes/: a row added or removed, or a row changed with its fields' old and new values. */
export interface RowChange {
  change: ChangeKind;
  /** The row (for `removed`, as the previous run had it). */
  row: Row;
  /** `changed`: the key fields' values. */
  key?: Row;
  /** `changed`: each field that differs. */
  fields?: Record<string, { old: unknown; new: unknown }>;
}

/** GET /jobs/{id}/changes/ answer: the counts and one page of the changes (added, then removed, then changed). */
export interface JobChanges extends JobChangesSummary {
  job_id: string;
  /** The fields rows are matched on (`output.deduplicate_fields`), or null when matched on all values. */
  key_fields: string[] | null;
  /** Changes of the kind asked for (all kinds by default). */
  total: number;
  offset: number;
  limit: number;
  results: RowChange[];
  message: string;
}

/** A page of a completed run's changes. @throws ApiError (`job_not_finished` while it runs, `not_found`). */
export function getJobChanges(jobId: string, page: { change?: ChangeKind; offset?: number; limit?: number } = {}, signal?: AbortSignal): Promise<JobChanges> {
  return request<JobChanges>(`/jobs/${encodeURIComponent(jobId)}/changes/`, { query: { change: page.change, offset: page.offset, limit: page.limit }, signal });
}

/** Why a schedule stopped firing by itself: the refusal of its last firing (plan, quota, config gone). */
export interface SchedulePause {
  code: string;
  message: string;
  at: string;
}

/** A schedule (GET /schedules/{id}/): a saved config run on a 5-field cron rule in a time zone. */
export interface Schedule {
  id: string;
  config_id: string;
  cron: string;
  /** IANA time zone of the cron times. */
  timezone: string;
  enabled: boolean;
  /** The next firing (ISO 8601 UTC); null when disabled or when the rule never fires again. */
  next_run_at: string | null;
  last_fired_at: string | null;
  /** Set (with `enabled` false) when a firing was refused; enabling the schedule clears it. */
  paused: SchedulePause | null;
  fired_count: number;
  skipped_count: number;
  /** The latest jobs it started, with the slot each was for. */
  recent_jobs: { job_id: string; scheduled_for: string }[];
  created_at: string;
  updated_at: string;
}

/** Body of POST /schedules/. */
export interface NewSchedule {
  config_id: string;
  cron: string;
  /** @default "UTC" */
  timezone?: string;
  /** @default true */
  enabled?: boolean;
}

/** The account's schedules, newest first. */
export async function listSchedules(signal?: AbortSignal): Promise<Schedule[]> {
  return (await request<{ schedules: Schedule[] }>('/schedules/', { signal })).schedules;
}

/** Creates a schedule. @throws ApiError `plan_required` (plan, or fires too often), `invalid_request` (cron, time zone; with details), `not_found`. */
export function createSchedule(body: NewSchedule): Promise<Schedule> {
  return request<Schedule>('/schedules/', { method: 'POST', body });
}

/** One schedule. */
export function getSchedule(id: string): Promise<Schedule> {
  return request<Schedule>(`/schedules/${encodeURIComponent(id)}/`);
}

/** Changes a schedule's cron, time zone or enabled (enabling a paused schedule resumes it). */
export function updateSchedule(id: string, change: { cron?: string; timezone?: string; enabled?: boolean }): Promise<Schedule> {
  return request<Schedule>(`/schedules/${encodeURIComponent(id)}/`, { method: 'PUT', body: change });
}

/** Deletes a schedule. */
export async function deleteSchedule(id: string): Promise<void> {
  await request(`/schedules/${encodeURIComponent(id)}/`, { method: 'DELETE' });
}

/** The events a webhook can subscribe to. */
export const WEBHOOK_EVENTS = ['job.completed', 'job.failed', 'job.changed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A webhook as the API lists it (no secret). */
export interface Webhook {
  id: string;
  url: string;
  events: WebhookEvent[];
  created_at: string;
}

/** POST /webhooks/ answer: the webhook and its Standard Webhooks signing secret (`whsec_…`), shown only here. */
export interface WebhookCreated extends Webhook {
  secret: string;
}

/** One delivery attempt of a webhook message. */
export interface WebhookDelivery {
  id: string;
  /** The `webhook-id` header: the same on every attempt of one message. */
  message_id: string;
  event: WebhookEvent;
  job_id: string;
  attempt: number;
  attempted_at: string;
  /** The receiver's HTTP status; null when no answer came. */
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  outcome: 'delivered' | 'will_retry' | 'given_up';
  next_attempt_at: string | null;
}

/** The account's webhooks, newest first. */
export async function listWebhooks(signal?: AbortSignal): Promise<Webhook[]> {
  return (await request<{ webhooks: Webhook[] }>('/webhooks/', { signal })).webhooks;
}

/** Creates a webhook. @throws ApiError `target_forbidden` (a private address), `invalid_url`, `invalid_request`. */
export function createWebhook(body: { url: string; events: WebhookEvent[] }): Promise<WebhookCreated> {
  return request<WebhookCreated>('/webhooks/', { method: 'POST', body });
}

/** Deletes a webhook (messages queued for it are dropped). */
export async function deleteWebhook(id: string): Promise<void> {
  await request(`/webhooks/${encodeURIComponent(id)}/`, { method: 'DELETE' });
}

/** A webhook's delivery attempts, newest first. */
export async function getWebhookDeliveries(id: string, limit?: number, signal?: AbortSignal): Promise<WebhookDelivery[]> {
  return (await request<{ deliveries: WebhookDelivery[] }>(`/webhooks/${encodeURIComponent(id)}/deliveries/`, { query: { limit }, signal })).deliveries;
}
