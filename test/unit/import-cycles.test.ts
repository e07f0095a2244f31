/**
 * No import circle among the project's modules (issue 25), type-only and dynamic imports included: the
 * dependency tree of every TypeScript module of the service, the CDK app, the clients and the scripts, read by
 * dpdm (without transforming away the types), has no cycle.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseCircular, parseDependencyTree } from 'dpdm';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRIES = ['lambdas/**/*.ts', 'lib/**/*.ts', 'bin/*.ts', 'scripts/*.ts', 'clients/typescript/src/**/*.ts', 'clients/extension/src/**/*.{ts,tsx}', 'clients/dashboard/src/**/*.{ts,tsx}', 'bench/*.ts'];

describe('import circles', () => {
  it('the project\'s modules import one another without a cycle (types and dynamic imports counted)', async () => {
    const tree = await parseDependencyTree(ENTRIES, {
      cwd: ROOT, context: ROOT, transform: false, skipDynamicImports: false,
      include: /\.(ts|tsx|js|mjs)$/, exclude: /node_modules/,
      tsconfig: path.join(ROOT, 'tsconfig.json'),
    });
    const files = Object.keys(tree);
    assert.ok(files.length > 300, `the tree holds every module (${files.length} read)`);
    assert.ok(files.includes('lambdas/core/run-job-executor.ts'), 'paths are relative to the repository');
    const circles = parseCircular(tree, false);
    assert.deepEqual(circles.map((c) => c.join(' -> ')), []);
  });
});
