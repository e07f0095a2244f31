/**
 * A durable queue with SQS semantics on SQLite, for the one-process service.
 *
 * What it keeps of SQS (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/):
 * - at-least-once delivery: a received message stays stored and becomes visible again after its
 *   visibility timeout unless it is deleted with the receipt handle of that delivery;
 * - a receive count per message; a message received `maxReceives` times and not deleted moves to the
 *   dead-letter queue on its next receive (SQS redrive policy, maxReceiveCount);
 * - ChangeMessageVisibility with the current receipt handle; a stale handle does nothing.
 * It is durable (WAL SQLite, same file as the store) and shared by the threads of the process: each
 * opens its own connection. Senders post on a BroadcastChannel so idle consumers wake at once.
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { statementCache } from './statements.ts';
import { BroadcastChannel } from 'node:worker_threads';
import type { JobQueue, QueueMessage, QueueName } from '../../core/ports.ts';
import { immediate } from './sqlite-store.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS queue_messages (
  id TEXT PRIMARY KEY,
  queue TEXT NOT NULL,
  body TEXT NOT NULL,
  sent_at INTEGER NOT NULL,
  visible_at INTEGER NOT NULL,
  receive_count INTEGER NOT NULL DEFAULT 0,
  receipt TEXT,
  dead INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS queue_ready ON queue_messages (queue, dead, visible_at);
`;

/** Name of the BroadcastChannel that announces new messages to consumers in other threads. */
export const QUEUE_CHANNEL = 'scrape-ai-local-queue';

export interface LocalQueueOptions {
  /** Receives before a message goes to the dead-letter queue (maxReceiveCount). @default 3 */
  maxReceives?: number;
  /** Time source in ms, injectable for tests. */
  now?: () => number;
}

/**
 * {@link JobQueue} plus the consumer operations of SQS, on a SQLite connection.
 *
 * **Example usage:**
 * ```ts
 * const q = new LocalQueue(db);
 * await q.send('run', '{"job_id":"…"}');
 * const [m] = q.receive('run', 1, 60_000);
 * // … work …
 * q.delete(m.receipt);
 * ```
 */
export class LocalQueue implements JobQueue {
  private readonly db: DatabaseSync;
  private readonly maxReceives: number;
  private readonly now: () => number;
  private readonly q: (sql: string) => StatementSync;
  private channel: BroadcastChannel | null = null;

  constructor(db: DatabaseSync, options: LocalQueueOptions = {}) {
    this.db = db;
    this.maxReceives = options.maxReceives ?? 3;
    this.now = options.now ?? Date.now;
    db.exec(SCHEMA);
    this.q = statementCache(db);
  }

  /** SendMessage. Wakes idle consumers in every thread. */
  async send(queue: QueueName, body: string): Promise<void> {
    const t = this.now();
    this.q('INSERT INTO queue_messages (id, queue, body, sent_at, visible_at) VALUES (?, ?, ?, ?, ?)').run(randomUUID(), queue, body, t, t);
    this.channel ??= new BroadcastChannel(QUEUE_CHANNEL);
    this.channel.unref();
    this.channel.postMessage(queue);
  }

  /**
   * ReceiveMessage: up to `max` visible messages, hidden for `visibilityMs`. Messages already received
   * `maxReceives` times move to the dead-letter queue instead of being delivered.
   */
  receive(queue: QueueName, max: number, visibilityMs: number): QueueMessage[] {
    return immediate(this.db, () => {
      const t = this.now();
      this.q('UPDATE queue_messages SET dead = 1, receipt = NULL WHERE queue = ? AND dead = 0 AND visible_at <= ? AND receive_count >= ?')
        .run(queue, t, this.maxReceives);
      const rows = this.q('SELECT id FROM queue_messages WHERE queue = ? AND dead = 0 AND visible_at <= ? ORDER BY visible_at, sent_at LIMIT ?')
        .all(queue, t, max) as Array<{ id: string }>;
      const out: QueueMessage[] = [];
      for (const { id } of rows) {
        const receipt = randomUUID();
        const r = this.q(`UPDATE queue_messages SET receive_count = receive_count + 1, visible_at = ?, receipt = ?
          WHERE id = ? RETURNING body, receive_count`).get(t + visibilityMs, receipt, id) as { body: string; receive_count: number };
        out.push({ id, body: r.body, receiveCount: Number(r.receive_count), receipt });
      }
      return out;
    });
  }

