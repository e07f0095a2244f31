/**
 * What DATA_DIR holds and who may read it (docs/security.md, "The data directory"):
 *
 * - DATA_DIR and the folders scrape-ai makes in it are created 0700, its files 0600 (the SQLite database with
 *   its WAL and shared-memory files, results, the lock, the first-start credentials). A DATA_DIR found
 *   readable by others (an older install) is closed to them: DATA_DIR itself and the entries scrape-ai
 *   owns in it lose their group and other bits (the owner's are kept); nothing else in it is touched.
 * - The secret that seals API keys does not live in DATA_DIR, so that a copy or backup of DATA_DIR gives
 *   away no key: it is `SAI_SECRET`, or the file `SAI_SECRET_FILE`, or by default
 *   `$XDG_CONFIG_HOME/scrape-ai/secret-<instance>` (`~/.config` without XDG_CONFIG_HOME), where
 *   `<instance>` is a random id stored in DATA_DIR's database on first use, so that each DATA_DIR has its
 *   own secret. A secret left at `DATA_DIR/secret` by an older version is moved there.
 * - DATA_DIR's database keeps a fingerprint of its secret (an HMAC, which tells nothing of the secret): a
 *   process that finds another secret (another user's HOME, a wrong SAI_SECRET_FILE) refuses to start
 *   instead of sealing keys that the service cannot open; a missing secret is never silently replaced; and
 *   a rotation interrupted after its database commit is finished at the next start.
 *
 * Losing the secret loses no access: API keys are checked against their SHA-256 digest; only login, which
 * shows the key again, needs the secret (`npm run accounts -- reset-secret` starts over with a new one; logins
 * then issue new keys).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { logger } from '../../logger.ts';

/** Mode of DATA_DIR and the folders in it. */
export const DIR_MODE = 0o700;
/** Mode of every file in DATA_DIR, and of the secret file. */
export const FILE_MODE = 0o600;

/** Name of the legacy secret file in DATA_DIR (versions before the secret moved out). */
const LEGACY_SECRET = 'secret';
/** The entries of DATA_DIR that scrape-ai makes (closed to others when DATA_DIR was found open). */
const OWNED = /^(scrape-ai\.db(-wal|-shm|-journal)?|blobs|service\.lock(\.sqlite(-journal)?)?|service\.pid|first-start-credentials\.txt|secret)$/;

/** Whether a mode lets anyone but the owner in. */
function loose(mode: number): boolean {
  return (mode & 0o077) !== 0;
}

/** Takes the group and other bits off a path and, for a folder, everything in it. @returns how many changed. */
function closeToOthers(p: string): number {
  const st = fs.lstatSync(p);
  if (st.isSymbolicLink()) return 0;
  let changed = 0;
  if (st.isDirectory()) for (const name of fs.readdirSync(p)) changed += closeToOthers(path.join(p, name));
  if (loose(st.mode)) {
    fs.chmodSync(p, st.mode & 0o700);
    changed++;
  }
  return changed;
}

/**
 * Creates DATA_DIR (0700), or closes one found readable by others: DATA_DIR and the entries scrape-ai owns
 * in it lose their group and other bits.
 * @throws Error when it cannot be created or changed (not the owner).
 */
export function prepareDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: DIR_MODE });
  const mode = fs.statSync(dataDir).mode;
  if (!loose(mode)) return;
  let changed = 0;
  for (const name of fs.readdirSync(dataDir)) if (OWNED.test(name)) changed += closeToOthers(path.join(dataDir, name));
  fs.chmodSync(dataDir, mode & 0o700);
  logger.warn(`DATA_DIR ${dataDir} was readable by others: it and the ${changed} file(s) and folder(s) of scrape-ai in it are now closed to them`, { dataDir, changed });
}

/** Creates a file for the owner only, unless it exists (an existing file's mode is left alone). */
export function createPrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', FILE_MODE));
}

/**
 * Creates a file with its content in one step, for the owner only: written to a temporary file, synced,
 * then linked into place, so no process ever reads it empty or half written.
 * @returns false when the file exists already (it is left as it is).
 */
export function createFileAtomically(file: string, content: string): boolean {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: DIR_MODE });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = fs.openSync(tmp, 'wx', FILE_MODE);
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, file);
    syncFolder(path.dirname(file));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Makes a rename or link in a folder durable. */
