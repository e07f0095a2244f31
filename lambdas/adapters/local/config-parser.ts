/**
 * Config parsing off the HTTP thread (docs/limits.md): the local service answers every account from one
 * event loop, so a config text that takes tens of milliseconds to parse (up to ~150 ms at the caps of
 * engine/config-source.ts) would hold up everyone else's requests. Texts up to
 * {@link INLINE_MAX_CHARS} are parsed inline (a few milliseconds at most); larger ones go to one worker
 * thread (config-parse-thread.ts), in order. A parse that outlives its time-out (5 s) ends its
 * thread and is refused; the next text starts a new thread.
 *
 * On Lambda each instance serves one request at a time, so the cloud parses inline (core/configs.ts).
 */
import { Worker } from 'node:worker_threads';
import { parseConfig, type ScrapeConfig } from '../../engine/config.ts';
import { CodedError, isErrorCode } from '../../errors.ts';
import type { ConfigParser } from '../../core/ports.ts';
import { logger } from '../../logger.ts';
import type { ParseAnswer, ParseRequest } from './config-parse-thread.ts';

/** Longest text parsed on the calling thread, in characters (worst case measured: about 5 ms). */
export const INLINE_MAX_CHARS = 2048;
/** Longest a parse in the thread may take before the thread is ended and the config refused, ms. */
const PARSE_TIMEOUT_MS = 5000;

/** Options of {@link ThreadConfigParser}. */
export interface ThreadConfigParserOptions {
  /** Longest a text may wait and parse in the thread, ms. @default 5000 */
  timeoutMs?: number;
}

interface Pending {
  resolve(config: ScrapeConfig): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** A {@link ConfigParser} that keeps large texts off the calling thread. Call {@link close} at shutdown. */
export class ThreadConfigParser implements ConfigParser {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Longest a text may wait and parse in the thread, ms; applies to texts sent after a change. */
  timeoutMs: number;

  constructor(options: ThreadConfigParserOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? PARSE_TIMEOUT_MS;
  }

  async parse(yamlText: string): Promise<ScrapeConfig> {
    if (typeof yamlText !== 'string' || yamlText.length <= INLINE_MAX_CHARS) return parseConfig(yamlText);
    const worker = this.thread();
    const id = this.nextId++;
    return new Promise<ScrapeConfig>((resolve, reject) => {
      // The thread parses in order: a text's time-out counts from when it is sent, queue included.
      const timer = setTimeout(() => this.restart(new CodedError('invalid_config',
        `The config took longer than ${this.timeoutMs} ms to parse and was refused; make it smaller`,
        [{ path: '', message: `parsing took longer than ${this.timeoutMs} ms` }])), this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      worker.postMessage({ id, text: yamlText } satisfies ParseRequest);
    });
  }

  /** Ends the thread; texts still waiting are refused. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.failAll(new Error('the config parser is closed'));
    await w?.terminate();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./config-parse-thread.ts', import.meta.url), { name: 'config-parser' });
    w.unref();
    w.on('message', (a: ParseAnswer) => this.settle(a));
    w.on('error', (err) => {
      logger.error('config parser thread crashed', { error: err });
      if (this.worker === w) this.restart(new Error(`the config parser thread crashed: ${err.message}`));
    });
    w.on('exit', () => {
      if (this.worker === w) this.restart(new Error('the config parser thread stopped'));
    });
    this.worker = w;
    return w;
  }

  private settle(a: ParseAnswer): void {
    const p = this.pending.get(a.id);
    if (!p) return;
    this.pending.delete(a.id);
    clearTimeout(p.timer);
    if (a.ok) p.resolve(a.config as ScrapeConfig);
    else if ('coded' in a && isErrorCode(a.coded.code)) p.reject(new CodedError(a.coded.code, a.coded.message, a.coded.details));
    else p.reject(Object.assign(new Error('failure' in a ? a.failure.message : 'config parse failed'), { name: 'failure' in a ? a.failure.name : 'Error' }));
  }

  /** Ends the thread and refuses every text it holds with `err`; the next text starts a new thread. */
  private restart(err: Error): void {
    const w = this.worker;
    this.worker = null;
    this.failAll(err);
    void w?.terminate();
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
  }
}
