/**
 * A {@link Clock} ahead of the system clock by an offset read from a file (SAI_CLOCK_FILE): how the API tests of
 * schedules move the running service's time forward without waiting for it (issue 26: "the clock port moved
 * forward"). Not for production: docs/monitoring.md, "Testing schedules".
 *
 * The file holds the offset in milliseconds as a decimal integer (`3600000`: an hour ahead); an absent, empty or
 * unreadable file is an offset of 0. It is read again at most every {@link REREAD_MS}, so every thread of the
 * service (each builds its own services) follows a change within that time. The offset only moves what the domain
 * reads from the clock (schedules, metering periods, job times); timers, time-outs and the local queue's visibility
 * stay on real time, so a job under way is never taken for lost.
 */
import fs from 'node:fs';
import type { Clock } from '../../core/ports.ts';

/** ms between reads of the file. */
const REREAD_MS = 100;

/** The clock of SAI_CLOCK_FILE. @param file absolute path of the offset file. */
export function offsetClock(file: string): Clock {
  let offset = 0;
  let readAt = -Infinity;
  return {
    now() {
      const t = Date.now();
      if (t - readAt >= REREAD_MS) {
        readAt = t;
        try {
          const n = Number(fs.readFileSync(file, 'utf8').trim() || '0');
          offset = Number.isSafeInteger(n) ? n : 0;
        } catch {
          offset = 0;
        }
      }
      return new Date(t + offset);
    },
  };
}
