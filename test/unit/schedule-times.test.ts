/** The time rules of scheduled runs (issue 26, "Schedules"): cron and time zone validation, next run, shortest gap, due firing; croner underneath. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dueFiring, nextRunAt, parseScheduleTimes, shortestIntervalMinutes, type ScheduleTimes } from '../../lambdas/core/schedule-times.ts';

const at = (iso: string) => new Date(iso);
const utc = (cron: string): ScheduleTimes => parseScheduleTimes({ cron });
const zoned = (cron: string, timezone: string): ScheduleTimes => parseScheduleTimes({ cron, timezone });
const MINUTE = 60_000;

/** Asserts that parsing `input` is refused with invalid_request, one detail per path in `paths`, each message matching its pattern. */
function refused(input: { cron: unknown; timezone?: unknown }, expected: Partial<Record<'cron' | 'timezone', RegExp>>) {
  assert.throws(() => parseScheduleTimes(input), (e: unknown) => {
    const err = e as { code?: string; message: string; details?: { path: string; message: string }[] };
    assert.equal(err.code, 'invalid_request', err.message);
    assert.deepEqual(err.details!.map((d) => d.path), Object.keys(expected), err.message);
    for (const d of err.details!) {
      assert.match(d.message, expected[d.path as 'cron' | 'timezone']!);
      assert.ok(err.message.includes(`${d.path}: ${d.message}`), `the message names the field: ${err.message}`);
    }
    return true;
  }, JSON.stringify(input).slice(0, 80));
}

