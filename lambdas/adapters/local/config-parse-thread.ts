/**
 * The worker thread of config-parser.ts: parses config texts one at a time and answers each with the
 * config or the error, as plain data (classes do not cross threads).
 */
import { parentPort } from 'node:worker_threads';
import { lowerThisThreadPriority } from '../../thread-priority.ts';
import { parseConfig } from '../../engine/config.ts';
import { isCodedError } from '../../errors.ts';

/** A request from the HTTP thread. */
export interface ParseRequest {
  id: number;
  text: string;
}

/** The answer: the config, a coded error (`invalid_config`), or any other error (a bug). */
export type ParseAnswer =
  | { id: number; ok: true; config: unknown }
  | { id: number; ok: false; coded: { code: string; message: string; details: unknown[] } }
  | { id: number; ok: false; failure: { name: string; message: string } };

// Parsing yields the CPU to the thread that answers HTTP (lambdas/thread-priority.ts).
lowerThisThreadPriority();

parentPort?.on('message', ({ id, text }: ParseRequest) => {
  let answer: ParseAnswer;
  try {
    answer = { id, ok: true, config: parseConfig(text) };
  } catch (err) {
    answer = isCodedError(err)
      ? { id, ok: false, coded: { code: err.code, message: err.message, details: err.details } }
      : { id, ok: false, failure: { name: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err) } };
  }
  parentPort!.postMessage(answer);
});
