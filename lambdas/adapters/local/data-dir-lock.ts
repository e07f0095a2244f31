/**
 * One holder of a DATA_DIR at a time (the service, or `accounts rotate-secret`/`reset-secret`): an exclusive
 * SQLite lock on `DATA_DIR/service.lock.sqlite`, held for as long as its connection is open. It is an
 * operating-system lock (fcntl, through SQLite), so it is exclusive across processes without a race, and a
 * holder that dies (a crash, SIGKILL) releases it with its process. The holder's pid goes to
 * `DATA_DIR/service.pid`, for the message another process shows.
 *
 * A `service.lock` file of an older version (a text file with a pid) is honoured while its process lives.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createPrivateFile } from './data-dir.ts';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(file: string): number {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

/**
 * Locks DATA_DIR for this process.
 * @returns a handle whose release() frees the lock.
 * @throws Error when another process holds it (naming its pid when known), or the lock file cannot be made.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  const legacy = path.join(dataDir, 'service.lock');
  const legacyPid = readPid(legacy);
  if (legacyPid && legacyPid !== process.pid && isAlive(legacyPid)) {
    throw new Error(`DATA_DIR ${dataDir} is in use by another scrape-ai service (pid ${legacyPid}); stop it or use another DATA_DIR`);
  }
  const file = path.join(dataDir, 'service.lock.sqlite');
  const pidFile = path.join(dataDir, 'service.pid');
  createPrivateFile(file);
  const db = new DatabaseSync(file, { timeout: 0 });
  try {
    // EXCLUSIVE locking mode keeps the write lock of the first transaction until the connection closes.
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder; INSERT INTO holder VALUES (' + process.pid + '); COMMIT;');
  } catch (err) {
    db.close();
    if (/locked|busy/i.test((err as Error).message)) {
      const pid = readPid(pidFile);
      throw new Error(`DATA_DIR ${dataDir} is in use by another scrape-ai service or command${pid ? ` (pid ${pid})` : ''}; stop it or use another DATA_DIR`);
    }
    throw new Error(`could not lock ${file}: ${(err as Error).message}`);
  }
  fs.rmSync(legacy, { force: true });
  fs.writeFileSync(pidFile, String(process.pid), { mode: 0o600 });
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      if (readPid(pidFile) === process.pid) fs.rmSync(pidFile, { force: true });
      db.close();
    },
  };
}
