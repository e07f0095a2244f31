/**
 * The request-scoped logger (lambdas/logger.ts): requests served at once by one process (the local service) each log
 * their own Lambda context and keys, whatever the interleaving; outside a scope the logger is Powertools' own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Context } from 'aws-lambda';
import { logger, withRequestScope } from '../../lambdas/logger.ts';

/** The logger's JSON lines written while `fn` runs (Powertools' console writes to stdout and stderr). */
async function captured(fn: () => Promise<void>): Promise<Array<Record<string, unknown>>> {
  const lines: string[] = [];
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const grab = (chunk: unknown) => { lines.push(String(chunk)); return true; };
  process.stdout.write = grab as typeof process.stdout.write;
  process.stderr.write = grab as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  // The test runner writes its own (binary) reports to stdout meanwhile: only the logger's JSON lines are kept.
  return lines.flatMap((chunk) => chunk.split('\n')).filter((l) => l.startsWith('{"level"')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

function context(functionName: string, requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false, functionName, functionVersion: '$LATEST', invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024', awsRequestId: requestId, logGroupName: `/aws/lambda/${functionName}`, logStreamName: 'local',
    getRemainingTimeInMillis: () => 1000, done: () => undefined, fail: () => undefined, succeed: () => undefined,
  };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('request-scoped logger', () => {
  it('requests handled at once each log their own function name, request id and keys', async () => {
    const lines = await captured(async () => {
      await Promise.all(Array.from({ length: 20 }, (_, i) => withRequestScope(async () => {
        await tick(20 - i); // the requests add their context in one order and log in another
        logger.addContext(context(`http/route-${i}.ts`, `req-${i}`));
        logger.appendKeys({ n: i });
        await tick(i % 7);
        logger.info('request', { requestId: `req-${i}` });
        logger.warn('again', { requestId: `req-${i}` });
        logger.resetKeys();
        logger.info('after reset', { requestId: `req-${i}` });
      })));
    });
    assert.equal(lines.length, 60);
    for (const line of lines) {
      const i = Number(String(line.requestId).slice(4));
      assert.equal(line.function_name, `http/route-${i}.ts`, JSON.stringify(line));
      assert.equal(line.function_request_id, `req-${i}`, JSON.stringify(line));
      assert.equal(line.service, 'scrape-ai');
      if (line.message === 'after reset') assert.equal(line.n, undefined, 'resetKeys clears the request\'s keys');
      else assert.equal(line.n, i, JSON.stringify(line));
    }
  });

  it('a line outside any scope carries no request context, and a scope leaves the shared logger untouched', async () => {
    const lines = await captured(async () => {
      await withRequestScope(async () => {
        logger.addContext(context('http/me.ts', 'inside'));
        logger.appendKeys({ only: 'inside' });
        logger.info('in');
      });
      logger.info('out');
    });
    assert.equal(lines[0]!.function_name, 'http/me.ts');
    assert.equal(lines[0]!.only, 'inside');
    assert.equal(lines[1]!.message, 'out');
    assert.equal(lines[1]!.function_name, undefined);
    assert.equal(lines[1]!.only, undefined);
  });

  it("a call's own keys win over the scope's", async () => {
    const lines = await captured(async () => withRequestScope(async () => {
      logger.appendKeys({ status: 'scope' });
      logger.info('x', { status: 200 });
    }, { path: '/api/v1/me/' }));
    assert.equal(lines[0]!.status, 200);
    assert.equal(lines[0]!.path, '/api/v1/me/');
  });
});
