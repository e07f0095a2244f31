/**
 * Services for unit tests of the domain: a real SQLite store (in memory unless a file is given), a
 * clock the test moves, stand-ins for the queue and blob store, the built-in plans.
 */
import { KeySealer } from '../../lambdas/core/crypto.ts';
import { loadPlans, type Billing } from '../../lambdas/core/plans.ts';
import type { Services } from '../../lambdas/core/services.ts';
import { DEFAULT_THROTTLES } from '../../lambdas/core/throttles.ts';
import { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';

/** Unit-test services and the handles a test needs. */
export interface TestServices {
  svc: Services & { store: SqliteStore };
  /** Moves the clock to an ISO instant. */
  setNow(iso: string): void;
  /** Moves the clock by `ms`. */
  advance(ms: number): void;
}

/**
 * @param opts.file SQLite file (default `:memory:`); opts.now the clock's start (ISO); opts.secret the
 *   key-sealing secret; opts.overrides any service to replace.
 */
export function testServices(opts: { file?: string; billing?: Billing; now?: string; secret?: string; overrides?: Partial<Services> } = {}): TestServices {
  let now = new Date(opts.now ?? '2026-11-22T14:00:00.000Z');
  const sealer = new KeySealer(opts.secret ?? 'test secret one');
  const svc = {
    store: new SqliteStore(opts.file ?? ':memory:'),
    queue: { send: async () => {} },
    blobs: { put: async () => {}, get: async () => null, delete: async () => {} },
    clock: { now: () => now },
    sealer: async () => sealer,
    plans: loadPlans(opts.billing ?? 'credits'),
    guard: new OutboundGuard(),
    usageKeys: null,
    maxReceives: 3,
    jobTimeoutMs: 1000,
    maxPagesPerJob: 10,
    jobConcurrency: 1,
    throttles: DEFAULT_THROTTLES,
    ...opts.overrides,
  } as Services & { store: SqliteStore };
  return {
    svc,
    setNow: (iso) => { now = new Date(iso); },
    advance: (ms) => { now = new Date(now.getTime() + ms); },
  };
}
