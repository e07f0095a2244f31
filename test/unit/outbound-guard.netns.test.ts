/**
 * The outbound guard decides on addresses, in every notation, before any socket opens. test/run.ts
 * runs this file in a network namespace with only loopback where it can (the `.netns.` in its name).
 *
 * No packet may leave loopback here: refused targets must be refused before a connection is attempted.
 * `net.client.socket` (node:diagnostics_channel) and a wrapper around `net.Socket.prototype.connect`
 * record every socket and connection attempt of the process during each case; the assertions check
 * that none went to a non-loopback address, and none at all for refused cases.
 */
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import dc from 'node:diagnostics_channel';
import net from 'node:net';
import { OutboundGuard, TargetForbiddenError, parseAllowList, type ResolvedAddress } from '../../lambdas/net/guard.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';

const attempts: string[] = [];
const sockets: unknown[] = [];
const onSocket = (m: unknown) => { sockets.push(m); };
const realConnect = net.Socket.prototype.connect;

function watchSockets(): void {
  dc.subscribe('net.client.socket', onSocket);
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    // net.connect() passes its normalized arguments as one array: [options, callback].
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    const host = typeof first === 'object' && first !== null ? (first as { host?: string }).host : typeof args[1] === 'string' ? args[1] : undefined;
    attempts.push(String(host ?? '?'));
    return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;
}

function unwatchSockets(): void {
  dc.unsubscribe('net.client.socket', onSocket);
  net.Socket.prototype.connect = realConnect;
}

/** Names that resolve inside, without any DNS: the guard's resolver port. */
const fakeDns: Record<string, ResolvedAddress[]> = {
  'intranet.test': [{ address: '10.0.0.5', family: 4 }],
  'meta.test': [{ address: '169.254.169.254', family: 4 }],
  'mixed.test': [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }],
  'v6inside.test': [{ address: 'fd12:3456::1', family: 6 }],
  'mapped.test': [{ address: '::ffff:192.168.1.1', family: 6 }],
  'public.test': [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }],
};
const resolve = async (host: string): Promise<ResolvedAddress[]> => {
  const r = fakeDns[host];
  if (!r) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return r;
};

