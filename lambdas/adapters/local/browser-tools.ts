/**
 * `Services.browserTools` of the local service's HTTP thread (core/browser-tools.ts): the tools' browser work (the
 * screenshot, tech-detector's rendered load) goes to one browser thread (./browser-tools-thread.ts), which owns
 * their Chromium, so that parsing the DevTools protocol's large messages never holds up the thread that answers
 * HTTP. The thread starts on the first call and serves calls concurrently (a browser context each), at most
 * {@link BROWSER_TASKS_AT_ONCE} at once and {@link BROWSER_TASKS_PER_OWNER} of one account (issue 37: one account's
 * flood of renders that never stop, or that eat their renderer's memory, held the tools' Chromium and the CPU for
 * everyone); calls beyond wait in turn (the account with the fewest being worked on first, then the one served least
 * recently), and a call still waiting 1 s before its deadline is refused with 503 `service_busy` (refunded). A call
 * being worked on is answered at its deadline with 422 `render_timeout` (refunded) if the thread has not answered
 * yet; its place is given back when the thread is done with it. When the
 * thread dies, the calls it held fail with `browser_crashed` (a code the tool refunds), its Chromium is ended, and the
 * next call starts a new thread.
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

/** Browser calls (renders, screenshots) worked on at once. */
export const BROWSER_TASKS_AT_ONCE = 4;
/** Browser calls of one account worked on at once. */
export const BROWSER_TASKS_PER_OWNER = 2;
/** Least time a waiting call must have left to be started, ms; one that waited longer is refused as busy. */
const MIN_BUDGET_MS = 1_000;
/** Seconds a refused call is told to wait. */
const BUSY_RETRY_AFTER_S = 5;

interface Pending {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Message = { op: 'render'; request: RenderRequest } | { op: 'screenshot'; request: ShotRequest };

/** A call waiting for its turn. */
interface Waiting {
  message: Message;
  owner: string;
  /** When the call's time is up, ms since the epoch. */
  deadlineAt: number;
  timer: NodeJS.Timeout;
  pending: Pending;
}

/** The browser thread of the local service: a {@link BrowserTools} whose work runs off the calling thread. */
export class LocalBrowserTools implements BrowserTools {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly browsers = new Set<number>();
  private nextId = 1;
  private closed = false;
  private readonly data: BrowserThreadData;
  private readonly waiting: Waiting[] = [];
  /** Calls being worked on, by owner. */
  private readonly running = new Map<string, number>();
  private runningTotal = 0;
  private readonly lastServed = new Map<string, number>();
  private served = 0;

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
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.pending.reject(new CodedError('service_busy', 'The service is stopping'));
    }
    const w = this.worker;
    if (!w) return;
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage({ op: 'close' } satisfies BrowserThreadRequest);
    const timer = setTimeout(() => void w.terminate(), CLOSE_WAIT_MS);
    await exited;
    clearTimeout(timer);
    this.killBrowsers();
  }

  /** Queues a call for its turn ({@link pump}). */
  private call(message: Message): Promise<unknown> {
    if (this.closed) return Promise.reject(new CodedError('service_busy', 'The service is stopping'));
    const owner = message.request.owner ?? '';
    const deadlineAt = message.op === 'render' ? message.request.startedAt + message.request.deadlineMs : message.request.deadlineAt;
    return new Promise((resolve, reject) => {
      const w: Waiting = { message, owner, deadlineAt, pending: { resolve, reject }, timer: setTimeout(() => this.refuse(w), Math.max(0, deadlineAt - MIN_BUDGET_MS - Date.now())) };
      this.waiting.push(w);
      this.pump();
    });
  }

  /** A call that waited until its deadline was near: 503, refunded by the tool. */
  private refuse(w: Waiting): void {
    const i = this.waiting.indexOf(w);
    if (i === -1) return;
    this.waiting.splice(i, 1);
    w.pending.reject(new CodedError('service_busy', "The tools' browser was busy with other calls until this call's time limit; retry in a few seconds (the call is not charged)", [], { 'Retry-After': String(BUSY_RETRY_AFTER_S) }));
  }

  /**
   * Starts waiting calls while fewer than {@link BROWSER_TASKS_AT_ONCE} run: the oldest call of the account with the
   * fewest running (under {@link BROWSER_TASKS_PER_OWNER}), then of the one served least recently.
   */
  private pump(): void {
    while (this.runningTotal < BROWSER_TASKS_AT_ONCE && this.waiting.length) {
      let best = -1;
      for (let i = 0; i < this.waiting.length; i++) {
        const o = this.waiting[i]!.owner;
        const n = this.running.get(o) ?? 0;
        if (n >= BROWSER_TASKS_PER_OWNER) continue;
        if (best === -1) { best = i; continue; }
        const b = this.waiting[best]!.owner;
        const nb = this.running.get(b) ?? 0;
        if (n < nb || (n === nb && (this.lastServed.get(o) ?? -1) < (this.lastServed.get(b) ?? -1))) best = i;
      }
      if (best === -1) return;
      const [w] = this.waiting.splice(best, 1);
      this.start(w!);
    }
  }

  private start(w: Waiting): void {
    clearTimeout(w.timer);
    this.running.set(w.owner, (this.running.get(w.owner) ?? 0) + 1);
    this.runningTotal++;
    this.lastServed.set(w.owner, this.served++);
    if (this.lastServed.size > 256) for (const o of this.lastServed.keys()) if (!this.running.has(o) && !this.waiting.some((x) => x.owner === o)) this.lastServed.delete(o);
    const done = () => {
      const n = (this.running.get(w.owner) ?? 1) - 1;
      if (n > 0) this.running.set(w.owner, n);
      else this.running.delete(w.owner);
      this.runningTotal--;
      this.pump();
    };
    const id = this.nextId++;
    // The call is answered by its deadline whatever the browser is doing (a renderer spinning in a script that never
    // ends held its work 21 s past an 8 s deadline, until the HTTP layer's own time-out answered 500): 422
    // render_timeout, refunded. Its place stays taken until the thread is done with it, so the bounds above hold.
    let answered = false;
    const answer = (fn: () => void) => {
      if (answered) return;
      answered = true;
      clearTimeout(late);
      fn();
    };
    const url = w.message.request.url;
    const startedAt = Date.now();
    const late = setTimeout(() => answer(() => {
      logger.warn("tools' browser work answered at its deadline, still running", { op: w.message.op, url });
      w.pending.reject(new CodedError('render_timeout', `${url} did not finish rendering within the tool's time; the call is not charged`,
        [{ url, budget_ms: Math.max(0, w.deadlineAt - startedAt) }]));
    }), Math.max(0, w.deadlineAt - Date.now()));
    this.pending.set(id, {
      resolve: (v) => { done(); answer(() => w.pending.resolve(v)); },
      reject: (e) => { done(); answer(() => w.pending.reject(e)); },
    });
    this.thread().postMessage({ id, ...w.message } as BrowserThreadRequest);
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
