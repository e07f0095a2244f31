/**
 * The Python client (clients/python, package `scrape_ai`) as a user installs it, against the real local service over
 * HTTP: `python3 -m build` makes its sdist and, from that sdist, its wheel (Debian's python3-build, `--no-isolation`
 * with Debian's setuptools: no download), the wheel is installed with `pip install --no-index --no-deps` into a fresh
 * venv, and that venv's Python runs `-m unittest discover -s clients/python/tests -v` from a folder outside the
 * repository (so `import scrape_ai` can only find the installed wheel). The service and the fixture site are started
 * here, with a Pro, a Free and a nearly-empty account; the Python tests read the service's address, the keys and the
 * fixture site's URL from the environment (clients/python/README.md, "Tests"). The expected quotes come from the
 * fixture site's own data (allQuotes()), not from a scrape.
 *
 * The build runs on BUILD_PYTHON (`/usr/bin/python3`: the `python3` on PATH may be a pyenv shim without `build`;
 * .ci/run installs python3-build and python3-venv). `PYTHON` names the venv's interpreter (default BUILD_PYTHON; the
 * wheel is pure Python 3.9+). A missing interpreter or module fails the test, it is not skipped.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { createAccount, startService, tempDataDir, type TestService } from '../helpers/service.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLIENT = path.join(ROOT, 'clients/python');
const BUILD_PYTHON = '/usr/bin/python3';
const PYTHON = process.env.PYTHON ?? BUILD_PYTHON;

/** Runs a command to its end; ENOENT (no such program) resolves with code null and the error. */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, cwd = ROOT): Promise<{ code: number | null; output: string; error?: Error }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
    const timer = setTimeout(() => { output += `\n[killed after ${timeoutMs} ms]`; child.kill('SIGKILL'); }, timeoutMs);
    child.once('error', (error) => { clearTimeout(timer); resolve({ code: null, output, error }); });
    child.once('close', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

/** The environment of the Python processes: no PYTHONPATH or PYTHONHOME of the caller, no pip configuration. */
function pythonEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PYTHONPATH|PYTHONHOME|PIP_\w+|VIRTUAL_ENV)$/.test(k)));
  // Loopback only: no proxy from the environment in between.
  for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY']) delete env[name];
  return { ...env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1', ...extra };
}

