/**
 * The SSL certificate checker (docs/spec.md, "Tool endpoints", `POST /api/v1/tools/ssl-checker/`: "certificate details, expiry,
 * security"): the certificate and chain a TLS server presents, whether it is trusted and valid for the name, which
 * protocol versions and kinds of suites the server accepts, HSTS, OCSP stapling, and a grade after SSL Labs' SSL
 * Server Rating Guide (ssl-grade.ts).
 *
 * What one check does, all through the outbound guard (docs/security.md):
 * 1. `guard.checkUrl('https://<host>/')`: the scheme and an IP literal are checked before any socket opens.
 * 2. The main handshake, as a modern client (Node's default suites, TLS 1.0-1.3 offered, security level 0 so that
 *    old servers still answer), with the guard's `lookup` as the socket's resolver and OCSP stapling requested; its
 *    chain is verified against the system trust store (`tls.getCACertificates('system')` plus NODE_EXTRA_CA_CERTS;
 *    Node's bundled Mozilla store when the system has none). A certificate problem is a finding, not an error.
 * 3. `GET /` over that same connection, for the Strict-Transport-Security header.
 * 4. At the same time, up to 7 probe handshakes to the address the main handshake reached: each protocol version
 *    below the negotiated one (minVersion = maxVersion), and suites restricted to RSA key exchange (no forward
 *    secrecy), to CBC (no AEAD), to anonymous/NULL suites, and to the other strength class (128 or 256 bits).
 *    8 handshakes at most, within {@link SSL_LIMITS}.timeoutMs.
 *
 * A server that cannot be reached or does not speak TLS is an error: `target_unreachable` with a reason, as
 * lambdas/core/tools.ts gives it for the page tools.
 *
 * Ports: 443 for every plan; any other port only for plans with `ssl_checker_any_port` ({@link checkSslPortAllowed},
 * before the call is metered), so that the checker cannot be used to scan public hosts' ports.
 */
import { withTargetUrl } from './report-url.ts';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { CodedError, isCodedError } from '../errors.ts';
import { unreachableError } from '../net/unreachable.ts';
import { DEFAULT_USER_AGENT } from '../net/fetch.ts';
import type { OutboundGuard } from '../net/guard.ts';
import type { PlanCatalog } from '../core/plans.ts';
import { parseTargetUrl } from '../core/target-url.ts';
import { certificateKeyStrength, describeCertificate, ephemeralStrength, type CertificateInfo } from './ssl-cert.ts';
import {
  GRADES, TLS_VERSIONS, VERSION_LABEL, gradeServer, parseHsts,
  type Grade, type HstsInfo, type SslFinding, type SslScore, type TlsVersion,
} from './ssl-grade.ts';

/** Options of {@link checkSsl}. */
export interface SslCheckOptions {
  /** Every connection goes through it: `checkUrl` first, then its `lookup` as the sockets' resolver. */
  guard: OutboundGuard;
  /** Aborts the check; it then throws `target_unreachable` (reason `timeout`). */
  signal?: AbortSignal;
  /** The whole check's time budget, ms. @default 15000 */
  timeoutMs?: number;
  /** Extra trust anchors (PEM), added to the system's: for tests, or a private CA. @default [] */
  ca?: string[];
}

/** The cipher suite negotiated by the main handshake. */
interface NegotiatedCipher {
  /** IANA name (`TLS_AES_256_GCM_SHA384`, `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`). */
  name: string;
  /** OpenSSL's name (`ECDHE-RSA-AES128-GCM-SHA256`; the IANA name for TLS 1.3). */
  openssl_name: string;
  /** Strength of the symmetric cipher, bits (3DES counts 112). */
  bits: number;
  /** Ephemeral (EC)DH key exchange: TLS 1.3, or an ECDHE/DHE suite. */
  forward_secrecy: boolean;
  /** Authenticated encryption: GCM, CCM or ChaCha20-Poly1305 (every TLS 1.3 suite). */
  aead: boolean;
  /** The key exchange group (`X25519`, `X25519MLKEM768`, `secp256r1`, `DH 2048`); null with RSA key exchange. */
  key_exchange_group: string | null;
}

/** What the probe handshakes found about the suites the server accepts. */
interface CipherSupport {
  /** Strongest symmetric cipher seen in any handshake, bits. */
  strongest_bits: number;
  /** Weakest symmetric cipher seen in any handshake, bits. */
  weakest_bits: number;
  /** Accepts a suite without forward secrecy (RSA key exchange) when offered only those; null when not probed or inconclusive. */
  accepts_non_forward_secret: boolean | null;
  /** Accepts a CBC suite when offered only those; null when not probed or inconclusive. */
  accepts_cbc: boolean | null;
  /** Accepts an anonymous or NULL-encryption suite; null when not probed or inconclusive. */
  accepts_insecure: boolean | null;
}

