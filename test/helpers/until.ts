/**
 * Waits until `check` returns a value that is not undefined, polling every 50 ms (no fixed sleeps): the
 * browser tests' (dashboard, extension) wait for a file, a state or a count.
 * @returns that value.
 * @throws Error naming `what` after `timeoutMs` ms.
 */
export async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits until `check` resolves true, polling every 50 ms (the API tests' wait for a job's progress, a page's hits):
 * {@link until} for a yes/no check.
 * @throws Error naming `what` after `timeoutMs` ms.
 */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  await until(what, async () => ((await check()) ? true : undefined), timeoutMs);
}
