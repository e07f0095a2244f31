/**
 * The SSL checker (lambdas/tools/ssl.ts, ssl-grade.ts, ssl-cert.ts) against TLS servers on loopback, with
 * certificates made at test start by the `openssl` CLI (test/helpers/tls-fixtures.ts): a test root CA, an
 * intermediate, and leaves that are valid, expired, not yet valid, for another host, self-signed, RSA 2048,
 * RSA 1024, EC P-256, Ed25519, SHA-1-signed.
 *
 * Names (`valid.test`, …) resolve to 127.0.0.1 through a resolver injected into the guard: no DNS query is made,
 * and a name only reaches a socket through the guard's `lookup`. Every client socket is watched (net-helpers.ts):
 * nothing may leave loopback. Expected values (fingerprints, dates, signature algorithms) come from `openssl`,
 * and expected grades and scores are worked out by hand from SSL Labs' tables in the test's comments.
 */
import { describe, it, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CodedError } from '../../lambdas/errors.ts';
import { OutboundGuard, type ResolvedAddress } from '../../lambdas/net/guard.ts';
import { checkSsl, sslCheckSchema, SSL_LIMITS, type SslReport } from '../../lambdas/tools/ssl.ts';
import { cipherStrengthScore, gradeServer, keyExchangeScore, letterOf, parseHsts, type GradeInput } from '../../lambdas/tools/ssl-grade.ts';
import { parseSubjectAltName, rfc4514Name } from '../../lambdas/tools/ssl-cert.ts';
import { makeTlsFixtures, opensslFingerprint, opensslName, opensslTextField, type KeyAndCert, type TlsFixtures } from '../helpers/tls-fixtures.ts';
import { watchSockets, type SocketWatch } from './net-helpers.ts';

const resolveCalls = new Map<string, number>();

/** `*.test` names are 127.0.0.1, `inside.test` is a private address, anything else does not resolve. */
async function fakeResolve(name: string): Promise<ResolvedAddress[]> {
  const host = name.toLowerCase();
  resolveCalls.set(host, (resolveCalls.get(host) ?? 0) + 1);
  if (host === 'inside.test') return [{ address: '10.0.0.1', family: 4 }];
  if (host.endsWith('.test') && host !== 'nowhere.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
}

const guard = new OutboundGuard({ allow: ['127.0.0.0/8'], resolve: fakeResolve });
const strictGuard = new OutboundGuard({ resolve: fakeResolve });

const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
const validate = ajv.compile(sslCheckSchema);
const validate2020 = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }).compile(sslCheckSchema);

function assertSchema(report: SslReport): void {
  assert.ok(validate(report), JSON.stringify(validate.errors));
  assert.ok(validate2020(report), JSON.stringify(validate2020.errors));
}

let fx: TlsFixtures;
let watch: SocketWatch;

