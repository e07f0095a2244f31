/**
 * The TypeScript client as an npm package (clients/typescript, `@scrape-ai/client`), as a user gets it: `npm pack`
 * (its `prepack` builds dist/ with build.mjs), the tarball installed into an empty project with `npm install`, its
 * dependencies (commander, and whatever the package declares) fetched from a loopback registry of this test that serves
 * the copies in the repository's node_modules (no network: packuments from package-lock.json, tarballs made with tar),
 * then used on the machine's older Node (20 here; the oldest `node` found on PATH or in /usr/bin, /usr/local/bin):
 * a `.mjs` file imports it and calls a loopback server of this test, the installed `sai` bin prints its help, and the
 * repository's `tsc` type-checks a `.ts` consumer against the installed `.d.ts` (`--module nodenext --strict`, no
 * skipLibCheck, no @types/node), and the installed `sai run --local` runs a config against the fixture site with the
 * engine bundled into the package (dist/local-engine.js; issue 40), the folder holding no checkout.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { quotesConfigYaml } from '../fixtures/site/quotes-config.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const PACKAGE = path.join(ROOT, 'clients/typescript');

interface Result { code: number; stdout: string; stderr: string }

/** Runs a program to its end without blocking this process (the loopback server answers meanwhile). */
function exec(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Result> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr: err && code === -1 ? `${stderr}\n${err.message}` : stderr });
    });
  });
}

/** The oldest Node on this machine other than the project's own (node_modules/.bin/node), with its version. */
function oldestNode(): { bin: string; version: string } {
  const own = fs.realpathSync(process.execPath);
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/local/bin'].filter(Boolean);
  const found = new Map<string, { bin: string; version: string }>();
  for (const dir of dirs) {
    const bin = path.join(dir, 'node');
    let real: string;
    try { real = fs.realpathSync(bin); } catch { continue; }
    if (real === own || found.has(real)) continue;
    try {
      found.set(real, { bin, version: execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim() });
    } catch { /* not runnable */ }
  }
  const major = (v: string) => Number(/^v(\d+)/.exec(v)?.[1] ?? Infinity);
  const [oldest] = [...found.values()].sort((a, b) => major(a.version) - major(b.version));
  return oldest ?? { bin: process.execPath, version: process.version };
}

/**
 * A registry on loopback that serves the packages installed in the repository's node_modules: `GET /<name>` is a
 * packument with every version package-lock.json places there, `GET /-/<name>/<version>.tgz` that folder as a tarball
 * (its own node_modules left out). A package the repository does not have is a 404, as on the real registry.
 */
async function startNodeModulesRegistry(): Promise<{ url: string; requested: Set<string>; close: () => Promise<void> }> {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; link?: boolean }> };
  const copies = new Map<string, Map<string, string>>();
  for (const [where, entry] of Object.entries(lock.packages)) {
    const name = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(where)?.[1];
    if (!name || entry.link || !entry.version || !fs.existsSync(path.join(ROOT, where, 'package.json'))) continue;
    if (!copies.has(name)) copies.set(name, new Map());
    copies.get(name)!.set(entry.version, path.join(ROOT, where));
  }
  const requested = new Set<string>();
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url!, 'http://x').pathname);
    const tarball = /^\/-\/(.+)\/([^/]+)\.tgz$/.exec(url);
    if (tarball) {
      const dir = copies.get(tarball[1])?.get(tarball[2]);
      if (!dir) return res.writeHead(404).end();
      requested.add(`${tarball[1]}@${tarball[2]}`);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const tar = spawn('tar', ['-czf', '-', '-C', dir, '--exclude=./node_modules', '--transform', 's,^\\.,package,', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
      tar.stdout.pipe(res);
      return;
    }
    const name = url.slice(1);
    const versions = copies.get(name);
    if (!versions) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
    const base = `http://${req.headers.host}`;
    const manifests = Object.fromEntries([...versions].map(([version, dir]) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      return [version, { ...manifest, name, version, dist: { tarball: `${base}/-/${encodeURIComponent(name)}/${version}.tgz` } }];
    }));
    const latest = [...versions.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).at(-1);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name, 'dist-tags': { latest }, versions: manifests }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requested,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

