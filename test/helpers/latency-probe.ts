/**
 * A latency probe in a process of its own: another user of the service, polling one GET route with its own key
 * every `intervalMs`, one request at a time over one kept-alive connection. Tests that bound another account's
 * latency while they drive hostile work measure it here, so that the test process's own work (issuing the calls,
 * parsing their answers) is not counted as the service's latency. It stops on SIGTERM or when its stdin closes,
 * and then prints one JSON line: `{ms: number[], failures: string[]}`.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { requestShortSlice } from '../../lambdas/thread-priority.ts';

/** What the probe saw: each request's time (ms, from sending to the whole answer) and each non-200 answer or error. */
export interface ProbeResult {
  ms: number[];
  failures: string[];
}

/** A running probe. */
export interface LatencyProbe {
  /** Stops polling and gives what was seen. */
  stop(): Promise<ProbeResult>;
}

/**
 * Starts polling `url` with `Authorization: Bearer apiKey` in a child process; resolves once its first answer came.
 * @throws Error when the probe does not answer within 60 s or exits first.
 */
export async function startLatencyProbe(url: string, apiKey: string, intervalMs = 20): Promise<LatencyProbe> {
  const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), url, apiKey, String(intervalMs)], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error('the latency probe did not start in 60 s')); }, 60_000);
    const check = () => { if (out.includes('started\n')) { clearTimeout(timer); resolve(); } };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the latency probe exited with ${code}`)); });
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    async stop() {
      proc.stdin!.on('error', () => undefined); // a probe that already exited: its result (or its absence) says so
      proc.stdin!.end();
      await exited;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) throw new Error(`the latency probe printed no result: ${out.slice(0, 500)}`);
      return JSON.parse(line) as ProbeResult;
    },
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [url, apiKey, interval] = process.argv.slice(2) as [string, string, string];
  // The probe is the measuring instrument: the time it waits for the CPU after an answer came is not the service's
  // latency. It asks for the short slice the service's HTTP thread has (lambdas/thread-priority.ts).
  requestShortSlice(process.pid);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const result: ProbeResult = { ms: [], failures: [] };
  let stopped = false;
  const once = () => new Promise<void>((resolve) => {
    const t0 = performance.now();
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
      res.resume();
      res.on('end', () => {
        result.ms.push(performance.now() - t0);
        if (res.statusCode !== 200) result.failures.push(`HTTP ${res.statusCode}`);
        resolve();
      });
    });
    req.on('error', (err) => { result.failures.push(err.message); resolve(); });
  });
  process.stdin.on('end', () => { stopped = true; });
  process.stdin.resume();
  process.on('SIGTERM', () => { stopped = true; });
  await once();
  result.ms.length = 0;
  process.stdout.write('started\n');
  while (!stopped) {
    await once();
    await new Promise((r) => setTimeout(r, Number(interval)));
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
  agent.destroy();
  process.exit(0);
}
