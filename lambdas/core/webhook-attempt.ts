/**
 * One delivery attempt of a webhook message (issue 26), as the Standard Webhooks spec describes it
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md): a signed JSON POST,
 * the back-off schedule between attempts, and what is worth retrying. The message's body and the signing secret are
 * made in ./webhook-events.ts, which every job's finishing transition loads: this module (undici, the guarded agent)
 * is loaded only by the webhook queue's consumer.
 *
 * Pure of the store and of the queue: the caller (the webhook queue's consumer) records each attempt
 * (WebhookDeliveryRecord, core/ports.ts) and schedules the next one.
 *
 * An attempt goes out through the outbound guard (net/guard.ts) like every other request the service makes on a
 * user's behalf: the URL is checked before anything else, and the socket connects only to an address the guard
 * accepted (net/fetch.ts `guardedAgent`), so a webhook host whose DNS later points inside is refused at delivery.
 * Redirects are not followed, at most {@link RESPONSE_BODY_READ_MAX_BYTES} of the answer are read, and the whole
 * attempt has a time limit.
 */
import type { Dispatcher } from 'undici';
import { Webhook } from 'standardwebhooks';
import { guardedAgent } from '../net/fetch.ts';
import type { OutboundGuard } from '../net/guard.ts';
import { cut } from './webhook-events.ts';

/**
 * Seconds to wait after a failed attempt before the next one: entry i follows attempt i + 1 (Svix's schedule,
 * the one the Standard Webhooks spec points to): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. So a message gets 8
 * attempts, the last 99,305 s (about 27.6 h) after the first, before it is given up.
 */
export const webhookRetryDelaysSeconds: readonly number[] = Object.freeze([5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]);

/** Attempts a message gets: the first and one per entry of {@link webhookRetryDelaysSeconds}. */
export const WEBHOOK_MAX_ATTEMPTS = webhookRetryDelaysSeconds.length + 1;

/**
 * The wait after a failed attempt, from {@link webhookRetryDelaysSeconds} with ±10% jitter (so that the retries of
 * many messages to one receiver that failed together do not come back together).
 * @param attempt the number of the attempt that just failed, 1 for the first.
 * @param random a source of numbers in [0, 1) (Math.random by default; 0.5 gives the schedule without jitter).
 * @returns whole seconds (at least 1), or null when that was the last attempt ({@link WEBHOOK_MAX_ATTEMPTS}).
 *   Delays above SQS's 900 s DelaySeconds are the caller's to split.
 * @throws RangeError when `attempt` is not a positive integer.
 */
