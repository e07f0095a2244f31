/**
 * The local process's batched log output (lambdas/logger.ts `batchLogOutput`): every line arrives, whole and in
 * order, through a pipe, across many 64 KiB batches, also those still held when the process calls `process.exit`;
 * a line logged in one turn of the event loop is out at the end of that turn (no timer holds it back).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs `body` in a child Node with the logger batched; returns its stdout (read after `pauseMs`: a slow reader). */
function child(body: string, pauseMs = 0): Promise<string> {
  const script = `import { logger, batchLogOutput } from ${JSON.stringify(path.join(ROOT, 'lambdas/logger.ts'))};\nbatchLogOutput();\n${body}`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    // A reader that does not read at first: the pipe fills (64 KiB) and the child's writes must wait, not drop lines.
    if (pauseMs > 0) {
      p.stdout.pause();
      setTimeout(() => p.stdout.resume(), pauseMs);
    }
    p.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

describe('batched log output', () => {
  it('20,000 lines through a pipe its reader leaves full for a while, the last ones held at process.exit: all of them, whole, in order', async () => {
    const out = await child(`for (let i = 0; i < 20000; i++) logger.info('line', { seq: i, pad: 'x'.repeat(i % 50) });\nprocess.exit(0);`, 500);
    const lines = out.trim().split('\n');
    assert.equal(lines.length, 20000);
    lines.forEach((l, i) => {
      const o = JSON.parse(l) as { message: string; seq: number; level: string };
      assert.equal(o.seq, i);
      assert.equal(o.message, 'line');
      assert.equal(o.level, 'INFO');
    });
  });

  it('a line is out at the end of its turn of the event loop, while the process goes on', async () => {
    const out = await child(`logger.info('first');\nawait new Promise((r) => setImmediate(r));\nawait new Promise((r) => setTimeout(r, 200));\nprocess.stdout.write('MARK\\n');\nlogger.info('second');`);
    const order = out.trim().split('\n').map((l) => (l.startsWith('{') ? (JSON.parse(l) as { message: string }).message : l));
    assert.deepEqual(order, ['first', 'MARK', 'second']);
  });
});
