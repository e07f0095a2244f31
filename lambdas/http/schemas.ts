/**
 * JSON Schemas of the API's request bodies and of the plain routes' answers (docs/spec.md shapes; the views of
 * lambdas/core/accounts.ts, configs.ts, jobs.ts and metering.ts). The route table (lambdas/routes.ts) names them
 * per route; lambdas/http/middleware.ts validates bodies with them and scripts/openapi.ts puts them in
 * docs/openapi.json. Light on purpose: every handler's bundle holds this module through the route table, so it
 * imports no tool module (tools' answer schemas are named by reference, see `toolReport` in routes.ts).
 */
import { MAX_EXAMPLE_URLS, MAX_PROMPT_CHARS } from '../core/generate-jobs.ts';
import { screenshotBodySchema, screenshotStoredSchema } from '../tools/screenshot.ts';

/** A JSON Schema (draft 2020-12 keywords that ajv 8's default class also compiles in strict mode). */
export type JSONSchema = Record<string, unknown>;

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** A UUID (ids of configs, jobs, schedules, webhooks). */
export const uuid = { type: 'string', pattern: UUID_PATTERN } as const;
/** ISO 8601 UTC time, as the store writes it (`Date.toISOString()`). */
const time = { type: 'string', minLength: 1 } as const;
const count = { type: 'integer', minimum: 0 } as const;

// ---- request bodies ----

/** POST /api/v1/auth/login/. */
export const loginBody = {
  type: 'object',
  required: ['email', 'password'],
  properties: { email: { type: 'string', minLength: 1, maxLength: 320 }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
} as const;

/** POST /api/v1/configs/. */
export const configCreateBody = {
  type: 'object',
  required: ['name', 'target_url', 'yaml_content'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    target_url: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://\\S+$' },
    yaml_content: { type: 'string', minLength: 1 },
    prompt: { type: ['string', 'null'], maxLength: 10000 },
  },
} as const;

/** PUT /api/v1/configs/{id}/ and POST /api/v1/configs/validate/: the YAML only. */
export const configYamlBody = {
  type: 'object',
  required: ['yaml_content'],
  additionalProperties: false,
  properties: { yaml_content: { type: 'string', minLength: 1 } },
} as const;

/** 200 of POST /api/v1/configs/validate/: the config is valid; its fields' names in order. */
export const configValidAnswer = {
  type: 'object',
  required: ['valid', 'fields'],
  additionalProperties: false,
  properties: { valid: { const: true }, fields: { type: 'array', items: { type: 'string' } } },
} as const;

/** POST /api/v1/generate/. */
export const generateBody = {
  type: 'object',
  required: ['url', 'prompt'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    prompt: { type: 'string', minLength: 1, maxLength: MAX_PROMPT_CHARS },
    example_urls: {
      type: 'array', maxItems: MAX_EXAMPLE_URLS, items: { type: 'string', minLength: 1, maxLength: 2048 },
      description: `Other pages made from the same template as \`url\` (more listing pages, other searches of the site), at most ${MAX_EXAMPLE_URLS}: the generator `
        + 'reads them to tell the records from the template\'s furniture and tries the config on them. Each is checked by the outbound guard (400 `target_forbidden`)',
    },
    run: {
      type: 'boolean', default: false,
      description: 'Run the saved config once it is generated: the job\'s status then carries `run_job_id`, a normal, metered run job that gives all the rows '
        + '(needs a plan with server execution). Without it the generate job\'s rows are a trial of the first pages only',
    },
    config_id: {
      ...uuid,
      description: 'A saved config of the same URL whose YAML (and prompt) the generated config replaces, keeping its id and name; without it a new config is saved, '
        + 'named with a suffix (" (2)") when the name is taken',
    },
  },
} as const;

/** POST /api/v1/run/: exactly one of the two (checked by core/run-jobs.ts, `invalid_request` otherwise). */
export const runBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    config_id: uuid,
    yaml_content: { type: 'string', minLength: 1 },
  },
} as const;

/**
 * A tool's body: `{url}` and the tool's own optional parameters, by name (docs/spec.md "Tool request").
 * **Example usage:** `toolBody({ render: { type: 'boolean' } })`.
 */
