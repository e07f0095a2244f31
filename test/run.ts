/**
 * `npm test` after the typecheck: runs every test file with node:test.
 *
 * Files named `*.netns.test.ts` run inside a fresh network namespace that has only loopback
 * (`unshare -n`, then `ip link set lo up`) where the machine allows it (root, util-linux), so a test
 * of the outbound guard cannot send a packet off the machine even if the guard were wrong. Elsewhere
 * they run like the others, and the guard's own tests still prove that no socket opens.
 *
 * Usage: node test/run.ts [file-or-folder …]   (default: the whole test/ folder)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);

function collect(p: string): string[] {
  const stat = fs.statSync(p);
  if (stat.isFile()) return p.endsWith('.test.ts') ? [p] : [];
  return fs.readdirSync(p).sort().flatMap((name) => collect(path.join(p, name)));
}

const files = (args.length ? args : ['test']).flatMap((a) => collect(path.resolve(root, a))).map((f) => path.relative(root, f));
const isolated = files.filter((f) => f.endsWith('.netns.test.ts'));
const plain = files.filter((f) => !f.endsWith('.netns.test.ts'));
const node = process.execPath;
const testArgs = ['--test', '--test-concurrency=2', '--test-timeout=180000'];

function run(cmd: string, argv: string[]): number {
  const r = spawnSync(cmd, argv, { cwd: root, stdio: 'inherit', env: process.env });
  return r.status ?? 1;
}

let failed = 0;
if (plain.length) failed += run(node, [...testArgs, ...plain]) === 0 ? 0 : 1;
if (isolated.length) {
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
  if (probe.status === 0) {
    console.log(`\n# ${isolated.length} file(s) in a network namespace with only loopback (unshare -n)`);
    const quoted = [node, ...testArgs, ...isolated].map((s) => `'${s.replace(/'/g, `'\\''`)}'`).join(' ');
    failed += run('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec ${quoted}`]) === 0 ? 0 : 1;
  } else {
    console.log(`\n# unshare -n is not available here: ${isolated.length} file(s) run in the normal network namespace`);
    failed += run(node, [...testArgs, ...isolated]) === 0 ? 0 : 1;
  }
}
process.exit(failed ? 1 : 0);
