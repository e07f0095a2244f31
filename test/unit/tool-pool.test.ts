/**
 * The tool workers (lambdas/core/tool-pool.ts, tool-thread.ts): a thread that passes its memory cap or its time
 * budget is ended and answered 422 `analysis_limit_exceeded`, a fresh thread takes its place and the next call
 * works; recursion past the stack is the same 422; a thread that crashes fails its call alone; calls wait in FIFO
 * order within an account, an account's backlog does not run ahead of another account's call and one account holds
 * at most half of the places, a bounded queue refuses with 503 `service_busy` and `Retry-After`, and a call that gets no thread before
 * its deadline is refused the same way; a Lambda bundle starts itself as its thread.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { ToolPool, isToolWorkerLost } from '../../lambdas/core/tool-pool.ts';
import type { ToolWork } from '../../lambdas/core/tool-thread.ts';
import { isCodedError } from '../../lambdas/errors.ts';
import { BUNDLING, EXTERNAL_MODULES, ROOT } from '../../lib/lambda.ts';
import { crash, deep, echo, hog, spin, unreachable } from './tool-pool-works.ts';

const execFileAsync = promisify(execFile);

/** A task for `work`, its deadline counted from now. */
function task<P>(work: ToolWork<P>, params: P, deadlineMs = 30_000) {
  return { work: work.name, module: work.module, url: 'http://127.0.0.1:9/page', allow: ['127.0.0.0/8'], startedAt: Date.now(), deadlineMs, params };
}

