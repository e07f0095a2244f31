/**
 * The website-analysis tools, the API side (docs/spec.md, "Tool endpoints"; docs/tools.md): what every
 * tool call does before and after the tool's own work. In order:
 *
 * 1. a place in the tool workers' queue (core/tool-pool.ts): 503 `service_busy` when it is full, before anything
 *    is spent;
 * 2. the plan and the limits, with reads only (API access; the hourly rate limit of variant B; the tool's
 *    daily limit, `tool_calls_per_day` of lambdas/core/plans.json);
 * 3. the URL: an absolute http(s) URL (400 `invalid_url`), that the outbound guard allows (400 `target_forbidden`);
 * 4. metering, atomically (core/metering.ts `meter`: the hourly slot, the tool's daily slot, 0.1 credit in variant B);
 * 5. in a tool worker thread, never on the thread that answers HTTP (core/tool-thread.ts): the target through the
 *    guard, then the tool's own work on it, within what is left of the call's deadline ({@link TOOL_DEADLINE_MS},
 *    or `SAI_TOOL_DEADLINE_MS` locally) and the thread's memory cap. A target that cannot be reached answers 422
 *    `target_unreachable` with the reason; work past the deadline or the cap is stopped and answered 422
 *    `analysis_limit_exceeded`. Either way, and for a call that found no free worker in time (503
 *    `service_busy`), the credit is given back; the hourly and daily slots are not (the call was made).
 *
 * The tools that need a browser (screenshot, tech-detector's `render`) drive it from this thread (it runs the
 * page's JavaScript in its own processes); the HTML it hands back is analysed in a tool worker like any page.
 */
import { availableParallelism } from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { CodedError, isCodedError } from '../errors.ts';
import type { BrowserHost } from '../engine/browser/host.ts';
import { inlineBrowserTools, type GlobalSet } from './browser-tools.ts';
import type { ToolPage } from '../tools/page.ts';
import { checkHeadroom, meter, refund, type Charge } from './metering.ts';
import { parseTargetUrl } from './target-url.ts';
import { unreachableError } from '../net/unreachable.ts';
import type { AccountRecord } from './ports.ts';
import type { Services } from './services.ts';
import { isToolWorkerLost, ToolPool, type ToolPoolOptions } from './tool-pool.ts';
import { TOOL_MAX_PAGE_BYTES, toolFetchers, toolWork as registerToolWork, type ToolWork, type ToolWorkFn } from './tool-thread.ts';

/** The tools of docs/spec.md's endpoint list, by the last segment of their path (`/api/v1/tools/<name>/`). */
export type ToolName = 'seo-analyzer' | 'tech-detector' | 'lead-generation' | 'screenshot' | 'content-extractor'
  | 'broken-link-checker' | 'dns-whois' | 'ssl-checker';

/**
 * Time one tool call may take from the first request to the answer, ms: under API Gateway's 29 s integration
 * limit, with room for metering and the answer. The local service may set a shorter one (`SAI_TOOL_DEADLINE_MS`).
 */
export const TOOL_DEADLINE_MS = 25_000;

/** How this process runs tool calls: the deadline and the tool workers (docs/tools.md, "Where the tools run"). */
export interface ToolSettings extends ToolPoolOptions {
  /** A call's whole time from its checks to the answer, ms. */
  deadlineMs: number;
}

/** Default heap cap of a tool worker, MB: a 4 MB page of real HTML needs about 200 MB in content-extractor. */
const TOOL_WORKER_MEMORY_MB = 512;

/**
 * The defaults: locally `max(2, min(4, cores))` threads, one spare and 32 calls waiting, each thread's heap capped at 512 MB;
 * in a Lambda one thread (an instance serves one call at a time) capped at half the function's memory (at most
 * 512 MB), so that the thread, not the function, reaches its limit first, and no spare (no call waits there).
 */
export function defaultToolSettings(env: NodeJS.ProcessEnv = process.env): ToolSettings {
  const lambdaMb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  if (env.AWS_LAMBDA_FUNCTION_NAME && lambdaMb > 0) {
    return { deadlineMs: TOOL_DEADLINE_MS, size: 1, maxWaiting: 4, memoryMb: Math.max(64, Math.min(TOOL_WORKER_MEMORY_MB, Math.floor(lambdaMb / 2))), spares: 0 };
  }
  return { deadlineMs: TOOL_DEADLINE_MS, size: Math.max(2, Math.min(4, availableParallelism())), maxWaiting: 32, memoryMb: TOOL_WORKER_MEMORY_MB, spares: 1 };
}