describe('Python client (clients/python): sdist and wheel built, the wheel installed in a venv, against the local service', () => {
  let site: FixtureSite;
  let svc: TestService;
  const dataDir = tempDataDir();
  const plansFile = path.join(dataDir, 'plans.json');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-python-'));
  const venv = path.join(work, 'venv');
  const venvPython = path.join(venv, 'bin', 'python');
  const version = /__version__\s*=\s*"([^"]+)"/.exec(fs.readFileSync(path.join(CLIENT, 'scrape_ai/_version.py'), 'utf8'))![1];
  /** The wheel the first test builds. */
  let wheel = '';

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
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('python3 -m build makes the sdist, and the wheel from it; both ship py.typed, the wheel has no dependencies', async (t) => {
    const check = await run(BUILD_PYTHON, ['-c', 'import build, setuptools, wheel, sys; print(sys.version.split()[0], build.__version__, setuptools.__version__)'], pythonEnv(), 30_000);
    assert.equal(check.code, 0, `${BUILD_PYTHON} with the build module is needed (Debian: apt-get install python3-build python3-venv):\n${check.error?.message ?? check.output}`);
    // A copy without what a build leaves (build/, *.egg-info): nothing is written into the repository.
    const src = path.join(work, 'src');
    fs.cpSync(CLIENT, src, { recursive: true, filter: (p) => !/^(build|dist|__pycache__|\.venv)$|\.egg-info$|\.pyc$/.test(path.basename(p)) });
    const dist = path.join(work, 'dist');
    // No --sdist/--wheel: the sdist first, then the wheel built from the unpacked sdist (so the sdist is complete).
    const built = await run(BUILD_PYTHON, ['-m', 'build', '--no-isolation', '--outdir', dist, src], pythonEnv(), 120_000);
    assert.equal(built.code, 0, `python3 -m build failed:\n${built.output}`);
    assert.deepEqual(fs.readdirSync(dist).sort(), [`scrape-ai-${version}.tar.gz`, `scrape_ai-${version}-py3-none-any.whl`]);
    wheel = path.join(dist, `scrape_ai-${version}-py3-none-any.whl`);

    const inspect = await run(BUILD_PYTHON, ['-c', [
      'import json, sys, tarfile, zipfile',
      'w = zipfile.ZipFile(sys.argv[2])',
      'meta = next(n for n in w.namelist() if n.endswith(".dist-info/METADATA"))',
      'requires = [l for l in w.read(meta).decode().splitlines() if l.startswith("Requires-Dist:")]',
      'print(json.dumps({"sdist": tarfile.open(sys.argv[1]).getnames(), "wheel": w.namelist(), "requires": requires}))',
    ].join('\n'), path.join(dist, `scrape-ai-${version}.tar.gz`), wheel], pythonEnv(), 30_000);
    assert.equal(inspect.code, 0, inspect.output);
    const { sdist, wheel: files, requires } = JSON.parse(inspect.output) as { sdist: string[]; wheel: string[]; requires: string[] };
    const modules = fs.readdirSync(path.join(CLIENT, 'scrape_ai')).filter((f) => f.endsWith('.py') || f === 'py.typed').map((f) => `scrape_ai/${f}`).sort();
    assert.ok(modules.includes('scrape_ai/py.typed'), 'clients/python/scrape_ai/py.typed exists');
    assert.deepEqual(files.filter((f) => f.startsWith('scrape_ai/')).sort(), modules, 'the wheel holds the package, py.typed included');
    for (const f of [...modules, 'pyproject.toml', 'README.md', 'PKG-INFO']) assert.ok(sdist.includes(`scrape-ai-${version}/${f}`), `${f} in the sdist: ${sdist.join(', ')}`);
    assert.deepEqual(requires, [], 'no dependencies: the wheel installs with --no-deps and without network');
    t.diagnostic(`Python ${check.output.trim().replace(' ', ', build ').replace(/ ([\d.]+)$/, ', setuptools $1')}: ${fs.readdirSync(dist).sort().join(', ')}`);
  });

  it('the wheel installs into a fresh venv without network, and imports from there', async (t) => {
    assert.ok(wheel, 'the wheel of the previous test');
    const created = await run(PYTHON, ['-m', 'venv', venv], pythonEnv(), 120_000);
    assert.equal(created.code, 0, `${PYTHON} -m venv failed (Debian: apt-get install python3-venv; PYTHON picks another interpreter):\n${created.error?.message ?? created.output}`);
    const installed = await run(venvPython, ['-m', 'pip', 'install', '--no-index', '--no-deps', wheel], pythonEnv(), 120_000);
    assert.equal(installed.code, 0, `pip install of the wheel failed:\n${installed.output}`);
    const probe = await run(venvPython, ['-c', [
      'import json, pathlib, sys, scrape_ai',
      'here = pathlib.Path(scrape_ai.__file__).resolve().parent',
      'print(json.dumps({"python": sys.version.split()[0], "dir": str(here), "typed": (here / "py.typed").is_file(), "version": scrape_ai.__version__, "client": scrape_ai.Client.__name__}))',
    ].join('\n')], pythonEnv(), 30_000, work);
    assert.equal(probe.code, 0, probe.output);
    const info = JSON.parse(probe.output) as { python: string; dir: string; typed: boolean; version: string; client: string };
    assert.ok(info.dir.startsWith(fs.realpathSync(venv) + path.sep) && info.dir.includes('site-packages'), `imported from the venv: ${info.dir}`);
    assert.deepEqual({ typed: info.typed, version: info.version, client: info.client }, { typed: true, version, client: 'Client' });
    t.diagnostic(`venv of Python ${info.python}: ${path.relative(venv, info.dir)}`);
  });

  it("the installed client passes clients/python/tests (unittest) against the service", async (t) => {
    assert.ok(fs.existsSync(venvPython), 'the venv of the previous test');
    const accountEnv = { SAI_PLANS_FILE: plansFile };
    const [pro, free, onecall] = await Promise.all([
      createAccount(dataDir, { plan: 'pro' }, accountEnv),
      createAccount(dataDir, { plan: 'free' }, accountEnv),
      createAccount(dataDir, { plan: 'onecall' }, accountEnv),
    ]);
    const env = pythonEnv({
      SAI_BASE_URL: svc.url,
      SAI_API_KEY: pro.api_key,
      SAI_TEST_EMAIL: pro.email,
      SAI_TEST_PASSWORD: pro.password,
      SAI_FREE_API_KEY: free.api_key,
      SAI_QUOTA_API_KEY: onecall.api_key,
      SAI_SITE_URL: site.url,
      // The first three listing pages, as the fixture site serves them.
      SAI_EXPECTED_QUOTES: JSON.stringify(allQuotes().slice(0, 30).map((q) => ({ text: q.text, author: q.author }))),
      // Every quote of every listing page: what a run of a generated config gives (generate(..., run=True)).
      SAI_ALL_QUOTES_COUNT: String(allQuotes().length),
    });
    // From the temporary folder, without PYTHONPATH: `import scrape_ai` finds only the venv's installed wheel.
    const result = await run(venvPython, ['-m', 'unittest', 'discover', '-s', path.join(CLIENT, 'tests'), '-v'], env, 150_000, work);
    assert.equal(result.code, 0, `Python's unittest failed:\n${result.output}\n--- service output (last 4,000 characters) ---\n${svc.output().slice(-4000)}`);
    assert.match(result.output, /\nOK\b/, result.output);
    assert.doesNotMatch(result.output, /skipped/i, `no test may be skipped:\n${result.output}`);
    const ran = /^Ran (\d+) tests? in .*$/m.exec(result.output);
    assert.ok(ran && Number(ran[1]) >= 40, `expected the whole suite to run:\n${result.output}`);
    t.diagnostic(ran[0]);
  });
});