function toolBody(extra: Record<string, JSONSchema> = {}): JSONSchema {
  return {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: { url: { type: 'string', minLength: 1, maxLength: 2048 }, ...extra },
  };
}

/**
 * The broken-link checker's bounds on `depth` and `max_links` (the same numbers as `LINK_CHECK_DEFAULTS` of
 * lambdas/tools/links.ts, which test/unit/openapi.test.ts checks; repeated here so that the route table does not
 * import the checker).
 */
export const LINK_CHECK_BOUNDS = { maxDepth: 3, maxMaxLinks: 10_000 } as const;

/** The tools' bodies by route path segment. */
export const toolBodies = {
  'seo-analyzer': toolBody(),
  'tech-detector': toolBody({ render: { type: 'boolean' } }),
  'lead-generation': toolBody({ follow_contact_pages: { type: 'boolean' } }),
  screenshot: screenshotBodySchema as JSONSchema,
  'content-extractor': toolBody({
    format: { type: 'string', enum: ['text', 'markdown'], default: 'text', description: '`markdown`: the answer also carries the article as GitHub Flavored Markdown (`markdown`)' },
  }),
  'broken-link-checker': toolBody({
    depth: { type: 'integer', minimum: 0, maximum: LINK_CHECK_BOUNDS.maxDepth },
    max_links: { type: 'integer', minimum: 1, maximum: LINK_CHECK_BOUNDS.maxMaxLinks },
  }),
  'dns-whois': toolBody({
    servers: {
      type: 'array', minItems: 1, maxItems: 4, items: { type: 'string', minLength: 1, maxLength: 64 },
      description: 'DNS servers to ask instead of the service\'s resolvers: `IP`, `IP:53`, `[IPv6]` or `[IPv6]:53` (port 53 only; docs/tools.md "DNS server ports")',
    },
  }),
  'ssl-checker': toolBody({
    port: { type: 'integer', minimum: 1, maximum: 65535, description: 'The port to check (default: the URL\'s, else 443); other than 443 only on plans with `ssl_checker_any_port`, else 403 `plan_required`' },
  }),
} as const satisfies Record<string, JSONSchema>;

// ---- answers ----

/** 200 of POST /api/v1/auth/login/. */
export const loginAnswer = {
  type: 'object',
  required: ['api_key', 'email', 'plan'],
  additionalProperties: false,
  properties: { api_key: { type: 'string', pattern: '^sai_' }, email: { type: 'string' }, plan: { type: 'string' } },
} as const;

/** 200 of GET /api/v1/me/: the user and the subscription (credit plans or scrape plans, docs/plans.md). */
export const meAnswer = {
  type: 'object',
  required: ['user', 'subscription'],
  additionalProperties: false,
  properties: {
    user: {
      type: 'object',
      required: ['id', 'email', 'first_name', 'last_name'],
      additionalProperties: false,
      properties: { id: { type: 'integer', minimum: 1 }, email: { type: 'string' }, first_name: { type: 'string' }, last_name: { type: 'string' } },
    },
    subscription: {
      type: 'object',
      required: ['plan', 'has_api_access', 'has_server_execution'],
      additionalProperties: false,
      properties: {
        plan: { type: 'string' },
        credits_remaining: { type: 'number', minimum: 0 },
        credits_per_month: { type: 'number', minimum: 0 },
        yaml_generations_remaining: count,
        monthly_scrapes_remaining: count,
        has_api_access: { type: 'boolean' },
        has_server_execution: { type: 'boolean' },
      },
    },
  },
} as const;

const configItemProperties = { id: uuid, name: { type: 'string' }, target_url: { type: 'string' }, created_at: time } as const;

/** 200 of GET /api/v1/configs/. */
export const configListAnswer = {
  type: 'object',
  required: ['count', 'results'],
  additionalProperties: false,
  properties: {
    count,
    results: {
      type: 'array',
      items: { type: 'object', required: ['id', 'name', 'target_url', 'created_at'], additionalProperties: false, properties: configItemProperties },
    },
  },
} as const;

