/**
 * The tools' work off the thread that answers HTTP (docs/tools.md, "Where the tools run"): what a tool does with a
 * page runs in a tool worker thread of core/tool-pool.ts, with a time budget and a memory cap, because everything
 * a page contains is hostile input. This module is both sides of that:
 *
 * - **the registry of tool work**, {@link toolWork}: each tool's handler module (lambdas/http/tools-*.ts) names the
 *   function that does its work on a page (`(ctx, params) => analyzeSeo(await ctx.page(), ctx.fetch)`), and
 *   the module it lives in, so that a worker can load the same module and find the same function;
 * - **the worker thread**: started by the pool with {@link TOOL_THREAD_MARK} in its `workerData`, it loads the
 *   tools' modules, says `ready`, then runs one {@link ToolTask} at a time: the page through the outbound guard
 *   (fetch, redirects, decompression, charset decoding), the tool's work, and the answer serialised as JSON
 *   text. The pool ends a thread that passes its budget or its heap; nothing of the page reaches the HTTP thread
 *   but that text.
 *
 * Locally the thread's entry is this file. In a Lambda bundle (one esbuild file, lib/lambda.ts) there is no such
 * file: the pool starts the bundle itself as the thread, and this module's code, which is in the bundle because
 * the pool imports it, sees the mark and serves (core/tool-pool.ts `threadEntry`).
 */
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { lowerThisThreadPriority } from '../thread-priority.ts';
import { CodedError, isCodedError, isErrorCode } from '../errors.ts';
import { Fetcher, FetchError, type FetchedPage } from '../net/fetch.ts';
import { OutboundGuard } from '../net/guard.ts';
import { unreachableError } from '../net/unreachable.ts';
import { blockMessage, detectBlock } from '../net/blocks.ts';
import type { FetchedText, PageFetch, ToolPage } from '../tools/page.ts';

/** The key in `workerData` that makes a thread a tool worker (and not a job worker or the HTTP thread). */
export const TOOL_THREAD_MARK = 'saiToolThread';

/** Largest page a page tool reads, bytes after decompression (docs/limits.md); a rendered page's HTML too. */
export const TOOL_MAX_PAGE_BYTES = 5 * 1024 * 1024;

/** Largest follow-up response (robots.txt, a contact page), bytes: Google reads the first 500 KiB of a robots.txt. */
const FOLLOW_UP_MAX_BYTES = 512 * 1024;

/**
 * How long before the pool's hard stop the call's own I/O is aborted, ms: a target that is merely slow then ends
 * as 422 `target_unreachable` (`timeout`), the answer it would get on the HTTP thread, and only work that does
 * not yield is cut off as `analysis_limit_exceeded`.
 */
const IO_MARGIN_MS = 500;

/** A tool call as its work sees it in the worker: the URL and the call's deadline. */
export interface WorkCall {
  url: URL;
  /** Aborts {@link IO_MARGIN_MS} before the call's deadline. */
  signal: AbortSignal;
  /** When the call started (its checks passed), ms since the epoch. */
  startedAt: number;
  /** The call's whole time, from `startedAt`, ms. */
  deadlineMs: number;
}

/** What a tool's work gets in the worker. */
export interface ToolWorkContext {
  call: WorkCall;
  /** The outbound guard, with the HTTP thread's allowlist. */
  guard: OutboundGuard;
  /**
   * The page: the one the HTTP thread loaded (a rendered page), else fetched here through the guard (5 MiB,
   * 15 s an attempt, one retry), once.
   * @throws CodedError `target_unreachable` (422) or `target_forbidden` (400).
   */
  page(): Promise<ToolPage>;
  /** Follow-up requests (robots.txt, contact pages) through the guard: 512 KiB, 8 s, no retry. */
  fetch: PageFetch;
}

/** A tool's work on a page: its result must be JSON-serialisable (it is answered as it is). */
export type ToolWorkFn<P> = (ctx: ToolWorkContext, params: P) => unknown;

/** A registered tool work, as the HTTP thread names it to a worker. `P` is the type of its params. */
export interface ToolWork<P> {
  /** Unique name, e.g. `seo-analyzer`. */
  readonly name: string;
  /** URL of the module that registers it (its `import.meta.url`): a worker imports it to find the function. */
  readonly module: string;
  /** Only for the type of the params; never set. */
  readonly params?: P;
}

const works = new Map<string, { module: string; fn: ToolWorkFn<never> }>();

/**
 * Registers a tool's work, at the top level of the module that defines it, so that a tool worker that imports
 * `moduleUrl` finds it.
 *
 * **Example usage:**
 * ```ts
 * const work = toolWork('content-extractor', import.meta.url, async ({ page }) => extractContent(await page()));
 * // then, in the handler: jsonText(200, await runPageTool(svc, account, work, body.url, {}))
 * ```
 * @throws Error when another module registered the name.
 */