describe('TypeScript client package (npm pack, install from the tarball without network, machine Node)', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-ts-pack-'));
  const project = path.join(work, 'project');
  const node = oldestNode();
  // npm itself runs on that Node too (its `#!/usr/bin/env node`), as for a user of it; no npm_* of an outer `npm test`.
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))),
    PATH: `${path.dirname(node.bin)}${path.delimiter}${process.env.PATH ?? ''}`,
    npm_config_update_notifier: 'false',
    npm_config_cache: path.join(work, 'npm-cache'),
  };
  const npm = fs.existsSync(path.join(path.dirname(node.bin), 'npm')) ? path.join(path.dirname(node.bin), 'npm') : 'npm';
  let packed: { filename: string; files: Array<{ path: string }> };
  let install: Result;
  /** The packages npm fetched from the loopback registry: the package's dependencies. */
  let fromRegistry: string[] = [];
  let server: http.Server;
  let baseUrl: string;
  let site: FixtureSite;
  const seen: Array<{ method: string; url: string; authorization: string; userAgent: string }> = [];

  before(async () => {
    const pack = await exec(npm, ['pack', '--json', '--pack-destination', work], { cwd: PACKAGE, env });
    assert.equal(pack.code, 0, `npm pack of clients/typescript failed:\n${pack.stdout}\n${pack.stderr}`);
    // --json: the JSON array after what prepack printed.
    [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('\n[') + 1));

    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    const registry = await startNodeModulesRegistry();
    try {
      install = await exec(npm, ['install', '--registry', registry.url, '--no-audit', '--no-fund', path.join(work, packed.filename)], { cwd: project, env });
    } finally {
      await registry.close();
    }
    assert.equal(install.code, 0, `npm install of the tarball failed:\n${install.stdout}\n${install.stderr}`);
    fromRegistry = [...registry.requested].sort();

    server = http.createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization ?? '', userAgent: req.headers['user-agent'] ?? '' });
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/api/v1/me/') return json(200, { user: { email: 'ana@example.com' }, subscription: { plan: 'pro' } });
      return json(404, { error: 'Not found', code: 'not_found', details: [] });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    site = await startFixtureSite();
  });
  after(async () => {
    await site?.close();
    await new Promise((resolve) => server?.close(resolve));
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('the tarball holds the built package: dist/*.js and dist/*.d.ts of every src file, the bin, no TypeScript source', (t) => {
    t.diagnostic(`npm and the checks run on ${node.bin} ${node.version}`);
    const files = packed.files.map((f) => f.path).sort();
    for (const name of fs.readdirSync(path.join(PACKAGE, 'src')).filter((f) => f.endsWith('.ts') && f !== 'local-engine.ts')) {
      const base = name.replace(/\.ts$/, '');
      assert.ok(files.includes(`dist/${base}.js`) && files.includes(`dist/${base}.d.ts`), `dist/${base}.js and .d.ts in ${files.join(', ')}`);
    }
    assert.ok(files.includes('bin/sai.js') && files.includes('package.json') && files.includes('README.md'), files.join(', '));
    // The engine of `run --local` is one bundle (no declarations: it is not part of the library's interface).
    assert.ok(files.includes('dist/local-engine.js') && !files.includes('dist/local-engine.d.ts'), files.join(', '));
    assert.deepEqual(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), [], 'no .ts source is shipped');
    assert.deepEqual(files.filter((f) => !/^(dist|bin)\/|^(package\.json|README\.md)$/.test(f)), [], 'nothing but dist/, bin/, package.json and README.md');
    const installed = JSON.parse(fs.readFileSync(path.join(project, 'node_modules/@scrape-ai/client/package.json'), 'utf8'));
    assert.deepEqual(installed.exports['.'], { types: './dist/index.d.ts', import: './dist/index.js' });
    assert.equal(installed.bin.sai, './bin/sai.js');
    assert.ok(installed.dependencies.commander, 'commander stays a dependency of the package');
    assert.ok(fromRegistry.includes(`commander@${installed.dependencies.commander}`), `commander came from the registry: ${fromRegistry.join(', ')}`);
    // Declarations refer to .js files of the package, never to .ts ones or to the repository.
    for (const f of files.filter((f) => f.endsWith('.d.ts'))) {
      const text = fs.readFileSync(path.join(project, 'node_modules/@scrape-ai/client', f), 'utf8');
      assert.doesNotMatch(text, /from\s+["'][^"']+\.ts["']|import\(["'][^"']+\.ts["']\)|\.\.\/\.\.\//, f);
    }
    const unsupported = [...install.stderr.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map((m) => m[1]);
    t.diagnostic(`${packed.filename}: ${files.length} files; dependencies installed: ${fromRegistry.join(', ')}; npm warned EBADENGINE for: ${unsupported.join(', ') || 'nothing'}`);
    // The `sai` command needs Node 20 (README); on it the install warns about nothing (issue 28).
    if (Number(node.version.replace(/^v/, '').split('.')[0]) >= 20) assert.deepEqual(unsupported, [], `npm on ${node.version} warned EBADENGINE`);
  });

  it('an .mjs file imports the package on that Node and calls a loopback server; errors are its classes', async () => {
    fs.writeFileSync(path.join(project, 'use.mjs'), `
import { ScrapeAI, ScrapeAIError, NotFoundError, USER_AGENT } from '@scrape-ai/client';
const sai = new ScrapeAI({ apiKey: 'sai_test_key', baseUrl: process.argv[2], maxRetries: 0 });
const me = await sai.me();
let error;
try { await sai.getJob('00000000-0000-4000-8000-000000000000'); } catch (err) { error = err; }
console.log(JSON.stringify({
  node: process.version, email: me.user.email, plan: me.subscription.plan, userAgent: USER_AGENT,
  notFound: error instanceof NotFoundError, scrapeAIError: error instanceof ScrapeAIError, status: error?.status, code: error?.code,
}));
`);
    const r = await exec(node.bin, ['use.mjs', baseUrl], { cwd: project, env });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const out = JSON.parse(r.stdout);
    assert.equal(out.node, node.version);
    assert.deepEqual({ ...out, node: undefined, userAgent: undefined }, {
      node: undefined, userAgent: undefined, email: 'ana@example.com', plan: 'pro', notFound: true, scrapeAIError: true, status: 404, code: 'not_found',
    });
    assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), ['GET /api/v1/me/', 'GET /api/v1/jobs/00000000-0000-4000-8000-000000000000/status/']);
    assert.ok(seen.every((s) => s.authorization === 'Bearer sai_test_key' && s.userAgent === out.userAgent), JSON.stringify(seen));
  });

  it('the installed `sai` bin runs on that Node: --help, --version, a usage error', async () => {
    const sai = path.join(project, 'node_modules/.bin/sai');
    // Executed as a user's shell would: the link's shebang (`#!/usr/bin/env node`) finds that Node first on PATH.
    const help = await exec(sai, ['--help'], { cwd: project, env });
    assert.equal(help.code, 0, `${help.stdout}\n${help.stderr}`);
    assert.match(help.stdout, /^Usage: sai /m);
    for (const command of ['login', 'configs', 'run', 'results', 'tools', 'schedules', 'webhooks']) assert.match(help.stdout, new RegExp(`^  ${command}\\b`, 'm'), help.stdout);
    const version = await exec(sai, ['--version'], { cwd: project, env });
    assert.equal(version.stdout.trim(), JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8')).version);
    const usage = await exec(node.bin, [sai, 'run', '--no-such-option'], { cwd: project, env });
    assert.equal(usage.code, 2, `${usage.stdout}\n${usage.stderr}`);
    assert.match(usage.stderr, /unknown option '--no-such-option'/);
  });

  it('the installed `sai run --local` runs a config on that Node with the engine bundled into the package; a browser config says what to install', async () => {
    const sai = path.join(project, 'node_modules/.bin/sai');
    const yaml = path.join(project, 'quotes.yaml');
    fs.writeFileSync(yaml, quotesConfigYaml(`${site.url}/quotes/`, 2));
    const runEnv = { ...env, SAI_OUTBOUND_ALLOW: '127.0.0.0/8', XDG_CONFIG_HOME: path.join(work, 'config') };
    const r = await exec(sai, ['run', '--local', yaml, '--format', 'csv'], { cwd: project, env: runEnv });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.doesNotMatch(r.stderr, /Cannot find module/);
    const lines = r.stdout.replace(/^\uFEFF/, '').split('\r\n').filter(Boolean);
    assert.equal(lines[0], 'text,author');
    assert.equal(lines.length, 21, 'a header and the 20 quotes of two pages');
    assert.ok(lines[1]!.includes(allQuotes()[0]!.author), lines[1]);
    assert.match(r.stderr, /100% Completed: 20 rows from 2 pages \(lightweight engine\)/);
    const json = await exec(sai, ['run', '--local', yaml, '--json'], { cwd: project, env: runEnv });
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout).data.map((q: { author: string }) => q.author), allQuotes().slice(0, 20).map((q) => q.author));
    // The guard is the service's: loopback refused without the allowance.
    const refused = await exec(sai, ['run', '--local', yaml], { cwd: project, env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /target_forbidden|private|loopback/i);
    // The browser engine's packages are not bundled: a config that needs them says so and what to install.
    const heavy = path.join(project, 'heavy.yaml');
    fs.writeFileSync(heavy, quotesConfigYaml(`${site.url}/quotes/`, 1).replace('engine: lightweight', 'engine: heavy'));
    assert.match(fs.readFileSync(heavy, 'utf8'), /engine: heavy/);
    const browser = await exec(sai, ['run', '--local', heavy], { cwd: project, env: runEnv });
    assert.equal(browser.code, 1, `${browser.stdout}\n${browser.stderr}`);
    assert.match(browser.stderr, /needs the browser engine, and (puppeteer-core|@sparticuz\/chromium) is not installed.*npm install puppeteer-core@\S+ @sparticuz\/chromium@\S+/);
  });

  it("a TypeScript consumer type-checks against the installed .d.ts (repository's tsc, --module nodenext --strict)", async () => {
    fs.writeFileSync(path.join(project, 'consumer.ts'), `
import { ScrapeAI, NotFoundError, ScrapeAIError, RateLimitError, type Job, type ScrapeAIOptions } from '@scrape-ai/client';
const options: ScrapeAIOptions = { apiKey: 'sai_x', baseUrl: 'http://127.0.0.1:8787', maxRetries: 0 };
const sai = new ScrapeAI(options);
export async function statusOf(id: string): Promise<Job['status'] | null> {
  try {
    return (await sai.getJob(id)).status;
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    if (err instanceof RateLimitError) throw new Error(\`retry after \${err.retryAfterSeconds ?? '?'} s\`);
    if (err instanceof ScrapeAIError) throw new Error(String(err.code ?? err.status));
    throw err;
  }
}
export const rows: Promise<Array<Record<string, unknown>>> = sai.getResults('id');
// The types are real, not any: a wrong call is an error.
// @ts-expect-error run() takes a config_id or yaml_content
void sai.run({ url: 'https://example.com/' });
`);
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const r = await exec(process.execPath, [tsc, '--module', 'nodenext', '--strict', '--noEmit', 'consumer.ts'], { cwd: project, env });
    assert.equal(r.code, 0, `tsc failed:\n${r.stdout}\n${r.stderr}`);
    // And a wrong use is caught.
    fs.writeFileSync(path.join(project, 'wrong.ts'), `import { ScrapeAI } from '@scrape-ai/client';\nconst n: number = new ScrapeAI().me();\nexport { n };\n`);
    const wrong = await exec(process.execPath, [tsc, '--module', 'nodenext', '--strict', '--noEmit', 'wrong.ts'], { cwd: project, env });
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stdout, /wrong\.ts\(2,7\): error TS2322/);
  });
});
