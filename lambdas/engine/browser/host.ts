/**
 * One Chromium per worker (a worker thread locally, a Lambda instance in the cloud), started lazily on
 * the first job that needs it and started again after a crash. Each job gets a fresh browser context
 * (cookies, cache and storage of one job never reach another).
 *
 * Images: most jobs need none of their bytes (an image field reads the `src` attribute), so the browser
 * runs with Blink's images off (`--blink-settings=imagesEnabled=false`): pages never request them, which
 * spares the network, the CDP traffic and the decoding (13-16% faster on the browser bench). A job that
 * needs images (an `eval` field or a `script` action may measure them; screenshots show them) asks for
 * them, and the worker's browser is restarted with images on when it is idle (one browser per worker
 * whichever way; a second one only while the first still has a job open).
 *
 * The binary is the one @sparticuz/chromium ships (unpacked to /tmp on first use; on Lambda from the
 * layer), or CHROME_PATH (e.g. on macOS). Every request of every page goes through a guard proxy
 * (lambdas/net/proxy.ts): each job's browser context has its own (so refusals are the job's), the browser a
 * default one; loopback not bypassed, QUIC off, WebRTC UDP only through the proxy (so never), background
 * networking off. Pages send the fetcher's User-Agent.
 *
 * Every page a job context opens (and every popup its pages open) answers its own dialogs at once: `alert`,
 * `confirm` and `prompt` are dismissed (confirm gives false, prompt null), `beforeunload` is accepted (the page
 * may be left). A page whose renderer crashes is closed at once, so that whatever waits on it fails now, not at
 * the protocol time-out (./page-guard.ts, which also has the reads that wait out a page navigating itself).
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { Browser, Page } from 'puppeteer-core';
import { guardPage, guardPopups } from './page-guard.ts';
import { CodedError } from '../../errors.ts';
import { lowerProcessGroupPriority } from '../../thread-priority.ts';

/** Whether pages load images: 'lean' (Blink's images off) or 'images'. */
export type ImageMode = 'lean' | 'images';

import { startGuardProxy, type GuardProxy, type ProxyEventLog, type UpstreamChoice } from '../../net/proxy.ts';
import type { OutboundGuard } from '../../net/guard.ts';
import { DEFAULT_USER_AGENT } from '../../net/fetch.ts';

/**
 * What a job gets of the browser: its own pages, its own guard proxy (so what the guard refused is known
 * per job), and nothing left behind when it closes.
 */
export interface JobContext {
  newPage(): Promise<Page>;
  /** What this job's guard proxy refused or could not reach. */
  readonly proxyEvents: ProxyEventLog;
  /**
   * Chains the job's guard proxy to another upstream proxy (null: direct) and forgets the context's cookies: the
   * run's next proxy session (crawl/proxy-sessions.ts). Open connections are closed, so the pages reconnect through it.
   */
  useUpstream(upstream: UpstreamChoice | null): Promise<void>;
  close(): Promise<void>;
}

/** What puppeteer's errors say when the browser (or the tab's session) is gone: a crash, a kill, a closed connection. */
export const BROWSER_GONE = /Target closed|Connection closed|Session closed|browser has disconnected|Protocol error.*(closed|detached)/i;

/**
 * `open()`, failing as soon as `browser` disconnects (it crashed or was killed) with the error puppeteer gives calls on
 * a closed connection ("Target closed: browser has disconnected"), which the loader reads as `browser_crashed`.
 * Puppeteer's `newPage()` waits for the new tab's target with a 30 s time-out that a disconnect does not end: a
 * browser dying while a tab opened failed the run 30 s later with a bare `TimeoutError`.
 */
export function untilDisconnected<T>(browser: Browser, open: () => Promise<T>): Promise<T> {
  const closed = () => new Error('Target closed: browser has disconnected');
  if (!browser.connected) return Promise.reject(closed());
  return new Promise<T>((resolve, reject) => {
    const onDisconnect = () => reject(closed());
    browser.once('disconnected', onDisconnect);
    open().then(resolve, reject).finally(() => browser.off('disconnected', onDisconnect));
  });
}

