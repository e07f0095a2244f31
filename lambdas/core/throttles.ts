/**
 * Throttles on refused calls (docs/security.md): a caller that keeps sending what the service refuses
 * costs it work and gains nothing, so refusals are counted and, past a limit, the caller waits.
 *
 * - Bad requests: answers 400, 403 and 413 to an account's calls with a body (a config that does not
 *   parse, a plan that cannot run on the server) count against the account; past
 *   {@link ThrottleSettings.badRequestsPerWindow} in a window, its calls with a body are refused with 429
 *   `rate_limited` before their body is read. Reads (status polls) are never throttled here.
 * - Failed logins: counted per email (whether or not an account has it, so the answer tells nothing about
 *   which emails exist) and per client address; past either limit, logins for that email or from that
 *   address are refused with 429 `rate_limited`, correct password or not, until the window ends. A
 *   correct login resets its email's count. The address's count is not reset: an attacker's own account
 *   would otherwise reset it between guesses at other accounts.
 *
 * Windows are fixed (they start every {@link THROTTLE_WINDOW_MS} from the epoch), counted with the
 * store's atomic counters, so every Lambda instance and every thread sees the same counts.
 */
import { createHash } from 'node:crypto';
import { CodedError } from '../errors.ts';
import type { AccountRecord } from './ports.ts';
import type { Services } from './services.ts';

/** Length of a throttle window, ms. */
export const THROTTLE_WINDOW_MS = 15 * 60_000;

/**
 * Owner of the counters that belong to no account (failed logins per email and per address): account
 * ids start at 1, so 0 is never an account's.
 */
const SERVICE_COUNTERS = 0;

/** The limits of the throttles, per {@link THROTTLE_WINDOW_MS} window. 0 turns a throttle off. */
export interface ThrottleSettings {
  /** Refused calls with a body (400, 403, 413) per account. @default 100 */
  badRequestsPerWindow: number;
  /** Failed logins per email. @default 10 */
  failedLoginsPerEmail: number;
  /** Failed logins per client address. @default 100 */
  failedLoginsPerAddress: number;
}

export const DEFAULT_THROTTLES: ThrottleSettings = { badRequestsPerWindow: 100, failedLoginsPerEmail: 10, failedLoginsPerAddress: 100 };

/** HTTP statuses of answers that count as bad requests. */
const BAD_REQUEST_STATUSES: ReadonlySet<number> = new Set([400, 403, 413]);

/** The current window: its counter suffix and the seconds until it ends (at least 1). */
function window(svc: Services): { key: string; retryAfter: number; expiresAt: string } {
  const now = svc.clock.now().getTime();
  const start = now - (now % THROTTLE_WINDOW_MS);
  const end = start + THROTTLE_WINDOW_MS;
  return { key: new Date(start).toISOString().slice(0, 16), retryAfter: Math.max(1, Math.ceil((end - now) / 1000)), expiresAt: new Date(end + THROTTLE_WINDOW_MS).toISOString() };
}

function throttled(message: string, limit: number, retryAfter: number, reason: string): CodedError {
  return new CodedError('rate_limited', `${message}; retry in ${retryAfter} s`,
    [{ limit, window: `${THROTTLE_WINDOW_MS / 60_000} minutes`, retry_after_seconds: retryAfter, reason }],
    { 'Retry-After': String(retryAfter) });
}

/** Whether an answer with this HTTP status counts as a bad request. */
export function isBadRequestStatus(status: number): boolean {
  return BAD_REQUEST_STATUSES.has(status);
}

/**
 * Refuses the call when the account has made too many bad requests in this window.
 * @throws CodedError `rate_limited` (429, `Retry-After`) with details `[{limit, window, retry_after_seconds, reason: 'bad_requests'}]`.
 */
export async function assertBadRequestsUnderLimit(svc: Services, account: AccountRecord): Promise<void> {
  const limit = svc.throttles.badRequestsPerWindow;
  if (!limit) return;
  const w = window(svc);
  if ((await svc.store.getCounter(account.id, `bad:${w.key}`)) >= limit) {
    throw throttled(`Too many refused requests: ${limit} in ${THROTTLE_WINDOW_MS / 60_000} minutes (invalid bodies or configs, calls the plan does not allow); fix the request before sending it again`, limit, w.retryAfter, 'bad_requests');
  }
}

/** Counts one bad request of the account in this window. */
export async function countBadRequest(svc: Services, account: AccountRecord): Promise<void> {
  if (!svc.throttles.badRequestsPerWindow) return;
  const w = window(svc);
  await svc.store.consume(account.id, `bad:${w.key}`, 1, Number.MAX_SAFE_INTEGER, w.expiresAt);
}

/** Counter names of a login attempt: the email's (hashed: counters are not a list of emails) and the address's. */
function loginCounters(svc: Services, email: string, address: string): { email: string; address: string; w: ReturnType<typeof window> } {
  const w = window(svc);
  const digest = createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 22);
  return { email: `login-email:${digest}:${w.key}`, address: `login-addr:${address}:${w.key}`, w };
}

/**
 * Refuses a login for an email or from an address past its failed-login limit, before the password is checked.
 * @param address the client's address (API Gateway's `sourceIp`, the socket's locally).
 * @throws CodedError `rate_limited` (429, `Retry-After`), reason `failed_logins`.
 */
export async function assertLoginAllowed(svc: Services, email: string, address: string): Promise<void> {
  const { failedLoginsPerEmail: perEmail, failedLoginsPerAddress: perAddress } = svc.throttles;
  const c = loginCounters(svc, email, address);
  if (perEmail && (await svc.store.getCounter(SERVICE_COUNTERS, c.email)) >= perEmail) {
    throw throttled(`Too many failed logins for this email: ${perEmail} in ${THROTTLE_WINDOW_MS / 60_000} minutes`, perEmail, c.w.retryAfter, 'failed_logins');
  }
  if (perAddress && (await svc.store.getCounter(SERVICE_COUNTERS, c.address)) >= perAddress) {
    throw throttled(`Too many failed logins from this address: ${perAddress} in ${THROTTLE_WINDOW_MS / 60_000} minutes`, perAddress, c.w.retryAfter, 'failed_logins');
  }
}

/** Records the outcome of a login: a failure counts for its email and address; a success resets its email's count. */
export async function recordLogin(svc: Services, email: string, address: string, ok: boolean): Promise<void> {
  const c = loginCounters(svc, email, address);
  if (ok) {
    const failed = await svc.store.getCounter(SERVICE_COUNTERS, c.email);
    if (failed) await svc.store.refund(SERVICE_COUNTERS, c.email, failed);
    return;
  }
  await Promise.all([
    svc.store.consume(SERVICE_COUNTERS, c.email, 1, Number.MAX_SAFE_INTEGER, c.w.expiresAt),
    svc.store.consume(SERVICE_COUNTERS, c.address, 1, Number.MAX_SAFE_INTEGER, c.w.expiresAt),
  ]);
}
