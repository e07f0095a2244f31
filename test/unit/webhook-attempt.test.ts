/**
 * One webhook delivery attempt (lambdas/core/webhook-attempt.ts, issue 26) against real receivers on 127.0.0.1: the
 * receiver verifies the Standard Webhooks signature with the standardwebhooks library; failures (5xx, 429, 4xx, a
 * redirect, a slow receiver, an endless body, a closed port, refused addresses) become results, retryable or not.
 * Also the retry schedule and the message body. Timing bounds are loose on purpose (the suite runs beside others).
 * Every client socket is watched (net-helpers.ts): nothing connects anywhere but loopback.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { Webhook } from 'standardwebhooks';
import {
  attemptWebhookDelivery, isRetryable, nextAttemptDelaySeconds, webhookRetryDelaysSeconds, WEBHOOK_MAX_ATTEMPTS,
} from '../../lambdas/core/webhook-attempt.ts';
import { newWebhookSecret, webhookPayload, type WebhookJobFacts } from '../../lambdas/core/webhook-events.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { listen, since, watchSockets, type LocalServer, type SocketWatch } from './net-helpers.ts';

const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });

/** A request a receiver got. */
interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver that records each request (its whole body) and answers with `answer`. */
async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): Promise<LocalServer & { got: Received[] }> {
  const got: Received[] = [];
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      got.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      answer(req, res, body);
    });
  });
  return Object.assign(server, { got });
}

const servers: LocalServer[] = [];
async function start(answer: Parameters<typeof receiver>[0]) {
  const r = await receiver(answer);
  servers.push(r);
  return r;
}

const secret = newWebhookSecret();
const payload = JSON.stringify({ type: 'job.completed', timestamp: '2025-01-01T00:00:00.000Z', data: { job_id: 'j1', note: 'é ✓' } });

function attempt(url: string, extra: Partial<Parameters<typeof attemptWebhookDelivery>[0]> = {}) {
  return attemptWebhookDelivery({ url, secret, messageId: 'msg_test_1', timestamp: new Date(), payload, guard, ...extra });
}

/** Unhandled errors of the whole file (a dropped body's `error` event must not become one). */
const events: string[] = [];
const onUncaught = (err: unknown) => events.push(`uncaughtException: ${(err as Error)?.stack ?? String(err)}`);
const onUnhandled = (reason: unknown) => events.push(`unhandledRejection: ${(reason as Error)?.stack ?? String(reason)}`);

let watch: SocketWatch;
before(() => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUnhandled);
  watch = watchSockets();
});
after(async () => {
  watch.stop();
  await Promise.all(servers.map((s) => s.close()));
  // A destroyed body's error event comes a tick or more after the attempt settles: give it time to show.
  await new Promise((r) => setTimeout(r, 100));
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUnhandled);
  assert.deepEqual(events, [], 'no unhandled error in the whole file');
});
beforeEach(() => watch.reset());

describe('newWebhookSecret', () => {
  it('is whsec_ and the base64 of 32 random bytes, which the library accepts', () => {
    const a = newWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
    assert.notEqual(a, newWebhookSecret());
    assert.match(new Webhook(a).sign('m', new Date(), '{}'), /^v1,/);
  });
});

