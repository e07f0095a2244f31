/**
 * The site tools over real HTTP on the local service (docs/spec.md, "Tool endpoints"; docs/tools.md): the broken-link checker on
 * a page of a loopback site (ok, broken, redirected, refused, guard-refused links), the SSL checker on local TLS
 * servers with certificates made at test time (a trusted chain, an expired one, a self-signed one), and DNS/WHOIS
 * against a local DNS server. The service trusts the test root CA through NODE_EXTRA_CA_CERTS, as an operator's
 * private CA would be trusted.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { Ajv } from 'ajv';
import { linksReportSchema } from '../../lambdas/tools/links.ts';
import { sslReportSchema } from '../../lambdas/tools/ssl.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dnsWhoisReportSchema } from '../../lambdas/tools/dns-whois.ts';
import { startDnsServer, type DnsTestServer } from '../helpers/dns-server.ts';
import { makeTlsFixtures, opensslFingerprint, type TlsFixtures } from '../helpers/tls-fixtures.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** A site whose home page links to good, broken and redirected pages and resources. */
async function startLinkSite(deadPort: number): Promise<{ url: string; close(): Promise<void> }> {
  let base = '';
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (status: number, body = '', headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (p === '/') {
      return send(200, `<!DOCTYPE html><html><head><title>Links</title><link rel="stylesheet" href="/style.css"></head><body>
<a href="/ok/">ok</a> <a href="/ok/#section">same page, a fragment</a> <a href="/missing/">missing</a> <a href="/error/">error</a>
<a href="/moved/">moved</a> <a href="/moved-away/">moved to a missing page</a> <img src="/logo.png" alt="logo">
<a href="http://127.0.0.1:${deadPort}/">refused</a> <a href="http://10.0.0.1/">private</a> <a href="mailto:info@example.com">mail</a>
</body></html>`);
    }
    if (p === '/ok/' || p === '/style.css' || p === '/logo.png') return send(200, 'ok');
    if (p === '/missing/') return send(404, 'not found');
    if (p === '/error/') return send(500, 'error');
    if (p === '/moved/') return send(301, '', { location: `${base}/ok/` });
    if (p === '/moved-away/') return send(302, '', { location: '/missing/' });
    send(404, 'not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return { url: base, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** A TLS server on loopback with a key and certificate (chain in `cert`). */
async function tlsServer(key: string, cert: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = tls.createServer({ key, cert }, (socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nStrict-Transport-Security: max-age=31536000; includeSubDomains\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

/** An RDAP server (RFC 9083) for .com on loopback, answering for example.com only. */
async function startRdapServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url?.toLowerCase() === '/rdap/domain/example.com') {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      res.end(JSON.stringify({
        objectClassName: 'domain', ldhName: 'EXAMPLE.COM', status: ['client transfer prohibited'],
        entities: [{ objectClassName: 'entity', roles: ['registrar'], vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'Example Registrar, Inc.']]] }],
        events: [{ eventAction: 'registration', eventDate: '1995-08-14T04:00:00Z' }, { eventAction: 'expiration', eventDate: '2026-08-13T04:00:00Z' }, { eventAction: 'last changed', eventDate: '2025-08-14T07:01:39Z' }],
        secureDNS: { delegationSigned: true },
        nameservers: [{ objectClassName: 'nameserver', ldhName: 'A.IANA-SERVERS.NET' }, { objectClassName: 'nameserver', ldhName: 'B.IANA-SERVERS.NET' }],
      }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/rdap+json' });
    res.end(JSON.stringify({ errorCode: 404, title: 'Not Found' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

describe('site tools over HTTP', () => {
  let svc: TestService;
  let api: ReturnType<typeof client>;
  let fx: TlsFixtures;
  let site: Awaited<ReturnType<typeof startLinkSite>>;
  let dns: DnsTestServer;
  let rdap: Awaited<ReturnType<typeof startRdapServer>>;
  const servers: Array<{ close(): Promise<void> }> = [];

  before(async () => {
    fx = await makeTlsFixtures();
    site = await startLinkSite(await closedPort());
    dns = await startDnsServer({
      zone: {
        'example.com': [
          { type: 'A', ttl: 300, data: '127.0.0.10' }, { type: 'AAAA', ttl: 300, data: '::1' },
          { type: 'MX', data: { preference: 10, exchange: 'mail.example.com' } },
          { type: 'NS', data: 'a.iana-servers.net' }, { type: 'TXT', data: ['v=spf1 -all'] },
          { type: 'SOA', data: { mname: 'ns.icann.org', rname: 'noc.dns.icann.org', serial: 2025082048, refresh: 7200, retry: 3600, expire: 1209600, minimum: 3600 } },
          { type: 'CAA', data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
        ],
        'www.example.com': [{ type: 'CNAME', data: 'example.com' }],
        '10.0.0.127.in-addr.arpa': [{ type: 'PTR', data: 'host.example.com' }],
      },
      soaOwner: 'example.com',
    });
    rdap = await startRdapServer();
    const bootstrapFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-rdap-')), 'bootstrap.json');
    fs.writeFileSync(bootstrapFile, JSON.stringify({ dns: { publication: '2025-11-06T23:00:01Z', version: '1.0', services: [[['com'], [`${rdap.url}/rdap/`]]] } }));
    svc = await startService({ NODE_EXTRA_CA_CERTS: fx.root.certFile, SAI_RDAP_BOOTSTRAP_FILE: bootstrapFile });
    api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
    await dns?.close();
    await rdap?.close();
    for (const s of servers) await s.close();
    await fx?.cleanup();
  });

  it('broken-link-checker: each link\'s state, redirect chains, refused and guard-refused targets, a summary per state', async () => {
    const r = await api.post('/api/v1/tools/broken-link-checker/', { url: `${site.url}/` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(ajv.validate(linksReportSchema, r.body), JSON.stringify(ajv.errors));
    const byUrl = new Map((r.body.links as Array<{ url: string; state: string; status: number | null; redirect_chain: string[]; parents: string[] }>).map((l) => [l.url, l]));
    const state = (u: string) => byUrl.get(u)?.state;
    assert.equal(state(`${site.url}/ok/`), 'ok');
    assert.equal(state(`${site.url}/style.css`), 'ok');
    assert.equal(state(`${site.url}/logo.png`), 'ok');
    assert.equal(state(`${site.url}/missing/`), 'broken');
    assert.equal(byUrl.get(`${site.url}/missing/`)!.status, 404);
    assert.equal(state(`${site.url}/error/`), 'broken');
    assert.equal(state(`${site.url}/moved/`), 'redirect');
    assert.deepEqual(byUrl.get(`${site.url}/moved/`)!.redirect_chain.at(-1), `${site.url}/ok/`);
    assert.equal(state(`${site.url}/moved-away/`), 'broken', 'a redirect that ends in a 404');
    const refused = [...byUrl.values()].find((l) => /^http:\/\/127\.0\.0\.1:\d+\/$/.test(l.url) && l.url !== `${site.url}/`);
    assert.equal(refused?.state, 'broken');
    assert.notEqual(state('http://10.0.0.1/'), 'ok', 'the guard refuses a private address');
    assert.deepEqual(byUrl.get(`${site.url}/ok/`)!.parents, [`${site.url}/`]);
    const counted = Object.fromEntries(['ok', 'broken', 'redirect', 'timeout', 'skipped'].map((s) => [s, r.body.links.filter((l: { state: string }) => l.state === s).length]));
    for (const [s, n] of Object.entries(counted)) assert.equal(r.body.summary[s], n, `summary.${s}`);

    for (const bad of [{ depth: 9 }, { max_links: 0 }, { depth: 'deep' }]) {
      const refusedBody = await api.post('/api/v1/tools/broken-link-checker/', { url: `${site.url}/`, ...bad });
      assert.equal(refusedBody.status, 400, JSON.stringify(bad));
    }
  });

  it('ssl-checker: a trusted chain graded A+ with HSTS; an expired and a self-signed certificate are findings with low grades, not errors', async () => {
    const valid = await tlsServer(fx.leaves.valid.key, fx.leaves.valid.cert + fx.intermediate.cert);
    const expired = await tlsServer(fx.leaves.expired.key, fx.leaves.expired.cert + fx.intermediate.cert);
    const selfSigned = await tlsServer(fx.leaves.selfSigned.key, fx.leaves.selfSigned.cert);
    servers.push(valid, expired, selfSigned);

    const r = await api.post('/api/v1/tools/ssl-checker/', { url: `https://127.0.0.1:${valid.port}/` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(ajv.validate(sslReportSchema, r.body), JSON.stringify(ajv.errors));
    assert.equal(r.body.url, `https://127.0.0.1:${valid.port}/`, 'the answer names the URL it analysed');
    const ssl = r.body;
    assert.equal(ssl.port, valid.port);
    assert.equal(ssl.authorized, true, `trusted through NODE_EXTRA_CA_CERTS: ${ssl.authorization_error}`);
    assert.equal(ssl.hostname_match, true);
    assert.equal(ssl.certificate.fingerprint_sha256.replace(/:/g, '').toUpperCase(), (await opensslFingerprint(fx.leaves.valid.certFile)).replace(/:/g, '').toUpperCase());
    assert.ok(ssl.chain.length >= 2, 'the leaf and the intermediate the server sent');
    assert.ok(ssl.certificate.days_to_expiry > 80 && ssl.certificate.days_to_expiry <= 90);
    assert.equal(ssl.hsts.present, true);
    assert.equal(ssl.grade, 'A+');

    for (const [name, port, error] of [['expired', expired.port, /EXPIRED/], ['self-signed', selfSigned.port, /SELF_SIGNED/]] as const) {
      const f = await api.post('/api/v1/tools/ssl-checker/', { url: `https://127.0.0.1:${port}/` });
      assert.equal(f.status, 200, `${name}: ${JSON.stringify(f.body)}`);
      assert.equal(f.body.authorized, false, name);
      assert.match(String(f.body.authorization_error), error, name);
      assert.ok(['T', 'F'].includes(f.body.grade), `${name}: grade ${f.body.grade}`);
    }
    // The port in the body wins over the URL's; a closed port is unreachable, a private address forbidden.
    const byPort = await api.post('/api/v1/tools/ssl-checker/', { url: 'https://127.0.0.1/', port: valid.port });
    assert.equal(byPort.body.port, valid.port);
    const closed = await api.post('/api/v1/tools/ssl-checker/', { url: `https://127.0.0.1:${await closedPort()}/` });
    assert.equal(closed.status, 422);
    assert.equal(closed.body.details[0].reason, 'refused');
    const forbidden = await api.post('/api/v1/tools/ssl-checker/', { url: 'https://10.0.0.1/' });
    assert.equal(forbidden.body.code, 'target_forbidden');
  });

  it('dns-whois: the records from the DNS server named in the request, reverse names, RDAP registration data; NXDOMAIN is a finding', async () => {
    const r = await api.post('/api/v1/tools/dns-whois/', { url: 'HTTPS://Example.com/path', servers: [dns.address] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(ajv.validate(dnsWhoisReportSchema, r.body), JSON.stringify(ajv.errors));
    assert.equal(r.body.url, 'https://example.com/path', 'the answer names the URL it analysed, normalized');
    const d = r.body;
    assert.deepEqual(d.dns.A.map((a: { address: string }) => a.address), ['127.0.0.10']);
    assert.deepEqual(d.dns.MX.map((m: { exchange: string }) => m.exchange), ['mail.example.com']);
    assert.ok(JSON.stringify(d.dns.TXT).includes('v=spf1 -all'));
    assert.equal(d.dns.SOA.serial, 2025082048);
    assert.ok(JSON.stringify(d.dns.CAA).includes('letsencrypt.org'));
    assert.deepEqual(d.dns.NS, ['a.iana-servers.net']);
    assert.deepEqual(d.ips.find((ip: { address: string }) => ip.address === '127.0.0.10').reverse, ['host.example.com']);
    assert.equal(d.ips.find((ip: { address: string }) => ip.address === '::1').error.code, 'NOT_PUBLIC', 'no reverse lookup of an address the guard refuses');
    assert.equal(d.whois.source, 'rdap');
    assert.equal(d.whois.registrar, 'Example Registrar, Inc.');
    assert.match(d.whois.created, /^1995-08-14T04:00:00/);
    assert.match(d.whois.expires, /^2026-08-13T04:00:00/);
    assert.deepEqual(d.whois.nameservers.map((n: string) => n.toLowerCase()), ['a.iana-servers.net', 'b.iana-servers.net']);
    assert.equal(d.whois.dnssec, true);

    const www = (await api.post('/api/v1/tools/dns-whois/', { url: 'http://www.example.com/', servers: [dns.address] })).body;
    assert.deepEqual(www.dns.CNAME, ['example.com']);
    assert.equal(www.domain, 'example.com', 'registration data is of the registered domain');

    const missing = await api.post('/api/v1/tools/dns-whois/', { url: 'https://no-such-name-here.com/', servers: [dns.address] });
    assert.equal(missing.status, 200, 'a name that does not exist is a finding');
    assert.deepEqual(missing.body.dns, {});
    assert.match(JSON.stringify(missing.body.error), /NXDOMAIN|ENOTFOUND/);

    const refusedServer = await api.post('/api/v1/tools/dns-whois/', { url: 'https://example.com/', servers: ['10.0.0.53'] });
    assert.equal(refusedServer.status, 400);
    assert.equal(refusedServer.body.code, 'target_forbidden');
    const badServer = await api.post('/api/v1/tools/dns-whois/', { url: 'https://example.com/', servers: ['not an address'] });
    assert.equal(badServer.status, 400);
  });
});
