/** The local queue keeps the SQS semantics the workers rely on: at-least-once, visibility, receive counts, dead letters. */
import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';
import { LocalQueue } from '../../lambdas/adapters/local/queue.ts';

describe('LocalQueue', () => {
  let now = 1_000_000;
  let q: LocalQueue;
  let file: string;
  beforeEach(() => {
    now = 1_000_000;
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-queue-')), 'q.db');
    q = new LocalQueue(new SqliteStore(file).db, { maxReceives: 3, now: () => now });
  });

  it('hides a received message for its visibility timeout and delivers it again after', async () => {
    await q.send('run', 'a');
    const [m1] = q.receive('run', 10, 5000);
    assert.equal(m1?.body, 'a');
    assert.equal(m1?.receiveCount, 1);
    assert.deepEqual(q.receive('run', 10, 5000), [], 'invisible while in flight');
    now += 4999;
    assert.deepEqual(q.receive('run', 10, 5000), []);
    now += 1;
    const [m2] = q.receive('run', 10, 5000);
    assert.equal(m2?.body, 'a', 'at-least-once: delivered again');
    assert.equal(m2?.receiveCount, 2);
    assert.notEqual(m2?.receipt, m1?.receipt);
  });

  it('deletes only with the receipt of the current delivery', async () => {
    await q.send('run', 'a');
    const [m1] = q.receive('run', 1, 10);
    now += 10;
    const [m2] = q.receive('run', 1, 10_000);
    assert.equal(q.delete(m1!.receipt), false, 'stale receipt');
    assert.equal(q.depth('run').inFlight, 1);
    assert.equal(q.delete(m2!.receipt), true);
    assert.deepEqual(q.depth('run'), { visible: 0, inFlight: 0, dead: 0 });
  });

  it('release gives a message back without using up a delivery (a clean stop is not a failed attempt)', async () => {
    await q.send('run', 'a');
    for (let i = 0; i < 5; i++) {
      const [m] = q.receive('run', 1, 60_000);
      assert.equal(m?.receiveCount, 1, `delivery ${i + 1} still counts as the first`);
      assert.equal(q.release(m!.receipt), true);
    }
    assert.equal(q.release('stale'), false);
  });

  it('changes visibility, e.g. to retry at once', async () => {
    await q.send('run', 'a');
    const [m] = q.receive('run', 1, 60_000);
    assert.equal(q.changeVisibility(m!.receipt, 0), true);
    assert.equal(q.receive('run', 1, 60_000).length, 1);
  });

  it('moves a message to the dead-letter queue after maxReceives deliveries', async () => {
    await q.send('run', 'poison');
    for (let i = 1; i <= 3; i++) {
      const [m] = q.receive('run', 1, 100);
      assert.equal(m?.receiveCount, i);
      now += 100;
    }
    assert.deepEqual(q.receive('run', 1, 100), [], 'the 4th receive dead-letters it instead');
    assert.deepEqual(q.depth('run'), { visible: 0, inFlight: 0, dead: 1 });
    const [dead] = q.receiveDead('run', 10, 1000);
    assert.equal(dead?.body, 'poison');
    assert.equal(dead?.receiveCount, 3);
    assert.equal(q.delete(dead!.receipt), true);
    assert.deepEqual(q.depth('run'), { visible: 0, inFlight: 0, dead: 0 });
  });

  it('keeps queues apart and delivers oldest first', async () => {
    await q.send('run', '1');
    now += 1;
    await q.send('generate', 'g');
    now += 1;
    await q.send('run', '2');
    assert.deepEqual(q.receive('run', 10, 1000).map((m) => m.body), ['1', '2']);
    assert.deepEqual(q.receive('generate', 10, 1000).map((m) => m.body), ['g']);
  });

  it('is durable: messages survive reopening the file, and releaseInFlight frees held ones', async () => {
    await q.send('run', 'kept');
    q.receive('run', 1, 3_600_000);
    q.close();
    const reopened = new LocalQueue(new SqliteStore(file).db, { maxReceives: 3, now: () => now });
    assert.deepEqual(reopened.receive('run', 1, 1000), [], 'still in flight');
    assert.equal(reopened.releaseInFlight(), 1);
    const [m] = reopened.receive('run', 1, 1000);
    assert.equal(m?.body, 'kept');
    assert.equal(m?.receiveCount, 2);
    assert.deepEqual(reopened.allBodies('run'), ['kept']);
  });
});
