/**
 * Webhooks (issue 26, docs/monitoring.md): an account's endpoints told when its jobs end, signed per the Standard
 * Webhooks specification (https://www.standardwebhooks.com, signing in ./webhook-attempt.ts).
 *
 * How a delivery travels:
 * 1. a job's finishing transition (core/job-states.ts) calls {@link announceJobEnd}: for each of the account's
 *    webhooks subscribed to the job's events (`job.completed`, `job.failed`, `job.changed`), one message goes on the
 *    `webhook` queue, carrying the payload, so every attempt sends the same bytes under the same `webhook-id`;
 * 2. the webhook queue's consumer (workers/webhook-queue-consumer.ts: a Lambda on AWS, a poller of the local
 *    service) calls {@link deliverWebhookMessage}: one attempt through the outbound guard (checked again at every
 *    attempt: DNS may have changed), recorded in the webhook's deliveries;
 * 3. an attempt that timed out or got a 5xx or 429 is sent again as a new message after the back-off of
 *    ./webhook-attempt.ts (about a day in all); a message not due yet waits on the queue in steps of at most 15 min
 *    (SQS DelaySeconds' limit; the local queue the same). After the last attempt the delivery is given up and recorded.
 * Jobs and the API never wait for a receiver: they only queue messages.
 */
import { randomUUID } from 'node:crypto';
import { CodedError } from '../errors.ts';
import { logger } from '../logger.ts';
import { parseTargetUrl } from './target-url.ts';
import { attemptWebhookDelivery, newWebhookSecret, nextAttemptDelaySeconds, webhookPayload } from './webhook-attempt.ts';
import { WEBHOOK_EVENTS, type JobRecord, type WebhookDeliveryRecord, type WebhookEvent, type WebhookRecord } from './ports.ts';
import type { Services } from './services.ts';

/** Body of POST /api/v1/webhooks/. */
export interface NewWebhook {
  url: string;
  events: WebhookEvent[];
}

/** Webhooks one account may have. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 10;
/** Longest webhook URL, characters. */
const MAX_URL_LENGTH = 2048;
/** Longest wait of one message on the queue, s (SQS DelaySeconds' maximum). */
export const MAX_QUEUE_DELAY_SECONDS = 900;

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

/** The API's view of a webhook (never its secret, which is shown once at creation). */
export function webhookView(w: WebhookRecord): Record<string, unknown> {
  return { id: w.id, url: w.url, events: w.events, created_at: w.created_at };
}

/** The API's view of one delivery attempt. */
export function webhookDeliveryView(d: WebhookDeliveryRecord): Record<string, unknown> {
  return {
    id: d.id, message_id: d.message_id, event: d.event, job_id: d.job_id, attempt: d.attempt, attempted_at: d.attempted_at,
    status_code: d.status_code, duration_ms: d.duration_ms, error: d.error, outcome: d.outcome, next_attempt_at: d.next_attempt_at,
  };
}

/**
 * Creates a webhook: the URL must be http(s) and its address one the outbound guard allows (an IP literal is checked
 * as is; a host name's current addresses are resolved and checked; a name that does not resolve yet is accepted and
 * checked at every delivery).
 * @returns the webhook and its signing secret (`whsec_…`), which is stored sealed and never shown again.
 * @throws CodedError `invalid_url`, `target_forbidden`, `invalid_request` (events, too many webhooks).
 */
export async function createWebhook(svc: Services, accountId: number, input: NewWebhook): Promise<{ webhook: WebhookRecord; secret: string }> {
  if (typeof input.url !== 'string' || input.url.length > MAX_URL_LENGTH) throw new CodedError('invalid_url', `url must be an http or https URL of at most ${MAX_URL_LENGTH} characters`, [{ url: String(input.url).slice(0, 100) }]);
  const url = parseTargetUrl(input.url);
  if (url.username || url.password) throw new CodedError('invalid_url', 'url must not carry a user name or password; put a token in its path or query instead', [{ url: url.origin }]);
  svc.guard.checkUrl(url);
  try {
    await svc.guard.resolveChecked(url.hostname.replace(/^\[|\]$/g, ''));
  } catch (err) {
    if ((err as CodedError).code === 'target_forbidden') throw err;
    // Unresolvable now: accepted, checked again at each delivery.
  }
  const events = [...new Set(input.events)];
  if ((await svc.store.listWebhooks(accountId)).length >= MAX_WEBHOOKS_PER_ACCOUNT) {
    throw new CodedError('invalid_request', `An account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first`, [{ path: '', message: 'too many webhooks' }]);
  }
  const secret = newWebhookSecret();
  const webhook: WebhookRecord = {
    id: randomUUID(), account_id: accountId, url: url.href, events, secret_sealed: (await svc.sealer()).seal(secret, accountId), created_at: svc.clock.now().toISOString(),
  };
  await svc.store.createWebhook(webhook);
  return { webhook, secret };
}

