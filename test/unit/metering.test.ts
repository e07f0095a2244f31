/** Metering with a controlled clock: hourly windows, Retry-After, monthly resets, both variants, refunds. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkHeadroom, meter, refund, subscriptionView } from '../../lambdas/core/metering.ts';
import type { Billing } from '../../lambdas/core/plans.ts';
import type { AccountRecord } from '../../lambdas/core/ports.ts';
import { testServices } from '../helpers/services.ts';

function setup(billing: Billing, plan: string) {
  const { svc, setNow } = testServices({ billing, now: '2026-11-30T23:59:30.000Z', secret: 'x' });
  return {
    svc,
    setNow,
    account: async (): Promise<AccountRecord> => svc.store.createAccount({ email: `${plan}-${Math.random()}@x.test`, first_name: '', last_name: '', plan, password_hash: 'h', api_key_digest: null, api_key_sealed: null }),
  };
}

describe('metering', () => {
  it('free (variant B): 10 calls per hour, Retry-After to the end of the hour, tools cost 0.1 credit', async () => {
    const { svc, setNow, account } = setup('credits', 'free');
    const a = await account();
    setNow('2026-11-22T14:59:30.000Z');
    for (let i = 0; i < 10; i++) await meter(svc, a, 'tool');
    assert.equal((await subscriptionView(svc, a)).credits_remaining, 4, '10 x 0.1 = exactly 1 credit');
    await assert.rejects(meter(svc, a, 'tool'), (e: Error & { code?: string; headers?: Record<string, string> }) => {
      assert.equal(e.code, 'rate_limited');
      assert.equal(e.headers?.['Retry-After'], '30');
      return true;
    });
    setNow('2026-11-22T15:00:00.000Z');
    await meter(svc, a, 'tool');
    assert.equal((await subscriptionView(svc, a)).credits_remaining, 3.9);
  });

  it('tools: the SEO analyzer 30 calls per UTC day, other tools their plan\'s own allowance; a quota refusal gives the day\'s slot back', async () => {
    const { svc, setNow, account } = setup('credits', 'pro');
    const a = await account();
    setNow('2026-11-22T22:00:00.000Z');
    for (let i = 0; i < 30; i++) {
      setNow(`2026-11-22T${String(22 + Math.floor(i / 20)).padStart(2, '0')}:00:00.000Z`); // two clock hours: the hourly limit is not what stops it
      await meter(svc, a, 'tool', 'seo-analyzer');
    }
    await assert.rejects(meter(svc, a, 'tool', 'seo-analyzer'), (e: Error & { code?: string; headers?: Record<string, string>; details?: Array<Record<string, unknown>> }) => {
      assert.equal(e.code, 'rate_limited');
      assert.equal(e.headers?.['Retry-After'], String(3600), 'until 00:00 UTC');
      assert.deepEqual(e.details?.[0], { limit: 30, window: 'day', retry_after_seconds: 3600, reason: 'tool_daily_limit', tool: 'seo-analyzer' });
      return true;
    });
    await assert.rejects(checkHeadroom(svc, a, 'tool', 'seo-analyzer'), { code: 'rate_limited' });
    await meter(svc, a, 'tool', 'content-extractor'); // its own allowance ("*": 1000 on pro)
    setNow('2026-11-23T00:00:00.000Z');
    await meter(svc, a, 'tool', 'seo-analyzer');
    assert.equal(await svc.store.getCounter(a.id, 'tool:seo-analyzer:2026-11-23'), 1);

    // A free account with its credits spent: the quota refuses, and the day's slot is given back.
    const free = setup('credits', 'free');
    const f = await free.account();
    free.setNow('2026-11-22T10:00:00.000Z');
    await free.svc.store.consume(f.id, 'credits:2026-11', 5000, 5000);
    await assert.rejects(meter(free.svc, f, 'tool', 'seo-analyzer'), { code: 'quota_exceeded' });
    assert.equal(await free.svc.store.getCounter(f.id, 'tool:seo-analyzer:2026-11-22'), 0);
  });

  it('free (variant B) cannot run on the server; the refusal costs nothing', async () => {
    const { svc, account } = setup('credits', 'free');
    const a = await account();
    await assert.rejects(meter(svc, a, 'run'), { code: 'plan_required' });
    assert.equal((await subscriptionView(svc, a)).credits_remaining, 5);
  });

  it('growth (variant B): credits run out within the month and come back on the 1st (UTC)', async () => {
    const { svc, setNow, account } = setup('credits', 'growth');
    const a = await account();
    setNow('2026-11-10T10:00:00.000Z');
    for (let i = 0; i < 75; i++) {
      setNow(`2026-11-${String(10 + Math.floor(i / 20)).padStart(2, '0')}T10:00:00.000Z`);
      await meter(svc, a, 'run');
    }
    await assert.rejects(meter(svc, a, 'run'), (e: Error & { code?: string; details?: Array<Record<string, unknown>> }) => {
      assert.equal(e.code, 'quota_exceeded');
      assert.deepEqual(e.details?.[0], { unit: 'credits', remaining: 0, limit: 75, cost: 1, resets_at: '2026-12-01T00:00:00.000Z' });
      return true;
    });
    setNow('2026-12-01T00:00:01.000Z');
    const charge = await meter(svc, a, 'run');
    assert.equal((await subscriptionView(svc, a)).credits_remaining, 74);
    await refund(svc, a, charge);
    assert.equal((await subscriptionView(svc, a)).credits_remaining, 75);
  });

  it('variant A counts scrapes and generations separately, tools are free, no hourly limit', async () => {
    const { svc, setNow, account } = setup('scrapes', 'pro');
    const a = await account();
    setNow('2026-11-22T12:00:00.000Z');
    await meter(svc, a, 'run');
    await meter(svc, a, 'generate');
    await meter(svc, a, 'generate');
    for (let i = 0; i < 50; i++) assert.equal(await meter(svc, a, 'tool'), null);
    assert.deepEqual(await subscriptionView(svc, a), { plan: 'pro', yaml_generations_remaining: 98, monthly_scrapes_remaining: 99, has_api_access: true, has_server_execution: true });
  });

  it('variant A free: 3 scrapes but no server execution; generations still metered', async () => {
    const { svc, account } = setup('scrapes', 'free');
    const a = await account();
    await assert.rejects(meter(svc, a, 'run'), { code: 'plan_required' });
    for (let i = 0; i < 3; i++) await meter(svc, a, 'generate');
    await assert.rejects(meter(svc, a, 'generate'), (e: Error & { code?: string; message: string }) => e.code === 'quota_exceeded' && /YAML generations/.test(e.message));
  });

  it('checkHeadroom refuses what meter would refuse, with reads only, and spends nothing', async () => {
    const { svc, setNow, account } = setup('credits', 'growth');
    const a = await account();
    setNow('2026-11-10T10:00:00.000Z');
    await checkHeadroom(svc, a, 'run');
    for (let i = 0; i < 75; i++) {
      setNow(`2026-11-${String(10 + Math.floor(i / 20)).padStart(2, '0')}T10:00:00.000Z`);
      await meter(svc, a, 'run');
    }
    await assert.rejects(checkHeadroom(svc, a, 'run'), { code: 'quota_exceeded' });
    assert.equal((await subscriptionView(svc, a)).credits_remaining, 0);
    const free = await setup('credits', 'free').account();
    await assert.rejects(checkHeadroom(svc, free, 'run'), { code: 'plan_required' });
    const t = setup('credits', 'starter');
    const s1 = await t.account();
    t.setNow('2026-11-22T14:59:00.000Z');
    for (let i = 0; i < 100; i++) await meter(t.svc, s1, 'tool');
    await assert.rejects(checkHeadroom(t.svc, s1, 'tool'), (e: Error & { code?: string; headers?: Record<string, string> }) => e.code === 'rate_limited' && e.headers?.['Retry-After'] === '60');
    const used = await t.svc.store.getCounter(s1.id, 'calls:2026-11-22T14');
    await assert.rejects(checkHeadroom(t.svc, s1, 'tool'));
    assert.equal(await t.svc.store.getCounter(s1.id, 'calls:2026-11-22T14'), used, 'nothing spent');
  });
});
