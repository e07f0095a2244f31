/**
 * The time rules of scheduled runs (issue 26, "Schedules"): which cron expressions and time zones a schedule
 * takes, when it fires next, how often it fires at most, and which firing is due after downtime.
 *
 * Pure: no store, no timers, no clock (every instant is a parameter). The cron arithmetic is croner's
 * (npm `croner` 11.0.0, MIT, https://croner.56k.guru, README in node_modules/croner); this module only
 * narrows what croner accepts and names the refusals:
 * - the format is classic 5-field cron, `minute hour day-of-month month day-of-week`
 *   (https://en.wikipedia.org/wiki/Cron#CRON_expression), parsed by croner in its `5-part` mode, with
 *   croner's extensions to those 5 fields (`L`, `W`, `#`, the `+` AND modifier, `?` as `*`, JAN-DEC,
 *   SUN-SAT, 0 and 7 both Sunday). Day-of-month and day-of-week combine with OR, as in Vixie cron, unless
 *   the day-of-week starts with `+`;
 * - croner's nicknames `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`
 *   are accepted (they are 5-field expressions; `@reboot` is refused);
 * - times are wall-clock times in an IANA time zone, UTC by default; croner converts them with `Intl`.
 *
 * Daylight saving time (croner's rules, the same as Vixie cron and croner-rust; its README, "DST handling"):
 * - a fixed-time expression (one value each in minute and hour, e.g. `30 2 * * *`) whose time does not
 *   exist that day (spring forward) fires at the first valid time after the gap, the same day (02:30 in
 *   Europe/Paris on 2026-03-29 fires at 03:00 CEST, 01:00Z); a time that occurs twice (fall back) fires
 *   once, at its first occurrence (02:30 CEST on 2026-10-25, 00:30Z);
 * - an interval expression (a `*`, step, range or list in minute or hour, e.g. `*\/30 * * * *`) skips the
 *   times that do not exist and fires on both occurrences of a repeated time.
 * Gaps between firings are therefore real elapsed time, and a daily schedule in a zone with DST has a
 * 23-hour and a 25-hour gap twice a year.
 */
import { Cron } from 'croner';
import { CodedError } from '../errors.ts';

/** A schedule's validated, normalised time rule. */
export interface ScheduleTimes {
  /** A 5-field cron expression (or one of croner's nicknames), trimmed, fields separated by one space. */
  cron: string;
  /** An IANA time zone name as this runtime's `Intl` names it (e.g. `Europe/Paris`, `UTC`). */
  timezone: string;
}

/** The longest cron expression accepted, characters (before trimming). */
export const MAX_CRON_LENGTH = 200;
/** The longest time zone name accepted, characters (the longest IANA name has 32). */
const MAX_TIMEZONE_LENGTH = 100;
/** The nicknames croner 11 expands to 5-field expressions (its README, "Predefined schedule nicknames"). */
export const CRON_NICKNAMES: readonly string[] = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
/** The firings {@link shortestIntervalMinutes} looks at by default. */
export const DEFAULT_INTERVAL_HORIZON = 2000;
/**
 * Where the "does it ever fire" check of {@link parseScheduleTimes} starts: a fixed instant, so that the
 * check does not depend on the clock. A 5-field expression has no year, so its calendar repeats.
 */
const NEVER_FIRES_REFERENCE = new Date('2000-01-01T00:00:00Z');

type Field = 'cron' | 'timezone';

/** A refused field, thrown inside this module and turned into the CodedError by {@link parseScheduleTimes}. */
class Refusal extends Error {
  readonly path: Field;
  constructor(path: Field, message: string) {
    super(message);
    this.path = path;
  }
}

function refuse(path: Field, message: string): never {
  throw new Refusal(path, message);
}

/** `[{path, message}]` of the refusals, as CodedError('invalid_request'), its message `<path>: <problem>; …`. */
function refusedError(refusals: Refusal[]): CodedError {
  return new CodedError('invalid_request', refusals.map((r) => `${r.path}: ${r.message}`).join('; '), refusals.map((r) => ({ path: r.path, message: r.message })));
}

