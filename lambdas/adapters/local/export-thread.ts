/**
 * The worker thread of export-threads.ts: makes one export at a time (core/exports.ts `parseRows`, then
 * lambdas/export/rows-export.ts `exportRowsInPieces`) and sends its pieces to the HTTP thread as they are made, each
 * piece's memory handed over (transferred, not copied). Between pieces it lets a cancel in.
 */
import { parentPort } from 'node:worker_threads';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { lowerThisThreadPriority } from '../../thread-priority.ts';
import { parseRows } from '../../core/exports.ts';
import { exportRowsInPieces, type CellOptions, type ExportFormat } from '../../export/rows-export.ts';

/** A request from the HTTP thread: an export to make, or one to stop. */
export type ExportThreadRequest =
  | { type: 'build'; id: number; rowsJson: Uint8Array; format: ExportFormat; cells: CellOptions }
  | { type: 'cancel'; id: number };

/** What the thread says: a piece of an export, its end, or why it failed. */
export type ExportThreadMessage =
  | { type: 'piece'; id: number; bytes: Uint8Array }
  | { type: 'done'; id: number }
  | { type: 'failed'; id: number; message: string };

// Exports yield the CPU to the thread that answers HTTP (lambdas/thread-priority.ts).
lowerThisThreadPriority();

const cancelled = new Set<number>();

async function build(request: Extract<ExportThreadRequest, { type: 'build' }>): Promise<void> {
  const { id } = request;
  // One export at a time: a cancel left from an earlier one is stale.
  cancelled.clear();
  try {
    const rows = parseRows(request.rowsJson);
    for await (const piece of exportRowsInPieces(rows, request.format, request.cells)) {
      if (cancelled.has(id)) break;
      // A piece that is a view of a larger buffer is copied out first: only whole buffers are handed over.
      const bytes = piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength ? piece : piece.slice();
      parentPort!.postMessage({ type: 'piece', id, bytes } satisfies ExportThreadMessage, [bytes.buffer as ArrayBuffer]);
      await nextTurn(); // a cancel sent meanwhile is read before the next piece
    }
    // Also after a cancel: `done` tells the pool the thread is free.
    parentPort!.postMessage({ type: 'done', id } satisfies ExportThreadMessage);
  } catch (err) {
    parentPort!.postMessage({ type: 'failed', id, message: (err as Error)?.message ?? String(err) } satisfies ExportThreadMessage);
  }
}

/** One export at a time: the pool sends the next only after this one's `done` or `failed`. */
parentPort?.on('message', (request: ExportThreadRequest) => {
  if (request.type === 'cancel') cancelled.add(request.id);
  else void build(request);
});
