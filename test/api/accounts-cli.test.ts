/**
 * The accounts CLI as README shows it (issue 28): `printf … | npm run -s accounts -- create … --password-stdin --json`
 * prints exactly one JSON object on stdout, without npm's banner and without the password, and the password read
 * from standard input is the account's (a login over HTTP with it returns the key). Without a password, or with both
 * ways at once, it refuses with exit code 2 and says how.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { client, startService, tempDataDir, type TestService } from '../helpers/service.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs `npm run -s accounts -- <args>` with `input` on standard input. */
function npmAccounts(dataDir: string, args: string[], input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '-s', 'accounts', '--', ...args], {
      cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, npm_config_update_notifier: 'false' }, stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c; });
    child.stderr.on('data', (c: Buffer) => { stderr += c; });
    child.stdin.on('error', () => undefined); // a command that exits before reading closes the pipe first
    child.stdin.end(input);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('accounts CLI: create with --password-stdin (README)', () => {
  let svc: TestService | undefined;
  after(async () => { await svc?.stop(); });

  it('stdout is exactly one JSON object without the password; the password from stdin logs in', async () => {
    const dataDir = tempDataDir();
    const password = 'stdin secret with spaces';
    const r = await npmAccounts(dataDir, ['create', '--email', 'pipe@example.com', '--password-stdin', '--plan', 'pro', '--json'], `${password}\n`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 1, r.stdout);
    const created = JSON.parse(r.stdout) as { id: number; email: string; plan: string; api_key: string };
    assert.deepEqual(Object.keys(created).sort(), ['api_key', 'email', 'id', 'plan']);
    assert.ok(!r.stdout.includes(password) && !r.stderr.includes(password), 'the password is printed nowhere');
    svc = await startService({ DATA_DIR: dataDir });
    const login = await client(svc.url).post('/api/v1/auth/login/', { email: 'pipe@example.com', password });
    assert.equal(login.status, 200, JSON.stringify(login.body));
    assert.equal(login.body.api_key, created.api_key);
  });

  it('no password, or both ways at once: exit 2 with how to give it; nothing created', async () => {
    const dataDir = tempDataDir();
    const none = await npmAccounts(dataDir, ['create', '--email', 'none@example.com', '--plan', 'pro', '--json'], '');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--password-stdin/);
    assert.equal(none.stdout, '');
    const both = await npmAccounts(dataDir, ['create', '--email', 'both@example.com', '--password-stdin', '--password', 'long enough one', '--plan', 'pro', '--json'], 'long enough two');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /not both/);
    const list = await npmAccounts(dataDir, ['list', '--json'], '');
    assert.deepEqual(JSON.parse(list.stdout), []);
  });
});