/** The value `parse` returns, or the Refusal it throws. */
function attempt<T>(parse: () => T): T | Refusal {
  try {
    return parse();
  } catch (e) {
    if (e instanceof Refusal) return e;
    throw e;
  }
}

/** A value for a message: quoted, cut to 40 characters. */
function shown(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

/**
 * croner's `Cron` objects for the rules seen lately. A `Cron` built without a function schedules no timer
 * and keeps no state that `nextRun`/`nextRuns`/`previousRuns` with an explicit reference read, so one
 * instance serves every call. Building one costs some 80 µs (its year table has 10,000 entries), which
 * a firing loop over many schedules would pay on every tick.
 */
const cronCache = new Map<string, Cron>();
const CRON_CACHE_SIZE = 500;

function cronOf(s: ScheduleTimes): Cron {
  const key = `${s.timezone}\n${s.cron}`;
  let cron = cronCache.get(key);
  if (!cron) {
    cron = new Cron(s.cron, { mode: '5-part', timezone: s.timezone });
    if (cronCache.size >= CRON_CACHE_SIZE) cronCache.clear();
    cronCache.set(key, cron);
  }
  return cron;
}

function checkDate(d: unknown, name: string): Date {
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw new TypeError(`${name} must be a valid Date`);
  return d;
}

function parseCron(value: unknown): string {
  if (typeof value !== 'string') refuse('cron', `must be a string, a 5-field cron expression such as "*/15 * * * *"; got ${value === null ? 'null' : typeof value}`);
  if (value.length > MAX_CRON_LENGTH) refuse('cron', `is ${value.length} characters long; at most ${MAX_CRON_LENGTH} are accepted`);
  const fields = value.trim().split(/\s+/).filter(Boolean);
  if (fields.length === 0) refuse('cron', 'is empty; expected 5 fields: minute hour day-of-month month day-of-week');
  if (fields[0]!.startsWith('@')) {
    const nickname = fields.join(' ').toLowerCase();
    if (nickname === '@reboot') refuse('cron', '@reboot is not supported: a schedule fires at times, not at start-up');
    if (!CRON_NICKNAMES.includes(nickname)) refuse('cron', `unknown nickname ${shown(fields.join(' '))}; the nicknames are ${CRON_NICKNAMES.join(', ')}`);
    return nickname;
  }
  if (fields.length !== 5) {
    const extra = fields.length === 6 ? ' (a seconds field is not supported)' : fields.length === 7 ? ' (seconds and year fields are not supported)' : '';
    refuse('cron', `has ${fields.length} field${fields.length === 1 ? '' : 's'}${extra}; exactly 5 are required: minute hour day-of-month month day-of-week`);
  }
  const cron = fields.join(' ');
  // croner reads a pattern with a ':' as a one-off ISO 8601 date, not as cron.
  if (cron.includes(':')) refuse('cron', `${shown(cron)} contains ":"; a cron field holds numbers, names, * , - / and croner's L W # + ?`);
  return cron;
}

function parseTimezone(value: unknown): string {
  if (value === undefined || value === null) return 'UTC';
  if (typeof value !== 'string') refuse('timezone', `must be a string, an IANA time zone name such as "Europe/Paris"; got ${typeof value}`);
  if (value.length > MAX_TIMEZONE_LENGTH) refuse('timezone', `is ${value.length} characters long; an IANA time zone name has at most ${MAX_TIMEZONE_LENGTH}`);
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    refuse('timezone', `${shown(value)} is not a known IANA time zone name (e.g. "Europe/Paris", "America/New_York", "UTC")`);
  }
  // Intl in Node 24 also takes UTC offsets ("+02:00", "-0500"): not IANA names, and they ignore DST.
  if (/^[+-]/.test(resolved)) refuse('timezone', `${shown(value)} is a UTC offset, not an IANA time zone name; use e.g. "Europe/Paris", or "Etc/GMT-2" for a fixed UTC+02:00`);
  return resolved;
}