/** The SSL checker's result: the tool's response body (schema: {@link sslReportSchema}). */
export interface SslReport {
  /** The host checked, normalized as a URL host (lower case, punycode, IPv4 in dotted quads, IPv6 without brackets). */
  host: string;
  port: number;
  /** The server's (leaf) certificate. */
  certificate: CertificateInfo;
  /**
   * The certificate path from the leaf up to the root, each with the same fields: the certificates the server sent,
   * in issuer order, then the trust anchor from the trust store when the server did not send it. A chain that
   * stops before a self-signed root is one the checker could not complete (a missing intermediate).
   */
  chain: CertificateInfo[];
  /** The certificate is valid for `host` (`tls.checkServerIdentity`: RFC 6125 name matching, IP SANs for addresses). */
  hostname_match: boolean;
  /** The chain validates against the trust store and the certificate is valid for `host`. */
  authorized: boolean;
  /** Why not: OpenSSL's verification code (`CERT_HAS_EXPIRED`, `DEPTH_ZERO_SELF_SIGNED_CERT`, `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, …) or Node's `ERR_TLS_CERT_ALTNAME_INVALID`; null when authorized. */
  authorization_error: string | null;
  /** Which trust store `authorized` was decided with: the system's, or Node's bundled Mozilla store when the system has none. */
  trust_store: 'system' | 'bundled';
  /** The protocol negotiated by a modern client (`TLSv1.3`, `TLSv1.2`, …). */
  protocol: TlsVersion;
  cipher: NegotiatedCipher;
  /** Which protocol versions the server accepts. SSL 2 and 3 are not probed (Node's OpenSSL cannot speak them). */
  protocols: Record<TlsVersion, boolean>;
  ciphers: CipherSupport;
  hsts: HstsInfo;
  /** The server stapled an OCSP response when asked (status_request, RFC 6066 section 8). The response is not verified. */
  ocsp_stapled: boolean;
  /** A+ to F, T (certificate not trusted) or M (certificate name mismatch): ssl-grade.ts, docs/tools.md. */
  grade: Grade;
  /** The grade with certificate trust and name set aside. */
  grade_ignoring_trust: Grade;
  score: SslScore;
  /** The rules that capped the grade (`cap`) and notes (`cap: null`). */
  findings: SslFinding[];
  /** TLS handshakes made (at most {@link SSL_LIMITS}.maxHandshakes). */
  handshakes: number;
}

/** The checker's bounds. */
export const SSL_LIMITS = {
  /** Default budget of a whole check, ms. */
  timeoutMs: 15_000,
  /** Longest wait for the main handshake (TCP connect included), ms. */
  mainHandshakeMs: 10_000,
  /** Longest wait for one probe handshake, and for the answer to `GET /`, ms. */
  probeMs: 5_000,
  /** Handshakes per check: the main one and up to 7 probes. */
  maxHandshakes: 8,
  /** Certificates reported in `chain`. */
  maxChain: 10,
} as const;

/** The main handshake's suites: Node's defaults (a modern client's preference), at security level 0 so that old servers and weak keys still answer and can be graded. */
const MAIN_CIPHERS = `${tls.DEFAULT_CIPHERS}:@SECLEVEL=0`;
/** Version probes for TLS 1.0-1.2: every suite Node's OpenSSL has that needs no PSK/SRP (OpenSSL 3 needs SECLEVEL=0 for TLS 1.0 and 1.1). */
const LEGACY_CIPHERS = 'ALL:!aNULL:!eNULL:!PSK:!SRP:@SECLEVEL=0';

/** A probe: which question it answers and the client settings that ask it. */
interface Probe {
  kind: 'version' | 'non_forward_secret' | 'cbc' | 'insecure' | 'strength';
  version?: TlsVersion;
  minVersion: tls.SecureVersion;
  maxVersion: tls.SecureVersion;
  ciphers: string;
}

/** What one successful handshake showed. */
interface HandshakeInfo {
  protocol: TlsVersion;
  cipher: NegotiatedCipher;
  /** Key exchange strength, RSA-equivalent bits: the weaker of the certificate key and the ephemeral group; 0 when anonymous; null when unknown. */
  keyExchangeBits: number | null;
}

/** A connected socket after its handshake. */
interface Connected {
  socket: tls.TLSSocket;
  /** The stapled OCSP response, null when none. */
  ocsp: Buffer | null;
}