  /** DeleteMessage with the receipt of the current delivery. @returns false for a stale receipt. */
  delete(receipt: string): boolean {
    return Number(this.q('DELETE FROM queue_messages WHERE receipt = ?').run(receipt).changes) > 0;
  }

  /** ChangeMessageVisibility: visible again after `visibilityMs` (0: at once). @returns false for a stale receipt. */
  changeVisibility(receipt: string, visibilityMs: number): boolean {
    return Number(this.q('UPDATE queue_messages SET visible_at = ? WHERE receipt = ?').run(this.now() + visibilityMs, receipt).changes) > 0;
  }

  /**
   * Gives a message back without using up a delivery: visible at once, its receive count as before
   * the receive. For a clean stop of the service, which is no failure of the job.
   */
  release(receipt: string): boolean {
    return Number(this.q('UPDATE queue_messages SET visible_at = ?, receive_count = MAX(0, receive_count - 1), receipt = NULL WHERE receipt = ?')
      .run(this.now(), receipt).changes) > 0;
  }

  /** Messages of the dead-letter queue of `queue`, oldest first, received as from a normal queue. */
  receiveDead(queue: QueueName, max: number, visibilityMs: number): QueueMessage[] {
    return immediate(this.db, () => {
      const t = this.now();
      const rows = this.q(`SELECT id, body, receive_count FROM queue_messages WHERE queue = ? AND dead = 1 AND visible_at <= ? ORDER BY sent_at LIMIT ?`)
        .all(queue, t, max) as Array<{ id: string; body: string; receive_count: number }>;
      return rows.map((r) => {
        const receipt = randomUUID();
        this.q('UPDATE queue_messages SET visible_at = ?, receipt = ? WHERE id = ?').run(t + visibilityMs, receipt, r.id);
        return { id: r.id, body: r.body, receiveCount: Number(r.receive_count), receipt };
      });
    });
  }

  /**
   * After a crash of the process that held the messages: every in-flight message is visible again at
   * once (rather than after its visibility timeout). Only the process that owns DATA_DIR calls this.
   * @returns how many messages were released.
   */
  releaseInFlight(): number {
    return Number(this.q('UPDATE queue_messages SET visible_at = ? WHERE dead = 0 AND visible_at > ?').run(this.now(), this.now()).changes);
  }

  /**
   * Bodies of every message of a queue, dead-lettered ones included: the recovery sweep uses them to find
   * jobs with no message (a dead-lettered job is about to be failed, not to be queued again).
   */
  allBodies(queue: QueueName): string[] {
    return (this.q('SELECT body FROM queue_messages WHERE queue = ?').all(queue) as Array<{ body: string }>).map((r) => r.body);
  }

  /** Message counts by state, for tests and the health endpoint. */
  depth(queue: QueueName): { visible: number; inFlight: number; dead: number } {
    const t = this.now();
    const r = this.q(`SELECT
        SUM(CASE WHEN dead = 0 AND visible_at <= ? THEN 1 ELSE 0 END) AS visible,
        SUM(CASE WHEN dead = 0 AND visible_at > ? THEN 1 ELSE 0 END) AS in_flight,
        SUM(dead) AS dead
      FROM queue_messages WHERE queue = ?`).get(t, t, queue) as { visible: number | null; in_flight: number | null; dead: number | null };
    return { visible: Number(r.visible ?? 0), inFlight: Number(r.in_flight ?? 0), dead: Number(r.dead ?? 0) };
  }

  close(): void {
    this.channel?.close();
    this.channel = null;
  }
}