interface TestServer {
  port: number;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 serving `cert` (PEM, chain included) with `hsts` as its STS header. */
async function httpsServer(leaf: KeyAndCert, chain: string, opts: tls.TlsOptions & { hsts?: string; staple?: boolean } = {}): Promise<TestServer> {
  const { hsts, staple, ...tlsOptions } = opts;
  const server = https.createServer({ key: leaf.key, cert: chain, ...tlsOptions }, (_req, res) => {
    if (hsts) res.setHeader('Strict-Transport-Security', hsts);
    res.end('ok');
  });
  if (staple) server.on('OCSPRequest', (_cert: Buffer, _issuer: Buffer, cb: (err: Error | null, resp: Buffer | null) => void) => cb(null, Buffer.from('not a real OCSP response')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Runs `checkSsl` against a server started for one test, then stops it. */
async function check(leaf: KeyAndCert, chain: string, host: string, serverOpts: Parameters<typeof httpsServer>[2] = {}, ca = [fx.root.cert]): Promise<SslReport> {
  const srv = await httpsServer(leaf, chain, serverOpts);
  try {
    const report = await checkSsl(host, srv.port, { guard, ca });
    assertSchema(report);
    return report;
  } finally {
    await srv.close();
  }
}

/** Asserts a CodedError `target_unreachable` with the reason. */
function unreachable(reason: string) {
  return (err: unknown): true => {
    assert.ok(err instanceof CodedError, String(err));
    assert.equal(err.code, 'target_unreachable', err.message);
    assert.equal((err.details[0] as { reason: string }).reason, reason, err.message);
    return true;
  };
}

const ids = (r: SslReport) => r.findings.map((f) => f.id);

before(async () => {
  fx = await makeTlsFixtures();
});
after(async () => {
  await fx?.cleanup();
});
beforeEach(() => {
  watch = watchSockets();
});
afterEach(() => {
  watch.assertLoopbackOnly();
  watch.stop();
});

describe('a valid server: full chain, trusted through the test CA', () => {
  let report: SslReport;
  let callsBefore: number;
  before(async () => {
    callsBefore = resolveCalls.get('valid.test') ?? 0;
    report = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test');
  });

  it('is authorized for its name, with the chain leaf → intermediate → root', async () => {
    assert.equal(report.host, 'valid.test');
    assert.equal(report.authorized, true);
    assert.equal(report.authorization_error, null);
    assert.equal(report.hostname_match, true);
    assert.equal(report.chain.length, 3);
    assert.deepEqual(report.chain.map((c) => c.fingerprint_sha256), [
      await opensslFingerprint(fx.leaves.valid.certFile), await opensslFingerprint(fx.intermediate.certFile), await opensslFingerprint(fx.root.certFile),
    ]);
    assert.equal(report.chain[0]!.issuer, report.chain[1]!.subject);
    assert.equal(report.chain[1]!.issuer, report.chain[2]!.subject);
    assert.equal(report.chain[2]!.subject, report.chain[2]!.issuer, 'the root is self-signed');
    assert.deepEqual(report.certificate, report.chain[0]);
  });

  it('describes the certificate as openssl does', async () => {
    const c = report.certificate;
    assert.equal(c.fingerprint_sha256, await opensslFingerprint(fx.leaves.valid.certFile));
    // RFC 4514 strings, as `openssl x509 -nameopt RFC2253` prints them.
    assert.equal(c.subject, await opensslName(fx.leaves.valid.certFile, 'subject'));
    assert.equal(c.issuer, await opensslName(fx.leaves.valid.certFile, 'issuer'));
    assert.match(c.subject, /(^|,)CN=valid\.test(,|$)/);
    assert.equal(report.chain[2]!.subject, await opensslName(fx.root.certFile, 'subject'));
    assert.deepEqual(c.san, ['valid.test', 'www.valid.test', '127.0.0.1']);
    assert.equal(c.key_type, 'RSA');
    assert.equal(c.key_bits, 2048);
    assert.equal(await opensslTextField(fx.leaves.valid.certFile, 'Public-Key'), '(2048 bit)');
    assert.equal(c.signature_algorithm, await opensslTextField(fx.leaves.valid.certFile, 'Signature Algorithm'));
    assert.equal(c.valid_to, new Date(await opensslTextField(fx.leaves.valid.certFile, 'Not After ')).toISOString());
    assert.equal(c.valid_from, new Date(await opensslTextField(fx.leaves.valid.certFile, 'Not Before')).toISOString());
    // The fixtures sign for 90 days from now.
    assert.ok(c.days_to_expiry >= 88 && c.days_to_expiry <= 90, String(c.days_to_expiry));
  });

  it('sees TLS 1.2 and 1.3 (Node servers refuse 1.0 and 1.1 by default), forward secrecy and AEAD', () => {
    assert.deepEqual(report.protocols, { TLSv1: false, 'TLSv1.1': false, 'TLSv1.2': true, 'TLSv1.3': true });
    assert.equal(report.protocol, 'TLSv1.3');
    assert.equal(report.cipher.forward_secrecy, true);
    assert.equal(report.cipher.aead, true);
    assert.equal(report.ocsp_stapled, false);
    assert.equal(report.hsts.present, false);
    assert.equal(report.hsts.http_status, 200);
    assert.equal(report.ciphers.accepts_insecure, false);
    assert.ok(report.handshakes >= 2 && report.handshakes <= SSL_LIMITS.maxHandshakes, String(report.handshakes));
  });

  it('grades A without HSTS: protocol 100, key exchange 90 (2048-bit key), cipher 90 (128 and 256 bits)', () => {
    // Protocol (100 + 100) / 2; key exchange: 2048 bits is "< 4096" → 90; cipher: strongest 256 → 100, weakest
    // 128 → 80, (100 + 80) / 2 = 90. 0.3 × 100 + 0.3 × 90 + 0.4 × 90 = 93 → A; no cap; no HSTS → not A+.
    assert.deepEqual(report.score, { protocol: 100, key_exchange: 90, cipher_strength: 90, total: 93 });
    assert.equal(report.grade, 'A');
    assert.equal(report.grade_ignoring_trust, 'A');
    assert.ok(ids(report).includes('hsts_missing'));
    assert.ok(!report.findings.some((f) => f.cap), JSON.stringify(report.findings));
  });

  it('resolved the name once, through the guard (probes reuse the address)', () => {
    assert.equal((resolveCalls.get('valid.test') ?? 0) - callsBefore, 1);
  });
});

describe('HSTS', () => {
  it('a long max-age gives A+, with the directives read', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test', { hsts: 'max-age=31536000; includeSubDomains; preload' });
    assert.equal(r.grade, 'A+');
    assert.deepEqual(
      { present: r.hsts.present, valid: r.hsts.valid, max_age: r.hsts.max_age, include_subdomains: r.hsts.include_subdomains, preload: r.hsts.preload },
      { present: true, valid: true, max_age: 31536000, include_subdomains: true, preload: true },
    );
    assert.equal(r.hsts.header, 'max-age=31536000; includeSubDomains; preload');
  });

  it('a short max-age stays A, with a note', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test', { hsts: 'max-age=300' });
    assert.equal(r.grade, 'A');
    assert.equal(r.hsts.max_age, 300);
    assert.ok(ids(r).includes('hsts_short'));
  });

  it('parses headers as RFC 6797 section 6.1 says', () => {
    assert.deepEqual(parseHsts('max-age=31536000', 200), { present: true, valid: true, max_age: 31536000, include_subdomains: false, preload: false, header: 'max-age=31536000', http_status: 200 });
    const quoted = parseHsts('max-age="15552000" ; includeSubDomains', 200);
    assert.equal(quoted.valid, true);
    assert.equal(quoted.max_age, 15552000);
    assert.equal(quoted.include_subdomains, true);
    const upper = parseHsts('MAX-AGE=10; INCLUDESUBDOMAINS; Preload', 301);
    assert.deepEqual([upper.valid, upper.max_age, upper.include_subdomains, upper.preload], [true, 10, true, true]);
    assert.equal(parseHsts('max-age=1; max-age=2', 200).valid, false, 'a directive twice');
    assert.equal(parseHsts('includeSubDomains', 200).valid, false, 'no max-age');
    assert.equal(parseHsts('max-age=abc', 200).valid, false, 'not delta-seconds');
    assert.equal(parseHsts('max-age=-5', 200).valid, false, 'negative');
    assert.equal(parseHsts('', 200).valid, false, 'empty');
    assert.equal(parseHsts('max-age=100; unknown=x', 200).valid, true, 'unknown directives are ignored');
    assert.deepEqual(parseHsts(null, null), { present: false, valid: false, max_age: null, include_subdomains: false, preload: false, header: null, http_status: null });
  });
});

describe('certificate problems are findings, not errors', () => {
  it('expired: CERT_HAS_EXPIRED, negative days, grade T (A if trust is ignored)', async () => {
    const r = await check(fx.leaves.expired, fx.leaves.expired.cert + fx.intermediate.cert, 'expired.test');
    assert.equal(r.authorized, false);
    assert.equal(r.authorization_error, 'CERT_HAS_EXPIRED');
    assert.equal(r.hostname_match, true);
    assert.equal(r.certificate.valid_to, '2020-02-01T00:00:00.000Z');
    const expected = Math.floor((Date.UTC(2020, 1, 1) - Date.now()) / 86_400_000);
    assert.ok(Math.abs(r.certificate.days_to_expiry - expected) <= 1, `${r.certificate.days_to_expiry} vs ${expected}`);
    assert.equal(r.grade, 'T');
    assert.equal(r.grade_ignoring_trust, 'A');
    assert.ok(ids(r).includes('certificate_not_trusted'));
  });

  it('not yet valid: CERT_NOT_YET_VALID, grade T', async () => {
    const r = await check(fx.leaves.future, fx.leaves.future.cert + fx.intermediate.cert, 'future.test');
    assert.equal(r.authorized, false);
    assert.equal(r.authorization_error, 'CERT_NOT_YET_VALID');
    assert.equal(r.certificate.valid_from, '2099-01-01T00:00:00.000Z');
    assert.ok(r.certificate.days_to_expiry > 365 * 70);
    assert.equal(r.grade, 'T');
  });

  it('self-signed: DEPTH_ZERO_SELF_SIGNED_CERT, a chain of one, grade T', async () => {
    const r = await check(fx.leaves.selfSigned, fx.leaves.selfSigned.cert, 'self.test');
    assert.equal(r.authorized, false);
    assert.equal(r.authorization_error, 'DEPTH_ZERO_SELF_SIGNED_CERT');
    assert.equal(r.chain.length, 1);
    assert.equal(r.certificate.subject, r.certificate.issuer);
    assert.equal(r.hostname_match, true);
    assert.equal(r.grade, 'T');
  });

  it('wrong host: hostname_match false, ERR_TLS_CERT_ALTNAME_INVALID, grade M (A if trust is ignored)', async () => {
    const r = await check(fx.leaves.other, fx.leaves.other.cert + fx.intermediate.cert, 'valid.test');
    assert.equal(r.hostname_match, false);
    assert.equal(r.authorized, false);
    assert.equal(r.authorization_error, 'ERR_TLS_CERT_ALTNAME_INVALID');
    assert.deepEqual(r.certificate.san, ['other.test']);
    assert.equal(r.grade, 'M');
    assert.equal(r.grade_ignoring_trust, 'A');
    assert.ok(ids(r).includes('hostname_mismatch'));
  });

  it('incomplete chain (leaf without its intermediate): UNABLE_TO_VERIFY_LEAF_SIGNATURE, grade T', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert, 'valid.test');
    assert.equal(r.authorized, false);
    assert.equal(r.authorization_error, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    assert.equal(r.chain.length, 1);
    assert.equal(r.grade, 'T');
  });

  it('an unknown CA (the test root not passed): not trusted, grade T', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test', {}, []);
    assert.equal(r.authorized, false);
    assert.match(r.authorization_error ?? '', /^(UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)$/);
    assert.equal(r.trust_store, 'system');
    assert.equal(r.grade, 'T');
  });

  it('a SHA-1 signature: not authorized (CA_MD_TOO_WEAK), grade T', async () => {
    const r = await check(fx.leaves.sha1, fx.leaves.sha1.cert + fx.intermediate.cert, 'sha1.test');
    assert.equal(r.certificate.signature_algorithm, await opensslTextField(fx.leaves.sha1.certFile, 'Signature Algorithm'));
    assert.equal(r.certificate.signature_algorithm, 'sha1WithRSAEncryption');
    assert.equal(r.authorized, false);
    assert.equal(r.authorization_error, 'CA_MD_TOO_WEAK');
    assert.equal(r.grade, 'T');
    assert.ok(ids(r).includes('sha1_signature'));
  });
});

