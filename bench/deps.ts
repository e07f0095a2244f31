// Makes sure the peer crawlers and the static server are on the machine:
//   - nginx and Scrapy from Debian (apt-get, when running as root; else print the command and fail),
//   - Crawlee (CheerioCrawler, PuppeteerCrawler) and its puppeteer-core from npm into bench/.peers/node_modules
//     (kept out of the project's dependencies);
//   - linkinator (the broken-link checker's peer) from npm into bench/.peers/node_modules, without saving it anywhere.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PEERS_DIR } from './paths.ts';

export const PYTHON = '/usr/bin/python3';
const APT_PACKAGES = ['nginx', 'python3-scrapy'];
const POLICY_RC = '/usr/sbin/policy-rc.d';

export function findNginx(): string | undefined {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx']) {
    if (existsSync(p)) return p;
  }
  const r = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p ? p : undefined;
}

export function hasScrapy(): boolean {
  if (!existsSync(PYTHON)) return false;
  return spawnSync(PYTHON, ['-c', 'import scrapy'], { stdio: 'ignore' }).status === 0;
}

export function scrapyVersion(): string {
  const r = spawnSync(PYTHON, ['-c', 'import scrapy, twisted; print(scrapy.__version__, twisted.__version__)'], {
    encoding: 'utf8',
  });
  const [s, t] = r.stdout.trim().split(' ');
  return `Scrapy ${s} (Twisted ${t})`;
}

export function nginxVersion(nginx: string): string {
  const r = spawnSync(nginx, ['-v'], { encoding: 'utf8' });
  return (r.stderr || r.stdout).trim().replace(/^nginx version:\s*/, '');
}

/** The packages of bench/.peers/package.json that the benches load. */
const PEER_PACKAGES = ['@crawlee/cheerio', '@crawlee/puppeteer', 'puppeteer-core'];

export function hasCrawlee(): boolean {
  return PEER_PACKAGES.every((p) => existsSync(join(PEERS_DIR, 'node_modules', p, 'package.json')));
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): void {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw new Error(`${cmd} failed: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

/**
 * nginx (and Scrapy unless `scrapy: false`) from Debian. Installs them with apt-get when missing and running as
 * root; otherwise throws with the command to run.
 */
export function ensureSystemPackages(opts: { scrapy?: boolean } = {}): { nginx: string } {
  const wantScrapy = opts.scrapy ?? true;
  const missing: string[] = [];
  if (!findNginx()) missing.push('nginx');
  if (wantScrapy && !hasScrapy()) missing.push('python3-scrapy');
  if (missing.length > 0) {
    const command = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
    if (process.getuid?.() !== 0) {
      throw new Error(`missing ${missing.join(', ')}: install with\n  sudo sh -c '${command}'\nthen run the bench again`);
    }
    console.log(`installing ${missing.join(', ')} from Debian (${APT_PACKAGES.join(', ')} are needed by the bench)`);
    // Keep the package's postinst from starting a system nginx on port 80: the bench runs its own.
    const ownPolicy = !existsSync(POLICY_RC);
    if (ownPolicy) writeFileSync(POLICY_RC, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    try {
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      run('apt-get', ['update'], { env });
      run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
    } finally {
      if (ownPolicy) rmSync(POLICY_RC, { force: true });
    }
  }
  const nginx = findNginx();
  if (!nginx) throw new Error('nginx still not found after installing it');
  if (wantScrapy && !hasScrapy()) throw new Error(`${PYTHON} -c 'import scrapy' still fails after installing python3-scrapy`);
  return { nginx };
}

/** Crawlee (cheerio and puppeteer crawlers, puppeteer-core) into bench/.peers/node_modules, from its lock file. */
export function ensureCrawlee(): void {
  if (hasCrawlee()) return;
  console.log(`installing ${PEER_PACKAGES.join(', ')} into bench/.peers (first run)`);
  const lock = existsSync(join(PEERS_DIR, 'package-lock.json'));
  run('npm', [lock ? 'ci' : 'install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: PEERS_DIR });
  if (!hasCrawlee()) throw new Error(`${PEER_PACKAGES.join(', ')} not all found in ${PEERS_DIR}/node_modules after npm install`);
}

/** wrk, the HTTP load generator of `npm run bench -- api` (Debian's package). */
export function findWrk(): string | undefined {
  for (const p of ['/usr/bin/wrk', '/usr/local/bin/wrk']) {
    if (existsSync(p)) return p;
  }
  const r = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p ? p : undefined;
}

/** wrk's version line, e.g. "debian/4.1.0-3+b2 [epoll]". */
export function wrkVersion(wrk: string): string {
  const r = spawnSync(wrk, ['-v'], { encoding: 'utf8' });
  return /^wrk\s+(\S+(?:\s+\[\w+\])?)/.exec((r.stdout || r.stderr).trim())?.[1] ?? 'unknown';
}

/**
 * wrk from Debian: installed with apt-get when missing and running as root; otherwise throws with the command
 * to run. @returns its path.
 */
export function ensureWrk(): string {
  const found = findWrk();
  if (found) return found;
  const command = 'apt-get update && apt-get install -y --no-install-recommends wrk';
  if (process.getuid?.() !== 0) throw new Error(`missing wrk: install with\n  sudo sh -c '${command}'\nthen run the bench again`);
  console.log('installing wrk from Debian (needed by the bench)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], { env });
  run('apt-get', ['install', '-y', '--no-install-recommends', 'wrk'], { env });
  const wrk = findWrk();
  if (!wrk) throw new Error('wrk still not found after installing it');
  return wrk;
}

/** linkinator, the peer of `npm run bench -- links`: its version, pinned (MIT, JustinBeckwith/linkinator). */
export const LINKINATOR_VERSION = '8.1.0';

/** The installed linkinator's entry module, or undefined when it is missing or not {@link LINKINATOR_VERSION}. */
export function linkinatorEntry(): string | undefined {
  const dir = join(PEERS_DIR, 'node_modules', 'linkinator');
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string };
    if (pkg.version !== LINKINATOR_VERSION) return undefined;
  } catch {
    return undefined;
  }
  const entry = join(dir, 'build', 'src', 'index.js');
  return existsSync(entry) ? entry : undefined;
}

/**
 * linkinator into bench/.peers/node_modules (not a dependency of the project, nor of bench/.peers/package.json:
 * `--no-save` leaves both package files as they are; a later `npm ci` there for Crawlee removes it, and this
 * puts it back). @returns its entry module.
 */
export function ensureLinkinator(): string {
  const found = linkinatorEntry();
  if (found) return found;
  console.log(`installing linkinator@${LINKINATOR_VERSION} into bench/.peers (first run, not saved to any package.json)`);
  run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `linkinator@${LINKINATOR_VERSION}`], { cwd: PEERS_DIR });
  const entry = linkinatorEntry();
  if (!entry) throw new Error(`linkinator@${LINKINATOR_VERSION} not found in ${PEERS_DIR}/node_modules after npm install`);
  return entry;
}
