/**
 * The scrape-ai HTTP client: one {@link ScrapeAI} per API key, one method per endpoint of `/api/v1/`
 * (docs/api.md, docs/openapi.json), plus {@link ScrapeAI.waitForJob} (polls a job's status).
 *
 * Retries (`maxRetries`): idempotent calls only (GET, PUT and DELETE: reads, polls, list pages, a config or schedule
 * update, deletes) are retried on a network error, a 5xx answer and 429 `rate_limited`; never a POST (login, configs,
 * generate, run, tools, schedules, webhooks), which could start work, spend credits or create a thing twice. The wait
 * before retry `n` (0-based) is `Retry-After` when the answer has one (plus up to `backoffBaseMs` of jitter), else a
 * random time between half and all of `min(backoffMaxMs, backoffBaseMs * 2 ** n)` ("equal jitter"). An answer whose
 * `Retry-After` is longer than `maxRetryWaitMs` is not retried: its error is thrown at once with
 * `retryAfterSeconds` set. The same rules and defaults as the Python client (clients/python/scrape_ai/client.py):
 * 3 retries, 0.5 s base, 30 s cap, 60 s longest `Retry-After` waited for.
 */
import {
  AuthenticationError,
  JobFailedError,
  JobTimeoutError,
  NetworkError,
  RateLimitError,
  ScrapeAIError,
  errorFromResponse,
} from './errors.ts';
import type {
  ChangesParams,
  Config,
  ConfigList,
  CreateConfigRequest,
  CreateScheduleRequest,
  CreateWebhookRequest,
  ConfigValidation,
  JobChanges,
  GenerateRequest,
  GeneratedRun,
  Job,
  JobList,
  JobStarted,
  ListJobsParams,
  LoginResponse,
  MeResponse,
  ResultsFileOptions,
  ResultsFormat,
  ResultsResponse,
  Row,
  RunRequest,
  Schedule,
  ScheduleList,
  ScreenshotInfo,
  ToolName,
  ToolRequests,
  ToolResponses,
  UpdateScheduleRequest,
  Webhook,
  WebhookCreated,
  WebhookDeliveries,
  WebhookDeliveriesParams,
  WebhookEvent,
  WebhookList,
} from './types.ts';

/** Base URL used when neither `baseUrl` nor `SAI_BASE_URL` is given: the local service's default address. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';
/** The User-Agent header of every request. */
export const USER_AGENT = 'scrape-ai-typescript/0.1.0';

/** The events a webhook can subscribe to (`events` of {@link ScrapeAI.createWebhook}). */
export const WEBHOOK_EVENTS: readonly WebhookEvent[] = ['job.completed', 'job.failed', 'job.changed'];

/** Options of {@link ScrapeAI}. Times are milliseconds. */
export interface ScrapeAIOptions {
  /** The account's key (`sai_…`); default `SAI_API_KEY`. Without one, calls that need a key throw {@link AuthenticationError} before sending. */
  apiKey?: string;
  /** The service's address; a trailing `/` or `/api/v1` is accepted. Default `SAI_BASE_URL`, else {@link DEFAULT_BASE_URL}. */
  baseUrl?: string;
  /** The fetch to use (tests, proxies); default the global `fetch` (Node ≥ 20). */
  fetch?: typeof fetch;
  /** Retries of an idempotent call; 0 turns retries off. Default 3. */
  maxRetries?: number;
  /** Time-out of one HTTP request, ms; a request that takes longer is a {@link NetworkError}. Default 60,000 (a tool may take 25 s). */
  timeoutMs?: number;
  /** First back-off step, ms; each retry doubles it. Default 500. */
  backoffBaseMs?: number;
  /** Longest back-off step, ms. Default 30,000. */
  backoffMaxMs?: number;
  /** Longest `Retry-After` waited for before a retry, ms; a longer one throws at once. Default 60,000. */
  maxRetryWaitMs?: number;
}