describe('keys', () => {
  it('EC P-256: key_type EC, 256 bits; key exchange still 90 (P-256 ~ RSA 3072)', async () => {
    const r = await check(fx.leaves.ec, fx.leaves.ec.cert + fx.intermediate.cert, 'ec.test');
    assert.equal(r.certificate.key_type, 'EC');
    assert.equal(r.certificate.key_bits, 256);
    assert.equal(await opensslTextField(fx.leaves.ec.certFile, 'Public-Key'), '(256 bit)');
    assert.equal(r.certificate.fingerprint_sha256, await opensslFingerprint(fx.leaves.ec.certFile));
    assert.equal(r.score.key_exchange, 90);
    assert.equal(r.grade, 'A');
  });

  it('Ed25519: key_type Ed25519, 256 bits', async () => {
    const r = await check(fx.leaves.ed25519, fx.leaves.ed25519.cert + fx.intermediate.cert, 'ed.test');
    assert.equal(r.certificate.key_type, 'Ed25519');
    assert.equal(r.certificate.key_bits, 256);
    assert.equal(r.authorized, true);
  });

  it('RSA 1024: weak key, capped to B (key exchange 80: 0.3 × 100 + 0.3 × 80 + 0.4 × 90 = 90)', async () => {
    const r = await check(fx.leaves.weak, fx.leaves.weak.cert + fx.intermediate.cert, 'weak.test', { ciphers: 'DEFAULT:@SECLEVEL=0' });
    assert.equal(r.certificate.key_bits, 1024);
    assert.equal(r.score.key_exchange, 80);
    assert.equal(r.score.total, 90);
    assert.equal(r.grade, 'B');
    assert.equal(r.findings.find((f) => f.id === 'weak_key')?.cap, 'B');
  });
});

