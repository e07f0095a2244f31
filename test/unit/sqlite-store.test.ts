/** The Store contract on the local SQLite store; races run in worker threads with their own connections. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';
import { storeContract } from '../contract/store.contract.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-store-'));
const file = path.join(dir, 'contract.db');
let store: SqliteStore | null = null;

storeContract('SQLite (node:sqlite, WAL)', {
  async makeStore() {
    store = new SqliteStore(file);
    return store;
  },
  race(n, script) {
    const startAt = Date.now() + 300;
    return Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
      const w = new Worker(new URL('../contract/sqlite-racer.ts', import.meta.url), { workerData: { file, script, startAt } });
      w.once('message', resolve);
      w.once('error', reject);
    })));
  },
  async cleanup() {
    store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  },
});
