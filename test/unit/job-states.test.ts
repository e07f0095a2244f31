/**
 * The job state machine (lambdas/core/job-states.ts) on the SQLite store: every named transition tried
 * from every state, for both job types, by every actor. The expected moves and actors are written out
 * here from docs/spec.md ("States and transitions") and docs/architecture.md ("The path of a run"), not read
 * from the table under test.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { transitionJob, type JobActor, type JobTransition } from '../../lambdas/core/job-states.ts';
import type { Clock, JobRecord, JobStatus, JobType } from '../../lambdas/core/ports.ts';
import { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';

const STATES: JobStatus[] = ['pending', 'analyzing', 'generating', 'validating', 'running', 'completed', 'failed'];
const ACTORS: JobActor[] = ['api', 'run_worker', 'generate_worker', 'dead_letter_consumer', 'watchdog', 'recovery'];
const NOW = '2030-01-02T03:04:05.000Z';
const clock: Clock = { now: () => new Date(NOW) };

/** Allowed moves `from->to` per job type and transition; a missing entry: the job type cannot make it. */
const EXPECTED_MOVES: Record<JobType, Partial<Record<JobTransition, string[]>>> = {
  run: {
    start: ['pending->running', 'running->running'],
    progress: ['running->running'],
    complete: ['running->completed'],
    fail: ['pending->failed', 'running->failed'],
    retry: ['running->running'],
    recover: ['pending->pending', 'running->running'],
    queue_failed: ['pending->failed'],
    dead_letter: ['pending->failed', 'running->failed'],
    watchdog_timeout: ['pending->failed', 'running->failed'],
  },
  generate: {
    start: ['pending->analyzing', 'analyzing->analyzing', 'generating->analyzing', 'validating->analyzing'],
    progress: ['analyzing->analyzing', 'generating->generating', 'validating->validating'],
    advance: ['analyzing->generating', 'generating->validating'],
    complete: ['validating->completed'],
    fail: ['pending->failed', 'analyzing->failed', 'generating->failed', 'validating->failed'],
    retry: ['analyzing->analyzing', 'generating->generating', 'validating->validating'],
    recover: ['pending->pending', 'analyzing->analyzing', 'generating->generating', 'validating->validating'],
    queue_failed: ['pending->failed'],
    dead_letter: ['pending->failed', 'analyzing->failed', 'generating->failed', 'validating->failed'],
    watchdog_timeout: ['pending->failed', 'analyzing->failed', 'generating->failed', 'validating->failed'],
  },
};

/** Who may make each transition. */
const EXPECTED_ACTORS: Record<JobTransition, JobActor[]> = {
  start: ['run_worker', 'generate_worker'],
  progress: ['run_worker', 'generate_worker'],
  advance: ['generate_worker'],
  complete: ['run_worker', 'generate_worker'],
  fail: ['run_worker', 'generate_worker'],
  retry: ['run_worker', 'generate_worker'],
  recover: ['recovery'],
  queue_failed: ['api'],
  dead_letter: ['dead_letter_consumer'],
  watchdog_timeout: ['watchdog'],
};
const TRANSITIONS = Object.keys(EXPECTED_ACTORS) as JobTransition[];

function job(type: JobType, status: JobStatus, attempts = 0): JobRecord {
  return {
    id: randomUUID(), account_id: 1, job_type: type, status, progress: 30, status_message: 'before', items_found: 0, pages_scraped: 0,
    api_discovered: false, target_url: 'https://example.com/', config_id: null, yaml_content: 'x', created_at: '2030-01-01T00:00:00.000Z',
    updated_at: '2030-01-01T00:00:00.000Z', started_at: null, completed_at: null, attempts, row_count: 0, results_key: null, prompt: null,
  };
}

