/**
 * The `sai` CLI (clients/typescript/src/cli.ts) as a child process (stdout and stderr are pipes, not terminals)
 * against the real local service over HTTP and the fixture site: login and the credentials file (mode 0600),
 * configs, a service run waited for and its CSV export, a local run exported as XLSX, schedules (a paused one shown
 * with its reason: the service's clock moved to a slot with SAI_CLOCK_FILE) and webhooks, the exit codes.
 * Expected rows come from the fixture site's own data (allQuotes()), not from a scrape.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readXlsxFile from 'read-excel-file/node';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { createAccount, startService, tempDataDir, type TestService } from '../helpers/service.ts';
import { quotesConfigYaml } from '../fixtures/site/quotes-config.ts';
import { formatDuration, withRetryAfter } from '../../clients/typescript/src/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'clients/typescript/src/cli.ts');

interface Result { code: number; stdout: string; stderr: string }

/** Runs the CLI with a clean environment: no SAI_* variable but those given. */
function sai(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<Result> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SAI_') && k !== 'XDG_CONFIG_HOME'));
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { env: { ...base, ...env }, cwd: ROOT, timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
    // A command that exits before reading its stdin (a missing file: exit 2 at once) closes the pipe first; the
    // write then fails with EPIPE, which is not the command's result (beside a second npm test it once failed a test).
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input);
  });
}