/** A handshake that did not complete; `tcpConnected` tells a TLS failure from a network one. */
class HandshakeError extends Error {
  readonly tcpConnected: boolean;
  constructor(cause: unknown, tcpConnected: boolean) {
    super((cause as Error)?.message ?? String(cause));
    this.name = 'HandshakeError';
    this.cause = cause;
    this.tcpConnected = tcpConnected;
  }
}

/** Symmetric strength in bits of an IANA suite name. */
function cipherBits(standardName: string): number {
  if (/_WITH_NULL_|^TLS_NULL/.test(standardName)) return 0;
  if (/AES_256|CHACHA20|CAMELLIA_256|ARIA_256/.test(standardName)) return 256;
  if (/3DES|DES_EDE/.test(standardName)) return 112;
  if (/AES_128|CAMELLIA_128|ARIA_128|SEED|IDEA|RC4_128/.test(standardName)) return 128;
  if (/DES40|RC4_40|RC2_CBC_40/.test(standardName)) return 40;
  if (/DES_CBC/.test(standardName)) return 56;
  return 128;
}

/** The negotiated suite and key exchange of a connected socket. */
function negotiated(socket: tls.TLSSocket): HandshakeInfo {
  const protocol = socket.getProtocol() as TlsVersion;
  const c = socket.getCipher();
  const standard = c.standardName || c.name;
  const tls13 = protocol === 'TLSv1.3';
  const anonymous = /_anon_/.test(standard);
  const forwardSecrecy = tls13 || /^TLS_(EC)?DHE_/.test(standard);
  const eph = socket.getEphemeralKeyInfo() as { type?: string; name?: string; size?: number } | null;
  const group = eph && eph.type ? (eph.type === 'DH' ? `DH ${eph.size}` : eph.name ?? null) : null;
  let keyExchangeBits: number | null;
  if (anonymous) {
    keyExchangeBits = 0;
  } else {
    const x = socket.getPeerX509Certificate();
    const certBits = x ? certificateKeyStrength(describeCertificate(x.raw, Date.now())) : null;
    const ephBits = forwardSecrecy ? ephemeralStrength(eph) : null;
    const known = [certBits, ephBits].filter((b): b is number => b !== null);
    keyExchangeBits = known.length ? Math.min(...known) : null;
  }
  return {
    protocol,
    cipher: {
      name: standard,
      openssl_name: c.name,
      bits: cipherBits(standard),
      forward_secrecy: forwardSecrecy,
      aead: tls13 || /GCM|CCM|CHACHA20_POLY1305/.test(standard),
      key_exchange_group: forwardSecrecy ? group : null,
    },
    keyExchangeBits,
  };
}

/**
 * One TLS handshake (rejectUnauthorized false: the verdict is read, not enforced), bounded by `timeoutMs` and
 * `signal`. Resolves with the connected socket; the caller ends it.
 * @throws HandshakeError with the socket's error as `cause`.
 */