/** Options of a {@link BrowserHost}. */
export interface BrowserHostOptions {
  guard: OutboundGuard;
  /** The Chromium binary; default CHROME_PATH, else @sparticuz/chromium's. */
  executablePath?: string;
  /**
   * Use @sparticuz/chromium's own arguments unchanged (Lambda). Outside Lambda `--single-process` and
   * `--in-process-gpu` are dropped: with them Chromium can die at launch on a desktop Linux.
   * @default true on Lambda (AWS_LAMBDA_FUNCTION_NAME set), false elsewhere
   */
  lambdaArgs?: boolean;
  /**
   * V8 heap limit of a renderer process's JavaScript, MB (`--js-flags=--max-old-space-size`): a page that
   * allocates without bound crashes its renderer, not the worker. Pages of one job that share a renderer
   * (see rendererProcessLimit) share this limit, and a crash ends them together (the job fails either way).
   * @default 512
   */
  pageHeapMb?: number;
  /**
   * Most renderer processes Chromium starts (`--renderer-process-limit`; a soft limit, pages beyond it share
   * processes; renderers are never shared between browser contexts, so jobs stay apart). Each renderer costs
   * ~150 MB; more of them than CPU cores only costs memory. Off Lambda only (Lambda runs one process).
   * @default max(2, os.availableParallelism())
   */
  rendererProcessLimit?: number;
  /** Called with Chromium's pid after each launch (the local service kills it if its worker dies). */
  onLaunch?: (pid: number) => void;
  /** The User-Agent of every page (the fetcher's, so a site sees one client whichever loader runs). @default DEFAULT_USER_AGENT */
  userAgent?: string;
  /** Largest response body a job's proxy forwards for a plain-http request, bytes. @default 10485760 */
  maxResponseBytes?: number;
}

/** Flags this service adds to Chromium's, whatever the platform. */
const SERVICE_FLAGS = [
  '--proxy-bypass-list=<-loopback>',
  '--disable-quic',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--metrics-recording-only',
  '--mute-audio',
];

/** @sparticuz/chromium flags this service does not want: pages stay in their origin's sandbox. */
const DROPPED_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content']);
/**
 * @sparticuz/chromium flags kept on Lambda only. `--single-process` and `--in-process-gpu` kill Chromium at
 * launch on Debian; the SwiftShader GL flags start a GPU process of ~220 MB that scraping does not need:
 * off Lambda the browser runs with `--disable-gpu` (software compositing; screenshots work, WebGL does not).
 */
const NOT_OFF_LAMBDA = new Set(['--single-process', '--in-process-gpu', '--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist']);
const OFF_LAMBDA_FLAGS = ['--disable-gpu'];

export class BrowserHost {
  private readonly o: BrowserHostOptions;
  /** The running browser of each image mode (normally one of the two), with its open job contexts. */
  private readonly browsers = new Map<ImageMode, { browser: Browser; open: number }>();
  private readonly launching = new Map<ImageMode, Promise<Browser>>();
  private lastLaunched: Browser | null = null;
  private proxy: GuardProxy | null = null;
  /** Times Chromium was started (1 after the first launch; more after crashes and image-mode switches). */
  launches = 0;

  constructor(o: BrowserHostOptions) {
    this.o = o;
  }

  /**
   * The running browser of that image mode, launched (again) when needed. An idle browser of the other
   * mode is closed first, so a worker keeps one browser.
   */
  async get(mode: ImageMode = 'lean', proxyUrl?: string): Promise<Browser> {
    const running = this.browsers.get(mode);
    if (running?.browser.connected) return running.browser;
    let launching = this.launching.get(mode);
    if (!launching) {
      const other = this.browsers.get(mode === 'lean' ? 'images' : 'lean');
      launching = (async () => {
        if (other && other.open === 0) await this.closeBrowser(mode === 'lean' ? 'images' : 'lean');
        return this.launch(mode, proxyUrl);
      })().finally(() => { this.launching.delete(mode); });
      this.launching.set(mode, launching);
    }
    return launching;
  }

  /**
   * A fresh, isolated context for one job: an incognito browser context whose requests go through a guard
   * proxy of its own; with Lambda's single-process Chromium, which cannot open a second context, a browser of
   * its own (a new profile) launched with the job's proxy, closed with the job. A Lambda instance runs one job
   * at a time, so that costs one launch per job.
   * @param o.images load images (default false: Blink's images off, see the file's comment)
   * @throws CodedError `browser_crashed` when the browser dies while the context is being made
   */
  async newContext(o: { images?: boolean } = {}): Promise<JobContext> {
    const mode: ImageMode = o.images ? 'images' : 'lean';
    const proxy = await startGuardProxy(this.o.guard, { maxBytes: this.o.maxResponseBytes });
    if (this.singleProcess()) {
      await this.closeBrowser();
      const browser = await this.get(mode, proxy.url).catch(async (err: unknown) => { await proxy.close(); throw err; });
      guardPopups(browser);
      return {
        newPage: async () => guardPage(await untilDisconnected(browser, () => browser.newPage())),
        proxyEvents: proxy.events,
        useUpstream: async (upstream) => {
          proxy.useUpstream(upstream);
          const cookies = await browser.cookies().catch(() => []);
          if (cookies.length) await browser.deleteCookie(...cookies).catch(() => undefined);
        },
        close: async () => {
          await this.closeBrowser();
          await proxy.close();
        },
      };
    }
    let browser: Browser;
    try {
      browser = await this.get(mode);
    } catch (err) {
      await proxy.close();
      throw err;
    }
    // Counted before the next await, so a job asking for the other image mode meanwhile cannot close this browser.
    const entry = this.browsers.get(mode);
    if (entry?.browser === browser) entry.open++;
    let context: Awaited<ReturnType<Browser['createBrowserContext']>>;
    try {
      context = await untilDisconnected(browser, () => browser.createBrowserContext({ proxyServer: proxy.url, proxyBypassList: ['<-loopback>'] }));
    } catch (err) {
      if (entry?.browser === browser) entry.open--;
      await proxy.close();
      if (!browser.connected || BROWSER_GONE.test((err as Error)?.message ?? '')) {
        throw new CodedError('browser_crashed', `The browser stopped while the job's context was being made (${((err as Error)?.message ?? String(err)).split('\n')[0]}); the job failed and the next one starts a new browser`);
      }
      throw err;
    }
    guardPopups(context);
    let closed = false;
    return {
      newPage: async () => guardPage(await untilDisconnected(browser, () => context.newPage())),
      proxyEvents: proxy.events,
      useUpstream: async (upstream) => {
        proxy.useUpstream(upstream);
        const cookies = await context.cookies().catch(() => []);
        if (cookies.length) await context.deleteCookie(...cookies).catch(() => undefined);
      },
      close: async () => {
        if (closed) return;
        closed = true;
        if (entry?.browser === browser) entry.open--;
        await context.close().catch(() => undefined);
        await proxy.close();
      },
    };
  }

