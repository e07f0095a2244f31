// What the bench runners (engine.ts, browser.ts) print and record alike: text tables, short values, the
// median run, the commit measured, latency percentiles.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.ts';

/** Rows of cells as columns: the first left-aligned, the others right-aligned. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

/** A value as JSON, cut to 80 characters (for error lines). */
export function short(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** The run with the median `reported.seconds` among those that reported; the last run when none did. */
export function median<R extends { reported?: { seconds: number } }>(results: R[]): R {
  const ok = results.filter((r) => r.reported);
  if (ok.length === 0) return results[results.length - 1]!;
  const sorted = [...ok].sort((a, b) => a.reported!.seconds - b.reported!.seconds);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** The checked-out commit (read from .git, no git process), or undefined outside a checkout. */
export function gitHead(): string | undefined {
  try {
    const head = readFileSync(join(ROOT, '.git', 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head;
    return readFileSync(join(ROOT, '.git', head.slice(5)), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Latency percentiles of a sample, ms: n, p50, p95, p99 and max. */
export interface LatencyStats { n: number; p50: number; p95: number; p99: number; max: number }

/** Percentiles as the value at floor(p·n) of the sorted sample (polls, api, monitoring benches). NaN when empty. */
export function latencyStats(ms: readonly number[]): LatencyStats {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN);
  return { n: s.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: s.length ? s[s.length - 1]! : NaN };
}

/**
 * The address a service child process (bin/local.ts, or a contender printing the same line) says it listens on:
 * the first `listening on http://…` of its stdout.
 * @throws Error when the process exits first.
 */
export function listeningUrl(proc: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
}
