/**
 * The API Lambda bundles, built with the very esbuild options of lib/lambda.ts: they contain no browser,
 * Chromium, crawler, SQLite or LLM code, and stay small. Sizes are printed (the README quotes them).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { routes } from '../../lambdas/routes.ts';
import { BUNDLING, EXTERNAL_MODULES, ROOT } from '../../lib/lambda.ts';

async function bundle(entry: string): Promise<{ bytes: number; inputs: string[]; text: string }> {
  const r = await build({
    entryPoints: [path.join(ROOT, 'lambdas', entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLING.target,
    minify: BUNDLING.minify,
    external: EXTERNAL_MODULES,
    inject: BUNDLING.inject,
    banner: { js: BUNDLING.banner },
    mainFields: BUNDLING.mainFields,
    write: false,
    metafile: true,
    logLevel: 'silent',
    outfile: 'index.mjs',
  });
  const out = r.outputFiles[0]!;
  return { bytes: out.contents.length, inputs: Object.keys((r.metafile as Metafile).inputs), text: out.text };
}

const FORBIDDEN_INPUTS = /(^|\/)(puppeteer|puppeteer-core|playwright|@sparticuz|chromium|@anthropic-ai|openai|undici|parse5|better-sqlite3)(\/|$)|lambdas\/(engine\/run|net\/fetch|adapters\/local)\b/;
const FORBIDDEN_TEXT = /@sparticuz\/chromium|puppeteer|api\.anthropic\.com|node:sqlite/;

describe('API handler bundles', () => {
  const sizes: Record<string, number> = {};

  for (const entry of [...routes.map((r) => r.handler), 'authorizer/handler.ts']) {
    it(`${entry}: no browser, Chromium, crawler, SQLite or LLM code; under 600 KB`, async () => {
      const b = await bundle(entry);
      const bad = b.inputs.filter((i) => FORBIDDEN_INPUTS.test(i));
      assert.deepEqual(bad, [], `${entry} bundles ${bad.join(', ')}`);
      assert.doesNotMatch(b.text, FORBIDDEN_TEXT);
      assert.ok(b.inputs.some((i) => i.endsWith('lambdas/adapters/aws/install.ts')), 'the AWS services are injected');
      assert.ok(!b.inputs.some((i) => i.includes('node_modules/@aws-sdk/')), 'the SDK comes from the runtime');
      assert.ok(b.bytes < 600 * 1024, `${entry}: ${b.bytes} bytes`);
      sizes[entry] = b.bytes;
    });
  }

  it('the run worker bundles the crawler and puppeteer-core, but not Chromium (it comes from the layer)', async () => {
    const b = await bundle('workers/run-queue-consumer.ts');
    assert.ok(b.inputs.some((i) => i.includes('lambdas/engine/crawler.ts')));
    assert.ok(b.inputs.some((i) => i.includes('lambdas/engine/loaders/browser-loader.ts')));
    assert.ok(b.inputs.some((i) => i.includes('node_modules/undici/')));
    assert.ok(b.inputs.some((i) => i.includes('node_modules/puppeteer-core/')));
    assert.ok(!b.inputs.some((i) => /@sparticuz/.test(i)), 'the browser binary is in the layer');
    sizes['workers/run-queue-consumer.ts'] = b.bytes;
    console.log(`bundle sizes (minified, bytes): ${JSON.stringify(sizes)}`);
  });

  it('the bundles load as ES modules and export their handler (ESM with CommonJS dependencies inside)', async () => {
    // Inside node_modules/.cache, so that the externals (@aws-sdk, @sparticuz/chromium) resolve as from /opt and the runtime.
    const dir = path.join(ROOT, 'node_modules', '.cache', 'sai-bundle-check');
    fs.mkdirSync(dir, { recursive: true });
    for (const entry of ['workers/run-queue-consumer.ts', 'workers/generate-queue-consumer.ts', 'http/run.ts', 'http/generate.ts', 'authorizer/handler.ts']) {
      const b = await bundle(entry);
      const file = path.join(dir, `${entry.replace(/\W/g, '-')}.mjs`);
      fs.writeFileSync(file, b.text);
      const mod = (await import(pathToFileURL(file).href)) as { handler?: unknown };
      assert.equal(typeof mod.handler, 'function', entry);
    }
  });
});
