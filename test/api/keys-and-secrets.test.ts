/**
 * Keys and secrets of the local service, through the real service and the real accounts CLI: DATA_DIR is
 * private and holds neither a key nor the sealing secret (a copy of it gives nothing away); `rotate-key`
 * replaces a key at once, although the service caches authorizer results; `rotate-secret` is refused
 * while the service runs and, once it is stopped, seals every key (and webhook signing secret) again so that logins
 * return the same keys and webhooks sign with the same secrets.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { client, createAccount, firstStartCredentials, runAccounts, startService, tempDataDir, type TestService } from '../helpers/service.ts';

/** Every file under a folder with its mode. */
function walk(dir: string): Array<{ file: string; mode: number; dir: boolean }> {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    const m = fs.statSync(p).mode & 0o777;
    return e.isDirectory() ? [{ file: p, mode: m, dir: true }, ...walk(p)] : [{ file: p, mode: m, dir: false }];
  });
}

const VALID = (url: string) => `target: { url: "${url}" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
`;

describe('first start on a terminal', () => {
  it('prints the credentials once and writes no file (script(1) of util-linux gives the service a terminal)', async () => {
    const dataDir = tempDataDir();
    const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', SAI_WORKERS: '1', SAI_ACCESS_LOG: '0' };
    const child = spawn('script', ['-qefc', `${JSON.stringify(process.execPath)} bin/local.ts`, '/dev/null'], { cwd: path.resolve(import.meta.dirname, '../..'), env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start in 20 s:\n${out}`)), 20_000);
        child.stdout.on('data', () => { if (/listening on/.test(out)) { clearTimeout(timer); resolve(); } });
        child.once('exit', () => { clearTimeout(timer); reject(new Error(`exited:\n${out}`)); });
      });
    } finally {
      child.kill('SIGTERM');
    }
    assert.match(out, /First start: created an account \(shown once/);
    assert.match(out, /password: \S+/);
    assert.match(out, /api key:\s+sai_[A-Za-z0-9]{40}/);
    assert.ok(!fs.existsSync(path.join(dataDir, 'first-start-credentials.txt')));
  });
});

describe('keys and secrets', () => {
  const dataDir = tempDataDir();
  const secretFile = path.join(tempDataDir(), 'sealing.secret');
  const env = { DATA_DIR: dataDir, SAI_SECRET_FILE: secretFile };
  let svc: TestService;
  let site: FixtureSite;
  let ana: Awaited<ReturnType<typeof createAccount>>;
  let bo: Awaited<ReturnType<typeof createAccount>>;

  before(async () => {
    site = await startFixtureSite();
    svc = await startService(env);
    ana = await createAccount(dataDir, { plan: 'pro' }, env);
    bo = await createAccount(dataDir, { plan: 'growth' }, env);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('DATA_DIR is 0700 with every file 0600, after configs, a job and its rows; no file in it holds a key or the secret', async () => {
    const api = client(svc.url, ana.api_key);
    assert.equal((await api.post('/api/v1/configs/', { name: 'c', target_url: 'http://127.0.0.1:9/', yaml_content: VALID('http://127.0.0.1:9/') })).status, 201);
    const job = await api.post('/api/v1/run/', { yaml_content: VALID(`${site.url}/quotes/`) });
    assert.equal((await api.waitForJob(job.body.id)).job.status, 'completed');
    assert.equal(fs.statSync(dataDir).mode & 0o777, 0o700);
    const entries = walk(dataDir);
    assert.ok(entries.some((e) => e.file.endsWith('scrape-ai.db-wal')), 'the WAL is there');
    assert.ok(entries.some((e) => e.file.endsWith('.preview.json')), 'the rows are there');
    for (const e of entries) assert.equal(e.mode, e.dir ? 0o700 : 0o600, `${e.file} is ${e.mode.toString(8)}`);
    const secret = fs.readFileSync(secretFile, 'utf8').trim();
    const first = firstStartCredentials(svc);
    for (const e of entries.filter((x) => !x.dir && x.file !== first.file)) {
      const bytes = fs.readFileSync(e.file).toString('latin1');
      for (const needle of [ana.api_key, bo.api_key, first.apiKey, secret]) assert.ok(!bytes.includes(needle), `${e.file} holds a secret`);
    }
  });

  it('rotate-key: the old key is refused at once, the new one works, login returns it', async () => {
    const before = client(svc.url, bo.api_key);
    assert.equal((await before.get('/api/v1/me/')).status, 200, 'the authorizer result is now cached');
    const r = await runAccounts(dataDir, ['rotate-key', '--email', bo.email, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const rotated = JSON.parse(r.stdout) as { api_key: string; email: string };
    assert.notEqual(rotated.api_key, bo.api_key);
    const stale = await before.get('/api/v1/me/');
    assert.equal(stale.status, 401);
    assert.match(stale.body.error, /replaced/);
    assert.equal((await client(svc.url, rotated.api_key).get('/api/v1/me/')).status, 200);
    const login = await client(svc.url).post('/api/v1/auth/login/', { email: bo.email, password: bo.password });
    assert.equal(login.body.api_key, rotated.api_key);
    bo = { ...bo, api_key: rotated.api_key };
    const unknown = await runAccounts(dataDir, ['rotate-key', '--email', 'nobody@example.com'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No account with the email nobody@example.com/);
  });

  it('rotate-secret: refused while the service runs; afterwards every key and webhook secret is sealed again: logins return the same keys, webhooks sign with the same secret', async () => {
    // A webhook of ana's, on a receiver that verifies with the secret it was given (issue 26).
    const received: Array<{ body: string; headers: Record<string, string> }> = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => { received.push({ body, headers: req.headers as Record<string, string> }); res.writeHead(204).end(); });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hook = await client(svc.url, ana.api_key).post('/api/v1/webhooks/', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, events: ['job.completed', 'job.failed'] });
    assert.equal(hook.status, 201);
    const busy = await runAccounts(dataDir, ['rotate-secret'], env);
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /in use by another scrape-ai service/);
    await svc.stop();
    const oldSecret = fs.readFileSync(secretFile, 'utf8');
    const r = await runAccounts(dataDir, ['rotate-secret', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { file: secretFile, resealed: 3, unreadable: 0, webhook_secrets: 1 });
    assert.notEqual(fs.readFileSync(secretFile, 'utf8'), oldSecret);
    assert.equal(fs.statSync(secretFile).mode & 0o777, 0o600);
    assert.ok(!fs.existsSync(`${secretFile}.new`));

    svc = await startService(env);
    for (const a of [ana, bo]) {
      const login = await client(svc.url).post('/api/v1/auth/login/', { email: a.email, password: a.password });
      assert.equal(login.body.api_key, a.api_key, `${a.email} keeps its key`);
    }
    const run = await client(svc.url, ana.api_key).post('/api/v1/run/', { yaml_content: VALID(`${site.url}/quotes/`) });
    await client(svc.url, ana.api_key).waitForJob(run.body.id);
    const end = Date.now() + 20_000;
    while (!received.length && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    receiver.closeAllConnections();
    receiver.close();
    assert.equal(received.length, 1, 'the delivery after the rotation');
    assert.equal((new Webhook(hook.body.secret).verify(received[0]!.body, received[0]!.headers) as { data: { job_id: string } }).data.job_id, run.body.id);
    const envSecret = await runAccounts(dataDir, ['rotate-secret'], { DATA_DIR: dataDir, SAI_SECRET: 'x' });
    assert.equal(envSecret.code, 1);
    assert.match(envSecret.stderr, /comes from SAI_SECRET/);
  });

  it('another secret (another user\'s HOME, a wrong file) is refused, never used; reset-secret starts over and keys keep working', async () => {
    const elsewhere = await runAccounts(dataDir, ['list'], { ...env, SAI_SECRET_FILE: path.join(tempDataDir(), 'other.secret') });
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.stderr, /secret that seals this DATA_DIR's API keys is missing/);
    const wrong = await runAccounts(dataDir, ['list'], { DATA_DIR: dataDir, SAI_SECRET: 'not it' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /not the one this DATA_DIR's API keys are sealed with/);

    await svc.stop();
    const reset = await runAccounts(dataDir, ['reset-secret', '--json'], env);
    assert.equal(reset.code, 0, reset.stderr);
    assert.deepEqual(JSON.parse(reset.stdout), { file: secretFile });
    svc = await startService(env);
    assert.equal((await client(svc.url, ana.api_key).get('/api/v1/me/')).status, 200, 'the key keeps working');
    const login = await client(svc.url).post('/api/v1/auth/login/', { email: ana.email, password: ana.password });
    assert.equal(login.status, 200);
    assert.notEqual(login.body.api_key, ana.api_key, 'the sealed copy no longer opens: a new key is issued');
    assert.equal((await client(svc.url, ana.api_key).get('/api/v1/me/')).status, 401, 'and the old one is replaced');
  });
});
