/**
 * Following README leaves nothing untracked in a clone (issue 40): the Python client's venv (`python3 -m venv .venv`),
 * what `pip install ./clients/python` and `python3 -m build clients/python` write beside the sources, and the
 * TypeScript client's tarball (`cd clients/typescript && npm pack`) are ignored by .gitignore; the sources are not.
 * Asked of git itself (`git check-ignore --no-index`: the rules, whether or not the files exist).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Whether .gitignore ignores `file` (a path relative to the repository). */
function ignored(file: string): boolean {
  const r = spawnSync('git', ['check-ignore', '--no-index', '-q', file], { cwd: ROOT });
  assert.ok(r.status === 0 || r.status === 1, `git check-ignore failed for ${file}: ${r.stderr?.toString()}`);
  return r.status === 0;
}

describe('.gitignore', () => {
  it('ignores what README\'s set-up steps write: the venv, the Python builds, the client tarball', () => {
    for (const f of ['.venv/bin/python', '.venv/pyvenv.cfg', 'clients/python/build/lib/scrape_ai/client.py', 'clients/python/dist/scrape_ai-0.1.0-py3-none-any.whl',
      'clients/python/scrape_ai.egg-info/PKG-INFO', 'clients/typescript/scrape-ai-client-0.1.0.tgz']) {
      assert.ok(ignored(f), `${f} is not ignored`);
    }
  });

  it('ignores none of the sources those steps read', () => {
    for (const f of ['clients/python/scrape_ai/client.py', 'clients/python/pyproject.toml', 'clients/typescript/package.json', 'clients/typescript/src/cli.ts', 'README.md']) {
      assert.ok(!ignored(f), `${f} is ignored`);
    }
  });
});
