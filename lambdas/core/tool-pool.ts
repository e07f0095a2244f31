/**
 * The tool workers (docs/tools.md, "Where the tools run"): a pool of worker threads (core/tool-thread.ts) that do
 * the tools' work on pages, so that nothing a page contains runs on the thread that answers HTTP. Its own pool,
 * apart from the job workers of lambdas/adapters/local/worker-pool.ts: a tool call waits seconds at most, a job
 * minutes, and neither should wait behind the other.
 *
 * - **Size**: `size` threads, started ahead ({@link ToolPool.warm}) and kept: a thread serves one call at a time.
 *   With `idleMs` (the local service: `SAI_TOOL_IDLE_MS`, 5 minutes) every thread ends after that long without a
 *   call and the next call starts them again (issue 42: about 70 MB a thread).
 * - **Queue**: calls beyond the threads wait, `maxWaiting` at most; past it a call is refused at once with 503
 *   `service_busy` and `Retry-After` ({@link ToolPool.reserve}, before anything is spent). A call still waiting when
 *   less than {@link MIN_BUDGET_MS} of its deadline is left is refused the same way.
 * - **Fair between accounts** (one account never holds up another): one owner (an account) holds at most half of the
 *   places (threads and queue; at least the threads), so a flood from one account leaves the other half to the
 *   rest; one owner's calls are worked on in at most all threads but one ({@link ToolPool.threadsPerOwner}; issue
 *   37: a flood that held every thread made another account's call wait for one of its calls to end, up to 18.8 s),
 *   so a thread is free for another account's call when it comes; and a free thread takes the oldest waiting call of
 *   the owner with the fewest calls being worked on, so an account's own backlog does not run ahead of another
 *   account's one call.
 * - **Time budget**: a call's work gets what is left of its deadline when a thread takes it; at the deadline the
 *   thread is ended (`Worker.terminate`, which also stops a loop or a regular expression that never yields) and
 *   the call answered 422 `analysis_limit_exceeded` (`limit: time`).
 * - **Memory cap**: each thread's V8 heap is capped (`resourceLimits.maxOldGenerationSizeMb`); a call whose work
 *   reaches it ends its thread (`ERR_WORKER_OUT_OF_MEMORY`) and is answered 422 `analysis_limit_exceeded`
 *   (`limit: memory`). Pages reach a thread at most 5 MiB (core/tool-thread.ts `TOOL_MAX_PAGE_BYTES`).
 * - A thread that ends, whatever the reason, is replaced at once (after {@link RESTART_DELAY_MS} when it died
 *   before it was ready, so that a thread that cannot start does not spin); the calls waiting go on in the others.
 * - **Spare threads** (`spares`, 0 by default): threads started ahead that take no call; when a thread that was
 *   ready ends (its call passed the deadline, reached the cap, or the thread crashed), a ready spare takes its place
 *   at once and a new spare is started behind it. A thread needs 1-3 s to load the tools' libraries on a loaded
 *   2-core machine, and without a spare the calls waiting for that place waited that long (CI: a call behind two
 *   runaway analyses was refused 503 `service_busy` at its deadline).
 *
 * The same pool runs inside each tool Lambda (one thread: a Lambda instance serves one call at a time), so the
 * budget ends a runaway analysis with the same 422 there, before the function's own time-out, and the cap keeps
 * the thread under the function's memory.
 */
import { Worker } from 'node:worker_threads';
import { CodedError } from '../errors.ts';
import { logger } from '../logger.ts';
import { fromWire, TOOL_THREAD_MARK, toolWorkModules, type ToolTask, type ToolThreadData, type ToolThreadMessage } from './tool-thread.ts';

/** Least time a call must have left to be given to a thread, ms; a call that waited longer is refused as busy. */
const MIN_BUDGET_MS = 1_000;

/** Delay before a thread that died before it was ready is replaced, ms; doubled for each such death in a row, up to 30 s. */
const RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;

