/**
 * The service's one structured logger: AWS Powertools for Lambda (TypeScript) Logger
 * (https://docs.powertools.aws.dev/lambda/typescript/latest/core/logger/). Every line is one JSON object
 * with `level`, `message`, `timestamp`, `service` (`scrape-ai`) and the keys passed with the call; on
 * Lambda the API handlers add the invocation's context (function name, request id, cold start) through
 * Powertools' `injectLambdaContext` middleware (lambdas/http/middleware.ts).
 *
 * **Request scope.** A Lambda instance serves one invocation at a time, so the context `injectLambdaContext` puts on
 * the logger is that invocation's. The local service serves many requests at once from one event loop: there each
 * request runs in {@link withRequestScope} (lambdas/adapters/local/http-edges.ts), an AsyncLocalStorage scope that
 * holds the request's own Lambda context and keys, and the logger writes those (not another request's) on every line
 * logged while the request is handled, its access-log line included. Outside a scope (Lambda, workers, start-up) the
 * logger is Powertools' own, unchanged.
 *
 * Level: `POWERTOOLS_LOG_LEVEL`, else `LOG_LEVEL` (`DEBUG`, `INFO`, `WARN`, `ERROR`, `SILENT`; default
 * `INFO`), read by Powertools itself; Lambda's advanced logging controls (`AWS_LAMBDA_LOG_LEVEL`) win over
 * both. Powertools writes `debug` and `info` to stdout and `warn` and `error` to stderr, as Lambda's own
 * console does; both reach CloudWatch on Lambda and the terminal locally.
 *
 * Human-facing output of the command-line tools (bin/) is plain text, not this logger.
 *
 * **Example usage:**
 * ```ts
 * logger.error('run attempt failed', { jobId, attempt, error: err });
 * ```
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Console } from 'node:console';
import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

type LogKeys = Record<string, unknown>;
type LogItemExtraInput = Parameters<Logger['info']> extends [unknown, ...infer R] ? R : never;

/** What one request adds to the lines logged while it is handled. */
interface RequestScope {
  /** The Lambda context of the handler serving it, as Powertools writes it (`function_name`, `function_request_id`, …). */
  context: LogKeys | null;
  /** Keys appended during the request (`appendKeys`), cleared by `resetKeys`. */
  keys: LogKeys;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/**
 * Powertools' Logger whose Lambda context and temporary keys belong to the current request scope when there is one
 * ({@link withRequestScope}), and to the logger itself otherwise (Powertools' behaviour).
 */
class RequestScopedLogger extends Logger {
  /** Within a request scope: the context is the request's, not the shared logger's. */
  override addContext(context: Context): void {
    const scope = scopes.getStore();
    if (!scope) {
      super.addContext(context);
      return;
    }
    scope.context = {
      cold_start: this.getColdStart(),
      function_arn: context.invokedFunctionArn,
      function_memory_size: context.memoryLimitInMB,
      function_name: context.functionName,
      function_request_id: context.awsRequestId,
    };
  }

  override appendKeys(attributes: LogKeys): void {
    const scope = scopes.getStore();
    if (scope) Object.assign(scope.keys, attributes);
    else super.appendKeys(attributes);
  }

  override removeKeys(keys: string[]): void {
    const scope = scopes.getStore();
    if (!scope) {
      super.removeKeys(keys);
      return;
    }
    for (const k of keys) delete scope.keys[k];
  }

  override resetKeys(): void {
    const scope = scopes.getStore();
    if (scope) scope.keys = {};
    else super.resetKeys();
  }

