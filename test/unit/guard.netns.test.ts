/**
 * The outbound guard (lambdas/net/guard.ts), run by test/run.ts in a loopback-only network namespace
 * where the machine allows it (`.netns.` in the name): every IP notation, IPv4-mapped and other embedded forms,
 * names that resolve inside, redirects into private ranges and foreign schemes are refused with
 * `target_forbidden` before any socket opens; the allowlist lets through what it names, in any notation.
 *
 * No packet may leave loopback. Refused targets are shown to open no socket at all (IP literals, schemes)
 * or a socket that never connects (names: the guard is the socket's lookup). Every client socket of the
 * process is watched (net-helpers.ts), and a safety net there stops any connection to a non-loopback
 * address even if the guard were wrong; each test asserts that it never had to.
 * Names that "resolve inside" come from an injected resolver: no DNS query is made for them.
 */
import { describe, it, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { OutboundGuard, TargetForbiddenError, parseAllowList, type ResolvedAddress } from '../../lambdas/net/guard.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import { CodedError } from '../../lambdas/errors.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { listen, watchSockets, type SocketWatch } from './net-helpers.ts';

/** Made-up names and what they "resolve" to. Only names that stay inside loopback are ever connected to. */
const FAKE_DNS: Record<string, ResolvedAddress[]> = {
  'intranet.test': [{ address: '10.0.0.5', family: 4 }],
  'meta.test': [{ address: '169.254.169.254', family: 4 }],
  'mixed.test': [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }],
  'v6inside.test': [{ address: 'fd12:3456::1', family: 6 }],
  'mapped.test': [{ address: '::ffff:192.168.1.1', family: 6 }],
  'metav6.test': [{ address: 'fd00:ec2::254', family: 6 }],
  'loop.test': [{ address: '127.0.0.1', family: 4 }],
  'public.test': [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }],
  'empty.test': [],
};

/** Calls per name, so a test can see how often the guard resolved. */
const resolveCalls = new Map<string, number>();

/** `rebind.test` answers 127.0.0.1 the first time and an inside address afterwards (DNS rebinding). */
async function fakeResolve(name: string): Promise<ResolvedAddress[]> {
  const host = name.toLowerCase().replace(/\.$/, ''); // as DNS compares names
  const n = (resolveCalls.get(host) ?? 0) + 1;
  resolveCalls.set(host, n);
  if (host === 'rebind.test') return [{ address: n === 1 ? '127.0.0.1' : '10.0.0.5', family: 4 }];
  const answer = FAKE_DNS[host];
  if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
  return answer;
}

/** Asserts a TargetForbiddenError with the code, the URL in details (when given) and a message matching `why`. */
function isForbidden(why: RegExp, url?: string) {
  return (err: unknown): true => {
    assert.ok(err instanceof TargetForbiddenError, `not a TargetForbiddenError: ${String(err)}`);
    assert.ok(err instanceof CodedError);
    assert.equal(err.code, 'target_forbidden');
    assert.match(err.message, why);
    if (url !== undefined) assert.deepEqual(err.details, [{ url }]);
    return true;
  };
}

/** Every notation of a loopback address the URL parser accepts, with the URL it normalizes to. */
const LOOPBACK_NOTATIONS: Array<[string, string]> = [
  ['127.0.0.1', '127.0.0.1'],
  ['2130706433', '127.0.0.1'], // decimal
  ['0x7f000001', '127.0.0.1'], // hex, one number
  ['0x7f.0.0.1', '127.0.0.1'], // hex octet
  ['0x7f.1', '127.0.0.1'], // hex, short
  ['0177.0.0.1', '127.0.0.1'], // octal
  ['017700000001', '127.0.0.1'], // octal, one number
  ['127.1', '127.0.0.1'], // short
  ['127.0.1', '127.0.0.1'],
  ['127.0.0.1.', '127.0.0.1'], // trailing dot
  ['127.42.0.7', '127.42.0.7'], // anywhere in 127/8
];

