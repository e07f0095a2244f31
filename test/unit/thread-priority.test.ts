/**
 * Background threads yield the CPU (lambdas/thread-priority.ts): a worker thread that lowers its priority gets the
 * background nice value, the thread that answers HTTP keeps its own, and a process group (as Chromium's) is lowered
 * whole. Linux only, as the module is.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_NICE, HTTP_THREAD_SLICE_NS, lowerProcessGroupPriority, lowerSessionAutogroup, lowerThisThreadPriority, requestShortSlice, threadSlice } from '../../lambdas/thread-priority.ts';

const tidOfThisThread = () => Number(readlinkSync('/proc/thread-self').split('/').pop());

describe('thread priority', { skip: process.platform !== 'linux' ? 'Linux only' : false }, () => {
  it('a worker thread that lowers itself runs at the background nice value; the main thread keeps its own', async () => {
    const mainBefore = getPriority(tidOfThisThread());
    const url = new URL('../../lambdas/thread-priority.ts', import.meta.url).href;
    const w = new Worker(`
      const { parentPort } = require('node:worker_threads');
      import(${JSON.stringify(url)}).then((m) => {
        const ok = m.lowerThisThreadPriority();
        const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
        parentPort.postMessage({ ok, tid, nice: require('node:os').getPriority(tid) });
      });`, { eval: true });
    const got = await new Promise<{ ok: boolean; tid: number; nice: number }>((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    await w.terminate();
    assert.equal(got.ok, true);
    assert.equal(got.nice, Math.max(BACKGROUND_NICE, mainBefore));
    assert.notEqual(got.tid, tidOfThisThread());
    assert.equal(getPriority(tidOfThisThread()), mainBefore, 'the calling process\'s main thread is untouched');
  });

  it('never raises a priority: a thread already lower stays where it is', () => {
    // The test process's main thread: lower it to 15 in a child process instead, so this process is not slowed.
    const child = spawn(process.execPath, ['-e', `
      const os = require('node:os');
      os.setPriority(15);
      import(${JSON.stringify(new URL('../../lambdas/thread-priority.ts', import.meta.url).href)}).then((m) => {
        m.lowerThisThreadPriority(10);
        process.stdout.write(String(os.getPriority()));
      });`], { stdio: ['ignore', 'pipe', 'inherit'] });
    return new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
      child.once('exit', () => { try { assert.equal(out, '15'); resolve(); } catch (err) { reject(err); } });
    });
  });

  it('lowers every process of a process group, children started before included', async () => {
    // A detached shell leads its own group and starts a sleeping child, as Chromium starts its zygote.
    const leader = spawn('sh', ['-c', 'sleep 30 & wait'], { detached: true, stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 200));
      const lowered = lowerProcessGroupPriority(leader.pid!);
      assert.ok(lowered >= 2, `the shell and its sleep: ${lowered}`);
      assert.equal(getPriority(leader.pid!), BACKGROUND_NICE);
    } finally {
      process.kill(-leader.pid!, 'SIGKILL');
    }
  });

  // sched(7): with autogroups on, a detached process's session weighs as much as the whole service unless its
  // autogroup's nice value is raised.
  const autogroups = existsSync('/proc/self/autogroup');
  const autogroupNice = (pid: number | 'self') => Number(readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim().split(' nice ')[1]);

  it('lowers the autogroup of a process group that leads its own session, and never the caller\'s own', async () => {
    if (!autogroups) {
      assert.equal(lowerSessionAutogroup(process.pid), false, 'without autogroups there is nothing to lower');
      return;
    }
    const ownBefore = autogroupNice('self');
    const leader = spawn('sh', ['-c', 'sleep 30 & wait'], { detached: true, stdio: 'ignore' });
    const sameSession = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(autogroupNice(leader.pid!), 0);
      lowerProcessGroupPriority(leader.pid!);
      assert.equal(autogroupNice(leader.pid!), BACKGROUND_NICE, 'the detached session\'s autogroup');
      assert.equal(lowerSessionAutogroup(sameSession.pid!), false, 'a child in the caller\'s session shares its autogroup');
      assert.equal(autogroupNice('self'), ownBefore, 'the caller\'s autogroup is untouched');
    } finally {
      process.kill(-leader.pid!, 'SIGKILL');
      sameSession.kill('SIGKILL');
    }
  });

  it('gives a thread the short slice it asks for, not the threads and processes it starts later, nor its nice value', async () => {
    // A child asks for the slice, then starts a worker thread and a process; each reports its own thread id.
    const child = spawn(process.execPath, ['-e', `
      const { Worker } = require('node:worker_threads');
      const { spawn } = require('node:child_process');
      import(${JSON.stringify(new URL('../../lambdas/thread-priority.ts', import.meta.url).href)}).then((m) => {
        m.lowerThisThreadPriority(5);
        const set = m.requestShortSlice(process.pid);
        const w = new Worker("require('node:worker_threads').parentPort.postMessage(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop())); setTimeout(() => {}, 2000)", { eval: true });
        w.once('message', (workerTid) => {
          const p = spawn('sleep', ['2'], { stdio: 'ignore' });
          process.stdout.write(JSON.stringify({ set, workerTid, sleepPid: p.pid }) + '\\n');
          setTimeout(() => process.exit(0), 2000);
        });
      });`], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => { let out = ''; child.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.includes('\n')) resolve(out); }); });
    const { set, workerTid, sleepPid } = JSON.parse(line) as { set: number | null; workerTid: number; sleepPid: number };
    try {
      assert.equal(set, HTTP_THREAD_SLICE_NS, 'the thread that asked has the slice');
      assert.equal(threadSlice(child.pid!), HTTP_THREAD_SLICE_NS);
      assert.equal(getPriority(child.pid!), 5, 'its nice value is kept');
      assert.notEqual(threadSlice(workerTid), HTTP_THREAD_SLICE_NS, 'a worker thread started later keeps the default');
      assert.notEqual(threadSlice(sleepPid), HTTP_THREAD_SLICE_NS, 'a process started later keeps the default');
    } finally {
      child.kill('SIGKILL');
    }
    assert.equal(requestShortSlice(2 ** 30), null, 'no such thread');
  });

  it('does nothing to the caller when asked for a group that does not exist', () => {
    assert.equal(lowerProcessGroupPriority(2 ** 30), 0);
    assert.equal(typeof lowerThisThreadPriority, 'function');
  });
});
