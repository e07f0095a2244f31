/**
 * Webhooks (issue 26, docs/monitoring.md): an account's endpoints told when its jobs end, signed per the Standard
 * Webhooks specification (https://www.standardwebhooks.com, signing in ./webhook-attempt.ts). This module is the
 * API's side (create, read, views); the rest is in three modules, so that each bundle carries only what it runs.
 *
 * How a delivery travels:
 * 1. a job's finishing transition (core/job-states.ts) calls `announceJobEnd` (./webhook-events.ts): for each of the account's
 *    webhooks subscribed to the job's events (`job.completed`, `job.failed`, `job.changed`), one message goes on the
 *    `webhook` queue, carrying the payload, so every attempt sends the same bytes under the same `webhook-id`;
 * 2. the webhook queue's consumer (workers/webhook-queue-consumer.ts: a Lambda on AWS, a poller of the local
 *    service) calls `deliverWebhookMessage` (./webhook-delivery.ts): one attempt through the outbound guard (checked again at every
 *    attempt: DNS may have changed), recorded in the webhook's deliveries;
 * 3. an attempt that timed out or got a 5xx or 429 is sent again as a new message after the back-off of
 *    ./webhook-attempt.ts (about a day in all); a message not due yet waits on the queue in steps of at most 15 min
 *    (SQS DelaySeconds' limit; the local queue the same). After the last attempt the delivery is given up and recorded.
 * Jobs and the API never wait for a receiver: they only queue messages.
 */
import { randomUUID } from 'node:crypto';
import { CodedError } from '../errors.ts';
import { parseTargetUrl } from './target-url.ts';
import { newWebhookSecret } from './webhook-events.ts';
import type { WebhookDeliveryRecord, WebhookEvent, WebhookRecord } from './ports.ts';
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
 * The creation check of a webhook's host (delivery checks it again at every attempt): its current addresses must be
 * ones the guard allows. A name that does not resolve yet is accepted, except a name written with a trailing dot
 * (`localhost.`, `metadata.google.internal.`): an absolute name, which some resolvers answer (systemd-resolved gives
 * `localhost.` the loopback address) and others do not, so it must resolve now; the name without its dot is checked as
 * well (issue 37).
 * @throws CodedError `target_forbidden` (400).
 */
async function checkWebhookHost(svc: Services, url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const resolves = async (name: string): Promise<boolean> => {
    try {
      await svc.guard.resolveChecked(name);
      return true;
    } catch (err) {
      if ((err as CodedError).code === 'target_forbidden') throw err;
      return false;
    }
  };
  if (!host.endsWith('.')) {
    await resolves(host); // unresolvable now: accepted, checked again at each delivery
    return;
  }
  const [written] = await Promise.all([resolves(host), host.length > 1 ? resolves(host.slice(0, -1)) : Promise.resolve(false)]);
  if (!written) {
    throw new CodedError('target_forbidden', `Refused ${url.href}: ${host} does not resolve; a host name written with a trailing dot must resolve when its webhook is created (write it without the dot to create a webhook for a name that does not resolve yet)`, [{ url: url.href }]);
  }
}

/**
 * Creates a webhook: the URL must be http(s) and its address one the outbound guard allows (an IP literal is checked
 * as is; a host name's current addresses are resolved and checked; a name that does not resolve yet is accepted and
 * checked at every delivery, unless written with a trailing dot: {@link checkWebhookHost}).
 * @returns the webhook and its signing secret (`whsec_…`), which is stored sealed and never shown again.
 * @throws CodedError `invalid_url`, `target_forbidden`, `invalid_request` (events, too many webhooks).
 */
export async function createWebhook(svc: Services, accountId: number, input: NewWebhook): Promise<{ webhook: WebhookRecord; secret: string }> {
  if (typeof input.url !== 'string' || input.url.length > MAX_URL_LENGTH) throw new CodedError('invalid_url', `url must be an http or https URL of at most ${MAX_URL_LENGTH} characters`, [{ url: String(input.url).slice(0, 100) }]);
  const url = parseTargetUrl(input.url);
  if (url.username || url.password) throw new CodedError('invalid_url', 'url must not carry a user name or password; put a token in its path or query instead', [{ url: url.origin }]);
  svc.guard.checkUrl(url);
  await checkWebhookHost(svc, url);
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
