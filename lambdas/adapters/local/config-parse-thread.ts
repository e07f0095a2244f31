/**
 * The worker thread of config-parser.ts: parses config texts (and checks schedules' rules) one at a time and answers
 * each with the result or the error, as plain data (classes do not cross threads).
 */
import { parentPort } from 'node:worker_threads';
import { lowerThisThreadPriority } from '../../thread-priority.ts';
import { parseConfig } from '../../engine/config.ts';
import { checkScheduleRule } from '../../core/schedule-times.ts';
import { isCodedError } from '../../errors.ts';

/** A request from the HTTP thread: a config text, or a schedule's rule (core/schedule-times.ts `checkScheduleRule`). */
export type ParseRequest =
  | { id: number; text: string }
  | { id: number; schedule: { input: { cron: unknown; timezone?: unknown }; minIntervalMinutes: number; now: string } };

/** The answer: the config (or the rule's check), a coded error (`invalid_config`, `invalid_request`), or any other error (a bug). */
export type ParseAnswer =
  | { id: number; ok: true; config: unknown }
  | { id: number; ok: false; coded: { code: string; message: string; details: unknown[] } }
  | { id: number; ok: false; failure: { name: string; message: string } };

// Parsing yields the CPU to the thread that answers HTTP (lambdas/thread-priority.ts).
lowerThisThreadPriority();

parentPort?.on('message', (request: ParseRequest) => {
  const { id } = request;
  let answer: ParseAnswer;
  try {
    answer = 'text' in request
      ? { id, ok: true, config: parseConfig(request.text) }
      : { id, ok: true, config: checkScheduleRule(request.schedule.input, { minIntervalMinutes: request.schedule.minIntervalMinutes, now: new Date(request.schedule.now) }) };
  } catch (err) {
    answer = isCodedError(err)
      ? { id, ok: false, coded: { code: err.code, message: err.message, details: err.details } }
      : { id, ok: false, failure: { name: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err) } };
  }
  parentPort!.postMessage(answer);
});
