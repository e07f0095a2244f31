/**
 * One reader thread (./reader-pool.ts): reads the pages it is sent with the config of their run, compiled once per run
 * (engine/crawl/page-reader.ts `PageReading`), and answers each with its rows or its error. It holds nothing else: no
 * service, no socket, no store. It runs at nice 19, the lowest priority, so it takes only a core no one else wants.
 */
import { parentPort } from 'node:worker_threads';
import { PageReading } from '../../engine/crawl/page-reader.ts';
import { isCodedError } from '../../errors.ts';
import { lowerThisThreadPriority } from '../../thread-priority.ts';
import { READER_NICE, type ReaderReply, type ReaderRequest } from './reader-pool.ts';

lowerThisThreadPriority(READER_NICE);

const readings = new Map<number, PageReading>();

parentPort!.on('message', (m: ReaderRequest) => {
  if (m.type === 'config') {
    readings.set(m.run, new PageReading(m.config));
    return;
  }
  if (m.type === 'drop') {
    readings.delete(m.run);
    return;
  }
  let reply: ReaderReply;
  try {
    const reading = readings.get(m.run);
    if (!reading) throw new Error(`no config for run ${m.run} on this reader thread`);
    reply = { task: m.task, value: m.kind === 'listing' ? reading.listing(m.html, m.url) : reading.detail(m.html, m.url) };
  } catch (err) {
    const e = err as Error;
    reply = { task: m.task, error: { message: e?.message ?? String(err), name: e?.name, ...(isCodedError(err) ? { code: err.code, details: err.details } : {}) } };
  }
  parentPort!.postMessage(reply);
});
