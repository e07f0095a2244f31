/**
 * The DNS/WHOIS tool (lambdas/tools/dns-whois.ts, rdap.ts, whois.ts; docs/tools.md "dns-whois"), all on loopback:
 * - a DNS server (test/helpers/dns-server.ts, UDP and TCP) with a test zone: A, AAAA, CNAME, MX, NS, TXT (several
 *   character-strings, and one too large for UDP so the resolver must retry over TCP), SOA, CAA, PTR, NXDOMAIN;
 * - an RDAP server (node:http) answering `/domain/<name>` and `/ip/<address>` with RFC 9083 JSON, 404 otherwise;
 * - a port-43 WHOIS server with an ICANN-format text answer for a TLD without RDAP, "No match" otherwise.
 * The guard is exercised on each kind of connection: a refused DNS server, a refused RDAP or WHOIS server address
 * (nothing reaches them), an RDAP server that is down, servers that never answer (the budget holds), an abort.
 * Every report is checked against dnsWhoisLookupSchema with ajv in strict mode. The parsers (WHOIS text formats,
 * dates, EPP status, the bootstrap's longest match) and the bundled snapshot have their own cases.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { Ajv } from 'ajv';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import {
  checkDnsServers, dnsWhoisLookupSchema, lookupDnsWhois, type DnsWhoisOptions, type DnsWhoisReport, type RdapBootstrap,
} from '../../lambdas/tools/dns-whois.ts';
import { BUNDLED_RDAP_BOOTSTRAP, eppStatus, rdapBaseForAddress, rdapBaseForDomain, readRdapObject } from '../../lambdas/tools/rdap.ts';
import { isWhoisNotFound, parseWhois, whoisDate } from '../../lambdas/tools/whois.ts';
import { startDnsServer, type DnsTestServer } from '../helpers/dns-server.ts';
import { listen, since, watchSockets, type LocalServer, type SocketWatch } from './net-helpers.ts';

const validate = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true }).compile(dnsWhoisLookupSchema);

function valid(r: DnsWhoisReport): DnsWhoisReport {
  assert.ok(validate(r), JSON.stringify(validate.errors));
  return r;
}

// ---- the test zone ----

/** 12 strings of 250 bytes: 3,000+ bytes, above any UDP payload size c-ares advertises. */
const BIG_TXT = Array.from({ length: 12 }, (_, i) => `part${String(i).padStart(2, '0')}-${'k'.repeat(243)}`);
const SPF = ['v=spf1 include:_spf.mail.example.com ', 'include:_spf.other.example.net ~all'];

const ZONE = {
  'example.com': [
    { type: 'A', ttl: 300, data: '192.0.2.10' },
    { type: 'A', ttl: 300, data: '192.0.2.11' },
    { type: 'AAAA', ttl: 120, data: '2001:db8::10' },
    { type: 'MX', ttl: 3600, data: { preference: 20, exchange: 'MX2.Example.com' } },
    { type: 'MX', ttl: 3600, data: { preference: 10, exchange: 'mx1.example.com' } },
    { type: 'NS', ttl: 86400, data: 'ns2.example.net' },
    { type: 'NS', ttl: 86400, data: 'ns1.example.net' },
    { type: 'TXT', ttl: 300, data: [...SPF] }, // dns-packet turns the strings of its input into Buffers: copies
    { type: 'TXT', ttl: 300, data: [...BIG_TXT] },
    { type: 'SOA', ttl: 3600, data: { mname: 'ns1.example.net', rname: 'hostmaster.example.com', serial: 2024091001, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 } },
    { type: 'CAA', ttl: 3600, data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
    { type: 'CAA', ttl: 3600, data: { flags: 128, tag: 'iodef', value: 'mailto:security@example.com' } },
  ],
  'www.example.com': [{ type: 'CNAME', ttl: 600, data: 'example.com' }],
  'dangling.example.com': [{ type: 'CNAME', ttl: 600, data: 'gone.example.org' }],
  'mixed.example.com': [{ type: 'A', ttl: 60, data: '10.1.2.3' }, { type: 'A', ttl: 60, data: '192.0.2.10' }],
  '3.2.1.10.in-addr.arpa': [{ type: 'PTR', ttl: 300, data: 'ip-10-1-2-3.ec2.internal' }],
  'example.io': [{ type: 'A', ttl: 300, data: '198.51.100.7' }, { type: 'NS', ttl: 300, data: 'ns1.example.net' }],
  'unregistered.com': [],
  'free.io': [],
  '10.2.0.192.in-addr.arpa': [{ type: 'PTR', ttl: 300, data: 'web1.example.com' }],
  // 192.0.2.11 has no PTR record.
  '0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa': [{ type: 'PTR', ttl: 300, data: 'Web6.Example.com.' }],
  '7.100.51.198.in-addr.arpa': [{ type: 'PTR', ttl: 300, data: 'io-host.example.net' }],
} as const;

// ---- the RDAP server (RFC 9083 answers) ----

/** Modelled on a Verisign .com answer: a nested abuse entity, four events, DS data, upper-case name server names. */
const RDAP_EXAMPLE_COM = {
  objectClassName: 'domain',
  handle: '2336799_DOMAIN_COM-VRSN',
  ldhName: 'EXAMPLE.COM',
  links: [{ value: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM', rel: 'self', href: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM', type: 'application/rdap+json' }],
  status: ['client delete prohibited', 'client transfer prohibited', 'client update prohibited'],
  entities: [{
    objectClassName: 'entity',
    handle: '1234',
    roles: ['registrar'],
    publicIds: [{ type: 'IANA Registrar ID', identifier: '1234' }],
    vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'Example Registrar, Inc.']]],
    entities: [{
      objectClassName: 'entity',
      roles: ['abuse'],
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', ''], ['tel', { type: 'voice' }, 'uri', 'tel:+1.5555550100'], ['email', {}, 'text', 'abuse@registrar.example']]],
    }],
  }],
  events: [
    { eventAction: 'registration', eventDate: '1995-08-14T04:00:00Z' },
    { eventAction: 'expiration', eventDate: '2026-08-13T04:00:00Z' },
    { eventAction: 'last changed', eventDate: '2025-08-14T07:01:39Z' },
    { eventAction: 'last update of RDAP database', eventDate: '2025-11-20T10:22:16Z' },
  ],
  secureDNS: { delegationSigned: true, dsData: [{ keyTag: 370, algorithm: 13, digestType: 2, digest: 'BE74359954660069D5C63D200C39F5603827D7DD02B56F120EE9F3A86764247C' }] },
  nameservers: [{ objectClassName: 'nameserver', ldhName: 'NS1.EXAMPLE.NET' }, { objectClassName: 'nameserver', ldhName: 'NS2.EXAMPLE.NET' }],
  rdapConformance: ['rdap_level_0', 'icann_rdap_technical_implementation_guide_1', 'icann_rdap_response_profile_1'],
  notices: [{ title: 'Terms of Service', description: ['Service subject to Terms of Use.'] }],
};