describe('OutboundGuard', () => {
  let watch: SocketWatch;
  before(() => { watch = watchSockets(); });
  after(() => watch.stop());
  beforeEach(() => watch.reset());
  afterEach(() => watch.assertLoopbackOnly());

  const closed = new OutboundGuard({ resolve: fakeResolve });

  describe('checkUrl: IP literals in every notation', () => {
    it('refuses loopback in every notation, and IPv6 loopback forms, with an empty allowlist', () => {
      for (const [host, normal] of LOOPBACK_NOTATIONS) {
        assert.throws(() => closed.checkUrl(`http://${host}:8080/x`), isForbidden(new RegExp(`${normal.replace(/\./g, '\\.')} is a loopback address`), `http://${normal}:8080/x`), host);
      }
      for (const host of ['[::1]', '[0:0:0:0:0:0:0:1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:127.0.0.1]', '[::ffff:127.1.2.3]']) {
        assert.throws(() => closed.checkUrl(`https://${host}/`), isForbidden(/loopback/), host);
      }
      watch.assertNoSocket();
    });

    it('refuses private, link-local, metadata, CGNAT, unspecified, broadcast, multicast, NAT64, 6to4 and reserved addresses', () => {
      const cases: Array<[string, RegExp]> = [
        // RFC 1918, in several notations
        ['10.0.0.1', /10\.0\.0\.1 is a private address/], ['10.1', /10\.0\.0\.1 is a private/], ['0x0a.1', /10\.0\.0\.1 is a private/],
        ['012.0.0.1', /10\.0\.0\.1 is a private/], ['167772161', /10\.0\.0\.1 is a private/], ['10.255.255.255', /private/],
        ['172.16.0.1', /private/], ['172.31.255.255', /private/], ['0xac100001', /172\.16\.0\.1 is a private/],
        ['192.168.0.1', /private/], ['192.168.1', /192\.168\.0\.1 is a private/], ['3232235777', /192\.168\.1\.1 is a private/],
        ['0300.0250.0.1', /192\.168\.0\.1 is a private/], ['[::ffff:10.0.0.1]', /10\.0\.0\.1 is a private/], ['[::ffff:c0a8:101]', /192\.168\.1\.1 is a private/],
        // link-local and the cloud metadata service
        ['169.254.169.254', /169\.254\.169\.254 is a link-local \(cloud metadata service\) address/], ['2852039166', /cloud metadata/],
        ['0xa9fea9fe', /cloud metadata/], ['0251.0376.0251.0376', /cloud metadata/], ['169.254.43518', /cloud metadata/],
        ['[::ffff:a9fe:a9fe]', /169\.254\.169\.254 is a link-local \(cloud metadata service\)/], ['[::ffff:169.254.169.254]', /cloud metadata/],
        ['[fd00:ec2::254]', /fd00:ec2::254 is a link-local \(cloud metadata service\)/], ['169.254.1.1', /169\.254\.1\.1 is a link-local address/],
        ['[fe80::1]', /link-local/], ['[fe80::a9fe:a9fe]', /link-local/],
        // unique local, carrier-grade NAT
        ['[fc00::1]', /unique local/], ['[fd12:3456::1]', /unique local/],
        ['100.64.0.1', /carrier-grade NAT/], ['100.127.255.254', /carrier-grade NAT/], ['100.100.100.200', /carrier-grade NAT/],
        // unspecified (connects to the local host on Linux), broadcast, multicast
        ['0.0.0.0', /unspecified/], ['0', /0\.0\.0\.0 is an unspecified/], ['0x0', /unspecified/], ['0.1.2.3', /unspecified/], ['[::]', /unspecified/],
        ['255.255.255.255', /broadcast/], ['0xffffffff', /broadcast/], ['4294967295', /broadcast/],
        ['224.0.0.1', /multicast/], ['239.255.255.250', /multicast/], ['[ff02::1]', /multicast/], ['[ff05::1:3]', /multicast/],
        // IPv6 forms that embed an IPv4 address: NAT64 (well-known and local-use), 6to4, Teredo, translated, compatible
        ['[64:ff9b::a00:1]', /NAT64/], ['[64:ff9b::10.0.0.1]', /NAT64/], ['[64:ff9b::a9fe:a9fe]', /NAT64/], ['[64:ff9b::7f00:1]', /NAT64/],
        ['[64:ff9b:1::a00:1]', /NAT64/], ['[2002:a00:1::1]', /6to4/], ['[2002:7f00:1::]', /6to4/], ['[2001:0:4136:e378::1]', /Teredo/],
        ['[::ffff:0:a00:1]', /IPv4-translated/], ['[::127.0.0.1]', /IPv4-compatible/], ['[::10.0.0.1]', /IPv4-compatible/], ['[::a9fe:a9fe]', /IPv4-compatible/],
        // reserved, documentation, benchmarking, and IPv6 outside global unicast
        ['240.0.0.1', /reserved/], ['192.0.2.1', /reserved/], ['198.18.0.1', /reserved/], ['[2001:db8::1]', /reserved/],
        ['[100::1]', /discard/], ['[fec0::1]', /deprecatedSiteLocal/], ['[4000::1]', /outside 2000::\/3/], ['[1::1]', /outside 2000::\/3/],
      ];
      for (const [host, why] of cases) assert.throws(() => closed.checkUrl(`http://${host}/latest/meta-data/`), isForbidden(why), host);
      watch.assertNoSocket();
    });

    it('the error is clear: what was refused, why, and how to allow it', () => {
      assert.throws(() => closed.checkUrl('http://0xa9fea9fe/latest/meta-data/iam/'), (err: TargetForbiddenError) => {
        assert.equal(err.name, 'TargetForbiddenError');
        assert.equal(err.message, 'Refused http://169.254.169.254/latest/meta-data/iam/: 169.254.169.254 is a link-local (cloud metadata service) address. '
          + 'Private, loopback, link-local and metadata addresses are not fetched unless SAI_OUTBOUND_ALLOW permits them.');
        assert.deepEqual(err.details, [{ url: 'http://169.254.169.254/latest/meta-data/iam/' }]);
        return true;
      });
    });

    it('refuses every scheme but http and https', () => {
      const cases: Array<[string, string]> = [
        ['file:///etc/passwd', 'file'], ['file://localhost/etc/passwd', 'file'], ['ftp://ftp.example.com/pub/', 'ftp'],
        ['gopher://127.0.0.1:6379/_INFO', 'gopher'], ['data:text/html,<script>alert(1)</script>', 'data'],
        ['javascript:alert(document.domain)', 'javascript'], ['ws://example.com/', 'ws'], ['wss://example.com/', 'wss'],
        ['mailto:a@example.com', 'mailto'], ['dict://127.0.0.1:11211/stat', 'dict'], ['ldap://10.0.0.1/', 'ldap'], ['blob:http://example.com/x', 'blob'],
      ];
      for (const [url, scheme] of cases) {
        assert.throws(() => closed.checkUrl(url), isForbidden(new RegExp(`only http and https URLs are fetched \\(got ${scheme}\\)`)), url);
      }
      for (const bad of ['not a url', '', '/relative/path', 'http://', 'http://[::1/']) {
        assert.throws(() => closed.checkUrl(bad), (err: CodedError) => err.code === 'invalid_url' && !(err instanceof TargetForbiddenError), bad);
      }
      watch.assertNoSocket();
    });

    it('lets public addresses through (in any notation), and leaves names to connect time', () => {
      assert.equal(closed.checkUrl('https://93.184.216.34/x').href, 'https://93.184.216.34/x');
      assert.equal(closed.checkUrl('http://16843009/').hostname, '1.1.1.1');
      assert.equal(closed.checkUrl('http://0x08.0x08.0x08.0x08/').hostname, '8.8.8.8');
      assert.equal(closed.checkUrl('http://172.32.0.1/').hostname, '172.32.0.1'); // just outside 172.16/12
      assert.equal(closed.checkUrl('http://100.128.0.1/').hostname, '100.128.0.1'); // just outside 100.64/10
      assert.equal(closed.checkUrl('http://[2606:4700:4700::1111]/').hostname, '[2606:4700:4700::1111]');
      assert.equal(closed.checkUrl('HTTP://Intranet.TEST/').hostname, 'intranet.test');
      assert.equal(closed.checkUrl(new URL('https://localhost/')).hostname, 'localhost');
      watch.assertNoSocket(); // checkUrl never resolves or connects
    });
  });

  describe('names, through resolveChecked and lookup', () => {
    it('refuses names that resolve inside, and names with any inside address among public ones', async () => {
      const cases: Array<[string, RegExp]> = [
        ['intranet.test', /^Refused intranet\.test: it resolves to a private address\. .*SAI_OUTBOUND_ALLOW/],
        ['meta.test', /resolves to a link-local \(cloud metadata service\)/],
        ['mixed.test', /resolves to a private/], ['v6inside.test', /unique local/], ['mapped.test', /resolves to a private/],
        ['metav6.test', /resolves to a link-local \(cloud metadata service\)/], ['loop.test', /loopback/],
      ];
      for (const [host, why] of cases) await assert.rejects(closed.resolveChecked(host), isForbidden(why), host);
      assert.deepEqual((await closed.resolveChecked('public.test')).map((a) => a.address), ['93.184.216.34', '2606:2800:220:1::1']);
      await assert.rejects(closed.resolveChecked('nowhere.test'), { code: 'dns_failed', message: /nowhere\.test does not resolve/ });
      await assert.rejects(closed.resolveChecked('empty.test'), { code: 'dns_failed', message: 'empty.test does not resolve to any address' });
      // An IP literal given as a host name is checked as an address, without resolving.
      await assert.rejects(closed.resolveChecked('[::1]'), isForbidden(/Refused ::1: ::1 is a loopback address/));
      assert.deepEqual(await closed.resolveChecked('93.184.216.34'), [{ address: '93.184.216.34', family: 4 }]);
      watch.assertNoSocket();
    });

    it('the real localhost (from /etc/hosts) is refused without an allowlist', async () => {
      const system = new OutboundGuard(); // the default resolver: dns.lookup
      await assert.rejects(system.resolveChecked('localhost'), isForbidden(/^Refused localhost: it resolves to a loopback address/));
      const allowed = new OutboundGuard({ allow: ['127.0.0.0/8', '::1'] });
      for (const a of await allowed.resolveChecked('localhost')) assert.ok(a.address === '127.0.0.1' || a.address === '::1', a.address);
      watch.assertNoSocket();
    });

    it('lookup answers in both callback forms net.connect uses, and refuses with target_forbidden', async () => {
      type Answer = [Error | null, unknown?, unknown?];
      const ask = (g: OutboundGuard, host: string, options: Parameters<OutboundGuard['lookup']>[1]) =>
        new Promise<Answer>((r) => g.lookup(host, options, (...a: unknown[]) => r(a as Answer)));
      assert.deepEqual(await ask(closed, 'public.test', { all: true }), [null, FAKE_DNS['public.test']]);
      assert.deepEqual(await ask(closed, 'public.test', {}), [null, '93.184.216.34', 4]);
      assert.deepEqual(await ask(closed, 'public.test', undefined), [null, '93.184.216.34', 4]);
      assert.deepEqual(await ask(closed, 'public.test', { family: 6 }), [null, '2606:2800:220:1::1', 6]);
      assert.deepEqual(await ask(closed, 'public.test', 6), [null, '2606:2800:220:1::1', 6]);
      assert.deepEqual(await ask(closed, 'public.test', { family: 4, all: true }), [null, [{ address: '93.184.216.34', family: 4 }]]);
      // No address of the asked family: the guard answers with what it has (all of it checked).
      assert.deepEqual(await ask(closed, 'intranet.test', { family: 6 }).then((a) => (a[0] as CodedError).code), 'target_forbidden');
      for (const host of ['intranet.test', 'meta.test', 'mixed.test', 'mapped.test']) {
        for (const options of [{ all: true }, {}, 4] as const) {
          const [err, address] = await ask(closed, host, options);
          assert.ok(err instanceof TargetForbiddenError, `${host} ${JSON.stringify(options)}`);
          assert.equal(address, undefined, 'no address handed out with the error');
        }
      }
      const [err] = await ask(closed, 'nowhere.test', { all: true });
      assert.equal((err as NodeJS.ErrnoException).code, 'dns_failed');
      const open = new OutboundGuard({ allow: ['127.0.0.0/8'] });
      assert.deepEqual(await ask(open, 'localhost', {}), [null, '127.0.0.1', 4]);
      assert.deepEqual(await ask(open, 'localhost', { all: true }), [null, [{ address: '127.0.0.1', family: 4 }]]);
      watch.assertNoSocket();
    });

    it('as the lookup of net.connect: connects to the checked address, or never connects', async () => {
      const srv = await listen((_req, res) => res.end('ok'));
      try {
        const open = new OutboundGuard({ allow: ['127.0.0.0/8'] });
        const system = new OutboundGuard(); // the real localhost, no allowlist
        const connectWith = (options: net.NetConnectOpts) => new Promise<string>((resolve, reject) => {
          const socket = net.connect(options);
          socket.once('connect', () => { resolve(socket.remoteAddress!); socket.destroy(); });
          socket.once('error', reject);
        });
        // The guard's lookup is typed loosely (unknown callback arguments); net wants its own signature.
        const lookupOf = (g: OutboundGuard) => g.lookup as unknown as net.LookupFunction;
        for (const autoSelectFamily of [true, false]) { // {all: true} and plain callbacks
          assert.equal(await connectWith({ host: 'localhost', port: srv.port, lookup: lookupOf(open), autoSelectFamily }), '127.0.0.1');
          await assert.rejects(connectWith({ host: 'localhost', port: srv.port, lookup: lookupOf(system), autoSelectFamily }), isForbidden(/loopback/));
          await assert.rejects(connectWith({ host: 'intranet.test', port: 80, lookup: lookupOf(closed), autoSelectFamily }), isForbidden(/private/));
          await assert.rejects(connectWith({ host: 'meta.test', port: 80, lookup: lookupOf(closed), autoSelectFamily }), isForbidden(/cloud metadata/));
        }
        assert.deepEqual(watch.connected, ['127.0.0.1', '127.0.0.1']);
      } finally {
        await srv.close();
      }
    });
  });

  describe('allowlist', () => {
    it('CIDRs, single addresses, IPv6, host names and .suffix names', async () => {
      const g = new OutboundGuard({
        allow: ['127.0.0.0/8', '10.0.0.5', '[fd12::1]', 'fd00:abcd::/32', 'Intranet.TEST', '.corp.test', 'trailing.test.'],
        resolve: async (h) => (h.endsWith('corp.test') || h === 'trailing.test' ? [{ address: '192.168.7.7', family: 4 }] : fakeResolve(h)),
      });
      for (const [host] of LOOPBACK_NOTATIONS) g.checkUrl(`http://${host}/`);
      for (const url of ['http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:2]/', 'http://10.0.0.5/', 'http://0xa000005/', 'http://[fd12::1]/', 'http://[fd00:abcd:1::9]/']) g.checkUrl(url);
      // Only what is named passes: neighbours and other classes stay refused.
      for (const [url, why] of [['http://10.0.0.6/', /private/], ['http://169.254.169.254/', /metadata/], ['http://[::1]/', /loopback/],
        ['http://[fd12::2]/', /unique local/], ['http://[64:ff9b::7f00:1]/', /NAT64/], ['http://[::127.0.0.1]/', /IPv4-compatible/]] as const) {
        assert.throws(() => g.checkUrl(url), isForbidden(why), url);
      }
      // An allowed name passes whatever it resolves to (that is what naming it means); others are checked.
      assert.equal((await g.resolveChecked('intranet.test'))[0]!.address, '10.0.0.5');
      assert.equal((await g.resolveChecked('INTRANET.test.'))[0]!.address, '10.0.0.5');
      assert.equal((await g.resolveChecked('a.b.corp.test'))[0]!.address, '192.168.7.7');
      assert.equal((await g.resolveChecked('trailing.test'))[0]!.address, '192.168.7.7');
      await assert.rejects(g.resolveChecked('corp.test'), isForbidden(/corp\.test: it resolves to a private/)); // .suffix: subdomains only
      await assert.rejects(g.resolveChecked('evilcorp.test'), isForbidden(/private/));
      await assert.rejects(g.resolveChecked('meta.test'), isForbidden(/cloud metadata/));
      await assert.rejects(g.resolveChecked('mixed.test'), isForbidden(/mixed\.test: it resolves to a private/));
      assert.equal((await g.resolveChecked('loop.test'))[0]!.address, '127.0.0.1'); // inside 127/8
      watch.assertNoSocket();
    });

    it('invalid entries throw at construction; SAI_OUTBOUND_ALLOW parsing', () => {
      for (const entry of ['10.0.0.0/33', '::1/129', '10.0.0.0/8/8', 'http://example.com/', '10.0.0.0/x']) {
        assert.throws(() => new OutboundGuard({ allow: [entry] }), new RegExp(`"${entry.replace(/[.*/]/g, '\\$&')}" is not a valid CIDR`), entry);
      }
      for (const entry of ['not a host', '*.example.com', 'foo_bar.test', 'a..b', 'host:8080', '[zz::1]', '']) {
        assert.throws(() => new OutboundGuard({ allow: [entry] }), /is neither a CIDR, an IP address nor a host name/, JSON.stringify(entry));
      }
      assert.deepEqual(parseAllowList(' 127.0.0.0/8, ,localhost ,,.corp.test'), ['127.0.0.0/8', 'localhost', '.corp.test']);
      assert.deepEqual(parseAllowList(undefined), []);
      assert.deepEqual(OutboundGuard.fromEnv({ SAI_OUTBOUND_ALLOW: '127.0.0.0/8,localhost' }).allow, ['127.0.0.0/8', 'localhost']);
      assert.deepEqual(OutboundGuard.fromEnv({}).allow, []);
      assert.throws(() => OutboundGuard.fromEnv({ SAI_OUTBOUND_ALLOW: '127.0.0.0/8,bad entry' }), /"bad entry"/);
    });
  });
});