function refused(fn: () => unknown, pattern?: RegExp): void {
  assert.throws(fn, (err: Error & { code?: string }) => {
    assert.equal(err.code, 'target_forbidden', err.message);
    assert.ok(err instanceof TargetForbiddenError);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

describe('OutboundGuard', () => {
  before(watchSockets);
  after(unwatchSockets);
  beforeEach(() => { attempts.length = 0; sockets.length = 0; });

  const closed = new OutboundGuard({ resolve });

  it('refuses loopback in every notation the URL parser accepts', () => {
    for (const url of ['http://127.0.0.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://127.0.1/',
      'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[0:0:0:0:0:ffff:127.0.0.1]/']) {
      refused(() => closed.checkUrl(url), /loopback/);
    }
    assert.deepEqual(attempts, []);
  });

  it('refuses private, link-local, metadata and other non-unicast ranges', () => {
    const cases: Array<[string, RegExp]> = [
      ['http://10.1/', /private/], ['http://10.0.0.1/', /private/], ['http://172.16.0.1/', /private/], ['http://172.31.255.255/', /private/],
      ['http://192.168.1.1/', /private/], ['http://169.254.169.254/latest/meta-data/', /cloud metadata/], ['http://[fd00:ec2::254]/', /cloud metadata/],
      ['http://0xa9fea9fe/', /cloud metadata/], ['http://[::ffff:a9fe:a9fe]/', /cloud metadata/], ['http://169.254.1.1/', /link-local/],
      ['http://[fe80::1]/', /link-local/], ['http://[fc00::1]/', /unique local/], ['http://100.64.0.1/', /carrier-grade NAT/],
      ['http://0.0.0.0/', /unspecified/], ['http://0/', /unspecified/], ['http://[::]/', /unspecified/], ['http://255.255.255.255/', /broadcast/],
      ['http://224.0.0.1/', /multicast/], ['http://[ff02::1]/', /multicast/], ['http://[64:ff9b::a00:1]/', /NAT64/],
      ['http://[2002:a00:1::]/', /6to4/], ['http://[2001::1]/', /Teredo/], ['http://240.0.0.1/', /reserved/],
    ];
    for (const [url, why] of cases) refused(() => closed.checkUrl(url), why);
    assert.deepEqual(attempts, []);
  });

  it('refuses every scheme but http and https', () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'data:text/html,hi', 'javascript:alert(1)', 'ws://example.com/']) {
      refused(() => closed.checkUrl(url), /only http and https/);
    }
    assert.throws(() => closed.checkUrl('not a url'), { code: 'invalid_url' });
  });

  it('lets public addresses and names through checkUrl (names are decided at connect time)', () => {
    assert.equal(closed.checkUrl('https://93.184.216.34/x').hostname, '93.184.216.34');
    assert.equal(closed.checkUrl('http://[2606:2800:220:1::1]/').hostname, '[2606:2800:220:1::1]');
    assert.equal(closed.checkUrl('https://intranet.test/').hostname, 'intranet.test');
  });

  it('refuses names that resolve inside, and names with any inside address', async () => {
    for (const host of ['intranet.test', 'meta.test', 'mixed.test', 'v6inside.test', 'mapped.test']) {
      await assert.rejects(closed.resolveChecked(host), { code: 'target_forbidden' }, host);
    }
    await assert.rejects(closed.resolveChecked('meta.test'), /resolves to 169\.254\.169\.254 is a link-local \(cloud metadata service\) address/);
    assert.deepEqual((await closed.resolveChecked('public.test')).map((a) => a.address), ['93.184.216.34', '2606:2800:220:1::1']);
    await assert.rejects(closed.resolveChecked('unknown.test'), /ENOTFOUND/);
    assert.deepEqual(attempts, []);
  });

  it('lookup: the callback forms net.connect uses, errors for refused names', async () => {
    const one = await new Promise<unknown[]>((r) => closed.lookup('public.test', { family: 6 }, (...a) => r(a)));
    assert.deepEqual(one, [null, '2606:2800:220:1::1', 6]);
    const all = await new Promise<unknown[]>((r) => closed.lookup('public.test', { all: true }, (...a) => r(a)));
    assert.deepEqual(all, [null, fakeDns['public.test']]);
    const bad = await new Promise<unknown[]>((r) => closed.lookup('intranet.test', { all: true }, (...a) => r(a)));
    assert.equal((bad[0] as { code: string }).code, 'target_forbidden');
  });

  it('a refused name never opens a socket, also through the fetcher', async () => {
    const fetcher = new Fetcher(closed, { retries: 0, timeoutMs: 2000 });
    try {
      for (const host of ['intranet.test', 'meta.test', 'mixed.test']) {
        await assert.rejects(fetcher.fetch(`http://${host}:8080/`), { code: 'target_forbidden' }, host);
      }
      await assert.rejects(fetcher.fetch('http://169.254.169.254/'), { code: 'target_forbidden' });
      await assert.rejects(fetcher.fetch('http://[::ffff:10.0.0.1]/'), { code: 'target_forbidden' });
    } finally {
      await fetcher.close();
    }
    // Sockets may be created for names (the lookup runs inside connect), but none may have connected
    // anywhere: every connect attempt recorded was to a name the guard then refused.
    for (const host of attempts) assert.ok(['intranet.test', 'meta.test', 'mixed.test'].includes(host), `unexpected connect to ${host}`);
  });

  it('allowlist: CIDRs, single addresses, host names and .suffix names', async () => {
    const g = new OutboundGuard({ allow: ['127.0.0.0/8', '10.0.0.5', 'fd12::/16', 'intranet.test', '.corp.test'], resolve: async (h) => (h.endsWith('.corp.test') ? [{ address: '192.168.7.7', family: 4 }] : resolve(h)) });
    for (const url of ['http://127.0.0.1/', 'http://2130706433/', 'http://0x7f.1/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/', 'http://10.0.0.5/']) g.checkUrl(url);
    refused(() => g.checkUrl('http://10.0.0.6/'), /private/);
    refused(() => g.checkUrl('http://169.254.169.254/'), /metadata/);
    assert.equal((await g.resolveChecked('intranet.test'))[0]!.address, '10.0.0.5');
    assert.equal((await g.resolveChecked('v6inside.test'))[0]!.address, 'fd12:3456::1');
    assert.equal((await g.resolveChecked('a.b.corp.test'))[0]!.address, '192.168.7.7');
    await assert.rejects(g.resolveChecked('meta.test'), { code: 'target_forbidden' });
    assert.deepEqual(parseAllowList(' 127.0.0.0/8, ,localhost '), ['127.0.0.0/8', 'localhost']);
    assert.throws(() => new OutboundGuard({ allow: ['10.0.0.0/99'] }), /not a valid CIDR/);
    assert.throws(() => new OutboundGuard({ allow: ['http://x/'] }), /not a valid CIDR/);
    assert.throws(() => new OutboundGuard({ allow: ['not a host'] }), /neither a CIDR, an IP address nor a host name/);
  });

  it('the real localhost name (via /etc/hosts) is refused without an allowlist', async () => {
    await assert.rejects(new OutboundGuard().resolveChecked('localhost'), /loopback/);
  });
});

describe('redirects through the guard (fixture site on loopback)', () => {
  let site: FixtureSite;
  let fetcher: Fetcher;
  before(async () => {
    watchSockets();
    site = await startFixtureSite();
    fetcher = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8'], resolve }), { retries: 0, timeoutMs: 3000 });
  });
  after(async () => {
    await fetcher.close();
    await site.close();
    unwatchSockets();
  });
  beforeEach(() => { attempts.length = 0; });

  it('a redirect into a private, metadata or inside-resolving target is refused before connecting there', async () => {
    for (const to of ['http://10.1.2.3/', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:192.168.0.1]/', 'http://2852039166/', 'http://intranet.test/', 'file:///etc/passwd']) {
      await assert.rejects(fetcher.fetch(`${site.url}/redirect/?to=${encodeURIComponent(to)}`), { code: 'target_forbidden' }, to);
    }
    for (const host of attempts) assert.ok(host === '127.0.0.1' || host === 'intranet.test', `connect attempt to ${host}`);
  });

  it('a redirect within allowed targets is followed, in another notation too', async () => {
    const page = await fetcher.fetch(`${site.url}/redirect/?to=${encodeURIComponent(`http://0x7f.1:${site.port}/flaky/x/?fail=0`)}`);
    assert.equal(page.status, 200);
    assert.equal(page.url, `http://127.0.0.1:${site.port}/flaky/x/?fail=0`);
    assert.match(page.text, /ok x/);
  });
});
