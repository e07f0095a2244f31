/**
 * The website-analysis tools, the API side (SPEC.md area B, "Tool endpoints"; docs/tools.md): what every
 * tool call does before and after the tool's own work. In order:
 *
 * 1. the plan and the limits, with reads only (API access; the hourly rate limit of variant B; the tool's
 *    daily limit, `tool_calls_per_day` of lambdas/core/plans.json);
 * 2. the URL: an absolute http(s) URL (400 `invalid_url`), that the outbound guard allows (400 `target_forbidden`);
 * 3. metering, atomically (core/metering.ts `meter`: the hourly slot, the tool's daily slot, 0.1 credit in variant B);
 * 4. the target, through the guard (the engine's fetcher, or the browser for the tools that render): a target
 *    that cannot be reached answers 422 `target_unreachable` with the reason, and the credit is given back
 *    (the rate-limit slots are not: the call was made);
 * 5. the tool's own function on the page, bounded by {@link TOOL_DEADLINE_MS}.
 */
import { CodedError, isCodedError } from '../errors.ts';
import type { BrowserHost } from '../engine/browser/host.ts';
import { Fetcher, FetchError, type FetchedPage } from '../net/fetch.ts';
import type { OutboundGuard } from '../net/guard.ts';
import type { FetchedText, PageFetch, ToolPage } from '../tools/page.ts';
import { checkHeadroom, meter, refund, type Charge } from './metering.ts';
import { parseTargetUrl } from './target-url.ts';
import { unreachableError } from '../net/unreachable.ts';
import type { AccountRecord } from './ports.ts';
import type { Services } from './services.ts';

/** The tools of SPEC.md's endpoint list, by the last segment of their path (`/api/v1/tools/<name>/`). */
export type ToolName = 'seo-analyzer' | 'tech-detector' | 'lead-generation' | 'screenshot' | 'content-extractor'
  | 'broken-link-checker' | 'dns-whois' | 'ssl-checker';

/**
 * Time one tool call may take from the first request to the answer, ms: under API Gateway's 29 s integration
 * limit, with room for metering and the answer.
 */
export const TOOL_DEADLINE_MS = 25_000;

/** Largest page a page tool reads, bytes after decompression (docs/limits.md). */
const TOOL_MAX_PAGE_BYTES = 5 * 1024 * 1024;

/** Largest follow-up response (robots.txt, a contact page), bytes: Google reads the first 500 KiB of a robots.txt. */
const FOLLOW_UP_MAX_BYTES = 512 * 1024;

/** A tool call that passed its checks and was metered. */
export interface ToolCall {
  url: URL;
  charge: Charge | null;
  /** Aborts at the call's deadline ({@link TOOL_DEADLINE_MS}). */
  signal: AbortSignal;
  /** When the call started, ms since the epoch. */
  startedAt: number;
}

/** Milliseconds left of a call's {@link TOOL_DEADLINE_MS}, less `reserveMs` for the answer; at least 100. */
export function timeLeftMs(call: ToolCall, reserveMs = 2_000): number {
  return Math.max(100, TOOL_DEADLINE_MS - reserveMs - (Date.now() - call.startedAt));
}

/**
 * Checks and meters a tool call (steps 1-3 of the file's comment).
 * @throws CodedError `plan_required`, `plan_unknown`, `rate_limited` (429, `Retry-After`; reason
 *   `tool_daily_limit` for the tool's daily limit), `quota_exceeded`, `invalid_url`, `target_forbidden`.
 *   Nothing is spent when it throws.
 */
export async function startToolCall(svc: Services, account: AccountRecord, tool: ToolName, rawUrl: string): Promise<ToolCall> {
  await checkHeadroom(svc, account, 'tool', tool);
  const url = parseTargetUrl(rawUrl);
  svc.guard.checkUrl(url.href);
  const charge = await meter(svc, account, 'tool', tool);
  return { url, charge, signal: AbortSignal.timeout(TOOL_DEADLINE_MS), startedAt: Date.now() };
}

/**
 * Runs a metered tool call's work: when the target cannot be loaded (`target_unreachable`, or `target_forbidden`
 * for a redirect hop or a resolved address) the credit is given back; the hourly and daily slots stay spent.
 */
export async function withRefundOnUnreachable<T>(svc: Services, account: AccountRecord, call: ToolCall, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isCodedError(err) && (err.code === 'target_unreachable' || err.code === 'target_forbidden')) await refund(svc, account, call.charge);
    throw err;
  }
}

/**
 * A whole page-tool call over HTTP: checks and metering ({@link startToolCall}), the page ({@link loadToolPage}),
 * then `analyse` with a follow-up fetch through the guard.
 *
 * **Example usage:**
 * ```ts
 * const report = await runPageTool(svc, account, 'seo-analyzer', body.url, (page, fetch) => analyzeSeo(page, fetch));
 * ```
 * @throws CodedError as {@link startToolCall} and {@link loadToolPage}.
 */
