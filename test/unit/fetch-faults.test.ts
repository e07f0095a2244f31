/**
 * The Fetcher (lambdas/net/fetch.ts) against hostile servers (test/helpers/hostile-server.ts, on 127.0.0.1 and
 * 127.0.0.2): declared lengths over the cap on GET and HEAD, lengths that lie, a reset mid-body, compression bombs,
 * an endless body, a one-byte-a-second body, a wrong charset, redirect loops and redirects to internal addresses.
 *
 * Each fault ends in a result or a CodedError with the right code, and never in an unhandled error: the suite
 * listens for 'uncaughtException' and 'unhandledRejection' and every test asserts that neither fired (issue 24: a
 * HEAD with a large Content-Length used to kill the process through an unhandled `error` event). Every client
 * socket is watched (net-helpers.ts): nothing connects anywhere but loopback.
 */
import { describe, it, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import zlib from 'node:zlib';
import { Fetcher, FetchError, type FetcherOptions } from '../../lambdas/net/fetch.ts';
import { OutboundGuard, type Resolver } from '../../lambdas/net/guard.ts';
import { CodedError } from '../../lambdas/errors.ts';
import { startHostileServer, SMUGGLED_BODY, WRONG_CHARSET_TEXT, HOSTILE_BEHAVIOURS, type HostileServer } from '../helpers/hostile-server.ts';
import { since, watchSockets, type SocketWatch } from './net-helpers.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

/** Names that resolve to the hostile server's addresses, so that one server can be two origins and an internal one. */
const resolve: Resolver = async (host) => {
  if (host === 'other.test') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'inside.test') return [{ address: '127.0.0.2', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};
/** The guard of these tests: the main listener (127.0.0.1) is allowed, the "internal" one (127.0.0.2) is not. */
const guard = new OutboundGuard({ allow: ['127.0.0.1/32'], resolve });

const events: string[] = [];
const onUncaught = (err: unknown) => events.push(`uncaughtException: ${(err as Error)?.stack ?? String(err)}`);
const onUnhandled = (reason: unknown) => events.push(`unhandledRejection: ${(reason as Error)?.stack ?? String(reason)}`);

let hostile: HostileServer;
let watch: SocketWatch;
before(async () => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUnhandled);
  hostile = await startHostileServer();
  await hostile.prepare();
  watch = watchSockets();
});
after(async () => {
  watch.stop();
  await hostile.close();
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUnhandled);
  assert.deepEqual(events, [], 'no unhandled error in the whole suite');
});
beforeEach(() => {
  watch.reset();
  hostile.reset();
});
afterEach(async () => {
  // An error event of a destroyed stream comes a tick or more after the fetch settles: give it time to show.
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(events, [], 'no uncaughtException and no unhandledRejection');
  watch.assertLoopbackOnly();
});

/** Runs `fn` with a fresh Fetcher and closes it afterwards. */
async function withFetcher<T>(options: FetcherOptions, fn: (f: Fetcher) => Promise<T>, g: OutboundGuard = guard): Promise<T> {
  const f = new Fetcher(g, options);
  try {
    return await fn(f);
  } finally {
    await f.close();
  }
}

/** An assert.rejects check: a CodedError (a FetchError unless said) with this code and a message matching. */
const coded = (c: string, message?: RegExp, type: abstract new (...args: never[]) => CodedError = FetchError) => (err: unknown): true => {
  assert.ok(err instanceof type, `not a ${type.name}: ${(err as Error)?.stack ?? String(err)}`);
  assert.equal((err as CodedError).code, c, (err as Error).message);
  if (message) assert.match((err as Error).message, message);
  return true;
};