export function toolWork<P>(name: string, moduleUrl: string, fn: ToolWorkFn<P>): ToolWork<P> {
  const known = works.get(name);
  if (known && known.module !== moduleUrl) throw new Error(`tool work ${name} is registered by ${known.module} already`);
  works.set(name, { module: moduleUrl, fn: fn as ToolWorkFn<never> });
  return { name, module: moduleUrl };
}

/** The modules that registered tool work in this thread: a new tool worker loads them before it says `ready`. */
export function toolWorkModules(): string[] {
  return [...new Set([...works.values()].map((w) => w.module))];
}

/** One call's work, as the HTTP thread sends it to a worker (plain data: it is copied between threads). */
export interface ToolTask {
  id: number;
  /** {@link ToolWork.name} and {@link ToolWork.module}. */
  work: string;
  module: string;
  /** The target, absolute http(s), checked by the guard on the HTTP thread. */
  url: string;
  /** The outbound guard's allowlist (the HTTP thread's `guard.allow`). */
  allow: readonly string[];
  startedAt: number;
  deadlineMs: number;
  params: unknown;
  /** A page the HTTP thread loaded already (the browser's), at most {@link TOOL_MAX_PAGE_BYTES} of HTML. */
  page?: ToolPage;
}

/** A failure as it crosses threads (classes do not): a coded error, or anything else (a bug: a 500). */
export type WireError =
  | { coded: { code: string; message: string; details: unknown[]; headers?: Record<string, string> } }
  | { failure: { name: string; message: string; stack?: string } };

/** What a tool worker tells the pool. */
export type ToolThreadMessage =
  | { type: 'ready' }
  /** A task's answer: the work's result as JSON text. */
  | { type: 'done'; id: number; json: string }
  | { type: 'failed'; id: number; error: WireError }
  /** The thread could not load the tools' modules: it ends. */
  | { type: 'fatal'; message: string };

/** What the pool puts in a tool worker's `workerData`. */
export interface ToolThreadData {
  [TOOL_THREAD_MARK]: true;
  /** Modules to load before `ready` ({@link toolWorkModules} of the HTTP thread). */
  preload: string[];
}

const fetchers = new WeakMap<OutboundGuard, { page: Fetcher; followUp: Fetcher }>();

/**
 * The tools' HTTP clients of this thread, one pair per guard: pages (5 MiB, 15 s, one retry) and follow-ups
 * (robots.txt, contact pages, the browser tools' reachability probe: 512 KiB, 8 s, no retry). Keep-alive
 * connections are shared between the calls of one thread.
 */
export function toolFetchers(guard: OutboundGuard): { page: Fetcher; followUp: Fetcher } {
  let f = fetchers.get(guard);
  if (!f) {
    f = {
      page: new Fetcher(guard, { timeoutMs: 15_000, maxBytes: TOOL_MAX_PAGE_BYTES, retries: 1, retryBaseMs: 300, retryMaxMs: 2_000 }),
      followUp: new Fetcher(guard, { timeoutMs: 8_000, maxBytes: FOLLOW_UP_MAX_BYTES, retries: 0 }),
    };
    fetchers.set(guard, f);
  }
  return f;
}

/** Whether a response's body is text a page tool can read (HTML, XML, plain text, or no type at all). */
function isTextual(contentType: string): boolean {
  return contentType === '' || /^text\/|[+/]xml$|html|json/.test(contentType);
}

/** A fetched page as the page tools read it; a body that is not text (an image, a PDF) becomes ''. */
function toToolPage(p: FetchedPage): ToolPage {
  return {
    requestedUrl: p.requestedUrl,
    url: p.url,
    status: p.status,
    headers: p.headers,
    setCookies: p.setCookies,
    contentType: p.contentType,
    html: isTextual(p.contentType) ? p.text : '',
    redirectChain: p.redirectChain,
  };
}

/**
 * Loads a tool's target over HTTP through the guard: whatever its status (a 404 page is analysed as a 404).
 * @throws CodedError `target_unreachable` (422) or `target_forbidden` (400).
 */
async function loadToolPage(guard: OutboundGuard, call: WorkCall): Promise<ToolPage> {
  try {
    return toToolPage(await toolFetchers(guard).page.fetch(call.url.href, { signal: call.signal }));
  } catch (err) {
    throw unreachableError(call.url.href, err);
  }
}

/**
 * The page, unless it is a bot-protection page (lambdas/net/blocks.ts): a tool has nothing of the site to analyse
 * then, and says so.
 * @throws CodedError `blocked` (422, not charged) naming the service.
 */
function notBlocked(page: ToolPage): ToolPage {
  const block = detectBlock({ status: page.status, headers: page.headers, body: page.html });
  if (block) {
    throw new CodedError('blocked', `${blockMessage(block, page.url, 'none')}; nothing of the site was analysed and the call is not charged`,
      [{ url: page.url, service: block.service, kind: block.kind, status: block.status }]);
  }
  return page;
}

