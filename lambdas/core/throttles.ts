/**
 * Throttles on refused calls (docs/security.md): a caller that keeps sending what the service refuses
 * costs it work and gains nothing, so refusals are counted and, past a limit, the caller waits.
 *
 * - Bad requests: answers 400, 403 and 413 to an account's calls with a body (a config that does not
 *   parse, a plan that cannot run on the server) count against the account; past
 *   {@link ThrottleSettings.badRequestsPerWindow} in a window, its calls with a body are refused with 429
 *   `rate_limited` before their body is parsed. Reads (status polls) are never throttled here.
 * - Both take their slot before the work (an atomic `consume` under the limit) and give it back when the
 *   call was not refused, so requests sent at once cannot all pass a check made before any was counted.
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
import { fixedWindow } from './fixed-window.ts';
import type { AccountRecord } from './ports.ts';
import type { Services, ThrottleSettings } from './services.ts';

/** Length of a throttle window, ms. */
export const THROTTLE_WINDOW_MS = 15 * 60_000;

/**
 * Owner of the counters that belong to no account (failed logins per email and per address): account
 * ids start at 1, so 0 is never an account's.
 */
const SERVICE_COUNTERS = 0;

export const DEFAULT_THROTTLES: ThrottleSettings = { badRequestsPerWindow: 100, failedLoginsPerEmail: 10, failedLoginsPerAddress: 100 };

/** HTTP statuses of answers that count as bad requests. */
const BAD_REQUEST_STATUSES: ReadonlySet<number> = new Set([400, 403, 413]);

/** The current window: its counter suffix, the seconds until it ends (at least 1), and when its counters may go (a window later). */
function window(svc: Services): { key: string; retryAfter: number; expiresAt: string } {
  const w = fixedWindow(svc.clock.now(), THROTTLE_WINDOW_MS);
  return { key: w.key, retryAfter: w.retryAfterSeconds, expiresAt: new Date(w.end.getTime() + THROTTLE_WINDOW_MS).toISOString() };
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
 * Takes a slot of the account's bad-request allowance before the call does any work, so that calls sent at
 * once cannot all pass a check made before any of them is counted. Give it back with
 * {@link releaseBadRequestSlot} when the call turns out not to be refused.
 * @returns whether a slot was taken (false when the throttle is off).
 * @throws CodedError `rate_limited` (429, `Retry-After`) with details `[{limit, window, retry_after_seconds, reason: 'bad_requests'}]`
 *   when the account has no slot left in this window.
 */
export async function reserveBadRequestSlot(svc: Services, account: AccountRecord): Promise<boolean> {
  const limit = svc.throttles.badRequestsPerWindow;
  if (!limit) return false;
  const w = window(svc);
  const { ok } = await svc.store.consume(account.id, `bad:${w.key}`, 1, limit, w.expiresAt);
  if (!ok) {
    throw throttled(`Too many refused requests: ${limit} in ${THROTTLE_WINDOW_MS / 60_000} minutes (invalid bodies or configs, calls the plan does not allow); fix the request before sending it again`, limit, w.retryAfter, 'bad_requests');
  }
  return true;
}

/** Gives back a slot taken by {@link reserveBadRequestSlot}: the call was not refused. */
export async function releaseBadRequestSlot(svc: Services, account: AccountRecord): Promise<void> {
  await svc.store.refund(account.id, `bad:${window(svc).key}`, 1);
}

/** Counter names of a login attempt: the email's (hashed: counters are not a list of emails) and the address's. */
function loginCounters(svc: Services, email: string, address: string): { email: string; address: string; w: ReturnType<typeof window> } {
  const w = window(svc);
  const digest = createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 22);
  return { email: `login-email:${digest}:${w.key}`, address: `login-addr:${address}:${w.key}`, w };
}

/** A login attempt that holds a slot of its email's and its address's failed-login allowance. */
export interface LoginAttempt {
  /** The password was right: the email's count is reset, the address's slot given back. */
  succeeded(): Promise<void>;
}

/**
 * Takes a slot of the email's and of the address's failed-login allowance before the password is checked
 * (calls sent at once cannot all pass a check made before any of them failed). A failed attempt keeps its
 * slots; {@link LoginAttempt.succeeded} resets the email's count and gives the address's slot back.
 * @param address the client's address (API Gateway's `sourceIp`, the socket's locally).
 * @throws CodedError `rate_limited` (429, `Retry-After`), reason `failed_logins`, when either has no slot left.
 */
export async function reserveLoginAttempt(svc: Services, email: string, address: string): Promise<LoginAttempt> {
  const { failedLoginsPerEmail: perEmail, failedLoginsPerAddress: perAddress } = svc.throttles;
  const c = loginCounters(svc, email, address);
  const minutes = THROTTLE_WINDOW_MS / 60_000;
  if (perEmail && !(await svc.store.consume(SERVICE_COUNTERS, c.email, 1, perEmail, c.w.expiresAt)).ok) {
    throw throttled(`Too many failed logins for this email: ${perEmail} in ${minutes} minutes`, perEmail, c.w.retryAfter, 'failed_logins');
  }
  if (perAddress && !(await svc.store.consume(SERVICE_COUNTERS, c.address, 1, perAddress, c.w.expiresAt)).ok) {
    if (perEmail) await svc.store.refund(SERVICE_COUNTERS, c.email, 1);
    throw throttled(`Too many failed logins from this address: ${perAddress} in ${minutes} minutes`, perAddress, c.w.retryAfter, 'failed_logins');
  }
  return {
    succeeded: async () => {
      if (perEmail) {
        const used = await svc.store.getCounter(SERVICE_COUNTERS, c.email);
        if (used) await svc.store.refund(SERVICE_COUNTERS, c.email, used);
      }
      if (perAddress) await svc.store.refund(SERVICE_COUNTERS, c.address, 1);
    },
  };
}
