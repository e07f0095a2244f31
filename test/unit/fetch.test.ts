/**
 * The Fetcher (lambdas/net/fetch.ts) against the fixture site and small servers on 127.0.0.1, through a
 * guard that allows 127.0.0.0/8: redirects and the final URL (the base for links, with <base href> on
 * top), retries with back-off on 429 and 5xx honouring Retry-After, time-outs, the size cap (declared,
 * streamed and decompressed), charsets, the per-host concurrency limit and aborting.
 *
 * Every client socket is watched (net-helpers.ts): each test asserts that nothing connected anywhere but
 * loopback, and a safety net would have stopped it if it had tried.
 */
import { describe, it, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import zlib from 'node:zlib';
import { detectCharset, Fetcher, FetchError, retryAfterMs, DEFAULT_USER_AGENT, type FetcherOptions } from '../../lambdas/net/fetch.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { documentBase, absoluteUrl, loadHtml } from '../../lambdas/engine/extract.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { CHARSET_TEXT } from '../fixtures/site/charset.ts';
import { listen, since, watchSockets, type LocalServer, type SocketWatch } from './net-helpers.ts';

const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });

let watch: SocketWatch;
let site: FixtureSite;
before(async () => {
  site = await startFixtureSite();
  watch = watchSockets();
});
after(async () => {
  watch.stop();
  await site.close();
});
beforeEach(() => watch.reset());
afterEach(() => watch.assertLoopbackOnly());

/** Runs `fn` with a fresh Fetcher and closes it afterwards. */
async function withFetcher<T>(options: FetcherOptions, fn: (f: Fetcher) => Promise<T>, g: OutboundGuard = guard): Promise<T> {
  const f = new Fetcher(g, options);
  try {
    return await fn(f);
  } finally {
    await f.close();
  }
}

/** Runs `fn` with a local server and closes it afterwards. */
async function withServer<T>(handler: http.RequestListener, fn: (srv: LocalServer) => Promise<T>): Promise<T> {
  const srv = await listen(handler);
  try {
    return await fn(srv);
  } finally {
    await srv.close();
  }
}

const code = (c: string, message?: RegExp) => (err: unknown): true => {
  assert.ok(err instanceof FetchError, `not a FetchError: ${String(err)}`);
  assert.equal(err.code, c, err.message);
  if (message) assert.match(err.message, message);
  return true;
};

