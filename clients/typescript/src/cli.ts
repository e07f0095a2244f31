#!/usr/bin/env node
/**
 * `sai`: the scrape-ai command line (commander), built on the client of ./client.ts. Commands, options and exit
 * codes are documented in clients/typescript/README.md ("CLI").
 *
 * - The API key comes from `SAI_API_KEY`, else from the credentials file that `sai login` writes
 *   (`$XDG_CONFIG_HOME/scrape-ai/credentials.json`, default `~/.config/…`, mode 0600). The address from
 *   `--base-url`, else `SAI_BASE_URL`, else the one saved by `login`, else {@link DEFAULT_BASE_URL}.
 * - `--json` on every command prints one machine-readable JSON document on stdout (errors: a JSON object on stderr).
 * - Progress of a job or a local run goes to stderr (stdout stays for data): a bar redrawn with `\r` when stderr
 *   is a terminal, one plain line per change otherwise.
 * - `results` writes the service's own export (`GET /jobs/{id}/results/?format=`, made by the service with
 *   lambdas/export/rows-export.ts); `run --local` exports its rows with that same `exportRows` here.
 * - `run --local` loads the engine (lambdas/engine) through ./local-engine.ts: the repository's code in a clone, the
 *   bundle build.mjs makes of it in the package (dist/local-engine.js); a config that needs the browser engine also
 *   needs puppeteer-core and @sparticuz/chromium installed beside the package (optional peer dependencies).
 *
 * Exit codes ({@link EXIT}): 0 ok; 1 an error of the service, the network or the run (a failed job included);
 * 2 bad usage; 3 authentication (no key, a refused key or password); 4 quota spent or rate limited.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline/promises';
import { Command, CommanderError, Option } from 'commander';
import { DEFAULT_BASE_URL, ScrapeAI, WEBHOOK_EVENTS } from './client.ts';
import { AuthenticationError, QuotaExceededError, RateLimitError, ScrapeAIError } from './errors.ts';
import { serveMcpOverStdio } from './mcp.ts';
import type { Job, ListStyle, ResultsFileOptions, ResultsFormat, Row, Schedule, UpdateScheduleRequest, Webhook, WebhookCreated, WebhookDelivery, WebhookEvent } from './types.ts';

/** The exit codes of `sai`. */
export const EXIT = { ok: 0, error: 1, usage: 2, auth: 3, quota: 4 } as const;

/** An error in the command line's use (a missing option, an unreadable file): exit code 2. */
export class UsageError extends Error {}

/** A run or job that ended `failed`: exit code 1, the job's reason as message. */
class RunFailedError extends Error {}

const FORMATS: readonly ResultsFormat[] = ['json', 'csv', 'xlsx'];

/** Options every command understands (program-level, accepted before or after the command name). */
interface GlobalOptions { json?: boolean; baseUrl?: string }

/** What `sai login` saves. */
interface Credentials { api_key: string; base_url?: string; email?: string }

/** The credentials file: `$XDG_CONFIG_HOME/scrape-ai/credentials.json`, `~/.config/scrape-ai/credentials.json` without it (XDG Base Directory spec). */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(base, 'scrape-ai', 'credentials.json');
}

function readCredentials(): Credentials | null {
  try {
    const c = JSON.parse(fs.readFileSync(credentialsPath(), 'utf8')) as Partial<Credentials>;
    return typeof c.api_key === 'string' && c.api_key ? (c as Credentials) : null;
  } catch {
    return null;
  }
}

