/**
 * DATA_DIR's modes and the place of the API-key sealing secret (lambdas/adapters/local/data-dir.ts):
 * folders 0700 and files 0600, a loose older DATA_DIR tightened; the secret from SAI_SECRET, SAI_SECRET_FILE
 * or a file of the DATA_DIR's instance under XDG_CONFIG_HOME, never in DATA_DIR; a legacy DATA_DIR/secret
 * moved out with its value kept.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSealingSecret, prepareDataDir, secretFingerprint, type SecretRecord } from '../../lambdas/adapters/local/data-dir.ts';
import { settingsFromEnv } from '../../lambdas/adapters/local/runtime.ts';

const mode = (p: string) => fs.statSync(p).mode & 0o777;
const tmp = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `sai-${name}-`));

/** A secret record kept in memory, as DATA_DIR's database keeps it. */
function pinner(): SecretRecord & { fp: string | null } {
  let stored: string | null = null;
  const r = {
    fp: null as string | null,
    pinInstance: (fresh: string) => (stored ??= fresh),
    fingerprint: () => r.fp,
    setFingerprint: (fp: string) => { r.fp = fp; },
  };
  return r;
}

describe('DATA_DIR modes', () => {
  it('a new DATA_DIR is 0700, its database 0600', () => {
    const dataDir = path.join(tmp('modes'), 'nested', 'data');
    settingsFromEnv({ DATA_DIR: dataDir, XDG_CONFIG_HOME: tmp('cfg') });
    assert.equal(mode(dataDir), 0o700);
    assert.equal(mode(path.join(dataDir, 'scrape-ai.db')), 0o600);
    assert.deepEqual(fs.readdirSync(dataDir).filter((f) => /secret/.test(f)), [], 'no secret in DATA_DIR');
  });

  it('a DATA_DIR readable by others is closed to them: itself and the entries of scrape-ai, owner bits kept, nothing else touched', () => {
    const dataDir = tmp('loose');
    fs.chmodSync(dataDir, 0o755);
    fs.mkdirSync(path.join(dataDir, 'blobs', 'results'), { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(dataDir, 'scrape-ai.db'), '', { mode: 0o644 });
    fs.writeFileSync(path.join(dataDir, 'blobs', 'results', 'r.json'), '[]', { mode: 0o664 });
    fs.writeFileSync(path.join(dataDir, 'blobs', 'run.sh'), '', { mode: 0o755 });
    fs.writeFileSync(path.join(dataDir, 'notes.txt'), '', { mode: 0o644 });
    prepareDataDir(dataDir);
    assert.equal(mode(dataDir), 0o700);
    assert.equal(mode(path.join(dataDir, 'blobs')), 0o700);
    assert.equal(mode(path.join(dataDir, 'blobs', 'results')), 0o700);
    assert.equal(mode(path.join(dataDir, 'scrape-ai.db')), 0o600);
    assert.equal(mode(path.join(dataDir, 'blobs', 'results', 'r.json')), 0o600);
    assert.equal(mode(path.join(dataDir, 'blobs', 'run.sh')), 0o700, 'the owner keeps execute');
    assert.equal(mode(path.join(dataDir, 'notes.txt')), 0o644, 'not an entry of scrape-ai');
  });
});

describe('the sealing secret', () => {
  it('SAI_SECRET wins, and nothing is written', () => {
    const cfg = tmp('cfg');
    const s = loadSealingSecret({ SAI_SECRET: ' from env ', XDG_CONFIG_HOME: cfg }, tmp('data'), pinner());
    assert.deepEqual(s, { value: 'from env', source: 'env' });
    assert.deepEqual(fs.readdirSync(cfg), []);
  });

  it('by default: a file of the DATA_DIR instance under XDG_CONFIG_HOME, 0600, the same on every start', () => {
    const cfg = tmp('cfg');
    const dataDir = tmp('data');
    const pin = pinner();
    const first = loadSealingSecret({ XDG_CONFIG_HOME: cfg }, dataDir, pin);
    assert.equal(typeof first.source, 'object');
    const file = (first.source as { file: string }).file;
    assert.match(file, new RegExp(`^${cfg}/scrape-ai/secret-[0-9a-f-]{36}$`));
    assert.equal(mode(file), 0o600);
    assert.equal(mode(path.dirname(file)), 0o700);
    assert.equal(fs.readFileSync(file, 'utf8').trim(), first.value);
    assert.ok(first.value.length >= 40);
    assert.deepEqual(loadSealingSecret({ XDG_CONFIG_HOME: cfg }, dataDir, pin), first);
    // Another DATA_DIR (another instance) has another secret.
    assert.notEqual(loadSealingSecret({ XDG_CONFIG_HOME: cfg }, tmp('data'), pinner()).value, first.value);
  });

  it('SAI_SECRET_FILE: generated 0600 when absent, read when present; an empty one is an error', () => {
    const file = path.join(tmp('secrets'), 'sai.secret');
    const made = loadSealingSecret({ SAI_SECRET_FILE: file }, tmp('data'), pinner());
    assert.deepEqual(made.source, { file });
    assert.equal(mode(file), 0o600);
    fs.writeFileSync(file, 'chosen by the operator\n');
    assert.equal(loadSealingSecret({ SAI_SECRET_FILE: file }, tmp('data'), pinner()).value, 'chosen by the operator');
    fs.writeFileSync(file, '\n');
    assert.throws(() => loadSealingSecret({ SAI_SECRET_FILE: file }, tmp('data'), pinner()), /secret file .* is empty/);
  });

  it('a secret that is not the one the keys are sealed with, or a missing one, is refused, never replaced', () => {
    const cfg = tmp('cfg');
    const dataDir = tmp('data');
    const record = pinner();
    const first = loadSealingSecret({ XDG_CONFIG_HOME: cfg }, dataDir, record);
    assert.equal(record.fp, secretFingerprint(first.value));
    // Another user's HOME: another default file, a new secret would be made; the fingerprint stops it.
    assert.throws(() => loadSealingSecret({ XDG_CONFIG_HOME: tmp('other-home') }, dataDir, record), /secret that seals this DATA_DIR's API keys is missing.*reset-secret/s);
    assert.throws(() => loadSealingSecret({ SAI_SECRET: 'a guess' }, dataDir, record), /SAI_SECRET is not the one this DATA_DIR's API keys are sealed with/);
    const file = (first.source as { file: string }).file;
    fs.writeFileSync(file, 'swapped\n');
    assert.throws(() => loadSealingSecret({ XDG_CONFIG_HOME: cfg }, dataDir, record), /is not the one this DATA_DIR's API keys are sealed with/);
  });

  it('a rotation stopped after its commit is finished at the next load; a staged file that was never committed is dropped', () => {
    const cfg = tmp('cfg');
    const dataDir = tmp('data');
    const record = pinner();
    const file = (loadSealingSecret({ XDG_CONFIG_HOME: cfg }, dataDir, record).source as { file: string }).file;
    fs.writeFileSync(`${file}.new`, 'the new secret\n', { mode: 0o600 });
    record.fp = secretFingerprint('the new secret');
    assert.equal(loadSealingSecret({ XDG_CONFIG_HOME: cfg }, dataDir, record).value, 'the new secret');
    assert.equal(fs.readFileSync(file, 'utf8').trim(), 'the new secret');
    assert.ok(!fs.existsSync(`${file}.new`));
    fs.writeFileSync(`${file}.new`, 'never committed\n', { mode: 0o600 });
    assert.equal(loadSealingSecret({ XDG_CONFIG_HOME: cfg }, dataDir, record).value, 'the new secret');
    assert.ok(!fs.existsSync(`${file}.new`));
  });

  it('a legacy DATA_DIR/secret is moved out of DATA_DIR, its value kept', () => {
    const cfg = tmp('cfg');
    const dataDir = tmp('data');
    fs.writeFileSync(path.join(dataDir, 'secret'), 'the old secret\n', { mode: 0o600 });
    const s = loadSealingSecret({ XDG_CONFIG_HOME: cfg }, dataDir, pinner());
    assert.equal(s.value, 'the old secret');
    assert.ok(!fs.existsSync(path.join(dataDir, 'secret')), 'gone from DATA_DIR');
    assert.equal(fs.readFileSync((s.source as { file: string }).file, 'utf8').trim(), 'the old secret');
  });
});