describe('redirects and the final URL', () => {
  it('follows relative and absolute redirects of every code and reports the final URL', async () => {
    await withFetcher({ retries: 0 }, async (f) => {
      const rel = await f.fetch(`${site.url}/redirect/?to=/quotes/page/2/`);
      assert.equal(rel.status, 200);
      assert.equal(rel.requestedUrl, `${site.url}/redirect/?to=/quotes/page/2/`);
      assert.equal(rel.url, `${site.url}/quotes/page/2/`);
      assert.match(rel.text, /class="quote"/);
      const up = await f.fetch(`${site.url}/redirect/?to=../status/200/`); // relative to /redirect/
      assert.equal(up.url, `${site.url}/status/200/`);
      for (const c of [301, 302, 303, 307, 308]) {
        const abs = await f.fetch(`${site.url}/redirect/?to=${encodeURIComponent(`${site.url}/books/`)}&code=${c}`);
        assert.equal(abs.status, 200, String(c));
        assert.equal(abs.url, `${site.url}/books/`);
      }
      const missing = await f.fetch(`${site.url}/redirect/?to=/status/404/`);
      assert.equal(missing.status, 404);
      assert.equal(missing.url, `${site.url}/status/404/`);
    });
  });

  it('follows a chain of N hops, each once, up to maxRedirects; one more fails with fetch_failed', async () => {
    await withFetcher({ maxRedirects: 3, retries: 2, retryBaseMs: 10 }, async (f) => {
      const chain = await f.fetch(`${site.url}/redirect-chain/3/`);
      assert.equal(chain.status, 200);
      assert.equal(chain.url, `${site.url}/quotes/`);
      for (const n of [3, 2, 1]) assert.equal(site.hits.get(`/redirect-chain/${n}/`), 1);
      const quotesHits = site.hits.get('/quotes/');
      await assert.rejects(f.fetch(`${site.url}/redirect-chain/4/`), code('fetch_failed', /^Too many redirects \(more than 3\) starting at http:\/\/127\.0\.0\.1:\d+\/redirect-chain\/4\/$/));
      assert.equal(site.hits.get('/redirect-chain/4/'), 1, 'not retried');
      assert.equal(site.hits.get('/redirect-chain/1/'), 2, 'the third hop is fetched');
      assert.equal(site.hits.get('/quotes/'), quotesHits, 'its redirect (the fourth) is not followed');
    });
    await withFetcher({ retries: 0 }, async (f) => {
      const slow = await f.fetch(`${site.url}/slow/10/redirect-chain/10/`); // the default allows 10
      assert.equal(slow.url, `${site.url}/slow/10/quotes/`);
      await assert.rejects(f.fetch(`${site.url}/redirect-chain/11/`), code('fetch_failed', /more than 10/));
    });
  });

  it('links resolve against the final URL, and against <base href> on top of it', async () => {
    await withFetcher({ retries: 0 }, async (f) => {
      const page = await f.fetch(`${site.url}/redirect/?to=/base-href/`);
      assert.equal(page.url, `${site.url}/base-href/`);
      const base = documentBase(loadHtml(page.text), page.url, page.text);
      assert.equal(base, `${site.url}/books/catalogue/`);
      assert.equal(absoluteUrl('page-2.html', base), `${site.url}/books/catalogue/page-2.html`);
      assert.equal(absoluteUrl('../index.html', base), `${site.url}/books/index.html`);
      assert.equal((await f.fetch(absoluteUrl('page-2.html', base)!)).status, 200);

      const quotes = await f.fetch(`${site.url}/redirect/?to=/quotes/`);
      const plain = documentBase(loadHtml(quotes.text), quotes.url, quotes.text);
      assert.equal(plain, `${site.url}/quotes/`, 'no <base>: the final URL, not the requested one');
      assert.equal(absoluteUrl('page/2/', plain), `${site.url}/quotes/page/2/`);
    });
  });
});

describe('retries', () => {
  it('retries 503 with exponential back-off, then succeeds', async () => {
    await withFetcher({ retryBaseMs: 100, retries: 3 }, async (f) => {
      const t0 = performance.now();
      const page = await f.fetch(`${site.url}/flaky/b503/?fail=2&code=503`);
      const ms = since(t0);
      assert.equal(page.status, 200);
      assert.match(page.text, /ok b503/);
      assert.equal(page.retries, 2);
      assert.equal(site.hits.get('/flaky/b503/?fail=2&code=503'), 3);
      // Waits of 50–100 ms, then 100–200 ms (base doubling, jitter in the upper half).
      assert.ok(ms >= 150 && ms < 5000, `elapsed ${ms.toFixed(0)} ms`);
    });
  });

  it('honours Retry-After on 429, capped by retryMaxMs', async () => {
    await withFetcher({ retryBaseMs: 10 }, async (f) => {
      const t0 = performance.now();
      const page = await f.fetch(`${site.url}/flaky/r429/?fail=1&code=429`);
      const ms = since(t0);
      assert.equal(page.status, 200);
      assert.equal(page.retries, 1);
      assert.equal(site.hits.get('/flaky/r429/?fail=1&code=429'), 2);
      assert.ok(ms >= 980 && ms < 6000, `waited the 1 s of Retry-After (${ms.toFixed(0)} ms)`);
    });
    await withFetcher({ retryBaseMs: 10, retryMaxMs: 150 }, async (f) => {
      const t0 = performance.now();
      const page = await f.fetch(`${site.url}/flaky/c429/?fail=1&code=429`);
      const ms = since(t0);
      assert.equal(page.status, 200);
      assert.ok(ms >= 140 && ms < 950, `Retry-After capped at 150 ms (${ms.toFixed(0)} ms)`);
    });
  });

  it('returns the last answer when retries run out; a 404 is returned at once, not thrown', async () => {
    await withFetcher({ retries: 2, retryBaseMs: 10 }, async (f) => {
      const page = await f.fetch(`${site.url}/flaky/gone/?fail=9&code=502`);
      assert.equal(page.status, 502);
      assert.equal(page.retries, 2);
      assert.match(page.text, /flaky gone: failure 3 of 9/);
      assert.equal(site.hits.get('/flaky/gone/?fail=9&code=502'), 3);
      const e500 = await f.fetch(`${site.url}/status/500/`);
      assert.equal(e500.status, 500);
      assert.equal(site.hits.get('/status/500/'), 3);
      for (const s of [404, 403, 410, 400]) {
        const p = await f.fetch(`${site.url}/status/${s}/?once`);
        assert.equal(p.status, s);
        assert.equal(p.retries, 0);
        assert.equal(site.hits.get(`/status/${s}/?once`), 1, `${s} is not retried`);
      }
    });
  });

  it('retries network errors (a dropped connection) and fails with fetch_failed when they persist', async () => {
    let n = 0;
    await withServer((req, res) => {
      if (req.url === '/drop' || ++n <= 2) {
        req.socket.destroy();
        return;
      }
      res.end('<p>third time</p>');
    }, async (srv) => {
      await withFetcher({ retries: 3, retryBaseMs: 10 }, async (f) => {
        const page = await f.fetch(`${srv.url}/eventually`);
        assert.equal(page.text, '<p>third time</p>');
        assert.equal(n, 3);
        await assert.rejects(f.fetch(`${srv.url}/drop`), code('fetch_failed', /^Could not fetch http:\/\/127\.0\.0\.1:\d+\/drop: .* \(after 3 retries\)$/));
      });
    });
    // Nothing listening: connection refused, retried, then fetch_failed.
    const srv = await listen(() => {});
    const port = srv.port;
    await srv.close();
    await withFetcher({ retries: 1, retryBaseMs: 10 }, async (f) => {
      await assert.rejects(f.fetch(`http://127.0.0.1:${port}/`), code('fetch_failed', /ECONNREFUSED.*\(after 1 retries\)/));
    });
  });
});

