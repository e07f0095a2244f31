/**
 * The local blob store: one file per key under a root folder (DATA_DIR/blobs). Writes go to a temporary
 * file in the same folder and are renamed into place, so a reader never sees half a file and a crash
 * mid-write leaves the old state. Folders are made 0700 and files 0600 (data-dir.ts).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../../core/ports.ts';
import { DIR_MODE, FILE_MODE } from './data-dir.ts';

/** Keys are relative paths of safe segments: `results/12/<uuid>.json`. */
const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export class FileBlobStore implements BlobStore {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** @throws Error for a key that could leave the root (`..`, absolute paths). */
  private file(key: string): string {
    if (!KEY_RE.test(key) || key.split('/').some((s) => s === '..' || s === '.')) throw new Error(`invalid blob key "${key}"`);
    return path.join(this.root, key);
  }

  async put(key: string, body: Uint8Array | string, _contentType: string): Promise<void> {
    const file = this.file(key);
    await fs.mkdir(path.dirname(file), { recursive: true, mode: DIR_MODE });
    const tmp = `${file}.${randomUUID()}.tmp`;
    const handle = await fs.open(tmp, 'w', FILE_MODE);
    try {
      await handle.writeFile(body);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(this.file(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }
}
