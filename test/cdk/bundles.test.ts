/**
 * The API Lambda bundles, built with the very esbuild options of lib/lambda.ts: they contain no browser,
 * Chromium, crawler, SQLite or LLM code, and stay small. The tool routes fetch pages (the fetcher, undici and
 * parse5 are theirs) and the routes that render pages bundle puppeteer-core, never Chromium (its layer has it).
 * Sizes are printed (the README quotes them).
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
/** A tool route fetches pages: the fetcher and its undici, parse5 for HTML, are allowed; the crawler, LLMs, SQLite are not. */
const FORBIDDEN_IN_TOOLS = /(^|\/)(puppeteer|puppeteer-core|playwright|@sparticuz|chromium|@anthropic-ai|openai|better-sqlite3)(\/|$)|lambdas\/(engine\/(run|crawler)|adapters\/local|generator)\b/;
/** A route that renders pages also has puppeteer-core (Chromium itself is in the layer). */
const FORBIDDEN_IN_BROWSER_TOOLS = /(^|\/)(playwright|@sparticuz|@anthropic-ai|openai|better-sqlite3)(\/|$)|lambdas\/(engine\/(run|crawler)|adapters\/local|generator)\b/;
/**
 * Bundle size limits, bytes: plain API routes; page tools (HTML parsers, phone metadata, fingerprints). The API
 * routes' limit was 600 KB until issue 24's store operations (job slots), error codes and input limits took
 * POST /run/ to 620 KB, and RE2 (re2js, about 150 KB minified), which the routes that validate a config need to
 * refuse a pattern RE2 cannot run, to about 770 KB; the largest other parts are the config schema's validator
 * and two copies of `entities`. Issue 38's API sources added the JMESPath library (@jmespath-community/jmespath,
 * with which a config's `target.api` queries are compiled when it is validated): 855 KB, so 900 KB.
 */
const MAX_API_BYTES = 900 * 1024;
const MAX_TOOL_BYTES = 12 * 1024 * 1024;

describe('API handler bundles', () => {
  const sizes: Record<string, number> = {};

  /** Routes that fetch or render pages: the tools, and the MCP server, which runs them in-process. */
  const pageRoutes = routes.filter((r) => r.path.startsWith('/api/v1/tools/') || r.path === '/mcp');
  const plain = routes.filter((r) => !pageRoutes.includes(r));
  for (const entry of [...plain.map((r) => r.handler), 'authorizer/handler.ts']) {
    it(`${entry}: no browser, Chromium, crawler, SQLite or LLM code; under 900 KB`, async () => {
      const b = await bundle(entry);
      const bad = b.inputs.filter((i) => FORBIDDEN_INPUTS.test(i));
      assert.deepEqual(bad, [], `${entry} bundles ${bad.join(', ')}`);
      assert.doesNotMatch(b.text, FORBIDDEN_TEXT);
      assert.ok(b.inputs.some((i) => i.endsWith('lambdas/adapters/aws/install.ts')), 'the AWS services are injected');
      assert.ok(!b.inputs.some((i) => i.includes('node_modules/@aws-sdk/')), 'the SDK comes from the runtime');
      assert.ok(b.bytes < MAX_API_BYTES, `${entry}: ${b.bytes} bytes`);
      sizes[entry] = b.bytes;
    });
  }

  for (const route of pageRoutes) {
    it(`${route.handler}: the fetcher${route.browser ? ' and puppeteer-core' : ''}, no ${route.browser ? '' : 'browser, '}Chromium, crawler, SQLite or LLM code; loads as an ES module`, async () => {
      const b = await bundle(route.handler);
      const bad = b.inputs.filter((i) => (route.browser ? FORBIDDEN_IN_BROWSER_TOOLS : FORBIDDEN_IN_TOOLS).test(i));
      assert.deepEqual(bad, [], `${route.handler} bundles ${bad.join(', ')}`);
      assert.ok(b.inputs.some((i) => i.endsWith('lambdas/net/fetch.ts')), 'pages are fetched through the guarded fetcher');
      assert.equal(b.inputs.some((i) => i.includes('node_modules/puppeteer-core/')), route.browser === true, 'puppeteer-core exactly where the route renders');
      assert.ok(!b.inputs.some((i) => i.includes('node_modules/@aws-sdk/')), 'the SDK comes from the runtime');
      assert.ok(b.bytes < MAX_TOOL_BYTES, `${route.handler}: ${b.bytes} bytes`);
      sizes[route.handler] = b.bytes;
      // Data loaded at run time (fingerprints, phone metadata) must be inside the bundle: load it as Lambda would.
      const dir = path.join(ROOT, 'node_modules', '.cache', 'sai-bundle-check');
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `${route.handler.replace(/\W/g, '-')}.mjs`);
      fs.writeFileSync(file, b.text);
      const mod = (await import(pathToFileURL(file).href)) as { handler?: unknown };
      assert.equal(typeof mod.handler, 'function', route.handler);
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
