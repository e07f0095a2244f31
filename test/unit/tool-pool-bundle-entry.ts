/**
 * The entry of the bundle test/unit/tool-pool.test.ts builds with lib/lambda.ts's esbuild options: as in a tool
 * Lambda, the pool then has no tool-thread.ts file to start and must start the bundle itself as its thread.
 */
import { isMainThread } from 'node:worker_threads';
import { ToolPool } from '../../lambdas/core/tool-pool.ts';
import { toolWork } from '../../lambdas/core/tool-thread.ts';

const echo = toolWork<{ value: number }>('bundle-echo', import.meta.url, (_ctx, p) => ({ value: p.value, mainThread: isMainThread }));
const spin = toolWork('bundle-spin', import.meta.url, () => {
  for (;;) { /* never yields */ }
});

/** Runs `echo`, then `spin` past a 1.5 s deadline, then `echo` again, in a one-thread pool; returns what each gave. */
export async function runInBundle(): Promise<Array<string>> {
  const pool = new ToolPool({ size: 1, maxWaiting: 0, memoryMb: 128 });
  const task = (name: string, params: unknown, deadlineMs = 20_000) => ({ work: name, module: import.meta.url, url: 'http://127.0.0.1/', allow: [], startedAt: Date.now(), deadlineMs, params });
  const out: string[] = [];
  try {
    out.push(await pool.reserve().run(task(echo.name, { value: 1 })));
    out.push(await pool.reserve().run(task(spin.name, {}, 1_500)).catch((e: { code?: string }) => `error ${e.code}`));
    out.push(await pool.reserve().run(task(echo.name, { value: 2 })));
  } finally {
    await pool.close();
  }
  return out;
}