describe('time-outs and aborting', () => {
  it('a hanging server gives fetch_failed after timeoutMs', async () => {
    await withFetcher({ timeoutMs: 300, retries: 0 }, async (f) => {
      const t0 = performance.now();
      await assert.rejects(f.fetch(`${site.url}/hang/`), code('fetch_failed', /^Could not fetch .*\/hang\/: .*timeout/i));
      const ms = since(t0);
      assert.ok(ms >= 280 && ms < 5000, `gave up after ${ms.toFixed(0)} ms`);
      assert.equal(site.hits.get('/hang/'), 1);
    });
    await withFetcher({ timeoutMs: 200, retries: 1, retryBaseMs: 10 }, async (f) => {
      await assert.rejects(f.fetch(`${site.url}/hang/?again`), code('fetch_failed', /after 1 retries/));
      assert.equal(site.hits.get('/hang/?again'), 2, 'a time-out is retried');
    });
  });

  it('a body that stalls after the headers times out too', async () => {
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': '1000' });
      res.write('<html><body>'); // and never the rest
    }, async (srv) => {
      await withFetcher({ timeoutMs: 300, retries: 0 }, async (f) => {
        const t0 = performance.now();
        await assert.rejects(f.fetch(`${srv.url}/`), code('fetch_failed'));
        assert.ok(since(t0) < 5000);
      });
    });
  });

  it('the caller signal aborts a request in flight, a back-off wait, and an already aborted signal', async () => {
    await withFetcher({ retryBaseMs: 5000 }, async (f) => {
      const c = new AbortController();
      setTimeout(() => c.abort(new Error('caller gave up')), 100);
      let t0 = performance.now();
      await assert.rejects(f.fetch(`${site.url}/hang/?abort`, { signal: c.signal }), /caller gave up/);
      assert.ok(since(t0) < 2400, `aborted after ${since(t0).toFixed(0)} ms`);

      const d = new AbortController();
      setTimeout(() => d.abort(new Error('stop waiting')), 100);
      t0 = performance.now();
      await assert.rejects(f.fetch(`${site.url}/flaky/abort/?fail=5&code=503`, { signal: d.signal }), /stop waiting/);
      assert.ok(since(t0) < 2400, 'the 2.5–5 s back-off was cut short');
      assert.equal(site.hits.get('/flaky/abort/?fail=5&code=503'), 1);

      await assert.rejects(f.fetch(`${site.url}/status/200/?pre-aborted`, { signal: AbortSignal.abort(new Error('never started')) }), /never started/);
      assert.equal(site.hits.get('/status/200/?pre-aborted'), undefined);
    });
  });
});

