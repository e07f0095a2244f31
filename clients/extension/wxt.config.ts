/**
 * WXT's build of the extension (https://wxt.dev): Manifest V3 for Chromium browsers, into dist/chrome-mv3
 * (load it unpacked) and, with `wxt zip`, dist/scrape-ai-extension-<version>-chrome.zip for the store.
 *
 * `SAI_SERVICE_URL` (build time) is the service the extension talks to: its origin is the only host
 * permission the manifest asks for, and the sign-in form's default (docs/extension.md, "Permissions").
 */
import { defineConfig } from 'wxt';

const DEFAULT_SERVICE_URL = 'http://127.0.0.1:8787';

/** The match pattern of a service URL's host (ports are not part of match patterns). @throws on a URL that is not http(s). */
function hostPermission(url: string): string {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`SAI_SERVICE_URL must be http(s): ${url}`);
  return `${u.protocol}//${u.hostname}/*`;
}

const serviceUrl = process.env.SAI_SERVICE_URL || DEFAULT_SERVICE_URL;

/**
 * The largest chunk Vite builds without warning, kB (its `build.chunkSizeWarningLimit`; Vite's own default, 500 kB, is
 * about pages downloaded over the network). An extension's chunks are installed with it and read from disk, and the
 * popup and the service worker each hold the service's whole engine (the HTML5 parser, YAML, RE2, the XLSX writer: about
 * 1.7 MB minified), so the limit is set above that; a chunk past it still warns (the engine doubling, a dependency
 * bundled by mistake). test/extension/build.test.ts builds the extension and fails on the warning.
 */
export const CHUNK_SIZE_WARNING_KB = 2500;

/** Where the build goes: dist/ (dist/chrome-mv3 and the zip); `SAI_EXTENSION_OUT_DIR` elsewhere (the build test's folder). */
const outDir = process.env.SAI_EXTENSION_OUT_DIR || 'dist';

export default defineConfig({
  srcDir: 'src',
  outDir,
  outDirTemplate: 'chrome-mv3',
  browser: 'chrome',
  manifestVersion: 3,
  zip: { artifactTemplate: 'scrape-ai-extension-{{version}}-{{browser}}.zip' },
  manifest: {
    name: 'scrape-ai',
    description: 'Run scrape-ai configs on the page you are looking at, sync them with your account, export the rows as JSON, CSV or XLSX.',
    permissions: ['activeTab', 'scripting', 'storage'],
    host_permissions: [hostPermission(serviceUrl)],
    // Asked for at run time only: another service URL, or a site whose detail pages a run opens in a background tab.
    optional_host_permissions: ['http://*/*', 'https://*/*'],
    // The icons (public/icon/<size>.png, drawn by scripts/extension-icons.ts) are listed as `icons` by WXT itself;
    // the toolbar button names its two sizes too.
    action: { default_title: 'scrape-ai', default_icon: { 16: 'icon/16.png', 32: 'icon/32.png' } },
  },
  vite: () => ({
    define: { 'import.meta.env.WXT_SAI_SERVICE_URL': JSON.stringify(serviceUrl) },
    build: { chunkSizeWarningLimit: CHUNK_SIZE_WARNING_KB },
    oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  }),
});
