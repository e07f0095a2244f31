/**
 * One job worker of the local service: a worker thread that plays the part of the run-worker and the
 * generate-worker Lambdas. It receives messages from the local run and generate queues in turn, hands them to
 * lambdas/workers/run-queue-consumer.ts or generate-queue-consumer.ts as an SQS event (the same handlers the
 * cloud runs) and deletes or releases them as the batch response says.
 *
 * Accounts share the workers fairly: the queue hands this thread the message of the account served least
 * recently, and none of an account that already runs its plan's `max_concurrent_jobs` (never all workers while
 * there are two or more: core/plans.ts `accountJobLimit`); adapters/local/queue.ts.
 *
 * Running jobs here, off the HTTP thread, keeps status polls fast while pages are parsed. The parent
 * (worker-pool.ts) learns which message this thread holds, so that if the thread dies (out of memory,
 * a crash) the message becomes visible again at once and the job is retried or dead-lettered.
 */
import { BroadcastChannel, parentPort, workerData } from 'node:worker_threads';
import { installServices } from '../../core/services.ts';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { QueueName } from '../../core/ports.ts';
import { handler as runHandler } from '../../workers/run-queue-consumer.ts';
import { handler as generateHandler } from '../../workers/generate-queue-consumer.ts';
import { closeBrowser, onBrowserLaunch } from '../../workers/worker-browser.ts';
import { QUEUE_CHANNEL } from './queue.ts';
import { createLocalServices, toSqsEvent, visibilityTimeoutMs, type LocalSettings } from './runtime.ts';
import { accountJobLimit } from '../../core/plans.ts';
import { configureJobAdmission } from '../../workers/job-queue-handler.ts';
import { lowerThisThreadPriority } from '../../thread-priority.ts';
import { ReaderPool } from './reader-pool.ts';

// Jobs yield the CPU to the thread that answers HTTP (lambdas/thread-priority.ts).
lowerThisThreadPriority();

/** Messages this thread sends to its parent. */
export type WorkerReport = { type: 'holding'; receipt: string; messageId: string; jobId: string | null } | { type: 'idle' } | { type: 'ready' } | { type: 'browser'; pid: number } | { type: 'retiring' };

const settings = workerData as LocalSettings;
onBrowserLaunch((pid) => parentPort?.postMessage({ type: 'browser', pid } satisfies WorkerReport));
const local = createLocalServices(settings);
// A run's pages are read here and on this worker's reader threads (./reader-pool.ts); none on a 2-core machine.
const readers = settings.readThreads > 0 ? new ReaderPool({ threads: settings.readThreads, idleMs: settings.workerIdleMs || 60_000 }) : null;
if (readers) local.services.pageReaders = readers;
installServices(local.services);
// The local queue keeps each account within its limit when it hands out messages: the consumer takes no store slot.
configureJobAdmission({ mode: 'queue', workers: settings.workers });

/** How long an account's limit is remembered, ms (a plan change applies within it). */
const LIMIT_CACHE_MS = 5_000;
const limits = new Map<string, { limit: number; at: number }>();

/** The most jobs of an account (a message group) running at once: its plan's limit on this many workers. */
function accountLimit(group: string): number {
  const t = Date.now();
  const cached = limits.get(group);
  if (cached && t - cached.at < LIMIT_CACHE_MS) return cached.limit;
  const id = Number(group);
  const plan = Number.isInteger(id) ? local.store.planOf(id) : null;
  const limit = accountJobLimit(plan ? local.services.plans.plans[plan] : undefined, settings.workers);
  limits.set(group, { limit, at: t });
  return limit;
}

/** The queues this thread consumes, each with the handler its Lambda runs; taken in turn. */
const CONSUMERS: ReadonlyArray<[QueueName, (event: SQSEvent) => Promise<SQSBatchResponse>]> = [['run', runHandler], ['generate', generateHandler]];

/** Back-off before a failed delivery is visible again: 2 s, 4 s, 8 s … (ms). */
function retryDelayMs(receiveCount: number): number {
  return Math.min(60_000, 2000 * 2 ** (receiveCount - 1));
}

let wake: (() => void) | null = null;
const channel = new BroadcastChannel(QUEUE_CHANNEL);
channel.onmessage = () => wake?.();
let stopping = false;
parentPort?.on('message', (m: unknown) => {
  if (m === 'stop') {
    stopping = true;
    wake?.();
  }
});

function idle(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      wake = null;
      resolve();
    }
    wake = done;
  });
}

async function loop(): Promise<void> {
  parentPort?.postMessage({ type: 'ready' } satisfies WorkerReport);
  let turn = 0;
  let busyAt = Date.now();
  let retired = false;
  while (!stopping) {
    // The queues in turn, starting after the one served last, so neither waits behind the other.
    let queue: QueueName | null = null;
    let handle: ((event: SQSEvent) => Promise<SQSBatchResponse>) | null = null;
    let messages: ReturnType<typeof local.queue.receive> = [];
    for (let i = 0; i < CONSUMERS.length && !messages.length; i++) {
      [queue, handle] = CONSUMERS[(turn + i) % CONSUMERS.length]!;
      messages = local.queue.receive(queue, 1, visibilityTimeoutMs(settings), accountLimit);
      if (messages.length) turn = (turn + i + 1) % CONSUMERS.length;
    }
    if (!messages.length || !queue || !handle) {
      // Idle for SAI_WORKER_IDLE_MS: the thread ends (its memory with it); the pool starts one when messages wait.
      if (settings.workerIdleMs > 0 && Date.now() - busyAt >= settings.workerIdleMs) {
        retired = true;
        break;
      }
      // Polls also pick up messages whose visibility timeout ran out (retries, lost deliveries).
      await idle(settings.workerIdleMs > 0 ? Math.min(1000, settings.workerIdleMs) : 1000);
      continue;
    }
    const m = messages[0]!;
    let jobId: string | null = null;
    try { jobId = (JSON.parse(m.body) as { job_id?: string }).job_id ?? null; } catch { /* the handler drops it */ }
    parentPort?.postMessage({ type: 'holding', receipt: m.receipt, messageId: m.id, jobId } satisfies WorkerReport);
    const result = await handle(toSqsEvent(queue, messages));
    if (result.batchItemFailures.some((f) => f.itemIdentifier === m.id)) local.queue.retryLater(m.receipt, retryDelayMs(m.receiveCount));
    else local.queue.delete(m.receipt);
    parentPort?.postMessage({ type: 'idle' } satisfies WorkerReport);
    busyAt = Date.now();
  }
  channel.close();
  await closeBrowser();
  await readers?.close();
  local.close();
  // Its parent ends the thread (handles of the services may hold it open otherwise).
  if (retired) parentPort?.postMessage({ type: 'retiring' } satisfies WorkerReport);
}

await loop();
