/**
 * Local targets at first start (issue 40, item 4): the service refuses loopback targets by default, README's Set up
 * says so before the walk-through does, and the one command it gives for local development, `npm run start:dev`,
 * starts the service with loopback allowed. Over real HTTP: the same tool call on a page of the fixture site answers
 * 400 `target_forbidden` from `npm start`'s defaults and 200 from `npm run start:dev`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { client, firstStartCredentials, startService, tempDataDir, type TestService } from '../helpers/service.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const setUp = readme.slice(readme.indexOf('## Set up'), readme.indexOf('\n## ', readme.indexOf('## Set up') + 1));

/** `npm run -s start:dev` in its own process group (npm, its shell and the service), on a free port. */
async function startDev(dataDir: string): Promise<{ url: string; proc: ChildProcess; stop(): Promise<void> }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SAI_ACCESS_LOG: '0', SAI_WORKERS: '1', SAI_TOOL_WORKERS: '1' };
  delete env.SAI_OUTBOUND_ALLOW;
  const proc = spawn('npm', ['run', '-s', 'start:dev'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    try { process.kill(-proc.pid!, 'SIGTERM'); } catch { /* already gone */ }
    await exited;
  };
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { void stop(); reject(new Error(`npm run start:dev did not start in 120 s:\n${out}`)); }, 120_000);
    proc.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`npm run start:dev exited with ${code}:\n${out}`)); });
  });
  return { url, proc, stop };
}

describe('local targets at first start', () => {
  let site: FixtureSite;
  before(async () => { site = await startFixtureSite(); });
  after(async () => { await site?.close(); });

  it('README\'s Set up says local targets are refused by default and gives npm run start:dev, which package.json defines with loopback allowed', () => {
    assert.ok(setUp.length > 200, 'the Set up section');
    assert.match(setUp, /Local targets are refused by default/);
    assert.match(setUp, /target_forbidden/);
    assert.match(setUp, /npm run start:dev/);
    assert.ok(readme.indexOf('npm run start:dev') < readme.indexOf('## Walk-through with curl'), 'said before the walk-through');
    const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.match(scripts['start:dev']!, /^SAI_OUTBOUND_ALLOW=127\.0\.0\.0\/8,::1 npm start$/);
  });

  it('npm start\'s defaults refuse a loopback target with 400 target_forbidden; npm run start:dev reaches it', async () => {
    const target = `${site.url}/article/`;
    let plain: TestService | undefined;
    try {
      plain = await startService({ SAI_OUTBOUND_ALLOW: '' });
      const refused = await client(plain.url, firstStartCredentials(plain).apiKey).post('/api/v1/tools/seo-analyzer/', { url: target });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'target_forbidden');
    } finally {
      await plain?.stop();
    }
    const dataDir = tempDataDir();
    const dev = await startDev(dataDir);
    try {
      const key = fs.readFileSync(path.join(dataDir, 'first-start-credentials.txt'), 'utf8').match(/api key:\s+(\S+)/)![1]!;
      const allowed = await client(dev.url, key).post('/api/v1/tools/seo-analyzer/', { url: target });
      assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
      assert.equal(allowed.body.lang, 'en-GB');
    } finally {
      await dev.stop();
    }
  });
});
