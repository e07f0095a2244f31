/**
 * The local queue keeps the SQS semantics the workers rely on: at-least-once, visibility, receive counts, dead
 * letters; and it interleaves accounts (message groups): least recently served first, none past its limit.
 */
import { describe, it, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';
import { LocalQueue } from '../../lambdas/adapters/local/queue.ts';
import { DatabaseSync } from 'node:sqlite';

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

  it('releaseHeld gives back every message held now, untouched, and leaves lost, waiting and dead ones alone', async () => {
    await q.send('run', 'held');
    await q.send('generate', 'held too');
    await q.send('run', 'lost');
    await q.send('run', 'waiting');
    const [held] = q.receive('run', 1, 60_000);
    const [heldToo] = q.receive('generate', 1, 60_000);
    const [lost] = q.receive('run', 1, 1_000);
    now += 2_000; // the visibility of `lost` ran out: its consumer is gone, the delivery counts
    assert.deepEqual([held!.body, heldToo!.body, lost!.body], ['held', 'held too', 'lost']);
    assert.equal(q.releaseHeld(), 2);
    assert.equal(q.releaseHeld(), 0, 'nothing held any more');
    const again = [...q.receive('run', 3, 60_000), ...q.receive('generate', 1, 60_000)];
    assert.deepEqual(Object.fromEntries(again.map((m) => [m.body, m.receiveCount])), { held: 1, 'held too': 1, lost: 2, waiting: 1 });
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

  /** Sends `body` on `queue` in group `group`, one ms after the previous send. */
  async function put(body: string, group?: string, queue: 'run' | 'generate' = 'run') {
    now += 1;
    await q.send(queue, body, group ? { group } : {});
  }

  it('interleaves groups: the least recently served group first, oldest message first within a group', async () => {
    for (const b of ['a1', 'a2', 'a3', 'a4']) await put(b, 'A');
    await put('b1', 'B');
    await put('c1', 'C');
    await put('b2', 'B');
    now += 1;
    const order: string[] = [];
    for (let m = q.receive('run', 1, 60_000); m.length; m = q.receive('run', 1, 60_000)) order.push(m[0]!.body);
    assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4'], 'round-robin over A, B, C while each has work');
  });

  it('one receive of several messages takes them in the same turn order', async () => {
    for (const b of ['a1', 'a2', 'a3']) await put(b, 'A');
    await put('b1', 'B');
    now += 1;
    assert.deepEqual(q.receive('run', 10, 60_000).map((m) => m.body), ['a1', 'b1', 'a2', 'a3']);
  });

  it('serves a group that waited before one served a moment ago, whatever the send order', async () => {
    await put('a1', 'A');
    now += 1;
    const [a1] = q.receive('run', 1, 60_000);
    q.delete(a1!.receipt);
    await put('a2', 'A');
    await put('b1', 'B');
    now += 1;
    assert.deepEqual(q.receive('run', 2, 60_000).map((m) => m.body), ['b1', 'a2'], 'B was never served, A just was');
  });

  it("never hands out a message of a group at its limit while another group's message waits", async () => {
    const limits: Record<string, number> = { A: 1, B: 2 };
    const limitOf = (g: string) => limits[g] ?? 1;
    for (const b of ['a1', 'a2', 'a3']) await put(b, 'A');
    await put('b1', 'B');
    now += 1;
    const [first] = q.receive('run', 1, 60_000, limitOf);
    assert.equal(first?.body, 'a1');
    assert.deepEqual(q.receive('run', 5, 60_000, limitOf).map((m) => m.body), ['b1'], 'A holds its one slot: only B is served');
    assert.deepEqual(q.receive('run', 5, 60_000, limitOf), [], 'A at its limit, B has nothing left: nothing to hand out');
    assert.equal(q.depth('run').visible, 2, "A's messages wait");
    assert.equal(q.delete(first!.receipt), true);
    const [second] = q.receive('run', 5, 60_000, limitOf);
    assert.equal(second?.body, 'a2', 'a slot came free: the next message of A');
    // A failed delivery waiting for its retry holds no slot; its receive count stays spent.
    assert.equal(q.retryLater(second!.receipt, 5_000), true);
    const [third] = q.receive('run', 5, 60_000, limitOf);
    assert.equal(third?.body, 'a3');
    now += 5_000;
    assert.deepEqual(q.receive('run', 5, 60_000, limitOf), [], 'a2 is visible again but A holds a3');
    q.delete(third!.receipt);
    const [again] = q.receive('run', 5, 60_000, limitOf);
    assert.equal(again?.body, 'a2');
    assert.equal(again?.receiveCount, 2);
  });

  it('a filter passes over messages a consumer does not take now (a webhook at its limit inside its account): they keep their place', async () => {
    for (const b of ['w1-a', 'w1-b', 'w1-c', 'w2-a']) await put(b, 'A');
    await put('w3-a', 'B');
    now += 1;
    const taken = new Map<string, number>();
    const accept = (body: string) => (taken.get(body.slice(0, 2)) ?? 0) < 1;
    const got: string[] = [];
    for (;;) {
      const [m] = q.receive('run', 1, 60_000, () => 10, accept);
      if (!m) break;
      got.push(m.body);
      taken.set(m.body.slice(0, 2), (taken.get(m.body.slice(0, 2)) ?? 0) + 1);
    }
    assert.deepEqual(got, ['w1-a', 'w3-a', 'w2-a'], 'one of each webhook, the accounts in turn');
    assert.equal(q.depth('run').visible, 2, "w1's other messages wait, in order");
    taken.clear();
    assert.deepEqual(q.receive('run', 5, 60_000, () => 10, () => true).map((m) => m.body), ['w1-b', 'w1-c']);
  });

  it("a group's limit counts its messages in flight on both queues", async () => {
    await put('run-a', 'A', 'run');
    await put('gen-a', 'A', 'generate');
    await put('gen-b', 'B', 'generate');
    now += 1;
    const limitOf = () => 1;
    assert.equal(q.receive('run', 1, 60_000, limitOf)[0]?.body, 'run-a');
    assert.deepEqual(q.receive('generate', 5, 60_000, limitOf).map((m) => m.body), ['gen-b']);
  });

  it('a message whose consumer died (its visibility ran out) no longer counts against its group', async () => {
    await put('a1', 'A');
    await put('a2', 'A');
    now += 1;
    const limitOf = () => 1;
    const [m1] = q.receive('run', 1, 1000, limitOf);
    assert.deepEqual(q.receive('run', 1, 1000, limitOf), []);
    now += 1000;
    const [m2] = q.receive('run', 1, 1000, limitOf);
    assert.ok(m2, 'the group is served again');
    assert.equal(q.delete(m1!.receipt), m2.body !== 'a1', "once a1 is delivered again, the dead consumer's receipt is stale");
  });

  it('deferDelivery gives a message back for later without using up a delivery; its receipt ends', async () => {
    await put('a1', 'A');
    now += 1;
    for (let i = 0; i < 5; i++) {
      const [m] = q.receive('run', 1, 60_000, () => 1);
      assert.equal(m?.receiveCount, 1, `deferral ${i + 1} spent no delivery`);
      await q.deferDelivery('run', m!.receipt, 10);
      assert.deepEqual(q.receive('run', 1, 60_000, () => 1), [], 'hidden for the delay');
      assert.equal(q.delete(m!.receipt), false, 'the receipt of a deferred delivery is stale');
      now += 10_000;
    }
    assert.deepEqual(q.depth('run'), { visible: 1, inFlight: 0, dead: 0 });
  });

  it('serves messages without a group (sent before groups existed) too, each as a group of its own', async () => {
    await put('a1', 'A');
    await put('loose');
    now += 1;
    assert.deepEqual(q.receive('run', 5, 60_000, () => 1).map((m) => m.body).sort(), ['a1', 'loose']);
  });

  it('sends with a delay: the message is hidden until then', async () => {
    await q.send('run', 'later', { group: 'A', delaySeconds: 3 });
    assert.deepEqual(q.receive('run', 1, 1000), []);
    now += 3000;
    assert.equal(q.receive('run', 1, 1000)[0]?.body, 'later');
  });

  it('opens a queue file made before groups: its messages are kept and served', async () => {
    const old = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-queue-old-')), 'q.db');
    const db = new DatabaseSync(old);
    db.exec(`CREATE TABLE queue_messages (id TEXT PRIMARY KEY, queue TEXT NOT NULL, body TEXT NOT NULL, sent_at INTEGER NOT NULL,
      visible_at INTEGER NOT NULL, receive_count INTEGER NOT NULL DEFAULT 0, receipt TEXT, dead INTEGER NOT NULL DEFAULT 0);
      INSERT INTO queue_messages (id, queue, body, sent_at, visible_at) VALUES ('m1', 'run', 'from before', 1, 1);`);
    db.close();
    const reopened = new LocalQueue(new SqliteStore(old).db, { now: () => now });
    await reopened.send('run', 'grouped', { group: 'A' });
    assert.deepEqual(reopened.receive('run', 5, 1000, () => 1).map((m) => m.body), ['from before', 'grouped']);
  });
});