describe('size cap', () => {
  it('refuses a body over maxBytes, declared or streamed; exactly maxBytes passes', async () => {
    await withServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }); // chunked: no Content-Length
      for (let i = 0; i < 200; i++) res.write('x'.repeat(1024));
      res.end();
    }, async (srv) => {
      await withFetcher({ maxBytes: 100 * 1024, retries: 2 }, async (f) => {
        await assert.rejects(f.fetch(`${site.url}/big/?kb=200`), code('response_too_large', /is 204800 bytes, limit 102400 bytes/));
        assert.equal(site.hits.get('/big/?kb=200'), 1, 'not retried');
        await assert.rejects(f.fetch(`${srv.url}/chunked`), code('response_too_large', /exceeds the limit of 102400 bytes/));
        const exact = await f.fetch(`${site.url}/big/?kb=100`);
        assert.equal(exact.body.length, 100 * 1024);
        assert.match(exact.text, /Big page \(100 KiB\)/);
      });
    });
  });

  it('refuses a compressed body whose decompressed size exceeds maxBytes (gzip, deflate, br)', async () => {
    const big = Buffer.alloc(4 * 1024 * 1024, 'a');
    const bombs: Record<string, Buffer> = { gzip: zlib.gzipSync(big), deflate: zlib.deflateSync(big), br: zlib.brotliCompressSync(big) };
    const html = '<html><body><p>compressed ✓</p></body></html>';
    const small: Record<string, Buffer> = { gzip: zlib.gzipSync(html), deflate: zlib.deflateSync(html), 'raw-deflate': zlib.deflateRawSync(html), br: zlib.brotliCompressSync(html) };
    await withServer((req, res) => {
      const [, kind, enc] = req.url!.split('/') as [string, string, string];
      const body = kind === 'bomb' ? bombs[enc]! : small[enc]!;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': enc === 'raw-deflate' ? 'deflate' : enc, 'content-length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
    }, async (srv) => {
      await withFetcher({ maxBytes: 64 * 1024, retries: 0 }, async (f) => {
        for (const enc of ['gzip', 'deflate', 'br']) {
          assert.ok(bombs[enc]!.length < 64 * 1024, `the ${enc} body itself is under the cap`);
          await assert.rejects(f.fetch(`${srv.url}/bomb/${enc}`), code('response_too_large', /larger than 65536 bytes once decompressed/), enc);
        }
        for (const enc of ['gzip', 'deflate', 'raw-deflate', 'br']) {
          const page = await f.fetch(`${srv.url}/small/${enc}`);
          assert.equal(page.text, html, enc);
          // HEAD: the encoding header of the resource, no body to decompress.
          const head = await f.fetch(`${srv.url}/small/${enc}`, { method: 'HEAD' });
          assert.equal(head.status, 200, `HEAD ${enc}`);
          assert.equal(head.body.length, 0);
        }
      });
    });
  });
});

