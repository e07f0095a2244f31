/**
 * What a finished job tells the account's webhooks (issue 26, docs/monitoring.md): the events it raises, the message
 * body, and the queue message of each delivery. Loaded by every job's finishing transition (core/job-states.ts), so it
 * stays small: no HTTP client (the attempt itself is ./webhook-attempt.ts, loaded only by the webhook queue's consumer).
 */
import crypto from 'node:crypto';
import { logger } from '../logger.ts';
import { WEBHOOK_EVENTS, type JobChanges, type JobRecord, type WebhookEvent } from './ports.ts';
import type { Services } from './services.ts';

/**
 * A new signing secret: `whsec_` followed by the base64 of 32 random bytes (crypto.randomBytes), the form
 * standardwebhooks' `new Webhook(secret)` accepts (the spec: 24 to 64 bytes of key, base64, `whsec_` prefixed).
 * @returns e.g. `whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/5y+RpM2A6s=` (50 characters).
 */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/** `text` cut to `max` UTF-16 units with an ellipsis, never between the halves of a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
  return `${text.slice(0, end)}…`;
}

/** A message of the `webhook` queue: one delivery of one event to one webhook, at one attempt. */
export interface WebhookMessage {
  webhook_id: string;
  account_id: number;
  /** The `webhook-id` header, the same on every attempt. */
  message_id: string;
  event: WebhookEvent;
  job_id: string;
  /** The JSON text sent (./webhook-attempt.ts `webhookPayload`). */
  payload: string;
  /** ISO 8601 UTC, the `webhook-timestamp` of the first attempt's message (each attempt signs its own time). */
  created_at: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** ISO 8601 UTC: not attempted before this (a back-off longer than one queue delay). */
  not_before?: string;
}

/** The events a finished job raises: `job.completed` or `job.failed`, and `job.changed` for a completed run with any change. */
export function jobEvents(job: Pick<JobRecord, 'status' | 'changes'>): WebhookEvent[] {
  if (job.status === 'failed') return ['job.failed'];
  if (job.status !== 'completed') return [];
  const c = job.changes;
  return c && c.compared_with && c.added + c.removed + c.changed > 0 ? ['job.completed', 'job.changed'] : ['job.completed'];
}

/**
 * Queues the deliveries of a finished job's events to the account's webhooks. Errors are logged, never thrown: a
 * webhook never fails a job.
 * @param job the job as its finishing transition left it.
 */
export async function announceJobEnd(svc: Pick<Services, 'store' | 'queue' | 'clock'> & { publicUrl?: string }, job: JobRecord): Promise<void> {
  try {
    const events = jobEvents(job);
    if (!events.length) return;
    const webhooks = await svc.store.listWebhooks(job.account_id);
    if (!webhooks.length) return;
    const created = svc.clock.now().toISOString();
    for (const w of webhooks) {
      for (const event of events.filter((e) => w.events.includes(e))) {
        const m: WebhookMessage = {
          webhook_id: w.id, account_id: w.account_id, message_id: messageId(job.id, w.id, event), event, job_id: job.id,
          payload: webhookPayload(event, job, svc.publicUrl ?? null), created_at: created, attempt: 1,
        };
        await svc.queue.send('webhook', JSON.stringify(m), { group: webhookGroup(w.account_id) });
      }
    }
  } catch (err) {
    logger.error('webhook deliveries of a finished job not queued', { jobId: job.id, error: err });
  }
}

/**
 * The `webhook-id` of one event of one job to one webhook: `msg_` and 32 hex digits of SHA-256 of the three, so that
 * the same event announced again (a redelivered job message that finishes the job again cannot, but an operator's
 * replay could) carries the same id and receivers' deduplication holds.
 */
export function messageId(jobId: string, webhookId: string, event: WebhookEvent): string {
  return `msg_${crypto.createHash('sha256').update(`${jobId}/${webhookId}/${event}`).digest('hex').slice(0, 32)}`;
}

