/**
 * `npm run accounts -- <command>`: manage accounts of the local service's DATA_DIR (it may run meanwhile).
 *
 *   create --email E (--password-stdin | --password P) --plan PLAN [--first-name F] [--last-name L] [--json]
 *   list [--json]
 *   set-plan --email E --plan PLAN [--json]
 *   rotate-key --email E [--json]        a new API key; the old one stops working at once
 *   rotate-secret [--json]               a new key-sealing secret (local DATA_DIR only; the service stopped)
 *   reset-secret [--json]                start over with a new secret when the old one is lost (logins issue new keys)
 *
 * With --json, stdout carries one JSON value and nothing else (`create`: {"id","email","plan","api_key"}).
 * With --stage STAGE, the commands act on that deployed stage instead (its DynamoDB table, sealing secret
 * and API Gateway usage plans, found by their names; AWS credentials and region from the environment).
 *
 * Plans are those of the service's billing variant: the one stored in DATA_DIR by its first start
 * (SAI_BILLING is used only if DATA_DIR is new), or for --stage the stage's SAI_BILLING. A plan the variant
 * lacks is refused with exit code 2 and the variant's plans; other failures exit with 1.
 */
import { Command, CommanderError } from 'commander';
import { isCodedError } from '../lambdas/errors.ts';
import { createAccount, rotateApiKey, setPlan } from '../lambdas/core/accounts.ts';
import { resetSealingSecret, rotateSealingSecret } from '../lambdas/adapters/local/rotate-secret.ts';
import { createLocalServices, settingsFromEnv } from '../lambdas/adapters/local/runtime.ts';
import type { Services } from '../lambdas/core/services.ts';
import type { Store } from '../lambdas/core/ports.ts';

/** Exit code of a refused argument (a plan the variant lacks), as for commander's usage errors. */
const USAGE_ERROR = 2;

/** A plan the variant has no plan of that name: the message lists the variant's plans. */
class UnknownPlanError extends Error {
  override name = 'UnknownPlanError';
}

/** Arguments that cannot be used together or are missing (exit 2, like commander's own). */
class UsageError extends Error {
  override name = 'UsageError';
}

/** The services of DATA_DIR, or of a deployed stage with --stage. */
async function open(stage?: string): Promise<{ services: Services; store: Store; close(): void }> {
  if (!stage) {
    const settings = settingsFromEnv(process.env, 'data-dir-wins');
    const asked = process.env.SAI_BILLING?.trim();
    if (asked && asked !== settings.billing) {
      console.error(`accounts: SAI_BILLING=${asked} ignored: DATA_DIR ${settings.dataDir} is of the ${settings.billing} variant (set by its first start)`);
    }
    return createLocalServices(settings);
  }
  // Loaded only for --stage: the local CLI needs no AWS SDK.
  const { physicalNames } = await import('../lib/stage.ts');
  const { createAwsServices } = await import('../lambdas/adapters/aws/services.ts');
  const { APIGatewayClient, GetUsagePlansCommand } = await import('@aws-sdk/client-api-gateway');
  const names = physicalNames(stage);
  const usagePlanIds: Record<string, string> = {};
  const client = new APIGatewayClient({});
  let position: string | undefined;
  do {
    const page = await client.send(new GetUsagePlansCommand({ position, limit: 500 }));
    for (const plan of page.items ?? []) {
      const m = plan.name?.startsWith(`${names.restApi}-`) ? plan.name.slice(names.restApi.length + 1) : null;
      if (m && plan.id) usagePlanIds[m] = plan.id;
    }
    position = page.position;
  } while (position);
  if (!Object.keys(usagePlanIds).length) throw new Error(`no usage plans named ${names.restApi}-<plan>: is the ${stage} stage deployed in this account and region?`);
  const services = createAwsServices({ ...process.env, STAGE: stage, TABLE_NAME: names.table, SEALING_SECRET_ARN: names.secret, USAGE_PLAN_IDS: JSON.stringify(usagePlanIds) });
  return { services, store: services.store, close: () => client.destroy() };
}

/** @throws UnknownPlanError when the services' variant has no plan `plan`. */
function requireKnownPlan(services: Services, plan: string): void {
  const catalog = services.plans;
  if (catalog.plans[plan]) return;
  throw new UnknownPlanError(`the ${catalog.billing} variant has no plan "${plan}"; its plans: ${Object.keys(catalog.plans).join(', ')}`);
}

/** Longest password read from standard input, characters (a password, not a file). */
const MAX_STDIN_PASSWORD = 1024;

/**
 * The password of `create`: from standard input with `--password-stdin` (everything read, one trailing line break
 * dropped), else `--password` (a warning on stderr: argv is visible to other users).
 * @throws UsageError (exit 2) when neither or both are given, or standard input is a terminal or too long.
 */
async function passwordOf(o: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (o.passwordStdin && o.password !== undefined) throw new UsageError('give --password-stdin or --password, not both');
  if (o.password !== undefined) {
    process.stderr.write('warning: --password shows the password to other users of this machine (ps) and keeps it in shell history; pipe it to --password-stdin instead\n');
    return o.password;
  }
  if (!o.passwordStdin) throw new UsageError("give the password: printf '%s' 'the password' | npm run -s accounts -- create … --password-stdin");
  if (process.stdin.isTTY) throw new UsageError('--password-stdin reads a pipe, not a terminal: printf \'%s\' \'the password\' | npm run -s accounts -- create … --password-stdin');
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.length > MAX_STDIN_PASSWORD) throw new UsageError(`--password-stdin: more than ${MAX_STDIN_PASSWORD} characters on standard input`);
  }
  return text.replace(/\r?\n$/, '');
}

