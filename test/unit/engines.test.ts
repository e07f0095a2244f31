/**
 * `engines` (issue 28): npm runs on the machine's Node (20 here) and checks every package it installs against that
 * Node, while the project itself runs on its bundled Node 24 (the `node` devDependency). The root's `engines.node`
 * says where installing works, and no package of package-lock.json may ask for more: on any Node the root admits,
 * `npm ci` prints no `EBADENGINE`. A dependency bump that needs a newer Node fails here, without reinstalling
 * (.ci/run also fails on an `EBADENGINE` line of the real `npm ci`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
// @ts-expect-error semver ships no type declarations; the functions used are typed below.
import semverModule from 'semver';

const semver = semverModule as {
  validRange(range: string): string | null;
  satisfies(version: string, range: string): boolean;
  subset(sub: string, dom: string): boolean;
  minVersion(range: string): { major: number; version: string } | null;
};

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));

interface Engines { node?: unknown; npm?: unknown }
interface LockEntry { version?: string; engines?: Engines | string[]; optional?: boolean }

const pkg = readJson('package.json') as { engines: { node: string }; devDependencies: Record<string, string> };
const lock = readJson('package-lock.json') as { packages: Record<string, LockEntry> };
/** npm's own engines check (npm-install-checks) reads `engines.node` and `engines.npm` of an object; an array is ignored. */
const entries = Object.entries(lock.packages).filter(([name, e]) => name !== '' && e.engines && !Array.isArray(e.engines)) as Array<[string, LockEntry & { engines: Engines }]>;

describe('engines', () => {
  const root = pkg.engines.node;

  it('the root says what installing needs: a Node 20 (npm runs on the machine\'s Node), and the bundled runtime', () => {
    assert.ok(semver.validRange(root), `engines.node "${root}" is a semver range`);
    assert.equal(semver.minVersion(root)?.major, 20, `engines.node "${root}" admits a Node 20`);
    assert.ok(semver.satisfies('20.20.2', root), `engines.node "${root}" admits the machine's Node 20.20.2`);
    assert.ok(semver.satisfies(pkg.devDependencies.node!, root), `engines.node "${root}" admits the bundled node@${pkg.devDependencies.node}`);
  });

  it('no package of the lockfile asks for a Node the root admits and it does not (npm would warn EBADENGINE)', () => {
    const checked = entries.filter(([, e]) => typeof e.engines.node === 'string');
    assert.ok(checked.length > 100, `${checked.length} packages declare engines.node`);
    const narrower = checked
      .filter(([, e]) => !semver.validRange(e.engines.node as string) || !semver.subset(root, e.engines.node as string))
      .map(([name, e]) => `${name.replace(/^.*node_modules\//, '')}@${e.version}: ${e.engines.node as string}${e.optional ? ' (optional)' : ''}`);
    assert.deepEqual(narrower, [], `packages whose engines.node does not cover the root's "${root}": pin a release that supports it, or narrow the root's range`);
  });

  it('no package asks for an npm newer than the one of the oldest Node the root admits (Node 20.19.0 bundles npm 10.8.2)', () => {
    const narrower = entries
      .filter(([, e]) => typeof e.engines.npm === 'string' && !semver.subset('>=10.8.2', e.engines.npm as string))
      .map(([name, e]) => `${name.replace(/^.*node_modules\//, '')}@${e.version}: npm ${e.engines.npm as string}`);
    assert.deepEqual(narrower, []);
  });

  it('the TypeScript client pins the versions the lockfile holds (so the checks above cover them)', () => {
    const client = readJson('clients/typescript/package.json') as { dependencies: Record<string, string> };
    for (const [name, version] of Object.entries(client.dependencies)) {
      assert.equal(lock.packages[`node_modules/${name}`]?.version, version, `${name}@${version} of clients/typescript is the root's`);
    }
  });
});