/** How long {@link ToolPool.warm} waits for the threads, ms. */
const WARM_TIMEOUT_MS = 60_000;

/** Seconds a refused call is told to wait (`Retry-After`). */
const TOOL_BUSY_RETRY_AFTER_S = 5;

/** V8 limits of a tool worker beside the heap cap: a young generation as the job workers', V8's default stack. */
const YOUNG_GENERATION_MB = 32;
const STACK_MB = 4;

/** Options of a {@link ToolPool}. */
export interface ToolPoolOptions {
  /** Threads (calls worked on at once). */
  size: number;
  /** Calls that may wait for a thread beyond those; past it, 503 `service_busy`. */
  maxWaiting: number;
  /** Heap cap of each thread (`maxOldGenerationSizeMb`), MB. */
  memoryMb: number;
  /** Threads kept ready beyond `size` to replace one that ends (see the file's comment); 0 when not given. */
  spares?: number;
  /**
   * After this long with no call (none waiting, reserved or worked on), ms, every thread ends, and the next call
   * starts them again (waiting for one to be ready). 0 or absent: threads are kept (a Lambda's pool).
   */
  idleMs?: number;
}

/** A call's place in the pool, taken before the call is metered ({@link ToolPool.reserve}). */
export interface ToolTicket {
  /**
   * Hands the task to a thread (at once, or when one is free) and waits for its answer.
   * @returns the work's result as JSON text.
   * @throws CodedError of the work (`target_unreachable`, …); `analysis_limit_exceeded` (422) past the budget or
   *   the cap; `service_busy` (503) when no thread was free before the call's deadline; Error when the thread
   *   failed otherwise (a bug: 500).
   */
  run(task: Omit<ToolTask, 'id'>): Promise<string>;
  /** Gives the place back unused (the call was refused before its work). */
  cancel(): void;
}

interface Job {
  task: ToolTask;
  /** Whose call it is (an account's id; '' when none was given). */
  owner: string;
  resolve(json: string): void;
  reject(err: Error): void;
  /** While waiting: refuses the job when its deadline comes near. */
  waitTimer?: NodeJS.Timeout;
  /** While running: ends the thread at the deadline. */
  killTimer?: NodeJS.Timeout;
  /** When a thread took it, ms since the epoch. */
  startedWork?: number;
}

interface Slot {
  index: number;
  worker: Worker | null;
  state: 'starting' | 'idle' | 'busy';
  job: Job | null;
  /** Resolves the first time the slot is ready (or gives up). */
  readyWaiters: Array<() => void>;
  /** A restart is scheduled (after {@link RESTART_DELAY_MS}). */
  restarting: boolean;
  /** Threads of this slot in a row that died before they were ready. */
  failedStarts: number;
}

/**
 * The thread's entry: this folder's tool-thread.ts when running from source; in a bundle (a Lambda's one
 * `index.mjs`, where no such file exists) the bundle itself, whose copy of tool-thread.ts serves on the mark.
 */
function threadEntry(): URL {
  return import.meta.url.endsWith('.ts') ? new URL('./tool-thread.ts', import.meta.url) : new URL(import.meta.url);
}