let settings: ToolSettings = defaultToolSettings();
let pool: ToolPool | null = null;

/**
 * Sets how this process runs tool calls (the local service, from its environment), before the first call. A pool
 * already started is closed: the next call starts one with the new settings.
 */
export async function configureToolCalls(next: Partial<ToolSettings>): Promise<void> {
  settings = { ...settings, ...next };
  const old = pool;
  pool = null;
  await old?.close();
}

/** This process's tool workers (started on first use, or by {@link warmToolWorkers}). */
function toolPool(): ToolPool {
  return pool ??= new ToolPool(settings);
}

/** Starts the tool workers and waits until they are ready (the local service before it listens; a Lambda at its cold start). */
export async function warmToolWorkers(): Promise<void> {
  await toolPool().warm();
}

/** Ends the tool workers (the local service's stop). */
export async function closeToolWorkers(): Promise<void> {
  const old = pool;
  pool = null;
  await old?.close();
}

let warming = false;

/**
 * Registers a tool's work (core/tool-thread.ts `toolWork`), at the top level of its handler module. In a Lambda
 * the tool worker is then started during the cold start, with the module loaded, rather than by the first call.
 */
export function toolWork<P>(name: ToolName, moduleUrl: string, fn: ToolWorkFn<P>): ToolWork<P> {
  const work = registerToolWork(name, moduleUrl, fn);
  if (isMainThread && process.env.AWS_LAMBDA_FUNCTION_NAME && !warming) {
    warming = true;
    setImmediate(() => void warmToolWorkers().catch(() => undefined));
  }
  return work;
}

/** A tool call that passed its checks and was metered. */
export interface ToolCall {
  url: URL;
  charge: Charge | null;
  /** Aborts at the call's deadline. */
  signal: AbortSignal;
  /** When the call started, ms since the epoch. */
  startedAt: number;
  /** The call's whole time from `startedAt`, ms ({@link TOOL_DEADLINE_MS} unless set shorter). */
  deadlineMs: number;
  /** Whose call it is: the account's id (the browser thread's and the tool workers' fairness). */
  owner?: string;
}

/** Milliseconds left of a call's deadline, less `reserveMs` for the answer; at least 100. */
export function timeLeftMs(call: Pick<ToolCall, 'startedAt'> & { deadlineMs?: number }, reserveMs = 2_000): number {
  return Math.max(100, (call.deadlineMs ?? TOOL_DEADLINE_MS) - reserveMs - (Date.now() - call.startedAt));
}

/**
 * Checks and meters a tool call (steps 2-4 of the file's comment).
 * @throws CodedError `plan_required`, `plan_unknown`, `rate_limited` (429, `Retry-After`; reason
 *   `tool_daily_limit` for the tool's daily limit), `quota_exceeded`, `invalid_url`, `target_forbidden`.
 *   Nothing is spent when it throws.
 */
export async function startToolCall(svc: Services, account: AccountRecord, tool: ToolName, rawUrl: string): Promise<ToolCall> {
  await checkHeadroom(svc, account, 'tool', tool);
  const url = parseTargetUrl(rawUrl);
  svc.guard.checkUrl(url.href);
  const charge = await meter(svc, account, 'tool', tool);
  const deadlineMs = settings.deadlineMs;
  return { url, charge, signal: AbortSignal.timeout(deadlineMs), startedAt: Date.now(), deadlineMs, owner: String(account.id) };
}

/** Codes of a metered call that got no result through no fault of the request: its credit is given back. */
const REFUNDED_CODES: ReadonlySet<string> = new Set(['target_unreachable', 'target_forbidden', 'analysis_limit_exceeded', 'service_busy',
  // The page's own behaviour in the browser (engine/browser/page-guard.ts): a crashed renderer or browser, a page
  // that kept navigating itself, a render past its budget.
  'page_crashed', 'browser_crashed', 'page_unsettled', 'render_timeout', 'page_load_timeout',
  // A bot-protection page instead of the site (net/blocks.ts): nothing of it was analysed.
  'blocked']);

