/**
 * The Fetcher against the fixture site and small purpose-built servers on 127.0.0.1: redirects,
 * retries with back-off, time-outs, the size cap (compressed and decompressed), charsets, and the
 * per-host concurrency limit.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { detectCharset, Fetcher, retryAfterMs } from '../../lambdas/net/fetch.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { CHARSET_TEXT } from '../fixtures/site/charset.ts';

const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });

async function listen(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

describe('Fetcher', () => {
  let site: FixtureSite;
  before(async () => { site = await startFixtureSite(); });
  after(async () => { await site.close(); });

  it('follows relative and absolute redirects and chains, and reports the final URL', async () => {
    const f = new Fetcher(guard);
    try {
      const rel = await f.fetch(`${site.url}/redirect/?to=/quotes/page/2/`);
      assert.equal(rel.status, 200);
      assert.equal(rel.url, `${site.url}/quotes/page/2/`);
      assert.equal(rel.requestedUrl, `${site.url}/redirect/?to=/quotes/page/2/`);
      const chain = await f.fetch(`${site.url}/redirect-chain/5/`);
      assert.equal(chain.url, `${site.url}/quotes/`);
      assert.match(chain.text, /class="quote"/);
      const abs = await f.fetch(`${site.url}/redirect/?to=${encodeURIComponent(`${site.url}/books/`)}&code=301`);
      assert.equal(abs.url, `${site.url}/books/`);
    } finally {
      await f.close();
    }
  });

  it('stops after too many redirects', async () => {
    const f = new Fetcher(guard, { maxRedirects: 3 });
    try {
      await assert.rejects(f.fetch(`${site.url}/redirect-chain/5/`), (e: Error & { code?: string }) => e.code === 'fetch_failed' && /Too many redirects \(more than 3\)/.test(e.message));
    } finally {
      await f.close();
    }
  });

  it('retries 503 and 429 (honouring Retry-After) and then succeeds', async () => {
    const f = new Fetcher(guard, { retryBaseMs: 50 });
    try {
      const t0 = performance.now();
      const p = await f.fetch(`${site.url}/flaky/r503/?fail=2&code=503`);
      assert.equal(p.status, 200);
      assert.equal(p.retries, 2);
      assert.equal(site.hits.get('/flaky/r503/?fail=2&code=503'), 3);
      assert.ok(performance.now() - t0 >= 25 + 50, 'backed off before each retry');
      const t1 = performance.now();
      const q = await f.fetch(`${site.url}/flaky/r429/?fail=1&code=429`);
      assert.equal(q.status, 200);
      assert.ok(performance.now() - t1 >= 950, 'waited the 1 s of Retry-After');
    } finally {
      await f.close();
    }
  });

  it('returns the last answer when retries run out, and does not retry a 404', async () => {
    const f = new Fetcher(guard, { retries: 2, retryBaseMs: 10 });
    try {
      const p = await f.fetch(`${site.url}/flaky/gone/?fail=9&code=502`);
      assert.equal(p.status, 502);
      assert.equal(site.hits.get('/flaky/gone/?fail=9&code=502'), 3);
      const nf = await f.fetch(`${site.url}/status/404/`);
      assert.equal(nf.status, 404);
      assert.equal(site.hits.get('/status/404/'), 1);
    } finally {
      await f.close();
    }
  });

  it('times out a hanging server', async () => {
    const f = new Fetcher(guard, { timeoutMs: 300, retries: 0 });
    try {
      const t0 = performance.now();
      await assert.rejects(f.fetch(`${site.url}/hang/`), { code: 'fetch_failed' });
      assert.ok(performance.now() - t0 < 2000);
    } finally {
      await f.close();
    }
  });

  it('caps the body size, declared or streamed, compressed or not', async () => {
    const f = new Fetcher(guard, { maxBytes: 100 * 1024 });
    const bomb = zlib.gzipSync(Buffer.alloc(5 * 1024 * 1024, 'a'));
    const srv = await listen((req, res) => {
      if (req.url === '/gzip') {
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': bomb.length });
        res.end(bomb);
      } else {
        res.writeHead(200, { 'content-type': 'text/html' }); // chunked: no content-length
        for (let i = 0; i < 200; i++) res.write('x'.repeat(1024));
        res.end();
      }
    });
    try {
      assert.ok(bomb.length < 100 * 1024, 'the compressed body is under the cap');
      await assert.rejects(f.fetch(`${site.url}/big/?kb=200`), (e: Error & { code?: string }) => e.code === 'response_too_large' && /limit 102400 bytes/.test(e.message));
      await assert.rejects(f.fetch(`${srv.url}/chunked`), { code: 'response_too_large' });
      await assert.rejects(f.fetch(`${srv.url}/gzip`), (e: Error & { code?: string }) => e.code === 'response_too_large' && /decompressed/.test(e.message));
      const ok = await f.fetch(`${site.url}/big/?kb=50`);
      assert.equal(ok.body.length, 50 * 1024);
    } finally {
      await f.close();
      await srv.close();
    }
  });

  it('decompresses gzip, deflate and br', async () => {
    const html = '<html><body><p>compressed ✓</p></body></html>';
    const srv = await listen((req, res) => {
      const enc = req.url!.slice(1);
      const body = enc === 'gzip' ? zlib.gzipSync(html) : enc === 'deflate' ? zlib.deflateSync(html) : zlib.brotliCompressSync(html);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': enc });
      res.end(body);
    });
    const f = new Fetcher(guard);
    try {
      for (const enc of ['gzip', 'deflate', 'br']) assert.equal((await f.fetch(`${srv.url}/${enc}`)).text, html, enc);
    } finally {
      await f.close();
      await srv.close();
    }
  });

  it('decodes the charset from the header, <meta charset>, and http-equiv', async () => {
    const f = new Fetcher(guard);
    try {
      const latin1 = await f.fetch(`${site.url}/charset/latin1/`);
      assert.equal(latin1.charset, 'iso-8859-1');
      assert.ok(latin1.text.includes(CHARSET_TEXT.latin1));
      const meta = await f.fetch(`${site.url}/charset/meta/`);
      assert.equal(meta.charset, 'windows-1252');
      assert.ok(meta.text.includes(CHARSET_TEXT.meta));
      const sjis = await f.fetch(`${site.url}/charset/sjis/`);
      assert.equal(sjis.charset, 'shift_jis');
      assert.ok(sjis.text.includes(CHARSET_TEXT.sjis));
    } finally {
      await f.close();
    }
  });

  it('limits connections per host while another host proceeds', async () => {
    let inFlight = 0;
    let peak = 0;
    const srv = await listen((_req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => { inFlight--; res.end('<html></html>'); }, 150);
    });
    const port = new URL(srv.url).port;
    const f = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8', 'localhost'] }), { perHostConcurrency: 2 });
    try {
      const t0 = performance.now();
      const slow = Promise.all(Array.from({ length: 8 }, (_, i) => f.fetch(`${srv.url}/a${i}`)));
      // A different origin (same server, another host name) has its own two connections.
      await new Promise((r) => setTimeout(r, 20));
      const t1 = performance.now();
      await f.fetch(`http://localhost:${port}/other`);
      const otherMs = performance.now() - t1;
      await slow;
      const totalMs = performance.now() - t0;
      assert.ok(otherMs < 450, `the other host waited ${otherMs.toFixed(0)} ms`);
      assert.ok(totalMs >= 4 * 150 - 20, `8 requests through 2 connections take 4 rounds (${totalMs.toFixed(0)} ms)`);
      assert.ok(peak <= 3, `peak in flight ${peak} (2 for one host + 1 for the other)`);
    } finally {
      await f.close();
      await srv.close();
    }
  });

  it('aborts through the caller signal', async () => {
    const f = new Fetcher(guard);
    try {
      const c = new AbortController();
      setTimeout(() => c.abort(new Error('caller gave up')), 100);
      await assert.rejects(f.fetch(`${site.url}/hang/`, { signal: c.signal }), /caller gave up/);
    } finally {
      await f.close();
    }
  });

  it('detectCharset and retryAfterMs', () => {
    assert.equal(detectCharset(Buffer.from([0xef, 0xbb, 0xbf, 0x41]), undefined), 'utf-8');
    assert.equal(detectCharset(Buffer.from([0xff, 0xfe, 0x41, 0x00]), 'text/html'), 'utf-16le');
    assert.equal(detectCharset(Buffer.from('<meta charset="koi8-r">'), 'text/html'), 'koi8-r');
    assert.equal(detectCharset(Buffer.from('<meta charset="utf-16">'), undefined), 'utf-8');
    assert.equal(detectCharset(Buffer.from('<meta charset="bogus">'), 'text/html; charset=nope'), 'utf-8');
    assert.equal(detectCharset(Buffer.from(''), 'text/html; charset="Windows-1251"'), 'windows-1251');
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(new Date(Date.now() + 5000).toUTCString(), Date.now()) ! > 3000, true);
    assert.equal(retryAfterMs('soon'), undefined);
  });
});