export function syncFolder(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Where the sealing secret comes from, and its value. */
export interface SealingSecret {
  value: string;
  /** `env` (SAI_SECRET) or the file it is read from. */
  source: 'env' | { file: string };
}

/** What DATA_DIR's database keeps about its secret (the local store's settings). */
export interface SecretRecord {
  /** Stores (on first use) and returns the DATA_DIR's instance id. */
  pinInstance(fresh: string): string;
  /** The fingerprint of the secret the keys are sealed with, or null before the first one. */
  fingerprint(): string | null;
  /** Records the fingerprint of the secret in use. */
  setFingerprint(fp: string): void;
}

/** The default secret file of a DATA_DIR instance: under XDG_CONFIG_HOME or ~/.config. */
function defaultSecretFile(env: NodeJS.ProcessEnv, instanceId: string): string {
  const configHome = env.XDG_CONFIG_HOME?.trim() || path.join(os.homedir(), '.config');
  return path.join(configHome, 'scrape-ai', `secret-${instanceId}`);
}

/** A fingerprint of a secret: it tells whether two secrets are the same, and nothing about them. */
export function secretFingerprint(secret: string): string {
  return createHmac('sha256', secret).update('scrape-ai sealing secret fingerprint v1').digest('hex').slice(0, 32);
}

/** Reads a secret file; null when absent or empty (a file made by an interrupted write). */
function readSecretFile(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read the secret file ${file}: ${(err as Error).message}`);
  }
  const value = text.trim();
  if (value && loose(fs.statSync(file).mode)) logger.warn(`the secret file ${file} is readable by others; chmod 600 it`, { file });
  return value || null;
}

/** A new random secret (32 bytes, base64url). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Where the secret file of a DATA_DIR is, when the secret comes from a file. */
export function secretFileOf(env: NodeJS.ProcessEnv, record: SecretRecord): string | null {
  if (env.SAI_SECRET?.trim()) return null;
  return env.SAI_SECRET_FILE?.trim() ? path.resolve(env.SAI_SECRET_FILE.trim()) : defaultSecretFile(env, record.pinInstance(randomUUID()));
}

/**
 * The sealing secret of a DATA_DIR: SAI_SECRET, else the file SAI_SECRET_FILE, else the default file of the
 * DATA_DIR's instance. A missing file is made (0600, atomically) only for a DATA_DIR that has no secret yet;
 * a legacy `DATA_DIR/secret` is moved out; a rotation interrupted after its commit (`<file>.new`) is finished.
 * @throws Error when the secret found is not the one DATA_DIR's keys are sealed with, when DATA_DIR has a
 *   secret and its file is missing, or when a secret file cannot be read or written. Each message says what to do.
 */
export function loadSealingSecret(env: NodeJS.ProcessEnv, dataDir: string, record: SecretRecord): SealingSecret {
  const recorded = record.fingerprint();
  const legacyFile = path.join(dataDir, LEGACY_SECRET);
  const legacy = readSecretFile(legacyFile);
  const file = secretFileOf(env, record);
  let value: string;
  let source: SealingSecret['source'];
  if (!file) {
    value = env.SAI_SECRET!.trim();
    source = 'env';
    if (legacy && legacy === value) logger.warn(`SAI_SECRET is the secret still kept in ${legacyFile}: delete that file, a copy of DATA_DIR must not hold it`, { legacyFile });
  } else {
    source = { file };
    let found = readSecretFile(file);
    const staged = readSecretFile(`${file}.new`);
    if (staged) {
      if (recorded && secretFingerprint(staged) === recorded && (!found || secretFingerprint(found) !== recorded)) {
        // A rotation committed its keys under the new secret and stopped before putting it in place.
        fs.renameSync(`${file}.new`, file);
        syncFolder(path.dirname(file));
        logger.warn(`finished an interrupted secret rotation: ${file} now holds the new secret`, { file });
        found = staged;
      } else if (!recorded || secretFingerprint(staged) !== recorded) {
        fs.rmSync(`${file}.new`, { force: true });
      }
    }
    if (!found) {
      const seed = legacy && (!recorded || secretFingerprint(legacy) === recorded) ? legacy : null;
      if (!seed && recorded) {
        throw new Error(`The secret that seals this DATA_DIR's API keys is missing: expected it in ${file}. It was made by the first process that used ${dataDir} (under that user's ~/.config/scrape-ai/ by default): point SAI_SECRET_FILE at it, or set SAI_SECRET. To start over with a new secret (logins then issue new keys; the keys themselves keep working), run: npm run accounts -- reset-secret`);
      }
      const made = createFileAtomically(file, `${seed ?? newSecret()}\n`);
      found = readSecretFile(file);
      if (!found) {
        throw new Error(made ? `the secret file ${file} could not be written` : `the secret file ${file} is empty; put a secret in it (e.g. 32 random bytes in base64url) or delete it to have one generated`);
      }
    }
    value = found;
  }
  const fp = secretFingerprint(value);
  if (recorded && fp !== recorded) {
    throw new Error(`The sealing secret ${source === 'env' ? 'in SAI_SECRET' : `in ${(source as { file: string }).file}`} is not the one this DATA_DIR's API keys are sealed with (another user's ~/.config, or a wrong SAI_SECRET/SAI_SECRET_FILE?). Use the secret the service uses; to start over with a new one instead, run: npm run accounts -- reset-secret`);
  }
  if (!recorded) record.setFingerprint(fp);
  if (legacy && source !== 'env' && secretFingerprint(legacy) === fp) {
    fs.rmSync(legacyFile, { force: true });
    logger.warn(`the API-key sealing secret moved out of DATA_DIR to ${(source as { file: string }).file}, so that a copy of DATA_DIR gives away no key; keep that file (or set SAI_SECRET_FILE)`, { from: legacyFile });
  }
  return { value, source };
}