/**
 * The queue group of an account's webhook messages (SendOptions.group; issue 37: it was the webhook, so an account
 * with 10 webhooks that hang weighed as 10 tenants): the local queue hands out at most a few of one group at once and
 * serves the groups in turn (its poller also limits each webhook inside its account's group,
 * adapters/local/webhook-poller.ts), and SQS fair queues take it as the MessageGroupId, the tenant whose backlog
 * must not delay another's. Prefixed so it never meets an account's job group.
 */
export function webhookGroup(accountId: number): string {
  return `webhook:${accountId}`;
}

/** Whether a queue body is a {@link WebhookMessage}. */
export function isWebhookMessage(body: unknown): body is WebhookMessage {
  const m = body as WebhookMessage;
  return typeof m === 'object' && m !== null && typeof m.webhook_id === 'string' && typeof m.account_id === 'number' && typeof m.message_id === 'string'
    && (WEBHOOK_EVENTS as readonly string[]).includes(m.event) && typeof m.payload === 'string' && Number.isInteger(m.attempt) && m.attempt >= 1;
}

/** The facts of a job a webhook message carries (a JobRecord has them all). */
export type WebhookJobFacts = Pick<JobRecord, 'id' | 'config_id' | 'status' | 'job_type' | 'row_count' | 'items_found'
  | 'pages_scraped' | 'completed_at' | 'status_message'> & { schedule_id?: string | null; changes?: JobChanges | null };

/** Characters of a job's status message a webhook message carries. */
export const WEBHOOK_STATUS_MESSAGE_MAX_CHARS = 500;

/**
 * The body of a webhook message about a job, in the spec's recommended shape `{type, timestamp, data}`:
 * ```
 * {type: "job.completed", timestamp: "2025-…Z",
 *  data: {job_id, job_type, config_id, schedule_id, status, row_count, items_found, pages_scraped, completed_at,
 *         status_message, changes: {added, removed, changed, compared_with} | null,
 *         links: {status, results, changes}}}
 * ```
 * `timestamp` is when the event happened (the job's `completed_at`, else now); `status_message` is cut to
 * {@link WEBHOOK_STATUS_MESSAGE_MAX_CHARS} characters; `links` are `${baseUrl}/api/v1/jobs/<id>/status/` (and
 * `results/`, `changes/`), or paths from `/api/v1/…` when the base URL is not known; `results` is null unless the
 * job completed, `changes` null unless the job has changes. Ids are the service's own, so the body stays under
 * 2 KB (plus the base URL's length).
 * @param baseUrl the service's public origin (a trailing slash is dropped), or null.
 */
export function webhookPayload(event: WebhookEvent, job: WebhookJobFacts, baseUrl: string | null, now: Date = new Date()): string {
  const base = baseUrl ? baseUrl.replace(/\/+$/, '') : '';
  const link = (what: string) => `${base}/api/v1/jobs/${encodeURIComponent(job.id)}/${what}/`;
  const message = cut(job.status_message, WEBHOOK_STATUS_MESSAGE_MAX_CHARS);
  const changes = job.changes
    ? { added: job.changes.added, removed: job.changes.removed, changed: job.changes.changed, compared_with: job.changes.compared_with }
    : null;
  return JSON.stringify({
    type: event,
    timestamp: job.completed_at ?? now.toISOString(),
    data: {
      job_id: job.id,
      job_type: job.job_type,
      config_id: job.config_id,
      schedule_id: job.schedule_id ?? null,
      status: job.status,
      row_count: job.row_count,
      items_found: job.items_found,
      pages_scraped: job.pages_scraped,
      completed_at: job.completed_at,
      status_message: message,
      changes,
      links: {
        status: link('status'),
        results: job.status === 'completed' ? link('results') : null,
        changes: changes ? link('changes') : null,
      },
    },
  });
}