describe('a declared length over the cap', () => {
  it('GET fails with response_too_large at once (not retried); HEAD returns the headers and no body', async () => {
    await withFetcher({ maxBytes: 100 * KiB, retries: 2, retryBaseMs: 10 }, async (f) => {
      const url = hostile.url('declared-length', { bytes: 600 * KiB });
      await assert.rejects(f.fetch(url), coded('response_too_large', /is 614400 bytes, limit 102400 bytes/));
      assert.equal(hostile.hits('declared-length'), 1, 'not retried');
      const head = await f.fetch(url, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.body.length, 0);
      assert.equal(head.text, '');
      assert.equal(head.headers['content-length'], String(600 * KiB), 'the length a GET would get');
      assert.deepEqual(hostile.requests.map((r) => r.method), ['GET', 'HEAD']);
      // The fetcher (and its pool) still works.
      const ok = await f.fetch(hostile.url('ok'));
      assert.match(ok.text, /<h1>ok<\/h1>/);
    });
  });

  it('the fetches that killed the process (issue 24) exit cleanly in a child process', async () => {
    // Run where an unhandled 'error' event would end the process with its exit code and stack, not be caught
    // by this test runner.
    const script = `
      const { Fetcher } = await import(${JSON.stringify(new URL('../../lambdas/net/fetch.ts', import.meta.url).href)});
      const { OutboundGuard } = await import(${JSON.stringify(new URL('../../lambdas/net/guard.ts', import.meta.url).href)});
      const f = new Fetcher(new OutboundGuard({ allow: ['127.0.0.1/32'] }), { maxBytes: 100 * 1024, retries: 0, timeoutMs: 5000 });
      const out = [];
      const run = async (what, url, method) => {
        try { const p = await f.fetch(url, { method }); out.push(what + ' ' + p.status + ' ' + p.body.length); }
        catch (e) { out.push(what + ' ' + (e.code ?? e.name)); }
      };
      await run('HEAD', process.argv[1], 'HEAD');
      await run('GET', process.argv[1], 'GET');
      await run('endless', process.argv[2], 'GET');
      await run('reset', process.argv[3], 'GET');
      await run('bomb', process.argv[4], 'GET');
      await new Promise((r) => setTimeout(r, 300));
      await f.close();
      console.log(JSON.stringify(out));
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script,
      hostile.url('declared-length', { bytes: 600 * KiB }), hostile.url('endless'), hostile.url('reset-mid-body', { declared: 64 * KiB }), hostile.url('brotli-bomb')],
    { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d; });
    child.stderr.on('data', (d: Buffer) => { stderr += d; });
    const code = await new Promise<number | null>((r) => child.on('close', r));
    assert.equal(code, 0, `the child exited with ${code}: ${stderr}`);
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').pop()!), ['HEAD 200 0', 'GET response_too_large', 'endless response_too_large', 'reset fetch_failed', 'bomb response_too_large']);
  });
});

describe('lengths that lie', () => {
  it('a body shorter than its Content-Length (the connection closes): fetch_failed after the retries', async () => {
    await withFetcher({ retries: 1, retryBaseMs: 10 }, async (f) => {
      await assert.rejects(f.fetch(hostile.url('short-body')), (err: unknown) => {
        coded('fetch_failed', /^Could not fetch .*short-body.* \(after 1 retries\)$/)(err);
        assert.ok((err as FetchError).cause, 'the cause is kept');
        return true;
      });
      assert.equal(hostile.hits('short-body'), 2, 'a network error is retried');
    });
  });

  it('a body longer than its Content-Length: the declared bytes, and the rest never passes for the next answer', async () => {
    await withFetcher({ retries: 0, perHostConcurrency: 1 }, async (f) => {
      const page = await f.fetch(hostile.url('long-body', { declared: 10 }));
      assert.equal(page.status, 200);
      assert.equal(page.text, 'a'.repeat(10));
      // One connection per host: had the client kept the connection, the next request would read the smuggled answer.
      const next = await f.fetch(hostile.url('ok'));
      assert.notEqual(next.text, SMUGGLED_BODY);
      assert.match(next.text, /<h1>ok<\/h1>/);
    });
  });
});

describe('a reset mid-body', () => {
  it('fails with fetch_failed (ECONNRESET or a closed socket) after retrying', async () => {
    await withFetcher({ retries: 2, retryBaseMs: 10 }, async (f) => {
      await assert.rejects(f.fetch(hostile.url('reset-mid-body')), (err: unknown) => {
        coded('fetch_failed', /after 2 retries/)(err);
        const cause = (err as FetchError).cause as NodeJS.ErrnoException;
        assert.ok(['ECONNRESET', 'UND_ERR_SOCKET'].includes(cause.code!), `cause ${cause.code}: ${cause.message}`);
        return true;
      });
      assert.equal(hostile.hits('reset-mid-body'), 3);
    });
  });
});

describe('compression bombs', () => {
  it('gzip, deflate and brotli bombs stop at the cap with response_too_large, streaming, memory near the cap', async () => {
    // No synchronous zlib call while the bombs are read: wrap every *Sync function and count.
    const syncCalls: string[] = [];
    const zlibFns = zlib as unknown as Record<string, (...a: unknown[]) => unknown>;
    const originals = new Map<string, (...a: unknown[]) => unknown>();
    for (const name of Object.keys(zlib)) {
      if (!name.endsWith('Sync') || typeof zlibFns[name] !== 'function') continue;
      const fn = zlibFns[name]!;
      originals.set(name, fn);
      zlibFns[name] = (...a: unknown[]) => {
        syncCalls.push(name);
        return fn(...a);
      };
    }
    try {
      await withFetcher({ retries: 2 }, async (f) => { // the default cap: 10 MiB
        for (const kind of ['gzip-bomb', 'deflate-bomb', 'brotli-bomb'] as const) {
          const before = process.memoryUsage().arrayBuffers;
          let peak = before;
          const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().arrayBuffers); }, 2);
          const t0 = performance.now();
          try {
            await assert.rejects(f.fetch(hostile.url(kind)), coded('response_too_large', /is larger than 10485760 bytes once decompressed/), kind);
          } finally {
            clearInterval(sampler);
          }
          peak = Math.max(peak, process.memoryUsage().arrayBuffers);
          const ms = since(t0);
          assert.ok(ms < 10_000, `${kind}: ${ms.toFixed(0)} ms`);
          // 256 MiB inflated in full would show; the cap (10 MiB) and a few chunks is what a streaming reader holds.
          assert.ok(peak - before < 64 * MiB, `${kind}: ${((peak - before) / MiB).toFixed(1)} MiB of buffers at the peak`);
          assert.equal(hostile.hits(kind), 1, `${kind} is not retried`);
        }
      });
    } finally {
      for (const [name, fn] of originals) zlibFns[name] = fn;
    }
    assert.deepEqual(syncCalls, [], 'no synchronous zlib call');
  });

  it('a small cap stops a bomb as soon as the output passes it', async () => {
    await withFetcher({ retries: 0, maxBytes: 100 * KiB }, async (f) => {
      // 64 MiB of zeros is 65 KB of gzip: under the cap as received, far over it decompressed.
      await assert.rejects(f.fetch(hostile.url('gzip-bomb', { mib: 64 })), coded('response_too_large', /larger than 102400 bytes once decompressed/));
      await assert.rejects(f.fetch(hostile.url('deflate-bomb', { mib: 64 })), coded('response_too_large', /larger than 102400 bytes once decompressed/));
      await assert.rejects(f.fetch(hostile.url('brotli-bomb')), coded('response_too_large', /larger than 102400 bytes once decompressed/));
    });
  });
});

describe('bodies that do not end', () => {
  it('an endless chunked body fails with response_too_large at the cap', async () => {
    await withFetcher({ retries: 2, maxBytes: MiB }, async (f) => {
      const t0 = performance.now();
      await assert.rejects(f.fetch(hostile.url('endless')), coded('response_too_large', /exceeds the limit of 1048576 bytes/));
      assert.ok(since(t0) < 10_000, `${since(t0).toFixed(0)} ms`);
      assert.equal(hostile.hits('endless'), 1, 'not retried');
    });
  });

  it('one byte a second is ended by the time limit of the attempt, with fetch_failed', async () => {
    await withFetcher({ retries: 0, timeoutMs: 1500 }, async (f) => {
      const t0 = performance.now();
      await assert.rejects(f.fetch(hostile.url('drip', { interval: 200 })), (err: unknown) => {
        coded('fetch_failed', /exceeded its timeout of 1500 ms/)(err);
        assert.equal(((err as FetchError).cause as Error).name, 'TimeoutError');
        return true;
      });
      const ms = since(t0);
      // The idle time-outs (headers, body) never fire: a byte comes every 200 ms. Only the attempt's limit does.
      assert.ok(ms >= 1400 && ms < 10_000, `ended after ${ms.toFixed(0)} ms`);
    });
  });

  it('a time limit and a caller abort also end requests still waiting for a connection; the pool recovers', async () => {
    await withFetcher({ retries: 0, timeoutMs: 1000, perHostConcurrency: 1 }, async (f) => {
      const hung = f.fetch(hostile.url('hang'));
      const queued = f.fetch(hostile.url('ok', { queued: 1 })); // waits for the one connection
      const c = new AbortController();
      const aborted = f.fetch(hostile.url('ok', { aborted: 1 }), { signal: c.signal });
      setTimeout(() => c.abort(new Error('caller gave up')), 100);
      await assert.rejects(aborted, /caller gave up/);
      await assert.rejects(hung, coded('fetch_failed', /exceeded its timeout/));
      await assert.rejects(queued, coded('fetch_failed', /exceeded its timeout/));
      const later = await f.fetch(hostile.url('ok', { later: 1 }));
      assert.equal(later.status, 200);
      assert.ok(!hostile.requests.some((r) => r.url.includes('aborted=1')), 'the aborted request was never sent');
    });
  });
});

describe('a wrong charset', () => {
  const bytes = (bom = false) => Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(WRONG_CHARSET_TEXT)]);
  const as = (encoding: string, b = bytes()) => new TextDecoder(encoding).decode(b);

  it('header, meta and bytes disagree: the header wins, as in browsers; without it the meta; a BOM over both', async () => {
    await withFetcher({ retries: 0 }, async (f) => {
      // UTF-8 bytes, header windows-1251, meta shift_jis: decoded as windows-1251 (mojibake, as a browser shows it).
      const header = await f.fetch(hostile.url('wrong-charset'));
      assert.equal(header.charset, 'windows-1251');
      assert.ok(header.text.includes(as('windows-1251')), header.text);
      assert.ok(!header.text.includes(WRONG_CHARSET_TEXT));
      // No charset in the header: the meta prescan's shift_jis.
      const meta = await f.fetch(hostile.url('wrong-charset', { header: 'none' }));
      assert.equal(meta.charset, 'shift_jis');
      assert.ok(meta.text.includes(as('shift_jis')));
      // A UTF-8 byte-order mark outranks both.
      const bom = await f.fetch(hostile.url('wrong-charset', { bom: 1 }));
      assert.equal(bom.charset, 'utf-8');
      assert.ok(bom.text.startsWith('<!doctype html>'), 'the BOM is dropped');
      assert.ok(bom.text.includes(WRONG_CHARSET_TEXT));
      // Neither: UTF-8.
      const none = await f.fetch(hostile.url('wrong-charset', { header: 'none', meta: 'none' }));
      assert.equal(none.charset, 'utf-8');
      assert.ok(none.text.includes(WRONG_CHARSET_TEXT));
    });
  });

  it('labels mean what they mean to browsers: iso-8859-1 is windows-1252, iso-2022-kr decodes to one U+FFFD, unknown falls through', async () => {
    await withFetcher({ retries: 0 }, async (f) => {
      const latin1 = await f.fetch(hostile.url('wrong-charset', { header: 'iso-8859-1' }));
      assert.equal(latin1.charset, 'windows-1252');
      assert.ok(latin1.text.includes(as('windows-1252')));
      const refused = await f.fetch(hostile.url('wrong-charset', { header: 'iso-2022-kr' }));
      assert.equal(refused.charset, 'replacement');
      assert.equal(refused.text, '\uFFFD');
      const unknown = await f.fetch(hostile.url('wrong-charset', { header: 'no-such-charset', meta: 'koi8-r' }));
      assert.equal(unknown.charset, 'koi8-r', 'an unknown header label falls through to the meta');
      assert.ok(unknown.text.includes(as('koi8-r')));
    });
  });
});

describe('redirects', () => {
  it('a redirect loop fails with fetch_failed at the first repeated URL, not retried', async () => {
    await withFetcher({ retries: 2, retryBaseMs: 10 }, async (f) => {
      await assert.rejects(f.fetch(hostile.url('redirect-loop')), coded('fetch_failed', /^Redirect loop starting at http:\/\/127\.0\.0\.1:\d+\/redirect-loop\//));
      assert.equal(hostile.hits('redirect-loop'), 1);
      await assert.rejects(f.fetch(hostile.url('redirect-pingpong')), coded('fetch_failed', /^Redirect loop .*\/redirect-pingpong\/b leads back/));
      assert.equal(hostile.hits('redirect-pingpong'), 2);
    });
  });

  it('an endless chain of new URLs fails with fetch_failed, too many redirects, after maxRedirects hops', async () => {
    await withFetcher({ retries: 2, retryBaseMs: 10 }, async (f) => {
      await assert.rejects(f.fetch(hostile.url('redirect-endless')), coded('fetch_failed', /^Too many redirects \(more than 10\) starting at /));
      assert.equal(hostile.hits('redirect-endless'), 11, 'the first request and 10 redirects, once each');
    });
  });

  it('a redirect to an internal address is refused by the guard (target_forbidden) before any connection', async () => {
    await withFetcher({ retries: 2, retryBaseMs: 10 }, async (f) => {
      const targets = [
        `${hostile.inside.origin}/secret`, // an IP literal the guard refuses
        `http://inside.test:${new URL(hostile.inside.origin).port}/secret`, // a name that resolves to it
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/',
        'file:///etc/passwd',
      ];
      for (const to of targets) {
        await assert.rejects(f.fetch(hostile.url('redirect-to', { to })), coded('target_forbidden', /^Refused /, CodedError), to);
      }
      assert.equal(hostile.hits('redirect-to'), targets.length, 'each once: a refusal is not retried');
    });
    assert.equal(hostile.inside.connections, 0, 'the internal listener never saw a connection');
    assert.ok(!watch.attempts.some((a) => a === '127.0.0.2' || a === '169.254.169.254' || a === '10.0.0.1'), `attempts: ${watch.attempts.join(', ')}`);
    // The same redirect under a guard that allows 127.0.0.2 does reach it: the count above can see a connection.
    await withFetcher({ retries: 0 }, async (f) => {
      const page = await f.fetch(hostile.url('redirect-to', { to: `${hostile.inside.origin}/secret` }));
      assert.match(page.text, /internal service/);
      assert.equal(page.url, `${hostile.inside.origin}/secret`);
      assert.deepEqual(page.redirectChain, [hostile.url('redirect-to', { to: `${hostile.inside.origin}/secret` }), `${hostile.inside.origin}/secret`]);
    }, new OutboundGuard({ allow: ['127.0.0.0/8'] }));
    assert.equal(hostile.inside.connections, 1);
  });

  it('credentials do not follow a redirect to another origin; standard headers the caller set do', async () => {
    await withFetcher({ retries: 0 }, async (f) => {
      const headers = { Authorization: 'Bearer secret', Cookie: 'session=1', 'X-Api-Key': 'k', Accept: 'application/json' };
      const away = `http://other.test:${hostile.port}/ok/?away`;
      await f.fetch(hostile.url('redirect-to', { to: away }), { headers });
      const [first, second] = hostile.requests;
      assert.equal(first!.headers.authorization, 'Bearer secret');
      assert.equal(first!.headers.cookie, 'session=1');
      assert.equal(first!.headers['x-api-key'], 'k');
      assert.equal(second!.headers.host, `other.test:${hostile.port}`);
      assert.equal(second!.headers.authorization, undefined);
      assert.equal(second!.headers.cookie, undefined);
      assert.equal(second!.headers['x-api-key'], undefined);
      assert.equal(second!.headers.accept, 'application/json');
      assert.match(second!.headers['user-agent']!, /scrape-ai/);
      hostile.reset();
      await f.fetch(hostile.url('redirect-to', { to: '/ok/?same' }), { headers });
      assert.equal(hostile.requests[1]!.headers.authorization, 'Bearer secret', 'kept on a same-origin redirect');
    }, new OutboundGuard({ allow: ['127.0.0.1/32'], resolve }));
  });

  it('a redirect whose body does not end fails at the redirect body cap', async () => {
    // A 302 pointing on, whose body is the endless one: the fetch does not read it for the whole time limit.
    await withFetcher({ retries: 0 }, async (f) => {
      const t0 = performance.now();
      await assert.rejects(f.fetch(hostile.url('redirect-to', { to: '/ok/', code: 302, endless: 1 })), coded('response_too_large', /redirect response .* body over 131072 bytes/));
      assert.ok(since(t0) < 10_000);
    });
  });
});

