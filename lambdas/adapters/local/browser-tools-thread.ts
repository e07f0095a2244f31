/**
 * The local service's browser thread (./browser-tools.ts): it owns the Chromium the tools use and does their
 * browser work (core/browser-tools.ts), so that the DevTools protocol's messages (a 5 MB DOM, a full-page image)
 * are parsed here and not on the thread that answers HTTP. Every request of the browser goes through the outbound
 * guard built from the service's allowlist.
 *
 * Messages in: `{id, op: 'render' | 'screenshot', request}`, `{op: 'close'}`. Out: `{id, ok: true, result}` (a
 * screenshot's image bytes transferred, not copied) or `{id, ok: false, error: {code?, message, details?, name}}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { renderToolPage, shootPage, type RenderRequest, type ShotRequest } from '../../core/browser-tools.ts';
import { BrowserHost } from '../../engine/browser/host.ts';
import { isCodedError } from '../../errors.ts';
import { OutboundGuard } from '../../net/guard.ts';
import { lowerThisThreadPriority } from '../../thread-priority.ts';
import { jsGlobalPaths } from '../../tools/tech/index.ts';

/** What the service gives the thread. */
export interface BrowserThreadData {
  /** SAI_OUTBOUND_ALLOW, as the service's guard has it. */
  outboundAllow: string[];
}

/** A request to the thread. */
export type BrowserThreadRequest =
  | { id: number; op: 'render'; request: RenderRequest }
  | { id: number; op: 'screenshot'; request: ShotRequest }
  | { op: 'close' };

/** The thread's answer to a request. */
export type BrowserThreadAnswer =
  | { browserPid: number }
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code?: string; details?: unknown[] } };

// Rendering yields the CPU to the thread that answers HTTP (lambdas/thread-priority.ts).
lowerThisThreadPriority();

/** The named sets of global paths this thread builds (core/browser-tools.ts `RenderRequest.globalPaths`). */
const GLOBAL_SETS = { 'tech-detector': jsGlobalPaths };

const data = workerData as BrowserThreadData;
// Each Chromium it starts is announced, so that the service can end it should this thread die.
const host = new BrowserHost({ guard: new OutboundGuard({ allow: data.outboundAllow }), onLaunch: (pid) => parentPort!.postMessage({ browserPid: pid } satisfies BrowserThreadAnswer) });

parentPort!.on('message', (m: BrowserThreadRequest) => {
  if (m.op === 'close') {
    void host.close().finally(() => process.exit(0));
    return;
  }
  const work = m.op === 'render' ? renderToolPage(host, m.request, GLOBAL_SETS) : shootPage(host, m.request);
  work.then(
    (result) => {
      if (m.op === 'screenshot') {
        const shot = result as Awaited<ReturnType<typeof shootPage>>;
        // The image's bytes move to the other thread (a copy of them in a fresh buffer: a Buffer may share a pool).
        const bytes = new Uint8Array(shot.body);
        parentPort!.postMessage({ id: m.id, ok: true, result: { ...shot, body: bytes } } satisfies BrowserThreadAnswer, [bytes.buffer]);
      } else {
        parentPort!.postMessage({ id: m.id, ok: true, result } satisfies BrowserThreadAnswer);
      }
    },
    (err: unknown) => {
      const e = err as Error & { code?: string; details?: unknown[] };
      parentPort!.postMessage({
        id: m.id, ok: false,
        error: { name: e?.name ?? 'Error', message: e?.message ?? String(err), ...(isCodedError(err) ? { code: err.code, details: err.details } : {}) },
      } satisfies BrowserThreadAnswer);
    },
  );
});
