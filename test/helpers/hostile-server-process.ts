/**
 * Runs test/helpers/hostile-server.ts in a process of its own and prints one JSON line with its origins
 * (`{"origin","inside"}`); it stops on SIGTERM or when its stdin closes. Tests that measure latency start it with
 * {@link spawnHostileServer}, so that building 5 MB pages and streaming bombs never delays their own event loop.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHostileServer, type HostileBehaviour } from './hostile-server.ts';

/** A hostile server in another process: its URLs, and how to stop it. */
export interface HostileProcess {
  origin: string;
  url(behaviour: HostileBehaviour, params?: Record<string, string | number | boolean>): string;
  close(): Promise<void>;
}

/** Longest start of the hostile server (preparing its bombs), ms: seconds on a quiet machine, more beside a second test suite. */
const START_TIMEOUT_MS = 90_000;

/** Starts the hostile server in a child process (bombs prepared before it answers) and waits for its origin. */
export async function spawnHostileServer(): Promise<HostileProcess> {
  const proc = spawn(process.execPath, [fileURLToPath(import.meta.url)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const origin = await new Promise<string>((resolve, reject) => {
    let out = '';
    // A start that times out kills the child: alive, it would hold this test file's process open for ever.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the hostile server did not start in ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) { clearTimeout(timer); resolve((JSON.parse(line) as { origin: string }).origin); }
    });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the hostile server exited with ${code}`)); });
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    origin,
    url(behaviour, params) {
      const p = behaviour === 'redirect-pingpong' ? '/redirect-pingpong/a' : behaviour === 'redirect-endless' ? '/redirect-endless/0/' : `/${behaviour}/`;
      const query = params ? new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString() : '';
      return `${origin}${p}${query ? `?${query}` : ''}`;
    },
    async close() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const server = await startHostileServer();
  await server.prepare();
  // Once prepared, the "remote sites" run at the lowest priority: their CPU is not the service's, and a test that
  // measures the service's latency must not measure this process's bursts (5 MB pages, bombs) instead. (Preparing
  // at nice 19 beside a second test suite took more than 30 s.)
  setPriority(19);
  const stop = async () => { await server.close(); process.exit(0); };
  process.once('SIGTERM', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.resume();
  process.stdout.write(`${JSON.stringify({ origin: server.origin, inside: server.inside.origin })}\n`);
}
