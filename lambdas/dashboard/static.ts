/**
 * The web dashboard's static files (issue 14; clients/dashboard, built by `npm run build:dashboard` into
 * clients/dashboard/dist): which paths are the dashboard's, the security headers every one of its answers
 * carries, and the answer for a path. The local service serves them from this module; on AWS the same files go
 * to S3 behind CloudFront, whose response-headers policy is built from {@link DASHBOARD_CSP} (lib/dashboard.ts),
 * so both deployments send the same policy. docs/decisions.md "Dashboard" says why S3 and CloudFront.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiResult } from '../http/middleware.ts';
import { errorResult } from '../http/middleware.ts';

/**
 * The Content-Security-Policy of every dashboard answer: scripts, styles, fonts and API calls from the
 * dashboard's own origin only; images also from `blob:` (a screenshot fetched with the key) and `data:`; no
 * inline script or style, no eval, no framing, no `<base>`, forms only to itself. (CSP Level 3, W3C.)
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers on every dashboard answer besides its type and caching (the same set CloudFront adds on AWS). */
export const DASHBOARD_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** An asset's file name: letters, digits, `.`, `_` and `-`, not starting with a dot (no `..`, no folders). */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
/** A file name with a content hash (`app-3F2A91BC.js`): cached for a year, as its name changes with it. */
const HASHED_NAME = /-[A-Za-z0-9]{8,}\.[a-z0-9]+$/;

/** True for the paths the dashboard answers: `/` and `/assets/…`. */
export function isDashboardPath(pathname: string): boolean {
  return pathname === '/' || pathname === '/index.html' || pathname.startsWith('/assets/');
}

/**
 * The folder of the built dashboard: `SAI_DASHBOARD_DIR`, else clients/dashboard/dist of this checkout.
 */
export function dashboardDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SAI_DASHBOARD_DIR ? resolve(env.SAI_DASHBOARD_DIR) : fileURLToPath(new URL('../../clients/dashboard/dist/', import.meta.url));
}

/**
 * The answer to `GET`/`HEAD` of a dashboard path, with {@link DASHBOARD_SECURITY_HEADERS}: `/` and
 * `/index.html` give index.html (`no-cache`: revalidated each time), `/assets/<name>` that file (a year and
 * `immutable` when its name carries a content hash, else `no-cache`). Other methods give 405; a name that is not
 * a plain file name, or no such file, 404; a dashboard that was never built, 404 saying how to build it.
 * The body is base64 (the proxy-result form binary files need).
 */
export async function dashboardAnswer(pathname: string, method: string, dir = dashboardDir()): Promise<ApiResult> {
  if (method !== 'GET' && method !== 'HEAD') {
    return errorResult('method_not_allowed', `${method} is not allowed on ${pathname}; allowed: GET, HEAD`, [], { Allow: 'GET, HEAD' });
  }
  const name = pathname === '/' || pathname === '/index.html' ? 'index.html' : pathname.slice('/assets/'.length);
  if (name !== 'index.html' && !ASSET_NAME.test(name)) return errorResult('not_found', `No dashboard file at ${pathname}`);
  const file = name === 'index.html' ? join(dir, 'index.html') : join(dir, 'assets', name);
  if (!resolve(file).startsWith(resolve(dir) + sep)) return errorResult('not_found', `No dashboard file at ${pathname}`);
  let body: Buffer;
  try {
    if (!(await stat(file)).isFile()) return errorResult('not_found', `No dashboard file at ${pathname}`);
    body = await readFile(file);
  } catch {
    return name === 'index.html'
      ? errorResult('not_found', 'The dashboard is not built: run `npm run build:dashboard` (npm start does it first)')
      : errorResult('not_found', `No dashboard file at ${pathname}`);
  }
  const cache = name !== 'index.html' && HASHED_NAME.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache';
  return {
    statusCode: 200,
    headers: {
      ...DASHBOARD_SECURITY_HEADERS,
      'Content-Type': CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': String(body.length),
      'Cache-Control': cache,
    },
    body: method === 'HEAD' ? '' : body.toString('base64'),
    isBase64Encoded: true,
  };
}
