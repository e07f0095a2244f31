/**
 * The one-process service (`npm start`): a small stand-in for API Gateway, SQS and Lambda around the
 * very same handlers the cloud runs, composed from one module per job:
 *
 * - data-dir-lock.ts: one service per DATA_DIR;
 * - recovery.ts: jobs left unfinished by the last process get a delivery again;
 * - worker-pool.ts: worker threads (worker-thread.ts) consume the run queue as run-worker Lambdas;
 * - watchdog.ts: a thread stuck past the job time limit is restarted and its job fails;
 * - dead-letter-poller.ts: jobs the queue gave up on end `failed`;
 * - counter-sweeper.ts: expired usage and throttle counters deleted every 15 minutes;
 * - schedule-loop.ts: due schedules fired every second (issue 26); webhook-poller.ts: webhook deliveries attempted;
 * - first-account.ts: an account on the first start, before the first request;
 * - config-parser.ts: large config texts parsed in a worker thread, off the HTTP thread;
 * - export-threads.ts: result exports made in worker threads started when first needed, off the HTTP thread;
 * - core/tool-pool.ts: the tool workers, threads that fetch and analyse the tools' pages off the HTTP thread
 *   (SAI_TOOL_WORKERS, SAI_TOOL_QUEUE, SAI_TOOL_MEMORY_MB, SAI_TOOL_DEADLINE_MS), ready before the service listens;
 * - http-server.ts (with api-gateway-event.ts and authorize.ts): the routes over HTTP.
 */
import { installServices } from '../../core/services.ts';
import { closeToolWorkers, configureToolCalls, warmToolWorkers } from '../../core/tools.ts';
import { lowerPlatformThreads, requestShortSlice } from '../../thread-priority.ts';
import { logger } from '../../logger.ts';
import { closeBrowser } from '../../workers/worker-browser.ts';
import { LocalBrowserTools } from './browser-tools.ts';
import { ExportThreads } from './export-threads.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { startDeadLetterPoller } from './dead-letter-poller.ts';
import { ThreadConfigParser } from './config-parser.ts';
import { startCounterSweeper } from './counter-sweeper.ts';
import { prepareDataDir } from './data-dir.ts';
import { createFirstAccount, type FirstAccount } from './first-account.ts';
import { startHttpServer } from './http-server.ts';
import { recoverJobs } from './recovery.ts';
import { createLocalServices, type LocalServices, type LocalSettings } from './runtime.ts';
import { startWatchdog } from './watchdog.ts';
import { startWorkerPool } from './worker-pool.ts';
import { startScheduleLoop } from './schedule-loop.ts';
import { startWebhookPoller } from './webhook-poller.ts';

/** A running local service. */
export interface LocalService {
  /** e.g. `http://127.0.0.1:8787` */
  url: string;
  local: LocalServices;
  /** The account made on this start because DATA_DIR had none (its password is shown nowhere else); else null. */
  firstAccount: FirstAccount | null;
  /** Stops accepting requests, stops the workers (their jobs resume on the next start) and closes the store. */
  close(): Promise<void>;
}

/**
 * Starts the local service on its settings: lock, store, recovery, workers, the first account, HTTP.
 * @throws Error when DATA_DIR is in use by another running service, or the port is taken.
 */
export async function startLocalService(settings: LocalSettings): Promise<LocalService> {
  prepareDataDir(settings.dataDir);
  const lock = lockDataDir(settings.dataDir);
  // This thread answers HTTP: a short time slice lets a request that comes in run before the background work that has
  // been using the CPU (lambdas/thread-priority.ts; the workers, started below, keep the default slice at nice 10, and
  // so do V8's platform threads, which do the workers' garbage collection and compiling).
  const sliceNs = requestShortSlice(process.pid);
  lowerPlatformThreads();
  logger.debug(sliceNs ? `HTTP thread time slice: ${sliceNs / 1e6} ms` : 'HTTP thread time slice: the default (not set here)', { sliceNs });
  const local = createLocalServices(settings);
  const configParser = new ThreadConfigParser();
  local.services.configParser = configParser;
  installServices(local.services);
  /** What has started so far, to stop in reverse if a later step fails. */
  const started: Array<{ stop(): void | Promise<void> }> = [{ stop: () => configParser.close() }];
  let closing: Promise<void> | null = null;
  // The start waits on threads that do not hold the process open (the tool workers, the config parser) while no job
  // worker may run yet (they start when messages wait): this timer holds it open until the server listens.
  const starting = setInterval(() => undefined, 60_000);
  try {
    const { released, requeued } = await recoverJobs(local);
    if (released || requeued) {
      logger.info(`recovered: ${released} job message(s) in flight at the last stop released, ${requeued} job(s) queued again`, { released, requeued });
    }
    const pool = startWorkerPool(settings, local);
    started.push(pool, startWatchdog(settings, local, pool.slots), startDeadLetterPoller(local), startCounterSweeper(local));
    // Monitoring (issue 26): schedules fired from the store, webhook deliveries from their queue.
    started.push(startScheduleLoop(local), startWebhookPoller(local));
    const firstAccount = await createFirstAccount(local.services);
    // The browser of the tools that render (screenshot, tech-detector render): a thread of its own (the HTTP thread
    // only waits for it), closed after HTTP stops.
    const browserTools = new LocalBrowserTools(settings.outboundAllow);
    local.services.browserTools = browserTools;
    started.push({ stop: () => browserTools.close() }, { stop: () => closeBrowser() });
    // Result exports: threads started when an export first asks for one (core/exports.ts).
    const exportThreads = new ExportThreads(settings.exportThreads ?? 2);
    local.services.exportBuilder = exportThreads;
    started.push({ stop: () => exportThreads.close() });
    // The tool workers: started by the first tool call and ended after SAI_TOOL_IDLE_MS without one (issue 42: about
    // 70 MB a thread); with SAI_TOOL_IDLE_MS=0 they are kept, and then started ahead, ready before the first call.
    await configureToolCalls(settings.tools);
    started.push({ stop: () => closeToolWorkers() });
    const http = await startHttpServer(settings.host, settings.port, settings.tools.idleMs === 0 ? { beforeListen: () => warmToolWorkers() } : {});
    started.push({ stop: () => http.close() });
    return { url: http.url, local, firstAccount, close: () => closing ??= stop() };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearInterval(starting);
  }

  /** Stops in the reverse order of starting: HTTP first, then the timers and the workers; then the store and the lock. */
  async function stop(): Promise<void> {
    for (const part of started.reverse()) await part.stop();
    local.close();
    lock.release();
  }
}
