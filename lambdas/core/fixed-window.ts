/**
 * Fixed windows of the service's counted limits (docs/plans-and-metering.md, docs/limits.md): the hourly rate
 * limit and a tool's daily limit (./metering.ts), the bad-request and failed-login throttles (./throttles.ts).
 * A window of length L starts at every multiple of L ms since the Unix epoch, UTC (an hour window at each full
 * hour, a day window at 00:00 UTC, a 15-minute window at :00, :15, :30, :45). Its counter is named by its start.
 */

/** One window: when it started and ends, and how long a refused caller waits. */
export interface FixedWindow {
  start: Date;
  /** The first instant after the window (the next window's start). */
  end: Date;
  /** Seconds until {@link end}, rounded up, at least 1 (for `Retry-After`). */
  retryAfterSeconds: number;
  /** The start as ISO 8601 cut to the window's unit: `2026-11-26` (a day or more), `2026-11-26T14` (hours), `2026-11-26T14:15` (minutes). */
  key: string;
}

/** An hour, ms. */
export const HOUR_MS = 3_600_000;
/** A day, ms. */
export const DAY_MS = 86_400_000;

/**
 * The window of length `lengthMs` that holds `now`.
 * @param lengthMs a whole number of minutes that divides a day (15 min, 1 h, 24 h), ms.
 * @throws RangeError for a length that is not such a number.
 */
export function fixedWindow(now: Date, lengthMs: number): FixedWindow {
  if (!Number.isInteger(lengthMs) || lengthMs <= 0 || lengthMs % 60_000 !== 0 || DAY_MS % lengthMs !== 0) {
    throw new RangeError(`a fixed window is a whole number of minutes that divides a day, not ${lengthMs} ms`);
  }
  const t = now.getTime();
  const start = t - (((t % lengthMs) + lengthMs) % lengthMs);
  const end = start + lengthMs;
  const iso = new Date(start).toISOString();
  const key = lengthMs % DAY_MS === 0 ? iso.slice(0, 10) : lengthMs % HOUR_MS === 0 ? iso.slice(0, 13) : iso.slice(0, 16);
  return { start: new Date(start), end: new Date(end), retryAfterSeconds: Math.max(1, Math.ceil((end - t) / 1000)), key };
}