const program = new Command('accounts')
  .description('Manage scrape-ai accounts in DATA_DIR (default ./data)')
  .exitOverride()
  .showHelpAfterError();

program.command('create')
  .description('create an account and print its API key')
  .requiredOption('--email <email>', 'email address (the login)')
  .option('--password-stdin', 'read the password from standard input (as `docker login` does): it stays out of the process list and the shell history')
  .option('--password <password>', 'the password in the command line (visible to other users\' `ps` and kept in shell history: prefer --password-stdin)')
  .requiredOption('--plan <plan>', 'a plan of the billing variant of DATA_DIR (lambdas/core/plans.json)')
  .option('--first-name <name>', 'first name', '')
  .option('--last-name <name>', 'last name', '')
  .option('--json', 'print {"id","email","plan","api_key"} as JSON only')
  .option('--stage <stage>', 'act on a deployed stage (dev, prod) instead of DATA_DIR')
  .action(async (o: { email: string; password?: string; passwordStdin?: boolean; plan: string; firstName: string; lastName: string; json?: boolean; stage?: string }) => {
    const password = await passwordOf(o);
    const local = await open(o.stage);
    try {
      requireKnownPlan(local.services, o.plan);
      const { account, apiKey } = await createAccount(local.services, { email: o.email, password, plan: o.plan, first_name: o.firstName, last_name: o.lastName });
      if (o.json) process.stdout.write(JSON.stringify({ id: account.id, email: account.email, plan: account.plan, api_key: apiKey }) + '\n');
      else console.log(`created account ${account.id} ${account.email} on plan ${account.plan}\napi key: ${apiKey}`);
    } finally {
      local.close();
    }
  });

program.command('list')
  .description('list accounts (never keys or passwords)')
  .option('--json', 'print a JSON array')
  .option('--stage <stage>', 'act on a deployed stage (dev, prod) instead of DATA_DIR')
  .action(async (o: { json?: boolean; stage?: string }) => {
    const local = await open(o.stage);
    try {
      const accounts = (await local.store.listAccounts()).map((a) => ({ id: a.id, email: a.email, plan: a.plan, created_at: a.created_at }));
      if (o.json) process.stdout.write(JSON.stringify(accounts) + '\n');
      else if (!accounts.length) console.log('no accounts');
      else for (const a of accounts) console.log(`${String(a.id).padStart(4)}  ${a.email.padEnd(32)}  ${a.plan.padEnd(8)}  ${a.created_at}`);
    } finally {
      local.close();
    }
  });

program.command('set-plan')
  .description('move an account to another plan')
  .requiredOption('--email <email>', 'the account')
  .requiredOption('--plan <plan>', 'the new plan, of the billing variant of DATA_DIR')
  .option('--json', 'print {"id","email","plan"} as JSON')
  .option('--stage <stage>', 'act on a deployed stage (dev, prod) instead of DATA_DIR')
  .action(async (o: { email: string; plan: string; json?: boolean; stage?: string }) => {
    const local = await open(o.stage);
    try {
      requireKnownPlan(local.services, o.plan);
      const a = await setPlan(local.services, o.email, o.plan);
      if (o.json) process.stdout.write(JSON.stringify({ id: a.id, email: a.email, plan: a.plan }) + '\n');
      else console.log(`account ${a.id} ${a.email} is now on plan ${a.plan}`);
    } finally {
      local.close();
    }
  });

program.command('rotate-key')
  .description('give an account a new API key (the old one stops working at once) and print it')
  .requiredOption('--email <email>', 'the account')
  .option('--json', 'print {"id","email","api_key"} as JSON only')
  .option('--stage <stage>', 'act on a deployed stage (dev, prod) instead of DATA_DIR')
  .action(async (o: { email: string; json?: boolean; stage?: string }) => {
    const local = await open(o.stage);
    try {
      const { account, apiKey } = await rotateApiKey(local.services, o.email);
      if (o.json) process.stdout.write(JSON.stringify({ id: account.id, email: account.email, api_key: apiKey }) + '\n');
      else console.log(`account ${account.id} ${account.email} has a new API key (the old one no longer works):\napi key: ${apiKey}`);
    } finally {
      local.close();
    }
  });

program.command('rotate-secret')
  .description("replace DATA_DIR's API-key sealing secret, sealing every key again (stop the service first)")
  .option('--json', 'print {"file","resealed","unreadable","webhook_secrets"} as JSON only')
  .action((o: { json?: boolean }) => {
    const r = rotateSealingSecret(process.env);
    if (o.json) process.stdout.write(JSON.stringify(r) + '\n');
    else console.log(`new sealing secret in ${r.file}; ${r.resealed} key(s) sealed again${r.unreadable ? `, ${r.unreadable} that did not open under the old secret left as they were (those accounts get a new key at their next login)` : ''}; ${r.webhook_secrets} webhook signing secret(s) sealed again`);
  });

program.command('reset-secret')
  .description('start over with a new sealing secret when the old one is lost: keys keep working, logins issue new keys (stop the service first)')
  .option('--json', 'print {"file"} as JSON only')
  .action((o: { json?: boolean }) => {
    const r = resetSealingSecret(process.env);
    if (o.json) process.stdout.write(JSON.stringify(r) + '\n');
    else console.log(`new sealing secret in ${r.file}; API keys keep working, and each account's next login issues a new key`);
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  if (err instanceof UnknownPlanError || err instanceof UsageError) {
    console.error(`accounts: ${err.message}`);
    process.exit(USAGE_ERROR);
  }
  console.error(`accounts: ${isCodedError(err) || !process.env.DEBUG ? (err as Error).message : (err as Error).stack}`);
  process.exit(1);
}