/**
 * Runs a metered tool call's work: when the target cannot be loaded (`target_unreachable`, or `target_forbidden`
 * for a redirect hop or a resolved address), the work passed its time or memory limit (`analysis_limit_exceeded`),
 * no tool worker was free in time (`service_busy`) or the worker died under it, the credit is given back; the
 * hourly and daily slots stay spent.
 */
export async function withRefundOnUnreachable<T>(svc: Services, account: AccountRecord, call: ToolCall, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if ((isCodedError(err) && REFUNDED_CODES.has(err.code)) || isToolWorkerLost(err)) await refund(svc, account, call.charge);
    throw err;
  }
}

/**
 * A whole tool call: a place in the tool workers' queue, checks and metering ({@link startToolCall}), then the
 * tool's registered work in a tool worker (core/tool-thread.ts), which reads the page through the guard unless
 * `o.page` loads it here (the browser's rendered page).
 *
 * **Example usage:**
 * ```ts
 * const work = toolWork('seo-analyzer', import.meta.url, async ({ page, fetch }) => analyzeSeo(await page(), fetch));
 * return jsonText(200, await runPageTool(svc, account, work, body.url, {}));
 * ```
 * @param params the request's own parameters, copied to the worker (plain data).
 * @returns the work's result as JSON text.
 * @throws CodedError as {@link startToolCall}; `service_busy` (503) when the queue is full (nothing spent) or no
 *   worker was free in time; `target_unreachable` (422), `target_forbidden` (400), `analysis_limit_exceeded` (422).
 */
export async function runPageTool<P>(
  svc: Services, account: AccountRecord, work: ToolWork<P>, rawUrl: string, params: P,
  o: { page?: (call: ToolCall) => Promise<ToolPage> } = {},
): Promise<string> {
  const ticket = toolPool().reserve(String(account.id));
  let call: ToolCall;
  try {
    call = await startToolCall(svc, account, work.name as ToolName, rawUrl);
  } catch (err) {
    ticket.cancel();
    throw err;
  }
  return withRefundOnUnreachable(svc, account, call, async () => {
    let page: ToolPage | undefined;
    try {
      page = o.page ? await o.page(call) : undefined;
    } catch (err) {
      ticket.cancel();
      throw err;
    }
    return ticket.run({
      work: work.name, module: work.module, url: call.url.href, allow: [...svc.guard.allow],
      startedAt: call.startedAt, deadlineMs: call.deadlineMs, params, ...(page ? { page } : {}),
    });
  });
}

/**
 * Checks that a tool's target answers at all (one HEAD through the guard, any status), before a browser is
 * started for it: a target that cannot be reached gets the same 422 `target_unreachable` and reason as over HTTP.
 * @throws CodedError `target_unreachable` or `target_forbidden`.
 */
export async function probeTarget(svc: Services, call: ToolCall): Promise<void> {
  try {
    await toolFetchers(svc.guard).followUp.fetch(call.url.href, { method: 'HEAD', signal: call.signal });
  } catch (err) {
    throw unreachableError(call.url.href, err);
  }
}

/**
 * Loads a tool's target in the browser (through the guard proxy, images off), for tools that read what only a
 * live page has: the rendered DOM, cookies set by scripts, JavaScript globals. The reachability probe runs here;
 * the browser work runs where `svc.browserTools` says (the local service's browser thread), else in this thread
 * in `host()`'s browser (core/browser-tools.ts `renderToolPage`).
 * @param globals the named set of dotted paths (`jQuery.fn.jquery`) whose primitive values go to `rendered.globals`,
 *   and how to build it here when the work runs in this thread.
 * @throws CodedError `target_unreachable` (422) or `target_forbidden` (400); the page's own failures
 *   (`page_crashed`, `browser_crashed`, `page_unsettled`, `render_timeout`, `page_load_timeout`, 422).
 */
export async function loadRenderedToolPage(svc: Services, call: ToolCall, host: () => BrowserHost, globals: { set: GlobalSet; paths: () => readonly string[] }): Promise<ToolPage> {
  await probeTarget(svc, call);
  const request = { url: call.url.href, startedAt: call.startedAt, deadlineMs: call.deadlineMs, globalPaths: globals.set, ...(call.owner ? { owner: call.owner } : {}) };
  return (svc.browserTools ?? inlineBrowserTools(host, { [globals.set]: globals.paths })).renderToolPage(request);
}
