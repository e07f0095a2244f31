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
 * Files named `*.alone.test.ts` measure the service's latency under hostile load (another account's p99): they
 * run after the others, one at a time, so that the bound they check is the service's and not the CPU another
 * test file's browsers take. (Beside a second test suite their bounds are checked by hand: docs/security.md.)
 *
 * The corpus suite (test/corpus/, `npm run test:corpus`) reads the real-page corpus from outside the repository
 * (test/corpus/README.md): `npm test` leaves that folder out, and a run that includes it fails at once, before any
 * test, when the corpus is not found, so it is never skipped silently.
 *
 * Usage: node test/run.ts [file-or-folder …]   (default: the whole test/ folder but test/corpus/)
 */
import { spawn, spawnSync } from 'node:child_process';
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

const corpusSuite = path.join('test', 'corpus');
const defaults = fs.readdirSync(path.join(root, 'test')).map((name) => path.join('test', name)).filter((p) => p !== corpusSuite);
const files = (args.length ? args : defaults).flatMap((a) => collect(path.resolve(root, a))).map((f) => path.relative(root, f));
if (files.some((f) => f.startsWith(corpusSuite + path.sep))) {
  const { corpusDir } = await import('./fixtures/corpus.ts');
  try {
    console.log(`# corpus: ${corpusDir()}`);
  } catch (err) {
    console.error(`# the corpus suite cannot run: ${(err as Error).message} (test/corpus/README.md)`);
    process.exit(1);
  }
}
const node = process.execPath;
// No --test-force-exit: under process isolation it drops verdicts a file's child already sent (nodejs/node#64833, open;
// 33 of test/corpus/tools-seo.test.ts's 63 tests went unreported at exit 0 on Node 24.21). A file that hangs after its
// tests (a browser that does not close) is caught instead by the run's time limit below, which fails the run loudly.
const testArgs = ['--test', '--test-concurrency=2', '--test-timeout=300000'];
/** The whole run's time limit, ms (`SAI_TEST_RUN_TIMEOUT_MS`; default 60 min, CI allows 90 for everything). */
const runTimeoutMs = Number(process.env.SAI_TEST_RUN_TIMEOUT_MS) || 60 * 60_000;
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `cmd` in a process group of its own and resolves to its exit status; past {@link runTimeoutMs} the whole group
 * (the test files' processes and what they started) is killed and the run fails, saying so.
 */
function run(cmd: string, argv: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: root, stdio: 'inherit', env: process.env, detached: true });
    const timer = setTimeout(() => {
      console.error(`# the test run took over ${Math.round(runTimeoutMs / 1000)} s (SAI_TEST_RUN_TIMEOUT_MS): killed, a file is hanging (its last tests above)`);
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
    }, runTimeoutMs);
    child.once('exit', (code) => { clearTimeout(timer); resolve(code ?? 1); });
  });
}

// The secrets the services under test generate (outside their DATA_DIR, as in production) go to a folder of
// this run, not to the user's ~/.config.
process.env.XDG_CONFIG_HOME ??= fs.mkdtempSync(path.join(os.tmpdir(), 'sai-test-config-'));

const isolated = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' }).status === 0;
const alone = files.filter((f) => f.endsWith('.alone.test.ts'));
const together = files.filter((f) => !f.endsWith('.alone.test.ts'));
/** The node:test command lines: the files together (2 at a time), then each file that must run alone. */
const phases = [together, alone].filter((group) => group.length).map((group, i) => [node, ...testArgs.map((a) => (i === 1 && a.startsWith('--test-concurrency') ? '--test-concurrency=1' : a)), ...group]);
// Every phase runs; the run fails when any of them failed.
const script = `r=0; ${phases.map((argv) => `${argv.map(quote).join(' ')} || r=1`).join('; ')}; exit $r`;
let status: number;
if (isolated) {
  console.log(`# ${files.length} test file(s) in a network namespace with only loopback (unshare -n)${alone.length ? `; ${alone.length} of them alone, last` : ''}`);
  status = await run('unshare', ['-n', 'sh', '-c', `ip link set lo up && ${script}`]);
} else {
  console.log(`# unshare -n is not available here: ${files.length} test file(s) run in the normal network namespace`);
  status = await run('sh', ['-c', script]);
}
process.exit(status === 0 ? 0 : 1);
