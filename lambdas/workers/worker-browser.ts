/**
 * The browser of a worker: one per worker (a Lambda instance, a local worker thread), launched on first use
 * and shared by the run and generate consumers of that worker.
 */
import type { Services } from '../core/services.ts';
import { BrowserHost } from '../engine/browser/host.ts';

let host: BrowserHost | null = null;
const launchListeners: Array<(pid: number) => void> = [];

/** This worker's browser host (made on first call; Chromium itself starts on first use). */
export function workerBrowser(svc: Services): BrowserHost {
  host ??= new BrowserHost({ guard: svc.guard, onLaunch: (pid) => launchListeners.forEach((fn) => fn(pid)) });
  return host;
}

/** Subscribes to browser launches of this worker (pid of each Chromium started). */
export function onBrowserLaunch(fn: (pid: number) => void): void {
  launchListeners.push(fn);
}

/** Closes this worker's browser (local worker threads call it when they stop). */
export async function closeBrowser(): Promise<void> {
  await host?.close();
  host = null;
}