/** A config with its YAML: 201 of POST /api/v1/configs/, 200 of GET /api/v1/configs/{id}/. */
export const configAnswer = {
  type: 'object',
  required: ['id', 'name', 'target_url', 'yaml_content', 'prompt', 'created_at'],
  additionalProperties: false,
  properties: { ...configItemProperties, yaml_content: { type: 'string' }, prompt: { type: ['string', 'null'] } },
} as const;

const jobStatus = { type: 'string', enum: ['pending', 'analyzing', 'generating', 'validating', 'running', 'completed', 'failed'] } as const;
const jobType = { type: 'string', enum: ['run', 'generate'] } as const;
const progress = { type: 'integer', minimum: 0, maximum: 100 } as const;

/** 202 of POST /api/v1/run/ and /generate/: the pending job (a generate job adds its target and time). */
export const jobCreatedAnswer = {
  type: 'object',
  required: ['id', 'status', 'progress', 'job_type'],
  additionalProperties: false,
  properties: {
    id: uuid, status: jobStatus, progress, job_type: jobType, target_url: { type: 'string' }, created_at: time,
    existing_config: {
      type: 'object', required: ['id', 'name'], additionalProperties: false, properties: { id: uuid, name: { type: 'string' } },
      description: 'A generate without `config_id`: a config of the account with the same URL and prompt, which this generate does not replace '
        + '(pass its id as `config_id` to replace its YAML instead)',
    },
  },
} as const;

const jobSummaryProperties = {
  id: uuid,
  status: jobStatus,
  progress,
  job_type: jobType,
  target_url: { type: 'string' },
  status_message: { type: 'string' },
  items_found: count,
  pages_scraped: { ...count, description: 'Pages the run loaded and read: listing pages and in-page pagination steps, detail pages, the categories\' index page; failed pages are warnings, not counted (docs/crawler.md). A generate job: its trial\'s' },
  api_discovered: { type: 'boolean' },
  created_at: time,
  completed_at: time,
  config_id: { anyOf: [uuid, { type: 'null' }], description: 'The saved config the job runs (a run) or saved (a generate job, once completed); null for inline YAML' },
  config_name: { type: ['string', 'null'], description: 'The name of that config when the job was made (a saved config\'s name, an inline YAML\'s `name:`, a generate job\'s saved config); null when none' },
  warning_count: { ...count, description: 'Warnings of a finished run (problems that did not fail it); the job\'s status lists them in `warnings`' },
  run_job_id: { anyOf: [uuid, { type: 'null' }], description: 'A generate job made with `run: true`: the run job of the saved config it started on completion (null until then); absent for other jobs' },
  run_error: { type: 'string', description: 'A generate job made with `run: true` whose run could not start: `code: message`' },
} as const;
const jobSummaryRequired = ['id', 'status', 'progress', 'job_type', 'target_url', 'status_message', 'items_found', 'pages_scraped', 'api_discovered', 'created_at', 'config_id', 'config_name', 'warning_count'];

/** A scraped row: the config's fields, whatever they are. */
const row = { type: 'object' } as const;

/** 200 of GET /api/v1/jobs/: a page of the caller's jobs, newest first. */
export const jobListAnswer = {
  type: 'object',
  required: ['count', 'next_cursor', 'results'],
  additionalProperties: false,
  properties: {
    count,
    next_cursor: { type: ['string', 'null'] },
    results: { type: 'array', items: { type: 'object', required: jobSummaryRequired, additionalProperties: false, properties: jobSummaryProperties } },
  },
} as const;

/** 200 of GET /api/v1/jobs/{id}/status/: the job, a preview of its rows and the YAML it runs. */
/**
 * What a completed run of a saved config changed against the config's previous completed run (issue 26,
 * docs/monitoring.md); absent for other jobs and before completion (their answer keeps docs/spec.md's shape), and a run
 * with nothing to compare with shows `compared_with: null`.
 */
const jobChangesSummary = {
  anyOf: [
    {
      type: 'object',
      required: ['added', 'removed', 'changed', 'compared_with'],
      additionalProperties: false,
      properties: { added: count, removed: count, changed: count, compared_with: { anyOf: [uuid, { type: 'null' }] } },
    },
    { type: 'null' },
  ],
} as const;

