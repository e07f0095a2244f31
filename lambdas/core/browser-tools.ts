/**
 * The tools' work in Chromium (docs/tools.md): a page rendered for tech-detector's `render`, and the screenshot.
 * Driving Chromium costs the calling thread real work (the DevTools protocol's messages are JSON: a 5 MB DOM or a
 * full-page image is parsed and decoded there), so the local service does it on a browser thread of its own
 * (adapters/local/browser-tools.ts, installed as `Services.browserTools`) and the thread that answers HTTP only
 * waits (issue 24: another account's `GET /me/` stays fast). On Lambda, where a tool's function serves one call at a
 * time, {@link inlineBrowserTools} does the same work in place. Both run the functions of this file.
 *
 * Requests and answers are plain data (they cross a thread boundary): URLs, times in ms since the epoch, options.
 */
import type { BrowserHost } from '../engine/browser/host.ts';
import { documentHtml, pageFailure, pageLoadTimeout, watchDocumentAnswer, watchNavigationLoop, whenSettled, withinDeadline } from '../engine/browser/page-guard.ts';
import { screenshot, type Screenshot, type ScreenshotOptions } from '../engine/browser/screenshot.ts';
import { CodedError, isCodedError } from '../errors.ts';
import { unreachableError } from '../net/unreachable.ts';
import type { ToolPage } from '../tools/page.ts';
import { TOOL_MAX_PAGE_BYTES } from './tool-thread.ts';

/** A page to render for a tool: its URL, the call's start and deadline (ms), the globals to read. */
export interface RenderRequest {
  url: string;
  /** When the call started, ms since the epoch. */
  startedAt: number;
  /** The call's deadline from `startedAt`, ms. */
  deadlineMs: number;
  /**
   * Dotted paths (`jQuery.fn.jquery`) whose primitive values go to `rendered.globals`: a list, or the name of a set
   * the renderer knows (`tech-detector`: the fingerprints' `js` paths, which take a while to build, so the browser
   * thread builds them and not the thread that answers HTTP).
   */
  globalPaths: string[] | GlobalSet;
  /** Whose call it is (an account's id): the local browser thread serves accounts fairly and bounds each. */
  owner?: string;
}

/** Named sets of global paths ({@link RenderRequest.globalPaths}). */
export type GlobalSet = 'tech-detector';

/** A screenshot to take for a tool: its URL, the options of engine/browser/screenshot.ts, and the call's end. */
export interface ShotRequest {
  url: string;
  options: Omit<ScreenshotOptions, 'signal'>;
  /** The call's deadline, ms since the epoch: the shot is abandoned then. */
  deadlineAt: number;
  /** Whose call it is (an account's id), as {@link RenderRequest.owner}. */
  owner?: string;
}

/** Where the tools' browser work runs (`Services.browserTools`; {@link inlineBrowserTools} in place). */
export interface BrowserTools {
  /**
   * Renders a tool's target. @throws CodedError `target_unreachable` (422), `target_forbidden` (400),
   * `page_crashed`, `browser_crashed`, `page_unsettled`, `render_timeout`, `page_load_timeout` (422).
   */
  renderToolPage(request: RenderRequest): Promise<ToolPage>;
  /** Takes a screenshot. @throws CodedError as engine/browser/screenshot.ts `screenshot`. */
  screenshot(request: ShotRequest): Promise<Screenshot>;
}

/**
 * The tools' browser work in this thread, in `host()`'s browser.
 * @param sets the named sets of global paths this caller knows, each built on first use.
 */
export function inlineBrowserTools(host: () => BrowserHost, sets: Partial<Record<GlobalSet, () => readonly string[]>> = {}): BrowserTools {
  return {
    renderToolPage: (request) => renderToolPage(host(), request, sets),
    screenshot: (request) => shootPage(host(), request),
  };
}

/** A screenshot of a tool's target in `host`, abandoned at the call's deadline. */
export async function shootPage(host: BrowserHost, request: ShotRequest): Promise<Screenshot> {
  return screenshot(host, request.url, { ...request.options, signal: AbortSignal.timeout(Math.max(1, request.deadlineAt - Date.now())) });
}

