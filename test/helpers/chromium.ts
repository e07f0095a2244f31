/**
 * Debian's Chromium (`/usr/bin/chromium`, or `$SAI_CHROMIUM`) for the tests that need a full browser: the
 * dashboard's, and the extension's (the headless shell of @sparticuz/chromium cannot load extensions). `.ci/run`
 * installs the package when it is missing.
 */
import puppeteer, { type Browser, type LaunchOptions } from 'puppeteer-core';

/** The browser binary. */
export const DEBIAN_CHROMIUM = process.env.SAI_CHROMIUM ?? '/usr/bin/chromium';

/** Flags for a quiet, loopback-only test browser: no sandbox (root), no GPU, no background traffic or updates, no QUIC. */
const TEST_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/**
 * Launches it headless with a fresh profile in `userDataDir`.
 * @param options more launch options (e.g. `pipe` and `enableExtensions` for an extension).
 */
export function launchDebianChromium(userDataDir: string, options: LaunchOptions = {}): Promise<Browser> {
  return puppeteer.launch({ executablePath: DEBIAN_CHROMIUM, headless: true, userDataDir, ...options, args: [...TEST_FLAGS, ...(options.args ?? [])] });
}
