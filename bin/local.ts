/**
 * `npm start`: the whole service in one process on embedded parts (SQLite, a durable local queue,
 * files under DATA_DIR), serving every route of lambdas/routes.ts on http://HOST:PORT.
 * Environment: README, "Environment".
 */
import { randomBytes } from 'node:crypto';
import { createAccount } from '../lambdas/core/accounts.ts';
import { startLocalService } from '../lambdas/adapters/local/server.ts';
import { settingsFromEnv } from '../lambdas/adapters/local/runtime.ts';

let settings;
try {
  settings = settingsFromEnv();
} catch (err) {
  console.error(`scrape-ai: ${(err as Error).message}`);
  process.exit(2);
}

let service;
try {
  service = await startLocalService(settings);
} catch (err) {
  console.error(`scrape-ai: ${(err as Error).message}`);
  process.exit(1);
}

// First start: an account to log in with, shown once.
const { services, store } = service.local;
if ((await store.listAccounts()).length === 0) {
  const password = randomBytes(12).toString('base64url');
  const plan = services.plans.plans.pro ? 'pro' : Object.keys(services.plans.plans).find((p) => services.plans.plans[p]!.has_server_execution) ?? services.plans.default_plan;
  const { account, apiKey } = await createAccount(services, { email: 'admin@localhost', password, plan });
  console.log([
    'First start: created an account (shown once; `npm run accounts -- list` lists accounts):',
    `  email:    ${account.email}`,
    `  password: ${password}`,
    `  plan:     ${account.plan}`,
    `  api key:  ${apiKey}`,
  ].join('\n'));
}

console.log(`scrape-ai listening on ${service.url} (data: ${settings.dataDir}, billing: ${settings.billing}, workers: ${settings.workers})`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    console.log(`scrape-ai: ${signal}, stopping (running jobs resume at the next start)`);
    service.close().then(() => process.exit(0), (err: Error) => {
      console.error(err);
      process.exit(1);
    });
  });
}
