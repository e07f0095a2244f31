/**
 * Builds the web dashboard (clients/dashboard, issue 14) into clients/dashboard/dist with esbuild:
 * `src/main.tsx` and the CSS it imports are bundled and minified into `dist/assets/app-<HASH>.js` and
 * `dist/assets/app-<HASH>.css` (esbuild's content hash, so the served files can be cached for a year), and
 * `index.html` is the template with `%APP_JS%` and `%APP_CSS%` replaced by their paths.
 *
 * Deterministic (the same sources give the same bytes and names), offline, about 0.1 s. The old dist/ is
 * removed first, so it never holds files of an earlier build.
 *
 * Usage: node scripts/build-dashboard.ts   (npm run build:dashboard; npm start and npm test run it too)
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '..');
const APP = path.join(ROOT, 'clients/dashboard');
const DIST = path.join(APP, 'dist');

/** What a build wrote: the asset paths as index.html names them (`/assets/app-….js`). */
interface DashboardBuild {
  js: string;
  css: string;
  /** Milliseconds the build took. */
  ms: number;
}

/**
 * Builds the dashboard into `outDir` (clients/dashboard/dist by default), replacing what was there.
 * @throws esbuild's error (with file, line and message) when the sources do not compile, or Error when the
 *   template lacks a placeholder.
 */
export async function buildDashboard(outDir = DIST): Promise<DashboardBuild> {
  const started = performance.now();
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: APP,
    entryPoints: { app: 'src/main.tsx' },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: path.join(outDir, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'eof',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => '/assets/' + path.basename(p));
  const js = outputs.find((p) => p.endsWith('.js'));
  const css = outputs.find((p) => p.endsWith('.css'));
  if (!js || !css) throw new Error(`esbuild wrote no ${js ? 'CSS' : 'JavaScript'} file: ${outputs.join(', ')}`);
  const template = fs.readFileSync(path.join(APP, 'index.html'), 'utf8');
  if (!template.includes('%APP_JS%') || !template.includes('%APP_CSS%')) throw new Error('clients/dashboard/index.html lacks %APP_JS% or %APP_CSS%');
  fs.writeFileSync(path.join(outDir, 'index.html'), template.replaceAll('%APP_JS%', js).replaceAll('%APP_CSS%', css));
  return { js, css, ms: Math.round(performance.now() - started) };
}

if (import.meta.main) {
  const out = await buildDashboard();
  console.log(`dashboard built in ${out.ms} ms: ${path.relative(ROOT, DIST)}/index.html, ${out.js}, ${out.css}`);
}
