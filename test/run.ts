/**
 * `npm test` after the typecheck: runs every test file with node:test.
 *
 * Everything a test touches runs on loopback, so where the machine allows it (root, util-linux) the
 * whole suite runs inside a fresh network namespace that has only loopback (`unshare -n`, then
 * `ip link set lo up`): a test of the outbound guard cannot send a packet off the machine even if the
 * guard were wrong, and neither can the Chromium the browser tests start. Elsewhere the files run in
 * the normal namespace; files named `*.netns.test.ts` (the guard's) then still prove that no socket
 * opens for a refused target.
 *
 * Usage: node test/run.ts [file-or-folder …]   (default: the whole test/ folder)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);

function collect(p: string): string[] {
  const stat = fs.statSync(p);
  if (stat.isFile()) return p.endsWith('.test.ts') ? [p] : [];
  return fs.readdirSync(p).sort().flatMap((name) => collect(path.join(p, name)));
}

const files = (args.length ? args : ['test']).flatMap((a) => collect(path.resolve(root, a))).map((f) => path.relative(root, f));
const node = process.execPath;
const testArgs = ['--test', '--test-concurrency=2', '--test-timeout=300000'];
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function run(cmd: string, argv: string[]): number {
  return spawnSync(cmd, argv, { cwd: root, stdio: 'inherit', env: process.env }).status ?? 1;
}

// The secrets the services under test generate (outside their DATA_DIR, as in production) go to a folder of
// this run, not to the user's ~/.config.
process.env.XDG_CONFIG_HOME ??= fs.mkdtempSync(path.join(os.tmpdir(), 'sai-test-config-'));

const isolated = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' }).status === 0;
let status: number;
if (isolated) {
  console.log(`# ${files.length} test file(s) in a network namespace with only loopback (unshare -n)`);
  status = run('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec ${[node, ...testArgs, ...files].map(quote).join(' ')}`]);
} else {
  console.log(`# unshare -n is not available here: ${files.length} test file(s) run in the normal network namespace`);
  status = run(node, [...testArgs, ...files]);
}
process.exit(status === 0 ? 0 : 1);