describe('the guard in the fetcher (fixture site on 127.0.0.1)', () => {
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

  it('an empty allowlist refuses the fixture site in every loopback notation, without creating a socket', async () => {
    const f = new Fetcher(new OutboundGuard(), { retries: 2, timeoutMs: 2000 });
    try {
      for (const [host, normal] of [...LOOPBACK_NOTATIONS, ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]'], ['[::1]', '[::1]']] as const) {
        await assert.rejects(f.fetch(`${site.url.replace('127.0.0.1', host)}/status/200/`), isForbidden(/loopback/, `http://${normal}:${site.port}/status/200/`), host);
      }
      watch.assertNoSocket();
      assert.equal(site.hits.size, 0);
    } finally {
      await f.close();
    }
  });

  it('127.0.0.0/8 allows the fixture site in every loopback notation, normalized to 127.0.0.1', async () => {
    const f = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8'] }), { retries: 0, timeoutMs: 3000 });
    try {
      for (const [i, [host, normal]] of LOOPBACK_NOTATIONS.entries()) {
        if (normal !== '127.0.0.1') continue; // the fixture listens on 127.0.0.1 only
        const page = await f.fetch(`http://${host}:${site.port}/status/200/?n=${i}`);
        assert.equal(page.status, 200, host);
        assert.equal(page.url, `http://127.0.0.1:${site.port}/status/200/?n=${i}`);
        assert.equal(site.hits.get(`/status/200/?n=${i}`), 1);
      }
      // IPv4-mapped IPv6 of an allowed address is allowed too (and stays on loopback).
      const mapped = await f.fetch(`http://[::ffff:127.0.0.1]:${site.port}/status/200/?n=mapped`);
      assert.equal(mapped.status, 200);
      assert.equal(mapped.url, `http://[::ffff:7f00:1]:${site.port}/status/200/?n=mapped`);
      assert.ok(watch.connected.length >= 1);
    } finally {
      await f.close();
    }
  });

  it('an allowed IPv6 literal is fetched ([::1] with ::1/128), and refused without it', async () => {
    const srv = await listen((_req, res) => res.end('<p>v6</p>'), '::1');
    const f = new Fetcher(new OutboundGuard({ allow: ['::1/128'] }), { retries: 0, timeoutMs: 3000 });
    const g = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8'] }), { retries: 0, timeoutMs: 3000 });
    try {
      const page = await f.fetch(`${srv.url}/`);
      assert.equal(page.text, '<p>v6</p>');
      assert.deepEqual(watch.connected, ['::1']);
      await assert.rejects(g.fetch(`${srv.url}/`), isForbidden(/::1 is a loopback address/));
    } finally {
      await f.close();
      await g.close();
      await srv.close();
    }
  });

  it('names that resolve inside are refused at connect time: the socket never connects', async () => {
    const hitsBefore = site.hits.size;
    const f = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8'], resolve: fakeResolve }), { retries: 2, timeoutMs: 2000 });
    try {
      for (const [host, why] of [['intranet.test', /private/], ['meta.test', /cloud metadata/], ['mixed.test', /mixed\.test: it resolves to a private/],
        ['metav6.test', /cloud metadata/], ['mapped.test', /private/]] as const) {
        const t0 = performance.now();
        await assert.rejects(f.fetch(`http://${host}:${site.port}/status/200/`), isForbidden(why), host);
        assert.ok(performance.now() - t0 < 500, 'a refusal is not retried');
      }
      // The sockets created for names were handed no address: none connected.
      assert.deepEqual(watch.connected, []);
      for (const s of watch.created) assert.equal(s.remoteAddress, undefined);
      assert.deepEqual(new Set(watch.attempts), new Set(['intranet.test', 'meta.test', 'mixed.test', 'metav6.test', 'mapped.test']));
      assert.equal(site.hits.size, hitsBefore);
      // A name that does not resolve is a fetch failure, not a refusal.
      await assert.rejects(f.fetch(`http://nowhere.test:${site.port}/`), { code: 'dns_failed', message: /nowhere\.test does not resolve/ });
    } finally {
      await f.close();
    }
  });

  it('the real localhost is refused without an allowlist, fetched with 127.0.0.0/8', async () => {
    const closedF = new Fetcher(new OutboundGuard(), { retries: 1, timeoutMs: 2000 });
    const openF = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8'] }), { retries: 0, timeoutMs: 2000 });
    try {
      await assert.rejects(closedF.fetch(`http://localhost:${site.port}/status/200/?via=localhost`), isForbidden(/Refused localhost: it resolves to a loopback address/));
      assert.deepEqual(watch.connected, []);
      assert.equal(site.hits.get('/status/200/?via=localhost'), undefined);
      const page = await openF.fetch(`http://localhost:${site.port}/status/200/?via=localhost`);
      assert.equal(page.url, `http://localhost:${site.port}/status/200/?via=localhost`);
      assert.deepEqual(watch.connected, ['127.0.0.1']);
    } finally {
      await closedF.close();
      await openF.close();
    }
  });

  it('the resolved address is pinned: one resolution per connection, a rebinding answer is refused', async () => {
    resolveCalls.delete('rebind.test');
    const guard = new OutboundGuard({ allow: ['127.0.0.0/8'], resolve: fakeResolve });
    // One connection per origin, so the second request surely waits for the first one's connection.
    const first = new Fetcher(guard, { retries: 0, timeoutMs: 2000, perHostConcurrency: 1 });
    const second = new Fetcher(guard, { retries: 0, timeoutMs: 2000 });
    try {
      const a = await first.fetch(`http://rebind.test:${site.port}/status/200/?rebind=1`);
      assert.equal(a.status, 200);
      assert.equal(resolveCalls.get('rebind.test'), 1, 'resolved once, by the socket itself');
      const b = await first.fetch(`http://rebind.test:${site.port}/status/200/?rebind=2`); // the same keep-alive connection
      assert.equal(b.status, 200);
      assert.equal(resolveCalls.get('rebind.test'), 1, 'the open connection keeps its checked address');
      assert.deepEqual(watch.connected, ['127.0.0.1']);
      // A new connection resolves again; the name now points inside and is refused before connecting.
      await assert.rejects(second.fetch(`http://rebind.test:${site.port}/status/200/?rebind=3`), isForbidden(/rebind\.test: it resolves to a private/));
      assert.equal(resolveCalls.get('rebind.test'), 2);
      assert.deepEqual(watch.connected, ['127.0.0.1']);
      assert.equal(site.hits.get('/status/200/?rebind=3'), undefined);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('redirects into private ranges, other notations, inside names and other schemes are refused at the hop', async () => {
    const f = new Fetcher(new OutboundGuard({ allow: ['127.0.0.0/8'], resolve: fakeResolve }), { retries: 2, timeoutMs: 2000 });
    const targets: Array<[string, RegExp]> = [
      ['http://10.1.2.3/', /10\.1\.2\.3 is a private/], ['http://10.1/admin', /10\.0\.0\.1 is a private/], ['http://192.168.1.1:8080/', /private/],
      ['http://172.20.0.1/', /private/], ['http://169.254.169.254/latest/meta-data/', /cloud metadata/], ['http://2852039166/', /cloud metadata/],
      ['http://0xa9.0xfe.0xa9.0xfe/', /cloud metadata/], ['http://[fd00:ec2::254]/latest/meta-data/', /cloud metadata/],
      ['http://[::ffff:10.0.0.1]/', /private/], ['http://[::ffff:a9fe:a9fe]/', /cloud metadata/], ['http://[::10.0.0.1]/', /IPv4-compatible/],
      ['http://[64:ff9b::a00:1]/', /NAT64/], ['http://[2002:a9fe:a9fe::]/', /6to4/], ['http://100.64.1.1/', /carrier-grade NAT/],
      ['http://0.0.0.0/', /unspecified/], ['http://[::]/', /unspecified/], ['http://[::1]/', /loopback/], ['http://224.0.0.251/', /multicast/],
      ['http://255.255.255.255/', /broadcast/], ['https://10.0.0.1/', /private/], ['//10.0.0.2/', /10\.0\.0\.2 is a private/],
      ['http://intranet.test/', /intranet\.test: it resolves to a private/], ['http://meta.test/', /cloud metadata/],
      ['file:///etc/passwd', /got file/], ['gopher://127.0.0.1:70/', /got gopher/], ['ftp://10.0.0.1/', /got ftp/], ['javascript:alert(1)', /got javascript/],
    ];
    try {
      for (const [i, [to, why]] of targets.entries()) {
        const code = [301, 302, 303, 307, 308][i % 5];
        const path = `/redirect/?to=${encodeURIComponent(to)}&code=${code}`;
        await assert.rejects(f.fetch(`${site.url}${path}`), isForbidden(why), to);
        assert.equal(site.hits.get(path), 1, 'not retried');
      }
      // Only the fixture site was connected to; the inside names got sockets that never connected.
      assert.ok(watch.attempts.every((h) => h === '127.0.0.1' || h === 'intranet.test' || h === 'meta.test'), watch.attempts.join());
      assert.ok(watch.connected.every((a) => a === '127.0.0.1'));
      // A redirect to the same site in another notation is followed.
      const ok = await f.fetch(`${site.url}/redirect/?to=${encodeURIComponent(`http://2130706433:${site.port}/status/200/?hop=decimal`)}`);
      assert.equal(ok.status, 200);
      assert.equal(ok.url, `http://127.0.0.1:${site.port}/status/200/?hop=decimal`);
    } finally {
      await f.close();
    }
  });
});
