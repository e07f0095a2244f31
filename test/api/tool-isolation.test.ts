/**
 * Hostile pages against the tools, over real HTTP on the local service (issue 24; docs/tools.md "Where the tools
 * run"): the pages are read in tool worker threads with a time budget and a memory cap, never on the thread that
 * answers HTTP. A loopback server serves what the issue's attack used: 5 MB of unclosed `<table><tr><td>`,
 * `<div>` nested 30,000 deep, 5 MB of phone-like digits, an article-like page of 5 MB, and the unclosed tables again,
 * their last bytes sent late, whose analysis cannot end before the call's deadline (`SAI_TOOL_DEADLINE_MS`, 3 s here, so that the test runs in seconds). Each
 * call answers within its deadline with a result or 422 `analysis_limit_exceeded`, the refused calls are not charged,
 * the process stays up, and meanwhile another account's `GET /me/` keeps answering (its p99 is printed). A full
 * queue is refused at once with 503 `service_busy`, nothing spent.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { percentile } from '../helpers/fault-matrix.ts';

/** The call's deadline the service runs with, ms. */
const DEADLINE_MS = 3_000;
/**
 * When /late-links/ (5 MB of links) sends the last bytes of its body, ms (the rest goes at once): 1.1 s before the
 * call's own requests are aborted (0.5 s before the deadline), so the page arrives even on a loaded machine (with
 * 0.3 s, beside a second `npm test` the 5 MB once came too late: `target_unreachable`), and 1.6 s before the
 * deadline, which is all its analysis gets. seo-analyzer needs some 2.2 s for those 5 MB on the 2-core machine, more
 * on a busy one (tech-detector on a 5 MB table, this test's page before, needs 0.9 s: too fast for a window that
 * leaves the transfer its slack), so the deadline, not the analysis, ends the call.
 */
const LATE_TAIL_MS = 1_400;
/** What a loaded 2-core machine may add to an answer past the deadline (scheduling, the HTTP round trip), ms. */
const SLACK_MS = 4_000;
/** Bound on another account's `GET /me/` p99 while the hostile calls run, ms (generous: a loaded machine). */
const ME_P99_BOUND_MS = 500;

const MB5 = 5 * 1024 * 1024 - 4096;

/** The hostile pages, built once, each at most 5 MiB (the most a tool reads). */
function hostilePages(): Record<string, Buffer> {
  let soup = '<!DOCTYPE html><html><head><title>Soup</title></head><body><article>';
  for (let i = 0; soup.length < MB5 - 400; i++) {
    soup += `<div class="post"><h2>Heading ${i}</h2><p>Lorem ipsum dolor sit amet, <a href="/p/${i}">consectetur</a> adipiscing elit, sed do eiusmod tempor <b>incididunt</b> ut labore et dolore magna aliqua, ${i}.</p></div>\n`;
  }
  soup += '</article></body></html>';
  let phones = '<!DOCTYPE html><html><head><title>Call us</title></head><body><p>';
  for (let i = 0; phones.length < MB5 - 100; i++) phones += `+1 (${200 + (i % 700)}) ${100 + (i % 900)}-${1000 + (i % 9000)} `;
  phones += '</p></body></html>';
  return {
    '/table/': Buffer.from('<table><tr><td>x'.repeat(Math.floor(MB5 / 17))),
    '/links/': Buffer.from('<a href="/x">y</a>'.repeat(Math.floor(MB5 / 18))),
    '/nested/': Buffer.from(`<!DOCTYPE html><html><body>${'<div>'.repeat(30_000)}deep${'</div>'.repeat(30_000)}</body></html>`),
    '/phones/': Buffer.from(phones),
    '/soup/': Buffer.from(soup),
    '/article/': Buffer.from('<!DOCTYPE html><html lang="en"><head><title>A short article</title></head><body><article><h1>A short article</h1>'
      + '<p>This page is small and ordinary: the tools answer it as they always do, after the hostile pages have had their threads ended.</p>'
      + '<p>Write to press@stanford.edu or call +1 650 723 2300.</p></article></body></html>'),
  };
}

