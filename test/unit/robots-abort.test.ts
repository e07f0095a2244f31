/**
 * robots.txt rules asked for with a signal that is already aborted (lambdas/engine/crawl/robots.ts): the check
 * rejects with the signal's reason, and the load of the file it started, which fails with that reason too, is no
 * unhandled rejection (seen in CI after an aborted heavy run: node:test failed test/engine/browser.test.ts for
 * "asynchronous activity after the test ended"; in a job worker an unhandled rejection ends the thread).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RobotsRules } from '../../lambdas/engine/crawl/robots.ts';

describe('robots.txt rules and an aborted run', () => {
  it('a check with an aborted signal rejects with its reason and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => { unhandled.push(reason); };
    process.on('unhandledRejection', onUnhandled);
    try {
      const reason = Object.assign(new Error('The run took longer than the limit'), { code: 'job_timeout' });
      const rules = new RobotsRules({
        fetch: async (_url, _limits, signal) => {
          await new Promise((r) => setTimeout(r, 20));
          return signal?.aborted ? { error: signal.reason } : { status: 404, text: '' };
        },
        warn: () => undefined,
      });
      const c = new AbortController();
      c.abort(reason);
      await assert.rejects(rules.check('http://shop.example/item/1', c.signal), (e) => e === reason);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
