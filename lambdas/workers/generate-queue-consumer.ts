/**
 * The generate queue's consumer, the generate-worker Lambda (locally, the worker threads deliver the same
 * event shape): each record is one delivery for core/generate-job-executor.ts (./job-queue-handler.ts).
 */
import { executeGenerate } from '../core/generate-job-executor.ts';
import { jobQueueHandler } from './job-queue-handler.ts';
import { workerBrowser } from './worker-browser.ts';

export const handler = jobQueueHandler('generate', (svc, jobId, delivery) => executeGenerate(svc, jobId, delivery, { browser: () => workerBrowser(svc) }));
