/**
 * Config parsing off the HTTP thread (docs/limits.md): the local service answers every account from one
 * event loop, so a config text that takes tens of milliseconds to parse (up to ~150 ms at the caps of
 * engine/config-source.ts) would hold up everyone else's requests. Texts up to
 * {@link INLINE_MAX_CHARS} are parsed inline (a few milliseconds at most); larger ones go to one worker
 * thread (config-parse-thread.ts), in order. A text that takes longer than its time-out (5 s) in the thread
 * is refused alone: the thread is replaced and the texts behind it go on.
 *
 * Schedules' rules (issue 26) are always checked in the thread: croner's search takes up to about 2 s for an
 * expression whose every time falls in a DST gap, and a plan's minimum interval is looked up over 2,000 firings.
 *
 * On Lambda each instance serves one request at a time, so the cloud parses inline (core/configs.ts).
 */
import { Worker } from 'node:worker_threads';
import { parseConfig, type ScrapeConfig } from '../../engine/config.ts';
import { CodedError, isErrorCode } from '../../errors.ts';
import type { ConfigParser } from '../../core/ports.ts';
import type { ScheduleRuleCheck } from '../../core/schedule-times.ts';
import { logger } from '../../logger.ts';
import type { ParseAnswer, ParseRequest } from './config-parse-thread.ts';

/** Longest text parsed on the calling thread, in characters (worst case measured: about 5 ms). */
export const INLINE_MAX_CHARS = 2048;
/** Longest a parse in the thread may take before the thread is ended and the config refused, ms. */
const PARSE_TIMEOUT_MS = 5000;

/** Options of {@link ThreadConfigParser}. */
export interface ThreadConfigParserOptions {
  /** Longest one text may take in the thread (waiting in line not counted), ms. @default 5000 */
  timeoutMs?: number;
}

interface Pending {
  id: number;
  /** The request without its id. */
  work: { text: string } | { schedule: { input: { cron: unknown; timezone?: unknown }; minIntervalMinutes: number; now: string } };
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** Texts waiting for the thread at most; past it a text is refused with 503 `service_busy`. */
const MAX_WAITING = 32;

/**
 * A {@link ConfigParser} that keeps large texts off the calling thread. The thread parses one text at a
 * time; a text's time-out starts when the thread takes it (time spent waiting in line does not count), and
 * a text past it is refused alone: the thread is replaced and the texts behind it go on. Call {@link close}
 * at shutdown.
 */
export class ThreadConfigParser implements ConfigParser {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting: Pending[] = [];
  private current: { p: Pending; timer: NodeJS.Timeout; timeoutMs: number } | null = null;
  /** Longest one text may take in the thread, ms; applies to texts taken after a change. */
  timeoutMs: number;

  constructor(options: ThreadConfigParserOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? PARSE_TIMEOUT_MS;
  }

  /**
   * @throws CodedError `invalid_config` (from the parse, or past the time-out); `service_busy` (503) when
   *   more than {@link MAX_WAITING} texts are waiting.
   */
  async parse(yamlText: string): Promise<ScrapeConfig> {
    if (typeof yamlText !== 'string' || yamlText.length <= INLINE_MAX_CHARS) return parseConfig(yamlText);
    return this.enqueue<ScrapeConfig>({ text: yamlText });
  }

  /**
   * Checks a schedule's rule in the thread (core/schedule-times.ts `checkScheduleRule`: up to about 2 s of CPU for the
   * worst expressions, which would hold up every other request here).
   * @throws CodedError `invalid_request` (the rule, or past the time-out), `service_busy` (503).
   */
  async checkSchedule(input: { cron: unknown; timezone?: unknown }, opts: { minIntervalMinutes: number; now: Date }): Promise<ScheduleRuleCheck> {
    return this.enqueue<ScheduleRuleCheck>({ schedule: { input: { cron: input.cron, timezone: input.timezone }, minIntervalMinutes: opts.minIntervalMinutes, now: opts.now.toISOString() } });
  }

  private enqueue<T>(work: Pending['work']): Promise<T> {
    if (this.waiting.length >= MAX_WAITING) {
      throw new CodedError('service_busy', `The service is checking ${MAX_WAITING} configs or schedules already; retry in a moment`, [], { 'Retry-After': '1' });
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, work, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  /** Ends the thread; texts still waiting are refused. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    const err = new Error('the config parser is closed');
    if (this.current) {
      clearTimeout(this.current.timer);
      this.current.p.reject(err);
      this.current = null;
    }
    for (const p of this.waiting.splice(0)) p.reject(err);
    await w?.terminate();
  }

  /** Hands the next waiting text to the thread when it is free. */
  private pump(): void {
    if (this.current || !this.waiting.length) return;
    const p = this.waiting.shift()!;
    const timeoutMs = this.timeoutMs;
    const timer = setTimeout(() => this.timedOut(), timeoutMs);
    this.current = { p, timer, timeoutMs };
    this.thread().postMessage({ id: p.id, ...p.work } satisfies ParseRequest);
  }

  private timedOut(): void {
    const cur = this.current;
    if (!cur) return;
    this.current = null;
    cur.p.reject('text' in cur.p.work
      ? new CodedError('invalid_config', `The config took longer than ${cur.timeoutMs} ms to parse and was refused; make it smaller`,
        [{ path: '', message: `parsing took longer than ${cur.timeoutMs} ms` }])
      : new CodedError('invalid_request', `cron: the expression took longer than ${cur.timeoutMs} ms to check and was refused`,
        [{ path: 'cron', message: `checking took longer than ${cur.timeoutMs} ms` }]));
    this.replaceThread();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./config-parse-thread.ts', import.meta.url), { name: 'config-parser' });
    w.unref();
    w.on('message', (a: ParseAnswer) => this.settle(a));
    w.on('error', (err) => {
      logger.error('config parser thread crashed', { error: err });
      if (this.worker === w) this.lost(new Error(`the config parser thread crashed: ${err.message}`));
    });
    w.on('exit', () => {
      if (this.worker === w) this.lost(new Error('the config parser thread stopped'));
    });
    this.worker = w;
    return w;
  }

  private settle(a: ParseAnswer): void {
    const cur = this.current;
    if (!cur || cur.p.id !== a.id) return;
    clearTimeout(cur.timer);
    this.current = null;
    const p = cur.p;
    if (a.ok) p.resolve(a.config);
    else if ('coded' in a && isErrorCode(a.coded.code)) p.reject(new CodedError(a.coded.code, a.coded.message, a.coded.details));
    else p.reject(Object.assign(new Error('failure' in a ? a.failure.message : 'config parse failed'), { name: 'failure' in a ? a.failure.name : 'Error' }));
    this.pump();
  }

  /** The thread died: the text it held fails, the others go on in a new thread. */
  private lost(err: Error): void {
    const cur = this.current;
    this.current = null;
    if (cur) {
      clearTimeout(cur.timer);
      cur.p.reject(err);
    }
    this.replaceThread();
  }

  private replaceThread(): void {
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
    this.pump();
  }
}
