/**
 * The fault suite of issue 24 (the matrix: test/helpers/fault-matrix.ts): every hostile behaviour of
 * test/helpers/hostile-server.ts against every feature that loads a page (runs on the HTTP engine and in the browser,
 * generate, each of the eight tools), over real HTTP on the local service. For each call:
 * - the service answers with a result or a coded 4xx (a job ends `completed`, or `failed` with a coded message),
 *   never a 5xx, within its time budget (the tools' deadline, a job's time limit, each with slack for a loaded
 *   machine);
 * - nothing is charged for a refused call: the credits spent are exactly 0.1 per tool call answered 200 and 1 per
 *   job accepted (a run or a generation is charged when accepted, as docs/plans-and-metering.md says);
 * - the process never exits;
 * - meanwhile another account's `GET /me/` answers every time, with a p99 under 200 ms here: a bound that holds
 *   beside a second `npm test` on the 2-core machine, and still fails on what issue 24 found (seconds of stall behind
 *   one page). Issue 24's figure, a p99 under 50 ms, needs a machine that is not running a second test suite too
 *   (measured beside one: 30-97 ms, with the other suite's heaviest phase the worst), so `npm run bench -- faults`
 *   shows it, on this same matrix, against the same service idle (bench/README.md, "faults").
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BEHAVIOURS, JOB_TIMEOUT_MS, SLACK_MS, TOOL_DEADLINE_MS, TOOLS, percentile, startFaultMatrix, type FaultMatrix, type Outcome } from '../helpers/fault-matrix.ts';

/** Another account's `GET /me/` p99 while the matrix runs, in `npm test` (loaded machine), ms. */
const ME_P99_BOUND_MS = 200;

describe('the fault suite: every hostile behaviour against every feature that loads a page (issue 24)', () => {
  let matrix: FaultMatrix;

  before(async () => {
    matrix = await startFaultMatrix();
  });
  after(async () => {
    await matrix?.close();
  });

  it('answers every call with a result or a coded 4xx in time, charges no refused call, stays up, and keeps /me/ of another account under 200 ms at p99 (50 ms: the faults bench)', async () => {
    const { accounts, svc } = matrix;
    const credits = async (api: FaultMatrix['accounts']['runs']) => (await api.get('/api/v1/me/')).body.subscription.credits_remaining as number;
    const before = { runs: await credits(accounts.runs), browser: await credits(accounts.browser), generate: await credits(accounts.generate), tools: await credits(accounts.tools) + await credits(accounts.tools2) };
    // The matrix, while another account's GET /me/ is polled every 20 ms from a probe process of its own.
    const { outcomes, me } = await matrix.run();

    // Every call: a result or a coded 4xx, never a 5xx; in time.
    const table = outcomes.map((o) => `${o.feature} × ${o.behaviour}: ${o.status}${o.code ? ` ${o.code}` : ''}${o.job ? ` → ${o.job.status} (${o.job.message.slice(0, 80)})` : ''} in ${Math.round(o.ms)} ms`);
    console.log(`${outcomes.length} calls:\n  ${table.join('\n  ')}`);
    assert.equal(outcomes.length, BEHAVIOURS.length * (3 + TOOLS.length));
    for (const o of outcomes) {
      const what = `${o.feature} × ${o.behaviour}`;
      assert.ok(o.status < 500, `${what}: ${o.status} ${o.code ?? ''}`);
      if (o.status >= 400) assert.match(o.code ?? '', /^[a-z_]+$/, `${what}: a 4xx carries its code`);
      if (o.job) {
        assert.ok(['completed', 'failed'].includes(o.job.status), `${what}: the job ended (${o.job.status})`);
        if (o.job.status === 'failed') assert.match(o.job.message, /^[a-z_]+: /, `${what}: a failed job says its code (${o.job.message})`);
        assert.ok(o.ms < JOB_TIMEOUT_MS * 6 + SLACK_MS, `${what}: ${Math.round(o.ms)} ms`);
      } else {
        assert.ok(o.ms < TOOL_DEADLINE_MS + SLACK_MS, `${what}: ${Math.round(o.ms)} ms`);
      }
    }

    // Nothing charged for a refused call: 0.1 per tool answer 200, 1 per job accepted.
    const tenths = (n: number) => Math.round(n * 10);
    const charged = (feature: (o: Outcome) => boolean, unit: number, ok: (o: Outcome) => boolean) => outcomes.filter((o) => feature(o) && ok(o)).length * unit;
    const isTool = (o: Outcome) => (TOOLS as readonly string[]).includes(o.feature);
    assert.equal(tenths(before.tools - await credits(accounts.tools) - await credits(accounts.tools2)), tenths(charged(isTool, 0.1, (o) => o.status === 200)), 'tools: 0.1 credit per answer 200, nothing for a refused call');
    assert.equal(tenths(before.runs - await credits(accounts.runs)), tenths(charged((o) => o.feature === 'run (HTTP engine)', 1, (o) => o.status === 202)), 'runs: 1 credit per job accepted');
    assert.equal(tenths(before.browser - await credits(accounts.browser)), tenths(charged((o) => o.feature === 'run (browser engine)', 1, (o) => o.status === 202)), 'browser runs: 1 credit per job accepted');
    assert.equal(tenths(before.generate - await credits(accounts.generate)), tenths(charged((o) => o.feature === 'generate', 1, (o) => o.status === 202)), 'generations: 1 credit per job accepted');

    // The process never exited, and it still answers.
    assert.equal(svc.proc.exitCode, null, 'the service process is up');
    assert.equal(svc.proc.signalCode, null, 'the service process is up');
    assert.equal((await accounts.bystander.get('/api/v1/me/')).status, 200);

    // Another account's /me/: always answered, p99 under the bound.
    const p50 = percentile(me.ms, 50);
    const p99 = percentile(me.ms, 99);
    console.log(`GET /me/ of another account during the matrix: ${me.ms.length} requests, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...me.ms).toFixed(1)} ms`);
    assert.deepEqual(me.failures, []);
    assert.ok(me.ms.length >= 100, `polled ${me.ms.length} times`);
    assert.ok(p99 < ME_P99_BOUND_MS, `p99 ${p99.toFixed(1)} ms`);
  });
});
