/**
 * One service per DATA_DIR: a lock file `DATA_DIR/service.lock` holding the owner's pid, created
 * exclusively. A lock left by a process that is gone (a crash, SIGKILL) is taken over.
 */
import fs from 'node:fs';
import path from 'node:path';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Locks DATA_DIR for this process.
 * @returns a handle whose release() removes the lock (if it is still this process's).
 * @throws Error when another running process holds the lock, or the file cannot be written.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  const file = path.join(dataDir, 'service.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return { release: () => { try { if (fs.readFileSync(file, 'utf8') === String(process.pid)) fs.rmSync(file); } catch { /* already gone */ } } };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(file, 'utf8'));
      if (pid && pid !== process.pid && isAlive(pid)) {
        throw new Error(`DATA_DIR ${dataDir} is in use by another scrape-ai service (pid ${pid}); stop it or use another DATA_DIR`);
      }
      fs.rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock ${file}`);
}