async function startHostileSite(): Promise<{ url: string; close(): Promise<void> }> {
  const pages = hostilePages();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const late = path === '/late-links/';
    const body = pages[late ? '/links/' : path];
    if (!body) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
    if (req.method === 'HEAD') res.end();
    else if (late) {
      res.write(body.subarray(0, body.length - 16));
      setTimeout(() => res.end(body.subarray(body.length - 16)), LATE_TAIL_MS);
    } else res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** Polls another account's `GET /me/` one request after another until `stop()`; every answer must be 200. */
function pollMe(api: ReturnType<typeof client>) {
  const ms: number[] = [];
  const failures: string[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      const r = await api.get('/api/v1/me/');
      ms.push(performance.now() - t0);
      if (r.status !== 200) failures.push(`${r.status} ${JSON.stringify(r.body)}`);
      await sleep(2);
    }
  })();
  return {
    ms,
    failures,
    async stop() {
      stopped = true;
      await done;
    },
  };
}


describe('tool calls on hostile pages run off the HTTP thread, within a time budget and a memory cap', () => {
  let site: Awaited<ReturnType<typeof startHostileSite>>;
  let svc: TestService;
  let attacker: ReturnType<typeof client>;
  let bystander: ReturnType<typeof client>;
  const credits = async () => (await attacker.get('/api/v1/me/')).body.subscription.credits_remaining as number;
  /** Credits are tenths: compare them as whole tenths. */
  const tenths = (n: number) => Math.round(n * 10);

  before(async () => {
    site = await startHostileSite();
    // Threads ready before the first call (SAI_TOOL_IDLE_MS=0): a cold start waits for them to load, which a loaded
    // machine can stretch past this test's 3 s deadline (test/helpers/fault-matrix.ts says the same).
    svc = await startService({ SAI_TOOL_DEADLINE_MS: String(DEADLINE_MS), SAI_TOOL_WORKERS: '2', SAI_TOOL_QUEUE: '1', SAI_TOOL_IDLE_MS: '0' });
    attacker = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
    bystander = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('each hostile page is answered within its deadline with a result or 422 analysis_limit_exceeded; refused calls cost nothing; /me/ of another account keeps answering', async (t) => {
    const before = await credits();
    const poll = pollMe(bystander);
    const cases: Array<{ tool: string; page: string; mustStop?: boolean }> = [
      { tool: 'content-extractor', page: '/table/' },
      { tool: 'content-extractor', page: '/nested/' },
      { tool: 'lead-generation', page: '/phones/' },
      { tool: 'content-extractor', page: '/soup/' },
      { tool: 'seo-analyzer', page: '/late-links/', mustStop: true },
    ];
    let answered = 0;
    const seen: string[] = [];
    try {
      for (const c of cases) {
        // A call is sent as a client would: a 503 service_busy (no thread became free in time: the threads the calls
        // before it ended at their deadline are still starting again, which takes seconds on a loaded machine) is sent
        // again after its Retry-After, at most twice; it is not charged. The answer that counts is the last one.
        let r: Awaited<ReturnType<typeof attacker.post>>;
        let took: number;
        for (let attempt = 0; ; attempt++) {
          const t0 = performance.now();
          r = await attacker.post(`/api/v1/tools/${c.tool}/`, { url: `${site.url}${c.page}` });
          took = Math.round(performance.now() - t0);
          seen.push(`${c.tool} ${c.page}: ${r.status}${r.body?.code ? ` ${r.body.code} (${r.body.details?.[0]?.limit})` : ''} in ${took} ms`);
          assert.ok(took < DEADLINE_MS + SLACK_MS, `${c.tool} ${c.page} answered after ${took} ms`);
          if (r.status !== 503 || attempt === 2) break;
          assert.equal(r.body.code, 'service_busy', JSON.stringify(r.body));
          await new Promise((done) => setTimeout(done, Number(r.headers.get('retry-after') ?? '5') * 1000));
        }
        if (r.status === 200) {
          assert.ok(!c.mustStop, `${c.tool} ${c.page} was expected to pass the deadline, and answered 200 in ${took} ms`);
          answered++;
          continue;
        }
        assert.equal(r.status, 422, `${c.tool} ${c.page}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'analysis_limit_exceeded');
        assert.equal(r.body.details[0].url, `${site.url}${c.page}`);
        assert.ok(['time', 'memory', 'stack'].includes(r.body.details[0].limit), JSON.stringify(r.body));
        assert.match(r.body.error, /not charged/);
        if (c.mustStop) {
          assert.equal(r.body.details[0].limit, 'time');
          assert.equal(r.body.details[0].deadline_ms, DEADLINE_MS);
          assert.ok(took >= DEADLINE_MS - 1_000, `stopped at the deadline, not before (${took} ms)`);
        }
      }
    } finally {
      await poll.stop();
    }
    t.diagnostic(seen.join('; '));
    const p50 = percentile(poll.ms, 50);
    const p99 = percentile(poll.ms, 99);
    t.diagnostic(`another account's GET /me/ during the hostile calls: ${poll.ms.length} requests, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...poll.ms).toFixed(1)} ms`);
    assert.deepEqual(poll.failures, []);
    assert.ok(poll.ms.length >= 100, `${poll.ms.length} requests`);
    assert.ok(p99 < ME_P99_BOUND_MS, `p99 ${p99.toFixed(1)} ms`);

    assert.equal(svc.proc.exitCode, null, 'the service is up');
    assert.equal(tenths(before - (await credits())), answered, 'only the answered calls are charged (0.1 credit each)');

    // The threads that were ended have been replaced: an ordinary page gets its answer.
    // (Sent again after its Retry-After while they are still starting, as a client would.)
    let ok = await attacker.post('/api/v1/tools/lead-generation/', { url: `${site.url}/article/` });
    for (let attempt = 0; ok.status === 503 && ok.body.code === 'service_busy' && attempt < 2; attempt++) {
      await new Promise((done) => setTimeout(done, Number(ok.headers.get('retry-after') ?? '5') * 1000));
      ok = await attacker.post('/api/v1/tools/lead-generation/', { url: `${site.url}/article/` });
    }
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.emails.map((e: { email: string }) => e.email), ['press@stanford.edu']);
  });

  it('calls beyond the workers and the queue are refused at once with 503 service_busy and Retry-After, and nothing is spent on any refused call', async (t) => {
    const before = await credits();
    // Two workers and one place in the queue: two calls hold the workers (their page comes late), one waits (and
    // is refused when its deadline comes near, unless a worker is free by then), the fourth is refused at once.
    const calls = [0, 1, 2].map(() => attacker.post('/api/v1/tools/content-extractor/', { url: `${site.url}/late-links/` }));
    await sleep(300);
    const t0 = performance.now();
    const refused = await attacker.post('/api/v1/tools/content-extractor/', { url: `${site.url}/late-links/` });
    const took = performance.now() - t0;
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'service_busy');
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.ok(took < 1_500, `refused after ${Math.round(took)} ms`);
    const results = await Promise.all(calls);
    const statuses = results.map((r) => `${r.status}${r.body.code ? ` ${r.body.code}` : ''}`);
    t.diagnostic(`the three calls that got a place: ${statuses.join(', ')}`);
    // A call may also find its thread still starting (the last test ended two) and its late page then arrive after
    // its requests are aborted: 422 target_unreachable, also given back.
    for (const s of statuses) assert.ok(['200', '422 analysis_limit_exceeded', '422 target_unreachable', '503 service_busy'].includes(s), s);
    assert.ok(statuses.includes('503 service_busy'), 'the call waiting behind two calls that hold their workers is refused 1 s before its deadline');
    assert.equal(tenths(before - (await credits())), statuses.filter((s) => s === '200').length, 'only answered calls are charged');
    assert.equal(svc.proc.exitCode, null);
  });
});