/** A pool of tool worker threads; see the file's comment. */
export class ToolPool {
  private readonly options: ToolPoolOptions;
  private readonly slots: Slot[];
  /** The spare threads: slots that take no call, only the place of a thread that ended ({@link replaceFromSpare}). */
  private readonly spareSlots: Slot[];
  /** Which slot each running thread serves now (a spare's thread moves to another slot). */
  private readonly homes = new WeakMap<Worker, Slot>();
  private readonly waiting: Job[] = [];
  /** Places taken by {@link reserve} and not yet run or cancelled. */
  private reserved = 0;
  /** Places each owner holds: reserved, waiting or being worked on. */
  private readonly held = new Map<string, number>();
  /** When each owner's last job was given a thread (a counter, not a time): the round robin of {@link nextJob}. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private nextId = 1;
  private closed = false;
  /** When the pool last had a call in hand (ms since the epoch), for {@link ToolPoolOptions.idleMs}. */
  private lastBusyAt = Date.now();
  /** Whether the threads were ended for idleness and not started again yet. */
  private retired = false;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(options: ToolPoolOptions) {
    if (!(options.size >= 1)) throw new Error('a tool pool needs at least one thread');
    this.options = { ...options };
    const slot = (index: number): Slot => ({ index, worker: null, state: 'starting', job: null, readyWaiters: [], restarting: false, failedStarts: 0 });
    this.slots = Array.from({ length: options.size }, (_, i) => slot(i + 1));
    this.spareSlots = Array.from({ length: Math.max(0, Math.floor(options.spares ?? 0)) }, (_, i) => slot(options.size + i + 1));
    if ((options.idleMs ?? 0) > 0) {
      this.idleTimer = setInterval(() => this.retireIfIdle(), Math.min(options.idleMs!, 5_000));
      this.idleTimer.unref();
    }
  }

  /** Threads running now (call slots and spares). */
  get threadCount(): number {
    return [...this.slots, ...this.spareSlots].filter((s) => s.worker).length;
  }

  /**
   * Ends every thread once the pool has had no call for `idleMs` (their memory goes with them); {@link pump} starts
   * them again for the next call. Threads still starting are left alone.
   */
  private retireIfIdle(): void {
    if (this.closed || this.retired) return;
    if (this.inFlight > 0) {
      this.lastBusyAt = Date.now();
      return;
    }
    const all = [...this.slots, ...this.spareSlots];
    if (Date.now() - this.lastBusyAt < this.options.idleMs! || all.some((s) => s.state === 'starting' && (s.worker || s.restarting))) return;
    this.retired = true;
    for (const slot of all) {
      const w = slot.worker;
      if (!w) continue;
      // The slot lets go of its thread first: the thread's 'exit' then finds it is no longer its slot's, and nothing replaces it.
      slot.worker = null;
      slot.state = 'starting';
      void w.terminate();
    }
    logger.debug('tool workers ended after an idle spell', { idleMs: this.options.idleMs });
  }

  /** The pool's settings. */
  get settings(): Readonly<ToolPoolOptions> {
    return this.options;
  }

  /** Calls holding a place: reserved, waiting or being worked on. */
  get inFlight(): number {
    return this.reserved + this.waiting.length + this.slots.filter((s) => s.job).length;
  }

  /** The `threadId`s of the spare threads that are ready now (the next to take the place of a thread that ends). */
  get readySpareThreadIds(): number[] {
    return this.spareSlots.filter((s) => s.state === 'idle' && s.worker).map((s) => s.worker!.threadId);
  }

  /**
   * Starts every thread that is not running and waits until each is ready (or has failed to start: the error is
   * logged and the thread is tried again), at most {@link WARM_TIMEOUT_MS}.
   */
  async warm(): Promise<void> {
    await Promise.all([...this.slots, ...this.spareSlots].map((s) => {
      if (s.state !== 'starting') return Promise.resolve();
      const ready = new Promise<void>((resolve) => s.readyWaiters.push(resolve));
      if (!s.worker && !s.restarting) this.spawn(s);
      return Promise.race([ready, new Promise<void>((r) => setTimeout(r, WARM_TIMEOUT_MS).unref())]);
    }));
  }

  /**
   * Most threads one owner's calls are worked on in at once: all but one (at least one), as the job workers are
   * shared (docs/limits.md), so that another account's call finds a thread.
   */
  get threadsPerOwner(): number {
    return Math.max(1, this.options.size - 1);
  }

  /** Most places one owner may hold: half of all (threads and queue), at least the threads. */
  get placesPerOwner(): number {
    return Math.max(this.options.size, Math.floor((this.options.size + this.options.maxWaiting) / 2));
  }