describe('parseScheduleTimes', () => {
  it('normalises whitespace and the time zone name; UTC when the time zone is absent or null', () => {
    assert.deepEqual(parseScheduleTimes({ cron: '  */15\t *  * * *\n' }), { cron: '*/15 * * * *', timezone: 'UTC' });
    assert.deepEqual(parseScheduleTimes({ cron: '0 9 * * 1-5', timezone: null }), { cron: '0 9 * * 1-5', timezone: 'UTC' });
    assert.deepEqual(parseScheduleTimes({ cron: '0 9 * * 1-5', timezone: 'europe/paris' }), { cron: '0 9 * * 1-5', timezone: 'Europe/Paris' });
    assert.equal(parseScheduleTimes({ cron: '0 9 * * 1-5', timezone: 'utc' }).timezone, 'UTC');
    assert.equal(parseScheduleTimes({ cron: '0 9 * * 1-5', timezone: 'America/New_York' }).timezone, 'America/New_York');
  });

  it('takes croner nicknames in any case, lower-cased; they fire as their 5-field expansion', () => {
    assert.deepEqual(utc('@HOURLY'), { cron: '@hourly', timezone: 'UTC' });
    assert.deepEqual(nextRunAt(utc('@hourly'), at('2026-05-05T10:20:00Z')), at('2026-05-05T11:00:00Z'));
    assert.deepEqual(nextRunAt(utc(' @Weekly '), at('2026-05-05T10:20:00Z')), at('2026-05-10T00:00:00Z'), 'Sunday 00:00');
    for (const n of ['@yearly', '@annually', '@monthly', '@daily', '@midnight']) assert.equal(utc(n).cron, n);
  });

  it("takes croner's extensions to the 5 fields: names, L, #, W, +", () => {
    assert.deepEqual(nextRunAt(utc('0 12 L * *'), at('2026-02-01T00:00:00Z')), at('2026-02-28T12:00:00Z'), 'last day of February');
    assert.deepEqual(nextRunAt(utc('0 12 * * FRI#L'), at('2026-05-01T13:00:00Z')), at('2026-05-29T12:00:00Z'), 'last Friday of May');
    assert.deepEqual(nextRunAt(utc('30 8 * JAN-MAR MON-FRI'), at('2026-03-31T09:00:00Z')), at('2027-01-01T08:30:00Z'));
    assert.deepEqual(nextRunAt(utc('0 0 15W * *'), at('2026-08-01T00:00:00Z')), at('2026-08-14T00:00:00Z'), '15 August 2026 is a Saturday');
    assert.deepEqual(nextRunAt(utc('0 0 1 * +MON'), at('2026-01-01T00:00:00Z')), at('2026-06-01T00:00:00Z'), 'the 1st that is a Monday');
    assert.deepEqual(nextRunAt(utc('0 0 1 * MON'), at('2026-01-01T00:00:00Z')), at('2026-01-05T00:00:00Z'), 'without +: the 1st OR a Monday');
  });

  it('takes 200 characters and refuses 201', () => {
    assert.equal(utc(`${' '.repeat(191)}* * * * *`).cron, '* * * * *');
    refused({ cron: `${' '.repeat(192)}* * * * *` }, { cron: /201 characters long; at most 200/ });
  });

  it('refuses a cron that is not a string, empty, or not 5 fields', () => {
    for (const cron of [undefined, null, 15, ['*', '*', '*', '*', '*'], { minute: '*' }]) refused({ cron }, { cron: /must be a string/ });
    refused({ cron: '' }, { cron: /is empty/ });
    refused({ cron: ' \t ' }, { cron: /is empty/ });
    refused({ cron: '* * * *' }, { cron: /has 4 fields; exactly 5 are required/ });
    refused({ cron: '0 */5 * * * *' }, { cron: /has 6 fields \(a seconds field is not supported\)/ });
    refused({ cron: '0 0 12 * * * 2030' }, { cron: /has 7 fields \(seconds and year fields are not supported\)/ });
    refused({ cron: '* * * * * * * *' }, { cron: /has 8 fields/ });
  });

  it('refuses @reboot, unknown nicknames and one-off dates', () => {
    refused({ cron: '@reboot' }, { cron: /@reboot is not supported/ });
    refused({ cron: '@every 5m' }, { cron: /unknown nickname "@every 5m"; the nicknames are @yearly/ });
    refused({ cron: '@fortnightly' }, { cron: /unknown nickname/ });
    refused({ cron: '2030-01-23T00:00:00' }, { cron: /has 1 field;/ });
    // five fields with a ':' would be read by croner as an ISO 8601 date
    refused({ cron: '0:30 * * * *' }, { cron: /contains ":"/ });
  });

  it("refuses what croner refuses, with croner's reason after the expression", () => {
    const cases: [string, RegExp][] = [
      ['60 * * * *', /^"60 \* \* \* \*" is not a valid cron expression: Invalid value for minute: 60$/],
      ['* 24 * * *', /Invalid value for hour: 24/],
      ['* * 0 * *', /Invalid value for day/],
      ['* * * 13 *', /Invalid value for month/],
      ['* * * * 8', /Invalid value for dayOfWeek: 8/],
      ['*/0 * * * *', /illegal stepping: 0/],
      ['5/5 * * * *', /stepping with numeric prefix/],
      ['10-5 * * * *', /From value is larger than to value/],
      ['a b c d e', /illegal characters/],
      ['* * * * MON#6', /nth weekday out of range/],
      ['* * * * +', /cannot be empty after '\+'/],
    ];
    for (const [cron, reason] of cases) refused({ cron }, { cron: reason });
  });

  it('refuses an expression that never fires: a date that does not exist, or times only in DST gaps', () => {
    refused({ cron: '0 0 30 2 *' }, { cron: /^"0 0 30 2 \*" never fires: no date matches it/ });
    refused({ cron: '0 12 31 4,6,9,11 *', timezone: 'America/New_York' }, { cron: /never fires/ });
    // 02:00 and 02:30 on the last Sunday of March do not exist in Paris (an interval expression skips them)…
    refused({ cron: '0,30 2 * 3 0#L', timezone: 'Europe/Paris' }, { cron: /never fires: .* DST gap of Europe\/Paris/ });
    // …but do in UTC, and a fixed-time expression fires after the gap
    assert.equal(utc('0,30 2 * 3 0#L').cron, '0,30 2 * 3 0#L');
    assert.equal(zoned('30 2 * 3 0#L', 'Europe/Paris').timezone, 'Europe/Paris');
    assert.equal(utc('0 0 29 2 +MON').cron, '0 0 29 2 +MON', 'fires rarely (29 February on a Monday) but fires');
  });

  it('refuses a time zone that is not a string, unknown, or a UTC offset', () => {
    for (const timezone of [0, true, ['UTC'], { name: 'UTC' }]) refused({ cron: '* * * * *', timezone }, { timezone: /must be a string/ });
    for (const timezone of ['', 'Mars/Olympus_Mons', 'Paris', 'Local', 'Z']) refused({ cron: '* * * * *', timezone }, { timezone: /is not a known IANA time zone name/ });
    // Node 24's Intl takes these; an older one refuses them as unknown
    for (const timezone of ['+02:00', '-0500', '+02']) refused({ cron: '* * * * *', timezone }, { timezone: /is a UTC offset, not an IANA time zone name|is not a known IANA/ });
    refused({ cron: '* * * * *', timezone: 'Europe/'.repeat(20) }, { timezone: /characters long/ });
  });

  it('names both fields when both are wrong', () => {
    refused({ cron: '0 0 * * * *', timezone: 'Mars/Olympus_Mons' }, { cron: /has 6 fields/, timezone: /not a known IANA/ });
  });
});