/** One webhook of the account. @throws CodedError `not_found`. */
export async function getWebhook(svc: Services, accountId: number, id: string): Promise<WebhookRecord> {
  const w = await svc.store.getWebhook(accountId, id);
  if (!w) throw new CodedError('not_found', `Webhook ${id} not found`);
  return w;
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
          webhook_id: w.id, account_id: w.account_id, message_id: `msg_${randomUUID()}`, event, job_id: job.id,
          payload: webhookPayload(event, job, svc.publicUrl ?? null), created_at: created, attempt: 1,
        };
        await svc.queue.send('webhook', JSON.stringify(m));
      }
    }
  } catch (err) {
    logger.error('webhook deliveries of a finished job not queued', { jobId: job.id, error: err });
  }
}

/** Whether a queue body is a {@link WebhookMessage}. */
export function isWebhookMessage(body: unknown): body is WebhookMessage {
  const m = body as WebhookMessage;
  return typeof m === 'object' && m !== null && typeof m.webhook_id === 'string' && typeof m.account_id === 'number' && typeof m.message_id === 'string'
    && (WEBHOOK_EVENTS as readonly string[]).includes(m.event) && typeof m.payload === 'string' && Number.isInteger(m.attempt) && m.attempt >= 1;
}

/**
 * One delivery of a webhook message: waits on the queue again when it is not due yet; else attempts it, records the
 * attempt, and queues the next attempt after the back-off when the attempt may be retried.
 * @returns what happened, for logs and tests. Store and queue errors are thrown (the queue delivers the message again).
 */
export async function deliverWebhookMessage(svc: Services, m: WebhookMessage): Promise<'waiting' | 'gone' | WebhookDeliveryRecord['outcome']> {
  const now = svc.clock.now();
  if (m.not_before && Date.parse(m.not_before) > now.getTime()) {
    const wait = Math.min(MAX_QUEUE_DELAY_SECONDS, Math.ceil((Date.parse(m.not_before) - now.getTime()) / 1000));
    await svc.queue.send('webhook', JSON.stringify(m), { delaySeconds: wait });
    return 'waiting';
  }
  const w = await svc.store.getWebhook(m.account_id, m.webhook_id);
  if (!w) return 'gone';
  const sealer = await svc.sealer();
  let secret: string | null = null;
  try {
    secret = sealer.open(w.secret_sealed, w.account_id);
  } catch {
    // The sealing secret was reset (`accounts reset-secret`): nothing can sign for this webhook any more.
  }
  const result = secret === null
    ? { status_code: null, duration_ms: 0, error: 'secret_unreadable: the signing secret no longer opens (the service\'s sealing secret was reset); delete this webhook and create it again', retryable: false }
    : await attemptWebhookDelivery({ url: w.url, secret, messageId: m.message_id, timestamp: now, payload: m.payload, guard: svc.guard });
  const delay = result.error === null ? null : result.retryable ? nextAttemptDelaySeconds(m.attempt) : null;
  const outcome: WebhookDeliveryRecord['outcome'] = result.error === null ? 'delivered' : delay !== null ? 'will_retry' : 'given_up';
  const nextAt = delay !== null ? new Date(now.getTime() + delay * 1000).toISOString() : null;
  await svc.store.addWebhookDelivery({
    id: randomUUID(), webhook_id: w.id, account_id: w.account_id, message_id: m.message_id, event: m.event, job_id: m.job_id, attempt: m.attempt,
    attempted_at: now.toISOString(), status_code: result.status_code, duration_ms: result.duration_ms, error: result.error, outcome, next_attempt_at: nextAt,
  });
  if (delay !== null) {
    const again: WebhookMessage = { ...m, attempt: m.attempt + 1, not_before: nextAt! };
    await svc.queue.send('webhook', JSON.stringify(again), { delaySeconds: Math.min(MAX_QUEUE_DELAY_SECONDS, delay) });
  }
  if (outcome === 'given_up') logger.info('webhook delivery given up', { webhookId: w.id, messageId: m.message_id, attempt: m.attempt, error: result.error });
  return outcome;
}