  /**
   * Takes a place for a call, before anything is spent on it.
   * @param owner whose call it is (an account's id): one owner holds at most {@link placesPerOwner} places.
   * @throws CodedError `service_busy` (503, `Retry-After`) when every thread is busy and `maxWaiting` calls wait, or
   *   when the owner's calls hold their share already.
   */
  reserve(owner = ''): ToolTicket {
    if (this.closed) throw new Error('the tool pool is closed');
    if (this.inFlight >= this.options.size + this.options.maxWaiting) {
      throw new CodedError('service_busy', `Every tool worker is busy and ${this.options.maxWaiting} calls are waiting for one; retry in a few seconds`,
        [], { 'Retry-After': String(TOOL_BUSY_RETRY_AFTER_S) });
    }
    const mine = this.held.get(owner) ?? 0;
    if (owner !== '' && mine >= this.placesPerOwner) {
      throw new CodedError('service_busy', `Your tool calls hold ${mine} of the ${this.options.size + this.options.maxWaiting} places of the tool workers, as many as one account may; retry when some have answered`,
        [], { 'Retry-After': String(TOOL_BUSY_RETRY_AFTER_S) });
    }
    this.reserved++;
    this.held.set(owner, mine + 1);
    let used = false;
    const take = () => {
      if (used) throw new Error('a tool ticket is used once');
      used = true;
      this.reserved--;
    };
    const release = () => {
      const n = (this.held.get(owner) ?? 1) - 1;
      if (n > 0) this.held.set(owner, n);
      else this.held.delete(owner);
    };
    return {
      run: (task) => {
        take();
        return this.enqueue({ ...task, id: this.nextId++ }, owner).finally(release);
      },
      cancel: () => {
        if (used) return;
        take();
        release();
      },
    };
  }

  /** Ends every thread; calls waiting or running fail. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearInterval(this.idleTimer);
    const err = new Error('the tool pool is closed');
    for (const job of this.waiting.splice(0)) {
      clearTimeout(job.waitTimer);
      job.reject(err);
    }
    await Promise.all([...this.slots, ...this.spareSlots].map(async (s) => {
      const w = s.worker;
      s.worker = null;
      if (s.job) this.settle(s, (job) => job.reject(err));
      s.readyWaiters.splice(0).forEach((r) => r());
      await w?.terminate();
    }));
  }

  private enqueue(task: ToolTask, owner: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (this.closed) {
        reject(new Error('the tool pool is closed'));
        return;
      }
      const job: Job = { task, owner, resolve, reject };
      this.lastBusyAt = Date.now();
      this.retired = false;
      const refuseAt = task.startedAt + task.deadlineMs - MIN_BUDGET_MS;
      job.waitTimer = setTimeout(() => {
        const i = this.waiting.indexOf(job);
        if (i === -1) return;
        this.waiting.splice(i, 1);
        reject(busyAtDeadline());
      }, Math.max(0, refuseAt - Date.now()));
      this.waiting.push(job);
      this.pump();
    });
  }

  /**
   * The next waiting job for a free thread: the oldest job of the owner with the fewest jobs being worked on, and
   * among those of the owner served least recently (round robin), so one owner's backlog does not run ahead of
   * another's call. O(waiting + threads).
   */
  private nextJob(): Job | undefined {
    if (this.waiting.length === 0) return undefined;
    const working = new Map<string, number>();
    for (const s of this.slots) if (s.job) working.set(s.job.owner, (working.get(s.job.owner) ?? 0) + 1);
    const rank = (j: Job) => [working.get(j.owner) ?? 0, this.lastServed.get(j.owner) ?? -1] as const;
    // An owner whose calls are in threadsPerOwner threads already waits (the anonymous owner '' is no account).
    const eligible = (j: Job) => j.owner === '' || (working.get(j.owner) ?? 0) < this.threadsPerOwner;
    let best = -1;
    let bestRank: readonly [number, number] = [Infinity, Infinity];
    for (let i = 0; i < this.waiting.length; i++) {
      if (!eligible(this.waiting[i]!)) continue;
      const r = rank(this.waiting[i]!);
      if (r[0] < bestRank[0] || (r[0] === bestRank[0] && r[1] < bestRank[1])) {
        best = i;
        bestRank = r;
      }
    }
    if (best === -1) return undefined;
    const [job] = this.waiting.splice(best, 1);
    this.lastServed.set(job!.owner, this.served++);
    // Owners with nothing waiting or held are forgotten: the map stays as small as the pool.
    if (this.lastServed.size > 4 * (this.options.size + this.options.maxWaiting)) {
      for (const owner of this.lastServed.keys()) if (!this.held.has(owner)) this.lastServed.delete(owner);
    }
    return job;
  }

