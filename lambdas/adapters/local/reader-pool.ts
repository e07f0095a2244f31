/**
 * Reader threads: where a run's pages are read into rows when the machine has a core to spare (issue 42, item 1;
 * docs/crawler.md, "Reading pages on more than one core"). The job-worker thread keeps everything that must be one
 * (the request queue, the page budget, the dedupe, the progress, the loads); a page's reading (HTML5 parse, fields,
 * transforms, the pagination control) is a pure function of the config and the page (engine/crawl/page-reader.ts
 * `PageReading`), so it is done here or there by the same code and gives the same row.
 *
 * Sharing, not handing off: a page goes to the reader thread with the fewest pages in hand when that thread has fewer
 * than `depth`; otherwise the calling thread reads it itself. So both threads read while the loads keep coming, a
 * reader thread that is slow (another account's job has the core: it runs at the lowest priority) holds at most
 * `depth` pages, and a run never waits for a thread that is starting.
 *
 * A reader thread runs at nice 19 (lambdas/thread-priority.ts): below the job workers (10) and the HTTP thread (0),
 * so it only takes a core no one else wants; a run still has its own job-worker thread. It is started on the first
 * page and ends after `idleMs` without one. A thread that dies (out of memory, a crash) loses nothing: the pages it
 * held are read again on the calling thread, and the next page starts a new thread.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { ScrapeConfig } from '../../engine/config.ts';
import type { Row } from '../../engine/extract.ts';
import { PageReading, type ListingRead, type PageReader, type PageReaders } from '../../engine/crawl/page-reader.ts';
import { CodedError } from '../../errors.ts';
import { logger } from '../../logger.ts';

/** Options of {@link ReaderPool}. */
export interface ReaderPoolOptions {
  /** Reader threads at most (0: every page is read on the calling thread). */
  threads: number;
  /** Pages a reader thread holds at most before the calling thread reads the next itself. @default 4 */
  depth?: number;
  /** A reader thread with no page for this long ends, ms (0: never). @default 60000 */
  idleMs?: number;
  /** V8 limits of a reader thread. @default {@link READER_RESOURCE_LIMITS} */
  resourceLimits?: ResourceLimits;
}

/**
 * V8 limits of a reader thread: a page that allocates without bound ends the thread (its pages are read again on the
 * job thread, whose own limit then applies), a young generation of 16 MB keeps its footprint small.
 */
export const READER_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 16 } as const;

/** The nice value of a reader thread: the lowest priority (lambdas/thread-priority.ts). */
export const READER_NICE = 19;

/** Messages to a reader thread. */
export type ReaderRequest =
  | { type: 'config'; run: number; config: ScrapeConfig }
  | { type: 'drop'; run: number }
  | { type: 'read'; task: number; run: number; kind: 'listing' | 'detail'; html: string; url: string };

/** Messages from a reader thread. */
export type ReaderReply =
  | { task: number; value: ListingRead | Row }
  | { task: number; error: { message: string; code?: string; details?: unknown[]; name?: string } };

interface Task {
  run: number;
  kind: 'listing' | 'detail';
  html: string;
  url: string;
  resolve: (v: ListingRead | Row) => void;
  reject: (err: unknown) => void;
}

/** One reader thread and the pages it holds. */
class ReaderSlot {
  worker: Worker | null = null;
  readonly tasks = new Map<number, Task>();
  /** The runs whose config the thread has been sent. */
  readonly runs = new Set<number>();
  private readonly pool: ReaderPool;

  constructor(pool: ReaderPool) {
    this.pool = pool;
  }

  /** The thread, started when there is none. */
  thread(limits: ResourceLimits): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./reader-thread.ts', import.meta.url), { name: 'page-reader', resourceLimits: { ...limits } });
    w.unref();
    w.on('message', (m: ReaderReply) => {
      const t = this.tasks.get(m.task);
      if (!t) return;
      this.tasks.delete(m.task);
      // Held open only while it holds pages: an idle reader thread never keeps a process alive.
      if (!this.tasks.size) w.unref();
      if ('error' in m) t.reject(m.error.code ? new CodedError(m.error.code as never, m.error.message, m.error.details ?? []) : Object.assign(new Error(m.error.message), { name: m.error.name ?? 'Error' }));
      else t.resolve(m.value);
    });
    w.on('error', (err) => logger.warn('page reader thread failed; its pages are read on the job thread', { error: err }));
    w.on('exit', () => this.lost(w));
    this.worker = w;
    return w;
  }

  /** The thread ended (crashed, out of memory, or retired): what it held is read on the calling thread. */
  private lost(w: Worker): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.runs.clear();
    const held = [...this.tasks.values()];
    this.tasks.clear();
    for (const t of held) this.pool.readHere(t);
  }

  /** Ends the thread (only when it holds nothing). */
  retire(): void {
    const w = this.worker;
    if (!w || this.tasks.size) return;
    this.worker = null;
    this.runs.clear();
    void w.terminate();
  }
}

/**
 * Reader threads shared by the runs of one job-worker thread.
 *
 * **Example usage:**
 * ```ts
 * const readers = new ReaderPool({ threads: 1 });
 * await runLightweight(config, { readers });   // pages read here and on one reader thread
 * await readers.close();
 * ```
 */
