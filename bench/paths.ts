// Paths shared by the benchmarks. Everything generated goes under <project root>/.bench/ (git-ignored).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_DIR, '..');
export const OUT_DIR = join(ROOT, '.bench');
export const SITE_DIR = join(OUT_DIR, 'site');
/** Ground truth written by the site generator, outside the served root. */
export const MANIFEST_FILE = join(OUT_DIR, 'site-manifest.json');
export const PEERS_DIR = join(BENCH_DIR, '.peers');

/** The shared real-world corpus: one lookup for tests and benchmarks. */
export { corpusDir } from '../test/fixtures/corpus.ts';
