/**
 * `npm run bench -- faults`: another account's `GET /me/` latency while the fault matrix of issue 24 runs (every
 * hostile behaviour against every feature that loads a page: test/helpers/fault-matrix.ts, the same matrix as the
 * fault suite in `npm test`), against the same service idle, in the same run. Target (issue 24): p99 under 50 ms on
 * the 2-core machine. The fault suite in `npm test` bounds it at 200 ms, a bound that holds beside a second test
 * suite; this figure needs a machine that is not running one (bench/README.md, "faults").
 *
 * Options: --runs N (3), --idle-seconds N (10).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { percentile, startFaultMatrix } from '../test/helpers/fault-matrix.ts';
import { gitHead } from './report.ts';

/** Issue 24's bound on another account's `GET /me/` p99 while the matrix runs, ms. */
const TARGET_P99_MS = 50;

/** p50, p99 and max of a probe's times, ms. */
function summary(ms: number[]): { n: number; p50: number; p99: number; max: number } {
  return { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms) };
}

const fmt = (s: ReturnType<typeof summary>) => `${String(s.n).padStart(5)} polls  p50 ${s.p50.toFixed(1).padStart(5)} ms  p99 ${s.p99.toFixed(1).padStart(6)} ms  max ${s.max.toFixed(1).padStart(6)} ms`;

/** Runs the bench; returns 0 when every run met the target and answered no call with a 5xx, else 1. */
export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { runs: { type: 'string', default: '3' }, 'idle-seconds': { type: 'string', default: '10' } } });
  const runs = Number(values.runs);
  const idleMs = Number(values['idle-seconds']) * 1000;
  if (!(runs >= 1) || !(idleMs >= 1000)) throw new Error('--runs must be at least 1 and --idle-seconds at least 1');
  console.log(`faults: commit ${gitHead()}; ${runs} run(s); GET /me/ of another account every 20 ms from a probe process; target p99 < ${TARGET_P99_MS} ms under the matrix\n`);
  let ok = true;
  const p99s: number[] = [];
  for (let i = 1; i <= runs; i++) {
    const load = loadavg().map((x) => x.toFixed(2)).join(' ');
    const matrix = await startFaultMatrix();
    try {
      const idle = summary((await matrix.idle(idleMs)).ms);
      const t0 = performance.now();
      const { outcomes, me } = await matrix.run();
      const seconds = (performance.now() - t0) / 1000;
      const attacked = summary(me.ms);
      const fiveXX = outcomes.filter((o) => o.status >= 500).length;
      const refused = outcomes.filter((o) => o.status >= 400 && o.status < 500).length;
      p99s.push(attacked.p99);
      console.log(`run ${i} (load average before: ${load})`);
      console.log(`  idle (the peer)     ${fmt(idle)}`);
      console.log(`  under the matrix    ${fmt(attacked)}   (${outcomes.length} calls in ${seconds.toFixed(0)} s: ${refused} coded 4xx, ${fiveXX} 5xx, ${me.failures.length} probe failures)`);
      console.log(`  p99 under the matrix / idle = ${(attacked.p99 / idle.p99).toFixed(2)}x; target p99 < ${TARGET_P99_MS} ms: ${attacked.p99 < TARGET_P99_MS ? 'met' : 'NOT met'}\n`);
      if (attacked.p99 >= TARGET_P99_MS || fiveXX > 0 || me.failures.length > 0) ok = false;
    } finally {
      await matrix.close();
    }
  }
  const sorted = [...p99s].sort((a, b) => a - b);
  console.log(`p99 under the matrix over ${runs} run(s): median ${sorted[Math.floor((sorted.length - 1) / 2)]!.toFixed(1)} ms, worst ${sorted.at(-1)!.toFixed(1)} ms; ${ok ? 'every run met the target' : 'NOT every run met the target'}`);
  return ok ? 0 : 1;
}