export function nextAttemptDelaySeconds(attempt: number, random: () => number = Math.random): number | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer (got ${attempt})`);
  const base = webhookRetryDelaysSeconds[attempt - 1];
  if (base === undefined) return null;
  const factor = 1 + (random() * 2 - 1) * 0.1;
  return Math.max(1, Math.round(base * factor));
}

/** What one attempt came to. */
export interface WebhookAttemptResult {
  /** The receiver's HTTP status, or null when there was no answer (refused by the guard, unreachable, timed out). */
  status_code: number | null;
  /** ms from the start of the attempt to the answer's headers (or to the failure). */
  duration_ms: number;
  /**
   * null for a 2xx, else `code: message`, the code one of `http_status` (a non-2xx answer: `http_status: 500`),
   * `timeout`, `unreachable` (refused, reset, DNS, TLS), `bad_response` (not valid HTTP), `target_forbidden` (the
   * guard refused the URL or the address its name resolves to), `invalid_url`.
   */
  error: string | null;
  /** True when a later attempt may succeed ({@link isRetryable}). */
  retryable: boolean;
}

/** Error codes of {@link WebhookAttemptResult.error} that a later attempt may get past. */
const RETRYABLE_ERROR_CODES = new Set(['timeout', 'unreachable', 'bad_response']);

/**
 * Whether an attempt is worth another: yes on a time-out, a network failure (refused, reset, DNS failure, TLS), an
 * answer that is not HTTP, a 5xx and a 429; no on a 2xx (delivered), a 3xx (redirects are not followed: a receiver
 * must answer at its URL), any other 4xx, and `target_forbidden` (the guard refused the address, e.g. the host now
 * resolves to a private one: recorded, not retried).
 * @param result an attempt's `status_code` and `error` ({@link WebhookAttemptResult}).
 */
export function isRetryable(result: { status_code: number | null; error: string | null }): boolean {
  const s = result.status_code;
  if (s !== null) return s === 429 || (s >= 500 && s <= 599);
  if (result.error === null) return false;
  return RETRYABLE_ERROR_CODES.has(result.error.slice(0, result.error.indexOf(':')));
}

/** The most of a receiver's answer body read before the connection is dropped, bytes. */
export const RESPONSE_BODY_READ_MAX_BYTES = 4 * 1024;
/** The longest an answer's body is drained after its headers, ms (a receiver that drips it is cut off). */
const BODY_DRAIN_MAX_MS = 1_000;
/** Longest error message kept in an attempt's `error` (it comes from the receiver's side at times). */
const ERROR_MAX_CHARS = 300;

/** One guarded agent per guard, keep-alive between attempts; as many connections per receiver as attempts run at once (a local poller's 8, a Lambda batch's 10): an attempt never waits for another's connection, so its time-out is the receiver's. */
const agents = new WeakMap<OutboundGuard, Dispatcher>();

function agentFor(guard: OutboundGuard): Dispatcher {
  let agent = agents.get(guard);
  if (!agent) {
    // The attempt's own signal sets its time limit; these are only a ceiling.
    agent = guardedAgent(guard, { connections: 16, timeoutMs: 120_000, connectTimeoutMs: 10_000 });
    agents.set(guard, agent);
  }
  return agent;
}

/** Options of {@link attemptWebhookDelivery}. */
export interface WebhookAttemptOptions {
  /** The webhook's http(s) URL. */
  url: string;
  /** The webhook's secret, `whsec_…` ({@link newWebhookSecret}). */
  secret: string;
  /** The `webhook-id` header: the message's id, the same on every attempt (the receiver's idempotency key). */
  messageId: string;
  /**
   * The `webhook-timestamp` header (sent as whole seconds) and the signed time: the time of this attempt, not of
   * the message (receivers refuse timestamps more than 5 minutes off).
   */
  timestamp: Date;
  /** The body, JSON text ({@link webhookPayload}). */
  payload: string;
  /** Decides on the URL and on the address connected to. */
  guard: OutboundGuard;
  /** Time limit of the whole attempt (connection, request, answer's headers), ms. @default 10000 */
  timeoutMs?: number;
  /** The dispatcher to send through (tests); by default one guarded agent per guard, shared by attempts. */
  agent?: Dispatcher;
}

function cap(text: string): string {
  return cut(text, ERROR_MAX_CHARS);
}

/** The `error` of an attempt that got no answer. */
function failure(err: unknown, timedOut: boolean, timeoutMs: number): string {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  const message = String(e?.message ?? err);
  if (e?.code === 'target_forbidden' || e?.code === 'invalid_url') return cap(`${e.code}: ${message}`);
  if (timedOut || e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT') return `timeout: no answer within ${timeoutMs} ms`;
  if (e?.code === 'UND_ERR_CONNECT_TIMEOUT') return cap(`timeout: ${message}`);
  if (e?.code === 'HPE_INVALID_CONSTANT' || e?.name === 'HTTPParserError' || e?.code === 'UND_ERR_HEADERS_OVERFLOW'
    || e?.code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || e?.code === 'UND_ERR_INFO') {
    return cap(`bad_response: ${message}`);
  }
  return cap(`unreachable: ${message}`);
}

/**
 * Sends one attempt: POSTs `payload` to `url` with the Standard Webhooks headers `webhook-id`, `webhook-timestamp`
 * (integer seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>` from standardwebhooks' `sign`), and
 * `content-type: application/json`, `user-agent: scrape-ai-webhooks/1`.
 *
 * The guard checks the URL first (a refused one gets no socket); the connection goes through a guarded agent (the
 * address a name resolves to is checked too); no redirect is followed (a 3xx is a failure); at most
 * {@link RESPONSE_BODY_READ_MAX_BYTES} of the answer's body are read, for at most a second, then the connection is
 * dropped; the attempt is aborted at `timeoutMs`.
 *
 * **Example usage:**
 * ```ts
 * const r = await attemptWebhookDelivery({ url, secret, messageId: 'msg_2b…', timestamp: new Date(), payload, guard });
 * // {status_code: 204, duration_ms: 41, error: null, retryable: false}
 * ```
 * @returns the status (null without an answer), ms to the answer's headers, the error (null for a 2xx, else e.g.
 *   `http_status: 500`, `timeout: no answer within 10000 ms`, `target_forbidden: Refused http://10.0.0.1/: 10.0.0.1
 *   is a private address. …`, `unreachable: connect ECONNREFUSED 127.0.0.1:1`) and {@link isRetryable}'s verdict.
 *   Never rejects for anything the receiver or the network does.
 * @throws Error only for a secret standardwebhooks cannot read (not base64, empty).
 */
export async function attemptWebhookDelivery(opts: WebhookAttemptOptions): Promise<WebhookAttemptResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const signature = new Webhook(opts.secret).sign(opts.messageId, opts.timestamp, opts.payload);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const result = (status_code: number | null, error: string | null): WebhookAttemptResult =>
    ({ status_code, duration_ms: elapsed(), error, retryable: isRetryable({ status_code, error }) });

  let url: URL;
  try {
    url = opts.guard.checkUrl(opts.url);
  } catch (err) {
    return result(null, failure(err, false, timeoutMs));
  }
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Dispatcher.ResponseData;
  try {
    res = await (opts.agent ?? agentFor(opts.guard)).request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'scrape-ai-webhooks/1',
        'webhook-id': opts.messageId,
        'webhook-timestamp': String(Math.floor(opts.timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body: opts.payload,
      signal,
    });
  } catch (err) {
    return result(null, failure(err, signal.aborted, timeoutMs));
  }
  const status = res.statusCode;
  const answered = result(status, status >= 200 && status <= 299 ? null
    : `http_status: ${status}${status >= 300 && status <= 399 ? ' (redirects are not followed)' : ''}`);
  // The answer is not used: drain a little of it (so a short one leaves the connection reusable), then drop it.
  try {
    await res.body.dump({ limit: RESPONSE_BODY_READ_MAX_BYTES, signal: AbortSignal.any([signal, AbortSignal.timeout(BODY_DRAIN_MAX_MS)]) });
  } catch {
    // Aborted or broken mid-body: the status is what counts.
  } finally {
    if (!res.body.destroyed) res.body.destroy();
  }
  return answered;
}