  private singleProcess(): boolean {
    return this.o.lambdaArgs ?? Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);
  }

  /** Closes the browser of one image mode, or all. */
  private async closeBrowser(mode?: ImageMode): Promise<void> {
    const modes: ImageMode[] = mode ? [mode] : ['lean', 'images'];
    await Promise.all(modes.map(async (m) => {
      const b = this.browsers.get(m)?.browser;
      this.browsers.delete(m);
      await b?.close().catch(() => b.process()?.kill('SIGKILL'));
    }));
  }

  /** The outbound guard every request of this host's pages goes through. */
  get guard(): OutboundGuard {
    return this.o.guard;
  }

  /** Checks a page URL before loading it (scheme, IP literals); names are decided by the proxy. @throws TargetForbiddenError */
  guardCheck(url: string): void {
    this.o.guard.checkUrl(url);
  }

  /** The Chromium process launched last (tests kill it to check crash handling). */
  process(): ChildProcess | null {
    return this.lastLaunched?.connected ? this.lastLaunched.process() : null;
  }

  private async launch(mode: ImageMode, proxyUrl?: string): Promise<Browser> {
    const [{ default: puppeteer }, chromium] = await Promise.all([import('puppeteer-core'), import('@sparticuz/chromium').then((m) => m.default)]);
    // The browser-wide proxy carries whatever no job context does (the default context's blank page).
    this.proxy ??= await startGuardProxy(this.o.guard, { maxBytes: this.o.maxResponseBytes });
    const onLambda = this.singleProcess();
    const executablePath = this.o.executablePath ?? (process.env.CHROME_PATH || await chromium.executablePath());
    const args = chromium.args
      .filter((a) => !DROPPED_FLAGS.has(a) && (onLambda || !NOT_OFF_LAMBDA.has(a)) && !a.startsWith('--headless'))
      .concat(SERVICE_FLAGS, [
        `--proxy-server=${proxyUrl ?? this.proxy.url}`,
        `--js-flags=--max-old-space-size=${this.o.pageHeapMb ?? 512}`,
        `--user-agent=${this.o.userAgent ?? DEFAULT_USER_AGENT}`,
      ]);
    if (!onLambda) args.push(...OFF_LAMBDA_FLAGS, `--renderer-process-limit=${this.o.rendererProcessLimit ?? Math.max(2, availableParallelism())}`);
    if (mode === 'lean') args.push('--blink-settings=imagesEnabled=false');
    const browser = await puppeteer.launch({
      executablePath,
      args,
      headless: 'shell',
      // A pipe rather than a WebSocket: when this process goes, Chromium sees the pipe close and exits.
      pipe: true,
      defaultViewport: { width: 1366, height: 900 },
      protocolTimeout: 120_000,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    this.launches++;
    const pid = browser.process()?.pid;
    // Chromium leads its own process group (puppeteer starts it detached): it and the renderers its zygote forks
    // yield the CPU to the thread that answers HTTP (lambdas/thread-priority.ts).
    if (pid) lowerProcessGroupPriority(pid);
    if (pid) this.o.onLaunch?.(pid);
    browser.on('disconnected', () => {
      if (this.browsers.get(mode)?.browser === browser) this.browsers.delete(mode);
    });
    this.browsers.set(mode, { browser, open: 0 });
    this.lastLaunched = browser;
    return browser;
  }

  /** Closes the browser and the proxy. */
  async close(): Promise<void> {
    await this.closeBrowser();
    await this.proxy?.close();
    this.proxy = null;
  }
}
