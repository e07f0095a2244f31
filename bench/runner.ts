// How the side-by-side benches (engine.ts, browser.ts) run their contenders alike: warm the server's caches,
// run every contender `runs` times interleaved while nginx serves (stopped at the end, on errors and on
// Ctrl-C), and pick each contender's median run.
import { Agent, request } from 'undici';
import type { Nginx } from './nginx.ts';
import { median } from './report.ts';

/** GETs every path once (`connections` at a time), so nginx's open-file cache and the page cache are warm for everyone. Returns seconds. */
export async function warmUp(nginx: Nginx, paths: readonly string[], connections: number): Promise<number> {
  const t0 = performance.now();
  const agent = new Agent({ connections });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < paths.length) {
          const url = nginx.origin + paths[next++]!;
          const { statusCode, body } = await request(url, { dispatcher: agent });
          await body.dump();
          if (statusCode !== 200) throw new Error(`warm-up: GET ${url}: HTTP ${statusCode}`);
        }
      }),
    );
  } finally {
    await agent.close();
  }
  return (performance.now() - t0) / 1000;
}

/** What the rounds need of a run's result. */
export interface RunLike<N extends string> {
  name: N;
  status: string;
  errors: string[];
  reported?: { seconds: number };
}

export interface RoundsOptions<N extends string, R extends RunLike<N>> {
  nginx: Nginx;
  names: readonly N[];
  runs: number;
  runOne(name: N, run: number): Promise<R>;
  /** The line printed after a run (the status is appended when not ok). */
  describe(r: R): string;
  /** Kills the contender running now (on SIGINT/SIGTERM). */
  killCurrent(): void;
}

/**
 * Runs every contender `runs` times, interleaved (a, b, c, a, b, c, …), one line per run; stops nginx at the
 * end whatever happens, and on SIGINT/SIGTERM kills the running contender, stops nginx and exits 130.
 * @returns every run, and each contender's median run (by reported seconds).
 */
export async function rounds<N extends string, R extends RunLike<N>>(o: RoundsOptions<N, R>): Promise<{ all: R[]; chosen: Map<N, R> }> {
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${sig}: stopping`);
    o.killCurrent();
    void o.nginx.stop().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const all: R[] = [];
  try {
    for (let run = 1; run <= o.runs; run++) {
      for (const name of o.names) {
        const r = await o.runOne(name, run);
        all.push(r);
        console.log(`  run ${run} ${name.padEnd(8)} ${r.reported ? o.describe(r) : r.status}${r.status === 'ok' ? '' : `  ${r.status.toUpperCase()}`}`);
        for (const e of r.errors) console.log(`      ${e.replace(/\n/g, '\n      ')}`);
      }
    }
  } finally {
    await o.nginx.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const chosen = new Map<N, R>();
  for (const name of o.names) {
    const rs = all.filter((r) => r.name === name);
    if (rs.length) chosen.set(name, median(rs));
  }
  return { all, chosen };
}
