/**
 * The run queue's consumer, the run-worker Lambda: an SQS event source mapping with
 * ReportBatchItemFailures delivers run messages (locally, the worker threads of the local service deliver
 * the same event shape, lambdas/adapters/local/worker-thread.ts). Each record's body is `{"job_id": "…"}`
 * and is one delivery for core/run-job-executor.ts (./job-queue-handler.ts).
 */
import { executeRun } from '../core/run-job-executor.ts';
import { jobQueueHandler } from './job-queue-handler.ts';
import { workerBrowser } from './worker-browser.ts';

export { closeBrowser, onBrowserLaunch } from './worker-browser.ts';

export const handler = jobQueueHandler('run', (svc, jobId, delivery) => executeRun(svc, jobId, delivery, () => workerBrowser(svc)));