describe('charsets', () => {
  it('decodes by the Content-Type header, <meta charset> and <meta http-equiv>', async () => {
    await withFetcher({ retries: 0 }, async (f) => {
      const latin1 = await f.fetch(`${site.url}/charset/latin1/`);
      assert.equal(latin1.charset, 'windows-1252', 'iso-8859-1 is windows-1252 to browsers (WHATWG Encoding)');
      assert.equal(latin1.contentType, 'text/html');
      assert.ok(latin1.text.includes(CHARSET_TEXT.latin1), latin1.text);
      const meta = await f.fetch(`${site.url}/charset/meta/`);
      assert.equal(meta.charset, 'windows-1252');
      assert.ok(meta.text.includes(CHARSET_TEXT.meta), 'curly quotes, € and – from windows-1252');
      assert.ok(meta.body.includes(Buffer.from([0x93])) && meta.body.includes(Buffer.from([0x80])), 'the bytes really are windows-1252');
      const sjis = await f.fetch(`${site.url}/charset/sjis/`);
      assert.equal(sjis.charset, 'shift_jis');
      assert.ok(sjis.text.includes(CHARSET_TEXT.sjis));
      const utf8 = await f.fetch(`${site.url}/quotes/`);
      assert.equal(utf8.charset, 'utf-8');
    });
  });

  it('a byte-order mark wins over the header; UTF-16 pages decode', async () => {
    const text = '<p>“Grüße” – 日本</p>';
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    await withServer((req, res) => {
      if (req.url === '/bom8') {
        res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' });
        res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]));
      } else {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(utf16le);
      }
    }, async (srv) => {
      await withFetcher({ retries: 0 }, async (f) => {
        const bom8 = await f.fetch(`${srv.url}/bom8`);
        assert.equal(bom8.charset, 'utf-8');
        assert.equal(bom8.text, text, 'decoded as UTF-8, the BOM dropped');
        const bom16 = await f.fetch(`${srv.url}/bom16`);
        assert.equal(bom16.charset, 'utf-16le');
        assert.equal(bom16.text, text);
      });
    });
  });

  it('detectCharset: BOM, then header, then the meta prescan of the first 1024 bytes, then UTF-8; WHATWG names', () => {
    const b = (s: string) => Buffer.from(s, 'latin1');
    const bom8 = Buffer.from([0xef, 0xbb, 0xbf, 0x3c]);
    assert.equal(detectCharset(bom8, undefined), 'utf-8');
    assert.equal(detectCharset(bom8, 'text/html; charset=windows-1252'), 'utf-8');
    assert.equal(detectCharset(Buffer.from([0xfe, 0xff, 0, 0x3c]), 'text/html; charset=utf-8'), 'utf-16be');
    assert.equal(detectCharset(Buffer.from([0xff, 0xfe, 0x3c, 0]), 'text/html'), 'utf-16le');
    assert.equal(detectCharset(b('<meta charset="shift_jis">'), 'text/html; charset=ISO-8859-2'), 'iso-8859-2', 'header over meta');
    assert.equal(detectCharset(b(''), 'text/html; charset="Windows-1251"'), 'windows-1251');
    assert.equal(detectCharset(b(''), "text/html;charset='koi8-r'"), 'koi8-r');
    assert.equal(detectCharset(b(''), 'text/html; charset=ISO-8859-1'), 'windows-1252', 'latin1 labels are windows-1252');
    assert.equal(detectCharset(b(''), 'text/html; charset=us-ascii'), 'windows-1252');
    assert.equal(detectCharset(b('<html><head><meta charset=windows-1252>'), 'text/html'), 'windows-1252');
    assert.equal(detectCharset(b("<META CHARSET='Shift_JIS'>"), undefined), 'shift_jis');
    assert.equal(detectCharset(b('<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">'), 'text/html'), 'euc-jp');
    assert.equal(detectCharset(b('<meta charset="utf-16le">'), undefined), 'utf-8', 'a meta UTF-16 means UTF-8');
    assert.equal(detectCharset(b('<meta charset="bogus">'), 'text/html; charset=nope'), 'utf-8', 'unknown labels are skipped');
    assert.equal(detectCharset(b('<meta charset="latin1">'), 'text/html; charset=nope'), 'windows-1252', 'an unknown header label falls through to meta');
    assert.equal(detectCharset(b(`<html>${' '.repeat(1100)}<meta charset="windows-1252">`), undefined), 'utf-8', 'past the 1024-byte prescan');
    assert.equal(detectCharset(b('<p>no declaration</p>'), 'text/html'), 'utf-8');
    assert.equal(detectCharset(b(''), undefined), 'utf-8');
    assert.equal(detectCharset(b(''), 'text/html; charset=iso-2022-kr'), 'replacement', 'a label browsers refuse to decode');
    // Where the prescan differs from a regex over the bytes: it reads tags as the tokenizer does.
    assert.equal(detectCharset(b('<!-- <meta charset="koi8-r"> --><meta charset="euc-jp">'), undefined), 'euc-jp', 'a meta in a comment does not count');
    assert.equal(detectCharset(b('<meta content="text/html; charset=koi8-r">'), undefined), 'utf-8', 'content= without http-equiv does not count');
    assert.equal(detectCharset(b('<title>x</title><p data-x="<meta charset=koi8-r>">'), undefined), 'utf-8', 'a meta inside an attribute does not count');
    // html-encoding-sniffer 6.0.0 throws on these (it reads past the string); a hostile page must not make us throw.
    for (const content of ['charset', 'text/html; charset=', 'text/html; charset= ']) {
      assert.equal(detectCharset(b(`<meta http-equiv="content-type" content="${content}">`), undefined), 'utf-8', content);
      assert.equal(detectCharset(b(`<meta http-equiv="content-type" content="${content}">`), 'text/html; charset=koi8-r'), 'koi8-r', content);
    }
  });

  it('decompression: gzip and deflate read a truncated stream as far as it goes; deflate is told from raw deflate across chunks', async () => {
    const html = `<html><body>${Array.from({ length: 500 }, (_, i) => `<p>item ${i}: ${(i * 7919) % 10007}</p>`).join('')}</body></html>`;
    const gzip = zlib.gzipSync(html);
    const bodies: Record<string, { enc: string; body: Buffer }> = {
      'truncated-gzip': { enc: 'gzip', body: gzip.subarray(0, Math.floor(gzip.length / 2)) },
      'split-deflate': { enc: 'deflate', body: zlib.deflateSync(html) },
      'split-raw-deflate': { enc: 'deflate', body: zlib.deflateRawSync(html) },
      'not-gzip': { enc: 'gzip', body: Buffer.from(html) },
    };
    await withServer((req, res) => {
      const { enc, body } = bodies[req.url!.slice(1)]!;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': enc });
      // The first byte alone, then the rest: a zlib header is two bytes.
      res.write(body.subarray(0, 1));
      setTimeout(() => res.end(body.subarray(1)), 30);
    }, async (srv) => {
      await withFetcher({ retries: 0 }, async (f) => {
        const truncated = await f.fetch(`${srv.url}/truncated-gzip`);
        assert.ok(truncated.text.length > 100 && html.startsWith(truncated.text), 'a prefix of the page, as a browser shows it');
        assert.equal((await f.fetch(`${srv.url}/split-deflate`)).text, html);
        assert.equal((await f.fetch(`${srv.url}/split-raw-deflate`)).text, html);
        await assert.rejects(f.fetch(`${srv.url}/not-gzip`), code('fetch_failed', /^Could not decompress the gzip response of http:\/\/127\.0\.0\.1:\d+\/not-gzip: /));
      });
    });
  });
});

