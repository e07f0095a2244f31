/**
 * Accounts, API keys and login (docs/spec.md, "Authentication"; "Login result"; "Account").
 */
import { CodedError } from '../errors.ts';
import { apiKeyDigest, digestsEqual, generateApiKey, hashPassword, looksLikeApiKey, verifyPassword } from './crypto.ts';
import { subscriptionView } from './metering.ts';
import { reserveLoginAttempt } from './throttles.ts';
import type { AccountRecord } from './ports.ts';
import type { Services } from './services.ts';
import { logger } from '../logger.ts';

/** Passwords shorter than this are refused when an account is created (docs/security.md). */
const MIN_PASSWORD_LENGTH = 8;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$|^[^\s@]+@localhost$/;

export interface NewAccount {
  email: string;
  password: string;
  plan?: string;
  first_name?: string;
  last_name?: string;
}

/**
 * Creates an account with a fresh API key.
 * @returns the account and its API key (shown once here; login returns it again later).
 * @throws CodedError `invalid_request` for a bad email, a short password or an unknown plan;
 *   `email_taken` when the email exists.
 */
export async function createAccount(svc: Services, input: NewAccount): Promise<{ account: AccountRecord; apiKey: string }> {
  const email = input.email.trim();
  if (!EMAIL_RE.test(email)) throw new CodedError('invalid_request', `"${input.email}" is not an email address`);
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new CodedError('invalid_request', `The password is too short (length: ${input.password.length}, minimum: ${MIN_PASSWORD_LENGTH})`);
  }
  const plan = input.plan ?? svc.plans.default_plan;
  if (!svc.plans.plans[plan]) {
    throw new CodedError('invalid_request', `Unknown plan "${plan}"; plans: ${Object.keys(svc.plans.plans).join(', ')}`);
  }
  if (await svc.store.getAccountByEmail(email)) throw new CodedError('email_taken', `An account with the email ${email} exists`);
  const account = await svc.store.createAccount({
    email,
    first_name: input.first_name ?? '',
    last_name: input.last_name ?? '',
    plan,
    password_hash: await hashPassword(input.password),
    api_key_digest: null,
    api_key_sealed: null,
  }).catch((err: Error) => {
    if (err.name === 'ConflictError') throw new CodedError('email_taken', `An account with the email ${email} exists`);
    throw err;
  });
  const apiKey = await issueKey(svc, account);
  const usage = await assignUsageKey(svc, account, plan);
  return { account: { ...account, ...usage, api_key_digest: apiKeyDigest(apiKey) }, apiKey };
}

/** Puts the account's usage key in its plan's usage plan (cloud only); the ids are stored on the account. */
async function assignUsageKey(svc: Services, account: AccountRecord, plan: string): Promise<Pick<AccountRecord, 'usage_key_id' | 'usage_key_value'>> {
  if (!svc.usageKeys) return { usage_key_id: account.usage_key_id, usage_key_value: account.usage_key_value };
  const key = await svc.usageKeys.assign(account.id, plan, account.usage_key_id);
  await svc.store.updateAccount(account.id, { usage_key_id: key.id, usage_key_value: key.value });
  return { usage_key_id: key.id, usage_key_value: key.value };
}

/** Gives an account a new API key (the old one stops working). @returns the new key. */
async function issueKey(svc: Services, account: AccountRecord): Promise<string> {
  const key = generateApiKey();
  await svc.store.updateAccount(account.id, { api_key_digest: apiKeyDigest(key), api_key_sealed: (await svc.sealer()).seal(key, account.id) });
  return key;
}

/**
 * Replaces an account's API key (a leaked key, a person who left): the old key stops working at once,
 * on the cloud too (the handlers check the key of a cached authorizer result against the account).
 * @returns the account and its new key.
 * @throws CodedError `not_found` when no account has the email.
 */
export async function rotateApiKey(svc: Services, email: string): Promise<{ account: AccountRecord; apiKey: string }> {
  const account = await svc.store.getAccountByEmail(email.trim());
  if (!account) throw new CodedError('not_found', `No account with the email ${email}`);
  const apiKey = await issueKey(svc, account);
  return { account, apiKey };
}

/** Moves an account to another plan (and its usage key to that plan's usage plan). @throws CodedError `invalid_request` / `not_found`. */
export async function setPlan(svc: Services, email: string, plan: string): Promise<AccountRecord> {
  if (!svc.plans.plans[plan]) throw new CodedError('invalid_request', `Unknown plan "${plan}"; plans: ${Object.keys(svc.plans.plans).join(', ')}`);
  const account = await svc.store.getAccountByEmail(email);
  if (!account) throw new CodedError('not_found', `No account with the email ${email}`);
  const updated = (await svc.store.updateAccount(account.id, { plan }))!;
  return { ...updated, ...(await assignUsageKey(svc, updated, plan)) };
}

/**
 * POST /api/v1/auth/login/: email and password for the API key. An account without a key gets one.
 * Failed logins are throttled per email and per client address (core/throttles.ts).
 * @param address the client's address, for the per-address throttle.
 * @returns docs/spec.md's login result `{api_key, email, plan}`.
 * @throws CodedError `invalid_credentials` (401) for a wrong email or password, in the same time either
 *   way; `rate_limited` (429, `Retry-After`) past the failed-login limits, before the password is checked.
 */
export async function login(svc: Services, email: string, password: string, address: string): Promise<{ api_key: string; email: string; plan: string }> {
  const attempt = await reserveLoginAttempt(svc, email, address);
  const account = await svc.store.getAccountByEmail(email.trim());
  const ok = await verifyPassword(password, account?.password_hash ?? null);
  if (!account || !ok) throw new CodedError('invalid_credentials', 'Invalid email or password');
  await attempt.succeeded();
  let key: string | null = null;
  if (account.api_key_sealed) {
    try {
      key = (await svc.sealer()).open(account.api_key_sealed, account.id);
    } catch (err) {
      // SAI_SECRET changed since the key was sealed: the key cannot be shown again, so a new one is
      // issued (the old one stops working). docs/security.md.
      logger.warn('sealed API key cannot be opened; issuing a new key', { accountId: account.id, error: (err as Error).message });
    }
  }
  key ??= await issueKey(svc, account);
  return { api_key: key, email: account.email, plan: account.plan };
}

/**
 * Resolves an API key to its account (the authorizer's work).
 * @returns the account, or null for a malformed or unknown key.
 */
export async function authenticate(svc: Services, apiKey: string): Promise<AccountRecord | null> {
  if (!looksLikeApiKey(apiKey)) return null;
  const digest = apiKeyDigest(apiKey);
  const account = await svc.store.getAccountByKeyDigest(digest);
  if (!account || !account.api_key_digest || !digestsEqual(account.api_key_digest, digest)) return null;
  return account;
}

/** GET /api/v1/me/: docs/spec.md `{user, subscription}`. */
export async function accountView(svc: Services, account: AccountRecord): Promise<{ user: Record<string, unknown>; subscription: Record<string, unknown> }> {
  return {
    user: { id: account.id, email: account.email, first_name: account.first_name, last_name: account.last_name },
    subscription: await subscriptionView(svc, account),
  };
}
