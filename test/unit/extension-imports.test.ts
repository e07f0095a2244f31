/**
 * The browser extension bundles the service's crawler (clients/extension/src/lib/runner.ts), and its service worker and
 * popup have no Node: a module they reach that imports Node's built-ins or a Node-only package (undici, socks) puts
 * that package in the bundle, where it throws `process is not defined` as the worker starts, and then every message
 * to the worker goes unanswered (the extension's runs hung until their 180 s protocol time-out: CI, December 2026).
 * The import tree from the extension's entry points, read by dpdm with type-only imports dropped, names none.
 */
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseDependencyTree } from 'dpdm';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRIES = ['clients/extension/src/entrypoints/background.ts', 'clients/extension/src/entrypoints/popup/main.tsx'];
/** Packages that need Node's sockets. */
const NODE_ONLY_PACKAGES = ['undici', 'socks', 'puppeteer-core', '@sparticuz/chromium', 'ws'];

describe('extension imports', () => {
  it('the extension\'s service worker and popup reach no Node built-in and no Node-only package', async () => {
    const tree = await parseDependencyTree(ENTRIES, {
      cwd: ROOT, context: ROOT, transform: true, skipDynamicImports: false,
      include: /\.(ts|tsx|js|mjs)$/, exclude: /node_modules/,
      tsconfig: path.join(ROOT, 'tsconfig.json'),
    });
    const files = Object.keys(tree);
    assert.ok(files.includes('lambdas/engine/crawler.ts'), `the tree reaches the crawler (${files.length} modules read)`);
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    const offending: string[] = [];
    for (const [file, deps] of Object.entries(tree)) {
      for (const d of deps ?? []) {
        const pkg = d.request.startsWith('@') ? d.request.split('/').slice(0, 2).join('/') : d.request.split('/')[0]!;
        if (d.request.startsWith('node:') || builtins.has(d.request) || NODE_ONLY_PACKAGES.includes(pkg)) offending.push(`${file} imports ${d.request}`);
      }
    }
    assert.deepEqual(offending, []);
  });
});
