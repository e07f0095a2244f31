// Our engine: bench/configs/books.yaml (PORT replaced by the start URL's port) through parseConfig() and
// runConfig() from lambdas/engine/, with the outbound guard told to allow loopback and maxPages raised to
// 2,000 (the site has 1,050 pages; the engine stops at 1,000 by default). The rows runConfig
// returns are fingerprinted exactly as given (no clean-up here: a price that is not a number, or a url that
// is not absolute, makes the runner fail loudly).
//
//   node bench/contenders/ours.ts --start URL [--concurrency 8] [--sample-url URL]
//
// Exit code 3 with "not available" on stderr while lambdas/engine/run.ts or config.ts is missing.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR, ROOT } from '../paths.ts';
import { Fingerprint, contenderArgs, report, type Row } from './common.ts';

/** The engine's API as the bench uses it (lambdas/engine/config.ts and run.ts). */
interface EngineApi {
  parseConfig(yamlText: string): unknown;
  runConfig(
    config: unknown,
    options: { concurrency?: number; maxPages?: number; outbound?: { allow: string[] } },
  ): Promise<{ rows: Record<string, unknown>[]; pagesScraped: number; itemsFound: number; warnings: string[] }>;
}

export const ENGINE_FILES = ['lambdas/engine/config.ts', 'lambdas/engine/run.ts'];
export const NOT_AVAILABLE_EXIT = 3;
const MAX_PAGES = 2000;

export function engineAvailable(): boolean {
  return ENGINE_FILES.every((f) => existsSync(join(ROOT, f)));
}

async function loadEngine(): Promise<EngineApi> {
  // Computed paths, so this file typechecks before the engine exists.
  const [configMod, runMod] = (await Promise.all(ENGINE_FILES.map((f) => import(pathToFileURL(join(ROOT, f)).href)))) as [
    Pick<EngineApi, 'parseConfig'>,
    Pick<EngineApi, 'runConfig'>,
  ];
  if (typeof configMod.parseConfig !== 'function') throw new Error('lambdas/engine/config.ts exports no parseConfig()');
  if (typeof runMod.runConfig !== 'function') throw new Error('lambdas/engine/run.ts exports no runConfig()');
  return { parseConfig: configMod.parseConfig, runConfig: runMod.runConfig };
}

async function main(): Promise<void> {
  const args = contenderArgs();
  if (!engineAvailable()) {
    console.error(`ours: not available yet (missing ${ENGINE_FILES.filter((f) => !existsSync(join(ROOT, f))).join(', ')})`);
    process.exit(NOT_AVAILABLE_EXIT);
  }
  const engine = await loadEngine();
  const start = new URL(args.start);
  const yamlText = readFileSync(join(BENCH_DIR, 'configs', 'books.yaml'), 'utf8').replaceAll('127.0.0.1:PORT', start.host);
  const config = engine.parseConfig(yamlText);

  const t0 = performance.now();
  // The site has 1,050 pages, above the engine's default page limit per run (1,000): raise it for the bench.
  const result = await engine.runConfig(config, { concurrency: args.concurrency, maxPages: MAX_PAGES, outbound: { allow: ['127.0.0.0/8'] } });
  const seconds = (performance.now() - t0) / 1000;

  const fingerprint = new Fingerprint();
  let sample: Row | null = null;
  for (const r of result.rows) {
    const row: Row = { url: r.url, title: r.title, price: r.price, rating: r.rating, upc: r.upc, description: r.description };
    fingerprint.add(row);
    if (row.url === args.sampleUrl) sample = row;
  }
  const notes = [`itemsFound ${result.itemsFound}`];
  if (result.warnings.length > 0) notes.push(`${result.warnings.length} warnings: ${result.warnings.slice(0, 3).join(' | ')}`);
  report({ name: 'ours', pages: result.pagesScraped, rows: result.rows.length, seconds, fingerprint: fingerprint.hex(), sample, notes });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
