/**
 * The Chromium processes a thread of the local service started (a job worker's, the browser-tools thread's):
 * reported by the thread as each browser launches, ended with the thread. Chromium runs in a process group of
 * its own (puppeteer starts it detached), so ending the group ends its renderers and helpers too.
 */

/**
 * Ends each browser's whole process group with SIGKILL (the browser process alone when it has no group of its
 * own), then forgets them. Processes already gone are skipped; it never throws.
 * @param browsers the browsers' process ids (each its group's leader); emptied.
 */
export function killBrowserGroups(browsers: Set<number>): void {
  for (const pid of browsers) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
    }
  }
  browsers.clear();
}