/** The follow-up fetch a tool gets ({@link PageFetch}): through the guard, null when the URL cannot be fetched. */
function toolPageFetch(guard: OutboundGuard, call: WorkCall): PageFetch {
  const fetcher = toolFetchers(guard).followUp;
  return async (url: string): Promise<FetchedText | null> => {
    if (call.signal.aborted) return null;
    try {
      const p = await fetcher.fetch(url, { signal: call.signal });
      return { url: p.url, status: p.status, headers: p.headers, contentType: p.contentType, text: isTextual(p.contentType) ? p.text : '' };
    } catch (err) {
      if (err instanceof FetchError || isCodedError(err) || call.signal.aborted) return null;
      throw err;
    }
  };
}

/** The guards of this thread, one per allowlist. */
const guards = new Map<string, OutboundGuard>();

function guardFor(allow: readonly string[]): OutboundGuard {
  const key = allow.join(',');
  let g = guards.get(key);
  if (!g) {
    g = new OutboundGuard({ allow });
    guards.set(key, g);
  }
  return g;
}

/**
 * V8's errors for a limit a page made the work reach (recursion too deep for the stack, a string or array past
 * V8's own maximum): the page's doing, not a bug, so they are answered like the heap cap.
 */
function resourceLimit(err: unknown): 'stack' | 'memory' | null {
  if (!(err instanceof RangeError)) return null;
  if (/Maximum call stack size exceeded/.test(err.message)) return 'stack';
  if (/Invalid (string|array|typed array) length|Array buffer allocation failed|out of memory/i.test(err.message)) return 'memory';
  return null;
}

/** A thrown value as it crosses to the pool. */
function toWire(err: unknown, task: ToolTask): WireError {
  if (isCodedError(err)) return { coded: { code: err.code, message: err.message, details: err.details, ...(err.headers ? { headers: err.headers } : {}) } };
  const limit = resourceLimit(err);
  if (limit) {
    const what = limit === 'stack' ? 'nests deeper than the analysis can follow' : 'makes the analysis build a value larger than it may';
    return { coded: { code: 'analysis_limit_exceeded', message: `The page at ${task.url} ${what}; the tool stopped and the call is not charged`, details: [{ url: task.url, limit }] } };
  }
  const e = err as Error | undefined;
  return { failure: { name: e?.name ?? 'Error', message: e?.message ?? String(err), ...(e?.stack ? { stack: e.stack } : {}) } };
}

/** Runs one task in this thread: the page (given or fetched), the registered work, the result as JSON text. */
async function runTask(task: ToolTask): Promise<ToolThreadMessage> {
  try {
    if (!works.has(task.work)) await import(task.module);
    const work = works.get(task.work);
    if (!work) throw new Error(`no tool work named ${task.work} in ${task.module}`);
    const guard = guardFor(task.allow);
    const left = task.startedAt + task.deadlineMs - Date.now();
    const call: WorkCall = { url: new URL(task.url), signal: AbortSignal.timeout(Math.max(1, left - IO_MARGIN_MS)), startedAt: task.startedAt, deadlineMs: task.deadlineMs };
    let page: Promise<ToolPage> | null = null;
    const load = () => (task.page ? Promise.resolve(task.page) : loadToolPage(guard, call)).then(notBlocked);
    const ctx: ToolWorkContext = { call, guard, page: () => page ??= load(), fetch: toolPageFetch(guard, call) };
    const result = await work.fn(ctx, task.params as never);
    return { type: 'done', id: task.id, json: JSON.stringify(result) ?? 'null' };
  } catch (err) {
    return { type: 'failed', id: task.id, error: toWire(err, task) };
  }
}

/** The thread's loop: load the tools' modules, say `ready`, then one task at a time as the pool sends them. */
function serve(port: MessagePort, data: ToolThreadData): void {
  // Page work yields the CPU to the thread that answers HTTP (lambdas/thread-priority.ts).
  lowerThisThreadPriority();
  port.on('message', (task: ToolTask) => {
    void runTask(task).then((answer) => port.postMessage(answer));
  });
  Promise.all(data.preload.map((m) => import(m))).then(
    () => port.postMessage({ type: 'ready' } satisfies ToolThreadMessage),
    (err: unknown) => {
      port.postMessage({ type: 'fatal', message: (err as Error)?.stack ?? String(err) } satisfies ToolThreadMessage);
      process.exit(1); // ends this thread only
    },
  );
}

if (!isMainThread && parentPort && (workerData as Partial<ToolThreadData> | null)?.[TOOL_THREAD_MARK]) serve(parentPort, workerData as ToolThreadData);

/** For the pool: rebuilds a coded error that crossed from a worker. */
export function fromWire(err: WireError): Error {
  if ('coded' in err && isErrorCode(err.coded.code)) return new CodedError(err.coded.code, err.coded.message, err.coded.details, err.coded.headers);
  if ('coded' in err) return new Error(`${err.coded.code}: ${err.coded.message}`);
  return Object.assign(new Error(err.failure.message), { name: err.failure.name, ...(err.failure.stack ? { stack: err.failure.stack } : {}) });
}
