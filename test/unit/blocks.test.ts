/**
 * The fingerprints of bot-protection pages (lambdas/net/blocks.ts): each test page written after what a service
 * serves is read as that service's challenge, captcha or access-denied page; ordinary pages that mention captchas or
 * Cloudflare, are served through Cloudflare's CDN or carry a reCAPTCHA widget are not; the message every reader uses.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BLOCK_FINGERPRINTS, blockMessage, detectBlock } from '../../lambdas/net/blocks.ts';
import { BLOCK_PAGES, ORDINARY_PAGES } from '../fixtures/blocks.ts';

describe('block fingerprints', () => {
  for (const p of BLOCK_PAGES) {
    it(`${p.name}: ${p.service} ${p.kind}`, () => {
      assert.deepEqual(detectBlock({ status: p.status, headers: p.headers, body: p.body }), { service: p.service, kind: p.kind, status: p.status });
    });
  }
  for (const p of ORDINARY_PAGES) {
    it(`${p.name}: not a block`, () => {
      assert.equal(detectBlock({ status: p.status, headers: p.headers, body: p.body }), null);
    });
  }
  it('every service of the table has a test page', () => {
    const services = new Set(BLOCK_FINGERPRINTS.map((f) => f.service));
    for (const s of services) assert.ok(BLOCK_PAGES.some((p) => p.service === s), s);
  });
  it('the message names the service and what to try', () => {
    const b = detectBlock({ status: 403, headers: BLOCK_PAGES[0]!.headers, body: '' })!;
    assert.equal(blockMessage(b, 'https://shop.example/'), 'the site answered with a Cloudflare challenge; try the browser engine or a proxy (https://shop.example/ answered HTTP 403 with that page instead of its own)');
    assert.match(blockMessage({ service: 'Akamai', kind: 'block', status: 403 }, 'u', 'proxy'), /^the site answered with an Akamai access-denied page; try a proxy/);
  });
  it('does not copy an ordinary page to read it (no lower-casing of a 200 without a service header)', () => {
    // Every page a run loads is tested: lower-casing 64 KB of each cost the engine bench GC time and peak RSS.
    const page = `<html><head><title>Books</title></head><body>${'<p>A book, £12.99</p>'.repeat(2_000)}</body></html>`;
    const lower = String.prototype.toLowerCase;
    let calls = 0;
    String.prototype.toLowerCase = function (this: string) { calls++; return lower.call(this); };
    try {
      assert.equal(detectBlock({ status: 200, headers: { 'content-type': 'text/html' }, body: page }), null);
      assert.deepEqual(detectBlock({ status: 200, body: `<html><script>window._cf_chl_opt={cType: 'managed'}</script></html>` }), { service: 'Cloudflare', kind: 'challenge', status: 200 });
    } finally {
      String.prototype.toLowerCase = lower;
    }
    assert.equal(calls, 0);
  });
  it('reads a bounded part of a large body', () => {
    const big = `<html><body>${'x'.repeat(5_000_000)}window._cf_chl_opt={}</body></html>`;
    assert.equal(detectBlock({ status: 403, body: big }), null, 'a marker past the scanned part is not seen');
  });
});
