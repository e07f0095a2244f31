// Paths shared by the benchmarks. Everything generated goes under <project root>/.bench/ (git-ignored).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_DIR, '..');
export const OUT_DIR = join(ROOT, '.bench');
export const SITE_DIR = join(OUT_DIR, 'site');
/** Ground truth written by the site generator, outside the served root. */
export const MANIFEST_FILE = join(OUT_DIR, 'site-manifest.json');
export const PEERS_DIR = join(BENCH_DIR, '.peers');

/**
 * The shared real-world corpus: env SAI_CORPUS_DIR, else <project root>/../shared/corpus,
 * else /work/shared/corpus. Only read from; never copied into the repository.
 */
export function corpusDir(): string {
  const candidates = [process.env.SAI_CORPUS_DIR, join(ROOT, '..', 'shared', 'corpus'), '/work/shared/corpus'];
  for (const c of candidates) {
    if (c && existsSync(join(c, 'listings'))) return resolve(c);
  }
  throw new Error(
    `corpus not found: set SAI_CORPUS_DIR or put it at ${join(ROOT, '..', 'shared', 'corpus')} (tried: ${candidates.filter(Boolean).join(', ')})`,
  );
}