  /** Every line: the request's context and keys first, so that the call's own keys win. */
  protected override createAndPopulateLogItem(logLevel: number, input: Parameters<Logger['info']>[0], extraInput: LogItemExtraInput): ReturnType<Logger['createAndPopulateLogItem']> {
    const scope = scopes.getStore();
    if (!scope || (!scope.context && Object.keys(scope.keys).length === 0)) return super.createAndPopulateLogItem(logLevel, input, extraInput);
    return super.createAndPopulateLogItem(logLevel, input, [{ ...scope.context, ...scope.keys }, ...extraInput] as LogItemExtraInput);
  }
}

/** The process's logger (one per thread: each worker thread loads its own copy of this module). */
export const logger: Logger = new RequestScopedLogger({ serviceName: 'scrape-ai' });

/**
 * Runs `fn` in a new request scope: the Lambda context added by the handler (`injectLambdaContext`) and keys
 * appended meanwhile go on the lines logged within `fn` and what it starts, and on no other request's.
 * @param keys keys for every line of the request from the start (e.g. none: the handler adds its context).
 */
export function withRequestScope<T>(fn: () => T, keys: LogKeys = {}): T {
  return scopes.run({ context: null, keys: { ...keys } }, fn);
}

/** Most bytes of log lines held before they are written at once ({@link batchLogOutput}). */
const MAX_BATCH_BYTES = 64 * 1024;
/** Longest a flush waits for a full pipe, ms. */
const MAX_BLOCKED_MS = 2_000;
/** What {@link LineBatch.flush} waits on (`Atomics.wait` with a time-out: a sleep that needs no event loop). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Lines for one file descriptor, held and written together: at the end of the event loop's current turn
 * (`setImmediate`), when {@link MAX_BATCH_BYTES} are held, and synchronously at the process's exit.
 */
class LineBatch extends Writable {
  private held: string[] = [];
  private bytes = 0;
  private scheduled = false;
  private readonly fd: 1 | 2;

  constructor(fd: 1 | 2) {
    super({ decodeStrings: false });
    this.fd = fd;
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.held.push(text);
    this.bytes += text.length;
    if (this.bytes >= MAX_BATCH_BYTES) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    done();
  }

  /**
   * Writes what is held to the descriptor, synchronously and all of it, in order: a pipe Node made non-blocking that
   * is full (EAGAIN: its reader is slow) is waited for, 1 ms at a time, as a blocking write would, for at most
   * {@link MAX_BLOCKED_MS}; past that, or on a closed descriptor (EPIPE), the rest is dropped: never a hang, never
   * the request. (`process.stdout.write` would queue instead, and lose what is queued at `process.exit`: Node writes
   * pipes asynchronously on Linux, "A note on process I/O".)
   */
  flush(): void {
    this.scheduled = false;
    if (!this.held.length) return;
    const bytes = Buffer.from(this.held.join(''), 'utf8');
    this.held = [];
    this.bytes = 0;
    let done = 0;
    const giveUpAt = Date.now() + MAX_BLOCKED_MS;
    while (done < bytes.length) {
      try {
        done += writeSync(this.fd, bytes, done);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > giveUpAt) return;
        Atomics.wait(PAUSE, 0, 0, 1);
      }
    }
  }
}

let batched: { out: LineBatch; err: LineBatch } | null = null;

/**
 * Makes the process's logger write its lines in batches: the lines of one turn of the event loop in one write, at
 * most 64 KiB held, the rest written synchronously at exit. One `write` per request's access-log line costs the HTTP
 * thread a system call and its reader a wake-up per request (bench/README.md, "npm run bench -- api", the access log);
 * batched, the lines are the same and in the same order. For the long-running local process only: a Lambda's lines
 * must be out before its invocation returns (Powertools' own console is kept there). Idempotent.
 */
export function batchLogOutput(): void {
  if (batched) return;
  batched = { out: new LineBatch(1), err: new LineBatch(2) };
  const c = new Console({ stdout: batched.out, stderr: batched.err });
  // As Powertools patches its own console: console.trace without a stack trace (Logger.setConsole).
  c.trace = (message?: unknown, ...rest: unknown[]) => c.log(message, ...rest);
  // Powertools keeps its console in a field of its own (Logger.console, private in its types).
  (logger as unknown as { console: Console }).console = c;
  process.on('exit', flushLogOutput);
}

/**
 * Writes out the lines {@link batchLogOutput} holds now, so that what the process then writes itself (the local
 * service's "listening" line on stdout) comes after them, as it was logged after them. Does nothing unbatched.
 */
export function flushLogOutput(): void {
  batched?.out.flush();
  batched?.err.flush();
}
