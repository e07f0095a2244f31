/**
 * Tool work for test/unit/tool-pool.test.ts (not a test file itself): registered here so that the pool's threads,
 * which load this module before they say `ready`, run exactly what the test names.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread, threadId } from 'node:worker_threads';
import { CodedError } from '../../lambdas/errors.ts';
import { toolWork } from '../../lambdas/core/tool-thread.ts';

/** The params back, with the thread that ran it. */
export const echo = toolWork<{ value: unknown; sleepMs?: number }>('test-echo', import.meta.url, async (_ctx, p) => {
  if (p.sleepMs) await sleep(p.sleepMs);
  return { value: p.value, mainThread: isMainThread, threadId };
});

/** Allocates until the thread's heap cap ends it. */
export const hog = toolWork('test-hog', import.meta.url, () => {
  const kept: string[][] = [];
  for (let i = 0; ; i++) kept.push(new Array<string>(10_000).fill(`x${i}`));
});

/** Never yields: only ending the thread stops it. */
export const spin = toolWork('test-spin', import.meta.url, () => {
  for (;;) { /* a page that never lets go */ }
});

/** Recursion deeper than the thread's stack. */
export const deep = toolWork('test-deep', import.meta.url, () => {
  const down = (n: number): number => 1 + down(n + 1);
  return down(0);
});

/** A coded failure, as a tool throws for a target it cannot reach. */
export const unreachable = toolWork('test-unreachable', import.meta.url, ({ call }) => {
  throw new CodedError('target_unreachable', `Could not reach ${call.url.href}`, [{ url: call.url.href, reason: 'refused' }]);
});

/** An error thrown outside the work's promise: it ends the thread. */
export const crash = toolWork('test-crash', import.meta.url, () => {
  setImmediate(() => { throw new Error('a stray error outside the work'); });
  return new Promise(() => undefined);
});
