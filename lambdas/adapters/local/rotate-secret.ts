/**
 * `npm run accounts -- rotate-secret`: a new API-key sealing secret for a DATA_DIR, with every account's
 * sealed key sealed again under it, so that logins go on returning the same keys (docs/security.md,
 * "Rotating the secret"). The service must be stopped (the DATA_DIR lock is taken for the rotation).
 *
 * Order, so that no crash leaves keys sealed under a secret nobody has: the new secret is written to
 * `<secret file>.new`, the keys are sealed again in one SQLite transaction, then the new file replaces
 * the old one. A key that does not open under the current secret is left as it is (its account gets a
 * new key at its next login, as before the rotation).
 */
import fs from 'node:fs';
import { KeySealer } from '../../core/crypto.ts';
import { FILE_MODE, newSecret } from './data-dir.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { databaseFile, type LocalSettings } from './runtime.ts';
import { immediate, SqliteStore } from './sqlite-store.ts';

/** What a rotation did. */
export interface SecretRotation {
  /** The secret file that now holds the new secret. */
  file: string;
  /** Accounts whose key was sealed again. */
  resealed: number;
  /** Accounts whose sealed key did not open under the old secret (left as they were). */
  unreadable: number;
}

/**
 * Rotates the sealing secret of DATA_DIR.
 * @throws Error when the secret comes from SAI_SECRET (an environment variable this command cannot
 *   change: move it to a file with SAI_SECRET_FILE first), or the service runs on this DATA_DIR.
 */
export function rotateSealingSecret(settings: LocalSettings): SecretRotation {
  if (settings.secretSource === 'env') {
    throw new Error('the sealing secret comes from SAI_SECRET, which this command cannot change: put it in a file, point SAI_SECRET_FILE at it (and unset SAI_SECRET), then rotate');
  }
  const { file } = settings.secretSource;
  const lock = lockDataDir(settings.dataDir);
  const store = new SqliteStore(databaseFile(settings.dataDir));
  try {
    const oldSealer = new KeySealer(settings.secret);
    const secret = newSecret();
    const newSealer = new KeySealer(secret);
    const staged = `${file}.new`;
    fs.writeFileSync(staged, `${secret}\n`, { mode: FILE_MODE });
    let resealed = 0;
    let unreadable = 0;
    try {
      immediate(store.db, () => {
        const rows = store.db.prepare('SELECT id, api_key_sealed FROM accounts WHERE api_key_sealed IS NOT NULL').all() as Array<{ id: number; api_key_sealed: string }>;
        const update = store.db.prepare('UPDATE accounts SET api_key_sealed = ? WHERE id = ?');
        for (const row of rows) {
          let key: string;
          try {
            key = oldSealer.open(row.api_key_sealed, row.id);
          } catch {
            unreadable++;
            continue;
          }
          update.run(newSealer.seal(key, row.id), row.id);
          resealed++;
        }
      });
    } catch (err) {
      fs.rmSync(staged, { force: true });
      throw err;
    }
    fs.renameSync(staged, file);
    return { file, resealed, unreadable };
  } finally {
    store.close();
    lock.release();
  }
}
