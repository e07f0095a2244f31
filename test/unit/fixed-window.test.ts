/**
 * core/fixed-window.ts: the windows of the rate limit (hour), a tool's daily limit (day) and the throttles
 * (15 minutes) start at multiples of their length since the epoch, UTC, and are named by their start.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DAY_MS, fixedWindow, HOUR_MS } from '../../lambdas/core/fixed-window.ts';

describe('fixedWindow', () => {
  it('an hour window starts at the full hour, ends at the next, and is named by its hour', () => {
    const w = fixedWindow(new Date('2026-11-26T14:59:59.500Z'), HOUR_MS);
    assert.equal(w.start.toISOString(), '2026-11-26T14:00:00.000Z');
    assert.equal(w.end.toISOString(), '2026-11-26T15:00:00.000Z');
    assert.equal(w.key, '2026-11-26T14');
    assert.equal(w.retryAfterSeconds, 1, '0.5 s left rounds up to 1 s');
  });

  it('a day window runs from 00:00 UTC to the next 00:00 UTC, whatever the local time zone', () => {
    const w = fixedWindow(new Date('2026-12-31T23:00:00Z'), DAY_MS);
    assert.equal(w.key, '2026-12-31');
    assert.equal(w.end.toISOString(), '2027-01-01T00:00:00.000Z');
    assert.equal(w.retryAfterSeconds, 3600);
  });

  it('a 15-minute window starts at :00, :15, :30 or :45 and is named to the minute', () => {
    const w = fixedWindow(new Date('2026-11-26T14:44:00Z'), 15 * 60_000);
    assert.equal(w.key, '2026-11-26T14:30');
    assert.equal(w.retryAfterSeconds, 60);
  });

  it('the first instant of a window belongs to it and waits its whole length', () => {
    const w = fixedWindow(new Date('2026-11-26T15:00:00.000Z'), HOUR_MS);
    assert.equal(w.key, '2026-11-26T15');
    assert.equal(w.retryAfterSeconds, 3600);
  });

  it('refuses lengths that do not divide a day in whole minutes', () => {
    for (const bad of [0, -HOUR_MS, 7 * 60_000, 90_000, 2 * DAY_MS + 1, Number.NaN]) {
      assert.throws(() => fixedWindow(new Date(), bad), RangeError, String(bad));
    }
  });
});
