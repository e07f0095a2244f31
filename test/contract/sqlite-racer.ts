/** A racer for the SQLite contract's race tests: its own thread and its own connection to the shared file. */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';
import { runRaceScript, type RaceScript } from './store.contract.ts';

const { file, script, startAt } = workerData as { file: string; script: RaceScript; startAt: number };
const store = new SqliteStore(file);
// Start together, so the racers really overlap.
while (Date.now() < startAt) { /* spin until the common start */ }
const n = await runRaceScript(store, script);
store.close();
parentPort!.postMessage(n);
