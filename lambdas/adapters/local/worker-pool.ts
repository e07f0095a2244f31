/**
 * The job workers of the local service: `SAI_WORKERS` worker threads (worker-thread.ts), each playing a
 * run-worker Lambda instance. A slot keeps its thread alive (a thread that dies is replaced after 500 ms)
 * and knows which queue message the thread holds, so that a thread that dies gives its message back at
 * once (the next delivery retries or dead-letters the job) and a clean stop gives it back untouched (the
 * job resumes at the next start without spending an attempt). Chromium processes a thread started are
 * killed with it.
 */
import { Worker } from 'node:worker_threads';
import { logger } from '../../logger.ts';
import { JOB_WORKER_RESOURCE_LIMITS } from './limits.ts';
import type { LocalServices, LocalSettings } from './runtime.ts';
import type { WorkerReport } from './worker-thread.ts';
import { killBrowserGroups } from './browser-processes.ts';

/** Delay before a dead worker thread is replaced (ms). */
const RESTART_DELAY_MS = 500;

/** The message a worker thread works on. */
export interface HeldMessage {
  receipt: string;
  /** The job the message names; null when its body is unreadable. */
  jobId: string | null;
  /** When the thread took it, ms since the epoch on the services' clock. */
  since: number;
}

/** Keeps one job-worker thread alive and knows which message it holds. */
export class WorkerSlot {
  private worker: Worker | null = null;
  private holding: HeldMessage | null = null;
  /** Chromium processes this worker started: killed when the worker dies or the service stops. */
  private browsers = new Set<number>();
  private stopped = false;
  private readonly settings: LocalSettings;
  private readonly local: LocalServices;
  /** 1-based, for thread names and logs. */
  readonly index: number;

  constructor(settings: LocalSettings, local: LocalServices, index: number) {
    this.settings = settings;
    this.local = local;
    this.index = index;
  }

  /** The message the thread holds now, or null when it is idle (or has no thread). */
  get held(): HeldMessage | null {
    return this.worker ? this.holding : null;
  }

  start(): void {
    const w = new Worker(new URL('./worker-thread.ts', import.meta.url), {
      workerData: this.settings,
      name: `job-worker-${this.index}`,
      // A run that allocates without bound ends this thread, not the service.
      resourceLimits: { ...JOB_WORKER_RESOURCE_LIMITS },
    });
    w.on('message', (m: WorkerReport) => {
      if (m.type === 'holding') this.holding = { receipt: m.receipt, jobId: m.jobId, since: this.local.services.clock.now().getTime() };
      else if (m.type === 'idle') this.holding = null;
      else if (m.type === 'browser') this.browsers.add(m.pid);
    });
    w.on('error', (err) => logger.error('job worker crashed', { worker: this.index, error: err }));
    w.on('exit', () => {
      this.worker = null;
      this.killBrowsers();
      if (this.holding) {
        // A clean stop gives the message back as it was: the job resumes at the next start, no attempt spent.
        // A dead worker's message is visible again at once: the next delivery retries or dead-letters it.
        if (this.stopped) this.local.queue.release(this.holding.receipt);
        else this.local.queue.changeVisibility(this.holding.receipt, 0);
      }
      this.holding = null;
      if (!this.stopped) setTimeout(() => { if (!this.stopped) this.start(); }, RESTART_DELAY_MS).unref();
    });
    this.worker = w;
  }

  /**
   * Takes the held message away from the thread, so that ending the thread does not give it back to the
   * queue (the watchdog, which has ended the job, deletes it).
   * @returns the message, or null when the thread holds none.
   */
  takeHeld(): HeldMessage | null {
    const h = this.held;
    this.holding = null;
    return h;
  }

  /** Ends the thread (a fresh one takes its place). */
  async terminate(): Promise<void> {
    await this.worker?.terminate();
  }

  /** Ends the thread for good; its message goes back to the queue untouched. */
  async stop(): Promise<void> {
    this.stopped = true;
    const w = this.worker;
    if (w) await w.terminate();
    this.killBrowsers();
  }

  /** Ends the browsers this thread started, with their process groups. */
  private killBrowsers(): void {
    killBrowserGroups(this.browsers);
  }
}

/** The running job workers. */
export interface WorkerPool {
  slots: readonly WorkerSlot[];
  /** Stops every thread (their messages go back to the queue untouched). */
  stop(): Promise<void>;
}

/** Starts `settings.workers` job-worker threads. */
export function startWorkerPool(settings: LocalSettings, local: LocalServices): WorkerPool {
  const slots = Array.from({ length: settings.workers }, (_, i) => new WorkerSlot(settings, local, i + 1));
  slots.forEach((s) => s.start());
  return {
    slots,
    stop: async () => {
      await Promise.all(slots.map((s) => s.stop()));
      // A thread may have taken a message and been ended before its report of it arrived: a clean stop gives
      // back every message still held, untouched (no delivery spent), not only those the slots knew of.
      local.queue.releaseHeld();
    },
  };
}