describe('sai CLI against the local service', () => {
  let site: FixtureSite;
  let svc: TestService;
  const dataDir = tempDataDir();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-cli-'));
  const xdg = path.join(work, 'config');
  let pro: Awaited<ReturnType<typeof createAccount>>;
  let free: Awaited<ReturnType<typeof createAccount>>;
  /** A Pro account whose month holds 0.1 credit: a scheduled run is refused (`quota_exceeded`) and pauses its schedule. */
  let broke: Awaited<ReturnType<typeof createAccount>>;
  /** An account whose plan allows no tool call a day: every tool call is `rate_limited` until 00:00 UTC. */
  let limited: Awaited<ReturnType<typeof createAccount>>;
  let yamlFile: string;
  /** The service's clock offset in ms (SAI_CLOCK_FILE); 0 except inside the paused-schedule test. */
  const clockFile = path.join(work, 'clock-offset');

  before(async () => {
    const plansFile = path.join(dataDir, 'plans.json');
    const plans = JSON.parse(fs.readFileSync(path.join(ROOT, 'lambdas/core/plans.json'), 'utf8'));
    plans.credits.plans.broke = { ...plans.credits.plans.pro, label: 'Broke', credits_per_month: 0.1 };
    plans.credits.plans.limited = { ...plans.credits.plans.free, label: 'Limited', tool_calls_per_day: { '*': 0 } };
    fs.writeFileSync(plansFile, JSON.stringify(plans));
    fs.writeFileSync(clockFile, '0');
    site = await startFixtureSite();
    svc = await startService({ DATA_DIR: dataDir, SAI_PLANS_FILE: plansFile, SAI_CLOCK_FILE: clockFile });
    [pro, free, broke, limited] = await Promise.all([
      createAccount(dataDir, { plan: 'pro' }, { SAI_PLANS_FILE: plansFile }),
      createAccount(dataDir, { plan: 'free' }, { SAI_PLANS_FILE: plansFile }),
      createAccount(dataDir, { plan: 'broke' }, { SAI_PLANS_FILE: plansFile }),
      createAccount(dataDir, { plan: 'limited' }, { SAI_PLANS_FILE: plansFile }),
    ]);
    yamlFile = path.join(work, 'quotes.yaml');
    fs.writeFileSync(yamlFile, quotesConfigYaml(`${site.url}/quotes/`, 2));
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('login writes the credentials file with mode 0600 under XDG_CONFIG_HOME; me --json uses it', async () => {
    const env = { SAI_BASE_URL: svc.url, XDG_CONFIG_HOME: xdg };
    const login = await sai(['login', '--email', pro.email, '--password', pro.password, '--json'], env);
    assert.equal(login.code, 0, login.stderr);
    const file = path.join(xdg, 'scrape-ai', 'credentials.json');
    assert.equal(JSON.parse(login.stdout).credentials_file, file);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).api_key, pro.api_key);
    // No SAI_BASE_URL either: the address saved by login is used.
    const me = await sai(['me', '--json'], { XDG_CONFIG_HOME: xdg });
    assert.equal(me.code, 0, me.stderr);
    const body = JSON.parse(me.stdout);
    assert.equal(body.user.email, pro.email);
    assert.equal(body.subscription.plan, 'pro');
    // A wrong password: authentication exit code, nothing overwritten; the message does not send the user to the
    // `sai login` they just ran (issue 28).
    const bad = await sai(['login', '--email', pro.email, '--password', 'wrong password'], env);
    assert.equal(bad.code, 3, bad.stderr);
    assert.match(bad.stderr, /^sai: login failed: Invalid email or password\. Check the email and the password\.\n$/);
    assert.doesNotMatch(bad.stderr, /sai login|SAI_API_KEY/);
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).api_key, pro.api_key);
    // Email and password asked for on piped stdin (not a terminal): both lines are read; an existing
    // file with a wider mode is narrowed to 0600 again.
    fs.chmodSync(file, 0o644);
    const piped = await sai(['login', '--json'], env, `${pro.email}\n${pro.password}\n`);
    assert.equal(piped.code, 0, piped.stderr);
    assert.match(piped.stderr, /Email: Password: /);
    assert.equal(JSON.parse(piped.stdout).plan, 'pro');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  });

  it('configs create, list, get, delete with --json; get after delete is exit 1', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: pro.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    const created = await sai(['configs', 'create', '--name', 'Quotes CLI', '--url', `${site.url}/quotes/`, '--file', yamlFile, '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const config = JSON.parse(created.stdout);
    assert.equal(config.name, 'Quotes CLI');
    assert.equal(config.yaml_content, fs.readFileSync(yamlFile, 'utf8'));
    const list = await sai(['configs', 'list', '--json'], env);
    assert.equal(list.code, 0, list.stderr);
    assert.ok(JSON.parse(list.stdout).results.some((c: { id: string }) => c.id === config.id));
    const got = await sai(['--json', 'configs', 'get', config.id], env);
    assert.deepEqual(JSON.parse(got.stdout), config);
    const del = await sai(['configs', 'delete', config.id, '--json'], env);
    assert.equal(del.code, 0, del.stderr);
    assert.deepEqual(JSON.parse(del.stdout), { id: config.id, deleted: true });
    const gone = await sai(['configs', 'get', config.id, '--json'], env);
    assert.equal(gone.code, 1);
    assert.equal(JSON.parse(gone.stderr).code, 'not_found');
    const missing = await sai(['configs', 'create', '--name', 'x', '--url', site.url, '--file', path.join(work, 'nope.yaml')], env);
    assert.equal(missing.code, 2, missing.stderr);
  });

  it('run --file waits with plain progress lines; results --format csv -o writes a CSV with a BOM', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: pro.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    const run = await sai(['run', '--file', yamlFile, '--json', '--interval', '100'], env);
    assert.equal(run.code, 0, run.stderr);
    const job = JSON.parse(run.stdout);
    assert.equal(job.status, 'completed');
    assert.equal(job.progress, 100);
    // stderr is not a terminal: plain "N% message" lines, no carriage returns, ending at 100%.
    assert.ok(!run.stderr.includes('\r'));
    const percents = run.stderr.split('\n').filter(Boolean).map((l) => Number(/^(\d+)% /.exec(l)?.[1]));
    assert.ok(percents.length >= 1 && percents.every((p) => Number.isInteger(p)), run.stderr);
    assert.equal(percents.at(-1), 100);

    const out = path.join(work, 'out.csv');
    const res = await sai(['results', job.id, '--format', 'csv', '-o', out], env);
    assert.equal(res.code, 0, res.stderr);
    const bytes = fs.readFileSync(out);
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    const lines = bytes.subarray(3).toString('utf8').split('\r\n').filter(Boolean);
    assert.equal(lines[0], 'text,author');
    assert.equal(lines.length, 1 + 20, 'header and the 20 quotes of two pages');

    const jobs = await sai(['jobs', '--json', '--limit', '1'], env);
    assert.equal(JSON.parse(jobs.stdout).results[0].id, job.id);
    const status = await sai(['status', job.id, '--json'], env);
    assert.equal(JSON.parse(status.stdout).results.row_count, 20);
    const noWait = await sai(['run', '--file', yamlFile, '--no-wait', '--json'], env);
    assert.equal(noWait.code, 0, noWait.stderr);
    assert.ok(['pending', 'running'].includes(JSON.parse(noWait.stdout).status), noWait.stdout);
  });

  it('generate --run waits for the generation and the run of the saved config and prints every row; without --run it says the rows were a trial', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: pro.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    const r = await sai(['generate', `${site.url}/quotes/`, '--prompt', 'every quote with its author', '--run', '--format', 'csv', '--interval', '100'], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.replace(/^\uFEFF/, '').split('\r\n').filter(Boolean);
    assert.equal(lines.length, allQuotes().length + 1, `a header and every quote of every page:\n${r.stdout.slice(0, 400)}`);
    assert.match(r.stderr, /Saved as config [0-9a-f-]{36}; running it for all the rows \(job [0-9a-f-]{36}\)/);
    const json = await sai(['generate', `${site.url}/quotes/`, '--prompt', 'every quote with its author', '--run', '--json', '--interval', '100'], env);
    assert.equal(json.code, 0, json.stderr);
    const body = JSON.parse(json.stdout);
    assert.equal(body.rows.length, allQuotes().length);
    assert.deepEqual([body.run_job.job_type, body.run_job.yaml_config.id, body.generate_job.run_job_id], ['run', body.config_id, body.run_job.id]);

    const trial = await sai(['generate', `${site.url}/quotes/`, '--prompt', 'quotes and their authors', '--interval', '100'], env);
    assert.equal(trial.code, 0, trial.stderr);
    assert.match(trial.stdout, /container:/, 'the YAML on stdout, as before');
    assert.match(trial.stderr, /Its trial read the first pages only \(\d+ rows\); for all the rows: sai run --config [0-9a-f-]{36} \(or sai generate --run\)/);
    // The same URL and prompt again: said, with the option that replaces instead; --config-id then replaces it.
    const repeated = await sai(['generate', `${site.url}/quotes/`, '--prompt', 'quotes and their authors', '--interval', '100', '-o', path.join(work, 'again.yaml')], env);
    assert.equal(repeated.code, 0, repeated.stderr);
    const original = /A config with the same URL and prompt exists: "[^"]+" \(([0-9a-f-]{36})\); this one is saved beside it\. --config-id \1 replaces its YAML instead\./.exec(repeated.stderr);
    assert.ok(original, repeated.stderr);
    const replace = await sai(['generate', `${site.url}/quotes/`, '--prompt', 'quotes and their authors', '--config-id', original[1]!, '--json', '--interval', '100'], env);
    assert.equal(replace.code, 0, replace.stderr);
    assert.equal(JSON.parse(replace.stdout).yaml_config.id, original[1], 'the named config was replaced');
    const misuse = await sai(['generate', `${site.url}/quotes/`, '--prompt', 'quotes', '--format', 'csv'], env);
    assert.equal(misuse.code, 2, misuse.stderr);
    // Free has no server execution: refused before anything runs, exit 1 with the service's reason.
    const refused = await sai(['generate', `${site.url}/quotes/`, '--prompt', 'quotes', '--run'], { ...env, SAI_API_KEY: free.api_key });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /server execution/);
  });

  it('generate --example-url (repeatable) sends the other pages of the template, which the generator tries; a forbidden one is exit 1 naming it', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: pro.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    const url = `${site.url}/quotes/`;
    // Pages 3 and 4, not the next page (2), which the generator reads anyway: 3 other pages in all, 1 without them.
    const r = await sai(['generate', url, '--prompt', 'quotes and their authors on this page', '--example-url', `${site.url}/quotes/page/3/`, '--example-url', `${site.url}/quotes/page/4/`, '--json', '--interval', '100'], env);
    assert.equal(r.code, 0, r.stderr);
    const job = JSON.parse(r.stdout);
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /tried on 3 other page\(s\) of the template: \d+ row\(s\), \d+ row\(s\), \d+ row\(s\)/);
    assert.equal(job.results.data[0].author, allQuotes()[0]!.author);
    const forbidden = await sai(['generate', url, '--prompt', 'quotes', '--example-url', `${site.url}/quotes/page/3/`, '--example-url', 'http://169.254.169.254/latest/', '--json'], env);
    assert.equal(forbidden.code, 1, forbidden.stderr);
    const body = JSON.parse(forbidden.stderr);
    assert.deepEqual([body.code, body.details[0].path], ['target_forbidden', 'example_urls/1']);
    assert.match(body.error, /^example_urls\[1\]: /);
    const plain = await sai(['generate', url, '--prompt', 'quotes', '--example-url', 'http://169.254.169.254/latest/'], env);
    assert.equal(plain.code, 1, plain.stderr);
    assert.match(plain.stderr, /^sai: example_urls\[0\]: /);
  });

  it('run --local F.yaml --format xlsx -o out.xlsx runs on this machine and writes an XLSX', async () => {
    const out = path.join(work, 'out.xlsx');
    // No key and no service address: a local run needs neither. Loopback is allowed as the service allows it.
    const env = { SAI_OUTBOUND_ALLOW: '127.0.0.0/8', XDG_CONFIG_HOME: path.join(work, 'empty'), SAI_BASE_URL: 'http://127.0.0.1:1' };
    const r = await sai(['run', '--local', yamlFile, '--format', 'xlsx', '-o', out, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.rows, 20);
    assert.equal(summary.engine, 'lightweight');
    // Progress on stderr (not a terminal): the engine said once, then each line says the run's counts once
    // ("2 pages, 20 items (listing page 2)", not "listing page 2: 10 items (2 pages, 20 items; …)"), no line twice.
    const progress = r.stderr.split('\n').filter((l) => /^\d+% /.test(l));
    assert.deepEqual(progress, [
      '0% choosing the engine',
      '0% the lightweight engine: target.engine is lightweight',
      '49% 1 page, 10 items (listing page 1)',
      '99% 2 pages, 20 items (listing page 2)',
      '100% Completed: 20 rows from 2 pages (lightweight engine)',
    ], r.stderr);
    assert.equal(new Set(progress).size, progress.length);
    const bytes = fs.readFileSync(out);
    assert.equal(bytes.subarray(0, 2).toString('latin1'), 'PK');
    const sheets = await readXlsxFile(bytes, { trim: false });
    const expected = allQuotes().slice(0, 20).map((q) => [q.text, q.author]);
    assert.deepEqual(sheets[0]!.data, [['text', 'author'], ...expected]);

    // Without the allowance the guard refuses loopback: the run fails with exit code 1 and says why.
    const refused = await sai(['run', '--local', yamlFile, '--format', 'csv', '-o', path.join(work, 'x.csv')], { XDG_CONFIG_HOME: path.join(work, 'empty') });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /target_forbidden|private|loopback/i);
    // A broken config: exit 1 with the line of the problem.
    const broken = path.join(work, 'broken.yaml');
    fs.writeFileSync(broken, 'version: "2.0"\ntarget:\n  url: https://example.com/\nextract:\n  contianer: div\n  fields: []\n');
    const bad = await sai(['run', '--local', broken], { XDG_CONFIG_HOME: path.join(work, 'empty') });
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /broken\.yaml:5:/);
  });

  it('run --local reads an API config (target.api, a cursor API) on the lightweight engine, as the service does', async () => {
    const apiYaml = path.join(work, 'api.yaml');
    fs.writeFileSync(apiYaml, `version: "2.0"
name: Quotes from the cursor API
target: { url: "${site.url}/js/cursor/", api: { url: /api/cursor/, query: { first: 10, after: "{cursor}" } } }
extract:
  records: edges[].node
  fields:
    - { name: text, path: text }
    - { name: author, path: author }
pagination: { type: cursor, cursor_path: page_info.end_cursor, has_more_path: page_info.has_next_page, max_pages: 3 }
`);
    const out = path.join(work, 'api.json');
    const env = { SAI_OUTBOUND_ALLOW: '127.0.0.0/8', XDG_CONFIG_HOME: path.join(work, 'empty'), SAI_BASE_URL: 'http://127.0.0.1:1' };
    const r = await sai(['run', '--local', apiYaml, '--format', 'json', '-o', out, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.engine, 'lightweight');
    assert.equal(summary.rows, 30);
    assert.match(r.stderr, /auto: the config reads a JSON API/);
    const rows = JSON.parse(fs.readFileSync(out, 'utf8')) as Array<{ text: string; author: string }>;
    assert.deepEqual(rows.map((x) => [x.text, x.author]), allQuotes().slice(0, 30).map((q) => [q.text, q.author]));
  });

  it('tools NAME URL --param k=v --json prints the tool\'s report; without --json, for people', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: pro.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    const seo = await sai(['tools', 'seo-analyzer', `${site.url}/quotes/`, '--json'], env);
    assert.equal(seo.code, 0, seo.stderr);
    const report = JSON.parse(seo.stdout);
    assert.ok(report.url.startsWith(site.url), report.url);
    assert.ok(Array.isArray(report.audits) && report.audits.length > 0);
    const links = await sai(['tools', 'broken-link-checker', `${site.url}/quotes/`, '--param', 'max_links=3', '--param', 'depth=0', '--json'], env);
    assert.equal(links.code, 0, links.stderr);
    assert.ok(JSON.parse(links.stdout).links.length <= 3, links.stdout);
    // Without --json, the report is for people: key: value lines, lists on one line or one item a line, no JSON.
    const people = await sai(['tools', 'seo-analyzer', `${site.url}/quotes/`], env);
    assert.equal(people.code, 0, people.stderr);
    assert.throws(() => JSON.parse(people.stdout), 'not JSON');
    assert.doesNotMatch(people.stdout, /^\s*[{[]/);
    assert.match(people.stdout, new RegExp(`^url: ${site.url.replace(/[.]/g, '\\.')}/quotes/$`, 'm'));
    assert.match(people.stdout, new RegExp(`^score: ${report.score}$`, 'm'));
    assert.match(people.stdout, new RegExp(`^title: ${report.title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.match(people.stdout, /^audits:\n  - id: \S+\n    title: .+\n    passed: (true|false)\n/m);
    const badParam = await sai(['tools', 'seo-analyzer', site.url, '--param', 'novalue'], env);
    assert.equal(badParam.code, 2, badParam.stderr);
  });

  it('schedules: create --json prints one JSON object; list and get show cron, time zone and next run; update; delete; Free is plan_required', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: pro.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    const config = JSON.parse((await sai(['configs', 'create', '--name', 'Scheduled', '--url', `${site.url}/quotes/`, '--file', yamlFile, '--json'], env)).stdout);
    const created = await sai(['schedules', 'create', '--config', config.id, '--cron', '0 6 * * 1', '--timezone', 'Europe/Paris', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const schedule = JSON.parse(created.stdout);
    assert.equal(typeof schedule, 'object');
    assert.deepEqual([schedule.config_id, schedule.cron, schedule.timezone, schedule.enabled, schedule.paused], [config.id, '0 6 * * 1', 'Europe/Paris', true, null]);
    assert.ok(Date.parse(schedule.next_run_at) > Date.now(), schedule.next_run_at);

    const list = await sai(['schedules', 'list'], env);
    assert.equal(list.code, 0, list.stderr);
    const line = list.stdout.split('\n').find((l) => l.startsWith(schedule.id));
    assert.ok(line, list.stdout);
    assert.ok(line.includes('\t0 6 * * 1\t') && line.includes('Europe/Paris') && line.includes(`next run: ${schedule.next_run_at}`) && line.includes('enabled'), line);
    const listed = JSON.parse((await sai(['schedules', 'list', '--json'], env)).stdout);
    assert.deepEqual(listed.schedules.map((x: { id: string }) => x.id), [schedule.id]);

    const got = await sai(['schedules', 'get', schedule.id], env);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /^cron: +0 6 \* \* 1$/m);
    assert.match(got.stdout, /^timezone: +Europe\/Paris$/m);
    assert.match(got.stdout, new RegExp(`^next run: +${schedule.next_run_at.replace(/\./g, '\\.')}$`, 'm'));
    assert.match(got.stdout, /^state: +enabled$/m);

    const disabled = await sai(['schedules', 'update', schedule.id, '--disable'], env);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.match(disabled.stdout, /^state: +disabled$/m);
    assert.match(disabled.stdout, /^next run: +none$/m);
    const enabled = JSON.parse((await sai(['schedules', 'update', schedule.id, '--enable', '--cron', '@daily', '--json'], env)).stdout);
    assert.deepEqual([enabled.enabled, enabled.cron, enabled.timezone], [true, '@daily', 'Europe/Paris']);
    // Usage: both --enable and --disable, or nothing to change; a bad rule is the service's invalid_request.
    assert.equal((await sai(['schedules', 'update', schedule.id, '--enable', '--disable'], env)).code, 2);
    assert.equal((await sai(['schedules', 'update', schedule.id], env)).code, 2);
    const badCron = await sai(['schedules', 'update', schedule.id, '--cron', 'every day', '--json'], env);
    assert.equal(badCron.code, 1, badCron.stderr);
    assert.equal(JSON.parse(badCron.stderr).code, 'invalid_request');

    const del = await sai(['schedules', 'delete', schedule.id, '--json'], env);
    assert.deepEqual(JSON.parse(del.stdout), { id: schedule.id, deleted: true });
    const gone = await sai(['schedules', 'get', schedule.id, '--json'], env);
    assert.equal(gone.code, 1);
    assert.equal(JSON.parse(gone.stderr).code, 'not_found');
    await sai(['configs', 'delete', config.id], env);

    const freeEnv = { ...env, SAI_API_KEY: free.api_key };
    const freeConfig = JSON.parse((await sai(['configs', 'create', '--name', 'Free', '--url', `${site.url}/quotes/`, '--file', yamlFile, '--json'], freeEnv)).stdout);
    const refused = await sai(['schedules', 'create', '--config', freeConfig.id, '--cron', '0 6 * * *', '--json'], freeEnv);
    assert.equal(refused.code, 1, refused.stderr);
    const error = JSON.parse(refused.stderr);
    assert.deepEqual([error.status, error.code, error.details[0].plan], [403, 'plan_required', 'free']);
    const human = await sai(['schedules', 'create', '--config', freeConfig.id, '--cron', '0 6 * * *'], freeEnv);
    assert.equal(human.code, 1);
    assert.match(human.stderr, /^sai: .*server execution/);
  });

  it('schedules: a paused schedule shows why in list and get; --enable resumes it', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: broke.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    const config = JSON.parse((await sai(['configs', 'create', '--name', 'Paused', '--url', `${site.url}/quotes/`, '--file', yamlFile, '--json'], env)).stdout);
    const schedule = JSON.parse((await sai(['schedules', 'create', '--config', config.id, '--cron', '0 * * * *', '--json'], env)).stdout);
    try {
      // The service's clock a second past the next slot: the firing is refused (0.1 credit, a run costs 1) and pauses it.
      fs.writeFileSync(clockFile, String(Date.parse(schedule.next_run_at) + 1000 - Date.now()));
      let paused: { paused: { code: string } | null } = schedule;
      for (const end = Date.now() + 20_000; !paused.paused && Date.now() < end;) {
        await new Promise((r) => setTimeout(r, 200));
        paused = JSON.parse((await sai(['schedules', 'get', schedule.id, '--json'], env)).stdout);
      }
      assert.equal(paused.paused?.code, 'quota_exceeded', JSON.stringify(paused));
    } finally {
      fs.writeFileSync(clockFile, '0');
    }
    const list = await sai(['schedules', 'list'], env);
    assert.match(list.stdout, new RegExp(`^${schedule.id}\t0 \\* \\* \\* \\*\tUTC\tpaused\tnext run: none\t.*\tpaused: quota_exceeded: `, 'm'));
    const got = await sai(['schedules', 'get', schedule.id], env);
    assert.match(got.stdout, /^state: +paused since \S+: quota_exceeded: .+ \(sai schedules update \S+ --enable resumes it\)$/m);
    const resumed = await sai(['schedules', 'update', schedule.id, '--enable'], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /^state: +enabled$/m);
    assert.doesNotMatch(resumed.stdout, /next run: +none/);
    await sai(['schedules', 'delete', schedule.id], env);
    await sai(['configs', 'delete', config.id], env);
  });

  it('webhooks: create prints the secret once; list, get and deliveries; delete; a metadata address is target_forbidden', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: pro.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    const url = `${site.url}/hook`;
    const created = await sai(['webhooks', 'create', '--url', url, '--event', 'job.completed', '--event', 'job.failed'], env);
    assert.equal(created.code, 0, created.stderr);
    const secret = /^secret: +(whsec_\S+)$/m.exec(created.stdout)?.[1];
    assert.ok(secret, created.stdout);
    assert.match(created.stdout, /not shown again/);
    assert.match(created.stdout, /^events: +job\.completed, job\.failed$/m);
    const id = created.stdout.split('\n')[0]!;
    assert.match(id, /^[0-9a-f-]{36}$/);

    const list = await sai(['webhooks', 'list'], env);
    assert.equal(list.stdout, `${id}\t${url}\tjob.completed,job.failed\t${/^created: +(\S+)$/m.exec(created.stdout)![1]}\n`);
    const got = await sai(['webhooks', 'get', id], env);
    assert.match(got.stdout, new RegExp(`^url: +${url.replace(/\./g, '\\.')}$`, 'm'));
    assert.ok(!got.stdout.includes('whsec_') && !list.stdout.includes('whsec_'), 'the secret is shown only at creation');
    const gotJson = JSON.parse((await sai(['webhooks', 'get', id, '--json'], env)).stdout);
    assert.deepEqual(Object.keys(gotJson).sort(), ['created_at', 'events', 'id', 'url']);

    const deliveries = await sai(['webhooks', 'deliveries', id, '--limit', '10'], env);
    assert.equal(deliveries.code, 0, deliveries.stderr);
    assert.equal(deliveries.stdout, '');
    assert.match(deliveries.stderr, /no delivery attempts yet/);
    assert.deepEqual(JSON.parse((await sai(['webhooks', 'deliveries', id, '--json'], env)).stdout), { deliveries: [] });
    assert.equal((await sai(['webhooks', 'deliveries', id, '--limit', '0'], env)).code, 2);

    const del = await sai(['webhooks', 'delete', id], env);
    assert.equal(del.stdout, `deleted ${id}\n`);
    assert.equal((await sai(['webhooks', 'get', id], env)).code, 1);

    const json = await sai(['webhooks', 'create', '--url', 'http://10.0.0.1/hook', '--event', 'job.changed', '--json'], env);
    assert.equal(json.code, 1, json.stdout);
    assert.equal(JSON.parse(json.stderr).code, 'target_forbidden');
    const metadata = await sai(['webhooks', 'create', '--url', 'http://169.254.169.254/', '--event', 'job.completed'], env);
    assert.equal(metadata.code, 1);
    assert.match(metadata.stderr, /^sai: .*(metadata|link-local)/);
    assert.equal((await sai(['webhooks', 'create', '--url', url, '--event', 'job.started'], env)).code, 2);
    assert.equal((await sai(['webhooks', 'create', '--url', url], env)).code, 2);
    assert.deepEqual(JSON.parse((await sai(['webhooks', 'list', '--json'], env)).stdout), { webhooks: [] });
  });

  it('a rate limit says its wait once, in hours and minutes ("retry in 13 h 45 min", not "49558 s"); --json keeps retry_after in seconds', async () => {
    const env = { SAI_BASE_URL: svc.url, SAI_API_KEY: limited.api_key, XDG_CONFIG_HOME: path.join(work, 'empty') };
    // The service's clock at 10:14:02 UTC today: the tool's day ends in 13 h 45 min 58 s.
    const day = new Date();
    day.setUTCHours(10, 14, 2, 0);
    fs.writeFileSync(clockFile, String(day.getTime() - Date.now()));
    try {
      await new Promise((r) => setTimeout(r, 250)); // the service reads the file again every 100 ms
      const human = await sai(['tools', 'seo-analyzer', `${site.url}/quotes/`], env);
      assert.equal(human.code, 4, human.stderr);
      assert.equal(human.stderr, 'sai: Daily limit of the seo-analyzer tool on the Limited plan reached: 0 calls per day (UTC); retry in 13 h 45 min\n');
      assert.equal(human.stderr.match(/retry/g)!.length, 1);
      const json = await sai(['tools', 'seo-analyzer', `${site.url}/quotes/`, '--json'], env);
      assert.equal(json.code, 4, json.stderr);
      const error = JSON.parse(json.stderr);
      assert.equal(error.code, 'rate_limited');
      assert.ok(error.retry_after > 13 * 3600 + 45 * 60 && error.retry_after <= 13 * 3600 + 45 * 60 + 58, String(error.retry_after));
      assert.match(error.error, /; retry in 13 h 45 min$/);
    } finally {
      fs.writeFileSync(clockFile, '0');
    }
  });

  it('formatDuration: the two largest units, seconds rounded up; withRetryAfter replaces the service\'s seconds or adds the wait', () => {
    const cases: Array<[number, string]> = [[0, '0 s'], [0.2, '1 s'], [45, '45 s'], [59.5, '1 min'], [61, '1 min 1 s'], [3600, '1 h'],
      [3660, '1 h 1 min'], [49558, '13 h 45 min'], [86400, '1 d'], [90061, '1 d 1 h']];
    for (const [seconds, text] of cases) assert.equal(formatDuration(seconds), text, String(seconds));
    assert.equal(withRetryAfter('Too many failed logins for this email: 5 in 15 minutes; retry in 120 s', 120),
      'Too many failed logins for this email: 5 in 15 minutes; retry in 2 min');
    assert.equal(withRetryAfter('Every tool worker is busy.', 3), 'Every tool worker is busy; retry in 3 s');
  });

  it('exit codes: a bad key is 3 with a clear message, an unknown command and a bad option are 2, no key is 3', async () => {
    const bad = await sai(['me'], { SAI_BASE_URL: svc.url, SAI_API_KEY: 'sai_not_a_real_key', XDG_CONFIG_HOME: path.join(work, 'empty') });
    assert.equal(bad.code, 3);
    assert.match(bad.stderr, /authentication failed/);
    assert.match(bad.stderr, /sai login|SAI_API_KEY/);
    assert.equal(bad.stdout, '');
    const badJson = await sai(['me', '--json'], { SAI_BASE_URL: svc.url, SAI_API_KEY: 'sai_not_a_real_key', XDG_CONFIG_HOME: path.join(work, 'empty') });
    assert.equal(badJson.code, 3);
    assert.equal(JSON.parse(badJson.stderr).status, 401);
    const none = await sai(['jobs'], { SAI_BASE_URL: svc.url, XDG_CONFIG_HOME: path.join(work, 'empty') });
    assert.equal(none.code, 3, none.stderr);
    const unknown = await sai(['frobnicate'], {});
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command/);
    const format = await sai(['results', 'x', '--format', 'pdf'], { SAI_API_KEY: pro.api_key, SAI_BASE_URL: svc.url });
    assert.equal(format.code, 2);
    const both = await sai(['run', '--config', 'a', '--file', yamlFile], { SAI_API_KEY: pro.api_key, SAI_BASE_URL: svc.url });
    assert.equal(both.code, 2, both.stderr);
  });
});