export const jobStatusAnswer = {
  type: 'object',
  required: [...jobSummaryRequired, 'results', 'yaml_config', 'warnings'],
  additionalProperties: false,
  properties: {
    ...jobSummaryProperties,
    changes: jobChangesSummary,
    warnings: {
      type: 'array', items: { type: 'string' },
      description: 'A finished run\'s warnings, in the order of the pages they are about, each naming its page once (at most 200, each at most 500 characters); [] otherwise',
    },
    results: {
      type: 'object',
      required: ['data', 'row_count'],
      additionalProperties: false,
      properties: { data: { type: 'array', items: row }, row_count: count },
    },
    yaml_config: {
      type: 'object',
      required: ['id', 'yaml_content'],
      additionalProperties: false,
      properties: { id: { anyOf: [uuid, { type: 'null' }] }, yaml_content: { type: 'string' } },
    },
  },
} as const;

/** One row of GET /api/v1/jobs/{id}/changes/: a row added or removed, or a row changed with its fields' old and new values. */
const rowChange = {
  type: 'object',
  required: ['change', 'row'],
  additionalProperties: false,
  properties: {
    change: { type: 'string', enum: ['added', 'removed', 'changed'] },
    /** The row (for `removed`, as the previous run had it). */
    row,
    /** `changed`: the key fields' values. */
    key: { type: 'object' },
    /** `changed`: each field that differs, `{old, new}`. */
    fields: { type: 'object', additionalProperties: { type: 'object', required: ['old', 'new'], properties: { old: {}, new: {} } } },
  },
} as const;

/** 200 of GET /api/v1/jobs/{id}/changes/ (issue 26): the counts, and one page of the changes. */
export const jobChangesAnswer = {
  type: 'object',
  required: ['job_id', 'compared_with', 'key_fields', 'added', 'removed', 'changed', 'total', 'offset', 'limit', 'results', 'message'],
  additionalProperties: false,
  properties: {
    job_id: uuid,
    compared_with: { anyOf: [uuid, { type: 'null' }] },
    key_fields: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] },
    added: count,
    removed: count,
    changed: count,
    /** Changes of the kind asked for (`?change=`), all kinds by default. */
    total: count,
    offset: count,
    limit: count,
    results: { type: 'array', items: rowChange },
    message: { type: 'string' },
  },
} as const;

/** POST /api/v1/schedules/ (issue 26, docs/monitoring.md). */
export const scheduleCreateBody = {
  type: 'object',
  required: ['config_id', 'cron'],
  additionalProperties: false,
  properties: {
    config_id: uuid,
    cron: { type: 'string', minLength: 1, maxLength: 200, description: '5-field cron: minute hour day-of-month month day-of-week (or @hourly, @daily, …)' },
    timezone: { type: 'string', minLength: 1, maxLength: 100, default: 'UTC', description: 'IANA time zone of the cron times' },
    enabled: { type: 'boolean', default: true },
  },
} as const;

/** PUT /api/v1/schedules/{id}/: the fields to change, at least one. */
export const scheduleUpdateBody = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: {
    cron: scheduleCreateBody.properties.cron,
    timezone: { type: 'string', minLength: 1, maxLength: 100 },
    enabled: { type: 'boolean' },
  },
} as const;

const nullableTime = { anyOf: [time, { type: 'null' }] } as const;

/** A schedule as the API shows it. */
export const scheduleAnswer = {
  type: 'object',
  required: ['id', 'config_id', 'cron', 'timezone', 'enabled', 'next_run_at', 'last_fired_at', 'paused', 'fired_count', 'skipped_count', 'recent_jobs', 'created_at', 'updated_at'],
  additionalProperties: false,
  properties: {
    id: uuid,
    config_id: uuid,
    cron: { type: 'string' },
    timezone: { type: 'string' },
    enabled: { type: 'boolean' },
    next_run_at: nullableTime,
    last_fired_at: nullableTime,
    paused: {
      anyOf: [
        { type: 'object', required: ['code', 'message', 'at'], additionalProperties: false, properties: { code: { type: 'string' }, message: { type: 'string' }, at: time } },
        { type: 'null' },
      ],
    },
    fired_count: count,
    skipped_count: count,
    recent_jobs: { type: 'array', items: { type: 'object', required: ['job_id', 'scheduled_for'], additionalProperties: false, properties: { job_id: uuid, scheduled_for: time } } },
    created_at: time,
    updated_at: time,
  },
} as const;

