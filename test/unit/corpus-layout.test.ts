/**
 * The repository stands alone (issue 40): `npm test` needs nothing outside it, and what reads the external corpus
 * lives in test/corpus/ (`npm run test:corpus`, test/corpus/README.md).
 * - No test file outside test/corpus/ reads the corpus (imports its locator, test/fixtures/corpus.ts): a test of
 *   real pages goes to test/corpus/, a test that only needs some page uses the fixture site's (test/fixtures/site/).
 * - No tracked file names the folder beside the repository (where the corpus is found) but the locator
 *   and the corpus suite's README: the contract and the architecture are docs/spec.md and docs/architecture.md.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
/** Text files of the repository (what git tracks, binaries left out). */
const textFiles = tracked.filter((f) => !/\.(png|jpe?g|gif|ico|webp|woff2?|zip|gz|xlsx|pdf)$/i.test(f));
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

describe('the repository stands alone', () => {
  it('only test/corpus/ (and test/run.ts, which checks for the corpus before that suite) reads the corpus', () => {
    const locator = /fixtures\/corpus(\.ts)?['"]|\bcorpus(Dir|Path)\(/;
    const readers = textFiles.filter((f) => f.startsWith('test/') && f.endsWith('.ts') && !f.startsWith('test/corpus/') && f !== 'test/run.ts' && f !== 'test/fixtures/corpus.ts' && f !== 'test/unit/corpus-layout.test.ts' && locator.test(read(f)));
    assert.deepEqual(readers, [], 'move these tests to test/corpus/, or give them a page of the fixture site');
  });

  it('no file names the folder beside the repository, or the contract and architecture notes kept there, but the corpus locator and the corpus suite\'s README', () => {
    const beside = ['..', 'shared'].join('/');
    const notes = new RegExp(`(?<![\\w/.-])(${['SPEC', 'ARCHITECTURE', 'STYLE'].join('|')})\\.md`);
    const naming = textFiles.filter((f) => read(f).includes(beside) || read(f).includes(`${beside.slice(3)}/`) || notes.test(read(f)));
    assert.deepEqual(naming, ['test/corpus/README.md', 'test/fixtures/corpus.ts']);
  });

  it('npm test leaves test/corpus/ out and npm run test:corpus runs it', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    assert.match(pkg.scripts['test:corpus']!, /node test\/run\.ts test\/corpus$/);
    assert.match(read('test/run.ts'), /filter\(\(p\) => p !== corpusSuite\)/);
    assert.match(read('.ci/run'), /npm test\nnpm run test:corpus/);
  });
});
