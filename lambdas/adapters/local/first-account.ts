/**
 * The first start of the local service on an empty DATA_DIR: an account to log in with, made before the
 * HTTP server listens so that the first request can already log in (docs/decisions.md). Its password is
 * random and shown once by bin/local.ts.
 */
import { randomBytes } from 'node:crypto';
import { createAccount } from '../../core/accounts.ts';
import type { Services } from '../../core/services.ts';

/** The email of the first-start account. */
const FIRST_EMAIL = 'admin@localhost';

/** Credentials of the first-start account (shown once). */
export interface FirstAccount {
  email: string;
  password: string;
  plan: string;
  apiKey: string;
}

/**
 * Creates the first-start account when DATA_DIR has no account: `admin@localhost` on `pro`, or else the
 * first plan with server execution, or else the default plan of the variant.
 * @returns its credentials, or null when an account exists.
 */
export async function createFirstAccount(svc: Services): Promise<FirstAccount | null> {
  if ((await svc.store.listAccounts()).length > 0) return null;
  const plans = svc.plans.plans;
  const plan = plans.pro ? 'pro' : Object.values(plans).find((p) => p.has_server_execution)?.name ?? svc.plans.default_plan;
  const password = randomBytes(12).toString('base64url');
  const { account, apiKey } = await createAccount(svc, { email: FIRST_EMAIL, password, plan });
  return { email: account.email, password, plan: account.plan, apiKey };
}
