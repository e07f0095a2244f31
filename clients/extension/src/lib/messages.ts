/**
 * The messages between the popup and the background service worker (browser.runtime.sendMessage), and the
 * storage keys both read. The service worker owns runs (they outlive the popup); the popup owns the account
 * and the configs.
 */
import { browser } from 'wxt/browser';
import type { RunState } from './runner.ts';
import type { Suggestion } from '../../../../lambdas/generator/suggest.ts';

/** A request from the popup. */
export type Request =
  | { type: 'quick-test'; tabId: number; yaml: string }
  | { type: 'run'; tabId: number; yaml: string }
  | { type: 'stop' }
  | { type: 'state' }
  | { type: 'suggest'; tabId: number };

/** The answer to each request. */
export interface Answers {
  'quick-test': RunState;
  run: { started: true } | { started: false; reason: string };
  stop: { stopping: boolean };
  state: RunState | null;
  suggest: { ok: true; suggestion: Omit<Suggestion, 'rows'> & { rows: Suggestion['rows'] } } | { ok: false; code: string; message: string };
}

/** Sent by the service worker to open popups while a run goes on and when it ends. */
export interface RunStateEvent { type: 'run-state'; state: RunState }

/** browser.storage.local keys. */
export const STORAGE = {
  /** The signed-in account: {baseUrl, apiKey, email}. */
  account: 'account',
  /** The last synced configs: {syncedAt, baseUrl, configs: Config[]}. */
  configs: 'configs',
  /** The last ended run (its rows, for export after the popup was closed). */
  lastRun: 'lastRun',
  /** The editor's unsaved text: {configId, yaml}. */
  draft: 'draft',
} as const;

/** Sends a request to the service worker and returns its answer. */
export function ask<T extends Request>(request: T): Promise<Answers[T['type']]> {
  return browser.runtime.sendMessage(request) as Promise<Answers[T['type']]>;
}
