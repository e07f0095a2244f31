/**
 * Files generated from a source in code (scripts/generate.ts) are checked in as generated: docs/errors.md
 * from ERROR_CODES, lambdas/engine/schema.json from the config schema. Fix a failure with
 * `node scripts/generate.ts`, after checking the diff.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { GENERATED_FILES } from '../../scripts/generate.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('generated files are up to date', () => {
  for (const f of GENERATED_FILES) {
    it(`${f.path} equals what scripts/generate.ts writes`, () => {
      const onDisk = fs.readFileSync(path.join(root, f.path), 'utf8');
      assert.ok(onDisk === f.render(), `${f.path} differs from its source; run \`node scripts/generate.ts\` and review the diff`);
    });
  }

  it('docs/errors.md lists the codes the old hand-written page lacked', () => {
    const doc = fs.readFileSync(path.join(root, 'docs/errors.md'), 'utf8');
    for (const code of ['action_failed', 'browser_crashed', 'page_crashed']) assert.match(doc, new RegExp(`^\\| \`${code}\` \\|`, 'm'), code);
  });
});