function handshake(options: tls.ConnectionOptions, timeoutMs: number, signal: AbortSignal | undefined): Promise<Connected> {
  return new Promise((resolve, reject) => {
    let tcpConnected = false;
    let ocsp: Buffer | null = null;
    let done = false;
    const socket = tls.connect({ ...options, rejectUnauthorized: false });
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err) {
        socket.destroy();
        reject(new HandshakeError(err, tcpConnected));
      } else {
        resolve({ socket, ocsp });
      }
    };
    const timer = setTimeout(() => finish(Object.assign(new Error(`no TLS handshake within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    const onAbort = () => finish(Object.assign(new Error('the check was aborted'), { code: 'ABORT_ERR' }));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => { tcpConnected = true; });
    socket.on('OCSPResponse', (response: Buffer | null) => { ocsp = response && response.length ? response : null; });
    socket.once('secureConnect', () => finish());
    socket.on('error', (err) => finish(err)); // stays attached: later errors of a finished socket are ignored
    socket.once('close', () => finish(Object.assign(new Error('the server closed the connection before the TLS handshake finished'), { code: 'ECONNRESET' })));
  });
}

/** The error of a target the main handshake could not reach; the guard's refusal passes unchanged. */
function unreachable(url: string, err: HandshakeError): CodedError {
  return unreachableError(url, err.cause, { tcpConnected: err.tcpConnected });
}

/** The checked target. */
interface Target {
  /** Host name or address, no brackets. */
  host: string;
  isIp: boolean;
  /** `https://host[:port]/`, for messages and error details. */
  url: string;
  /** The Host header of `GET /`. */
  hostHeader: string;
}

/**
 * Validates the host and port and asks the guard about the scheme and an IP literal.
 * @throws CodedError `invalid_url` (a host that is not a bare host name or address), `invalid_request` (port),
 *   `target_forbidden` (the guard).
 */
function parseTarget(host: string, port: number, guard: OutboundGuard): Target {
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new CodedError('invalid_request', `port must be an integer from 1 to 65535 (got ${String(port)})`, [{ path: 'port', message: 'must be an integer from 1 to 65535' }]);
  }
  const bare = typeof host === 'string' ? host.trim().replace(/^\[|\]$/g, '') : '';
  const literal = net.isIP(bare) === 6 ? `[${bare}]` : bare;
  if (!bare || /[/?#@\\\s]/.test(bare)) throw new CodedError('invalid_url', `"${String(host)}" is not a host name or IP address`, [{ url: `https://${literal}/` }]);
  const url = guard.checkUrl(`https://${literal}/`);
  if (url.port || url.pathname !== '/' || url.username || url.password) {
    throw new CodedError('invalid_url', `"${host}" is not a host name or IP address (give the port separately)`, [{ url: url.href }]);
  }
  const name = url.hostname.replace(/^\[|\]$/g, '');
  const isIp = net.isIP(name) !== 0;
  const hostPart = net.isIP(name) === 6 ? `[${name}]` : name;
  const hostHeader = port === 443 ? hostPart : `${hostPart}:${port}`;
  return { host: name, isIp, url: `https://${hostHeader}/`, hostHeader };
}

/** The trust anchors of the main handshake, and which store they came from. */
interface TrustAnchors {
  certs: string[];
  store: 'system' | 'bundled';
}

let defaultAnchors: TrustAnchors | undefined;
let defaultContext: tls.SecureContext | undefined;

/**
 * The system's trust store plus NODE_EXTRA_CA_CERTS (Node 22.15+/23.5+: `tls.getCACertificates`), or Node's
 * bundled Mozilla store when the system gives none. Read once per process.
 */
function systemAnchors(): TrustAnchors {
  if (!defaultAnchors) {
    const get = (tls as { getCACertificates?: (type: 'system' | 'extra') => string[] }).getCACertificates;
    const read = (type: 'system' | 'extra'): string[] => {
      try {
        return get ? get(type) : [];
      } catch {
        return [];
      }
    };
    const system = read('system');
    const extra = read('extra');
    defaultAnchors = {
      certs: [...new Set([...(system.length ? system : tls.rootCertificates), ...extra])],
      store: system.length ? 'system' : 'bundled',
    };
  }
  return defaultAnchors;
}

/** The main handshake's context: the trust anchors, a modern client's suites, TLS 1.0-1.3. Cached without extra anchors. */
function mainContext(extraCa: readonly string[] | undefined): { context: tls.SecureContext; store: TrustAnchors['store'] } {
  const anchors = systemAnchors();
  const make = (ca: string[]) => tls.createSecureContext({ ca, ciphers: MAIN_CIPHERS, minVersion: 'TLSv1', maxVersion: 'TLSv1.3' });
  if (extraCa?.length) return { context: make([...anchors.certs, ...extraCa]), store: anchors.store };
  defaultContext ??= make(anchors.certs);
  return { context: defaultContext, store: anchors.store };
}

/** The chain from the leaf up, as Node links it (`issuerCertificate`), at most {@link SSL_LIMITS}.maxChain. */
function chainOf(peer: tls.DetailedPeerCertificate, now: number): CertificateInfo[] {
  const out: CertificateInfo[] = [];
  const seen = new Set<string>();
  for (let c: tls.DetailedPeerCertificate | undefined = peer; c?.raw && out.length < SSL_LIMITS.maxChain; c = c.issuerCertificate) {
    const info = describeCertificate(c.raw, now);
    if (seen.has(info.fingerprint_sha256)) break; // a self-signed root is its own issuer
    seen.add(info.fingerprint_sha256);
    out.push(info);
  }
  return out;
}

/**
 * `GET /` over the main connection: the status and the first Strict-Transport-Security header (RFC 6797 8.1).
 * Never throws: no HTTP answer gives `{status: null, header: null}`. Ends the socket.
 */
function readHsts(socket: tls.TLSSocket, hostHeader: string, timeoutMs: number): Promise<{ status: number | null; header: string | null }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: { status: number | null; header: string | null }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      socket.destroy();
      resolve(v);
    };
    const req = http.request({
      createConnection: () => socket,
      method: 'GET',
      path: '/',
      headers: { host: hostHeader, 'user-agent': DEFAULT_USER_AGENT, accept: '*/*', connection: 'close' },
    }, (res) => {
      let header: string | null = null;
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
        if (res.rawHeaders[i]!.toLowerCase() === 'strict-transport-security') {
          header = res.rawHeaders[i + 1]!;
          break;
        }
      }
      done({ status: res.statusCode ?? null, header });
    });
    req.on('error', () => done({ status: null, header: null }));
    const timer = setTimeout(() => done({ status: null, header: null }), timeoutMs);
    req.end();
  });
}