/** Modelled on an ARIN ip network answer, with the cidr0 extension and the registrant as a nested organisation. */
const RDAP_NETWORK = {
  objectClassName: 'ip network',
  handle: 'NET-192-0-2-0-1',
  startAddress: '192.0.2.0',
  endAddress: '192.0.2.255',
  ipVersion: 'v4',
  name: 'TEST-NET-1',
  type: 'IANA Special Use',
  country: 'US',
  parentHandle: 'NET-192-0-0-0-0',
  cidr0_cidrs: [{ v4prefix: '192.0.2.0', length: 24 }],
  status: ['active'],
  events: [{ eventAction: 'registration', eventDate: '2010-01-01T00:00:00-05:00' }, { eventAction: 'last changed', eventDate: '2013-08-27T16:32:40-04:00' }],
  entities: [{ objectClassName: 'entity', handle: 'IANA', roles: ['registrant'], vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'Internet Assigned Numbers Authority'], ['kind', {}, 'text', 'org']]] }],
};

interface Rdap extends LocalServer {
  requests: Array<{ path: string; accept: string }>;
}

async function startRdap(host = '127.0.0.1', hang = false): Promise<Rdap> {
  const requests: Rdap['requests'] = [];
  const server = await listen((req, res) => {
    requests.push({ path: req.url ?? '', accept: String(req.headers.accept ?? '') });
    if (hang) return; // never answers
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/rdap+json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/rdap/domain/example.com') return send(200, RDAP_EXAMPLE_COM);
    if (req.url === '/rdap/ip/192.0.2.10') return send(200, RDAP_NETWORK);
    if (req.url === '/rdap/domain/not-json.com') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<html>maintenance</html>');
    }
    send(404, { errorCode: 404, title: 'Not Found', description: ['The object does not exist.'] });
  }, host);
  return Object.assign(server, { requests });
}

// ---- the WHOIS server (RFC 3912) ----

const WHOIS_EXAMPLE_IO = `Domain Name: example.io
Registry Domain ID: REDACTED
Registrar WHOIS Server: whois.registrar.example
Registrar URL: http://www.registrar.example
Updated Date: 2024-03-01T12:34:56Z
Creation Date: 2010-06-30T08:00:00Z
Registry Expiry Date: 2026-06-30T08:00:00Z
Registrar: Example Registrar, LLC
Registrar IANA ID: 9999
Registrar Abuse Contact Email: abuse@registrar.example
Registrar Abuse Contact Phone: +1.5555550100
Domain Status: clientDeleteProhibited https://icann.org/epp#clientDeleteProhibited
Domain Status: clientTransferProhibited https://icann.org/epp#clientTransferProhibited
Registry Registrant ID: REDACTED
Registrant Organization: Example Org
Registrant State/Province: CA
Registrant Country: US
Name Server: NS1.EXAMPLE.NET
Name Server: NS2.EXAMPLE.NET
DNSSEC: unsigned
URL of the ICANN Whois Inaccuracy Complaint Form: https://www.icann.org/wicf/
>>> Last update of WHOIS database: 2025-11-20T10:00:00Z <<<

For more information on Whois status codes, please visit https://icann.org/epp

Terms of Use: Access to WHOIS information is provided to assist persons in determining the contents of a domain name registration record.
`;

interface Whois {
  port: number;
  host: string;
  queries: string[];
  connections: number;
  close(): Promise<void>;
}