describe('nextRunAt', () => {
  it('is the first firing strictly after the instant, in UTC', () => {
    const s = utc('*/15 * * * *');
    assert.deepEqual(nextRunAt(s, at('2026-05-05T10:07:30Z')), at('2026-05-05T10:15:00Z'));
    assert.deepEqual(nextRunAt(s, at('2026-05-05T10:14:59.999Z')), at('2026-05-05T10:15:00Z'));
    assert.deepEqual(nextRunAt(s, at('2026-05-05T10:15:00.000Z')), at('2026-05-05T10:30:00Z'), 'not the firing at the instant itself');
    assert.deepEqual(nextRunAt(s, at('2026-12-31T23:59:00Z')), at('2027-01-01T00:00:00Z'));
  });

  it("is the zone's wall-clock time, with the zone's offset of that day", () => {
    const ny = zoned('0 9 * * *', 'America/New_York');
    assert.deepEqual(nextRunAt(ny, at('2026-01-15T12:00:00Z')), at('2026-01-15T14:00:00Z'), '09:00 EST');
    assert.deepEqual(nextRunAt(ny, at('2026-07-15T12:00:00Z')), at('2026-07-15T13:00:00Z'), '09:00 EDT');
    assert.deepEqual(nextRunAt(ny, at('2026-07-15T13:00:00Z')), at('2026-07-16T13:00:00Z'));
    // the day is the zone's: Monday 08:00 in Tokyo is Sunday 23:00 UTC
    assert.deepEqual(nextRunAt(zoned('0 8 * * MON', 'Asia/Tokyo'), at('2026-05-06T00:00:00Z')), at('2026-05-10T23:00:00Z'));
  });

  it('refuses an instant that is not a valid Date', () => {
    assert.throws(() => nextRunAt(utc('* * * * *'), new Date('nope')), TypeError);
    assert.throws(() => nextRunAt(utc('* * * * *'), '2026-01-01T00:00:00Z' as unknown as Date), TypeError);
  });
});

