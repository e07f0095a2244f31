/**
 * `Services.exportBuilder` of the local service (core/exports.ts, issue 37): result exports made in worker threads
 * (export-thread.ts), never on the thread that answers HTTP. An XLSX of 60,000 rows is about 4 s of CPU; made on the
 * HTTP thread it held every other account's requests that long.
 *
 * - **Threads**: `size` at most, each started when first needed and ended after {@link IDLE_MS} without work (their
 *   memory goes with them); one export at a time each, at nice 10 (lambdas/thread-priority.ts), heap capped as the
 *   job workers' (1 GiB).
 * - **Queue**: exports beyond the threads wait, {@link MAX_WAITING} at most; past it 503 `service_busy`.
 * - **Fair between accounts**: a free thread takes the oldest export of the account with the fewest being made, then
 *   of the one served least recently (core/exports.ts caps each account at 2 at once).
 * - **Streamed**: each piece is handed over as it is made and written to the client (the thread does not wait for a
 *   slow reader: the pieces wait on this side); {@link build} answers when the first piece is there, so an export
 *   that fails before it answers with an error, not a cut file. A reader that cancels stops the thread's work.
 */
import { Worker } from 'node:worker_threads';
import type { ExportBuilder, ExportRequest } from '../../core/ports.ts';
import { CodedError } from '../../errors.ts';
import { logger } from '../../logger.ts';
import { JOB_WORKER_RESOURCE_LIMITS } from './limits.ts';
import type { ExportThreadMessage, ExportThreadRequest } from './export-thread.ts';

/** Exports that may wait for a thread; past it 503 `service_busy`. */
export const MAX_WAITING = 16;
/** A thread without work this long ends, ms. */
const IDLE_MS = 30_000;
/** Seconds a refused export is told to wait. */
const BUSY_RETRY_AFTER_S = 5;

interface Export {
  id: number;
  request: ExportRequest;
  /** The stream's side that pieces are pushed into, once the first has come. */
  controller: ReadableStreamDefaultController<Uint8Array> | null;
  /** Pieces that came before the stream existed (the first). */
  early: Uint8Array[];
  started: { resolve(s: ReadableStream<Uint8Array>): void; reject(err: Error): void } | null;
  cancelled: boolean;
}

interface Slot {
  worker: Worker;
  current: Export | null;
  idleTimer: NodeJS.Timeout | null;
}

/** The export threads; see the file's comment. */
export class ExportThreads implements ExportBuilder {
  private readonly slots = new Set<Slot>();
  private readonly waiting: Export[] = [];
  private readonly lastServed = new Map<number, number>();
  private served = 0;
  private nextId = 1;
  private closed = false;

  private readonly size: number;

  /** @param size threads at most (exports made at once). */
  constructor(size: number) {
    if (!(size >= 1)) throw new Error('export threads: at least one');
    this.size = size;
  }

  /** Threads running now (started on demand, ended when idle). */
  get threads(): number {
    return this.slots.size;
  }

