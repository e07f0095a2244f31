/**
 * `npm start`: the whole service in one process on embedded parts (SQLite, a durable local queue,
 * files under DATA_DIR), serving every route of lambdas/routes.ts on http://HOST:PORT.
 * Environment: README, "Environment". The first-start account's credentials are printed on a terminal,
 * and written to DATA_DIR/first-start-credentials.txt (0600) when stdout is not one (a log file, a pipe). Exit code 2 for bad settings (an invalid variable, or a SAI_BILLING
 * other than the variant DATA_DIR was first started with), 1 when the service cannot start.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startLocalService } from '../lambdas/adapters/local/server.ts';
import { settingsFromEnv } from '../lambdas/adapters/local/runtime.ts';
import { batchLogOutput, flushLogOutput } from '../lambdas/logger.ts';

/** The file the first-start credentials go to when stdout is not a terminal (in DATA_DIR, mode 0600). */
const FIRST_START_FILE = 'first-start-credentials.txt';

let settings;
try {
  settings = settingsFromEnv();
} catch (err) {
  console.error(`scrape-ai: ${(err as Error).message}`);
  process.exit(2);
}
// A long-running process: the logger's lines (the access log's one per request) go out a turn of the event loop at a time.
batchLogOutput();

// The stop signals are handled from the start: a signal that came while the service started (its workers may take
// jobs before it listens) stops it once it has started, cleanly (held job messages given back), rather than ending
// the process at once as an unhandled SIGTERM would.
let service: Awaited<ReturnType<typeof startLocalService>> | undefined;
let stopping: NodeJS.Signals | null = null;
const stop = (signal: NodeJS.Signals) => {
  console.log(`scrape-ai: ${signal}, stopping (running jobs resume at the next start)`);
  service!.close().then(() => process.exit(0), (err: Error) => {
    console.error(err);
    process.exit(1);
  });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = signal;
    if (service) stop(signal);
  });
}

try {
  service = await startLocalService(settings);
} catch (err) {
  console.error(`scrape-ai: ${(err as Error).message}`);
  process.exit(1);
}
if (stopping) stop(stopping);

if (service.firstAccount) {
  const first = service.firstAccount;
  const lines = [
    `  email:    ${first.email}`,
    `  password: ${first.password}`,
    `  plan:     ${first.plan}`,
    `  api key:  ${first.apiKey}`,
  ];
  if (process.stdout.isTTY) {
    console.log(['First start: created an account (shown once; `npm run accounts -- list` lists accounts):', ...lines].join('\n'));
  } else {
    // Not a terminal: stdout is likely a log that others read or keep. The credentials go to a file only the owner can read.
    const file = path.join(settings.dataDir, FIRST_START_FILE);
    fs.writeFileSync(file, `First start of scrape-ai on ${new Date().toISOString()}: the account created (delete this file once you have stored them):\n${lines.join('\n')}\n`, { mode: 0o600 });
    console.log(`First start: created the account ${first.email}; its password and API key are in ${file} (mode 0600; delete it once you have them)`);
  }
}

// The lines logged during the start (recovery, the first account) go out first: readers wait for this line.
flushLogOutput();
console.log(`scrape-ai listening on ${service.url} (data: ${settings.dataDir}, billing: ${settings.billing}, workers: ${settings.workers}, tool workers: ${settings.tools.size})`);