describe('DST in Europe/Paris (croner: fixed times run after a gap and once in an overlap; intervals skip the gap and run twice in the overlap)', () => {
  const paris = (cron: string) => zoned(cron, 'Europe/Paris');
  const runs = (s: ScheduleTimes, from: string, n: number) => {
    const out: string[] = [];
    let t: Date | null = at(from);
    while (out.length < n && (t = nextRunAt(s, t))) out.push(t.toISOString());
    return out;
  };

  it('02:30 on the spring-forward day (29 March 2026: 02:00 CET → 03:00 CEST) fires at 03:00 CEST', () => {
    assert.deepEqual(runs(paris('30 2 * * *'), '2026-03-27T12:00:00Z', 3), [
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, the first valid time after the gap
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('02:30 on the fall-back day (25 October 2026: 03:00 CEST → 02:00 CET) fires once, at the first 02:30', () => {
    assert.deepEqual(runs(paris('30 2 * * *'), '2026-10-23T12:00:00Z', 3), [
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // the first 02:30 (CEST); not again at 02:30 CET (01:30Z)
      '2026-10-26T01:30:00.000Z', // 02:30 CET
    ]);
    assert.equal(dueFiring(paris('30 2 * * *'), { now: at('2026-10-25T01:45:00Z'), lastFiredAt: at('2026-10-25T00:30:00Z'), since: at('2026-01-01T00:00:00Z') }), null, 'not due again in the repeated hour');
  });

  it('an interval expression skips the missing hour and fires in both passes of the repeated one', () => {
    assert.deepEqual(runs(paris('*/30 * * * *'), '2026-03-29T00:00:00Z', 3), [
      '2026-03-29T00:30:00.000Z', // 01:30 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST (02:00 and 02:30 do not exist)
      '2026-03-29T01:30:00.000Z', // 03:30 CEST
    ]);
    assert.deepEqual(runs(paris('*/30 * * * *'), '2026-10-24T23:59:00Z', 5), [
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T01:00:00.000Z', // 02:00 CET
      '2026-10-25T01:30:00.000Z', // 02:30 CET
      '2026-10-25T02:00:00.000Z', // 03:00 CET
    ]);
  });

  it('dueFiring finds, at every instant of both DST days, the latest firing nextRunAt lists', () => {
    for (const [cron, day] of [['*/20 * * * *', '2026-03-29'], ['*/20 * * * *', '2026-10-25'], ['30 2 * * *', '2026-03-29'], ['30 2 * * *', '2026-10-25'], ['0 1-3 * * *', '2026-10-25']] as const) {
      const s = paris(cron);
      const start = at(`${day}T00:00:00+02:00`).getTime() - 86_400_000;
      const firings = runs(s, new Date(start).toISOString(), 200).map((iso) => at(iso).getTime()).filter((t) => t < start + 3 * 86_400_000);
      for (let now = start + 86_400_000; now < start + 2 * 86_400_000; now += 7 * MINUTE + 13_001) {
        const expected = firings.filter((f) => f <= now).at(-1)!;
        const due = dueFiring(s, { now: new Date(now), lastFiredAt: null, since: new Date(start) });
        assert.equal(due?.getTime(), expected, `${cron} at ${new Date(now).toISOString()}`);
      }
    }
  });
});

describe('shortestIntervalMinutes', () => {
  const from = at('2026-01-01T00:00:00Z');

  it('is the shortest gap, not the usual or the longest one', () => {
    assert.equal(shortestIntervalMinutes(utc('*/15 * * * *'), from), 15);
    assert.equal(shortestIntervalMinutes(utc('* * * * *'), from), 1);
    assert.equal(shortestIntervalMinutes(utc('0 9 * * 1-5'), from), 1440, 'weekdays: the weekend gap is longer, not shorter');
    assert.equal(shortestIntervalMinutes(utc('0 * * * *'), from), 60);
    assert.equal(shortestIntervalMinutes(utc('0,10 * * * *'), from), 10, '00 → 10 is 10 minutes, 10 → 00 is 50');
    assert.equal(shortestIntervalMinutes(utc('0,59 0,23 * * *'), from), 1, '23:59 → 00:00 the next day');
    assert.equal(shortestIntervalMinutes(utc('*/15 9-17 * * *'), from), 15);
  });

  it('measures real time: a daily time in a DST zone has a 23-hour night', () => {
    assert.equal(shortestIntervalMinutes(zoned('0 9 * * *', 'Europe/Paris'), from), 1380);
    assert.equal(shortestIntervalMinutes(zoned('0 9 * * *', 'UTC'), from), 1440);
    assert.equal(shortestIntervalMinutes(zoned('0 9 * * 1-5', 'Europe/Paris'), from), 1440, 'Europe changes clocks on Sundays');
    assert.equal(shortestIntervalMinutes(zoned('*/15 * * * *', 'Europe/Paris'), at('2026-03-28T00:00:00Z')), 15, 'across the gap');
    assert.equal(shortestIntervalMinutes(zoned('*/15 * * * *', 'Europe/Paris'), at('2026-10-24T00:00:00Z')), 15, 'across the overlap');
  });

  it('looks only at the next `horizon` firings', () => {
    const newYearsEve = at('2025-12-31T12:00:00Z');
    assert.equal(shortestIntervalMinutes(utc('0 0 1 * *'), newYearsEve, 2), 31 * 1440, '1 January → 1 February');
    assert.equal(shortestIntervalMinutes(utc('0 0 1 * *'), newYearsEve, 3), 28 * 1440, 'February 2026 has 28 days');
    assert.equal(shortestIntervalMinutes(utc('0 0 1 * *'), from, 2), 28 * 1440, 'strictly after `from`: 1 February → 1 March');
  });

  it("is Infinity when fewer than 2 firings are left before croner's limit (the year 3000)", () => {
    assert.equal(shortestIntervalMinutes(utc('0 0 1 1 *'), at('2998-06-01T00:00:00Z')), Infinity);
  });

  it('refuses a bad horizon or instant', () => {
    for (const horizon of [1, 0, -5, 2.5, Number.NaN]) assert.throws(() => shortestIntervalMinutes(utc('* * * * *'), from, horizon), RangeError);
    assert.throws(() => shortestIntervalMinutes(utc('* * * * *'), new Date(Number.NaN)), TypeError);
  });
});

describe('dueFiring', () => {
  const hourly = utc('0 * * * *');
  const since = at('2026-05-05T06:10:00Z');

  it('never fired: the latest slot after `since`, or nothing when `since` is after the latest slot', () => {
    assert.deepEqual(dueFiring(hourly, { now: at('2026-05-05T07:05:00Z'), lastFiredAt: null, since }), at('2026-05-05T07:00:00Z'));
    assert.equal(dueFiring(hourly, { now: at('2026-05-05T06:59:59.999Z'), lastFiredAt: null, since }), null, 'no slot yet since creation');
    assert.equal(dueFiring(hourly, { now: at('2026-05-05T07:05:00Z'), lastFiredAt: null, since: at('2026-05-05T07:01:00Z') }), null, '`since` after the last slot');
    assert.equal(dueFiring(hourly, { now: at('2026-05-05T07:05:00Z'), lastFiredAt: null, since: at('2026-05-05T07:00:00Z') }), null, 'a slot exactly at `since` is not after it');
    assert.deepEqual(dueFiring(hourly, { now: at('2026-05-05T07:05:00Z'), lastFiredAt: null, since: at('2026-05-05T06:59:59.999Z') }), at('2026-05-05T07:00:00Z'));
  });

  it('fired in the current slot: nothing until the next slot, which is due at its very instant', () => {
    const lastFiredAt = at('2026-05-05T07:00:00Z');
    for (const now of ['2026-05-05T07:00:00Z', '2026-05-05T07:00:00.500Z', '2026-05-05T07:30:00Z', '2026-05-05T07:59:59.999Z']) {
      assert.equal(dueFiring(hourly, { now: at(now), lastFiredAt, since }), null, now);
    }
    assert.deepEqual(dueFiring(hourly, { now: at('2026-05-05T08:00:00.000Z'), lastFiredAt, since }), at('2026-05-05T08:00:00Z'));
    assert.deepEqual(dueFiring(hourly, { now: at('2026-05-05T08:00:00.999Z'), lastFiredAt, since }), at('2026-05-05T08:00:00Z'));
  });

  it('missed many slots: due once, for the latest; then nothing until the next one', () => {
    const lastFiredAt = at('2026-05-05T07:00:00Z');
    const now = at('2026-05-05T10:20:00Z');
    const due = dueFiring(hourly, { now, lastFiredAt, since });
    assert.deepEqual(due, at('2026-05-05T10:00:00Z'));
    assert.equal(dueFiring(hourly, { now: at('2026-05-05T10:40:00Z'), lastFiredAt: due, since }), null, 'the 08:00 and 09:00 slots are never due');
    assert.deepEqual(dueFiring(hourly, { now: at('2026-05-05T11:00:30Z'), lastFiredAt: due, since }), at('2026-05-05T11:00:00Z'));
  });

  it('a slot in the zone: the latest 09:00 New York time', () => {
    const ny = zoned('0 9 * * *', 'America/New_York');
    assert.deepEqual(dueFiring(ny, { now: at('2026-07-20T12:00:00Z'), lastFiredAt: at('2026-07-10T13:00:00Z'), since }), at('2026-07-19T13:00:00Z'));
    assert.deepEqual(dueFiring(ny, { now: at('2026-07-20T13:00:00Z'), lastFiredAt: at('2026-07-10T13:00:00Z'), since }), at('2026-07-20T13:00:00Z'));
  });

  it('counts from the later of lastFiredAt and since (a schedule enabled again does not fire for the time it was off)', () => {
    const enabledAgain = at('2026-05-05T10:30:00Z');
    assert.equal(dueFiring(hourly, { now: at('2026-05-05T10:45:00Z'), lastFiredAt: at('2026-05-01T00:00:00Z'), since: enabledAgain }), null);
    assert.deepEqual(dueFiring(hourly, { now: at('2026-05-05T11:00:01Z'), lastFiredAt: at('2026-05-01T00:00:00Z'), since: enabledAgain }), at('2026-05-05T11:00:00Z'));
  });

  it('nothing when the clock is before lastFiredAt or since', () => {
    assert.equal(dueFiring(hourly, { now: at('2026-05-05T06:00:00Z'), lastFiredAt: at('2026-05-05T07:00:00Z'), since }), null);
    assert.equal(dueFiring(hourly, { now: at('2026-05-05T06:00:00Z'), lastFiredAt: null, since }), null);
  });

  it('a year down on "* * * * *": one firing, the latest minute, found without walking the year (1000 calls)', () => {
    const everyMinute = utc('* * * * *');
    const lastFiredAt = at('2025-05-05T07:00:00Z');
    for (let i = 0; i < 1000; i++) {
      const now = at('2026-05-05T07:00:00Z').getTime() + i * 61_007;
      const due = dueFiring(everyMinute, { now: new Date(now), lastFiredAt, since: at('2025-01-01T00:00:00Z') });
      assert.equal(due?.getTime(), Math.floor(now / MINUTE) * MINUTE);
    }
  });

  it('refuses instants that are not valid Dates', () => {
    const bad = new Date(Number.NaN);
    assert.throws(() => dueFiring(hourly, { now: bad, lastFiredAt: null, since }), TypeError);
    assert.throws(() => dueFiring(hourly, { now: since, lastFiredAt: bad, since }), TypeError);
    assert.throws(() => dueFiring(hourly, { now: since, lastFiredAt: null, since: bad }), TypeError);
  });
});