/** Writes the credentials file with mode 0600 (its folder 0700), also when it already existed with a wider mode. */
function writeCredentials(c: Credentials): string {
  const file = credentialsPath();
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${JSON.stringify(c, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

/** The client for a command: key from `SAI_API_KEY` else the credentials file; no key is exit code 3 at the first call. */
function clientFor(cmd: Command): ScrapeAI {
  const saved = readCredentials();
  const g = globals(cmd);
  const apiKey = process.env.SAI_API_KEY?.trim() || saved?.api_key || '';
  const baseUrl = g.baseUrl || process.env.SAI_BASE_URL || saved?.base_url || DEFAULT_BASE_URL;
  try {
    return new ScrapeAI({ apiKey, baseUrl });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function readInput(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function writeOutput(file: string, body: Uint8Array | string): void {
  try {
    fs.writeFileSync(file, body);
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function parseFormat(value: string): ResultsFormat {
  if (!(FORMATS as readonly string[]).includes(value)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(value)}`);
  return value as ResultsFormat;
}

/** `--lists` values: how CSV and XLSX write a list (docs/exports.md, "Lists"); `json` is the default. */
const LIST_STYLES: readonly ListStyle[] = ['json', 'join'];
/** Longest `--list-separator`, characters (the service's limit). */
const MAX_LIST_SEPARATOR = 10;

/**
 * `--lists json|join` and `--list-separator TEXT`, checked as the service checks `lists` and `list_separator` (docs/exports.md,
 * "Lists"): `{}` when neither is given, so the service's default (JSON text) applies.
 * @throws UsageError an unknown style, a separator without `--lists join`, a separator of no or more than 10 characters.
 */
function parseListOptions(o: { lists?: string; listSeparator?: string }): ResultsFileOptions {
  if (o.lists !== undefined && !(LIST_STYLES as readonly string[]).includes(o.lists)) throw new UsageError(`--lists must be one of ${LIST_STYLES.join(', ')}, got ${JSON.stringify(o.lists)}`);
  if (o.listSeparator !== undefined) {
    if (o.lists !== 'join') throw new UsageError('--list-separator goes with --lists join');
    const chars = [...o.listSeparator].length;
    if (chars < 1 || chars > MAX_LIST_SEPARATOR) throw new UsageError(`--list-separator must be 1 to ${MAX_LIST_SEPARATOR} characters`);
  }
  return { ...(o.lists !== undefined ? { lists: o.lists as ListStyle } : {}), ...(o.listSeparator !== undefined ? { listSeparator: o.listSeparator } : {}) };
}

/**
 * Progress on stderr: `[#####     ] 50% message` redrawn with `\r` on a terminal; otherwise one line
 * `50% message` each time the percentage or the message changes. `silent` writes nothing.
 */
export class Progress {
  readonly #tty: boolean;
  readonly #silent: boolean;
  #last = '';
  #drawn = false;

  constructor(opts: { tty?: boolean; silent?: boolean } = {}) {
    this.#tty = opts.tty ?? process.stderr.isTTY === true;
    this.#silent = opts.silent ?? false;
  }

  /** @param percent 0–100 (clamped). */
  update(percent: number, message: string): void {
    if (this.#silent) return;
    const p = Math.max(0, Math.min(100, Math.round(percent)));
    const key = `${p}\u0000${message}`;
    if (key === this.#last) return;
    this.#last = key;
    if (this.#tty) {
      const filled = Math.round(p / 10);
      const width = (process.stderr.columns || 80) - 1;
      process.stderr.write(`\r${`[${'#'.repeat(filled)}${' '.repeat(10 - filled)}] ${String(p).padStart(3)}% ${message}`.slice(0, width)}\x1b[K`);
      this.#drawn = true;
    } else {
      process.stderr.write(`${p}% ${message}\n`);
    }
  }

  /** Ends the bar's line (a terminal only). */
  done(): void {
    if (this.#drawn) process.stderr.write('\n');
    this.#drawn = false;
  }
}

/**
 * A duration for people, in its two largest units: `45 s`, `2 min 5 s`, `13 h 45 min`, `3 d 4 h`. Seconds are
 * rounded up first (`Retry-After` may be fractional: waiting less is useless); smaller units are dropped, not rounded.
 */
export function formatDuration(seconds: number): string {
  const total = Math.max(0, Math.ceil(seconds));
  const units: Array<[string, number]> = [['d', 86_400], ['h', 3_600], ['min', 60], ['s', 1]];
  const first = units.findIndex(([, size]) => total >= size);
  if (first < 0) return '0 s';
  const parts: string[] = [];
  let rest = total;
  for (const [name, size] of units.slice(first, first + 2)) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n} ${name}`);
  }
  return parts.join(' ');
}

/**
 * The message of an error answer with its wait said once, for people: the service's own "retry in N s" (its rate
 * limits say it in seconds) is replaced by the `Retry-After` wait in {@link formatDuration} units, or added.
 */
export function withRetryAfter(message: string, retryAfterSeconds: number): string {
  const wait = `retry in ${formatDuration(retryAfterSeconds)}`;
  const said = /([;,.]?\s*)retry in \d+(?:\.\d+)? ?s\b\.?/i;
  return said.test(message) ? message.replace(said, `$1${wait}`) : `${message.replace(/[.\s]+$/, '')}; ${wait}`;
}

/** `1 page`, `2 pages`: a count with its noun. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * A line of `run --local` progress: the run's counts once (`3 pages, 30 items`), then what the step was when it says
 * more than the counts (`page 3`, `found 4 categories`); a step's own item count (`page 3: 10 items`) is left out.
 * Returns null for the crawl's final `done` (the completion line follows with the totals).
 */
export function localProgressMessage(p: { message: string; pagesScraped: number; itemsFound: number }): string | null {
  if (p.message === 'done') return null;
  const counts = `${count(p.pagesScraped, 'page')}, ${count(p.itemsFound, 'item')}`;
  const step = p.message === `${p.pagesScraped} pages, ${p.itemsFound} items` ? '' : p.message.replace(/: \d+ items?$/, '');
  return step ? `${counts} (${step})` : counts;
}

/** Polls a job to its end with progress; a failed job throws {@link RunFailedError} after printing it with `--json`. */
async function waitWithProgress(client: ScrapeAI, id: string, g: GlobalOptions, intervalMs: number): Promise<Job> {
  const bar = new Progress();
  let job: Job;
  try {
    job = await client.waitForJob(id, { intervalMs, onProgress: (j) => bar.update(j.progress, `${j.status}: ${j.status_message}`) });
  } finally {
    bar.done();
  }
  if (job.status === 'failed') {
    if (g.json) printJson(job);
    throw new RunFailedError(`job ${id} failed: ${job.status_message}`);
  }
  return job;
}

function jobLine(j: { id: string; status: string; progress: number; job_type: string; target_url?: string; status_message?: string; config_name?: string | null }): string {
  return [j.id, j.job_type, j.status, `${j.progress}%`, j.config_name ?? '', j.target_url ?? '', j.status_message ?? ''].join('\t');
}

/** A schedule's state: `paused` (by the service, after a refused firing), else `enabled` or `disabled`. */
function scheduleState(s: Schedule): 'paused' | 'enabled' | 'disabled' {
  return s.paused ? 'paused' : s.enabled ? 'enabled' : 'disabled';
}

/** One line of `sai schedules list`: id, cron, time zone, state, next run, config (and why it is paused). */
function scheduleLine(s: Schedule): string {
  const fields = [s.id, s.cron, s.timezone, scheduleState(s), `next run: ${s.next_run_at ?? 'none'}`, `config: ${s.config_id}`];
  if (s.paused) fields.push(`paused: ${s.paused.code}: ${s.paused.message}`);
  return fields.join('\t');
}

/** A schedule for a human (`sai schedules get`, `create`, `update`). */
function scheduleText(s: Schedule): string {
  const state = s.paused
    ? `paused since ${s.paused.at}: ${s.paused.code}: ${s.paused.message} (sai schedules update ${s.id} --enable resumes it)`
    : scheduleState(s);
  const lines = [
    s.id,
    `config:      ${s.config_id}`,
    `cron:        ${s.cron}`,
    `timezone:    ${s.timezone}`,
    `state:       ${state}`,
    `next run:    ${s.next_run_at ?? 'none'}`,
    `last fired:  ${s.last_fired_at ?? 'never'}`,
    `fired:       ${s.fired_count} (skipped ${s.skipped_count})`,
  ];
  if (s.recent_jobs.length) lines.push('recent jobs:', ...s.recent_jobs.map((r) => `  ${r.job_id}\tfor ${r.scheduled_for}`));
  return `${lines.join('\n')}\n`;
}

/** A webhook for a human; a just-created one with its secret and the warning that it is not shown again. */
function webhookText(w: Webhook | WebhookCreated): string {
  const lines = [w.id, `url:     ${w.url}`, `events:  ${w.events.join(', ')}`, `created: ${w.created_at}`];
  if ('secret' in w) {
    lines.push(`secret:  ${w.secret}`, 'This secret is not shown again: store it now to verify the webhook-signature header of deliveries (Standard Webhooks).');
  }
  return `${lines.join('\n')}\n`;
}

/** One line of `sai webhooks deliveries`. */
function deliveryLine(d: WebhookDelivery): string {
  const outcome = d.outcome === 'will_retry' && d.next_attempt_at ? `will_retry at ${d.next_attempt_at}` : d.outcome;
  return [d.attempted_at, d.event, `job ${d.job_id}`, `attempt ${d.attempt}`, d.status_code === null ? 'no answer' : `HTTP ${d.status_code}`, `${d.duration_ms} ms`, outcome, d.error ?? ''].join('\t');
}

/** Longest text value `reportText` shows, characters (a page's text or HTML); `--json` has it whole. */
const REPORT_TEXT_CHARS = 300;
/** Items of a list `reportText` shows; `--json` has them all. */
const REPORT_LIST_ITEMS = 50;

/**
 * A tool's report for people (issue 40; `--json` prints it as the service answered): one `key: value` line per field,
 * nested objects indented, a list of values on one line, a list of objects one `- …` item each (a small one on one
 * line, others as an indented block; at most
 * {@link REPORT_LIST_ITEMS}), long text cut at {@link REPORT_TEXT_CHARS} characters with how long it was, null as `—`.
 */
export function reportText(value: unknown, indent = ''): string {
  const scalar = (v: unknown): string => {
    if (v === null || v === undefined) return '—';
    if (typeof v !== 'string') return String(v);
    const one = v.replace(/\s+/g, ' ').trim();
    return one.length > REPORT_TEXT_CHARS ? `${one.slice(0, REPORT_TEXT_CHARS)}… (${v.length} characters; --json for all)` : one;
  };
  const isScalar = (v: unknown) => v === null || typeof v !== 'object';
  if (isScalar(value)) return `${indent}${scalar(value)}\n`;
  if (Array.isArray(value)) {
    if (!value.length) return `${indent}(none)\n`;
    let out = '';
    for (const item of value.slice(0, REPORT_LIST_ITEMS)) {
      if (isScalar(item)) out += `${indent}- ${scalar(item)}\n`;
      else {
        const entries = Array.isArray(item) ? [] : Object.entries(item as Record<string, unknown>);
        const line = entries.every(([, v]) => isScalar(v)) ? entries.map(([k, v]) => `${k}: ${scalar(v)}`).join(', ') : '';
        // A small record on one line; anything else as an indented block whose first line carries the dash (as YAML).
        if (line && line.length <= 120) out += `${indent}- ${line}\n`;
        else out += `${indent}- ${reportText(item, `${indent}  `).slice(indent.length + 2)}`;
      }
    }
    if (value.length > REPORT_LIST_ITEMS) out += `${indent}… and ${value.length - REPORT_LIST_ITEMS} more (--json for all)\n`;
    return out;
  }
  let out = '';
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (isScalar(v)) out += `${indent}${k}: ${scalar(v)}\n`;
    else if (Array.isArray(v) && v.every(isScalar)) {
      const shown = v.slice(0, REPORT_LIST_ITEMS).map(scalar).join(', ');
      out += `${indent}${k}: ${v.length ? shown : '(none)'}${v.length > REPORT_LIST_ITEMS ? ` … and ${v.length - REPORT_LIST_ITEMS} more` : ''}\n`;
    } else out += `${indent}${k}:\n${reportText(v, `${indent}  `)}`;
  }
  return out || `${indent}(empty)\n`;
}

/** `--event` values: each one of {@link WEBHOOK_EVENTS}, collected in order. */
function collectEvent(value: string, previous: WebhookEvent[]): WebhookEvent[] {
  if (!(WEBHOOK_EVENTS as readonly string[]).includes(value)) throw new UsageError(`--event must be one of ${WEBHOOK_EVENTS.join(', ')}, got ${JSON.stringify(value)}`);
  return [...previous, value as WebhookEvent];
}

/** `--example-url` values, collected in order (the service checks each one and how many). */
function collectExampleUrl(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `--param k=v` values: JSON literals (numbers, booleans, arrays) as such, anything else as a string. */
function collectParam(value: string, previous: Record<string, unknown>): Record<string, unknown> {
  const eq = value.indexOf('=');
  if (eq < 1) throw new UsageError(`--param must be key=value, got ${JSON.stringify(value)}`);
  const key = value.slice(0, eq);
  const raw = value.slice(eq + 1);
  let parsed: unknown = raw;
  try { parsed = JSON.parse(raw); } catch { /* a plain string */ }
  return { ...previous, [key]: parsed };
}

/** The browser engine's packages, optional peer dependencies of the package (package.json), at the versions the service uses. */
const BROWSER_PACKAGES = ['puppeteer-core@24.42.0', '@sparticuz/chromium@147.0.0'] as const;

/** The browser package a failed import names (`Cannot find package 'puppeteer-core'`), in `err` or its causes; null otherwise. */
function missingBrowserPackage(err: unknown): string | null {
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    const m = /Cannot find (?:package|module) '(puppeteer-core|@sparticuz\/chromium)/.exec(String(e.message ?? ''));
    if (m) return m[1]!;
  }
  return null;
}

/** Runs a config on this machine with the service's engine (lambdas/engine), the outbound guard from `SAI_OUTBOUND_ALLOW`. */
async function runLocal(file: string, o: { format?: string; output?: string; concurrency: string; maxPages?: string; lists?: string; listSeparator?: string }, g: GlobalOptions): Promise<void> {
  const yaml = readInput(file);
  const format = o.format ? parseFormat(o.format) : 'json';
  const cells = parseListOptions(o);
  const concurrency = Number(o.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UsageError('--concurrency must be a whole number, 1 or more');
  const maxPages = o.maxPages === undefined ? undefined : Number(o.maxPages);
  if (maxPages !== undefined && (!Number.isInteger(maxPages) || maxPages < 1)) throw new UsageError('--max-pages must be a whole number, 1 or more');
  // Loaded here: the remote commands do not need the engine (nor a repository checkout).
  const { parseConfig, runConfig, describePages, BrowserHost, OutboundGuard, Fetcher, exportRows } = await import('./local-engine.ts');
  let config;
  try {
    config = parseConfig(yaml);
  } catch (err) {
    const details = (err as { details?: Array<{ line?: number; column?: number; message?: string }> }).details ?? [];
    const where = details.map((d) => `\n  ${file}:${d.line ?? '?'}:${d.column ?? '?'}: ${d.message ?? ''}`).join('');
    throw new RunFailedError(`${(err as Error).message}${where}`);
  }
  const guard = OutboundGuard.fromEnv();
  const controller = new AbortController();
  const onSignal = () => controller.abort(new RunFailedError('interrupted'));
  process.once('SIGINT', onSignal);
  const fetcher = new Fetcher(guard, { perHostConcurrency: concurrency });
  const bar = new Progress();
  let host = null as InstanceType<typeof BrowserHost> | null;
  try {
    bar.update(0, 'choosing the engine');
    // The engine is said once, when chosen; each progress line then says the counts once.
    const { choice, result } = await runConfig(config, {
      fetcher, concurrency, signal: controller.signal, ...(maxPages ? { maxPages } : {}),
      browser: () => {
        host ??= new BrowserHost({ guard });
        return host;
      },
      onEngineChosen: (c) => bar.update(0, `the ${c.engine} engine: ${c.reason}`),
      onProgress: (p) => {
        const message = localProgressMessage(p);
        if (message !== null) bar.update(p.progress, message);
      },
    });
    bar.update(100, `Completed: ${count(result.rows.length, 'row')} from ${describePages(result.pageCounts)} (${choice.engine} engine)`);
    bar.done();
    const summary = {
      status: 'completed', engine: choice.engine, rows: result.rows.length, pages_scraped: result.pagesScraped,
      items_found: result.itemsFound, warnings: result.warnings, ...(o.output ? { output: path.resolve(o.output), format } : {}),
    };
    const exported = await exportRows(result.rows as Row[], format, cells);
    if (o.output) {
      writeOutput(o.output, exported.body);
      if (g.json) printJson(summary);
      else process.stdout.write(`${result.rows.length} rows written to ${o.output} (${format})\n`);
    } else if (g.json) {
      printJson({ ...summary, data: result.rows });
    } else {
      if (format === 'xlsx' && process.stdout.isTTY) throw new UsageError('XLSX is binary: give -o FILE or pipe the output');
      process.stdout.write(exported.body);
      if (format === 'json') process.stdout.write('\n');
    }
    for (const w of result.warnings) if (!g.json) process.stderr.write(`warning: ${w}\n`);
  } catch (err) {
    bar.done();
    if (err instanceof UsageError || err instanceof RunFailedError) throw err;
    const missing = missingBrowserPackage(err);
    if (missing) {
      throw new RunFailedError(`this config needs the browser engine, and ${missing} is not installed: the package bundles the lightweight engine only. `
        + `Install the browser's packages beside it (npm install ${BROWSER_PACKAGES.join(' ')}; CHROME_PATH picks another Chromium), or run the config on the service (sai run --file)`);
    }
    const e = err as { code?: string; message?: string };
    throw new RunFailedError(`the run failed: ${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`);
  } finally {
    process.off('SIGINT', onSignal);
    await fetcher.close();
    await host?.close();
  }
}

/** Builds the `sai` program; `parseAsync` it. Commander's own errors throw {@link CommanderError} (exitOverride). */
export function buildProgram(): Command {
  const program = new Command('sai')
    .description('scrape-ai on the command line: configs, runs (on the service or --local), jobs, results, tools, schedules, webhooks')
    .version('0.1.0')
    .option('--json', 'print machine-readable JSON on stdout')
    .option('--base-url <url>', 'the service address (default SAI_BASE_URL, the one saved by login, else http://127.0.0.1:8787)')
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(`sai: ${str.replace(/^error: /, '')}`) })
    .showSuggestionAfterError(true);

  program.command('login')
    .description('exchange email and password for the API key and save it (mode 0600)')
    .option('--email <email>', 'the account email (prompted when missing)')
    .option('--password <password>', 'the password (prompted when missing, without echo on a terminal)')
    .action(async (o: { email?: string; password?: string }, cmd: Command) => {
      const g = globals(cmd);
      const { email, password } = await askLogin(o.email, o.password);
      if (!email || !password) throw new UsageError('login needs an email and a password');
      const saved = readCredentials();
      const baseUrl = g.baseUrl || process.env.SAI_BASE_URL || saved?.base_url || DEFAULT_BASE_URL;
      let client: ScrapeAI;
      try {
        client = await ScrapeAI.login(email, password, { baseUrl });
      } catch (err) {
        if (err instanceof TypeError) throw new UsageError(err.message);
        throw err;
      }
      const file = writeCredentials({ api_key: client.apiKey!, base_url: client.baseUrl, email });
      if (g.json) printJson({ email: client.account?.email ?? email, plan: client.account?.plan ?? null, credentials_file: file });
      else process.stdout.write(`Logged in as ${client.account?.email ?? email} (${client.account?.plan ?? 'unknown'} plan); key saved to ${file}\n`);
    });

  program.command('me')
    .description('the account and its plan\'s allowances')
    .action(async (_o: unknown, cmd: Command) => {
      const me = await clientFor(cmd).me();
      if (globals(cmd).json) return printJson(me);
      const s = me.subscription;
      process.stdout.write(`${me.user.email}\nplan: ${s.plan}\n`
        + (s.credits_remaining !== undefined ? `credits remaining: ${s.credits_remaining} of ${s.credits_per_month}\n` : '')
        + `server-side runs: ${s.has_server_execution ? 'yes' : 'no (use sai run --local)'}\n`);
    });

  const configs = program.command('configs').description('saved configs');
  configs.command('list').description('list the saved configs').action(async (_o: unknown, cmd: Command) => {
    const list = await clientFor(cmd).listConfigs();
    if (globals(cmd).json) return printJson(list);
    for (const c of list.results) process.stdout.write(`${c.id}\t${c.name}\t${c.target_url}\t${c.created_at}\n`);
  });
  configs.command('get').description('one config with its YAML').argument('<id>').action(async (id: string, _o: unknown, cmd: Command) => {
    const c = await clientFor(cmd).getConfig(id);
    if (globals(cmd).json) return printJson(c);
    process.stdout.write(`# ${c.id} ${c.name} (${c.target_url})\n${c.yaml_content}${c.yaml_content.endsWith('\n') ? '' : '\n'}`);
  });
  configs.command('create').description('save a YAML config')
    .requiredOption('--name <name>', 'the config\'s name')
    .requiredOption('--url <url>', 'the target URL')
    .requiredOption('--file <file>', 'the YAML file')
    .option('--prompt <text>', 'what the config extracts (kept with it)')
    .action(async (o: { name: string; url: string; file: string; prompt?: string }, cmd: Command) => {
      const yaml = readInput(o.file);
      const c = await clientFor(cmd).createConfig({ name: o.name, target_url: o.url, yaml_content: yaml, ...(o.prompt ? { prompt: o.prompt } : {}) });
      if (globals(cmd).json) return printJson(c);
      process.stdout.write(`${c.id}\n`);
    });
  configs.command('delete').description('delete a config').argument('<id>').action(async (id: string, _o: unknown, cmd: Command) => {
    await clientFor(cmd).deleteConfig(id);
    if (globals(cmd).json) return printJson({ id, deleted: true });
    process.stdout.write(`deleted ${id}\n`);
  });

  program.command('generate').description('generate a YAML config for a page from a description (--run: and run it for all the rows)')
    .argument('<url>')
    .requiredOption('--prompt <text>', 'what to extract')
    .option('--run', 'run the saved config once generated (a metered run on the service) and print all its rows')
    .option('--config-id <id>', 'replace the YAML of this saved config (of the same URL) instead of saving a new one')
    .option('--example-url <url>', 'another page made from the same template (a next listing page, another search; repeatable, at most 4): '
      + 'compared with the page to tell the records from the template, and the config tried on it', collectExampleUrl, [] as string[])
    .option('--format <format>', 'with --run: the rows as json, csv or xlsx on stdout (or to --rows-output)', 'json')
    .option('--rows-output <file>', 'with --run: write the rows to this file instead of stdout')
    .option('--no-wait', 'print the started job and return at once')
    .option('-o, --output <file>', 'write the generated YAML to this file')
    .option('--interval <ms>', 'time between status polls', '1000')
    .option('--lists <style>', 'CSV and XLSX: a list as its JSON text (json, the default) or its items joined (join)')
    .option('--list-separator <text>', 'with --lists join: what goes between the items (default "; ")')
    .action(async (url: string, o: { prompt: string; run?: boolean; configId?: string; exampleUrl: string[]; format: string; rowsOutput?: string; wait: boolean; output?: string; interval: string; lists?: string; listSeparator?: string }, cmd: Command) => {
      const g = globals(cmd);
      const format = parseFormat(o.format);
      const cells = parseListOptions(o);
      if (!o.run && (o.rowsOutput || o.format !== 'json')) throw new UsageError('--format and --rows-output go with --run (the rows of a run of the generated config)');
      const client = clientFor(cmd);
      const started = await client.startGenerate({ url, prompt: o.prompt, ...(o.run ? { run: true } : {}), ...(o.configId ? { config_id: o.configId } : {}), ...(o.exampleUrl.length ? { example_urls: o.exampleUrl } : {}) });
      if (started.existing_config && !g.json) {
        process.stderr.write(`A config with the same URL and prompt exists: "${started.existing_config.name}" (${started.existing_config.id}); this one is saved beside it. `
          + `--config-id ${started.existing_config.id} replaces its YAML instead.\n`);
      }
      if (!o.wait) return g.json ? printJson(started) : void process.stdout.write(`${started.id}\n`);
      const job = await waitWithProgress(client, started.id, g, Number(o.interval) || 1000);
      if (o.output) writeOutput(o.output, job.yaml_config.yaml_content);
      if (!o.run) {
        if (g.json) return printJson(job);
        if (o.output) process.stdout.write(`config written to ${o.output} (job ${job.id})\n`);
        else process.stdout.write(job.yaml_config.yaml_content);
        process.stderr.write(`Saved as config ${job.yaml_config.id}. Its trial read the first pages only (${job.results.row_count} rows); `
          + `for all the rows: sai run --config ${job.yaml_config.id} (or sai generate --run)\n`);
        return;
      }
      if (!job.run_job_id) {
        if (g.json) printJson(job);
        throw new RunFailedError(`config ${job.yaml_config.id} was generated and saved, but its run could not start: ${job.run_error ?? 'the service started no run'}`);
      }
      process.stderr.write(`Saved as config ${job.yaml_config.id}; running it for all the rows (job ${job.run_job_id})\n`);
      const run = await waitWithProgress(client, job.run_job_id, g, Number(o.interval) || 1000);
      if (g.json) return printJson({ config_id: job.yaml_config.id, generate_job: job, run_job: run, rows: await client.getResults(run.id) });
      if (!o.rowsOutput && format === 'xlsx' && process.stdout.isTTY) throw new UsageError('XLSX is binary: give --rows-output FILE or pipe the output');
      const body = await client.getResultsFile(run.id, format, cells);
      if (o.rowsOutput) {
        writeOutput(o.rowsOutput, body);
        process.stdout.write(`${run.results.row_count} rows written to ${o.rowsOutput} (${format}; run job ${run.id})\n`);
      } else {
        process.stdout.write(body);
      }
    });

  program.command('run').description('run a config: on the service (--config, --file) or on this machine (--local)')
    .addOption(new Option('--config <id>', 'a saved config').conflicts(['file', 'local']))
    .addOption(new Option('--file <file>', 'a YAML config file, run on the service').conflicts(['local']))
    .option('--local <file>', 'run this YAML config on this machine with the same engine (Free and Starter plans)')
    .option('--no-wait', 'print the started job and return at once (service runs)')
    .option('--format <format>', 'export format of -o (json, csv, xlsx); --local prints it on stdout without -o')
    .option('-o, --output <file>', 'write the rows to this file when the run is done')
    .option('--interval <ms>', 'time between status polls', '1000')
    .option('--concurrency <n>', 'pages loaded at once (--local)', '4')
    .option('--max-pages <n>', 'most pages to load (--local; default 1000)')
    .option('--lists <style>', 'CSV and XLSX: a list as its JSON text (json, the default) or its items joined (join)')
    .option('--list-separator <text>', 'with --lists join: what goes between the items (default "; ")')
    .action(async (o: { config?: string; file?: string; local?: string; wait: boolean; format?: string; output?: string; interval: string; concurrency: string; maxPages?: string; lists?: string; listSeparator?: string }, cmd: Command) => {
      const g = globals(cmd);
      if (o.format) parseFormat(o.format);
      const cells = parseListOptions(o);
      if (o.local) return runLocal(o.local, o, g);
      if (!o.config && !o.file) throw new UsageError('run needs --config ID, --file F.yaml or --local F.yaml');
      const client = clientFor(cmd);
      const started = await client.run(o.config ? { config_id: o.config } : { yaml_content: readInput(o.file!) });
      if (!o.wait) return g.json ? printJson(started) : void process.stdout.write(`${started.id}\n`);
      const job = await waitWithProgress(client, started.id, g, Number(o.interval) || 1000);
      if (o.output) writeOutput(o.output, await client.getResultsFile(job.id, o.format ? parseFormat(o.format) : 'json', cells));
      if (g.json) return printJson(job);
      process.stdout.write(`${job.id}\t${job.status}\t${job.status_message}\n`);
    });

  program.command('jobs').description('the account\'s jobs, newest first')
    .option('--limit <n>', 'how many (1-100)', '20')
    .option('--cursor <cursor>', 'the next_cursor of the previous page')
    .action(async (o: { limit: string; cursor?: string }, cmd: Command) => {
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit must be a whole number from 1 to 100');
      const page = await clientFor(cmd).listJobs({ limit, ...(o.cursor ? { cursor: o.cursor } : {}) });
      if (globals(cmd).json) return printJson(page);
      for (const j of page.results) process.stdout.write(`${jobLine(j)}\n`);
      if (page.next_cursor) process.stdout.write(`more: sai jobs --cursor ${page.next_cursor}\n`);
    });

  program.command('status').description('one job\'s status').argument('<id>').action(async (id: string, _o: unknown, cmd: Command) => {
    const job = await clientFor(cmd).getJob(id);
    if (globals(cmd).json) return printJson(job);
    process.stdout.write(`${jobLine(job)}\npages: ${job.pages_scraped}, items: ${job.items_found}, rows: ${job.results?.row_count ?? 0}\n`);
    for (const w of job.warnings ?? []) process.stdout.write(`warning: ${w}\n`);
  });

  program.command('results').description('a finished job\'s rows as JSON, CSV (UTF-8 with a BOM) or XLSX, exported by the service')
    .argument('<id>')
    .option('--format <format>', 'json, csv or xlsx', 'json')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .option('--lists <style>', 'CSV and XLSX: a list as its JSON text (json, the default) or its items joined (join)')
    .option('--list-separator <text>', 'with --lists join: what goes between the items (default "; ")')
    .action(async (id: string, o: { format: string; output?: string; lists?: string; listSeparator?: string }, cmd: Command) => {
      const format = parseFormat(o.format);
      const cells = parseListOptions(o);
      const g = globals(cmd);
      if (!o.output && format === 'xlsx' && process.stdout.isTTY) throw new UsageError('XLSX is binary: give -o FILE or pipe the output');
      const body = await clientFor(cmd).getResultsFile(id, format, cells);
      if (o.output) {
        writeOutput(o.output, body);
        if (g.json) printJson({ id, format, output: path.resolve(o.output), bytes: body.byteLength });
        else process.stdout.write(`${o.output} (${format}, ${body.byteLength} bytes)\n`);
      } else {
        process.stdout.write(body);
      }
    });

  program.command('tools').description('run a website-analysis tool (seo-analyzer, tech-detector, lead-generation, screenshot, content-extractor, broken-link-checker, dns-whois, ssl-checker)')
    .argument('<name>').argument('<url>')
    .option('--param <key=value>', 'a tool option (repeatable); JSON values (numbers, true) are parsed', collectParam, {} as Record<string, unknown>)
    .option('-o, --output <file>', 'write the report as JSON (or the screenshot image) to this file')
    .action(async (name: string, url: string, o: { param: Record<string, unknown>; output?: string }, cmd: Command) => {
      const g = globals(cmd);
      if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new UsageError(`not a tool name: ${JSON.stringify(name)}`);
      const client = clientFor(cmd);
      const body = { ...o.param, url };
      if (name === 'screenshot' && !g.json) {
        if (!o.output) throw new UsageError('screenshot writes an image: give -o FILE (or --json for its metadata)');
        const image = await client.tool('screenshot', body as { url: string }) as Uint8Array;
        writeOutput(o.output, image);
        process.stdout.write(`${o.output} (${image.byteLength} bytes)\n`);
        return;
      }
      const report = name === 'screenshot' ? await client.tool('screenshot', body as { url: string }, { accept: 'json' }) : await client.tool(name, body);
      if (o.output) writeOutput(o.output, `${JSON.stringify(report, null, 2)}\n`);
      if (g.json) return printJson(report);
      process.stdout.write(reportText(report));
    });

  program.command('mcp')
    .description('serve the service\'s MCP tools to a desktop AI agent over stdio, with your key (docs/mcp.md); problems go to stderr')
    .action(async (_o: unknown, cmd: Command) => {
      const client = clientFor(cmd);
      if (!client.apiKey) throw new UsageError('sai mcp needs an API key: run "sai login" first or set SAI_API_KEY');
      await serveMcpOverStdio({ baseUrl: client.baseUrl, apiKey: client.apiKey });
    });

  const schedules = program.command('schedules').description('run saved configs on a cron schedule (Growth and Pro plans)');
  schedules.command('list').description('list the schedules, newest first').action(async (_o: unknown, cmd: Command) => {
    const list = await clientFor(cmd).listSchedules();
    if (globals(cmd).json) return printJson(list);
    for (const s of list.schedules) process.stdout.write(`${scheduleLine(s)}\n`);
  });
  schedules.command('get').description('one schedule: its next run, state, counts and recent jobs').argument('<id>').action(async (id: string, _o: unknown, cmd: Command) => {
    const s = await clientFor(cmd).getSchedule(id);
    if (globals(cmd).json) return printJson(s);
    process.stdout.write(scheduleText(s));
  });
  schedules.command('create').description('run a saved config on a 5-field cron rule')
    .requiredOption('--config <id>', 'the saved config to run')
    .requiredOption('--cron <expr>', 'minute hour day-of-month month day-of-week, e.g. "0 6 * * 1" (or @hourly, @daily, …)')
    .option('--timezone <zone>', 'IANA time zone of the cron times (default UTC)')
    .option('--disabled', 'create it without letting it fire yet')
    .action(async (o: { config: string; cron: string; timezone?: string; disabled?: boolean }, cmd: Command) => {
      const s = await clientFor(cmd).createSchedule({ config_id: o.config, cron: o.cron, ...(o.timezone ? { timezone: o.timezone } : {}), ...(o.disabled ? { enabled: false } : {}) });
      if (globals(cmd).json) return printJson(s);
      process.stdout.write(scheduleText(s));
    });
  schedules.command('update').description('change a schedule\'s cron rule, time zone, or enable (also resumes a paused one) or disable it')
    .argument('<id>')
    .option('--cron <expr>', 'the new cron rule')
    .option('--timezone <zone>', 'the new IANA time zone')
    .addOption(new Option('--enable', 'let it fire (resumes a paused schedule)').conflicts('disable'))
    .addOption(new Option('--disable', 'stop it firing (it keeps its rule)'))
    .action(async (id: string, o: { cron?: string; timezone?: string; enable?: boolean; disable?: boolean }, cmd: Command) => {
      const change: UpdateScheduleRequest = {
        ...(o.cron !== undefined ? { cron: o.cron } : {}),
        ...(o.timezone !== undefined ? { timezone: o.timezone } : {}),
        ...(o.enable ? { enabled: true } : o.disable ? { enabled: false } : {}),
      };
      if (Object.keys(change).length === 0) throw new UsageError('schedules update needs --cron, --timezone, --enable or --disable');
      const s = await clientFor(cmd).updateSchedule(id, change);
      if (globals(cmd).json) return printJson(s);
      process.stdout.write(scheduleText(s));
    });
  schedules.command('delete').description('delete a schedule (the jobs it started stay)').argument('<id>').action(async (id: string, _o: unknown, cmd: Command) => {
    await clientFor(cmd).deleteSchedule(id);
    if (globals(cmd).json) return printJson({ id, deleted: true });
    process.stdout.write(`deleted ${id}\n`);
  });

  const webhooks = program.command('webhooks').description('be told when jobs end: signed POSTs (Standard Webhooks) to a URL');
  webhooks.command('list').description('list the webhooks (without their secrets)').action(async (_o: unknown, cmd: Command) => {
    const list = await clientFor(cmd).listWebhooks();
    if (globals(cmd).json) return printJson(list);
    for (const w of list.webhooks) process.stdout.write(`${w.id}\t${w.url}\t${w.events.join(',')}\t${w.created_at}\n`);
  });
  webhooks.command('get').description('one webhook (without its secret)').argument('<id>').action(async (id: string, _o: unknown, cmd: Command) => {
    const w = await clientFor(cmd).getWebhook(id);
    if (globals(cmd).json) return printJson(w);
    process.stdout.write(webhookText(w));
  });
  webhooks.command('create').description('register a URL; prints its signing secret, which is shown only this once')
    .requiredOption('--url <url>', 'where to POST (http or https; not a private, loopback or metadata address)')
    .option('--event <event>', `an event to send (repeatable): ${WEBHOOK_EVENTS.join(', ')}`, collectEvent, [] as WebhookEvent[])
    .action(async (o: { url: string; event: WebhookEvent[] }, cmd: Command) => {
      if (o.event.length === 0) throw new UsageError(`webhooks create needs at least one --event (${WEBHOOK_EVENTS.join(', ')})`);
      const w = await clientFor(cmd).createWebhook({ url: o.url, events: [...new Set(o.event)] });
      if (globals(cmd).json) return printJson(w);
      process.stdout.write(webhookText(w));
    });
  webhooks.command('delete').description('delete a webhook (messages queued for it are dropped)').argument('<id>').action(async (id: string, _o: unknown, cmd: Command) => {
    await clientFor(cmd).deleteWebhook(id);
    if (globals(cmd).json) return printJson({ id, deleted: true });
    process.stdout.write(`deleted ${id}\n`);
  });
  webhooks.command('deliveries').description('a webhook\'s delivery attempts, newest first').argument('<id>')
    .option('--limit <n>', 'how many (1-100; default 50)')
    .action(async (id: string, o: { limit?: string }, cmd: Command) => {
      const limit = o.limit === undefined ? undefined : Number(o.limit);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100)) throw new UsageError('--limit must be a whole number from 1 to 100');
      const page = await clientFor(cmd).listWebhookDeliveries(id, limit === undefined ? {} : { limit });
      if (globals(cmd).json) return printJson(page);
      for (const d of page.deliveries) process.stdout.write(`${deliveryLine(d)}\n`);
      if (page.deliveries.length === 0) process.stderr.write('no delivery attempts yet\n');
    });

  return program;
}

/**
 * Asks the missing login fields on stderr, with one readline interface for all of them (a second interface
 * would miss lines the first had already buffered from piped stdin). On a terminal the password is not echoed.
 */
async function askLogin(email: string | undefined, password: string | undefined): Promise<{ email: string; password: string }> {
  if (email !== undefined && password !== undefined) return { email, password };
  const tty = process.stdin.isTTY === true;
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: tty });
  // Piped stdin: lines are taken from one iterator, in order.
  const lines = tty ? null : rl[Symbol.asyncIterator]();
  let closed = false;
  const ask = async (question: string, secret: boolean): Promise<string> => {
    if (lines) {
      process.stderr.write(question);
      const next = await lines.next();
      return next.done ? '' : String(next.value).trim();
    }
    if (!secret) return (await rl.question(question)).trim();
    // readline would echo the keys it still listens to: close it first.
    closed = true;
    rl.close();
    return readSecret(question);
  };
  try {
    return { email: email ?? await ask('Email: ', false), password: password ?? await ask('Password: ', true) };
  } finally {
    if (!closed) rl.close();
  }
}

/** Reads a line from the terminal in raw mode without echoing it (backspace edits, Ctrl-C ends with exit code 130). */
function readSecret(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      resolve(value.trim());
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish();
        if (ch === '\u0003') { stdin.setRawMode(false); process.stderr.write('\n'); process.exit(130); }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

/** The exit code of an error (see {@link EXIT}). */
export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof AuthenticationError) return EXIT.auth;
  if (err instanceof QuotaExceededError || err instanceof RateLimitError) return EXIT.quota;
  return EXIT.error;
}

/** Runs `sai` with `argv` (as `process.argv`) and resolves with the exit code; errors are printed on stderr. */
export async function main(argv: string[] = process.argv): Promise<number> {
  const program = buildProgram();
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version end with 0; every other commander error is a usage error (already printed).
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const code = exitCodeOf(err);
    let message = err instanceof Error ? err.message : String(err);
    if (err instanceof AuthenticationError && err.code === 'invalid_credentials') {
      // `sai login` itself was refused: telling to run it again would be no help.
      message = `login failed: ${message}. Check the email and the password.`;
    } else if (err instanceof AuthenticationError) {
      message = `authentication failed: ${message}. Run "sai login" or set SAI_API_KEY.`;
    } else if (err instanceof ScrapeAIError && err.retryAfterSeconds !== null) {
      message = withRetryAfter(message, err.retryAfterSeconds);
    }
    if (json) {
      const e = err instanceof ScrapeAIError ? { status: err.status, code: err.code, details: err.details, retry_after: err.retryAfterSeconds } : {};
      process.stderr.write(`${JSON.stringify({ error: message, exit_code: code, ...e })}\n`);
    } else {
      process.stderr.write(`sai: ${message}\n`);
    }
    return code;
  }
}

if (import.meta.main) {
  process.exitCode = await main();
}