export async function runPageTool<T>(
  svc: Services, account: AccountRecord, tool: ToolName, rawUrl: string,
  analyse: (page: ToolPage, fetch: PageFetch, call: ToolCall) => T | Promise<T>,
): Promise<T> {
  const call = await startToolCall(svc, account, tool, rawUrl);
  return withRefundOnUnreachable(svc, account, call, async () => analyse(await loadToolPage(svc, call), toolPageFetch(svc, call), call));
}

const fetchers = new WeakMap<OutboundGuard, { page: Fetcher; followUp: Fetcher }>();

/**
 * The tools' HTTP clients of this process, one pair per guard: pages (5 MiB, 15 s, one retry) and follow-ups
 * (robots.txt, contact pages: 512 KiB, 8 s, no retry). Keep-alive connections are shared between calls.
 */
function toolFetchers(guard: OutboundGuard): { page: Fetcher; followUp: Fetcher } {
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
 * @throws CodedError `target_unreachable` (422) or `target_forbidden` (400), see {@link toolLoadError}.
 */
async function loadToolPage(svc: Services, call: ToolCall): Promise<ToolPage> {
  try {
    return toToolPage(await toolFetchers(svc.guard).page.fetch(call.url.href, { signal: call.signal }));
  } catch (err) {
    throw unreachableError(call.url.href, err);
  }
}

/** The follow-up fetch a tool gets ({@link PageFetch}): through the guard, null when the URL cannot be fetched. */
function toolPageFetch(svc: Services, call: ToolCall): PageFetch {
  const fetcher = toolFetchers(svc.guard).followUp;
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

/**
 * The tool error of a page the browser could not load (lambdas/engine/browser/screenshot.ts throws
 * `target_failed`, `dns_failed` or `target_forbidden`): 422 `target_unreachable` with the reason, or the
 * guard's refusal unchanged; any other error is returned as it is.
 */
export function browserLoadError(url: string, err: unknown): unknown {
  if (!isCodedError(err)) return err;
  if (err.code === 'target_forbidden' || err.code === 'dns_failed' || err.code === 'target_failed') return unreachableError(url, err);
  return err;
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

/** Most JavaScript globals read from a rendered page (the fingerprints' `js` paths), and their value's length. */
const MAX_GLOBALS = 10_000;
const MAX_GLOBAL_CHARS = 200;

/**
 * Loads a tool's target in the browser (through the guard proxy, images off), for tools that read what only a
 * live page has: the rendered DOM, cookies set by scripts, JavaScript globals.
 * @param globalPaths dotted paths (`jQuery.fn.jquery`) whose primitive values go to `rendered.globals`.
 * @throws CodedError `target_unreachable` (422) or `target_forbidden` (400).
 */
export async function loadRenderedToolPage(svc: Services, call: ToolCall, host: BrowserHost, globalPaths: readonly string[]): Promise<ToolPage> {
  await probeTarget(svc, call);
  const context = await host.newContext({ images: false });
  try {
    const page = await context.newPage();
    let res;
    try {
      res = await page.goto(call.url.href, { waitUntil: 'load', timeout: TOOL_DEADLINE_MS - 8_000, signal: call.signal } as Parameters<typeof page.goto>[1]);
    } catch (err) {
      const event = context.proxyEvents.byHost.get(call.url.hostname.replace(/^\[|\]$/g, ''));
      if (event?.code === 'target_forbidden' || event?.code === 'dns_failed') throw browserLoadError(call.url.href, new CodedError(event.code, event.message, [{ url: call.url.href }]));
      throw browserLoadError(call.url.href, new CodedError('target_failed', (err as Error).message.split('\n')[0]!, [{ url: call.url.href }]));
    }
    await page.waitForNetworkIdle({ idleTime: 500, timeout: 3_000 }).catch(() => undefined);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res?.headers() ?? {})) headers[k.toLowerCase()] = v.replace(/\n/g, ', ');
    const setCookies = (res?.headers()['set-cookie'] ?? '').split('\n').filter(Boolean);
    for (const c of await page.cookies()) if (!setCookies.some((s) => s.startsWith(`${c.name}=`))) setCookies.push(`${c.name}=${c.value}`);
    const paths = globalPaths.slice(0, MAX_GLOBALS);
    const globals = await page.evaluate((list: string[], maxChars: number) => {
      const out: Record<string, string | number | boolean> = {};
      for (const path of list) {
        try {
          let v: unknown = globalThis;
          for (const part of path.split('.')) {
            if (v === null || v === undefined) break;
            v = (v as Record<string, unknown>)[part];
          }
          if (typeof v === 'string') out[path] = v.slice(0, maxChars);
          else if (typeof v === 'number' || typeof v === 'boolean') out[path] = v;
          else if (v !== undefined && v !== null) out[path] = true;
        } catch { /* a getter that throws: not there */ }
      }
      return out;
    }, paths, MAX_GLOBAL_CHARS);
    const contentType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const chain = res ? [...res.request().redirectChain().map((r) => r.url()), res.url()] : [call.url.href];
    return {
      requestedUrl: call.url.href,
      url: page.url(),
      status: res?.status() ?? 200,
      headers,
      setCookies,
      contentType,
      html: await page.content(),
      redirectChain: chain.length ? chain : [call.url.href],
      rendered: { globals },
    };
  } finally {
    await context.close().catch(() => undefined);
  }
}