/** 200 of GET /api/v1/schedules/. */
export const scheduleListAnswer = { type: 'object', required: ['schedules'], additionalProperties: false, properties: { schedules: { type: 'array', items: scheduleAnswer } } } as const;

const webhookEvent = { type: 'string', enum: ['job.completed', 'job.failed', 'job.changed'] } as const;

/** POST /api/v1/webhooks/ (issue 26). */
export const webhookCreateBody = {
  type: 'object',
  required: ['url', 'events'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://\\S+$' },
    events: { type: 'array', minItems: 1, maxItems: 3, uniqueItems: true, items: webhookEvent },
  },
} as const;

const webhookProperties = { id: uuid, url: { type: 'string' }, events: { type: 'array', items: webhookEvent }, created_at: time } as const;

/** A webhook as the API shows it (no secret). */
export const webhookAnswer = { type: 'object', required: ['id', 'url', 'events', 'created_at'], additionalProperties: false, properties: webhookProperties } as const;

/** 201 of POST /api/v1/webhooks/: the webhook and its signing secret, shown this once. */
export const webhookCreatedAnswer = {
  type: 'object',
  required: ['id', 'url', 'events', 'created_at', 'secret'],
  additionalProperties: false,
  properties: { ...webhookProperties, secret: { type: 'string', pattern: '^whsec_', description: 'The Standard Webhooks signing secret; shown only in this answer' } },
} as const;

/** 200 of GET /api/v1/webhooks/. */
export const webhookListAnswer = { type: 'object', required: ['webhooks'], additionalProperties: false, properties: { webhooks: { type: 'array', items: webhookAnswer } } } as const;

/** One delivery attempt. */
const webhookDelivery = {
  type: 'object',
  required: ['id', 'message_id', 'event', 'job_id', 'attempt', 'attempted_at', 'status_code', 'duration_ms', 'error', 'outcome', 'next_attempt_at'],
  additionalProperties: false,
  properties: {
    id: uuid,
    message_id: { type: 'string', description: 'The webhook-id header: the same on every attempt of one message' },
    event: webhookEvent,
    job_id: uuid,
    attempt: { type: 'integer', minimum: 1 },
    attempted_at: time,
    status_code: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    duration_ms: count,
    error: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    outcome: { type: 'string', enum: ['delivered', 'will_retry', 'given_up'] },
    next_attempt_at: nullableTime,
  },
} as const;

/** 200 of GET /api/v1/webhooks/{id}/deliveries/: attempts, newest first. */
export const webhookDeliveriesAnswer = { type: 'object', required: ['deliveries'], additionalProperties: false, properties: { deliveries: { type: 'array', items: webhookDelivery } } } as const;

/** 200 of GET /api/v1/jobs/{id}/results/ without `format`: one entry with every row; `[]` for a failed job. */
export const jobResultsAnswer = {
  type: 'array',
  maxItems: 1,
  items: {
    type: 'object',
    required: ['data', 'row_count'],
    additionalProperties: false,
    properties: { data: { type: 'array', items: row }, row_count: count },
  },
} as const;

/** 200 of GET /api/v1/jobs/{id}/results/?format=json: the rows alone. */
export const jobRowsAnswer = { type: 'array', items: row } as const;

/** 200 of POST /api/v1/tools/screenshot/ with `Accept: application/json`. */
export const screenshotStoredAnswer: JSONSchema = screenshotStoredSchema;

/** The error body of every refusal (docs/architecture.md "Errors", docs/errors.md). */
export const errorBody = {
  type: 'object',
  required: ['error', 'code', 'details'],
  additionalProperties: false,
  properties: {
    error: { type: 'string', description: 'What was wrong, for people' },
    code: { type: 'string', description: 'The machine code (docs/errors.md)' },
    details: { type: 'array', description: "The code's structured details (docs/errors.md), often empty" },
  },
} as const;
