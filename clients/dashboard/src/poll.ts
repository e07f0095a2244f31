/**
 * Polling as the API asks for it (docs/spec.md, "Events": progress is obtained by polling): one call at a time,
 * the next `intervalMs` after the previous one ended (never overlapping on a slow answer), stopped when the
 * component unmounts (the page is left) or `active` turns false (the job ended).
 */
import { useEffect, useRef } from 'preact/hooks';

/**
 * Runs `tick` now and then every `intervalMs` while `active` is true and the component is mounted.
 * A tick that throws is reported by the tick itself; polling goes on (a transient network error should not
 * end a progress bar). `tick` may change between renders: the latest one is called.
 * @param deps restart polling (and tick at once) when these change, e.g. the job id.
 */
export function usePoll(tick: () => Promise<void> | void, intervalMs: number, active: boolean, deps: unknown[] = []): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const loop = async () => {
      try {
        await latest.current();
      } catch {
        // The tick shows its own error; keep polling.
      }
      if (!stopped) timer = setTimeout(loop, intervalMs);
    };
    void loop();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [active, intervalMs, ...deps]);
}
