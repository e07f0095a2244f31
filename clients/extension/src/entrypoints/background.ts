/**
 * The background service worker: runs configs on tabs (lib/runner.ts), one at a time, tells open popups how a
 * run goes (`run-state` messages), keeps the last ended run in browser.storage.local for export, and answers
 * the popup's "suggest" with the generator's record detection on the live page (lambdas/generator/suggest.ts).
 */
import { browser } from 'wxt/browser';
import { runOnTab, type RunState } from '../lib/runner.ts';
import { STORAGE, type Answers, type Request, type RunStateEvent } from '../lib/messages.ts';
import { snapshotInPage } from '../lib/in-tab.ts';
import { suggestConfig } from '../../../../lambdas/generator/suggest.ts';
import { isCodedError } from '../../../../lambdas/errors.ts';

/** The run going on, or the last one since the worker started. */
let current: RunState | null = null;
let stopper: AbortController | null = null;

function publish(state: RunState): void {
  current = state;
  const event: RunStateEvent = { type: 'run-state', state };
  browser.runtime.sendMessage(event).catch(() => undefined); // no popup open: nobody listens
}

async function tabOf(tabId: number): Promise<{ id: number; url: string }> {
  const tab = await browser.tabs.get(tabId);
  return { id: tabId, url: tab.url ?? '' };
}

async function startRun(tabId: number, yaml: string): Promise<Answers['run']> {
  if (current?.status === 'running') return { started: false, reason: 'A run is going on: stop it or wait for it to end' };
  const tab = await tabOf(tabId);
  stopper = new AbortController();
  const started: RunState = { mode: 'full', status: 'running', configName: '', startUrl: tab.url, progress: 0, pagesScraped: 0, itemsFound: 0, message: 'Starting', warnings: [], rows: [], startedAt: Date.now() };
  publish(started);
  let last = 0;
  // A service worker is stopped after 30 s without extension events; a page's long wait_after could be that
  // long. An extension API call every 20 s keeps it alive while the run goes on (Chrome 110+).
  const keepAlive = setInterval(() => { void browser.runtime.getPlatformInfo(); }, 20_000);
  void runOnTab(yaml, tab, 'full', {
    stopSignal: stopper.signal,
    onProgress: (p) => {
      const progress = Math.max(last, p.progress);
      last = progress;
      publish({ ...started, progress, pagesScraped: p.pagesScraped, itemsFound: p.itemsFound, message: p.message });
    },
  }).then(async (ended) => {
    clearInterval(keepAlive);
    publish(ended);
    await browser.storage.local.set({ [STORAGE.lastRun]: ended });
  });
  return { started: true };
}

async function suggest(tabId: number): Promise<Answers['suggest']> {
  try {
    const [result] = await browser.scripting.executeScript({ target: { tabId }, func: snapshotInPage });
    const snap = result!.result as ReturnType<typeof snapshotInPage>;
    const suggestion = suggestConfig(snap.html, snap.url);
    return { ok: true, suggestion };
  } catch (err) {
    return { ok: false, code: isCodedError(err) ? err.code : 'target_forbidden', message: (err as Error).message };
  }
}

async function answer(request: Request): Promise<unknown> {
  switch (request.type) {
    case 'quick-test': {
      if (current?.status === 'running') {
        return { ...current, status: 'failed', progress: 0, rows: [], message: 'A run is going on: stop it or wait for it to end', error: { code: 'run_in_progress', message: 'A run is going on', details: [] }, startedAt: Date.now(), finishedAt: Date.now() } satisfies RunState;
      }
      const ended = await runOnTab(request.yaml, await tabOf(request.tabId), 'quick');
      if (ended.status !== 'failed') await browser.storage.local.set({ [STORAGE.lastRun]: ended });
      return ended;
    }
    case 'run':
      return startRun(request.tabId, request.yaml);
    case 'stop':
      if (current?.status !== 'running' || !stopper) return { stopping: false };
      stopper.abort();
      publish({ ...current, message: 'Stopping after the page being read' });
      return { stopping: true };
    case 'state':
      return current ?? ((await browser.storage.local.get(STORAGE.lastRun))[STORAGE.lastRun] as RunState | undefined) ?? null;
    case 'suggest':
      return suggest(request.tabId);
  }
}

export default defineBackground(() => {
  browser.runtime.onMessage.addListener((request: Request, sender, reply) => {
    if (sender.id !== browser.runtime.id || !request || typeof request !== 'object' || !('type' in request)) return false;
    if (request.type === ('run-state' as string)) return false;
    answer(request).then(reply, (err: unknown) => reply({ error: (err as Error)?.message ?? String(err) }));
    return true;
  });
});