/** Options of {@link ScrapeAI.waitForJob}. */
export interface WaitForJobOptions {
  /** Called with the job after every poll (also the last, finished one); what it throws stops the waiting. */
  onProgress?: (job: Job) => void | Promise<void>;
  /** Time between polls, ms. Default 2,000. */
  intervalMs?: number;
  /** Longest wait in all, ms; then {@link JobTimeoutError}. Default: as long as the job takes. */
  timeoutMs?: number;
  /** Aborts the waiting (rejects with the signal's reason); the job itself keeps going. */
  signal?: AbortSignal;
}

interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  auth?: boolean;
  accept?: string;
  /** Return the body's bytes instead of parsing JSON. */
  raw?: boolean;
}

/** Methods whose repetition has the same effect as one call (RFC 9110, section 9.2.2): the only ones retried. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'DELETE', 'PUT', 'OPTIONS']);
const TOOL_NAME = /^[a-z0-9][a-z0-9-]*$/;

/** `Retry-After` (RFC 9110, section 10.2.3: delay-seconds or an HTTP-date) in seconds; `null` when absent or unreadable; never negative. */
export function parseRetryAfter(value: string | null): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const when = Date.parse(v);
  if (Number.isNaN(when)) return null;
  return Math.max(0, (when - Date.now()) / 1000);
}

/** The error code a failed job's message starts with (`target_failed: …`), `null` without one. */
function codeOf(message: string | undefined): string | null {
  return /^([a-z][a-z_]*): /.exec(message ?? '')?.[1] ?? null;
}

/** Resolves after `ms`, or rejects with `signal.reason` when the signal aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason); };
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function normaliseBaseUrl(url: string): string {
  let u = url.trim().replace(/\/+$/, '');
  let parsed: URL;
  try { parsed = new URL(u); } catch { throw new TypeError(`baseUrl must be an http:// or https:// URL, got ${JSON.stringify(url)}`); }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError(`baseUrl must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  if (u.endsWith('/api/v1')) u = u.slice(0, -'/api/v1'.length);
  return u;
}

/** A client of one scrape-ai service with one API key. */
export class ScrapeAI {
  /** The API key, `null` when none was given. */
  readonly apiKey: string | null;
  /** The service's address without `/api/v1`. */
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly maxRetryWaitMs: number;
  /** The login answer `{api_key, email, plan}` of a client made by {@link ScrapeAI.login}, else `null`. */
  account: LoginResponse | null = null;
  readonly #fetch: typeof fetch;
  readonly #options: ScrapeAIOptions;

