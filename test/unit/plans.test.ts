/** The plans file's loader (lambdas/core/plans.ts): per-account running jobs, validated like the other plan fields. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import builtin from '../../lambdas/core/plans.json' with { type: 'json' };
import { accountJobLimit, DEFAULT_MAX_CONCURRENT_JOBS, loadPlans } from '../../lambdas/core/plans.ts';

function plansFile(edit: (raw: any) => void): string {
  const raw = structuredClone(builtin) as any;
  edit(raw);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-plans-')), 'plans.json');
  fs.writeFileSync(file, JSON.stringify(raw));
  return file;
}

describe('plans: max_concurrent_jobs', () => {
  it('every plan of both variants says how many jobs of one account run at once', () => {
    assert.deepEqual(Object.fromEntries(Object.values(loadPlans('credits').plans).map((p) => [p.name, p.max_concurrent_jobs])), { free: 1, starter: 1, growth: 2, pro: 4 });
    assert.deepEqual(Object.fromEntries(Object.values(loadPlans('scrapes').plans).map((p) => [p.name, p.max_concurrent_jobs])), { free: 1, starter: 1, pro: 4 });
  });

  it('refuses a value that is not an integer of at least 1, naming the plan', () => {
    for (const bad of [0, -1, 1.5, '2', null]) {
      const file = plansFile((raw) => { raw.credits.plans.growth.max_concurrent_jobs = bad; });
      assert.throws(() => loadPlans('credits', file), /plans file: plan "growth" max_concurrent_jobs must be an integer >= 1/, String(bad));
    }
  });

  it('a plans file without the field (older than it) gets the default', () => {
    const file = plansFile((raw) => { delete raw.scrapes.plans.pro.max_concurrent_jobs; });
    assert.equal(loadPlans('scrapes', file).plans.pro!.max_concurrent_jobs, DEFAULT_MAX_CONCURRENT_JOBS);
  });

  it("an account's limit leaves one worker to other accounts whenever there are two or more", () => {
    const pro = loadPlans('credits').plans.pro!;
    assert.equal(accountJobLimit(pro, 1), 1, 'one worker: it runs one job at a time');
    assert.equal(accountJobLimit(pro, 2), 1);
    assert.equal(accountJobLimit(pro, 4), 3);
    assert.equal(accountJobLimit(pro, 20), 4, "the plan's own limit");
    assert.equal(accountJobLimit(undefined, 20), DEFAULT_MAX_CONCURRENT_JOBS, 'a plan not in the catalog');
  });
});
