/**
 * Request and response types of the scrape-ai API, written from the OpenAPI 3.1 document
 * (docs/openapi.json, generated from lambdas/http/schemas.ts). test/clients/typescript.test.ts checks
 * that each response type's required keys equal the schema's `required` list, so the two cannot drift.
 * Optional keys (`?`) are the ones the schema does not require.
 */

/** A job's state (`status` enum of the job schemas). `completed` and `failed` are final. */
export type JobStatus = 'pending' | 'analyzing' | 'generating' | 'validating' | 'running' | 'completed' | 'failed';
/** `run` (a config scraped) or `generate` (a config written from a URL and a prompt). */
export type JobType = 'run' | 'generate';
/** A scraped row: the config's field names (plus `_category`/`_category_url`, `_detail_error`). */
export type Row = Record<string, unknown>;

/** `POST /api/v1/auth/login/` body. */
export interface LoginRequest { email: string; password: string }
/** `POST /api/v1/auth/login/` 200: the account's API key (made at the first login) and plan. */
export interface LoginResponse { api_key: string; email: string; plan: string }

/** `GET /api/v1/me/` 200: the account and its plan's allowances (credits in credit units). */
export interface MeResponse {
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

/** A config as listed (`GET /api/v1/configs/` results); `created_at` is ISO 8601. */
export interface ConfigSummary { id: string; name: string; target_url: string; created_at: string }
/** `GET /api/v1/configs/` 200. */
export interface ConfigList { count: number; results: ConfigSummary[] }
/** `POST /api/v1/configs/` body. */
export interface CreateConfigRequest { name: string; target_url: string; yaml_content: string; prompt?: string | null }
/** `POST /api/v1/configs/` 201 and `GET /api/v1/configs/{id}/` 200: the whole config. */
export interface Config extends ConfigSummary { yaml_content: string; prompt: string | null }

/** `PUT /api/v1/configs/{id}/` body: the new YAML; name and target URL follow it. */
export interface UpdateConfigRequest { yaml_content: string }

/** `POST /api/v1/configs/validate/` answer for a valid config: its field names in order. */
export interface ConfigValidation { valid: true; fields: string[] }

/** `POST /api/v1/generate/` body: the page and what to extract from it. */
export interface GenerateRequest {
  url: string;
  prompt: string;
  /**
   * Run the saved config once it is generated, as a normal, metered run job, for all the rows (docs/generate.md, "All
   * the rows"); without it the generate job's rows are a trial of the first pages only. Needs server execution.
   */
  run?: boolean;
  /**
   * A saved config of the same URL whose YAML (and prompt) the generated config replaces, keeping its id and name.
   * Without it a new config is saved, named with a suffix (" (2)") when the name is taken.
   */
  config_id?: string;
  /**
   * Other pages made from the same template as `url` (more listing pages, other searches of the site), at most 4
   * absolute http(s) URLs: the generator reads them to tell the records from the template's furniture and tries the
   * config on them. Each is checked as `url` is: a forbidden one is `target_forbidden` (400), its message starting
   * `example_urls[i]: `; more than 4 is `invalid_request`.
   */
  example_urls?: string[];
}
/** What `generate({…, run: true})` resolves with: every row of the run of the generated config. */
export interface GeneratedRun {
  /** Every row of the run job (`GET /jobs/{run_job_id}/results/`). */
  rows: Row[];
  /** The saved config, to run again. */
  config_id: string;
  /** The finished generate job (its own rows are the trial's). */
  generate_job: Job;
  /** The finished run job of the saved config. */
  run_job: Job;
}
/** `POST /api/v1/run/` body: a saved config or an inline YAML config (exactly one). */
export type RunRequest = { config_id: string; yaml_content?: never } | { yaml_content: string; config_id?: never };
/** `POST /api/v1/generate/` and `POST /api/v1/run/` 202: the job that was started. */
export interface JobStarted {
  id: string;
  status: JobStatus;
  progress: number;
  job_type: JobType;
  target_url?: string;
  created_at?: string;
  /** A generate without `config_id`: the account's config of the same URL and prompt, which this one does not replace. */
  existing_config?: { id: string; name: string };
}

/** A job as listed (`GET /api/v1/jobs/` results); `progress` is 0–100. */
export interface JobSummary {
  id: string;
  status: JobStatus;
  progress: number;
  job_type: JobType;
  target_url: string;
  status_message: string;
  items_found: number;
  pages_scraped: number;
  api_discovered: boolean;
  /** The saved config the job runs or saved; null for inline YAML. */
  config_id: string | null;
  /** That config's name when the job was made (an inline YAML's `name:`); null when none. */
  config_name: string | null;
  /** A finished run's warnings; the job's status lists them (`warnings`). */
  warning_count: number;
  /** A generate job made with `run: true`: the run job it started on completion (null until then); absent otherwise. */
  run_job_id?: string | null;
  /** A generate job made with `run: true` whose run could not start: `code: message`. */
  run_error?: string;
  created_at: string;
  completed_at?: string;
}
/** `GET /api/v1/jobs/` query. `limit` 1–100 (default 20); `cursor` is the previous page's `next_cursor`. */
export interface ListJobsParams { limit?: number; cursor?: string }
/** `GET /api/v1/jobs/` 200: one page, newest first. */
export interface JobList { count: number; next_cursor: string | null; results: JobSummary[] }
/** `GET /api/v1/jobs/{id}/status/` 200: the job, its results so far and its config. */
export interface Job extends JobSummary {
  results: { data: Row[]; row_count: number };
  yaml_config: { id: string | null; yaml_content: string };
  /** A finished run's warnings, each naming its page once; `[]` otherwise. */
  warnings: string[];
  /** A completed run of a saved config: what changed since the config's previous completed run; absent otherwise. */
  changes?: JobChangesSummary;
}
/** The counts of {@link Job.changes}; `compared_with` is null when there was nothing to compare with (a first run). */
export interface JobChangesSummary {
  added: number;
  removed: number;
  changed: number;
  compared_with: string | null;
}
/** A kind of change between two runs. */
export type ChangeKind = 'added' | 'removed' | 'changed';
/** One change: a row added or removed, or a row changed with each differing field's old and new value. */
export interface RowChange {
  change: ChangeKind;
  row: Row;
  /** `changed`: the key fields' values. */
  key?: Record<string, unknown>;
  /** `changed`: each field that differs. */
  fields?: Record<string, { old: unknown; new: unknown }>;
}
/** `GET /api/v1/jobs/{id}/changes/` 200: the counts and one page of the changes (added, then removed, then changed). */
export interface JobChanges {
  job_id: string;
  compared_with: string | null;
  /** The fields rows were matched on, or null: on all values. */
  key_fields: string[] | null;
  added: number;
  removed: number;
  changed: number;
  /** Changes of the kind asked for (all kinds by default). */
  total: number;
  offset: number;
  limit: number;
  results: RowChange[];
  message: string;
}
/** Query of `GET /api/v1/jobs/{id}/changes/`. */
export interface ChangesParams {
  change?: ChangeKind;
  /** Changes to skip (default 0). */
  offset?: number;
  /** Changes to return, 1-1000 (default 100). */
  limit?: number;
}
/** `GET /api/v1/jobs/{id}/results/` 200 (JSON): one entry with every row. */
export type ResultsResponse = Array<{ data: Row[]; row_count: number }>;
/** The `format` query of `GET /api/v1/jobs/{id}/results/`. */
export type ResultsFormat = 'json' | 'csv' | 'xlsx';
/** How CSV and XLSX write a list (`lists` of `GET /api/v1/jobs/{id}/results/`): its JSON text (the default) or its items joined. */
export type ListStyle = 'json' | 'join';
/** How a results file's cells are written (docs/exports.md); each is left to the service's default when absent. */
export interface ResultsFileOptions {
  /** CSV: cells exactly as scraped, without the `'` before formula-like text (`raw=1`). Default false. */
  raw?: boolean;
  /** CSV and XLSX: a list as its JSON text (`json`, the default) or its items joined (`join`). */
  lists?: ListStyle;
  /** With `lists: 'join'`: what goes between the items, 1-10 characters (`list_separator`); default `'; '`. */
  listSeparator?: string;
}

/** `POST /api/v1/schedules/` body: run a saved config on a 5-field cron rule (`0 6 * * 1`, or `@hourly`, `@daily`, …). */
export interface CreateScheduleRequest {
  config_id: string;
  cron: string;
  /** IANA time zone of the cron times (default `UTC`). */
  timezone?: string;
  /** Default true; a disabled schedule keeps its rule and does not fire. */
  enabled?: boolean;
}
/** `PUT /api/v1/schedules/{id}/` body: the fields to change, at least one; `enabled: true` also resumes a paused schedule. */
export interface UpdateScheduleRequest { cron?: string; timezone?: string; enabled?: boolean }
/** Why the service paused a schedule: a firing it refused (the plan changed, the config is gone, credits spent, …). */
export interface SchedulePause { code: string; message: string; at: string }
/** A job a schedule started, and the slot it was started for. */
export interface ScheduledJob { job_id: string; scheduled_for: string }
/** A schedule (`POST`, `GET`, `PUT /api/v1/schedules/…`); times are ISO 8601. */
export interface Schedule {
  id: string;
  config_id: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  /** The next firing; null when disabled, paused or when the rule never fires again. */
  next_run_at: string | null;
  last_fired_at: string | null;
  /** Set when the service paused the schedule (`enabled` is then false); enabling it (`updateSchedule(id, {enabled: true})`) resumes it. */
  paused: SchedulePause | null;
  fired_count: number;
  /** Slots not run: the schedule's previous job was still unfinished, or a limit that lifts by itself (rate limited, busy). */
  skipped_count: number;
  /** The latest jobs it started, newest first. */
  recent_jobs: ScheduledJob[];
  created_at: string;
  updated_at: string;
}
/** `GET /api/v1/schedules/` 200: newest first. */
export interface ScheduleList { schedules: Schedule[] }

/** What a webhook can be told: a job completed, failed, or (a run of a saved config) found changes since the previous run. */
export type WebhookEvent = 'job.completed' | 'job.failed' | 'job.changed';
/** `POST /api/v1/webhooks/` body. The URL must not be a private, loopback or metadata address (400 `target_forbidden`). */
export interface CreateWebhookRequest { url: string; events: WebhookEvent[] }
/** A webhook (`GET /api/v1/webhooks/…`): no secret. */
export interface Webhook { id: string; url: string; events: WebhookEvent[]; created_at: string }
/** `POST /api/v1/webhooks/` 201: the webhook and its Standard Webhooks signing secret (`whsec_…`), shown only in this answer. */
export interface WebhookCreated extends Webhook { secret: string }
/** `GET /api/v1/webhooks/` 200: newest first. */
export interface WebhookList { webhooks: Webhook[] }
/** What follows a delivery attempt. */
export type WebhookDeliveryOutcome = 'delivered' | 'will_retry' | 'given_up';
/** One delivery attempt of a message to a webhook. */
export interface WebhookDelivery {
  id: string;
  /** The `webhook-id` header: the same on every attempt of one message. */
  message_id: string;
  event: WebhookEvent;
  job_id: string;
  /** 1 for the first attempt of the message. */
  attempt: number;
  attempted_at: string;
  /** The receiver's HTTP status; null when there was no answer (refused, time-out). */
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  outcome: WebhookDeliveryOutcome;
  /** The next attempt (`will_retry`), else null. */
  next_attempt_at: string | null;
}
/** `GET /api/v1/webhooks/{id}/deliveries/` 200: attempts, newest first. */
export interface WebhookDeliveries { deliveries: WebhookDelivery[] }
/** Query of `GET /api/v1/webhooks/{id}/deliveries/`. */
export interface WebhookDeliveriesParams {
  /** Attempts to return, 1-100 (default 50). */
  limit?: number;
}

/** Every error answer's body (`Error` schema; docs/errors.md). */
export interface ErrorBody { error: string; code: string; details: unknown[] }

/** The tools of `POST /api/v1/tools/{name}/`. */
export type ToolName = 'seo-analyzer' | 'tech-detector' | 'lead-generation' | 'screenshot' | 'content-extractor' | 'broken-link-checker' | 'dns-whois' | 'ssl-checker';

/** Each tool's request body (the tool's own options; docs/tools.md). */
export interface ToolRequests {
  'seo-analyzer': { url: string };
  'tech-detector': { url: string; render?: boolean };
  'lead-generation': { url: string; follow_contact_pages?: boolean };
  screenshot: { url: string; format?: 'png' | 'jpeg' | 'webp'; full_page?: boolean; width?: number; height?: number; device_scale_factor?: number; delay?: number };
  'content-extractor': { url: string; format?: 'text' | 'markdown' };
  'broken-link-checker': { url: string; depth?: number; max_links?: number };
  'dns-whois': { url: string; servers?: string[] };
  'ssl-checker': { url: string; port?: number };
}

type Obj = Record<string, unknown>;

/** `seo-analyzer` 200 (`SeoReport`); nested objects are described in docs/tools.md. */
export interface SeoReport {
  url: string; status: number; content_type: string; title: string | null; meta_description: string | null;
  canonical: string | null; robots: Obj; lang: string | null; viewport: string | null; hreflang: Obj[];
  open_graph: Obj; twitter_card: Obj; structured_data: Obj; headings: Obj; word_count: number; links: Obj;
  images: Obj; robots_txt: Obj; audits: Array<Obj & { id: string }>; score: number; warnings: unknown[];
}
/** `tech-detector` 200 (`TechReport`). */
export interface TechReport { url: string; rendered: boolean; partial: boolean; technologies: Obj[] }
/** `lead-generation` 200 (`LeadsReport`). */
export interface LeadsReport { url: string; emails: Obj[]; phones: Obj[]; social: Obj[]; default_country: unknown; pages: Obj[] }
/** `content-extractor` 200 (`ContentReport`). */
export interface ContentReport {
  url: string; title: string | null; byline: string | null; published_time: string | null; site_name: string | null; lang: string | null;
  excerpt: string | null; text: string; html: string; word_count: number; reading_time_minutes: number; images: Obj[]; readerable: boolean;
  /** With `format: "markdown"`: the article as GitHub Flavored Markdown. */
  markdown?: string;
}
/** `broken-link-checker` 200 (`LinksReport`). */
export interface LinksReport { url: string; links: Obj[]; summary: Obj; limits: Obj }
/** `dns-whois` 200 (`DnsWhoisReport`). */
export interface DnsWhoisReport { url: string; host: string; host_type: string; domain: string | null; dns: Obj; error: unknown; dns_errors: unknown[]; ips: unknown[]; whois: Obj }
/** `ssl-checker` 200 (`SslReport`). */
export interface SslReport {
  url: string; host: string; port: number; certificate: Obj; chain: Obj[]; hostname_match: boolean; authorized: boolean;
  authorization_error: string | null; trust_store: string; protocol: string; cipher: Obj; protocols: Obj; ciphers: Obj;
  hsts: Obj; ocsp_stapled: boolean; grade: string; grade_ignoring_trust: string; score: Obj; findings: Obj[]; handshakes: number;
}
/** `screenshot` 200 with `Accept: application/json`: the stored image (`url` works for an hour without a key). */
export interface ScreenshotInfo { url: string; width: number; height: number; format: 'png' | 'jpeg' | 'webp'; bytes: number; expires_at: string }

/** Each tool's JSON answer. */
export interface ToolResponses {
  'seo-analyzer': SeoReport;
  'tech-detector': TechReport;
  'lead-generation': LeadsReport;
  screenshot: ScreenshotInfo;
  'content-extractor': ContentReport;
  'broken-link-checker': LinksReport;
  'dns-whois': DnsWhoisReport;
  'ssl-checker': SslReport;
}
