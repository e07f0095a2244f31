/**
 * What DATA_DIR holds and who may read it (docs/security.md, "The data directory"):
 *
 * - DATA_DIR and every folder in it are created 0700, every file 0600 (the SQLite database with its WAL
 *   and shared-memory files, results, the lock, the first-start credentials); a DATA_DIR found looser (an
 *   older install) is tightened, with everything in it, and a warning says so.
 * - The secret that seals API keys does not live in DATA_DIR, so that a copy or backup of DATA_DIR gives
 *   away no key: it is `SAI_SECRET`, or the file `SAI_SECRET_FILE`, or by default
 *   `$XDG_CONFIG_HOME/scrape-ai/secret-<instance>` (`~/.config` without XDG_CONFIG_HOME), where
 *   `<instance>` is a random id stored in DATA_DIR's database on first use, so that each DATA_DIR has its
 *   own secret. A secret left at `DATA_DIR/secret` by an older version is moved there.
 *
 * Losing the secret loses no access: API keys are checked against their SHA-256 digest; only login, which
 * shows the key again, needs the secret, and without it login issues a new key (the old one stops working).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { logger } from '../../logger.ts';

/** Mode of DATA_DIR and the folders in it. */
export const DIR_MODE = 0o700;
/** Mode of every file in DATA_DIR, and of the secret file. */
export const FILE_MODE = 0o600;

/** Name of the legacy secret file in DATA_DIR (versions before the secret moved out). */
const LEGACY_SECRET = 'secret';

/** Whether a mode lets anyone but the owner in. */
function loose(mode: number): boolean {
  return (mode & 0o077) !== 0;
}

/** Tightens a folder tree: folders 0700, files 0600. @returns how many entries changed. */
function tightenTree(dir: string): number {
  let changed = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      changed += tightenTree(p);
      if (loose(fs.statSync(p).mode)) { fs.chmodSync(p, DIR_MODE); changed++; }
    } else if (entry.isFile() && loose(fs.statSync(p).mode)) {
      fs.chmodSync(p, FILE_MODE);
      changed++;
    }
  }
  return changed;
}

/**
 * Creates DATA_DIR (0700) or tightens one found looser, with everything in it.
 * @throws Error when it cannot be created or changed (not the owner).
 */
export function prepareDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: DIR_MODE });
  if (!loose(fs.statSync(dataDir).mode)) return;
  const changed = tightenTree(dataDir);
  fs.chmodSync(dataDir, DIR_MODE);
  logger.warn(`DATA_DIR ${dataDir} was readable by others: it is now 0700 and ${changed} file(s) or folder(s) in it 0700/0600`, { dataDir, changed });
}

/** Creates a file for the owner only, unless it exists (an existing file's mode is left alone). */
export function createPrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', FILE_MODE));
}

/** Where the sealing secret comes from, and its value. */
export interface SealingSecret {
  value: string;
  /** `env` (SAI_SECRET) or the file it is read from. */
  source: 'env' | { file: string };
}

/** The default secret file of a DATA_DIR instance: under XDG_CONFIG_HOME or ~/.config. */
function defaultSecretFile(env: NodeJS.ProcessEnv, instanceId: string): string {
  const configHome = env.XDG_CONFIG_HOME?.trim() || path.join(os.homedir(), '.config');
  return path.join(configHome, 'scrape-ai', `secret-${instanceId}`);
}

/** Reads a secret file; null when absent. @throws Error when it is empty or unreadable. */
function readSecretFile(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read the secret file ${file}: ${(err as Error).message}`);
  }
  const value = text.trim();
  if (!value) throw new Error(`the secret file ${file} is empty; put a secret in it (e.g. 32 random bytes in base64url) or delete it to have one generated`);
  if (loose(fs.statSync(file).mode)) logger.warn(`the secret file ${file} is readable by others; chmod 600 it`, { file });
  return value;
}

/**
 * Writes a secret file for the owner only, unless one exists (another process may make it first).
 * @returns the value in the file afterwards (ours, or the one that was there first).
 */
function writeSecretFile(file: string, value: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: DIR_MODE });
  try {
    fs.writeFileSync(file, `${value}\n`, { mode: FILE_MODE, flag: 'wx' });
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readSecretFile(file)!;
    throw new Error(`cannot write the secret file ${file}: ${(err as Error).message}; set SAI_SECRET or SAI_SECRET_FILE`);
  }
}

/** A new random secret (32 bytes, base64url). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The sealing secret of a DATA_DIR: SAI_SECRET, else the file SAI_SECRET_FILE, else the default file of
 * the DATA_DIR's instance ({@link defaultSecretFile}); a missing file is generated (0600), a legacy
 * `DATA_DIR/secret` is moved to the default file.
 * @param pinInstance stores (on first use) and returns the DATA_DIR's instance id.
 * @throws Error when a secret file cannot be read or written.
 */
export function loadSealingSecret(env: NodeJS.ProcessEnv, dataDir: string, pinInstance: (fresh: string) => string): SealingSecret {
  if (env.SAI_SECRET?.trim()) return { value: env.SAI_SECRET.trim(), source: 'env' };
  const file = env.SAI_SECRET_FILE?.trim() ? path.resolve(env.SAI_SECRET_FILE.trim()) : defaultSecretFile(env, pinInstance(randomUUID()));
  const legacy = path.join(dataDir, LEGACY_SECRET);
  const found = readSecretFile(file);
  const old = readSecretFile(legacy);
  if (found) {
    if (old) logger.warn(`DATA_DIR ${dataDir} still holds a secret file; the secret in use is ${file}: delete ${legacy} if they are the same`, { legacy, file });
    return { value: found, source: { file } };
  }
  const value = writeSecretFile(file, old ?? newSecret());
  if (old && value === old) {
    fs.rmSync(legacy, { force: true });
    logger.warn(`the API-key sealing secret moved out of DATA_DIR to ${file}, so that a copy of DATA_DIR gives away no key; keep that file (or set SAI_SECRET_FILE)`, { from: legacy, to: file });
  }
  return { value, source: { file } };
}
