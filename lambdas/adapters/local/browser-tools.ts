/**
 * `Services.browserTools` of the local service's HTTP thread (core/browser-tools.ts): the tools' browser work (the
 * screenshot, tech-detector's rendered load) goes to one browser thread (./browser-tools-thread.ts), which owns
 * their Chromium, so that parsing the DevTools protocol's large messages never holds up the thread that answers
 * HTTP. The thread starts on the first call and serves calls concurrently (a browser context each). When it dies,
 * the calls it held fail with `browser_crashed` (a code the tool refunds), its Chromium is ended, and the next call
 * starts a new thread.
 */
import { Worker } from 'node:worker_threads';
import type { BrowserTools, RenderRequest, ShotRequest } from '../../core/browser-tools.ts';
import type { Screenshot } from '../../engine/browser/screenshot.ts';
import { CodedError, isErrorCode } from '../../errors.ts';
import { logger } from '../../logger.ts';
import type { ToolPage } from '../../tools/page.ts';
import type { BrowserThreadAnswer, BrowserThreadData, BrowserThreadRequest } from './browser-tools-thread.ts';
import { killBrowserGroups } from './browser-processes.ts';

/** How long a stopping browser thread may take to close its Chromium before it is ended, ms. */
const CLOSE_WAIT_MS = 5_000;

interface Pending {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** The browser thread of the local service: a {@link BrowserTools} whose work runs off the calling thread. */
export class LocalBrowserTools implements BrowserTools {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly browsers = new Set<number>();
  private nextId = 1;
  private closed = false;
  private readonly data: BrowserThreadData;

  constructor(outboundAllow: readonly string[]) {
    this.data = { outboundAllow: [...outboundAllow] };
  }

  renderToolPage(request: RenderRequest): Promise<ToolPage> {
    return this.call({ op: 'render', request }) as Promise<ToolPage>;
  }

  async screenshot(request: ShotRequest): Promise<Screenshot> {
    const shot = await this.call({ op: 'screenshot', request }) as Screenshot & { body: Uint8Array };
    return { ...shot, body: Buffer.from(shot.body.buffer, shot.body.byteOffset, shot.body.byteLength) };
  }

  /** Closes the thread's Chromium and ends the thread; calls made afterwards fail. */
  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    if (!w) return;
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage({ op: 'close' } satisfies BrowserThreadRequest);
    const timer = setTimeout(() => void w.terminate(), CLOSE_WAIT_MS);
    await exited;
    clearTimeout(timer);
    this.killBrowsers();
  }

  private call(message: { op: 'render'; request: RenderRequest } | { op: 'screenshot'; request: ShotRequest }): Promise<unknown> {
    if (this.closed) return Promise.reject(new CodedError('service_busy', 'The service is stopping'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.thread().postMessage({ id, ...message } as BrowserThreadRequest);
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./browser-tools-thread.ts', import.meta.url), { name: 'browser-tools', workerData: this.data });
    w.on('message', (a: BrowserThreadAnswer) => {
      if ('browserPid' in a) {
        this.browsers.add(a.browserPid);
        return;
      }
      const p = this.pending.get(a.id);
      if (!p) return;
      this.pending.delete(a.id);
      if (a.ok) p.resolve(a.result);
      else if (a.error.code && isErrorCode(a.error.code)) p.reject(new CodedError(a.error.code, a.error.message, a.error.details ?? []));
      else p.reject(Object.assign(new Error(a.error.message), { name: a.error.name }));
    });
    w.on('error', (err) => logger.error('browser thread crashed', { error: err }));
    w.on('exit', () => {
      if (this.worker !== w) return;
      this.worker = null;
      this.killBrowsers();
      for (const p of this.pending.values()) p.reject(new CodedError('browser_crashed', 'The browser thread stopped while it rendered the page; the next call starts a new one'));
      this.pending.clear();
    });
    // It must not keep the process alive on its own: the service closes it when it stops.
    w.unref();
    this.worker = w;
    return w;
  }

  /** Ends the browsers this thread started, with their process groups. */
  private killBrowsers(): void {
    killBrowserGroups(this.browsers);
  }
}
