/**
 * Exports of a job's rows as files (`GET /api/v1/jobs/{id}/results/?format=json|csv|xlsx`, docs/exports.md), bounded
 * per account (issue 37). The file is made by lambdas/export/rows-export.ts (`exportRowsInPieces`: the bytes of
 * `exportRows`, in pieces) wherever `Services.exportBuilder` says: on the local service in export threads
 * (adapters/local/export-threads.ts), never on the thread that answers HTTP, its pieces written to the client as they
 * come; absent (Lambda, where an instance serves one request at a time), on the calling thread.
 *
 * - **At once per account**: {@link MAX_EXPORTS_AT_ONCE}; one more is 429 `rate_limited` (`reason: exports`,
 *   `Retry-After`) before the rows are read. A place is a store counter (so every Lambda instance and thread sees the
 *   same count), taken before the work and given back when the file has been sent or the client went away; a place a
 *   crashed process never gave back is free again when its 15-minute window ends.
 */
import type { AccountRecord, ExportBuilder, JobRecord } from './ports.ts';
import type { Services } from './services.ts';
import { fixedWindow } from './fixed-window.ts';
import { CodedError } from '../errors.ts';
import { exportRowsInPieces, type CellOptions, type ExportFormat } from '../export/rows-export.ts';

/** Exports of one account being made or sent at once (docs/limits.md). */
export const MAX_EXPORTS_AT_ONCE = 2;

/** Seconds a refused export is told to wait. */
const EXPORT_RETRY_AFTER_S = 5;

/** Window of the places' counter, ms: a place never given back is free again when it ends. */
const PLACE_WINDOW_MS = 15 * 60_000;

/** The rows of a stored JSON text, as {@link exportRowsInPieces} takes them. */
export function parseRows(rowsJson: Uint8Array): Array<Record<string, unknown>> {
  const rows: unknown = JSON.parse(new TextDecoder().decode(rowsJson));
  if (!Array.isArray(rows)) throw new TypeError('stored rows are not a JSON array');
  return rows as Array<Record<string, unknown>>;
}

/** The builder of the calling thread: the pieces made here, one per pull. */
export const inlineExportBuilder: ExportBuilder = {
  async build({ rowsJson, format, cells }) {
    const pieces = exportRowsInPieces(parseRows(rowsJson), format, cells);
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await pieces.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel() {
        await pieces.return(undefined);
      },
    });
  },
};

/**
 * Takes one of the account's {@link MAX_EXPORTS_AT_ONCE} places.
 * @returns the function that gives it back (once; later calls do nothing).
 * @throws CodedError `rate_limited` (429, `Retry-After`), details `[{limit, window, retry_after_seconds, reason: 'exports'}]`.
 */
async function takeExportPlace(svc: Services, account: AccountRecord): Promise<() => Promise<void>> {
  const w = fixedWindow(svc.clock.now(), PLACE_WINDOW_MS);
  const counter = `exports-at-once:${w.key}`;
  const { ok } = await svc.store.consume(account.id, counter, 1, MAX_EXPORTS_AT_ONCE, new Date(w.end.getTime() + PLACE_WINDOW_MS).toISOString());
  if (!ok) {
    throw new CodedError('rate_limited', `${MAX_EXPORTS_AT_ONCE} exports of this account are being made already; retry in ${EXPORT_RETRY_AFTER_S} s, when one has been sent`,
      [{ limit: MAX_EXPORTS_AT_ONCE, window: 'at once', retry_after_seconds: EXPORT_RETRY_AFTER_S, reason: 'exports' }],
      { 'Retry-After': String(EXPORT_RETRY_AFTER_S) });
  }
  let given = false;
  return async () => {
    if (given) return;
    given = true;
    await svc.store.refund(account.id, counter, 1).catch(() => undefined);
  };
}

/**
 * The file of a finished job's rows: a stream of its bytes, made off the HTTP thread where the service has export
 * threads. A failed job exports no rows (an empty file), as before.
 * @throws CodedError `rate_limited` (429) past {@link MAX_EXPORTS_AT_ONCE}; `service_busy` (503) from the builder.
 */
export async function exportJobRows(svc: Services, account: AccountRecord, job: JobRecord, format: ExportFormat, cells: CellOptions): Promise<ReadableStream<Uint8Array>> {
  const giveBack = await takeExportPlace(svc, account);
  let stream: ReadableStream<Uint8Array>;
  try {
    const stored = job.status === 'completed' && job.results_key ? await svc.blobs.get(job.results_key) : null;
    const rowsJson = stored ?? new TextEncoder().encode('[]');
    stream = await (svc.exportBuilder ?? inlineExportBuilder).build({ rowsJson, format, cells, owner: account.id });
  } catch (err) {
    await giveBack();
    throw err;
  }
  // The place is given back when the last piece has been read, on an error, or when the reader cancels.
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        controller.close();
      } catch (err) {
        controller.error(err);
      }
      await giveBack();
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => undefined);
      await giveBack();
    },
  });
}

/** A stream read whole (a host that cannot stream answers with the whole body). */
export async function readWhole(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
  }
  return Buffer.concat(parts);
}