async function startWhois(host = '127.0.0.1', hang = false): Promise<Whois> {
  const queries: string[] = [];
  const sockets = new Set<net.Socket>();
  let connections = 0;
  // allowHalfOpen: a server that hangs must not answer the client's end of writing by closing.
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let got = '';
    socket.on('data', (chunk) => {
      got += chunk.toString('utf8');
      if (!got.includes('\r\n') || hang) return;
      const q = got.split('\r\n')[0]!;
      queries.push(q);
      // Answers in CRLF lines, as registries send them.
      socket.end((q === 'example.io' ? WHOIS_EXAMPLE_IO : `NOT FOUND\n>>> Last update of WHOIS database: 2025-11-20T10:00:00Z <<<\n`).replace(/\n/g, '\r\n'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    host,
    queries,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** A test bootstrap: .com and 192.0.2.0/24 to the local RDAP server; no WHOIS map (the override gives it). */
function bootstrapFor(rdapUrl: string): RdapBootstrap {
  return {
    dns: { publication: '2025-11-06T23:00:01Z', version: '1.0', services: [[['com', 'net'], [`${rdapUrl}/rdap/`]]] },
    ipv4: { publication: '2019-06-07T19:00:02Z', version: '1.0', services: [[['192.0.2.0/24'], [`${rdapUrl}/rdap/`]]] },
    ipv6: { publication: '2024-11-01T22:00:01Z', version: '1.0', services: [] },
    whois: { servers: {} },
  };
}

describe('dns-whois: lookups against loopback DNS, RDAP and WHOIS servers', () => {
  let dns: DnsTestServer;
  let rdap: Rdap;
  let whois: Whois;
  let watch: SocketWatch;
  // Loopback for the servers; the documentation ranges (RFC 5737, RFC 3849) of the zone's addresses so that their
  // reverse names are looked up, as an allowlist does in local development.
  const guard = new OutboundGuard({ allow: ['127.0.0.0/8', '192.0.2.0/24', '198.51.100.0/24', '2001:db8::/32'] });
  let options: DnsWhoisOptions;

  before(async () => {
    dns = await startDnsServer({ zone: ZONE as never, soaOwner: 'example.com' });
    rdap = await startRdap();
    whois = await startWhois();
    options = {
      guard,
      servers: [dns.address],
      bootstrap: bootstrapFor(rdap.url),
      whoisServer: (tld) => (tld === 'io' ? { host: '127.0.0.1', port: whois.port } : null),
      timeoutMs: 5_000,
    };
    watch = watchSockets();
  });
  after(async () => {
    watch.stop();
    await Promise.all([dns.close(), rdap.close(), whois.close()]);
  });

  it('reports every record type of a name, TTLs, reverse names and RDAP registration data', async () => {
    dns.queries.length = 0;
    rdap.requests.length = 0;
    const r = valid(await lookupDnsWhois('Example.COM.', options));
    assert.equal(r.host, 'example.com');
    assert.equal(r.host_type, 'name');
    assert.equal(r.domain, 'example.com');
    assert.equal(r.error, null);
    assert.deepEqual(r.dns_errors, []);
    assert.deepEqual(r.dns.A?.map((a) => a.address).sort(), ['192.0.2.10', '192.0.2.11']);
    assert.ok(r.dns.A?.every((a) => a.ttl === 300));
    assert.deepEqual(r.dns.AAAA, [{ address: '2001:db8::10', ttl: 120 }]);
    assert.equal(r.dns.CNAME, undefined, 'no CNAME at the apex');
    assert.deepEqual(r.dns.MX, [{ exchange: 'mx1.example.com', priority: 10 }, { exchange: 'mx2.example.com', priority: 20 }]);
    assert.deepEqual(r.dns.NS, ['ns1.example.net', 'ns2.example.net']);
    const spf = r.dns.TXT?.find((t) => t.value.startsWith('v=spf1'));
    assert.deepEqual(spf, { value: SPF.join(''), strings: SPF });
    const big = r.dns.TXT?.find((t) => t.value.startsWith('part00'));
    assert.deepEqual(big?.strings, BIG_TXT, 'the large TXT record arrives whole');
    assert.ok(dns.queries.some((q) => q.transport === 'tcp' && q.type === 'TXT'), 'the truncated UDP answer was retried over TCP');
    assert.deepEqual(r.dns.SOA, { nsname: 'ns1.example.net', hostmaster: 'hostmaster.example.com', serial: 2024091001, refresh: 7200, retry: 900, expire: 1209600, minttl: 300 });
    assert.deepEqual(r.dns.CAA?.sort((a, b) => a.tag.localeCompare(b.tag)), [
      { flags: 128, critical: true, tag: 'iodef', value: 'mailto:security@example.com' },
      { flags: 0, critical: false, tag: 'issue', value: 'letsencrypt.org' },
    ]);
    const ips = Object.fromEntries(r.ips.map((i) => [i.address, i]));
    assert.deepEqual(ips['192.0.2.10'], { address: '192.0.2.10', family: 4, reverse: ['web1.example.com'], error: null });
    assert.deepEqual(ips['192.0.2.11'], { address: '192.0.2.11', family: 4, reverse: [], error: null }, 'no PTR is not an error');
    assert.deepEqual(ips['2001:db8::10'], { address: '2001:db8::10', family: 6, reverse: ['web6.example.com'], error: null });

    assert.deepEqual(r.whois, {
      source: 'rdap',
      url: `${rdap.url}/rdap/domain/example.com`,
      registrar: 'Example Registrar, Inc.',
      registrar_iana_id: '1234',
      created: '1995-08-14T04:00:00Z',
      updated: '2025-08-14T07:01:39Z',
      expires: '2026-08-13T04:00:00Z',
      status: ['clientDeleteProhibited', 'clientTransferProhibited', 'clientUpdateProhibited'],
      nameservers: ['ns1.example.net', 'ns2.example.net'],
      dnssec: true,
      network: null,
      raw: null,
      error: null,
    });
    assert.deepEqual(rdap.requests.map((q) => q.path), ['/rdap/domain/example.com']);
    assert.match(rdap.requests[0]!.accept, /application\/rdap\+json/);
    watch.assertLoopbackOnly();
  });

  it('looks up a subdomain as given and asks RDAP about its registered domain', async () => {
    rdap.requests.length = 0;
    const r = valid(await lookupDnsWhois('www.example.com', options));
    assert.equal(r.domain, 'example.com');
    assert.deepEqual(r.dns.CNAME, ['example.com']);
    assert.deepEqual(r.dns.A?.map((a) => a.address).sort(), ['192.0.2.10', '192.0.2.11'], 'the addresses at the end of the CNAME');
    assert.deepEqual(rdap.requests.map((q) => q.path), ['/rdap/domain/example.com']);
    assert.equal(r.whois.registrar, 'Example Registrar, Inc.');
  });

  it('reports a name that does not exist as a finding: dns {} and NXDOMAIN, the registration still looked up', async () => {
    const r = valid(await lookupDnsWhois('nope.example.com', options));
    assert.deepEqual(r.dns, {});
    assert.equal(r.error?.code, 'NXDOMAIN');
    assert.match(r.error!.message, /nope\.example\.com does not exist/);
    assert.deepEqual(r.ips, []);
    assert.equal(r.whois.source, 'rdap');
    assert.equal(r.whois.registrar, 'Example Registrar, Inc.');
  });

  it('reports a domain the registry does not have: RDAP 404 is whois.error not_found', async () => {
    const r = valid(await lookupDnsWhois('unregistered.com', options));
    assert.equal(r.error, null, 'the name exists in the test zone (no records)');
    assert.deepEqual(r.dns, {});
    assert.equal(r.whois.source, 'rdap');
    assert.equal(r.whois.error?.code, 'not_found');
    assert.equal(r.whois.registrar, null);
    assert.equal(r.whois.url, `${rdap.url}/rdap/domain/unregistered.com`);
  });

  it('keeps the CNAME of a name whose target does not exist, with the failed types in dns_errors', async () => {
    const r = valid(await lookupDnsWhois('dangling.example.com', options));
    assert.equal(r.error, null);
    assert.deepEqual(r.dns.CNAME, ['gone.example.org']);
    assert.ok(r.dns_errors.some((e) => e.type === 'A' && e.code === 'NXDOMAIN'), JSON.stringify(r.dns_errors));
  });

  it('answers a body that is not RDAP JSON with whois.error bad_response', async () => {
    const r = valid(await lookupDnsWhois('not-json.com', options));
    assert.equal(r.whois.source, 'rdap');
    assert.equal(r.whois.error?.code, 'bad_response');
  });

  it('falls back to port-43 WHOIS for a TLD without RDAP and parses the ICANN format', async () => {
    const before = whois.queries.length;
    const r = valid(await lookupDnsWhois('www.example.io', options));
    assert.deepEqual(whois.queries.slice(before), ['example.io'], 'one query, for the registered domain');
    assert.equal(r.whois.source, 'whois');
    assert.equal(r.whois.url, `whois://127.0.0.1:${whois.port}/example.io`);
    assert.equal(r.whois.registrar, 'Example Registrar, LLC');
    assert.equal(r.whois.registrar_iana_id, '9999');
    assert.equal(r.whois.created, '2010-06-30T08:00:00Z');
    assert.equal(r.whois.updated, '2024-03-01T12:34:56Z');
    assert.equal(r.whois.expires, '2026-06-30T08:00:00Z');
    assert.deepEqual(r.whois.status, ['clientDeleteProhibited', 'clientTransferProhibited']);
    assert.deepEqual(r.whois.nameservers, ['ns1.example.net', 'ns2.example.net']);
    assert.equal(r.whois.dnssec, false);
    assert.ok(r.whois.raw?.includes('Registry Expiry Date: 2026-06-30T08:00:00Z'));
    assert.ok(!r.whois.raw?.includes('\r'), 'CRLF read as LF');
    assert.equal(r.whois.error, null);
    assert.equal(r.error?.code, 'NXDOMAIN', 'www.example.io is not in the test zone');
  });

  it('reports a WHOIS "NOT FOUND" as not_found', async () => {
    const r = valid(await lookupDnsWhois('free.io', options));
    assert.equal(r.whois.source, 'whois');
    assert.equal(r.whois.error?.code, 'not_found');
    assert.equal(r.whois.registrar, null);
  });

  it('says when no RDAP or WHOIS service is known, and when the host has no registered domain', async () => {
    const noService = valid(await lookupDnsWhois('example.org', options));
    assert.equal(noService.whois.error?.code, 'no_service');
    assert.equal(noService.whois.url, null);
    for (const host of ['co.uk', 'com']) {
      const r = valid(await lookupDnsWhois(host, options));
      assert.equal(r.domain, null, host);
      assert.equal(r.whois.error?.code, 'no_domain', host);
    }
  });

  it('does not look up names outside the public DNS, nor the reverse names of private addresses', async () => {
    dns.queries.length = 0;
    for (const host of ['intranet.corp-not-a-tld', 'localhost', 'metadata.google.internal', 'printer.local', 'nas']) {
      const r = valid(await lookupDnsWhois(host, options));
      assert.deepEqual(r.dns, {}, host);
      assert.equal(r.error?.code, 'NOT_PUBLIC', host);
      assert.equal(r.domain, null, host);
      assert.equal(r.whois.error?.code, 'no_domain', host);
    }
    assert.equal(dns.queries.length, 0, 'no query was sent for them');
    const r = valid(await lookupDnsWhois('mixed.example.com', options));
    const ips = Object.fromEntries(r.ips.map((i) => [i.address, i]));
    assert.equal(ips['10.1.2.3']?.error?.code, 'NOT_PUBLIC');
    assert.deepEqual(ips['10.1.2.3']?.reverse, [], 'the inside name is not asked for');
    assert.deepEqual(ips['192.0.2.10']?.reverse, ['web1.example.com']);
    assert.ok(!dns.queries.some((q) => q.name === '3.2.1.10.in-addr.arpa'));
    assert.deepEqual(r.dns.A?.map((a) => a.address).sort(), ['10.1.2.3', '192.0.2.10'], 'the A records themselves are reported');
  });

  it('reports an IPv4 literal with its reverse name and the RDAP data of its network', async () => {
    rdap.requests.length = 0;
    const r = valid(await lookupDnsWhois('192.0.2.10', options));
    assert.equal(r.host_type, 'ipv4');
    assert.equal(r.domain, null);
    assert.deepEqual(r.dns, {});
    assert.deepEqual(r.ips, [{ address: '192.0.2.10', family: 4, reverse: ['web1.example.com'], error: null }]);
    assert.deepEqual(rdap.requests.map((q) => q.path), ['/rdap/ip/192.0.2.10']);
    assert.equal(r.whois.source, 'rdap');
    assert.deepEqual(r.whois.network, {
      handle: 'NET-192-0-2-0-1', name: 'TEST-NET-1', start_address: '192.0.2.0', end_address: '192.0.2.255',
      cidrs: ['192.0.2.0/24'], country: 'US', type: 'IANA Special Use', holder: 'Internet Assigned Numbers Authority',
    });
    assert.equal(r.whois.created, '2010-01-01T05:00:00Z', 'RFC 3339 offsets become UTC');
    assert.deepEqual(r.whois.status, ['ok']);
  });

  it('reports an IPv6 literal in brackets; no RDAP service for it is no_service', async () => {
    const r = valid(await lookupDnsWhois('[2001:DB8::10]', options));
    assert.equal(r.host, '2001:db8::10');
    assert.equal(r.host_type, 'ipv6');
    assert.deepEqual(r.ips[0]?.reverse, ['web6.example.com']);
    assert.equal(r.whois.error?.code, 'no_service');
  });

  it('rejects a host that is neither a name nor an address', async () => {
    for (const bad of ['', 'exa mple.com', 'a..b', `${'a'.repeat(64)}.com`, '-x.com']) {
      await assert.rejects(lookupDnsWhois(bad, options), (e: { code?: string }) => e.code === 'invalid_url', bad);
    }
  });

  it('reports per-type failures while the other types answer', async () => {
    const partial = await startDnsServer({ zone: ZONE as never, failTypes: ['CAA', 'TXT'] });
    try {
      const r = valid(await lookupDnsWhois('example.com', { ...options, servers: [partial.address] }));
      assert.equal(r.error, null);
      assert.ok(r.dns.A?.length);
      assert.equal(r.dns.CAA, undefined);
      assert.deepEqual(r.dns_errors.map((e) => `${e.type}:${e.code}`).sort(), ['CAA:SERVFAIL', 'TXT:SERVFAIL']);
    } finally {
      await partial.close();
    }
  });

  it('reports a server that refuses or fails every query as the name-level error', async () => {
    for (const mode of ['servfail', 'refused'] as const) {
      const bad = await startDnsServer({ zone: ZONE as never, mode });
      try {
        const r = valid(await lookupDnsWhois('example.com', { ...options, servers: [bad.address] }));
        assert.deepEqual(r.dns, {});
        assert.equal(r.error?.code, mode === 'servfail' ? 'SERVFAIL' : 'REFUSED');
        assert.equal(r.whois.source, 'rdap', 'the registration does not depend on DNS');
      } finally {
        await bad.close();
      }
    }
  });
});

describe('dns-whois: the outbound guard and failures', () => {
  let dns: DnsTestServer;
  before(async () => {
    dns = await startDnsServer({ zone: ZONE as never });
  });
  after(() => dns.close());

  it('refuses DNS servers the guard refuses before any query: loopback, private, metadata', async () => {
    const strict = new OutboundGuard();
    dns.queries.length = 0;
    await assert.rejects(lookupDnsWhois('example.com', { guard: strict, servers: [dns.address], bootstrap: bootstrapFor('http://127.0.0.1:9') }),
      (e: { code?: string; message: string }) => e.code === 'target_forbidden' && /127\.0\.0\.1 is a loopback address/.test(e.message));
    assert.equal(dns.queries.length, 0, 'the refused server got no query');
    for (const [server, kind] of [['10.0.0.2', 'private'], ['169.254.169.254:53', 'cloud metadata'], ['[fd00:ec2::254]:53', 'metadata'], ['[::1]', 'loopback']]) {
      assert.throws(() => checkDnsServers(strict, [server!]), (e: { code?: string; message: string }) => e.code === 'target_forbidden' && e.message.includes(kind!), server);
    }
    assert.deepEqual(checkDnsServers(strict, ['9.9.9.9', '1.1.1.1:53', '[2620:fe::fe]:53', '2620:fe::9']), ['9.9.9.9', '1.1.1.1:53', '[2620:fe::fe]:53', '2620:fe::9']);
    assert.deepEqual(checkDnsServers(new OutboundGuard({ allow: ['127.0.0.1/32'] }), ['127.0.0.1:53']), ['127.0.0.1:53'], 'the allowlist permits it');
  });

  it('rejects DNS servers that are not addresses', () => {
    for (const bad of ['dns.google', '1.1.1.1:0', '1.1.1.1:99999', '[1.1.1.1]:53', 'http://1.1.1.1', '']) {
      assert.throws(() => checkDnsServers(new OutboundGuard(), [bad]), (e: { code?: string; details?: Array<{ path?: string }> }) =>
        e.code === 'invalid_request' && e.details?.[0]?.path === 'servers[0]', bad);
    }
  });

  it('sends the RDAP request through the guard: a refused server address gets no connection', async () => {
    const rdap = await startRdap('127.0.0.2');
    try {
      const guard = new OutboundGuard({ allow: ['127.0.0.1/32'] }); // the DNS server, not the RDAP server
      const r = valid(await lookupDnsWhois('example.com', { guard, servers: [dns.address], bootstrap: bootstrapFor(rdap.url), timeoutMs: 5_000 }));
      assert.equal(r.whois.error?.code, 'forbidden');
      assert.match(r.whois.error!.message, /127\.0\.0\.2 is a loopback address/);
      assert.equal(rdap.requests.length, 0);
      assert.ok(r.dns.A?.length, 'DNS still reported');
    } finally {
      await rdap.close();
    }
  });

  it('connects to the WHOIS server through the guard: a refused address gets no connection', async () => {
    const whois = await startWhois('127.0.0.2');
    try {
      const guard = new OutboundGuard({ allow: ['127.0.0.1/32'] });
      const r = valid(await lookupDnsWhois('example.io', {
        guard, servers: [dns.address], bootstrap: bootstrapFor('http://127.0.0.1:9'), whoisServer: () => ({ host: '127.0.0.2', port: whois.port }), timeoutMs: 5_000,
      }));
      assert.equal(r.whois.error?.code, 'forbidden');
      assert.equal(whois.connections, 0);
      // A WHOIS server given by name is resolved by guard.lookup: this one resolves to a refused address.
      const byName = valid(await lookupDnsWhois('example.io', {
        guard: new OutboundGuard({ allow: ['127.0.0.1/32'], resolve: async () => [{ address: '127.0.0.2', family: 4 }] }), servers: [dns.address],
        bootstrap: bootstrapFor('http://127.0.0.1:9'), whoisServer: () => ({ host: 'whois.nic.test', port: whois.port }), timeoutMs: 1_000,
      }));
      assert.equal(byName.whois.error?.code, 'forbidden');
      assert.equal(whois.connections, 0);
    } finally {
      await whois.close();
    }
  });

  it('reports an RDAP server that is down as whois.error unreachable, with DNS still reported', async () => {
    const gone = await startRdap();
    const url = gone.url;
    await gone.close();
    const r = valid(await lookupDnsWhois('example.com', { guard: new OutboundGuard({ allow: ['127.0.0.0/8'] }), servers: [dns.address], bootstrap: bootstrapFor(url), timeoutMs: 5_000 }));
    assert.equal(r.whois.source, null);
    assert.equal(r.whois.error?.code, 'unreachable');
    assert.match(r.whois.error!.message, /ECONNREFUSED|refused/i);
    assert.equal(r.whois.url, `${url}/rdap/domain/example.com`);
    assert.ok(r.dns.MX?.length, 'DNS still reported');
  });

  it('holds its time budget when nothing answers: DNS TIMEOUT, whois timeout', async () => {
    const silent = await startDnsServer({ zone: ZONE as never, mode: 'silent' });
    const rdap = await startRdap('127.0.0.1', true);
    try {
      const t0 = performance.now();
      const r = valid(await lookupDnsWhois('example.com', {
        guard: new OutboundGuard({ allow: ['127.0.0.0/8'] }), servers: [silent.address], bootstrap: bootstrapFor(rdap.url), timeoutMs: 1_500,
      }));
      const took = since(t0);
      assert.ok(took >= 1_000 && took < 3_000, `took ${Math.round(took)} ms for a 1,500 ms budget`);
      assert.deepEqual(r.dns, {});
      assert.equal(r.error?.code, 'TIMEOUT');
      assert.equal(r.whois.error?.code, 'timeout');
      assert.ok(silent.queries.length > 0 && rdap.requests.length > 0, 'both were asked');
    } finally {
      await Promise.all([silent.close(), rdap.close()]);
    }
  });

  it('holds its time budget against a WHOIS server that never answers', async () => {
    const whois = await startWhois('127.0.0.1', true);
    try {
      const t0 = performance.now();
      const r = valid(await lookupDnsWhois('example.io', {
        guard: new OutboundGuard({ allow: ['127.0.0.0/8'] }), servers: [dns.address], bootstrap: bootstrapFor('http://127.0.0.1:9'),
        whoisServer: () => ({ host: '127.0.0.1', port: whois.port }), timeoutMs: 1_200,
      }));
      assert.ok(since(t0) < 2_500);
      assert.equal(r.whois.error?.code, 'timeout');
      assert.deepEqual(r.dns.A, [{ address: '198.51.100.7', ttl: 300 }], 'DNS answered within the budget');
    } finally {
      await whois.close();
    }
  });

  it("rejects with the caller's reason when its signal aborts", async () => {
    const silent = await startDnsServer({ zone: ZONE as never, mode: 'silent' });
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('caller gave up')), 200);
      const t0 = performance.now();
      await assert.rejects(lookupDnsWhois('example.com', {
        guard: new OutboundGuard({ allow: ['127.0.0.0/8'] }), servers: [silent.address], bootstrap: bootstrapFor('http://127.0.0.1:9'), signal: controller.signal, timeoutMs: 10_000,
      }), /caller gave up/);
      assert.ok(since(t0) < 1_500);
    } finally {
      await silent.close();
    }
  });
});

describe('dns-whois: parsing', () => {
  it('maps RDAP status words to EPP values (RFC 8056)', () => {
    assert.equal(eppStatus('client transfer prohibited'), 'clientTransferProhibited');
    assert.equal(eppStatus('server hold'), 'serverHold');
    assert.equal(eppStatus('active'), 'ok');
    assert.equal(eppStatus('associated'), 'linked');
    assert.equal(eppStatus('pending delete'), 'pendingDelete');
    assert.equal(eppStatus('redemption period'), 'redemptionPeriod');
    assert.equal(eppStatus('clientHold'), 'clientHold', 'an EPP value stays');
  });

  it('reads WHOIS dates in the registries\' formats as ISO 8601', () => {
    const cases: Array<[string, string | null]> = [
      ['2024-01-17T10:36:34Z', '2024-01-17T10:36:34Z'],
      ['2024-01-17T10:36:34.0Z', '2024-01-17T10:36:34Z'],
      ['2024-01-17 10:36:34', '2024-01-17T10:36:34Z'],
      ['2023-04-12T10:11:12+02:00', '2023-04-12T08:11:12Z'],
      ['2024/01/17', '2024-01-17'],
      ['2024.01.17', '2024-01-17'],
      ['20240117 #12345', '2024-01-17'],
      ['17-Jan-2024', '2024-01-17'],
      ['05-Sep-1997 04:00:00 UTC', '1997-09-05T04:00:00Z'],
      ['17 January 2024', '2024-01-17'],
      ['17.01.2024', '2024-01-17'],
      ['before Aug-1996', null],
      ['2024-13-01', null],
      ['', null],
    ];
    for (const [input, expected] of cases) assert.equal(whoisDate(input), expected, input);
  });

  it('parses DENIC (.de): Nserver lines, Dnskey means signed, no registrar', () => {
    const text = `% Restricted rights.
%
% Terms and Conditions of Use
Domain: example.de
Nserver: ns1.example.net
Nserver: ns2.example.net. 192.0.2.53
Dnskey: 257 3 8 AwEAAdjVFKmT6XZaPH7fGvIOCg==
Status: connect
Changed: 2023-04-12T10:11:12+02:00
`;
    assert.deepEqual(parseWhois(text), {
      registrar: null, registrar_iana_id: null, created: null, updated: '2023-04-12T08:11:12Z', expires: null,
      status: ['connect'], nameservers: ['ns1.example.net', 'ns2.example.net'], dnssec: true,
    });
    assert.equal(isWhoisNotFound(text), false);
    assert.equal(isWhoisNotFound('Domain: free-name.de\nStatus: free\n'), true);
  });

  it('parses Nominet (.uk): indented sections, the registrar on the line below its heading', () => {
    const text = `
    Domain name:
        example.co.uk

    Registrar:
        Example Registrar Ltd t/a Example [Tag = EXAMPLE]
        URL: https://www.registrar.example

    Relevant dates:
        Registered on: 26-Aug-1996
        Expiry date:  26-Aug-2026
        Last updated:  10-Jul-2025

    Registration status:
        Registered until expiry date.

    Name servers:
        ns1.example.net
        ns2.example.net   192.0.2.53

    WHOIS lookup made at 10:00:00 20-Nov-2025
`;
    const d = parseWhois(text)!;
    assert.equal(d.registrar, 'Example Registrar Ltd t/a Example [Tag = EXAMPLE]');
    assert.equal(d.created, '1996-08-26');
    assert.equal(d.expires, '2026-08-26');
    assert.equal(d.updated, '2025-07-10');
    assert.deepEqual(d.nameservers, ['ns1.example.net', 'ns2.example.net']);
    assert.deepEqual(d.status, ['Registered until expiry date.']);
  });

  it('parses JPRS (.jp) bracketed keys and .ru keys', () => {
    const jp = `[ JPRS database provides information on network administration. ]
Domain Information:
a. [Domain Name]                EXAMPLE.JP
g. [Name Server]                ns1.example.jp
g. [Name Server]                ns2.example.jp
[Created on]                    2001/02/03
[Expires on]                    2026/02/28
[Status]                        Active
[Last Updated]                  2025/03/01 01:05:03 (JST)
`;
    const j = parseWhois(jp)!;
    assert.equal(j.created, '2001-02-03');
    assert.equal(j.expires, '2026-02-28');
    assert.deepEqual(j.status, ['Active']);
    const ru = `domain:        EXAMPLE.RU
nserver:       ns1.example.ru.
nserver:       ns2.example.ru.
state:         REGISTERED, DELEGATED, VERIFIED
org:           Example LLC
registrar:     RU-CENTER-RU
created:       1999-03-17T21:00:00Z
paid-till:     2026-03-31T21:00:00Z
free-date:     2026-05-02
source:        TCI
`;
    assert.deepEqual(parseWhois(ru), {
      registrar: 'RU-CENTER-RU', registrar_iana_id: null, created: '1999-03-17T21:00:00Z', updated: null, expires: '2026-03-31T21:00:00Z',
      status: ['REGISTERED', 'DELEGATED', 'VERIFIED'], nameservers: ['ns1.example.ru', 'ns2.example.ru'], dnssec: null,
    });
  });

  it('returns null for text without registration fields, and reads the common not-found answers', () => {
    assert.equal(parseWhois(''), null);
    assert.equal(parseWhois('Query rate limit exceeded. Try again later.\n'), null);
    assert.equal(parseWhois('\u0000\u0001 binary'), null);
    for (const t of ['No match for "NOPE.COM".', 'NOT FOUND', '%% No entries found for the selected source(s).', 'The queried object does not exist: DOMAIN NOT FOUND']) {
      assert.equal(isWhoisNotFound(t), true, t);
    }
    assert.equal(isWhoisNotFound(WHOIS_EXAMPLE_IO), false);
  });

  it('reads a nested registrar, its IANA id as a number, and no secureDNS as null', () => {
    const d = readRdapObject({
      objectClassName: 'domain',
      entities: [{ roles: ['registrant'], entities: [{ roles: ['Registrar'], publicIds: [{ type: 'IANA Registrar ID', identifier: 146 }], vcardArray: ['vcard', [['org', {}, 'text', 'Nested Registrar']]] }] }],
      nameservers: [{ ldhName: 'ns1.example.net.' }, { ldhName: 'NS1.example.net' }],
      events: [{ eventAction: 'expiration', eventDate: 'not a date' }],
    });
    assert.equal(d.registrar, 'Nested Registrar');
    assert.equal(d.registrar_iana_id, '146');
    assert.deepEqual(d.nameservers, ['ns1.example.net']);
    assert.equal(d.expires, null);
    assert.equal(d.dnssec, null);
    assert.deepEqual(readRdapObject('not an object').status, []);
  });
});

describe('dns-whois: the bootstrap', () => {
  it('picks the longest label match and prefers HTTPS (RFC 9224)', () => {
    const b: RdapBootstrap = {
      dns: {
        publication: '2025-01-01T00:00:00Z', version: '1.0',
        services: [[['uk'], ['http://uk.example/', 'https://uk.example/']], [['co.uk'], ['https://co-uk.example/rdap']], [['com'], ['http://com.example/']]],
      },
      ipv4: { publication: '', version: '1.0', services: [[['192.0.0.0/8'], ['https://wide.example/']], [['192.0.2.0/24'], ['https://narrow.example/']]] },
      ipv6: { publication: '', version: '1.0', services: [[['2001:db8::/32'], ['https://v6.example/']]] },
    };
    assert.equal(rdapBaseForDomain(b, 'www.example.co.uk'), 'https://co-uk.example/rdap/');
    assert.equal(rdapBaseForDomain(b, 'example.uk'), 'https://uk.example/');
    assert.equal(rdapBaseForDomain(b, 'example.com'), 'http://com.example/');
    assert.equal(rdapBaseForDomain(b, 'example.de'), null);
    assert.equal(rdapBaseForDomain(b, 'notcom'), null, 'labels, not string suffixes');
    assert.equal(rdapBaseForAddress(b, '192.0.2.7'), 'https://narrow.example/');
    assert.equal(rdapBaseForAddress(b, '192.168.0.1'), 'https://wide.example/');
    assert.equal(rdapBaseForAddress(b, '10.0.0.1'), null);
    assert.equal(rdapBaseForAddress(b, '2001:db8::1'), 'https://v6.example/');
    assert.equal(rdapBaseForAddress(b, 'nonsense'), null);
  });

  it('bundles IANA\'s registries with their publication dates, and WHOIS servers for TLDs without RDAP', () => {
    const b = BUNDLED_RDAP_BOOTSTRAP;
    for (const f of [b.dns, b.ipv4!, b.ipv6!]) {
      assert.match(f.publication, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      assert.equal(f.version, '1.0');
      for (const [entries, urls] of f.services) {
        assert.ok(entries.length > 0 && urls.length > 0);
        for (const u of urls) assert.match(u, /^https?:\/\/[^/]+/);
      }
    }
    assert.equal(rdapBaseForDomain(b, 'example.com'), 'https://rdap.verisign.com/com/v1/');
    assert.equal(rdapBaseForDomain(b, 'example.org'), 'https://rdap.publicinterestregistry.org/rdap/');
    assert.equal(rdapBaseForAddress(b, '8.8.8.8'), 'https://rdap.arin.net/registry/');
    assert.equal(rdapBaseForAddress(b, '193.0.6.139'), 'https://rdap.db.ripe.net/');
    assert.equal(b.whois?.servers.de, 'whois.denic.de');
    assert.equal(b.whois?.servers.jp, 'whois.jprs.jp');
    const withRdap = new Set(b.dns.services.flatMap(([e]) => e));
    assert.ok(withRdap.size > 1000);
    for (const tld of Object.keys(b.whois!.servers)) assert.ok(!withRdap.has(tld), `${tld} has RDAP and a WHOIS entry`);
    assert.match(b.about, /IANA/);
  });
});
