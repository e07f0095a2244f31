/**
 * Schedules' firing (core/schedules.ts, issue 26) on the real SQLite store with a clock the test moves: a due slot
 * fires one metered run job with `schedule_id`; concurrent firers and a firer that died after creating the job fire
 * the slot once; missed slots collapse into one; a firing while the last job is unfinished is skipped and counted; a
 * quota refusal pauses the schedule with its reason, and enabling it again resumes it from now; a plan without
 * server execution, or a rule more frequent than the plan allows, is refused at creation.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSchedule, firingJobId, fireSchedule, updateSchedule } from '../../lambdas/core/schedules.ts';
import { createConfig } from '../../lambdas/core/configs.ts';
import type { AccountRecord, JobRecord } from '../../lambdas/core/ports.ts';
import { testServices } from '../helpers/services.ts';

const YAML = `target: { url: "https://shop.example/", engine: lightweight }
extract:
  container: li
  fields:
    - { name: name, selector: a }
`;

async function setup(plan = 'pro', now = '2026-11-22T14:00:10.000Z') {
  const sent: string[] = [];
  const t = testServices({ now, overrides: { queue: { send: async (_q, body) => { sent.push(body); } } } });
  const account = await t.svc.store.createAccount({ email: `${Math.random()}@example.com`, first_name: '', last_name: '', plan, password_hash: 'x', api_key_digest: null, api_key_sealed: null });
  const config = await createConfig(t.svc, account.id, { name: 'shop', target_url: 'https://shop.example/', yaml_content: YAML });
  return { ...t, account, config, sent };
}

const credits = (t: Awaited<ReturnType<typeof setup>>, a: AccountRecord) => t.svc.store.getCounter(a.id, 'credits:2026-11');

describe('schedules: firing (core/schedules.ts)', () => {
  it('a due slot fires one metered run job with schedule_id; not again within the slot; the next slot fires the next job', async () => {
    const t = await setup();
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '0 * * * *' });
    assert.equal(s.next_run_at, '2026-11-22T15:00:00.000Z');
    assert.deepEqual(await fireSchedule(t.svc, s), { kind: 'not_due' });
    t.setNow('2026-11-22T15:00:03.000Z');
    const first = await fireSchedule(t.svc, (await t.svc.store.getSchedule(t.account.id, s.id))!);
    assert.equal(first.kind, 'fired');
    const job = (await t.svc.store.getJobById((first as { job_id: string }).job_id))!;
    assert.equal(job.schedule_id, s.id);
    assert.equal(job.config_id, t.config.id);
    assert.equal(job.job_type, 'run');
    assert.equal(await credits(t, t.account), 1000, 'one credit (millicredits) spent, as POST /run/ spends');
    assert.deepEqual(t.sent.map((b) => JSON.parse(b)), [{ job_id: job.id }]);
    const after = (await t.svc.store.getSchedule(t.account.id, s.id))!;
    assert.equal(after.last_fired_at, '2026-11-22T15:00:00.000Z');
    assert.equal(after.next_run_at, '2026-11-22T16:00:00.000Z');
    assert.deepEqual(after.recent_jobs, [{ job_id: job.id, scheduled_for: '2026-11-22T15:00:00.000Z' }]);
    assert.deepEqual(await fireSchedule(t.svc, after), { kind: 'not_due' }, 'the same slot never fires twice');
    // The job finished; the next slot fires the next job.
    await t.svc.store.updateJob(job.id, ['pending'], { status: 'completed' });
    t.setNow('2026-11-22T16:00:01.000Z');
    const second = await fireSchedule(t.svc, after);
    assert.equal(second.kind, 'fired');
    assert.equal((await t.svc.store.getSchedule(t.account.id, s.id))!.fired_count, 2);
  });

  it('concurrent firers of one slot (a duplicate message, a second loop) create one job and charge once', async () => {
    const t = await setup();
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '*/5 * * * *' });
    t.setNow('2026-11-22T14:05:01.000Z');
    const outcomes = await Promise.all([fireSchedule(t.svc, s), fireSchedule(t.svc, s), fireSchedule(t.svc, s)]);
    assert.equal(outcomes.filter((o) => o.kind === 'fired').length >= 1, true);
    const jobs = (await t.svc.store.listJobs(t.account.id, 100)).items;
    assert.equal(jobs.length, 1, JSON.stringify(outcomes));
    assert.equal(await credits(t, t.account), 1000, 'the losers gave their charge back');
    assert.equal((await t.svc.store.getSchedule(t.account.id, s.id))!.fired_count, 1);
  });

  it('a firer that died after creating the job (before its claim): the next firer records that job and creates none', async () => {
    const t = await setup();
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '0 * * * *' });
    t.setNow('2026-11-22T15:00:02.000Z');
    const slot = new Date('2026-11-22T15:00:00.000Z');
    const now = t.svc.clock.now().toISOString();
    const orphan: JobRecord = {
      id: firingJobId(s.id, slot), account_id: t.account.id, job_type: 'run', status: 'pending', progress: 0, status_message: 'Queued', items_found: 0, pages_scraped: 0,
      api_discovered: false, target_url: 'https://shop.example/', config_id: t.config.id, yaml_content: YAML, prompt: null, created_at: now, updated_at: now, started_at: null,
      completed_at: null, attempts: 0, row_count: 0, results_key: null, schedule_id: s.id,
    };
    await t.svc.store.createJob(orphan);
    const outcome = await fireSchedule(t.svc, s);
    assert.deepEqual(outcome, { kind: 'fired', job_id: orphan.id, slot: slot.toISOString() });
    assert.equal((await t.svc.store.listJobs(t.account.id, 100)).items.length, 1);
    const after = (await t.svc.store.getSchedule(t.account.id, s.id))!;
    assert.equal(after.fired_count, 1);
    assert.equal(after.last_fired_at, slot.toISOString());
  });

  it('after downtime a missed schedule fires once, for its latest slot', async () => {
    const t = await setup();
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '0 * * * *' });
    t.setNow('2026-11-22T19:30:00.000Z');
    const outcome = await fireSchedule(t.svc, s);
    assert.equal(outcome.kind, 'fired');
    assert.equal((outcome as { slot: string }).slot, '2026-11-22T19:00:00.000Z');
    assert.equal((await t.svc.store.listJobs(t.account.id, 100)).items.length, 1);
    assert.deepEqual(await fireSchedule(t.svc, (await t.svc.store.getSchedule(t.account.id, s.id))!), { kind: 'not_due' });
  });

  it('a firing while the last job is unfinished is skipped and counted; nothing is charged', async () => {
    const t = await setup();
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '*/10 * * * *' });
    t.setNow('2026-11-22T14:10:00.500Z');
    assert.equal((await fireSchedule(t.svc, s)).kind, 'fired');
    t.setNow('2026-11-22T14:20:00.500Z');
    const skipped = await fireSchedule(t.svc, (await t.svc.store.getSchedule(t.account.id, s.id))!);
    assert.equal(skipped.kind, 'skipped');
    const after = (await t.svc.store.getSchedule(t.account.id, s.id))!;
    assert.equal(after.skipped_count, 1);
    assert.equal(after.fired_count, 1);
    assert.equal(after.last_fired_at, '2026-11-22T14:20:00.000Z', 'the skipped slot is used up');
    assert.equal(await credits(t, t.account), 1000);
  });

  it('a quota refusal pauses the schedule with its reason; enabling it again resumes from now', async () => {
    const t = await setup();
    await t.svc.store.consume(t.account.id, 'credits:2026-11', 200_000, 200_000);
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '0 * * * *' });
    t.setNow('2026-11-22T15:00:01.000Z');
    const outcome = await fireSchedule(t.svc, s);
    assert.deepEqual(outcome, { kind: 'paused', slot: '2026-11-22T15:00:00.000Z', code: 'quota_exceeded' });
    const paused = (await t.svc.store.getSchedule(t.account.id, s.id))!;
    assert.equal(paused.enabled, false);
    assert.equal(paused.next_run_at, null);
    assert.equal(paused.paused?.code, 'quota_exceeded');
    assert.match(paused.paused!.message, /Monthly quota of the Pro plan used up/);
    assert.equal((await t.svc.store.listJobs(t.account.id, 100)).items.length, 0);
    assert.deepEqual(await fireSchedule(t.svc, paused), { kind: 'not_due' }, 'a paused schedule does not fire');
    t.setNow('2026-11-22T17:30:00.000Z');
    const resumed = await updateSchedule(t.svc, t.account, s.id, { enabled: true });
    assert.equal(resumed.paused, null);
    assert.equal(resumed.next_run_at, '2026-11-22T18:00:00.000Z');
    assert.deepEqual(await fireSchedule(t.svc, resumed), { kind: 'not_due' }, 'the slots it was paused for are not fired late');
  });

  it('a deleted config pauses its schedule (not_found); a plan without server execution or a too-frequent rule is refused at creation', async () => {
    const t = await setup();
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '0 * * * *' });
    await t.svc.store.deleteConfig(t.account.id, t.config.id);
    t.setNow('2026-11-22T15:00:01.000Z');
    assert.deepEqual(await fireSchedule(t.svc, s), { kind: 'paused', slot: '2026-11-22T15:00:00.000Z', code: 'not_found' });

    const free = await setup('free');
    await assert.rejects(createSchedule(free.svc, free.account, { config_id: free.config.id, cron: '0 * * * *' }), (e: any) => e.code === 'plan_required' && /server execution/.test(e.message));
    const growth = await setup('growth');
    await assert.rejects(createSchedule(growth.svc, growth.account, { config_id: growth.config.id, cron: '*/5 * * * *' }),
      (e: any) => e.code === 'plan_required' && e.details[0].min_interval_minutes === 15 && e.details[0].shortest_interval_minutes === 5);
    assert.equal((await createSchedule(growth.svc, growth.account, { config_id: growth.config.id, cron: '*/15 * * * *' })).cron, '*/15 * * * *');
    await assert.rejects(createSchedule(growth.svc, growth.account, { config_id: growth.config.id, cron: '0 * * * *', timezone: 'Mars/Olympus' }), (e: any) => e.code === 'invalid_request' && e.details[0].path === 'timezone');
  });

  it('a rule changed (PUT) between a firer\'s read and its claim: the next slot is the new rule\'s', async () => {
    const t = await setup();
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '0 * * * *' });
    t.setNow('2026-11-22T15:00:02.000Z');
    const stale = (await t.svc.store.getSchedule(t.account.id, s.id))!;
    await updateSchedule(t.svc, t.account, s.id, { cron: '*/5 * * * *' });
    assert.equal((await fireSchedule(t.svc, stale)).kind, 'fired');
    assert.equal((await t.svc.store.getSchedule(t.account.id, s.id))!.next_run_at, '2026-11-22T15:05:00.000Z', 'not 16:00, the old rule\'s');
  });

  it('two firers of one slot on an account one run from its quota: one job, and the loser does not pause the schedule', async () => {
    const t = await setup();
    await t.svc.store.consume(t.account.id, 'credits:2026-11', 199_000, 200_000);
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '0 * * * *' });
    t.setNow('2026-11-22T15:00:02.000Z');
    const outcomes = await Promise.all([fireSchedule(t.svc, s), fireSchedule(t.svc, s)]);
    assert.equal(outcomes.filter((o) => o.kind === 'fired').length, 1, JSON.stringify(outcomes));
    const after = (await t.svc.store.getSchedule(t.account.id, s.id))!;
    assert.equal(after.paused, null);
    assert.equal(after.enabled, true);
    assert.equal(after.recent_jobs.length, 1);
  });

  it('a plan changed since the rule was written: a rule more frequent than the new plan allows pauses at its next firing', async () => {
    const t = await setup();
    const s = await createSchedule(t.svc, t.account, { config_id: t.config.id, cron: '*/5 * * * *' });
    await t.svc.store.updateAccount(t.account.id, { plan: 'growth' });
    t.setNow('2026-11-22T14:05:01.000Z');
    assert.deepEqual(await fireSchedule(t.svc, s), { kind: 'paused', slot: '2026-11-22T14:05:00.000Z', code: 'plan_required' });
    assert.match((await t.svc.store.getSchedule(t.account.id, s.id))!.paused!.message, /Growth plan allows \(every 15 min at most\)/);
    assert.equal((await t.svc.store.listJobs(t.account.id, 100)).items.length, 0);
  });

  it('firingJobId is a stable UUID per schedule and slot', () => {
    const a = firingJobId('s1', new Date('2026-11-22T15:00:00Z'));
    assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(firingJobId('s1', new Date('2026-11-22T15:00:00Z')), a);
    assert.notEqual(firingJobId('s1', new Date('2026-11-22T16:00:00Z')), a);
    assert.notEqual(firingJobId('s2', new Date('2026-11-22T15:00:00Z')), a);
  });
});