describe('the hostile pages', () => {
  it('every page behaviour answers with HTML of the size it claims', async () => {
    await withFetcher({ retries: 0, maxBytes: 16 * MiB }, async (f) => {
      const nested = await f.fetch(hostile.url('nested', { depth: 1000 }));
      assert.equal(nested.text.split('<div>').length - 1, 1000);
      const tables = await f.fetch(hostile.url('unclosed-tables', { mb: 1 }));
      assert.ok(tables.body.length >= 1_000_000 && !tables.text.includes('</table>'));
      const phones = await f.fetch(hostile.url('phone-digits', { mb: 1 }));
      assert.ok(phones.body.length >= 1_000_000);
      assert.match(phones.text, /\+1 \(\d{3}\) \d{3}-\d{4}/);
      const json = await f.fetch(hostile.url('deep-json-ld', { depth: 5000, closed: 1 }));
      const script = /<script type="application\/ld\+json">([^<]*)<\/script>/.exec(json.text)![1]!;
      assert.equal(script, `${'['.repeat(5000)}${']'.repeat(5000)}`);
      for (const b of ['alert', 'self-navigation', 'memory-bomb', 'regex-bait'] as const) {
        const p = await f.fetch(hostile.url(b));
        assert.equal(p.status, 200, b);
        assert.equal(p.contentType, 'text/html', b);
      }
      assert.equal((await f.fetch(hostile.url('regex-bait'))).text.split(`${'a'.repeat(40)}!`).length - 1, 10);
      assert.ok(HOSTILE_BEHAVIOURS.length >= 25);
    });
  });
});