describe('attemptWebhookDelivery', () => {
  it('POSTs the exact payload with headers whose signature the receiver verifies', async () => {
    let verified: unknown = 'not verified';
    const r = await start((req, res, body) => {
      try {
        verified = new Webhook(secret).verify(body, req.headers as Record<string, string>);
      } catch (err) {
        verified = err;
      }
      res.writeHead(204).end();
    });
    const timestamp = new Date();
    const result = await attempt(`${r.url}/hooks/in?x=1`, { timestamp });
    assert.deepEqual({ ...result, duration_ms: 0 }, { status_code: 204, duration_ms: 0, error: null, retryable: false });
    assert.ok(result.duration_ms >= 0 && Number.isInteger(result.duration_ms));
    assert.equal(r.got.length, 1);
    const [got] = r.got;
    assert.equal(got!.method, 'POST');
    assert.equal(got!.url, '/hooks/in?x=1');
    assert.equal(got!.body, payload);
    assert.deepEqual(verified, JSON.parse(payload));
    assert.equal(got!.headers['content-type'], 'application/json');
    assert.equal(got!.headers['user-agent'], 'scrape-ai-webhooks/1');
    assert.equal(got!.headers['webhook-id'], 'msg_test_1');
    assert.equal(got!.headers['webhook-timestamp'], String(Math.floor(timestamp.getTime() / 1000)));
    assert.equal(got!.headers['webhook-signature'], new Webhook(secret).sign('msg_test_1', timestamp, payload));
    watch.assertLoopbackOnly();
  });

  it('another secret does not verify', async () => {
    let error: unknown;
    const r = await start((req, res, body) => {
      try {
        new Webhook(newWebhookSecret()).verify(body, req.headers as Record<string, string>);
      } catch (err) {
        error = err;
      }
      res.writeHead(200).end('ok');
    });
    await attempt(r.url);
    assert.equal((error as Error)?.name, 'WebhookVerificationError');
  });

  it('500 and 429 are retryable failures; 404 is not', async () => {
    for (const [status, retryable] of [[500, true], [503, true], [429, true], [404, false], [400, false], [410, false]] as const) {
      const r = await start((_req, res) => res.writeHead(status, { 'content-type': 'text/plain' }).end('no'));
      const result = await attempt(r.url);
      assert.equal(result.status_code, status);
      assert.equal(result.error, `http_status: ${status}`);
      assert.equal(result.retryable, retryable, `${status}`);
      assert.equal(r.got.length, 1, 'one request: the attempt itself does not retry');
    }
  });

  it('a 302 is not followed: the target gets no request, and it is not retried', async () => {
    const target = await start((_req, res) => res.writeHead(204).end());
    const r = await start((_req, res) => res.writeHead(302, { location: `${target.url}/elsewhere` }).end());
    const result = await attempt(r.url);
    assert.equal(result.status_code, 302);
    assert.match(result.error!, /^http_status: 302/);
    assert.equal(result.retryable, false);
    assert.equal(r.got.length, 1);
    assert.equal(target.got.length, 0, 'the redirect target got no request');
  });

  it('a receiver slower than timeoutMs: a retryable timeout after about timeoutMs', async () => {
    const r = await start((_req, res) => {
      const t = setTimeout(() => res.writeHead(200).end(), 2_000);
      res.on('close', () => clearTimeout(t));
    });
    const t0 = performance.now();
    const result = await attempt(r.url, { timeoutMs: 300 });
    const took = since(t0);
    assert.equal(result.status_code, null);
    assert.equal(result.error, 'timeout: no answer within 300 ms');
    assert.equal(result.retryable, true);
    assert.ok(result.duration_ms >= 250 && result.duration_ms < 1_500, `duration_ms ${result.duration_ms}`);
    assert.ok(took < 1_500, `returned after ${Math.round(took)} ms`);
  });

  it('an endless body after 200 headers: delivered, returns without reading it all', async () => {
    let sent = 0;
    let closed = false;
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const r = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('close', () => { closed = true; });
      const pump = () => {
        while (!closed && res.write(chunk)) sent += chunk.length;
        if (!closed) res.once('drain', pump);
      };
      pump();
    });
    const t0 = performance.now();
    const result = await attempt(r.url, { timeoutMs: 5_000 });
    const took = since(t0);
    assert.deepEqual({ ...result, duration_ms: 0 }, { status_code: 200, duration_ms: 0, error: null, retryable: false });
    assert.ok(took < 4_000, `returned after ${Math.round(took)} ms`);
    // The connection was dropped: the receiver stops writing.
    for (let i = 0; i < 100 && !closed; i++) await new Promise((res) => setTimeout(res, 20));
    assert.ok(closed, 'the receiver saw the connection closed');
    assert.ok(sent < 64 * 1024 * 1024, `sent ${sent} bytes before the close`);
  });

  it('a closed port: unreachable, retryable', async () => {
    const r = await listen((_req, res) => res.end());
    const url = r.url;
    await r.close();
    const result = await attempt(url);
    assert.equal(result.status_code, null);
    assert.match(result.error!, /^unreachable: .*ECONNREFUSED/);
    assert.equal(result.retryable, true);
  });

  it('a guard without the allowlist: loopback and the metadata address are target_forbidden, no socket, not retried', async () => {
    const r = await start((_req, res) => res.writeHead(204).end());
    const strict = new OutboundGuard();
    for (const url of [r.url, 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/', 'http://10.0.0.1/']) {
      watch.reset();
      const result = await attempt(url, { guard: strict });
      assert.equal(result.status_code, null);
      assert.match(result.error!, /^target_forbidden: /, url);
      assert.equal(result.retryable, false);
      watch.assertNoSocket();
    }
    assert.match((await attempt('http://169.254.169.254/', { guard: strict })).error!, /169\.254\.169\.254 is a link-local \(cloud metadata service\) address/);
    assert.equal(r.got.length, 0, 'the loopback receiver got no request');
  });

  it('a name that resolves to a refused address (DNS changed): target_forbidden, no connection, not retried', async () => {
    const r = await start((_req, res) => res.writeHead(204).end());
    const rebound = new OutboundGuard({ resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const result = await attempt(`http://hooks.example.test:${r.port}/`, { guard: rebound });
    assert.equal(result.status_code, null);
    assert.match(result.error!, /^target_forbidden: /);
    assert.equal(result.retryable, false);
    assert.deepEqual(watch.connected, []);
    assert.equal(r.got.length, 0);
  });

  it('a URL that is not http(s) or does not parse: not retried', async () => {
    const ftp = await attempt('ftp://127.0.0.1/');
    assert.match(ftp.error!, /^target_forbidden: /);
    assert.equal(ftp.retryable, false);
    const bad = await attempt('not a url');
    assert.match(bad.error!, /^invalid_url: /);
    assert.equal(bad.retryable, false);
    watch.assertNoSocket();
  });

  it('an injected agent is used', async () => {
    const r = await start((_req, res) => res.writeHead(202).end());
    let used = 0;
    const { Agent } = await import('undici');
    const inner = new Agent();
    const agent = inner.compose((dispatch) => (opts, handler) => {
      used++;
      return dispatch(opts, handler);
    });
    try {
      const result = await attempt(r.url, { agent });
      assert.equal(result.status_code, 202);
      assert.equal(result.error, null);
      assert.equal(used, 1);
    } finally {
      await inner.close();
    }
  });
});

describe('isRetryable', () => {
  it('decides on the status, else on the error code', () => {
    assert.equal(isRetryable({ status_code: 200, error: null }), false);
    assert.equal(isRetryable({ status_code: 204, error: null }), false);
    assert.equal(isRetryable({ status_code: 301, error: 'http_status: 301 (redirects are not followed)' }), false);
    assert.equal(isRetryable({ status_code: 401, error: 'http_status: 401' }), false);
    assert.equal(isRetryable({ status_code: 429, error: 'http_status: 429' }), true);
    assert.equal(isRetryable({ status_code: 500, error: 'http_status: 500' }), true);
    assert.equal(isRetryable({ status_code: 599, error: 'http_status: 599' }), true);
    assert.equal(isRetryable({ status_code: null, error: 'timeout: no answer within 10000 ms' }), true);
    assert.equal(isRetryable({ status_code: null, error: 'unreachable: connect ECONNREFUSED 127.0.0.1:1' }), true);
    assert.equal(isRetryable({ status_code: null, error: 'unreachable: hooks.example does not resolve to any address' }), true);
    assert.equal(isRetryable({ status_code: null, error: 'bad_response: Parse Error' }), true);
    assert.equal(isRetryable({ status_code: null, error: 'target_forbidden: 10.0.0.1 is a private address' }), false);
    assert.equal(isRetryable({ status_code: null, error: 'invalid_url: "x" is not a valid absolute URL' }), false);
  });
});

describe('nextAttemptDelaySeconds', () => {
  const noJitter = () => 0.5;

  it('follows the schedule, then ends', () => {
    assert.deepEqual([...webhookRetryDelaysSeconds], [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]);
    assert.equal(WEBHOOK_MAX_ATTEMPTS, 8);
    const delays = [1, 2, 3, 4, 5, 6, 7].map((a) => nextAttemptDelaySeconds(a, noJitter));
    assert.deepEqual(delays, [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]);
    assert.equal(nextAttemptDelaySeconds(8, noJitter), null);
    assert.equal(nextAttemptDelaySeconds(9, noJitter), null);
    assert.throws(() => nextAttemptDelaySeconds(0), RangeError);
    assert.throws(() => nextAttemptDelaySeconds(1.5), RangeError);
  });

  it('spans about a day in total', () => {
    const total = webhookRetryDelaysSeconds.reduce((a, b) => a + b, 0);
    assert.equal(total, 99_305);
    assert.ok(total > 20 * 3600 && total < 30 * 3600, `${total / 3600} h`);
  });

  it('jitters by at most 10%', () => {
    assert.equal(nextAttemptDelaySeconds(2, () => 0), 270);
    assert.equal(nextAttemptDelaySeconds(2, () => 0.999999), 330);
    for (let i = 0; i < 200; i++) {
      const d = nextAttemptDelaySeconds(4)!;
      assert.ok(d >= 6_480 && d <= 7_920, `${d}`);
    }
  });
});

describe('webhookPayload', () => {
  const job: WebhookJobFacts = {
    id: 'job-1', config_id: 'cfg-1', schedule_id: 'sch-1', status: 'completed', job_type: 'run', row_count: 12, items_found: 12,
    pages_scraped: 3, completed_at: '2025-03-04T05:06:07.000Z', status_message: 'Done',
    changes: { added: 2, removed: 1, changed: 3, compared_with: 'job-0', key_fields: ['url'], changes_key: 'changes/job-1.json' },
  };

  it('has the Standard Webhooks shape, with absolute links under a base URL', () => {
    const body = JSON.parse(webhookPayload('job.changed', job, 'https://scrape.example.com/'));
    assert.deepEqual(body, {
      type: 'job.changed',
      timestamp: '2025-03-04T05:06:07.000Z',
      data: {
        job_id: 'job-1', job_type: 'run', config_id: 'cfg-1', schedule_id: 'sch-1', status: 'completed', row_count: 12,
        items_found: 12, pages_scraped: 3, completed_at: '2025-03-04T05:06:07.000Z', status_message: 'Done',
        changes: { added: 2, removed: 1, changed: 3, compared_with: 'job-0' },
        links: {
          status: 'https://scrape.example.com/api/v1/jobs/job-1/status/',
          results: 'https://scrape.example.com/api/v1/jobs/job-1/results/',
          changes: 'https://scrape.example.com/api/v1/jobs/job-1/changes/',
        },
      },
    });
  });

  it('has paths without a base URL; null where there is nothing to link or tell', () => {
    const failed: WebhookJobFacts = {
      id: 'job-2', config_id: null, status: 'failed', job_type: 'run', row_count: 0, items_found: 0, pages_scraped: 1,
      completed_at: null, status_message: 'target_failed: 503',
    };
    const now = new Date('2025-06-01T00:00:00.000Z');
    const body = JSON.parse(webhookPayload('job.failed', failed, null, now));
    assert.equal(body.timestamp, now.toISOString());
    assert.equal(body.data.schedule_id, null);
    assert.equal(body.data.changes, null);
    assert.deepEqual(body.data.links, { status: '/api/v1/jobs/job-2/status/', results: null, changes: null });
  });

  it('stays small with a huge status message', () => {
    const text = webhookPayload('job.failed', { ...job, status_message: '€'.repeat(1_000_000) }, 'https://scrape.example.com');
    assert.ok(Buffer.byteLength(text) < 4 * 1024, `${Buffer.byteLength(text)} bytes`);
    const body = JSON.parse(text);
    assert.equal(body.data.status_message.length, 500);
    assert.ok(body.data.status_message.endsWith('…'));
    // No half of a surrogate pair at the cut.
    const emoji = JSON.parse(webhookPayload('job.failed', { ...job, status_message: '😀'.repeat(1_000) }, null)).data.status_message as string;
    assert.ok(emoji.isWellFormed());
    assert.ok(emoji.length <= 500);
  });
});