export class ReaderPool implements PageReaders {
  private readonly slots: ReaderSlot[];
  private readonly depth: number;
  private readonly limits: ResourceLimits;
  private readonly idleMs: number;
  /** The readings of open runs by run id, for pages the calling thread reads. */
  private readonly readings = new Map<number, PageReading>();
  private readonly configs = new Map<number, ScrapeConfig>();
  private nextRun = 1;
  private nextTask = 1;
  private lastBusyAt = Date.now();
  private idleTimer: NodeJS.Timeout | null = null;
  /** Pages read on the calling thread and on reader threads since the pool was made (for tests and the bench). */
  readonly counts = { here: 0, threads: 0 };

  constructor(o: ReaderPoolOptions) {
    this.slots = Array.from({ length: Math.max(0, o.threads) }, () => new ReaderSlot(this));
    this.depth = Math.max(1, o.depth ?? 4);
    this.limits = o.resourceLimits ?? READER_RESOURCE_LIMITS;
    this.idleMs = o.idleMs ?? 60_000;
  }

  /** Reader threads running now. */
  get threadCount(): number {
    return this.slots.filter((s) => s.worker).length;
  }

  forConfig(config: ScrapeConfig): PageReader {
    const run = this.nextRun++;
    this.readings.set(run, new PageReading(config));
    this.configs.set(run, config);
    let closed = false;
    const read = <T>(kind: 'listing' | 'detail', html: string, url: string) => {
      if (closed) return Promise.reject(new Error('page reader used after its run ended'));
      return this.read(run, kind, html, url) as Promise<T>;
    };
    return {
      readListing: (html, url) => read<ListingRead>('listing', html, url),
      readDetail: (html, url) => read<Row>('detail', html, url),
      close: () => {
        if (closed) return;
        closed = true;
        this.readings.delete(run);
        this.configs.delete(run);
        for (const s of this.slots) {
          if (s.runs.delete(run)) s.worker?.postMessage({ type: 'drop', run } satisfies ReaderRequest);
        }
      },
    };
  }

  /** Ends every reader thread. */
  async close(): Promise<void> {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = null;
    await Promise.all(this.slots.map(async (s) => {
      const w = s.worker;
      s.worker = null;
      s.runs.clear();
      await w?.terminate();
    }));
  }

  private read(run: number, kind: 'listing' | 'detail', html: string, url: string): Promise<ListingRead | Row> {
    this.lastBusyAt = Date.now();
    let slot: ReaderSlot | null = null;
    for (const s of this.slots) if (s.tasks.size < this.depth && (!slot || s.tasks.size < slot.tasks.size)) slot = s;
    return new Promise((resolve, reject) => {
      const task: Task = { run, kind, html, url, resolve, reject };
      if (!slot) {
        this.readHere(task);
        return;
      }
      const w = slot.thread(this.limits);
      this.watchIdle();
      if (!slot.runs.has(run)) {
        slot.runs.add(run);
        w.postMessage({ type: 'config', run, config: this.configs.get(run)! } satisfies ReaderRequest);
      }
      const id = this.nextTask++;
      if (!slot.tasks.size) w.ref();
      slot.tasks.set(id, task);
      this.counts.threads++;
      w.postMessage({ type: 'read', task: id, run, kind, html, url } satisfies ReaderRequest);
    });
  }

  /** Reads a page on the calling thread (no reader thread had room, or the one that had it died). */
  readHere(t: Task): void {
    const reading = this.readings.get(t.run);
    if (!reading) {
      t.reject(new Error('page reader used after its run ended'));
      return;
    }
    this.counts.here++;
    try {
      t.resolve(t.kind === 'listing' ? reading.listing(t.html, t.url) : reading.detail(t.html, t.url));
    } catch (err) {
      t.reject(err);
    }
  }

  /** Checks for idle threads every few seconds while any runs. */
  private watchIdle(): void {
    if (this.idleMs <= 0 || this.idleTimer) return;
    this.idleTimer = setInterval(() => {
      if (Date.now() - this.lastBusyAt < this.idleMs) return;
      for (const s of this.slots) s.retire();
      if (!this.threadCount && this.idleTimer) {
        clearInterval(this.idleTimer);
        this.idleTimer = null;
      }
    }, Math.min(this.idleMs, 5_000));
    this.idleTimer.unref();
  }
}

/**
 * Reader threads of one job worker for a machine: two fewer than its cores (`os.availableParallelism()`), at most 4,
 * or `SAI_READ_THREADS` (0-16; 0 turns them off). Two fewer, because one run already keeps more than one core busy:
 * measured on the 2-core machine (bench/README.md, "Reading pages on more than one core"), the job thread and V8's
 * platform threads (garbage collection, compilation) took 2.0 core-seconds in a 1.3 s crawl, and a reader thread
 * there only moved work around (0.75-1.06x the pages/s of the run without one, 40-70 MB more). docs/limits.md.
 */
export function readerThreadCount(cores: number, env: string | undefined): number {
  if (env !== undefined && env !== '') {
    const n = Number(env);
    if (Number.isInteger(n) && n >= 0 && n <= 16) return n;
  }
  return Math.max(0, Math.min(4, cores - 2));
}