/** The error a promise rejects with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error & { code?: string; details?: unknown[]; headers?: Record<string, string> }> {
  try {
    const v = await p;
    assert.fail(`expected a rejection, got ${String(v)}`);
  } catch (err) {
    return err as Error & { code?: string };
  }
}

describe('tool worker pool', () => {
  const pools: ToolPool[] = [];
  const newPool = (o: Partial<ConstructorParameters<typeof ToolPool>[0]> = {}) => {
    const p = new ToolPool({ size: 1, maxWaiting: 8, memoryMb: 96, ...o });
    pools.push(p);
    return p;
  };
  after(async () => { await Promise.all(pools.map((p) => p.close())); });

  it('runs work in a worker thread and answers its result as JSON text', async () => {
    const pool = newPool();
    await pool.warm();
    const out = JSON.parse(await pool.reserve().run(task(echo, { value: { a: [1, 'two'] } })));
    assert.deepEqual(out.value, { a: [1, 'two'] });
    assert.equal(out.mainThread, false, 'not on the calling thread');
  });

  it('with idleMs, every thread (a spare too) ends after an idle spell; the next call starts them again and is answered', async () => {
    const pool = newPool({ size: 2, spares: 1, idleMs: 300 });
    await pool.warm();
    assert.equal(pool.threadCount, 3);
    JSON.parse(await pool.reserve('a').run(task(echo, { value: 1 })));
    const t0 = Date.now();
    while (pool.threadCount > 0 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
    assert.equal(pool.threadCount, 0, 'no thread left after the idle spell');
    const out = JSON.parse(await pool.reserve('a').run(task(echo, { value: { again: true } })));
    assert.deepEqual(out.value, { again: true });
    assert.ok(pool.threadCount >= 1, 'threads started again for the call');
  });

  it('without idleMs the threads stay', async () => {
    const pool = newPool({ size: 1 });
    await pool.warm();
    JSON.parse(await pool.reserve().run(task(echo, { value: 1 })));
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(pool.threadCount, 1);
  });

  it('a worker that passes its memory cap is ended, answered 422 analysis_limit_exceeded, replaced, and the next call works', async () => {
    const pool = newPool({ memoryMb: 64 });
    await pool.warm();
    const before = JSON.parse(await pool.reserve().run(task(echo, { value: 0 }))).threadId as number;
    const err = await rejection(pool.reserve().run(task(hog, {})));
    assert.ok(isCodedError(err), String(err));
    assert.equal(err.code, 'analysis_limit_exceeded');
    assert.deepEqual(err.details, [{ url: 'http://127.0.0.1:9/page', limit: 'memory', memory_mb: 64 }]);
    assert.match(err.message, /more memory than a tool may use \(64 MB\).*not charged/);
    const next = JSON.parse(await pool.reserve().run(task(echo, { value: 1 })));
    assert.equal(next.value, 1);
    assert.notEqual(next.threadId, before, 'a fresh thread');
    assert.equal(pool.inFlight, 0);
  });

  it('work past its deadline is stopped at the deadline (a loop that never yields), answered 422, and the next call works', async () => {
    const pool = newPool();
    await pool.warm();
    const started = Date.now();
    const err = await rejection(pool.reserve().run(task(spin, {}, 2_000)));
    const took = Date.now() - started;
    assert.equal(err.code, 'analysis_limit_exceeded');
    assert.deepEqual(err.details, [{ url: 'http://127.0.0.1:9/page', limit: 'time', deadline_ms: 2_000 }]);
    assert.ok(took >= 1_900 && took < 2_000 + 5_000, `stopped after ${took} ms`);
    assert.equal(JSON.parse(await pool.reserve().run(task(echo, { value: 'after' }))).value, 'after');
  });

  it('with a spare thread, the thread ended at a deadline is replaced by the spare, already started, and a new spare starts behind it; without one, by a new thread', async () => {
    for (const spares of [1, 0]) {
      const pool = newPool({ spares });
      await pool.warm();
      const ready = pool.readySpareThreadIds;
      assert.equal(ready.length, spares);
      const err = await rejection(pool.reserve().run(task(spin, {}, 1_500)));
      assert.equal(err.code, 'analysis_limit_exceeded');
      const next = JSON.parse(await pool.reserve().run(task(echo, { value: 'next' }))).threadId as number;
      if (spares === 1) {
        assert.equal(next, ready[0], 'the spare took the call');
        await pool.warm();
        const again = pool.readySpareThreadIds;
        assert.equal(again.length, 1, 'a new spare is ready');
        assert.ok(again[0]! > next, 'started after');
      } else {
        assert.equal(pool.readySpareThreadIds.length, 0);
      }
    }
  });

  it('recursion past the stack is 422 analysis_limit_exceeded (limit stack); the thread goes on', async () => {
    const pool = newPool();
    const err = await rejection(pool.reserve().run(task(deep, {})));
    assert.equal(err.code, 'analysis_limit_exceeded');
    assert.deepEqual(err.details, [{ url: 'http://127.0.0.1:9/page', limit: 'stack' }]);
    assert.equal(JSON.parse(await pool.reserve().run(task(echo, { value: 2 }))).value, 2);
  });

  it("a work's coded error crosses as it is; a crashed thread fails its call alone (not a limit) and is replaced", async () => {
    const pool = newPool();
    const coded = await rejection(pool.reserve().run(task(unreachable, {})));
    assert.ok(isCodedError(coded));
    assert.equal(coded.code, 'target_unreachable');
    assert.deepEqual(coded.details, [{ url: 'http://127.0.0.1:9/page', reason: 'refused' }]);
    const crashed = await rejection(pool.reserve().run(task(crash, {})));
    assert.ok(!isCodedError(crashed));
    assert.ok(isToolWorkerLost(crashed), crashed.message);
    assert.equal(JSON.parse(await pool.reserve().run(task(echo, { value: 3 }))).value, 3);
  });

  it('calls beyond the threads wait in FIFO order', async () => {
    const pool = newPool({ size: 1, maxWaiting: 8 });
    await pool.warm();
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3].map((i) => pool.reserve().run(task(echo, { value: i, sleepMs: 50 })).then((j) => order.push(JSON.parse(j).value))));
    assert.deepEqual(order, [0, 1, 2, 3]);
  });

  it('between accounts: one account\'s backlog does not run ahead of another account\'s call', async () => {
    const pool = newPool({ size: 1, maxWaiting: 8 });
    await pool.warm();
    const order: string[] = [];
    const run = (owner: string, value: string, sleepMs = 30) => pool.reserve(owner).run(task(echo, { value, sleepMs })).then((j) => { order.push(JSON.parse(j).value); });
    // a1 takes the idle thread at once; a2..a4 wait; b1 comes last but runs next (b was not served yet), then a's.
    await Promise.all([run('a', 'a1', 100), run('a', 'a2'), run('a', 'a3'), run('a', 'a4'), run('b', 'b1')]);
    assert.deepEqual(order, ['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('one account\'s calls are worked on in all threads but one: another account\'s call that comes later finds a thread at once', async () => {
    const pool = newPool({ size: 2, maxWaiting: 8 });
    await pool.warm();
    assert.equal(pool.threadsPerOwner, 1);
    const done: string[] = [];
    const run = (owner: string, value: string, sleepMs: number) => pool.reserve(owner).run(task(echo, { value, sleepMs }))
      .then((j) => { done.push(JSON.parse(j).value); });
    // The flood: three slow calls of account a at once; b's quick call a moment later.
    const flood = ['a1', 'a2', 'a3'].map((v) => run('a', v, 2_000));
    await new Promise((r) => setTimeout(r, 100));
    await run('b', 'b1', 0);
    // With both threads given to a, b1 waited for a call of a to end; with one left free, it is answered first.
    assert.deepEqual(done, ['b1']);
    await Promise.all(flood);
    assert.deepEqual(done, ['b1', 'a1', 'a2', 'a3'], 'a\'s calls one at a time, in order');
    // Alone, an account still gets its share: the pool of one thread gives it that thread.
    assert.equal(newPool({ size: 1 }).threadsPerOwner, 1);
    assert.equal(newPool({ size: 4 }).threadsPerOwner, 3);
  });

  it('one account holds at most half of the places: its next call is refused, another account\'s is not', async () => {
    const pool = newPool({ size: 1, maxWaiting: 5 });
    await pool.warm();
    assert.equal(pool.placesPerOwner, 3);
    const held = [pool.reserve('7'), pool.reserve('7'), pool.reserve('7')];
    const refused = (() => { try { pool.reserve('7'); return null; } catch (e) { return e as Error & { code?: string; headers?: Record<string, string> }; } })();
    assert.ok(refused && isCodedError(refused), 'the account\'s fourth place is refused');
    assert.equal(refused.code, 'service_busy');
    assert.match(refused.message, /Your tool calls hold 3 of the 6 places/);
    assert.equal(refused.headers?.['Retry-After'], '5');
    const other = pool.reserve('8');
    other.cancel();
    held[0]!.cancel();
    pool.reserve('7').cancel(); // a place given back is the account's again
    await Promise.all(held.slice(1).map((t, i) => t.run(task(echo, { value: i }))));
    pool.reserve('7').cancel(); // and places whose calls ended
    assert.equal(pool.inFlight, 0);
  });

  it('a full queue refuses at once with 503 service_busy and Retry-After; a cancelled place is given back', async () => {
    const pool = newPool({ size: 1, maxWaiting: 1 });
    await pool.warm();
    const a = pool.reserve();
    const b = pool.reserve();
    const refused = (() => { try { pool.reserve(); return null; } catch (e) { return e as Error & { code?: string; headers?: Record<string, string> }; } })();
    assert.ok(refused && isCodedError(refused), 'the third place is refused');
    assert.equal(refused.code, 'service_busy');
    assert.equal(refused.headers?.['Retry-After'], '5');
    b.cancel();
    const c = pool.reserve();
    const results = await Promise.all([a.run(task(echo, { value: 'a', sleepMs: 20 })), c.run(task(echo, { value: 'c' }))]);
    assert.deepEqual(results.map((r) => JSON.parse(r).value), ['a', 'c']);
    assert.equal(pool.inFlight, 0);
  });

  it('a call that gets no thread before its deadline is refused as busy, not run', async () => {
    const pool = newPool({ size: 1, maxWaiting: 4 });
    await pool.warm();
    const long = pool.reserve().run(task(echo, { value: 'long', sleepMs: 3_000 }));
    const started = Date.now();
    const err = await rejection(pool.reserve().run(task(echo, { value: 'late' }, 2_000)));
    assert.equal(err.code, 'service_busy');
    assert.ok(Date.now() - started < 2_500, 'refused when less than a second was left');
    assert.equal(JSON.parse(await long).value, 'long');
  });

  it('idle threads do not keep the process alive (a Lambda handler or a CLI that never closes the pool still ends)', async () => {
    const script = `import { ToolPool } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'lambdas/core/tool-pool.ts')).href)};
      import { echo } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'test/unit/tool-pool-works.ts')).href)};
      const pool = new ToolPool({ size: 2, maxWaiting: 1, memoryMb: 96 });
      const json = await pool.reserve().run({ work: echo.name, module: echo.module, url: 'http://127.0.0.1/', allow: [], startedAt: Date.now(), deadlineMs: 20000, params: { value: 'v' } });
      console.log(JSON.parse(json).value);`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-tool-pool-'));
    const file = path.join(dir, 'never-closes.mjs');
    fs.writeFileSync(file, script);
    try {
      const { stdout } = await execFileAsync(process.execPath, [file], { timeout: 20_000 });
      assert.equal(stdout.trim(), 'v');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('in a Lambda bundle (lib/lambda.ts esbuild options) the pool starts the bundle itself as its thread', async () => {
    const r = await build({
      entryPoints: [path.join(ROOT, 'test/unit/tool-pool-bundle-entry.ts')],
      bundle: true, platform: 'node', format: 'esm', target: BUNDLING.target, minify: BUNDLING.minify, external: EXTERNAL_MODULES,
      banner: { js: BUNDLING.banner }, mainFields: BUNDLING.mainFields, write: false, logLevel: 'silent', outfile: 'index.mjs',
    });
    const dir = path.join(ROOT, 'node_modules', '.cache', 'sai-tool-pool-bundle');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'index.mjs');
    fs.writeFileSync(file, r.outputFiles[0]!.text);
    assert.ok(!fs.existsSync(path.join(dir, 'tool-thread.ts')), 'no thread file beside the bundle');
    const mod = (await import(pathToFileURL(file).href)) as { runInBundle(): Promise<string[]> };
    const [first, stopped, second] = await mod.runInBundle();
    assert.deepEqual(JSON.parse(first!), { value: 1, mainThread: false });
    assert.equal(stopped, 'error analysis_limit_exceeded');
    assert.deepEqual(JSON.parse(second!), { value: 2, mainThread: false });
  });
});
