/**
 * A tool's Lambda handler (lambdas/http/tools-seo-analyzer.ts, driven with an API Gateway proxy event as the
 * cloud drives it, one tool worker thread as in a Lambda instance) on a page whose analysis cannot finish in time:
 * the call's deadline ends it with 422 `analysis_limit_exceeded`, well before the function's own time-out (which
 * would be a 5xx), and the credit is given back; the next call on the same instance works.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { closeToolWorkers, configureToolCalls, warmToolWorkers } from '../../lambdas/core/tools.ts';
import { createAccount } from '../../lambdas/core/accounts.ts';
import { installServices } from '../../lambdas/core/services.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { handler as seoAnalyzer } from '../../lambdas/http/tools-seo-analyzer.ts';
import { handler as me } from '../../lambdas/http/me.ts';
import { lambdaContext, proxyEvent } from '../helpers/aws-events.ts';
import { testServices } from '../helpers/services.ts';

/** The call's deadline in this test, ms (25 s in a real Lambda, whose time-out is 29 s). */
const DEADLINE_MS = 3_000;
/**
 * The last bytes of the page come this late (the rest at once): 1.1 s before the call's own requests are aborted
 * (0.5 s before the deadline), which the 5 MB take to arrive even on a loaded machine (with a tail 0.25 s before that
 * cut-off, a run beside a second `npm test` once got `target_unreachable`), leaving the analysis at most 1.6 s, where
 * seo-analyzer needs some 2.2 s for these 5 MB of links on a quiet machine and more on a busy one (tech-detector
 * needs 0.65 s on the costliest 5 MB tried once its fingerprints are compiled: too fast for any such window).
 */
const LATE_TAIL_MS = 1_400;

type Handler = typeof seoAnalyzer;
const invoke = async (h: Handler, e: ReturnType<typeof proxyEvent>) =>
  (await h(e, lambdaContext() as Parameters<Handler>[1], { signal: new AbortController().signal })) as APIGatewayProxyResult;

describe('a tool Lambda on a page whose analysis runs past the deadline', () => {
  let site: http.Server;
  let base: string;
  let accountId: number;

  before(async () => {
    // 5 MB of links (seconds of SEO analysis), the last bytes late; a small article at once.
    const table = Buffer.from('<a href="/x">y</a>'.repeat(280_000));
    const article = Buffer.from('<!DOCTYPE html><html><head><title>Small</title></head><body><article><h1>Small</h1><p>'
      + 'An ordinary article, long enough to be one, with a sentence or two of text in it, read after the runaway one. '.repeat(5) + '</p></article></body></html>');
    site = http.createServer((req, res) => {
      const late = req.url === '/late-links/';
      const body = late ? table : article;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
      if (late) {
        res.write(body.subarray(0, body.length - 16));
        setTimeout(() => res.end(body.subarray(body.length - 16)), LATE_TAIL_MS);
      } else res.end(body);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    const { svc } = testServices({ overrides: { guard: new OutboundGuard({ allow: ['127.0.0.0/8'] }) } });
    installServices(svc);
    accountId = (await createAccount(svc, { email: 'lambda@example.com', password: 'correct horse battery', plan: 'pro' })).account.id;
    // As a Lambda instance: one thread, nothing waiting (one call at a time).
    await configureToolCalls({ deadlineMs: DEADLINE_MS, size: 1, maxWaiting: 0, memoryMb: 256 });
    await warmToolWorkers(); // as the handler module does at a Lambda's cold start
  });
  after(async () => {
    await closeToolWorkers();
    await new Promise((r) => { site.closeAllConnections(); site.close(r); });
  });

  const call = (url: string) => invoke(seoAnalyzer, proxyEvent('POST', '/api/v1/tools/seo-analyzer/', '/api/v1/tools/seo-analyzer/', {
    body: { url }, authorizer: { principalId: String(accountId), accountId: String(accountId) },
  }));
  const credits = async () => JSON.parse((await invoke(me as Handler, proxyEvent('GET', '/api/v1/me/', '/api/v1/me/', {
    authorizer: { principalId: String(accountId), accountId: String(accountId) },
  }))).body).subscription.credits_remaining as number;

  it('answers 422 analysis_limit_exceeded at the deadline, not charged; the next call works', async () => {
    const before = await credits();
    const t0 = Date.now();
    const r = await call(`${base}/late-links/`);
    const took = Date.now() - t0;
    assert.equal(r.statusCode, 422, r.body);
    const body = JSON.parse(r.body);
    assert.equal(body.code, 'analysis_limit_exceeded');
    assert.deepEqual(body.details, [{ url: `${base}/late-links/`, limit: 'time', deadline_ms: DEADLINE_MS }]);
    assert.ok(took >= DEADLINE_MS - 500 && took < DEADLINE_MS + 4_000, `answered after ${took} ms`);
    assert.equal(Math.round((await credits()) * 10), Math.round(before * 10), 'the credit is given back');

    // The worker ended at the deadline is replaced at once; its replacement loads the tools before it is ready. Waiting for it keeps this call's 2 s (a test's deadline; 25 s in a Lambda)
    // for the call itself on a loaded machine.
    await warmToolWorkers();
    const ok = await call(`${base}/article/`);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(typeof JSON.parse(ok.body).score, 'number', ok.body);
    assert.equal(Math.round((before - (await credits())) * 10), 1, 'the answered call costs 0.1 credit');
  });
});