/**
 * Validates and normalises a schedule's `cron` and `timezone` (the body fields of `POST /api/v1/schedules/`).
 *
 * `cron`: a string of at most {@link MAX_CRON_LENGTH} characters holding exactly 5 whitespace-separated
 * fields, `minute hour day-of-month month day-of-week`, as croner 11 reads them in `5-part` mode (see the
 * module comment for croner's extensions), or one of {@link CRON_NICKNAMES} (any case; returned in lower
 * case, not expanded). Normalised: trimmed, fields joined with one space. An expression that never fires
 * (e.g. `0 0 30 2 *`, 30 February; or one whose every time falls in a DST gap of the zone) is refused.
 *
 * `timezone`: an IANA name that `Intl.DateTimeFormat` accepts; `UTC` when absent or null. Normalised to the
 * name `Intl` resolves it to (`europe/paris` → `Europe/Paris`; on Node 24 also aliases, e.g. `Etc/UTC` →
 * `UTC`, `US/Eastern` → `America/New_York`). UTC offsets (`+02:00`), which Node 24's `Intl` takes, are refused.
 *
 * Cost: well under a millisecond for an expression that fires; the never-fires check walks croner's search
 * to its limit (the year 3000): some milliseconds for a calendar impossibility, up to about 2 s for an
 * expression whose every time lies in a DST gap (e.g. `* 2 * 3 0#L` in Europe/Paris).
 *
 * @throws CodedError `invalid_request`, message `<path>: <problem>` (both joined by `; ` when both fields
 *   are wrong), details `[{path: 'cron' | 'timezone', message: <problem>}]`, one entry per wrong field; for
 *   an expression croner refuses, the problem is croner's message after the expression, e.g.
 *   `cron: "60 * * * *" is not a valid cron expression: Invalid value for minute: 60`.
 */
export function parseScheduleTimes(input: { cron: unknown; timezone?: unknown }): ScheduleTimes {
  const cron = attempt(() => parseCron(input.cron));
  const timezone = attempt(() => parseTimezone(input.timezone));
  if (cron instanceof Refusal || timezone instanceof Refusal) throw refusedError([cron, timezone].filter((r) => r instanceof Refusal));
  const checked = attempt(() => {
    let c: Cron;
    try {
      c = new Cron(cron, { mode: '5-part', timezone });
    } catch (e) {
      const message = (e instanceof Error ? e.message : String(e)).replace(/^CronPattern:\s*/, '');
      refuse('cron', `${shown(cron)} is not a valid cron expression: ${message}`);
    }
    if (c.nextRun(NEVER_FIRES_REFERENCE) === null) {
      const why = timezone === 'UTC' ? 'no date matches it, e.g. 30 February' : `no date matches it, e.g. 30 February, or every time it names falls in a DST gap of ${timezone}`;
      refuse('cron', `${shown(cron)} never fires: ${why}`);
    }
  });
  if (checked instanceof Refusal) throw refusedError([checked]);
  return { cron, timezone };
}

/**
 * The first firing strictly after `after` (croner's `nextRun`): a firing exactly at `after` is not returned.
 * Firings are whole minutes, UTC instants of the schedule's wall-clock times in its zone (DST rules in the
 * module comment).
 * @param s a rule from {@link parseScheduleTimes} (or stored from one).
 * @returns the instant, or null when the expression never fires again (croner searches up to the year 3000).
 * @throws TypeError when `after` is not a valid Date; croner's error for a rule {@link parseScheduleTimes} refuses.
 */
export function nextRunAt(s: ScheduleTimes, after: Date): Date | null {
  return cronOf(s).nextRun(checkDate(after, 'after'));
}

/**
 * The smallest gap between consecutive firings, in minutes of real elapsed time, over the next `horizon`
 * firings after `from` (croner's `nextRun`, from each firing to the next); what a plan's minimum interval is checked against. It is the
 * SHORTEST gap: `*\/15 * * * *` gives 15, `0 9 * * 1-5` gives 1440 (the weekend gap does not count), but
 * `0 9 * * *` in Europe/Paris gives 1380, as the spring-forward night is 23 hours (Europe changes on
 * Sundays, so weekdays-only stays 1440 there). It stops early at 1, the smallest gap a 5-field expression
 * can have.
 *
 * Cost: one croner `nextRun` per firing, some 25-90 µs each: 0.05-0.2 s at the default horizon (measured on
 * a busy 2-core machine), so compute it once when a schedule is created or changed, not per tick.
 * @param horizon how many firings to look at, an integer ≥ 2 (default {@link DEFAULT_INTERVAL_HORIZON}).
 * @returns minutes (a whole number), or `Infinity` when fewer than 2 firings are left before croner's limit.
 * @throws TypeError when `from` is not a valid Date; RangeError for a bad horizon.
 */