/** The probes for a server whose main handshake negotiated `version` with a cipher of `bits` bits. */
function probesFor(version: TlsVersion, bits: number): Probe[] {
  const probes: Probe[] = TLS_VERSIONS.slice(0, TLS_VERSIONS.indexOf(version)).map((v) => ({
    kind: 'version' as const, version: v, minVersion: v, maxVersion: v, ciphers: LEGACY_CIPHERS,
  }));
  const legacy = { minVersion: 'TLSv1' as const, maxVersion: 'TLSv1.2' as const };
  probes.push({ kind: 'non_forward_secret', ...legacy, ciphers: 'kRSA:!aNULL:!eNULL:!PSK:@SECLEVEL=0' });
  probes.push({ kind: 'cbc', ...legacy, ciphers: 'ALL:!AESGCM:!AESCCM:!CHACHA20:!ARIAGCM:!aNULL:!eNULL:!PSK:!SRP:@SECLEVEL=0' });
  probes.push({ kind: 'insecure', ...legacy, ciphers: 'aNULL:eNULL:!PSK:!SRP:@SECLEVEL=0' });
  // The other strength class than the one negotiated, so that strongest and weakest are both known.
  probes.push(bits >= 256
    ? { kind: 'strength', minVersion: 'TLSv1', maxVersion: 'TLSv1.3', ciphers: 'TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256:AES128:!aNULL:!eNULL:!PSK:!SRP:@SECLEVEL=0' }
    : { kind: 'strength', minVersion: 'TLSv1', maxVersion: 'TLSv1.3', ciphers: 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:AES256:CHACHA20:!aNULL:!eNULL:!PSK:!SRP:@SECLEVEL=0' });
  return probes.slice(0, SSL_LIMITS.maxHandshakes - 1);
}

/** A probe's outcome: the handshake's details, `rejected` (the server refused it in TLS), or `inconclusive` (network trouble, time-out). */
type ProbeOutcome = { probe: Probe; result: HandshakeInfo | 'rejected' | 'inconclusive' };

async function runProbe(probe: Probe, connectTo: tls.ConnectionOptions, timeoutMs: number, signal: AbortSignal | undefined): Promise<ProbeOutcome> {
  if (timeoutMs <= 0) return { probe, result: 'inconclusive' };
  try {
    const { socket } = await handshake({ ...connectTo, minVersion: probe.minVersion, maxVersion: probe.maxVersion, ciphers: probe.ciphers }, timeoutMs, signal);
    try {
      return { probe, result: negotiated(socket) };
    } finally {
      socket.destroy();
    }
  } catch (err) {
    const e = err as HandshakeError;
    const code = (e.cause as { code?: string } | undefined)?.code ?? '';
    if (e.tcpConnected && code !== 'ETIMEDOUT' && code !== 'ABORT_ERR') return { probe, result: 'rejected' };
    // A local refusal to build the ClientHello (no suite of the list available) is "not accepted" too.
    if (/^ERR_SSL_/.test(code) && !e.tcpConnected) return { probe, result: 'rejected' };
    return { probe, result: 'inconclusive' };
  }
}

/** The port the SSL checker checks when the plan says nothing else (HTTPS). */
const SSL_DEFAULT_PORT = 443;

/**
 * The port a call checks: its `port`, else the URL's own, else {@link SSL_DEFAULT_PORT} (the handler's rule).
 * @throws CodedError `invalid_url` for a URL that is not an absolute http(s) URL.
 */
export function sslCheckPort(body: { url: string; port?: number }): number {
  const url = parseTargetUrl(body.url);
  return body.port ?? (url.port ? Number(url.port) : SSL_DEFAULT_PORT);
}

/**
 * Refuses a call on a port other than 443 unless the account's plan has `ssl_checker_any_port`
 * (lambdas/core/plans.json): the checker connects to the port it is given, so any other port would let a caller
 * probe which ports of public hosts are open. Called before the call is metered, so a refusal costs nothing.
 * @throws CodedError `plan_required` (403) with `details: [{plan, required: 'ssl_checker_any_port', plans_with_it}]`;
 *   `invalid_url` for a URL that does not parse.
 */
export function checkSslPortAllowed(catalog: Pick<PlanCatalog, 'plans'>, planName: string, body: { url: string; port?: number }): void {
  const port = sslCheckPort(body);
  // A plan the catalog lacks is refused as such (403 plan_unknown) by the metering that follows.
  if (port === SSL_DEFAULT_PORT || !catalog.plans[planName] || catalog.plans[planName].ssl_checker_any_port === true) return;
  const withIt = Object.values(catalog.plans).filter((p) => p.ssl_checker_any_port === true).map((p) => p.name);
  throw new CodedError('plan_required', `The ${planName} plan checks port ${SSL_DEFAULT_PORT} only (asked: ${port}); `
    + `${withIt.length ? `plans that check any port: ${withIt.join(', ')}` : 'no plan checks other ports'}`, [{ plan: planName, required: 'ssl_checker_any_port', plans_with_it: withIt }]);
}

/**
 * Checks the TLS configuration of `host:port` (the file's comment gives the steps).
 *
 * **Example usage:**
 * ```ts
 * const report = await checkSsl('example.com', 443, { guard: svc.guard, signal: call.signal });
 * report.grade; // 'A+'
 * ```
 * @throws CodedError `invalid_url` or `invalid_request` for a bad host or port; `target_forbidden` when the guard
 *   refuses the address (before any socket for an IP literal; at resolution for a name); `target_unreachable`
 *   with `details: [{url, reason}]`, reason `dns`, `refused`, `reset`, `timeout`, `tls` (no TLS handshake: not a
 *   TLS server, or no common protocol) or `network`, when the main handshake does not complete.
 */
export async function checkSsl(host: string, port: number, options: SslCheckOptions): Promise<SslReport> {
  const target = parseTarget(host, port, options.guard);
  const started = Date.now();
  const budget = options.timeoutMs ?? SSL_LIMITS.timeoutMs;
  const remaining = () => budget - (Date.now() - started);
  const signal = options.signal;
  const { context, store } = mainContext(options.ca);
  const servername = target.isIp ? undefined : target.host; // SNI carries names only (RFC 6066 section 3)

  let main: Connected;
  try {
    main = await handshake({
      host: target.host, port, ...(servername ? { servername } : {}), lookup: options.guard.lookup as unknown as net.LookupFunction,
      secureContext: context, requestOCSP: true,
    }, Math.min(SSL_LIMITS.mainHandshakeMs, budget), signal);
  } catch (err) {
    throw unreachable(target.url, err as HandshakeError);
  }

  const now = Date.now();
  const socket = main.socket;
  const peer = socket.getPeerCertificate(true);
  if (!peer?.raw) {
    socket.destroy();
    throw new CodedError('target_unreachable', `${target.url} could not be checked: it presented no certificate`, [{ url: target.url, reason: 'tls' }]);
  }
  const chain = chainOf(peer, now);
  const certificate = chain[0]!;
  const first = negotiated(socket);
  // A root's self-signature is not checked by anyone; the leaf's and the intermediates' are.
  const signed = chain.filter((c, i) => !(i === chain.length - 1 && i > 0 && c.subject === c.issuer));
  // The handshake runs at security level 0 so that old servers answer; OpenSSL's default level refuses MD5 and
  // SHA-1 certificate signatures (X509_V_ERR_CA_MD_TOO_WEAK), and so do browsers: say so as OpenSSL would.
  const weakSignature = signed.some((c) => /md5|md2|sha1(?!\d)/i.test(c.signature_algorithm));
  let authorizationError = socket.authorized ? null : String(socket.authorizationError ?? 'UNKNOWN');
  if (weakSignature && (authorizationError === null || authorizationError === 'ERR_TLS_CERT_ALTNAME_INVALID')) authorizationError = 'CA_MD_TOO_WEAK';
  const hostnameMatch = tls.checkServerIdentity(target.host, peer) === undefined;

  // Probes go to the address the main handshake reached (the guard's lookup chose it), so every answer comes
  // from the same server and the name is resolved once.
  const address = socket.remoteAddress;
  const connectTo: tls.ConnectionOptions = {
    host: address ?? target.host, port, ...(servername ? { servername } : {}), lookup: options.guard.lookup as unknown as net.LookupFunction,
  };
  const probeTimeout = () => Math.min(SSL_LIMITS.probeMs, remaining());
  const [answer, outcomes] = await Promise.all([
    readHsts(socket, target.hostHeader, probeTimeout()),
    Promise.all(probesFor(first.protocol, first.cipher.bits).map((p) => runProbe(p, connectTo, probeTimeout(), signal))),
  ]);
  if (signal?.aborted) {
    throw new CodedError('target_unreachable', `${target.url} could not be checked: the check did not finish in time`, [{ url: target.url, reason: 'timeout' }]);
  }

  const protocols = Object.fromEntries(TLS_VERSIONS.map((v) => [v, v === first.protocol])) as Record<TlsVersion, boolean>;
  const handshakes: HandshakeInfo[] = [first];
  const inconclusive: string[] = [];
  const outcome = (kind: Probe['kind']): boolean | null => {
    const o = outcomes.find((x) => x.probe.kind === kind);
    if (!o || o.result === 'inconclusive') return null;
    return o.result !== 'rejected';
  };
  for (const o of outcomes) {
    if (o.result === 'inconclusive') inconclusive.push(o.probe.kind === 'version' ? VERSION_LABEL[o.probe.version!] : o.probe.kind.replace(/_/g, ' '));
    if (typeof o.result === 'object') {
      handshakes.push(o.result);
      protocols[o.result.protocol] = true;
    }
  }
  const bits = handshakes.map((h) => h.cipher.bits);
  const kx = handshakes.map((h) => h.keyExchangeBits).filter((b): b is number => b !== null);
  const hsts = parseHsts(answer.header, answer.status);
  const ciphers: CipherSupport = {
    strongest_bits: Math.max(...bits),
    weakest_bits: Math.min(...bits),
    accepts_non_forward_secret: outcome('non_forward_secret'),
    accepts_cbc: outcome('cbc'),
    accepts_insecure: outcome('insecure'),
  };
  const graded = gradeServer({
    protocols,
    negotiated: { protocol: first.protocol, forwardSecrecy: first.cipher.forward_secrecy, aead: first.cipher.aead, bits: first.cipher.bits },
    strongestBits: ciphers.strongest_bits,
    weakestBits: ciphers.weakest_bits,
    keyExchangeBits: kx.length ? Math.min(...kx) : null,
    certificateKeyBits: certificateKeyStrength(certificate),
    signatures: signed.map((c) => c.signature_algorithm),
    chainTrusted: authorizationError === null || authorizationError === 'ERR_TLS_CERT_ALTNAME_INVALID',
    hostnameMatch,
    authorizationError,
    daysToExpiry: certificate.days_to_expiry,
    hsts,
    acceptsInsecureSuites: ciphers.accepts_insecure,
    acceptsNonForwardSecret: ciphers.accepts_non_forward_secret,
    acceptsCbc: ciphers.accepts_cbc,
  });
  const findings = [...graded.findings];
  if (inconclusive.length) findings.push({ id: 'probe_inconclusive', cap: null, message: `Probes without an answer (network error or time-out), counted as not accepted: ${inconclusive.join(', ')}.` });
  if (store === 'bundled') findings.push({ id: 'trust_store_bundled', cap: null, message: "The system's trust store is empty; Node's bundled Mozilla store was used." });

  return {
    host: target.host,
    port,
    certificate,
    chain,
    hostname_match: hostnameMatch,
    authorized: authorizationError === null,
    authorization_error: authorizationError,
    trust_store: store,
    protocol: first.protocol,
    cipher: first.cipher,
    protocols,
    ciphers,
    hsts,
    ocsp_stapled: main.ocsp !== null,
    grade: graded.grade,
    grade_ignoring_trust: graded.grade_ignoring_trust,
    score: graded.score,
    findings,
    handshakes: 1 + outcomes.length,
  };
}

const certificateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['subject', 'issuer', 'san', 'valid_from', 'valid_to', 'days_to_expiry', 'key_type', 'key_bits', 'signature_algorithm', 'fingerprint_sha256', 'serial_number'],
  properties: {
    subject: { type: 'string' },
    issuer: { type: 'string' },
    san: { type: 'array', items: { type: 'string' } },
    valid_from: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$' },
    valid_to: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$' },
    days_to_expiry: { type: 'integer' },
    key_type: { type: 'string', minLength: 1 },
    key_bits: { type: ['integer', 'null'], minimum: 1 },
    signature_algorithm: { type: 'string', minLength: 1 },
    fingerprint_sha256: { type: 'string', pattern: '^[0-9A-F]{2}(:[0-9A-F]{2}){31}$' },
    serial_number: { type: 'string', pattern: '^[0-9A-F]+$' },
  },
} as const;

const versionsSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...TLS_VERSIONS],
  properties: Object.fromEntries(TLS_VERSIONS.map((v) => [v, { type: 'boolean' }])),
} as const;

