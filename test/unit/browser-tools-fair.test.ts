/**
 * The local service's browser thread (lambdas/adapters/local/browser-tools.ts) bounds each account's browser work
 * (issue 37): of one account's renders at once, at most BROWSER_TASKS_PER_OWNER reach its Chromium (the rest wait
 * their turn, or are refused 503 `service_busy` near their deadline), and another account's render runs meanwhile.
 * Real Chromium, on loopback (test/run.ts runs this file in a network namespace with only loopback).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BROWSER_TASKS_PER_OWNER, LocalBrowserTools } from '../../lambdas/adapters/local/browser-tools.ts';
import { isCodedError } from '../../lambdas/errors.ts';

describe("the tools' browser thread: one account's renders are bounded", () => {
  let server: http.Server;
  let base: string;
  let tools: LocalBrowserTools;
  let open = 0;
  let mostOpen = 0;

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/spin/') {
        // A script that never ends: its renderer is busy for good.
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html><body><ul><li>one</li></ul><script>for (;;) {}</script></body></html>');
        return;
      }
      if (req.url === '/slow/') {
        // Answers, then never finishes its body: the page's load holds its browser work until its time is up.
        mostOpen = Math.max(mostOpen, ++open);
        res.once('close', () => { open--; });
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).write('<!doctype html><html><body><p>loading');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html><head><title>Plain</title></head><body><p>plain</p></body></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    tools = new LocalBrowserTools(['127.0.0.0/8']);
    // The browser started, so that the calls below are timed on a running one.
    await tools.renderToolPage({ url: `${base}/plain/`, startedAt: Date.now(), deadlineMs: 60_000, globalPaths: [], owner: 'warm' });
  });
  after(async () => {
    await tools?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it(`at most ${BROWSER_TASKS_PER_OWNER} renders of one account at once; another account's render is answered meanwhile`, async () => {
    const render = (owner: string, path: string, deadlineMs: number) =>
      tools.renderToolPage({ url: `${base}${path}`, startedAt: Date.now(), deadlineMs, globalPaths: [], owner }).then(() => 'ok', (err: unknown) => {
        assert.ok(isCodedError(err), `an uncoded error: ${String(err)}`);
        return err.code;
      });
    // Five renders of account a whose page never finishes loading (each holds it until its deadline less 8 s); b's
    // render a moment later.
    const flood = Array.from({ length: 5 }, () => render('a', '/slow/', 14_000));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await render('b', '/plain/', 90_000), 'ok');
    const outcomes = await Promise.all(flood);
    assert.ok(mostOpen <= BROWSER_TASKS_PER_OWNER, `${mostOpen} of account a's pages loaded at once`);
    // Each ends with a coded answer: the load's time-out, busy for one that waited until its deadline, or
    // render_timeout for one the browser thread had not answered when its time was up.
    for (const o of outcomes) assert.ok(['page_load_timeout', 'service_busy', 'target_unreachable', 'render_timeout'].includes(o), o);
  });

  it('a render whose page never stops its script is answered by the call\'s deadline with a coded 422, not after it', async () => {
    // The bench's flood (npm run bench -- fairness, tools) saw such renders answered 21 s past their 8 s deadline, as
    // a 500 of the HTTP layer's own time-out: the browser thread's work on a spinning renderer outlived the call.
    const deadlineMs = 4_000;
    const startedAt = Date.now();
    const results = await Promise.all([1, 2].map((i) => tools.renderToolPage({ url: `${base}/spin/`, startedAt, deadlineMs, globalPaths: [], owner: `spin${i}` })
      .then(() => 'ok', (err: unknown) => (isCodedError(err) ? err.code : `uncoded: ${String(err)}`))));
    const tookMs = Date.now() - startedAt;
    for (const r of results) assert.ok(['render_timeout', 'page_load_timeout', 'target_unreachable', 'ok'].includes(r), r);
    // The answer comes when the call's time is up (a timer of this thread), whatever the browser is doing; the
    // slack is for a loaded machine's event loop, not for the browser.
    assert.ok(tookMs < deadlineMs + 3_000, `answered ${tookMs} ms after the call started (deadline ${deadlineMs} ms): ${results.join(", ")}`);
  });
});
