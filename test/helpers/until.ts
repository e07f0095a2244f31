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