export function shortestIntervalMinutes(s: ScheduleTimes, from: Date, horizon: number = DEFAULT_INTERVAL_HORIZON): number {
  checkDate(from, 'from');
  if (!Number.isInteger(horizon) || horizon < 2) throw new RangeError(`horizon must be an integer of at least 2, not ${horizon}`);
  const cron = cronOf(s);
  let shortest = Infinity;
  let previous = cron.nextRun(from);
  for (let i = 1; i < horizon && previous && shortest > 1; i++) {
    const next = cron.nextRun(previous);
    if (!next) break;
    shortest = Math.min(shortest, (next.getTime() - previous.getTime()) / 60_000);
    previous = next;
  }
  return shortest;
}

/**
 * The firing due at `now`: the latest slot at or before `now` that is strictly after both `lastFiredAt`
 * (when the schedule has fired) and `since`, else null. Missed slots collapse into one: after 3 hours down,
 * an hourly schedule is due once, for its latest slot; the ones before it are never fired.
 *
 * One backward search from `now` (croner's `previousRuns`), so a year of downtime on `* * * * *` costs the
 * same as a minute.
 * @param opts.now the current instant.
 * @param opts.lastFiredAt the slot this function returned when the schedule last fired (store that slot,
 *   not the clock time of the firing: a firing recorded late could hide the next slot), or null.
 * @param opts.since when the schedule started counting (its creation, or when it was last enabled): slots
 *   at or before it are not due. With both instants, the later one counts: when `since` is the creation
 *   time that is always `lastFiredAt`; when it is the time the schedule was enabled again, the slots it
 *   was off for are not due.
 * @returns the slot (a whole minute), or null when nothing is due.
 * @throws TypeError when an instant is not a valid Date.
 */
export function dueFiring(s: ScheduleTimes, opts: { now: Date; lastFiredAt: Date | null; since: Date }): Date | null {
  const now = checkDate(opts.now, 'now').getTime();
  const floor = Math.max(checkDate(opts.since, 'since').getTime(), opts.lastFiredAt === null ? -Infinity : checkDate(opts.lastFiredAt, 'lastFiredAt').getTime());
  if (floor >= now) return null;
  // croner drops the milliseconds of the reference and returns runs strictly before that second, so the
  // reference is the next whole second: the latest run at or before `now`.
  const [slot] = cronOf(s).previousRuns(1, new Date(Math.floor(now / 1000) * 1000 + 1000));
  return slot && slot.getTime() > floor && slot.getTime() <= now ? slot : null;
}

/** What {@link checkScheduleRule} found: the rule, and its shortest interval when one was asked for. */
export interface ScheduleRuleCheck {
  times: ScheduleTimes;
  /** Minutes (see {@link shortestIntervalMinutes}); null when `minIntervalMinutes` is 1 (every rule passes). */
  shortestIntervalMinutes: number | null;
}

/**
 * Everything a schedule's rule is checked for when it is written: {@link parseScheduleTimes}, and, when the plan's
 * shortest interval is above a minute, {@link shortestIntervalMinutes} from `now`. Up to about 2 s of CPU for the
 * worst expressions (see both), so the local service runs it off the HTTP thread (ConfigParser.checkSchedule).
 * @throws CodedError `invalid_request`, as {@link parseScheduleTimes}.
 */
export function checkScheduleRule(input: { cron: unknown; timezone?: unknown }, opts: { minIntervalMinutes: number; now: Date }): ScheduleRuleCheck {
  const times = parseScheduleTimes(input);
  return { times, shortestIntervalMinutes: opts.minIntervalMinutes > 1 ? shortestIntervalMinutes(times, opts.now) : null };
}