/** The refusal of a page larger than a tool reads: 422 `target_unreachable`, reason `too_large`. */
function pageTooLarge(url: string, size: number): unknown {
  return unreachableError(url, new CodedError('response_too_large', `The page is ${size} bytes; a tool reads at most ${TOOL_MAX_PAGE_BYTES}`, [{ url }]));
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

/** Most JavaScript globals read from a rendered page (the fingerprints' `js` paths), and their value's length. */
const MAX_GLOBALS = 10_000;
const MAX_GLOBAL_CHARS = 200;

/**
 * Renders a tool's target in `host` (through the guard proxy, images off): the rendered DOM (at most
 * TOOL_MAX_PAGE_BYTES), headers, cookies set by scripts, JavaScript globals. Every read of the page waits out a
 * navigation the page starts itself, and ends at the call's deadline, a renderer crash or a closed browser: never
 * a 500, never past the budget.
 * @param sets the named sets of global paths the caller knows ({@link RenderRequest.globalPaths}).
 * @throws CodedError as {@link BrowserTools.renderToolPage}.
 */
export async function renderToolPage(host: BrowserHost, request: RenderRequest, sets: Partial<Record<GlobalSet, () => readonly string[]>> = {}): Promise<ToolPage> {
  const globalPaths = typeof request.globalPaths === 'string' ? sets[request.globalPaths]?.() : request.globalPaths;
  if (!globalPaths) throw new Error(`renderToolPage: no global paths named ${String(request.globalPaths)}`);
  const url = new URL(request.url);
  const end = request.startedAt + request.deadlineMs;
  const signal = AbortSignal.timeout(Math.max(1, end - Date.now()));
  const context = await host.newContext({ images: false });
  try {
    const page = await context.newPage();
    const deadline = end - 2_000;
    const timeUp = () => new CodedError('render_timeout', `${url.href} did not finish rendering within the tool's time`, [{ url: url.href }]);
    const read = <R>(fn: () => Promise<R>): Promise<R> => withinDeadline(page, whenSettled(page, fn, { signal }), deadline, timeUp, signal);
    let res;
    const navigation = watchNavigationLoop(page, url.href);
    const answer = watchDocumentAnswer(page);
    const timeout = Math.max(100, end - 8_000 - Date.now());
    try {
      res = await Promise.race([navigation.loop, page.goto(url.href, { waitUntil: 'load', timeout, signal } as Parameters<typeof page.goto>[1])]);
    } catch (err) {
      const failure = pageFailure(page) ?? (isCodedError(err) && err.code === 'page_unsettled' ? err : null) ?? navigation.unsettled();
      if (failure) throw failure;
      const event = context.proxyEvents.byHost.get(url.hostname.replace(/^\[|\]$/g, ''));
      if (event?.code === 'target_forbidden' || event?.code === 'dns_failed') throw browserLoadError(url.href, new CodedError(event.code, event.message, [{ url: url.href }]));
      // It answered and the load ran out of time: the page's doing, not an unreachable target.
      if (answer.answered() && (err as Error)?.name === 'TimeoutError') throw pageLoadTimeout(url.href, timeout);
      throw browserLoadError(url.href, new CodedError('target_failed', (err as Error).message.split('\n')[0]!, [{ url: url.href }]));
    } finally {
      navigation.stop();
      answer.stop();
    }
    await page.waitForNetworkIdle({ idleTime: 500, timeout: 3_000 }).catch(() => undefined);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res?.headers() ?? {})) headers[k.toLowerCase()] = v.replace(/\n/g, ', ');
    const setCookies = (res?.headers()['set-cookie'] ?? '').split('\n').filter(Boolean);
    for (const c of await read(() => page.cookies())) if (!setCookies.some((s) => s.startsWith(`${c.name}=`))) setCookies.push(`${c.name}=${c.value}`);
    const paths = globalPaths.slice(0, MAX_GLOBALS);
    const globals = await read(() => page.evaluate((list: string[], maxChars: number) => {
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
    }, paths, MAX_GLOBAL_CHARS));
    const contentType = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const chain = res ? [...res.request().redirectChain().map((r) => r.url()), res.url()] : [url.href];
    // The tool worker reads at most TOOL_MAX_PAGE_BYTES, as over HTTP: a larger DOM is not even copied out of
    // the browser (its length in characters is a lower bound of its UTF-8 bytes).
    const chars = await read(() => page.evaluate(() => document.documentElement?.outerHTML.length ?? 0));
    if (chars > TOOL_MAX_PAGE_BYTES) throw pageTooLarge(url.href, chars);
    const html = await read(() => documentHtml(page));
    const bytes = Buffer.byteLength(html);
    if (bytes > TOOL_MAX_PAGE_BYTES) throw pageTooLarge(url.href, bytes);
    return {
      requestedUrl: url.href,
      url: page.url(),
      status: res?.status() ?? 200,
      headers,
      setCookies,
      contentType,
      html,
      redirectChain: chain.length ? chain : [url.href],
      rendered: { globals },
    };
  } finally {
    await context.close().catch(() => undefined);
  }
}