describe('per-host concurrency', () => {
  it('at most perHostConcurrency requests per host at once; another host is not held up', async () => {
    const inFlight = new Map<string, number>();
    const peak = new Map<string, number>();
    const sockets = new Map<string, Set<unknown>>();
    let peakTotal = 0;
    let total = 0;
    await withServer((req, res) => {
      const host = req.headers.host!.split(':')[0]!;
      const now = (inFlight.get(host) ?? 0) + 1;
      inFlight.set(host, now);
      peak.set(host, Math.max(peak.get(host) ?? 0, now));
      peakTotal = Math.max(peakTotal, ++total);
      if (!sockets.has(host)) sockets.set(host, new Set());
      sockets.get(host)!.add(req.socket);
      const ms = Number(/^\/slow\/(\d+)\//.exec(req.url!)?.[1] ?? 0);
      setTimeout(() => {
        inFlight.set(host, inFlight.get(host)! - 1);
        total--;
        res.end(`<p>${req.url}</p>`);
      }, ms);
    }, async (srv) => {
      const g = new OutboundGuard({ allow: ['127.0.0.0/8', 'localhost'] });
      await withFetcher({ perHostConcurrency: 2, retries: 0 }, async (f) => {
        const t0 = performance.now();
        const eight = Promise.all(Array.from({ length: 8 }, (_, i) => f.fetch(`${srv.url}/slow/300/item/${i}`)));
        await new Promise((r) => setTimeout(r, 50));
        const t1 = performance.now();
        const other = await f.fetch(`http://localhost:${srv.port}/slow/300/other`);
        const otherMs = since(t1);
        const pages = await eight;
        const allMs = since(t0);
        assert.deepEqual(pages.map((p) => p.text), Array.from({ length: 8 }, (_, i) => `<p>/slow/300/item/${i}</p>`));
        assert.equal(other.text, '<p>/slow/300/other</p>');
        assert.equal(peak.get('127.0.0.1'), 2, 'two at a time for 127.0.0.1');
        assert.ok(sockets.get('127.0.0.1')!.size <= 2, `${sockets.get('127.0.0.1')!.size} connections to 127.0.0.1`);
        assert.equal(peak.get('localhost'), 1);
        assert.equal(peakTotal, 3);
        assert.ok(allMs >= 4 * 300 - 20, `8 requests through 2 connections take 4 rounds (${allMs.toFixed(0)} ms)`);
        // Behind the queue it would take about 4 × 300 ms; on its own connection 300 ms (3× room for a loaded machine).
        assert.ok(otherMs < 3 * 300, `the other host waited ${otherMs.toFixed(0)} ms, not for the queue`);
      }, g);
    });
  });
});

describe('request details', () => {
  it('sends the User-Agent and Accept headers, per-request headers on top, and HEAD', async () => {
    const seen: Array<{ method: string; headers: http.IncomingHttpHeaders }> = [];
    await withServer((req, res) => {
      seen.push({ method: req.method!, headers: req.headers });
      res.end('<p>hi</p>');
    }, async (srv) => {
      await withFetcher({ retries: 0 }, async (f) => {
        await f.fetch(`${srv.url}/`);
        await f.fetch(`${srv.url}/`, { headers: { 'user-agent': 'custom/1.0', 'x-extra': 'yes' }, method: 'HEAD' });
      });
      await withFetcher({ retries: 0, userAgent: 'configured/2.0' }, (f) => f.fetch(`${srv.url}/`));
    });
    assert.equal(seen[0]!.method, 'GET');
    assert.equal(seen[0]!.headers['user-agent'], DEFAULT_USER_AGENT);
    assert.equal(seen[0]!.headers['accept-encoding'], 'gzip, deflate, br');
    assert.match(seen[0]!.headers.accept!, /^text\/html/);
    assert.equal(seen[1]!.method, 'HEAD');
    assert.equal(seen[1]!.headers['user-agent'], 'custom/1.0');
    assert.equal(seen[1]!.headers['x-extra'], 'yes');
    assert.equal(seen[2]!.headers['user-agent'], 'configured/2.0');
  });

  it('retryAfterMs reads seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(' 0 '), 0);
    assert.equal(retryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', now), 5000);
    assert.equal(retryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now), 0, 'a date in the past means now');
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(''), undefined);
    assert.equal(retryAfterMs(undefined), undefined);
  });
});