  /**
   * Queues an export; resolves with its bytes' stream once the first piece is made.
   * @throws CodedError `service_busy` (503, `Retry-After`) when {@link MAX_WAITING} exports wait already.
   */
  build(request: ExportRequest): Promise<ReadableStream<Uint8Array>> {
    if (this.closed) return Promise.reject(new Error('the export threads are closed'));
    if (this.waiting.length >= MAX_WAITING) {
      return Promise.reject(new CodedError('service_busy', `${MAX_WAITING} exports are waiting for an export thread already; retry in a few seconds`, [], { 'Retry-After': String(BUSY_RETRY_AFTER_S) }));
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, request, controller: null, early: [], started: { resolve, reject }, cancelled: false });
      this.pump();
    });
  }

  /** Ends every thread; exports waiting or being made fail. */
  async close(): Promise<void> {
    this.closed = true;
    const err = new Error('the export threads are closed');
    for (const e of this.waiting.splice(0)) this.fail(e, err);
    await Promise.all([...this.slots].map(async (s) => {
      this.slots.delete(s);
      if (s.idleTimer) clearTimeout(s.idleTimer);
      if (s.current) this.fail(s.current, err);
      await s.worker.terminate();
    }));
  }

  /** The next export for a free thread: the account with the fewest being made, then the one served least recently. */
  private next(): Export | undefined {
    if (!this.waiting.length) return undefined;
    const working = new Map<number, number>();
    for (const s of this.slots) if (s.current) working.set(s.current.request.owner, (working.get(s.current.request.owner) ?? 0) + 1);
    const rank = (e: Export) => [working.get(e.request.owner) ?? 0, this.lastServed.get(e.request.owner) ?? -1] as const;
    let best = 0;
    for (let i = 1; i < this.waiting.length; i++) {
      const [a, b] = [rank(this.waiting[i]!), rank(this.waiting[best]!)];
      if (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])) best = i;
    }
    const [e] = this.waiting.splice(best, 1);
    this.lastServed.set(e!.request.owner, this.served++);
    if (this.lastServed.size > 256) for (const owner of this.lastServed.keys()) if (![...this.waiting].some((w) => w.request.owner === owner)) this.lastServed.delete(owner);
    return e;
  }

  /** Gives waiting exports to free threads, starting threads up to {@link size}. */
  private pump(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (slot.current) continue;
      const e = this.next();
      if (!e) return;
      this.start(slot, e);
    }
    while (this.waiting.length && this.slots.size < this.size) {
      const slot = this.spawn();
      this.start(slot, this.next()!);
    }
  }

  private start(slot: Slot, e: Export): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.current = e;
    const { rowsJson, format, cells } = e.request;
    // The rows' memory is handed over whole when it is a buffer of its own (a file read), else copied.
    const bytes = rowsJson.byteOffset === 0 && rowsJson.byteLength === rowsJson.buffer.byteLength ? rowsJson : rowsJson.slice();
    slot.worker.postMessage({ type: 'build', id: e.id, rowsJson: bytes, format, cells } satisfies ExportThreadRequest, [bytes.buffer as ArrayBuffer]);
  }

  private spawn(): Slot {
    const worker = new Worker(new URL('./export-thread.ts', import.meta.url), { name: 'export-thread', resourceLimits: JOB_WORKER_RESOURCE_LIMITS });
    const slot: Slot = { worker, current: null, idleTimer: null };
    this.slots.add(slot);
    worker.on('message', (m: ExportThreadMessage) => {
      const e = slot.current;
      if (!e || e.id !== m.id) return;
      if (m.type === 'piece') this.piece(e, m.bytes);
      else {
        if (m.type === 'done') this.finish(e);
        else this.fail(e, new Error(`the export could not be made: ${m.message}`));
        this.free(slot);
      }
    });
    worker.on('error', (err: Error & { code?: string }) => {
      logger.error('export thread failed', { error: err, outOfMemory: err.code === 'ERR_WORKER_OUT_OF_MEMORY' });
      if (slot.current) this.fail(slot.current, new Error(err.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? `the export needed more memory than an export thread has (${JOB_WORKER_RESOURCE_LIMITS.maxOldGenerationSizeMb} MB)` : `the export thread failed: ${err.message}`));
      slot.current = null;
    });
    worker.on('exit', () => {
      this.slots.delete(slot);
      if (slot.idleTimer) clearTimeout(slot.idleTimer);
      if (slot.current) this.fail(slot.current, new Error('the export thread stopped'));
      slot.current = null;
      this.pump();
    });
    // An idle thread does not keep the process alive.
    worker.unref();
    return slot;
  }

  /** A thread's export ended: the next one, or an idle timer that ends the thread. */
  private free(slot: Slot): void {
    slot.current = null;
    this.pump();
    if (!slot.current && this.slots.has(slot)) {
      slot.idleTimer = setTimeout(() => {
        if (slot.current || !this.slots.has(slot)) return;
        this.slots.delete(slot);
        void slot.worker.terminate();
      }, IDLE_MS);
      slot.idleTimer.unref();
    }
  }

  private piece(e: Export, bytes: Uint8Array): void {
    if (e.cancelled) return;
    if (e.controller) {
      e.controller.enqueue(bytes);
      return;
    }
    e.early.push(bytes);
    this.open(e);
  }

  /** The stream of an export, handed to the caller at its first piece (or at its end, for an empty file). */
  private open(e: Export): void {
    const started = e.started;
    if (!started) return;
    e.started = null;
    started.resolve(new ReadableStream<Uint8Array>({
      start: (controller) => {
        e.controller = controller;
        for (const b of e.early.splice(0)) controller.enqueue(b);
      },
      cancel: () => {
        e.cancelled = true;
        for (const s of this.slots) if (s.current === e) s.worker.postMessage({ type: 'cancel', id: e.id } satisfies ExportThreadRequest);
      },
    }));
  }

  private finish(e: Export): void {
    this.open(e);
    if (!e.cancelled) e.controller?.close();
  }

  private fail(e: Export, err: Error): void {
    if (e.started) {
      e.started.reject(err);
      e.started = null;
    } else if (!e.cancelled) {
      e.controller?.error(err);
    }
  }
}
