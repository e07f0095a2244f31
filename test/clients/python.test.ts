/**
 * The Python client (clients/python, package `scrape_ai`) against the real local service over HTTP: starts the
 * fixture site and the service, creates a Pro, a Free and a nearly-empty account, and runs
 * `python3 -m unittest discover -s clients/python/tests -v` with PYTHONPATH=clients/python. The Python tests
 * read the service's address, the keys and the fixture site's URL from the environment (clients/python/README.md,
 * "Tests"). The expected quotes come from the fixture site's own data (allQuotes()), not from a scrape.
 * `PYTHON` names another interpreter (default `python3`); a missing interpreter fails the test, it is not skipped.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { createAccount, startService, tempDataDir, type TestService } from '../helpers/service.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const PYTHON = process.env.PYTHON ?? 'python3';

/** Runs a command to its end; ENOENT (no such program) resolves with code null and the error. */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; output: string; error?: Error }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
    const timer = setTimeout(() => { output += `\n[killed after ${timeoutMs} ms]`; child.kill('SIGKILL'); }, timeoutMs);
    child.once('error', (error) => { clearTimeout(timer); resolve({ code: null, output, error }); });
    child.once('close', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

describe('Python client (clients/python) against the local service', () => {
  let site: FixtureSite;
  let svc: TestService;
  const dataDir = tempDataDir();
  const plansFile = path.join(dataDir, 'plans.json');

  before(async () => {
    // The built-in plans plus one whose month holds a single tool call (0.1 credit), for quota_exceeded.
    const builtin = JSON.parse(fs.readFileSync(path.join(ROOT, 'lambdas/core/plans.json'), 'utf8'));
    builtin.credits.plans.onecall = { ...builtin.credits.plans.pro, label: 'One call', credits_per_month: 0.1 };
    fs.writeFileSync(plansFile, JSON.stringify(builtin));
    site = await startFixtureSite();
    svc = await startService({ DATA_DIR: dataDir, SAI_PLANS_FILE: plansFile });
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('python3 -m unittest discover -s clients/python/tests passes', async (t) => {
    const version = await run(PYTHON, ['--version'], process.env, 10_000);
    assert.ok(version.code === 0, `${PYTHON} is needed for the Python client's tests (set PYTHON to another interpreter): ${version.error?.message ?? version.output}`);

    const accountEnv = { SAI_PLANS_FILE: plansFile };
    const [pro, free, onecall] = await Promise.all([
      createAccount(dataDir, { plan: 'pro' }, accountEnv),
      createAccount(dataDir, { plan: 'free' }, accountEnv),
      createAccount(dataDir, { plan: 'onecall' }, accountEnv),
    ]);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PYTHONPATH: path.join(ROOT, 'clients/python'),
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONUNBUFFERED: '1',
      SAI_BASE_URL: svc.url,
      SAI_API_KEY: pro.api_key,
      SAI_TEST_EMAIL: pro.email,
      SAI_TEST_PASSWORD: pro.password,
      SAI_FREE_API_KEY: free.api_key,
      SAI_QUOTA_API_KEY: onecall.api_key,
      SAI_SITE_URL: site.url,
      // The first three listing pages, as the fixture site serves them.
      SAI_EXPECTED_QUOTES: JSON.stringify(allQuotes().slice(0, 30).map((q) => ({ text: q.text, author: q.author }))),
    };
    // Loopback only: no proxy from the environment in between.
    for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY']) delete env[name];

    const result = await run(PYTHON, ['-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-v'], env, 150_000);
    assert.equal(result.code, 0, `Python's unittest failed:\n${result.output}\n--- service output (last 4,000 characters) ---\n${svc.output().slice(-4000)}`);
    assert.match(result.output, /\nOK\b/, result.output);
    assert.doesNotMatch(result.output, /skipped/i, `no test may be skipped:\n${result.output}`);
    const ran = /^Ran (\d+) tests? in .*$/m.exec(result.output);
    assert.ok(ran && Number(ran[1]) >= 40, `expected the whole suite to run:\n${result.output}`);
    t.diagnostic(`${version.output.trim()}: ${ran[0]}`);
  });
});
