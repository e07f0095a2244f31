/**
 * `npm run bench` alone prints the list of benchmarks and exits 0 (issue 28), and README.md names every one of them
 * (`npm run bench -- <name>`), so a reader finds each bench the project has.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the benchmarks list', () => {
  it('`npm run bench` alone prints every benchmark and exits 0; README.md names each', () => {
    const out = execFileSync(process.execPath, [path.join(ROOT, 'bench/run.ts')], { cwd: ROOT, encoding: 'utf8' });
    const names = [...fs.readFileSync(path.join(ROOT, 'bench/run.ts'), 'utf8').matchAll(/^ {2}([a-z]+):\s/gm)].map((m) => m[1]!);
    assert.ok(names.length >= 14, names.join(', '));
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const name of names) {
      assert.match(out, new RegExp(`^ {2}${name} `, 'm'), `${name} in the usage`);
      assert.ok(readme.includes(`npm run bench -- ${name}`), `README.md names npm run bench -- ${name}`);
    }
  });
});
