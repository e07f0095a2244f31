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
 *
 * Fair scheduling across accounts (docs/plans-and-metering.md, "Fair scheduling"): a message may carry a
 * group (its account). A receive serves the group served least recently among those with a visible message
 * (round-robin when all have work), oldest message first within a group, and never hands out a message of a
 * group that already has its limit of messages in flight (held by a consumer, across both queues): one
 * account's backlog waits behind its own running jobs, not in front of another account's job. Like an SQS
 * fair queue, a message without a group is a group of its own.
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { statementCache } from './statements.ts';
import { BroadcastChannel } from 'node:worker_threads';
import type { JobQueue, QueueMessage, QueueName, SendOptions } from '../../core/ports.ts';
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
  dead INTEGER NOT NULL DEFAULT 0,
  grp TEXT
);
CREATE INDEX IF NOT EXISTS queue_ready ON queue_messages (queue, dead, visible_at);
CREATE TABLE IF NOT EXISTS queue_groups (
  grp TEXT PRIMARY KEY,
  served INTEGER NOT NULL
);
`;

/** Columns added after the first version of the table (files made before them get them on open). */
function migrate(db: DatabaseSync): void {
  const has = (db.prepare('PRAGMA table_info(queue_messages)').all() as Array<{ name: string }>).some((c) => c.name === 'grp');
  if (!has) db.exec('ALTER TABLE queue_messages ADD COLUMN grp TEXT');
}

/** Limit of a group's messages in flight at once, for {@link LocalQueue.receive}. */
export type GroupLimit = (group: string) => number;

/**
 * Whether a consumer takes a message now, by its body (a webhook's own limit inside its account's group): a message
 * it does not take stays where it is, and the next of its group is looked at.
 */
export type MessageFilter = (body: string) => boolean;

/** Messages of one group looked at per receive when a {@link MessageFilter} passes some over. */
const FILTER_LOOKAHEAD = 64;

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
    immediate(db, () => {
      db.exec(SCHEMA);
      migrate(db);
    });
    this.q = statementCache(db);
  }

  /** Tells idle consumers in every thread to look again (a message was sent, or a group's slot came free). */
  private wake(queue: QueueName | 'any'): void {
    this.channel ??= new BroadcastChannel(QUEUE_CHANNEL);
    this.channel.unref();
    this.channel.postMessage(queue);
  }

  /**
   * Messages of these queues that a receive could hand out now (SQS's ApproximateNumberOfMessagesVisible): not dead,
   * visible. A group at its limit is counted too (the pool of job workers starts threads from this count).
   */
  visibleCount(queues: readonly QueueName[]): number {
    let n = 0;
    for (const queue of queues) n += Number((this.q('SELECT COUNT(*) AS n FROM queue_messages WHERE queue = ? AND dead = 0 AND visible_at <= ?').get(queue, this.now()) as { n: number }).n);
    return n;
  }

  /** SendMessage (with a group, see the file's comment; and a delay). Wakes idle consumers in every thread. */
  async send(queue: QueueName, body: string, options: SendOptions = {}): Promise<void> {
    const t = this.now();
    const visible = t + Math.max(0, options.delaySeconds ?? 0) * 1000;
    this.q('INSERT INTO queue_messages (id, queue, body, sent_at, visible_at, grp) VALUES (?, ?, ?, ?, ?, ?)').run(randomUUID(), queue, body, t, visible, options.group ?? null);
    this.wake(queue);
  }

  /**
   * ReceiveMessage: up to `max` visible messages, hidden for `visibilityMs`, taken group by group (the group
   * served least recently first; see the file's comment). Messages already received `maxReceives` times move
   * to the dead-letter queue instead of being delivered.
   * @param limitOf the most messages of a group in flight at once (both queues together); none: no limit.
   * @param accept takes a message by its body (the first {@link FILTER_LOOKAHEAD} of a group are looked at); none: all.
   */
  receive(queue: QueueName, max: number, visibilityMs: number, limitOf?: GroupLimit, accept?: MessageFilter): QueueMessage[] {
    const limits = new Map<string, number>();
    const limit = (g: string) => {
      let n = limits.get(g);
      if (n === undefined) limits.set(g, n = limitOf ? limitOf(g) : Infinity);
      return n;
    };
    // Reads first, without a lock: an idle consumer's poll (every second, and at every send and delete) that finds
    // nothing to take, or nothing to dead-letter, takes no write lock, so that it never makes the thread that
    // answers HTTP wait for the database.
    const now = this.now();
    const toBury = this.q('SELECT 1 FROM queue_messages WHERE queue = ? AND dead = 0 AND visible_at <= ? AND receive_count >= ? LIMIT 1')
      .get(queue, now, this.maxReceives);
    if (!toBury && !this.next(queue, now, limit, accept)) return [];
    return immediate(this.db, () => {
      const t = this.now();
      this.q('UPDATE queue_messages SET dead = 1, receipt = NULL WHERE queue = ? AND dead = 0 AND visible_at <= ? AND receive_count >= ?')
        .run(queue, t, this.maxReceives);
      const out: QueueMessage[] = [];
      while (out.length < max) {
        const id = this.next(queue, t, limit, accept);
        if (!id) break;
        const receipt = randomUUID();
        const r = this.q(`UPDATE queue_messages SET receive_count = receive_count + 1, visible_at = ?, receipt = ?
          WHERE id = ? RETURNING body, receive_count, grp`).get(t + visibilityMs, receipt, id) as { body: string; receive_count: number; grp: string | null };
        if (r.grp !== null) {
          this.q(`INSERT INTO queue_groups (grp, served) VALUES (?, (SELECT COALESCE(MAX(served), 0) + 1 FROM queue_groups))
            ON CONFLICT (grp) DO UPDATE SET served = excluded.served`).run(r.grp);
        }
        out.push({ id, body: r.body, receiveCount: Number(r.receive_count), receipt });
      }
      return out;
    });
  }

  /** The next message to hand out at time `t` (inside receive's transaction), or null. */
  private next(queue: QueueName, t: number, limit: GroupLimit, accept?: MessageFilter): string | null {
    // A message without a group is a group of its own that has never been served.
    const loose = accept
      ? (this.q('SELECT id, body FROM queue_messages WHERE queue = ? AND dead = 0 AND visible_at <= ? AND grp IS NULL ORDER BY visible_at, sent_at LIMIT ?')
        .all(queue, t, FILTER_LOOKAHEAD) as Array<{ id: string; body: string }>).find((c) => accept(c.body))
      : this.q('SELECT id FROM queue_messages WHERE queue = ? AND dead = 0 AND visible_at <= ? AND grp IS NULL ORDER BY visible_at, sent_at LIMIT 1')
        .get(queue, t) as { id: string } | undefined;
    if (loose) return loose.id;
    const waiting = this.q(`SELECT m.grp AS grp FROM queue_messages m LEFT JOIN queue_groups g ON g.grp = m.grp
        WHERE m.queue = ? AND m.dead = 0 AND m.visible_at <= ? AND m.grp IS NOT NULL
        GROUP BY m.grp ORDER BY MAX(g.served IS NOT NULL), MAX(g.served), MIN(m.visible_at), MIN(m.sent_at)`).all(queue, t) as Array<{ grp: string }>;
    if (!waiting.length) return null;
    // Held by a consumer now (a receipt, and hidden), in either queue: released, retried and deferred messages hold none.
    const held = new Map((this.q(`SELECT grp, COUNT(*) AS n FROM queue_messages
        WHERE dead = 0 AND receipt IS NOT NULL AND visible_at > ? AND grp IS NOT NULL GROUP BY grp`).all(t) as Array<{ grp: string; n: number }>)
      .map((r) => [r.grp, Number(r.n)]));
    for (const { grp } of waiting) {
      if ((held.get(grp) ?? 0) >= limit(grp)) continue;
      if (!accept) {
        const m = this.q('SELECT id FROM queue_messages WHERE queue = ? AND dead = 0 AND visible_at <= ? AND grp = ? ORDER BY visible_at, sent_at LIMIT 1')
          .get(queue, t, grp) as { id: string } | undefined;
        if (m) return m.id;
        continue;
      }
      const candidates = this.q('SELECT id, body FROM queue_messages WHERE queue = ? AND dead = 0 AND visible_at <= ? AND grp = ? ORDER BY visible_at, sent_at LIMIT ?')
        .all(queue, t, grp, FILTER_LOOKAHEAD) as Array<{ id: string; body: string }>;
      const m = candidates.find((c) => accept(c.body));
      if (m) return m.id;
    }
    return null;
  }

  /** DeleteMessage with the receipt of the current delivery; wakes idle consumers (its group has room again). @returns false for a stale receipt. */
  delete(receipt: string): boolean {
    const deleted = Number(this.q('DELETE FROM queue_messages WHERE receipt = ?').run(receipt).changes) > 0;
    if (deleted) this.wake('any');
    return deleted;
  }

  /**
   * A failed delivery is retried after `delayMs`: the consumer lets go of it (its receipt ends, so it no longer
   * counts against its group's limit while it waits); its receive count stays spent.
   * @returns false for a stale receipt.
   */
  retryLater(receipt: string, delayMs: number): boolean {
    const changed = Number(this.q('UPDATE queue_messages SET visible_at = ?, receipt = NULL WHERE receipt = ?').run(this.now() + delayMs, receipt).changes) > 0;
    if (changed) this.wake('any');
    return changed;
  }

  /**
   * {@link JobQueue.deferDelivery}: the delivery is given back to be received after `seconds` without using
   * up a delivery (its receive count as before the receive); its receipt ends.
   */
  async deferDelivery(_queue: QueueName, receipt: string, seconds: number): Promise<void> {
    this.q('UPDATE queue_messages SET visible_at = ?, receive_count = MAX(0, receive_count - 1), receipt = NULL WHERE receipt = ?')
      .run(this.now() + Math.max(0, seconds) * 1000, receipt);
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

  /**
   * Gives back every message a consumer holds now (a receipt, still hidden), as {@link release} does: for a clean
   * stop of the service, after its workers have ended, so that a message whose holding a worker had not yet
   * reported is not counted as a failed delivery either. Only the process that owns DATA_DIR calls this.
   * @returns how many messages were given back.
   */
  releaseHeld(): number {
    const t = this.now();
    return Number(this.q('UPDATE queue_messages SET visible_at = ?, receive_count = MAX(0, receive_count - 1), receipt = NULL WHERE dead = 0 AND receipt IS NOT NULL AND visible_at > ?')
      .run(t, t).changes);
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
