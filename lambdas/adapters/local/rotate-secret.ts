/**
 * `npm run accounts -- rotate-secret` and `reset-secret`: a new API-key sealing secret for a DATA_DIR
 * (docs/security.md, "Rotating the secret"). The DATA_DIR lock is taken first (the service must be stopped),
 * and the secret in use is read under it.
 *
 * rotate-secret seals every account's key (and every webhook's signing secret) again under the new secret, so logins
 * go on returning the same keys and webhooks keep signing with theirs; reset-secret starts over when the old secret is
 * lost (the keys keep working, logins issue new ones; webhooks must be created again: their deliveries are given up
 * with `secret_unreadable`).
 *
 * Order, so that no crash leaves keys sealed under a secret nobody has: the new secret is written to
 * `<secret file>.new` (created exclusively and synced), the keys are sealed again and the new secret's
 * fingerprint recorded in one SQLite transaction, then the new file replaces the old one. A crash between the
 * commit and the rename is finished at the next start (data-dir.ts compares the fingerprints).
 */
import fs from 'node:fs';
import path from 'node:path';
import { KeySealer } from '../../core/crypto.ts';
import { createFileAtomically, newSecret, secretFileOf, secretFingerprint, syncFolder } from './data-dir.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { databaseFile, secretRecord, settingsFromEnv } from './runtime.ts';
import { immediate, SqliteStore } from './sqlite-store.ts';

/** What a rotation did. */
export interface SecretRotation {
  /** The secret file that now holds the new secret. */
  file: string;
  /** Accounts whose key was sealed again. */
  resealed: number;
  /** Accounts whose sealed key did not open under the old secret (left as they were: a new key at their next login). */
  unreadable: number;
  /** Webhook signing secrets sealed again (issue 26); ones that did not open are left as they were. */
  webhook_secrets: number;
}

const ENV_SECRET = 'the sealing secret comes from SAI_SECRET, which this command cannot change: put it in a file, point SAI_SECRET_FILE at it (and unset SAI_SECRET), then run it again';

/** Puts a staged secret in place of the file after the commit. */
function commitFile(staged: string, file: string): void {
  fs.renameSync(staged, file);
  syncFolder(path.dirname(file));
}

/** Writes the new secret beside the file, refusing a leftover of an earlier attempt. */
function stage(file: string, secret: string): string {
  const staged = `${file}.new`;
  if (!createFileAtomically(staged, `${secret}\n`)) {
    throw new Error(`${staged} exists: an earlier rotation did not finish. Start the service once (it finishes or discards it), then run this again`);
  }
  return staged;
}

/**
 * Rotates the sealing secret of DATA_DIR.
 * @param env the environment naming DATA_DIR and the secret (SAI_SECRET_FILE or the default file).
 * @throws Error when the secret comes from SAI_SECRET, the DATA_DIR is in use, or the secret in use is not
 *   the one the keys are sealed with (see data-dir.ts).
 */
export function rotateSealingSecret(env: NodeJS.ProcessEnv): SecretRotation {
  if (env.SAI_SECRET?.trim()) throw new Error(ENV_SECRET);
  const dataDir = path.resolve(env.DATA_DIR?.trim() || './data');
  const lock = lockDataDir(dataDir);
  try {
    const settings = settingsFromEnv(env, 'data-dir-wins');
    if (settings.secretSource === 'env') throw new Error(ENV_SECRET);
    const { file } = settings.secretSource;
    const oldSealer = new KeySealer(settings.secret);
    const secret = newSecret();
    const newSealer = new KeySealer(secret);
    const staged = stage(file, secret);
    let resealed = 0;
    let unreadable = 0;
    let webhookSecrets = 0;
    const store = new SqliteStore(databaseFile(dataDir));
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
        // Webhooks' signing secrets are sealed with the same secret (core/webhooks.ts): sealed again in the same transaction.
        const hooks = store.db.prepare('SELECT id, account_id, secret_sealed FROM webhooks').all() as Array<{ id: string; account_id: number; secret_sealed: string }>;
        const updateHook = store.db.prepare('UPDATE webhooks SET secret_sealed = ? WHERE id = ?');
        for (const hook of hooks) {
          let plain: string;
          try {
            plain = oldSealer.open(hook.secret_sealed, hook.account_id);
          } catch {
            continue;
          }
          updateHook.run(newSealer.seal(plain, hook.account_id), hook.id);
          webhookSecrets++;
        }
        secretRecord(store).setFingerprint(secretFingerprint(secret));
      });
    } catch (err) {
      fs.rmSync(staged, { force: true });
      throw err;
    } finally {
      store.close();
    }
    commitFile(staged, file);
    return { file, resealed, unreadable, webhook_secrets: webhookSecrets };
  } finally {
    lock.release();
  }
}

/**
 * Starts over with a new sealing secret when the old one is lost: the keys keep working (they are checked
 * by digest); logins issue new keys, since the sealed copies no longer open.
 * @throws Error when the secret comes from SAI_SECRET, or the DATA_DIR is in use.
 */
export function resetSealingSecret(env: NodeJS.ProcessEnv): { file: string } {
  if (env.SAI_SECRET?.trim()) throw new Error(ENV_SECRET);
  const dataDir = path.resolve(env.DATA_DIR?.trim() || './data');
  const lock = lockDataDir(dataDir);
  try {
    const store = new SqliteStore(databaseFile(dataDir));
    try {
      const record = secretRecord(store);
      const file = secretFileOf(env, record)!;
      const secret = newSecret();
      fs.rmSync(`${file}.new`, { force: true });
      const staged = stage(file, secret);
      try {
        immediate(store.db, () => record.setFingerprint(secretFingerprint(secret)));
      } catch (err) {
        fs.rmSync(staged, { force: true });
        throw err;
      }
      commitFile(staged, file);
      return { file };
    } finally {
      store.close();
    }
  } finally {
    lock.release();
  }
}