describe('protocols', () => {
  it('TLS 1.0 only: protocols show only TLS 1.0; capped to C (no TLS 1.2), with the TLS 1.0 and no-AEAD caps too', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test', { minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' });
    assert.deepEqual(r.protocols, { TLSv1: true, 'TLSv1.1': false, 'TLSv1.2': false, 'TLSv1.3': false });
    assert.equal(r.protocol, 'TLSv1');
    assert.equal(r.cipher.aead, false);
    assert.equal(r.authorized, true);
    // Protocol (90 + 90) / 2 = 90; the score alone would be an A.
    assert.equal(r.score.protocol, 90);
    const caps = Object.fromEntries(r.findings.filter((f) => f.cap).map((f) => [f.id, f.cap]));
    assert.deepEqual(caps, { tls_1_0_or_1_1_supported: 'B', no_tls_1_2: 'C', no_aead: 'B' });
    assert.equal(r.grade, 'C');
  });

  it('TLS 1.0 to 1.2: every one seen, capped to B for TLS 1.0/1.1 (protocol score (100 + 90) / 2 = 95)', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test', { minVersion: 'TLSv1', maxVersion: 'TLSv1.2', ciphers: 'DEFAULT:@SECLEVEL=0' });
    assert.deepEqual(r.protocols, { TLSv1: true, 'TLSv1.1': true, 'TLSv1.2': true, 'TLSv1.3': false });
    assert.equal(r.protocol, 'TLSv1.2');
    assert.equal(r.score.protocol, 95);
    assert.equal(r.grade, 'B');
    assert.ok(r.handshakes <= SSL_LIMITS.maxHandshakes);
  });

  it('a server preferring RSA key exchange and CBC: no forward secrecy and no AEAD, capped to B', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test', {
      maxVersion: 'TLSv1.2', ciphers: 'AES256-SHA:AES128-SHA', honorCipherOrder: true,
    });
    assert.equal(r.cipher.forward_secrecy, false);
    assert.equal(r.cipher.aead, false);
    assert.equal(r.cipher.name, 'TLS_RSA_WITH_AES_256_CBC_SHA');
    assert.equal(r.cipher.key_exchange_group, null);
    assert.equal(r.ciphers.accepts_non_forward_secret, true);
    assert.equal(r.ciphers.accepts_cbc, true);
    assert.ok(ids(r).includes('no_forward_secrecy') && ids(r).includes('no_aead'));
    assert.equal(r.grade, 'B');
  });
});