describe('job state machine', () => {
  let store: SqliteStore;
  let svc: { store: SqliteStore; clock: Clock };
  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    svc = { store, clock };
    const a = await store.createAccount({ email: 'a@example.com', first_name: '', last_name: '', plan: 'pro', password_hash: 'x', api_key_digest: null, api_key_sealed: null });
    assert.equal(a.id, 1);
  });
  afterEach(() => store.close());

  async function stored(type: JobType, status: JobStatus): Promise<JobRecord> {
    const j = job(type, status);
    await store.createJob(j);
    return j;
  }

  for (const type of ['run', 'generate'] as const) {
    for (const transition of TRANSITIONS) {
      const expected = EXPECTED_MOVES[type][transition];
      const by = EXPECTED_ACTORS[transition][0]!;
      if (!expected) {
        it(`${type}: ${transition} does not apply (a programming error)`, async () => {
          const j = await stored(type, 'pending');
          await assert.rejects(transitionJob(svc, j, transition, {}, { by }), /does not apply to/);
          assert.equal((await store.getJobById(j.id))!.status_message, 'before');
        });
        continue;
      }
      it(`${type}: ${transition} moves ${expected.join(', ')} and refuses every other state`, async () => {
        const seen: string[] = [];
        const targets = transition === 'advance' ? ['generating', 'validating'] as const : [undefined];
        for (const from of STATES) {
          for (const target of targets) {
            const j = await stored(type, from);
            const r = await transitionJob(svc, j, transition, { status_message: 'after', ...(target ? { status: target } : {}) }, { by });
            const after = (await store.getJobById(j.id))!;
            if (r) {
              seen.push(`${from}->${r.status}`);
              assert.deepEqual(after, r);
              assert.equal(after.status_message, 'after');
            } else {
              assert.equal(after.status, from, 'a refused transition changes nothing');
              assert.equal(after.status_message, 'before');
            }
          }
        }
        assert.deepEqual(seen.sort(), [...expected].sort());
      });
    }
  }

  for (const transition of TRANSITIONS) {
    it(`${transition} may be made by ${EXPECTED_ACTORS[transition].join(', ')} only`, async () => {
      const type: JobType = EXPECTED_MOVES.run[transition] ? 'run' : 'generate';
      const from = EXPECTED_MOVES[type][transition]![0]!.split('->')[0] as JobStatus;
      const target = transition === 'advance' ? { status: 'generating' as const } : {};
      const allowed: JobActor[] = [];
      for (const by of ACTORS) {
        const j = await stored(type, from);
        try {
          assert.ok(await transitionJob(svc, j, transition, { status_message: 'after', ...target }, { by }));
          allowed.push(by);
        } catch (err) {
          assert.match((err as Error).message, new RegExp(`not by ${by}`));
          assert.equal((await store.getJobById(j.id))!.status_message, 'before', 'a refused actor writes nothing');
        }
      }
      assert.deepEqual(allowed, EXPECTED_ACTORS[transition]);
    });
  }

  it('start counts an attempt and sets started_at from the clock port once; a redelivery keeps the first started_at', async () => {
    const j = await stored('run', 'pending');
    const first = await transitionJob(svc, j, 'start', {}, { by: 'run_worker' });
    assert.equal(first!.attempts, 1);
    assert.equal(first!.started_at, NOW);
    const later = { store, clock: { now: () => new Date('2031-01-01T00:00:00.000Z') } };
    const again = await transitionJob(later, j, 'start', {}, { by: 'run_worker' });
    assert.equal(again!.attempts, 2);
    assert.equal(again!.started_at, NOW);
    assert.equal(again!.completed_at, null);
  });

  it('finishing transitions set completed_at from the clock port; the others leave it unset', async () => {
    for (const [transition, from] of [['complete', 'running'], ['fail', 'running'], ['queue_failed', 'pending'], ['dead_letter', 'running'], ['watchdog_timeout', 'running']] as const) {
      const j = await stored('run', from);
      const r = await transitionJob(svc, j, transition, {}, { by: EXPECTED_ACTORS[transition][0]! });
      assert.equal(r!.completed_at, NOW, transition);
    }
    for (const [transition, from] of [['progress', 'running'], ['retry', 'running'], ['recover', 'pending']] as const) {
      const j = await stored('run', from);
      const r = await transitionJob(svc, j, transition, {}, { by: EXPECTED_ACTORS[transition][0]! });
      assert.equal(r!.completed_at, null, transition);
    }
  });

  it('a write of a stale attempt changes nothing; progress never goes down', async () => {
    const j = await stored('run', 'pending');
    await transitionJob(svc, j, 'start', {}, { by: 'run_worker' });
    const second = await transitionJob(svc, j, 'start', {}, { by: 'run_worker' });
    assert.equal(second!.attempts, 2);
    assert.equal(await transitionJob(svc, j, 'progress', { progress: 90 }, { by: 'run_worker', attempt: 1 }), null);
    assert.equal(await transitionJob(svc, j, 'complete', { progress: 100 }, { by: 'run_worker', attempt: 1 }), null);
    assert.equal((await transitionJob(svc, j, 'progress', { progress: 60 }, { by: 'run_worker', attempt: 2 }))!.progress, 60);
    const lower = await transitionJob(svc, j, 'progress', { progress: 40, items_found: 7 }, { by: 'run_worker', attempt: 2 });
    assert.equal(lower!.progress, 60);
    assert.equal(lower!.items_found, 7, 'the rest of the write applies');
  });

  it('advance needs the step to go to; other transitions take no other status than their own', async () => {
    const g = await stored('generate', 'pending');
    await assert.rejects(transitionJob(svc, g, 'advance', {}, { by: 'generate_worker' }), /needs status/);
    await assert.rejects(transitionJob(svc, g, 'advance', { status: 'completed' }, { by: 'generate_worker' }), /needs status/);
    const r = await stored('run', 'running');
    await assert.rejects(transitionJob(svc, r, 'complete', { status: 'failed' }, { by: 'run_worker' }), /sets status completed, not failed/);
    await assert.rejects(transitionJob(svc, r, 'progress', { status: 'completed' }, { by: 'run_worker' }), /sets status \(unchanged\), not completed/);
    assert.equal((await store.getJobById(r.id))!.status, 'running');
  });
});