const gradeSchema = { type: 'string', enum: [...GRADES] } as const;

/**
 * JSON Schema of {@link SslReport}, what {@link checkSsl} returns: closed objects, keywords common to drafts 07 and
 * 2020-12, no `$schema`, so ajv 8's `Ajv` and `Ajv2020` compile it in strict mode (with `allowUnionTypes`).
 * The tool's answer adds `url`: {@link sslReportSchema}.
 */
export const sslCheckSchema = {
  $id: 'https://scrape-ai.dev/schemas/tools/ssl-check.json',
  title: 'SslCheck',
  type: 'object',
  additionalProperties: false,
  required: [
    'host', 'port', 'certificate', 'chain', 'hostname_match', 'authorized', 'authorization_error', 'trust_store', 'protocol', 'cipher',
    'protocols', 'ciphers', 'hsts', 'ocsp_stapled', 'grade', 'grade_ignoring_trust', 'score', 'findings', 'handshakes',
  ],
  properties: {
    host: { type: 'string', minLength: 1 },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    certificate: certificateSchema,
    chain: { type: 'array', minItems: 1, maxItems: SSL_LIMITS.maxChain, items: certificateSchema },
    hostname_match: { type: 'boolean' },
    authorized: { type: 'boolean' },
    authorization_error: { type: ['string', 'null'], minLength: 1 },
    trust_store: { type: 'string', enum: ['system', 'bundled'] },
    protocol: { type: 'string', enum: [...TLS_VERSIONS] },
    cipher: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'openssl_name', 'bits', 'forward_secrecy', 'aead', 'key_exchange_group'],
      properties: {
        name: { type: 'string', minLength: 1 },
        openssl_name: { type: 'string', minLength: 1 },
        bits: { type: 'integer', minimum: 0 },
        forward_secrecy: { type: 'boolean' },
        aead: { type: 'boolean' },
        key_exchange_group: { type: ['string', 'null'] },
      },
    },
    protocols: versionsSchema,
    ciphers: {
      type: 'object',
      additionalProperties: false,
      required: ['strongest_bits', 'weakest_bits', 'accepts_non_forward_secret', 'accepts_cbc', 'accepts_insecure'],
      properties: {
        strongest_bits: { type: 'integer', minimum: 0 },
        weakest_bits: { type: 'integer', minimum: 0 },
        accepts_non_forward_secret: { type: ['boolean', 'null'] },
        accepts_cbc: { type: ['boolean', 'null'] },
        accepts_insecure: { type: ['boolean', 'null'] },
      },
    },
    hsts: {
      type: 'object',
      additionalProperties: false,
      required: ['present', 'valid', 'max_age', 'include_subdomains', 'preload', 'header', 'http_status'],
      properties: {
        present: { type: 'boolean' },
        valid: { type: 'boolean' },
        max_age: { type: ['integer', 'null'], minimum: 0 },
        include_subdomains: { type: 'boolean' },
        preload: { type: 'boolean' },
        header: { type: ['string', 'null'] },
        http_status: { type: ['integer', 'null'], minimum: 100, maximum: 999 },
      },
    },
    ocsp_stapled: { type: 'boolean' },
    grade: gradeSchema,
    grade_ignoring_trust: { type: 'string', enum: GRADES.filter((g) => g !== 'T' && g !== 'M') },
    score: {
      type: 'object',
      additionalProperties: false,
      required: ['protocol', 'key_exchange', 'cipher_strength', 'total'],
      properties: {
        protocol: { type: 'number', minimum: 0, maximum: 100 },
        key_exchange: { type: 'number', minimum: 0, maximum: 100 },
        cipher_strength: { type: 'number', minimum: 0, maximum: 100 },
        total: { type: 'number', minimum: 0, maximum: 100 },
      },
    },
    findings: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'cap', 'message'],
        properties: {
          id: { type: 'string', pattern: '^[a-z0-9_]+$' },
          cap: { type: ['string', 'null'], enum: [...GRADES, null] },
          message: { type: 'string', minLength: 1 },
        },
      },
    },
    handshakes: { type: 'integer', minimum: 1, maximum: SSL_LIMITS.maxHandshakes },
  },
} as const;

/** JSON Schema of the SSL checker's answer (POST /api/v1/tools/ssl-checker/): `url` and the {@link SslReport}. */
export const sslReportSchema = withTargetUrl(sslCheckSchema, 'https://scrape-ai.dev/schemas/tools/ssl-checker.json', 'SslReport');