  /** Gives waiting jobs to idle threads ({@link nextJob}); starts threads that are not running. */
  private pump(): void {
    if (this.closed) return;
    for (const slot of [...this.slots, ...this.spareSlots]) if (!slot.worker && !slot.restarting) this.spawn(slot);
    for (const slot of this.slots) {
      if (slot.state !== 'idle' || !slot.worker) continue;
      let job = this.nextJob();
      while (job && job.task.startedAt + job.task.deadlineMs - Date.now() < MIN_BUDGET_MS) {
        clearTimeout(job.waitTimer);
        job.reject(busyAtDeadline());
        job = this.nextJob();
      }
      if (!job) return;
      clearTimeout(job.waitTimer);
      const budget = job.task.startedAt + job.task.deadlineMs - Date.now();
      slot.state = 'busy';
      slot.job = job;
      job.startedWork = Date.now();
      const worker = slot.worker;
      job.killTimer = setTimeout(() => this.timedOut(slot, worker), budget);
      worker.postMessage(job.task);
    }
  }

  /** A job passed its deadline: its thread is ended (a fresh one replaces it) and the call answered 422. */
  private timedOut(slot: Slot, worker: Worker): void {
    if (slot.worker !== worker || !slot.job) return;
    const job = slot.job;
    const ranMs = Date.now() - (job.startedWork ?? Date.now());
    this.settle(slot, (j) => j.reject(new CodedError('analysis_limit_exceeded',
      `The analysis of ${j.task.url} did not finish within the call's time limit (${j.task.deadlineMs} ms from the request; it ran ${ranMs} ms) and was stopped; the call is not charged`,
      [{ url: j.task.url, limit: 'time', deadline_ms: j.task.deadlineMs }])));
    logger.warn('tool worker stopped at its time budget', { worker: slot.index, work: job.task.work, url: job.task.url, ranMs });
    this.replace(slot, worker);
  }

  /** Ends a slot's thread and puts another in its place (a ready spare's, or a new one). */
  private replace(slot: Slot, worker: Worker): void {
    slot.worker = null;
    slot.state = 'starting';
    void worker.terminate();
    if (!this.closed && !this.replaceFromSpare(slot)) this.spawn(slot);
  }

  /**
   * Gives a call slot whose thread has ended the thread of a ready spare, and starts a new spare.
   * @returns false when no spare was ready (the caller starts a thread for the slot).
   */
  private replaceFromSpare(slot: Slot): boolean {
    if (!this.slots.includes(slot)) return false;
    const spare = this.spareSlots.find((s) => s.state === 'idle' && s.worker);
    if (!spare) return false;
    const w = spare.worker!;
    spare.worker = null;
    spare.state = 'starting';
    this.homes.set(w, slot);
    slot.worker = w;
    slot.state = 'idle';
    slot.failedStarts = 0;
    slot.readyWaiters.splice(0).forEach((r) => r());
    this.spawn(spare);
    queueMicrotask(() => this.pump());
    return true;
  }