describe('OCSP stapling', () => {
  it('is false when the server staples nothing and true when it staples a response', async () => {
    const none = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test');
    assert.equal(none.ocsp_stapled, false);
    const stapled = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test', { staple: true });
    assert.equal(stapled.ocsp_stapled, true);
  });
});

describe('targets that cannot be checked', () => {
  it('an IP literal the guard refuses: target_forbidden before any socket', async () => {
    await assert.rejects(checkSsl('10.0.0.1', 443, { guard }), (err: unknown) => {
      assert.ok(err instanceof CodedError);
      assert.equal(err.code, 'target_forbidden');
      return true;
    });
    await assert.rejects(checkSsl('169.254.169.254', 443, { guard }), { code: 'target_forbidden' });
    await assert.rejects(checkSsl('127.0.0.1', 443, { guard: strictGuard }), { code: 'target_forbidden' });
    watch.assertNoSocket();
  });

  it('a name that resolves to a private address: target_forbidden, and no connection', async () => {
    await assert.rejects(checkSsl('inside.test', 443, { guard }), { code: 'target_forbidden' });
    assert.deepEqual(watch.connected, []);
  });

  it('a refused port: target_unreachable, refused', async () => {
    const srv = net.createServer();
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => srv.close(() => resolve()));
    await assert.rejects(checkSsl('valid.test', port, { guard }), unreachable('refused'));
  });

  it('a name that does not resolve: target_unreachable, dns', async () => {
    await assert.rejects(checkSsl('nowhere.test', 443, { guard }), unreachable('dns'));
  });

  it('a plain HTTP server on the port: target_unreachable, tls', async () => {
    const srv = http.createServer((_req, res) => res.end('plain'));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
    try {
      await assert.rejects(checkSsl('valid.test', (srv.address() as net.AddressInfo).port, { guard }), unreachable('tls'));
    } finally {
      srv.closeAllConnections();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    }
  });

  it('a server that accepts and never answers: target_unreachable, timeout, within the budget', async () => {
    const sockets: net.Socket[] = [];
    const srv = net.createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
    const t0 = performance.now();
    try {
      await assert.rejects(checkSsl('valid.test', (srv.address() as net.AddressInfo).port, { guard, timeoutMs: 300 }), unreachable('timeout'));
      assert.ok(performance.now() - t0 < 2_000, `${performance.now() - t0} ms`);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    }
  });

  it('an aborted signal: target_unreachable, timeout', async () => {
    await assert.rejects(checkSsl('valid.test', 1, { guard, signal: AbortSignal.abort() }), unreachable('timeout'));
  });

  it('bad hosts and ports are refused before any socket', async () => {
    await assert.rejects(checkSsl('', 443, { guard }), { code: 'invalid_url' });
    await assert.rejects(checkSsl('valid.test/path', 443, { guard }), { code: 'invalid_url' });
    await assert.rejects(checkSsl('https://valid.test', 443, { guard }), { code: 'invalid_url' });
    await assert.rejects(checkSsl('valid.test:8443', 443, { guard }), { code: 'invalid_url' });
    await assert.rejects(checkSsl('a b.test', 443, { guard }), { code: 'invalid_url' });
    await assert.rejects(checkSsl('valid.test', 0, { guard }), { code: 'invalid_request' });
    await assert.rejects(checkSsl('valid.test', 65_536, { guard }), { code: 'invalid_request' });
    await assert.rejects(checkSsl('valid.test', 1.5, { guard }), { code: 'invalid_request' });
    watch.assertNoSocket();
  });
});