describe('headers across redirects and odd Retry-After values', () => {
  it('per-request headers reach the origin named, not another origin a redirect leads to', async () => {
    const seen: Array<string | undefined> = [];
    let firstUrl = '';
    const other = await listen((req, res) => {
      seen.push(req.headers['x-token'] as string | undefined);
      if (req.url === '/back') { res.writeHead(302, { location: `${firstUrl}/final` }); res.end(); return; }
      res.end('<p>other</p>');
    });
    const first = await listen((req, res) => {
      seen.push(req.headers['x-token'] as string | undefined);
      if (req.url === '/same') { res.writeHead(302, { location: '/final' }); res.end(); return; }
      if (req.url === '/final') { res.end('<p>same</p>'); return; }
      res.writeHead(302, { location: `${other.url.replace('127.0.0.1', 'localhost')}/${req.url === '/round' ? 'back' : 'x'}` });
      res.end();
    });
    firstUrl = first.url;
    const f = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8', 'localhost'] }), { retries: 0 });
    try {
      await f.fetch(`${first.url}/same`, { headers: { 'x-token': 't1' } });
      assert.deepEqual(seen, ['t1', 't1'], 'same origin: kept on every hop');
      seen.length = 0;
      await f.fetch(`${first.url}/away`, { headers: { 'x-token': 't2' } });
      assert.deepEqual(seen, ['t2', undefined], 'dropped at the hop to another origin');
      seen.length = 0;
      const page = await f.fetch(`${first.url}/round`, { headers: { 'x-token': 't3' } });
      assert.equal(page.text, '<p>same</p>');
      assert.deepEqual(seen, ['t3', undefined, undefined], 'not sent again once a hop has gone to another origin, back on the first origin too');
    } finally {
      await f.close();
      await first.close();
      await other.close();
    }
  });

  it('retryAfterMs ignores values that are neither seconds nor an HTTP date', () => {
    assert.equal(retryAfterMs('-1'), undefined);
    assert.equal(retryAfterMs('1.5'), undefined);
    assert.equal(retryAfterMs('120'), 120_000);
  });
});
