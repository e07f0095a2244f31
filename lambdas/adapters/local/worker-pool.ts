/**
 * The job workers of the local service: up to `SAI_WORKERS` worker threads (worker-thread.ts), each playing a
 * run-worker Lambda instance, started when messages wait and ended after `SAI_WORKER_IDLE_MS` without one (as Lambda
 * starts instances for a queue's messages and retires idle ones; an idle service holds no job thread and its memory,
 * issue 42). `SAI_WORKER_IDLE_MS=0` starts them all at once and keeps them. A slot keeps its thread alive while it
 * is wanted (a thread that dies is replaced after 500 ms)
 * and knows which queue message the thread holds, so that a thread that dies gives its message back at
 * once (the next delivery retries or dead-letters the job) and a clean stop gives it back untouched (the
 * job resumes at the next start without spending an attempt). Chromium processes a thread started are
 * killed with it.
 */
import { BroadcastChannel, Worker } from 'node:worker_threads';
import { logger } from '../../logger.ts';
import { JOB_WORKER_RESOURCE_LIMITS } from './limits.ts';
import type { LocalServices, LocalSettings } from './runtime.ts';
import type { WorkerReport } from './worker-thread.ts';
import { killBrowserGroups } from './browser-processes.ts';
import { QUEUE_CHANNEL } from './queue.ts';

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
  /** The thread said it ends for idleness: no replacement (the pool starts one when messages wait). */
  private retiring = false;
  /** A replacement is due (a thread died): the pool does not start another meanwhile. */
  private restarting = false;
  /** Called when the slot's thread ends or takes a message (the pool looks at the queue again). */
  onChange: () => void = () => undefined;
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

  /** Whether the slot has a thread (or one is about to replace a dead one). */
  get running(): boolean {
    return this.worker !== null || this.restarting;
  }

  start(): void {
    this.retiring = false;
    this.restarting = false;
    const w = new Worker(new URL('./worker-thread.ts', import.meta.url), {
      workerData: this.settings,
      name: `job-worker-${this.index}`,
      // A run that allocates without bound ends this thread, not the service.
      resourceLimits: { ...JOB_WORKER_RESOURCE_LIMITS },
    });
    w.on('message', (m: WorkerReport) => {
      if (m.type === 'holding') {
        this.holding = { receipt: m.receipt, jobId: m.jobId, since: this.local.services.clock.now().getTime() };
        this.onChange();
      } else if (m.type === 'idle') this.holding = null;
      else if (m.type === 'browser') this.browsers.add(m.pid);
      else if (m.type === 'retiring') {
        // The thread has closed its services for idleness: end it; no replacement.
        this.retiring = true;
        void w.terminate();
      }
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
      if (!this.stopped && !this.retiring) {
        this.restarting = true;
        setTimeout(() => { if (!this.stopped) this.start(); else this.restarting = false; }, RESTART_DELAY_MS).unref();
      }
      this.retiring = false;
      this.onChange();
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

/** The queues the job workers consume (worker-thread.ts). */
const JOB_QUEUES = ['run', 'generate'] as const;
/** How often the pool looks at the queue besides the wake-ups, ms: delayed messages and retries become visible by time. */
const DEMAND_CHECK_MS = 1000;

/**
 * Starts the job workers: with `settings.workerIdleMs` (SAI_WORKER_IDLE_MS, default 60 s), a thread per waiting
 * message, up to `settings.workers`, looked at when a message is sent (the queue's wake-up channel), when a thread
 * ends or takes a message, and every second; idle threads end themselves. With 0, every thread at once, kept.
 */
export function startWorkerPool(settings: LocalSettings, local: LocalServices): WorkerPool {
  const slots = Array.from({ length: settings.workers }, (_, i) => new WorkerSlot(settings, local, i + 1));
  let stopped = false;
  /** Threads enough for the waiting messages: each thread without a message takes one. */
  const demand = () => {
    if (stopped) return;
    let visible: number;
    try {
      visible = local.queue.visibleCount(JOB_QUEUES);
    } catch (err) {
      // A read that fails (the database busy past its time-out) is tried again at the next check, never thrown
      // out of a timer or a channel's handler (which would end the service).
      logger.warn('job workers: could not count the waiting messages', { error: err });
      return;
    }
    let waiting = visible - slots.filter((s) => s.running && !s.held).length;
    for (const s of slots) {
      if (waiting <= 0) break;
      if (!s.running) {
        s.start();
        waiting--;
      }
    }
  };
  let channel: BroadcastChannel | null = null;
  let timer: NodeJS.Timeout | null = null;
  if (settings.workerIdleMs > 0) {
    for (const s of slots) s.onChange = demand;
    channel = new BroadcastChannel(QUEUE_CHANNEL);
    channel.onmessage = demand;
    channel.unref();
    timer = setInterval(demand, DEMAND_CHECK_MS);
    timer.unref();
    demand();
  } else {
    slots.forEach((s) => s.start());
  }
  return {
    slots,
    stop: async () => {
      stopped = true;
      channel?.close();
      if (timer) clearInterval(timer);
      await Promise.all(slots.map((s) => s.stop()));
      // A thread may have taken a message and been ended before its report of it arrived: a clean stop gives
      // back every message still held, untouched (no delivery spent), not only those the slots knew of.
      local.queue.releaseHeld();
    },
  };
}
