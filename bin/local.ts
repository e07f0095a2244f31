/**
 * `npm start`: the whole service in one process on embedded parts (SQLite, a durable local queue,
 * files under DATA_DIR), serving every route of lambdas/routes.ts on http://HOST:PORT.
 * Environment: README, "Environment". Exit code 2 for bad settings (an invalid variable, or a SAI_BILLING
 * other than the variant DATA_DIR was first started with), 1 when the service cannot start.
 */
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

if (service.firstAccount) {
  const first = service.firstAccount;
  console.log([
    'First start: created an account (shown once; `npm run accounts -- list` lists accounts):',
    `  email:    ${first.email}`,
    `  password: ${first.password}`,
    `  plan:     ${first.plan}`,
    `  api key:  ${first.apiKey}`,
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