  /** @throws TypeError for a base URL that is not http(s), or a negative `maxRetries`. */
  constructor(options: ScrapeAIOptions = {}) {
    // `process` exists in Node only: in a browser (the extension) the options are the only source.
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
    const key = options.apiKey ?? env.SAI_API_KEY;
    this.apiKey = key && key.trim() ? key.trim() : null;
    this.baseUrl = normaliseBaseUrl(options.baseUrl ?? (env.SAI_BASE_URL || DEFAULT_BASE_URL));
    this.maxRetries = options.maxRetries ?? 3;
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0) throw new TypeError('maxRetries must be an integer, 0 or more');
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.backoffBaseMs = options.backoffBaseMs ?? 500;
    this.backoffMaxMs = options.backoffMaxMs ?? 30_000;
    this.maxRetryWaitMs = options.maxRetryWaitMs ?? 60_000;
    // Called as a plain function: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#options = options;
  }

  /**
   * Exchanges an account's email and password for its API key (`POST /api/v1/auth/login/`).
   * @returns a client with the key; `client.account` holds the answer `{api_key, email, plan}`.
   * @throws AuthenticationError wrong email or password (401 `invalid_credentials`).
   * @throws RateLimitError too many failed logins (never retried: a POST).
   */
  static async login(email: string, password: string, options: Omit<ScrapeAIOptions, 'apiKey'> = {}): Promise<ScrapeAI> {
    const anonymous = new ScrapeAI({ ...options, apiKey: '' });
    const result = await anonymous.#request<LoginResponse>('POST', 'auth/login/', { body: { email, password }, auth: false });
    if (!result || typeof result.api_key !== 'string') throw new ScrapeAIError('The login answer has no api_key', { status: 200, body: result });
    const client = new ScrapeAI({ ...anonymous.#options, baseUrl: anonymous.baseUrl, apiKey: result.api_key });
    client.account = result;
    return client;
  }

  /** The account and its plan's allowances (`GET /api/v1/me/`). */
  me(): Promise<MeResponse> { return this.#request('GET', 'me/'); }

  /** The account's configs (`GET /api/v1/configs/`). */
  listConfigs(): Promise<ConfigList> { return this.#request('GET', 'configs/'); }

  /** One config with its YAML (`GET /api/v1/configs/{id}/`). @throws NotFoundError */
  getConfig(id: string): Promise<Config> { return this.#request('GET', `configs/${segment(id)}/`); }

  /** Saves a config (`POST /api/v1/configs/`). @throws ValidationError invalid YAML (`details` `[{line, column, message}]`). */
  createConfig(config: CreateConfigRequest): Promise<Config> { return this.#request('POST', 'configs/', { body: config }); }

  /**
   * Replaces a saved config's YAML (`PUT /api/v1/configs/{id}/`; docs/api.md): validated first, nothing changes on error.
   * @throws ValidationError invalid YAML (`details` `[{path, line, column, message}]`). @throws NotFoundError
   */
  updateConfig(id: string, yamlContent: string): Promise<Config> { return this.#request('PUT', `configs/${segment(id)}/`, { body: { yaml_content: yamlContent } }); }

  /** Checks a YAML config without saving it (`POST /api/v1/configs/validate/`). @throws ValidationError with line and column. */
  validateConfig(yamlContent: string): Promise<ConfigValidation> { return this.#request('POST', 'configs/validate/', { body: { yaml_content: yamlContent } }); }

  /** Deletes a config (`DELETE /api/v1/configs/{id}/`, 204). @throws NotFoundError */
  async deleteConfig(id: string): Promise<void> { await this.#request('DELETE', `configs/${segment(id)}/`); }

  /**
   * Generates a config (`POST /api/v1/generate/`): a config written for `url` from `prompt`, tried on the first pages
   * and saved. Without `run`, resolves at once with the started job; its rows (once finished) are a trial of the first
   * pages only (at most 2 listing pages, 30 rows): for all of them, run the saved config or pass `run: true`.
   *
   * With `run: true` the service runs the saved config when the generation ends, as a normal, metered run job, and this
   * waits for both jobs (`options`: as {@link ScrapeAI.waitForJob}, `onProgress` seeing the generate job, then the run,
   * `timeoutMs` for both) and resolves with every row of the run.
   *
   * `example_urls` (at most 4): other pages of the same template as `url`, which the generator compares the page with
   * and tries the config on (the finished job's `status_message` says so); sent only when given.
   * @throws ValidationError `invalid_url`, `target_forbidden` (of `url`, or of an example URL: the message starts
   *   `example_urls[i]: `), `invalid_request` (more than 4 example URLs, a `config_id` of another URL).
   * @throws ForbiddenError `plan_required` (`run: true` without server execution). @throws QuotaExceededError, RateLimitError.
   * @throws JobFailedError (`run: true`) the generation or the run failed, or the run could not start (`code` says why).
   * @throws JobTimeoutError (`run: true`) `timeoutMs` passed first; the jobs keep going.
   */
  generate(request: GenerateRequest & { run: true }, options?: WaitForJobOptions): Promise<GeneratedRun>;
  generate(request: GenerateRequest): Promise<JobStarted>;
  async generate(request: GenerateRequest, options: WaitForJobOptions = {}): Promise<JobStarted | GeneratedRun> {
    if (request.run !== true) return this.startGenerate(request);
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    const wait = (id: string) => this.waitForJob(id, { ...options, ...(deadline === undefined ? {} : { timeoutMs: Math.max(0, deadline - Date.now()) }) });
    const started = await this.startGenerate(request);
    const generated = await wait(started.id);
    if (generated.status === 'failed') throw new JobFailedError(generated.status_message || 'The generation failed', { code: codeOf(generated.status_message), body: generated });
    if (!generated.run_job_id) {
      const why = generated.run_error ?? 'the service started no run (it may predate run: true)';
      throw new JobFailedError(`The config was generated and saved, but its run could not start: ${why}`, { code: codeOf(why), body: generated });
    }
    const run = await wait(generated.run_job_id);
    if (run.status === 'failed') throw new JobFailedError(run.status_message || 'The run failed', { code: codeOf(run.status_message), body: run });
    return { rows: await this.getResults(run.id), config_id: generated.yaml_config.id ?? '', generate_job: generated, run_job: run };
  }

  /**
   * Starts a generate job and resolves at once with it (`POST /api/v1/generate/`, 202), also with `run: true` (then the
   * finished job's `run_job_id` names the run to wait for): what {@link ScrapeAI.generate} does without waiting.
   */
  startGenerate(request: GenerateRequest): Promise<JobStarted> { return this.#request('POST', 'generate/', { body: request }); }

  /** Starts a run of a saved config or an inline YAML (`POST /api/v1/run/`). @throws ForbiddenError `plan_required` on Free and Starter. */
  run(request: RunRequest): Promise<JobStarted> { return this.#request('POST', 'run/', { body: request }); }

  /** A job's status, progress (0–100) and results so far (`GET /api/v1/jobs/{id}/status/`). */
  getJob(id: string): Promise<Job> { return this.#request('GET', `jobs/${segment(id)}/status/`); }

  /** One page of the account's jobs, newest first (`GET /api/v1/jobs/`); pass `next_cursor` as `cursor` for the next. */
  listJobs(params: ListJobsParams = {}): Promise<JobList> { return this.#request('GET', 'jobs/', { query: { limit: params.limit, cursor: params.cursor } }); }

  /** Every row of a finished job (`GET /api/v1/jobs/{id}/results/`). @throws ConflictError the job has not finished. */
  async getResults(id: string): Promise<Row[]> {
    const entries = await this.#request<ResultsResponse>('GET', `jobs/${segment(id)}/results/`);
    return Array.isArray(entries) ? entries.flatMap((e) => (e && Array.isArray(e.data) ? e.data : [])) : [];
  }

  /**
   * What a completed run of a saved config changed since the config's previous completed run, a page at a time
   * (`GET /api/v1/jobs/{id}/changes/`; docs/monitoring.md).
   * @throws ConflictError the job has not finished. @throws NotFoundError no such job (or another account's).
   */
  getChanges(id: string, params: ChangesParams = {}): Promise<JobChanges> {
    return this.#request('GET', `jobs/${segment(id)}/changes/`, { query: { change: params.change, offset: params.offset, limit: params.limit } });
  }

  /**
   * Runs a saved config on a 5-field cron rule in a time zone (`POST /api/v1/schedules/`, 201; docs/monitoring.md).
   * @returns the schedule with its `next_run_at`.
   * @throws ForbiddenError `plan_required`: no server execution on the plan, or the rule fires more often than the plan
   *   allows (`details` `[{plan, required, min_interval_minutes, shortest_interval_minutes, plans_with_it}]`).
   * @throws ValidationError `invalid_request`: a bad cron rule or time zone (`details` `[{path, message}]`).
   * @throws NotFoundError no such config. Never retried (a POST).
   */
  createSchedule(schedule: CreateScheduleRequest): Promise<Schedule> { return this.#request('POST', 'schedules/', { body: schedule }); }

  /** The account's schedules, newest first (`GET /api/v1/schedules/`). */
  listSchedules(): Promise<ScheduleList> { return this.#request('GET', 'schedules/'); }

  /** One schedule with its next run, its counts and the jobs it started (`GET /api/v1/schedules/{id}/`). @throws NotFoundError */
  getSchedule(id: string): Promise<Schedule> { return this.#request('GET', `schedules/${segment(id)}/`); }

  /**
   * Changes a schedule's cron rule, time zone or `enabled`, at least one (`PUT /api/v1/schedules/{id}/`); `{enabled: true}`
   * resumes a schedule the service paused.
   * @throws ValidationError `invalid_request` (nothing to change, a bad rule or zone). @throws ForbiddenError `plan_required`.
   * @throws NotFoundError
   */
  updateSchedule(id: string, change: UpdateScheduleRequest): Promise<Schedule> { return this.#request('PUT', `schedules/${segment(id)}/`, { body: change }); }

  /** Deletes a schedule (`DELETE /api/v1/schedules/{id}/`, 204); the jobs it started stay. @throws NotFoundError */
  async deleteSchedule(id: string): Promise<void> { await this.#request('DELETE', `schedules/${segment(id)}/`); }

  /**
   * Registers a URL to be told when the account's jobs end (`POST /api/v1/webhooks/`, 201): signed POSTs (Standard Webhooks).
   * @returns the webhook and its signing `secret` (`whsec_…`), which is shown only in this answer: keep it to verify deliveries.
   * @throws ValidationError `target_forbidden` (a private, loopback or metadata address), `invalid_url`, `invalid_request`.
   *   Never retried (a POST).
   */
  createWebhook(webhook: CreateWebhookRequest): Promise<WebhookCreated> { return this.#request('POST', 'webhooks/', { body: webhook }); }

  /** The account's webhooks, newest first, without their secrets (`GET /api/v1/webhooks/`). */
  listWebhooks(): Promise<WebhookList> { return this.#request('GET', 'webhooks/'); }

  /** One webhook, without its secret (`GET /api/v1/webhooks/{id}/`). @throws NotFoundError */
  getWebhook(id: string): Promise<Webhook> { return this.#request('GET', `webhooks/${segment(id)}/`); }

  /** Deletes a webhook (`DELETE /api/v1/webhooks/{id}/`, 204); messages queued for it are dropped. @throws NotFoundError */
  async deleteWebhook(id: string): Promise<void> { await this.#request('DELETE', `webhooks/${segment(id)}/`); }

  /**
   * A webhook's delivery attempts, newest first (`GET /api/v1/webhooks/{id}/deliveries/`): time, status code, duration,
   * error and outcome (`delivered`, `will_retry` with `next_attempt_at`, `given_up`).
   * @throws ValidationError a `limit` outside 1-100. @throws NotFoundError
   */
  listWebhookDeliveries(id: string, params: WebhookDeliveriesParams = {}): Promise<WebhookDeliveries> {
    return this.#request('GET', `webhooks/${segment(id)}/deliveries/`, { query: { limit: params.limit } });
  }

  /**
   * A finished job's results as a file (`GET /api/v1/jobs/{id}/results/?format=`; docs/exports.md): JSON (pretty-printed
   * array), CSV (UTF-8 with a BOM, RFC 4180) or XLSX; `options` say how cells are written (`raw`, `lists`,
   * `list_separator`).
   * @throws ValidationError a bad option (400 `invalid_request` naming it). @throws ConflictError the job is not finished (409). @throws NotFoundError
   */
  getResultsFile(id: string, format: ResultsFormat, options: ResultsFileOptions = {}): Promise<Uint8Array> {
    const query = { format, raw: options.raw === undefined ? undefined : options.raw ? '1' : '0', lists: options.lists, list_separator: options.listSeparator };
    return this.#request('GET', `jobs/${segment(id)}/results/`, { query, accept: '*/*', raw: true });
  }

  /**
   * Runs a website-analysis tool (`POST /api/v1/tools/{name}/`; docs/tools.md). The screenshot answers the
   * image's bytes unless `{accept: 'json'}` (then `{url, width, height, format, bytes, expires_at}`).
   * @throws ValidationError bad options, `target_unreachable` (422). @throws RateLimitError, QuotaExceededError (never retried).
   */
  tool(name: 'screenshot', body: ToolRequests['screenshot'], options: { accept: 'json' }): Promise<ScreenshotInfo>;
  tool(name: 'screenshot', body: ToolRequests['screenshot'], options?: { accept?: 'image' }): Promise<Uint8Array>;
  tool<N extends Exclude<ToolName, 'screenshot'>>(name: N, body: ToolRequests[N]): Promise<ToolResponses[N]>;
  tool(name: string, body: Record<string, unknown>, options?: { accept?: 'json' | 'image' }): Promise<unknown>;
  tool(name: string, body: object, options: { accept?: 'json' | 'image' } = {}): Promise<unknown> {
    if (!TOOL_NAME.test(name)) throw new TypeError(`not a tool name: ${JSON.stringify(name)}`);
    const image = name === 'screenshot' && options.accept !== 'json';
    return this.#request('POST', `tools/${name}/`, { body, accept: image ? 'image/*' : 'application/json', raw: image });
  }

  /** The service's OpenAPI 3.1 document (`GET /api/v1/openapi.json`, no key needed). */
  openapi(): Promise<Record<string, unknown>> { return this.#request('GET', 'openapi.json', { auth: false }); }

  /**
   * Polls a job until it is `completed` or `failed` and resolves with it (a failed job resolves, it is not
   * thrown: check `status`). Polls are GETs, so each is retried as usual.
   * @throws JobTimeoutError `timeoutMs` passed first (the job keeps going). Rejects with `signal.reason` on abort.
   */
  async waitForJob(id: string, options: WaitForJobOptions = {}): Promise<Job> {
    const { onProgress, intervalMs = 2000, timeoutMs, signal } = options;
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    for (;;) {
      signal?.throwIfAborted();
      const job = await this.getJob(id);
      if (onProgress) await onProgress(job);
      if (job.status === 'completed' || job.status === 'failed') return job;
      const left = deadline - Date.now();
      if (left <= 0) throw new JobTimeoutError(`Job ${id} is still ${job.status} (${job.progress}%) after ${timeoutMs} ms`, { body: job });
      await sleep(Math.min(intervalMs, left), signal);
    }
  }

  /** One API call with the retry rules of the module docstring. */
  async #request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const auth = opts.auth ?? true;
    if (auth && !this.apiKey) throw new AuthenticationError('No API key: pass apiKey, set SAI_API_KEY, or use ScrapeAI.login()');
    const url = new URL(`${this.baseUrl}/api/v1/${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: opts.accept ?? 'application/json' };
    if (auth && this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const retryable = IDEMPOTENT.has(method);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#once<T>(method, url, headers, opts);
      } catch (err) {
        const delay = retryable && attempt < this.maxRetries && err instanceof ScrapeAIError ? this.#retryDelayMs(err, attempt) : null;
        if (delay === null) throw err;
        await sleep(delay);
      }
    }
  }

  async #once<T>(method: string, url: URL, headers: Record<string, string>, opts: RequestOptions): Promise<T> {
    let response: Response;
    let bytes: Uint8Array;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        // The API never redirects; a redirect (a proxy, a wrong base URL) is an error answer, not followed with the key.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (cause) {
      const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
      throw new NetworkError(`${method} ${url.pathname}: ${reason}`, { cause });
    }
    const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const isJson = contentType === 'application/json' || contentType.endsWith('+json');
    if (response.status >= 200 && response.status < 300) {
      if (opts.raw) return bytes as T;
      if (bytes.length === 0) return undefined as T;
      return (isJson ? JSON.parse(new TextDecoder().decode(bytes)) : bytes) as T;
    }
    let body: unknown = undefined;
    if (bytes.length) {
      const text = new TextDecoder().decode(bytes);
      try { body = isJson ? JSON.parse(text) : text; } catch { body = text; }
    }
    throw errorFromResponse(response.status, body, parseRetryAfter(response.headers.get('retry-after')), response.headers.get('x-request-id'));
  }

  /** Milliseconds to wait before retry `attempt` (0-based); `null` when the error is final. */
  #retryDelayMs(err: ScrapeAIError, attempt: number): number | null {
    const transient = err instanceof NetworkError || (err.status !== null && err.status >= 500) || err instanceof RateLimitError;
    if (!transient) return null;
    if (err.retryAfterSeconds !== null) {
      if (err.retryAfterSeconds * 1000 > this.maxRetryWaitMs) return null;
      return err.retryAfterSeconds * 1000 + Math.random() * this.backoffBaseMs;
    }
    const step = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** attempt);
    return step / 2 + Math.random() * (step / 2);
  }
}

/** A path segment (an id) percent-encoded; an empty id is refused before sending. */
function segment(id: string): string {
  if (typeof id !== 'string' || !id) throw new TypeError('an id is required');
  return encodeURIComponent(id);
}
