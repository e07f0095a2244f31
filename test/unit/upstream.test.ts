/**
 * The operator's proxy declaration (lambdas/net/upstream.ts): parsing, errors that name an entry without its
 * credentials, the group a config gets, redaction; and the session pool (engine/crawl/proxy-sessions.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseProxyGroups, proxyGroupFor } from '../../lambdas/net/upstream.ts';
import { redactProxy } from '../../lambdas/net/tunnel.ts';
import { MAX_SESSIONS_PER_PROXY, ProxySessionPool } from '../../lambdas/engine/crawl/proxy-sessions.ts';

const DECL = JSON.stringify({ default: 'dc', groups: { dc: ['http://u:p%40ss@dc1.example:8080', 'socks5://v:w0rd@10.0.0.5'], res: ['https://cust-{session}:Pw-123@gate.example:7777'] } });

describe('proxy declaration', () => {
  it('parses groups, credentials, default ports, {session} user names; labels hold no credential', () => {
    const g = parseProxyGroups(DECL);
    assert.equal(g.default, 'dc');
    const [a, b] = g.groups.get('dc')!;
    assert.deepEqual(a, { protocol: 'http:', host: 'dc1.example', port: 8080, username: 'u', password: 'p@ss', label: 'dc#1 (dc1.example:8080)', perSession: false });
    assert.equal(b!.port, 1080);
    assert.equal(g.groups.get('res')![0]!.perSession, true);
    assert.equal(parseProxyGroups('').groups.size, 0);
  });
  it('refuses bad declarations naming the entry, never its credentials', () => {
    for (const [text, re] of [
      ['{', /not JSON/],
      ['{"groups": {"dc": ["ftp://u:secret@h:1"]}}', /proxy dc#1 must be http:\/\/, https:\/\/ or socks5:\/\//],
      ['{"groups": {"dc": []}}', /group "dc" must be a list/],
      ['{"default": "x", "groups": {"dc": ["http://h:1"]}}', /"default" names no group/],
      ['{"groups": {"none": ["http://h:1"]}}', /group name "none"/],
      ['{"groups": {"dc": ["http://u:secret@h:1/path"]}}', /without a path/],
    ] as const) {
      assert.throws(() => parseProxyGroups(text), (err: Error) => re.test(err.message) && !err.message.includes('secret'), text);
    }
  });
  it('a config gets its group, the default, or none; an undeclared group is invalid_config', () => {
    const g = parseProxyGroups(DECL);
    assert.equal(proxyGroupFor(undefined, g)?.length, 2);
    assert.equal(proxyGroupFor('none', g), null);
    assert.equal(proxyGroupFor('res', g)?.length, 1);
    assert.throws(() => proxyGroupFor('zz', g), /invalid|no proxy group named "zz" \(the operator declares: dc, res; or none\)/);
    assert.equal(proxyGroupFor(undefined, parseProxyGroups('{"groups": {"dc": ["http://h:1"]}}')), null);
  });
  it('redacts credentials, raw and URL-encoded', () => {
    const p = parseProxyGroups(DECL).groups.get('dc')![0]!;
    assert.equal(redactProxy('connect http://u:p%40ss@dc1 failed (p@ss)', p), 'connect http://u:***@dc1 failed (***)');
  });
});

describe('ProxySessionPool', () => {
  it('retires a session and moves to the next proxy; none left: false; direct cannot retire', () => {
    const g = parseProxyGroups(DECL).groups.get('dc')!;
    const pool = new ProxySessionPool(g);
    const first = pool.current;
    assert.equal(pool.retire(first, 'Cloudflare challenge'), true);
    assert.notEqual(pool.current.proxy!.label, first.proxy!.label);
    assert.equal(pool.retire(first, 'again'), true, 'a session retired already is not retired twice');
    assert.equal(pool.retire(pool.current, 'DataDome captcha'), false);
    assert.equal(pool.summary(), '2 proxy session(s) retired (Cloudflare challenge, DataDome captcha)');
    const direct = new ProxySessionPool(null);
    assert.equal(direct.retire(direct.current, 'x'), false);
    assert.equal(direct.summary(), '');
  });
  it('a {session} proxy gives a new session id each time, up to its cap', () => {
    const pool = new ProxySessionPool(parseProxyGroups(DECL).groups.get('res')!);
    const ids = new Set<string>();
    let n = 0;
    while (n < 50) {
      ids.add(pool.current.id);
      if (!pool.retire(pool.current, 'blocked')) break;
      n++;
    }
    assert.equal(ids.size, MAX_SESSIONS_PER_PROXY);
  });
});