describe('probes without an answer', () => {
  it('are inconclusive (null), noted, and counted as not accepted', async () => {
    const srv = await httpsServer(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert);
    // A front that lets the first connection through to the server, then stops listening: the probes are refused.
    const front = net.createServer((client) => {
      front.close();
      const upstream = net.connect(srv.port, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', () => resolve()));
    try {
      const r = await checkSsl('valid.test', (front.address() as net.AddressInfo).port, { guard, ca: [fx.root.cert] });
      assertSchema(r);
      assert.equal(r.authorized, true);
      assert.equal(r.protocol, 'TLSv1.3');
      assert.equal(r.ciphers.accepts_cbc, null);
      assert.equal(r.ciphers.accepts_non_forward_secret, null);
      assert.equal(r.protocols['TLSv1.2'], false, 'an unanswered probe counts as not accepted');
      assert.match(r.findings.find((f) => f.id === 'probe_inconclusive')?.message ?? '', /TLS 1\.2/);
    } finally {
      await srv.close();
    }
  });
});

describe('IP addresses', () => {
  it('an allowed IP literal is checked without SNI, matched against IP SANs', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, '127.0.0.1');
    assert.equal(r.host, '127.0.0.1');
    assert.equal(r.hostname_match, true);
    assert.equal(r.authorized, true);
    const r2 = await check(fx.leaves.ec, fx.leaves.ec.cert + fx.intermediate.cert, '127.0.0.1');
    assert.equal(r2.hostname_match, false, 'ec.test has no IP SAN');
  });
});

describe('grading rules (ssl-grade.ts) on given inputs', () => {
  const base: GradeInput = {
    protocols: { TLSv1: false, 'TLSv1.1': false, 'TLSv1.2': true, 'TLSv1.3': true },
    negotiated: { protocol: 'TLSv1.3', forwardSecrecy: true, aead: true, bits: 256 },
    strongestBits: 256, weakestBits: 128, keyExchangeBits: 2048, certificateKeyBits: 2048, signatures: ['sha256WithRSAEncryption'],
    chainTrusted: true, hostnameMatch: true, authorizationError: null, daysToExpiry: 60,
    hsts: parseHsts(null, 200), acceptsInsecureSuites: false, acceptsNonForwardSecret: false, acceptsCbc: false,
  };

  it('the guide\'s tables: letters at 80/65/50/35/20, key exchange and cipher strength steps', () => {
    assert.deepEqual([80, 79.9, 65, 64.9, 50, 35, 20, 19.9].map(letterOf), ['A', 'B', 'B', 'C', 'C', 'D', 'E', 'F']);
    assert.deepEqual([0, 511, 512, 1023, 1024, 2047, 2048, 4095, 4096].map(keyExchangeScore), [0, 20, 40, 40, 80, 80, 90, 90, 100]);
    assert.deepEqual([0, 56, 112, 127, 128, 255, 256].map(cipherStrengthScore), [0, 20, 20, 20, 80, 80, 100]);
  });

  it('a zero category makes the score zero (F); a NULL cipher accepted is F by its cap', () => {
    const anon = gradeServer({ ...base, keyExchangeBits: 0, acceptsInsecureSuites: true });
    assert.equal(anon.score.key_exchange, 0);
    assert.equal(anon.score.total, 0);
    assert.equal(anon.grade, 'F');
    // Cipher strength (100 + 0) / 2 = 50: not a zero category, but the insecure-suite rule caps to F.
    const nul = gradeServer({ ...base, weakestBits: 0, acceptsInsecureSuites: true });
    assert.equal(nul.score.cipher_strength, 50);
    assert.equal(nul.grade, 'F');
    assert.equal(nul.findings.find((f) => f.id === 'insecure_suites')?.cap, 'F');
  });

  it('A+ needs HSTS of at least 180 days and no cap', () => {
    assert.equal(gradeServer({ ...base, hsts: parseHsts('max-age=15552000', 200) }).grade, 'A+');
    assert.equal(gradeServer({ ...base, hsts: parseHsts('max-age=15551999', 200) }).grade, 'A');
    assert.equal(gradeServer({ ...base, hsts: parseHsts('max-age=31536000; max-age=1', 200) }).grade, 'A', 'an invalid header does not count');
    assert.equal(gradeServer({ ...base, protocols: { ...base.protocols, 'TLSv1.1': true }, hsts: parseHsts('max-age=31536000', 200) }).grade, 'B');
  });

  it('keys under 1024 bits give F; MD5 signatures give F', () => {
    assert.equal(gradeServer({ ...base, certificateKeyBits: 512, keyExchangeBits: 512 }).grade, 'F');
    assert.equal(gradeServer({ ...base, signatures: ['md5WithRSAEncryption'] }).grade, 'F');
  });

  it('trust comes last: T over M, and grade_ignoring_trust keeps the rest', () => {
    const t = gradeServer({ ...base, chainTrusted: false, hostnameMatch: false, authorizationError: 'CERT_HAS_EXPIRED' });
    assert.equal(t.grade, 'T');
    assert.equal(t.grade_ignoring_trust, 'A');
    const m = gradeServer({ ...base, hostnameMatch: false, authorizationError: 'ERR_TLS_CERT_ALTNAME_INVALID', protocols: { ...base.protocols, TLSv1: true } });
    assert.equal(m.grade, 'M');
    assert.equal(m.grade_ignoring_trust, 'B');
  });

  it('notes an expiry within 30 days without changing the grade', () => {
    const r = gradeServer({ ...base, daysToExpiry: 5 });
    assert.equal(r.grade, 'A');
    assert.ok(r.findings.some((f) => f.id === 'expires_soon' && f.cap === null));
  });
});

describe('certificate helpers', () => {
  it('turns Node\'s names into RFC 4514 strings and reads subjectAltName', () => {
    assert.equal(rfc4514Name('C=US\nO=Example\\, Inc.\nCN=example.com'), 'CN=example.com,O=Example\\, Inc.,C=US');
    assert.deepEqual(parseSubjectAltName('DNS:a.test, DNS:*.a.test, IP Address:192.0.2.1, email:x@a.test, URI:https://a.test/'), ['a.test', '*.a.test', '192.0.2.1']);
    assert.deepEqual(parseSubjectAltName('DNS:"a,b.test", DNS:c.test'), ['a,b.test', 'c.test']);
    assert.deepEqual(parseSubjectAltName(undefined), []);
  });
});

describe('sslCheckSchema', () => {
  it('compiles in strict mode (drafts 07 and 2020-12) and rejects a wrong report', async () => {
    const r = await check(fx.leaves.valid, fx.leaves.valid.cert + fx.intermediate.cert, 'valid.test');
    assert.equal(validate({ ...r, grade: 'Z' }), false);
    assert.equal(validate({ ...r, extra: 1 }), false);
    assert.equal(validate({ ...r, certificate: { ...r.certificate, fingerprint_sha256: 'ab' } }), false);
    const { hsts: _hsts, ...withoutHsts } = r;
    assert.equal(validate(withoutHsts), false);
  });
});