  /** Settles the slot's job once (whatever happens to the thread afterwards). */
  private settle(slot: Slot, how: (job: Job) => void): void {
    const job = slot.job;
    slot.job = null;
    this.lastBusyAt = Date.now();
    if (!job) return;
    clearTimeout(job.killTimer);
    how(job);
  }

  private spawn(slot: Slot, delayMs = 0): void {
    if (this.closed) return;
    if (delayMs > 0) {
      slot.restarting = true;
      setTimeout(() => {
        slot.restarting = false;
        if (!slot.worker && !this.closed) this.spawn(slot);
      }, delayMs).unref();
      return;
    }
    const data: ToolThreadData = { [TOOL_THREAD_MARK]: true, preload: toolWorkModules() };
    const w = new Worker(threadEntry(), {
      name: `tool-worker-${slot.index}`,
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, stackSizeMb: STACK_MB },
    });
    slot.worker = w;
    slot.state = 'starting';
    this.homes.set(w, slot);
    let wasReady = false;
    w.on('message', (m: ToolThreadMessage) => {
      const slot = this.homes.get(w)!;
      if (slot.worker !== w) return;
      if (m.type === 'ready') {
        wasReady = true;
        slot.failedStarts = 0;
        slot.state = 'idle';
        slot.readyWaiters.splice(0).forEach((r) => r());
        this.pump();
      } else if (m.type === 'fatal') {
        logger.error('tool worker could not start', { worker: slot.index, error: m.message });
      } else if (slot.job && slot.job.task.id === m.id) {
        if (m.type === 'done') this.settle(slot, (job) => job.resolve(m.json));
        else this.settle(slot, (job) => job.reject(fromWire(m.error)));
        slot.state = 'idle';
        this.pump();
      }
    });
    w.on('error', (err: Error & { code?: string }) => {
      const slot = this.homes.get(w)!;
      if (slot.worker !== w) return;
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        this.settle(slot, (job) => job.reject(new CodedError('analysis_limit_exceeded',
          `The analysis of ${job.task.url} needed more memory than a tool may use (${this.options.memoryMb} MB) and was stopped; the call is not charged`,
          [{ url: job.task.url, limit: 'memory', memory_mb: this.options.memoryMb }])));
        logger.warn('tool worker stopped at its memory cap', { worker: slot.index, memoryMb: this.options.memoryMb });
      } else {
        logger.error('tool worker crashed', { worker: slot.index, error: err });
        this.settle(slot, (job) => job.reject(Object.assign(new Error(`the tool worker crashed: ${err.message}`), { toolWorkerLost: true })));
      }
    });
    // An idle thread does not keep the process alive; a running job's kill timer does. (After the listeners:
    // adding a 'message' listener refs the thread's port again.)
    w.unref();
    w.on('exit', () => {
      const slot = this.homes.get(w)!;
      if (slot.worker !== w) return;
      this.settle(slot, (job) => job.reject(Object.assign(new Error('the tool worker stopped'), { toolWorkerLost: true })));
      slot.worker = null;
      slot.state = 'starting';
      if (!wasReady) {
        slot.readyWaiters.splice(0).forEach((r) => r());
        slot.failedStarts++;
      }
      if (this.closed) return;
      if (wasReady && this.replaceFromSpare(slot)) return;
      this.spawn(slot, wasReady ? 0 : Math.min(MAX_RESTART_DELAY_MS, RESTART_DELAY_MS * 2 ** (slot.failedStarts - 1)));
    });
  }
}

/** The refusal of a call that waited for a thread until its deadline was near. */
function busyAtDeadline(): CodedError {
  return new CodedError('service_busy', 'No tool worker became free before the call\'s time limit; retry in a few seconds (the call is not charged)',
    [], { 'Retry-After': String(TOOL_BUSY_RETRY_AFTER_S) });
}

/** Whether an error says the thread of a call died under it (not a time or memory limit): such a call is not charged. */
export function isToolWorkerLost(err: unknown): boolean {
  return (err as { toolWorkerLost?: unknown } | null)?.toolWorkerLost === true;
}
