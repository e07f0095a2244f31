/**
 * What the SSL checker says about one certificate (lambdas/tools/ssl.ts): its names, validity, key and
 * fingerprint, read from the DER bytes with Node's `crypto.X509Certificate` (OpenSSL's parser), and the
 * strength of keys in the "RSA-equivalent bits" that SSL Labs' rating guide scores key exchange with.
 */
import { X509Certificate } from 'node:crypto';

/** One certificate of the server's chain, as the SSL checker reports it. */
export interface CertificateInfo {
  /** The subject's distinguished name as an RFC 4514 string, last RDN first (`CN=example.com,O=Example,C=US`), as `openssl x509 -nameopt RFC2253` prints it. */
  subject: string;
  /** The issuer's distinguished name, same form. */
  issuer: string;
  /**
   * The DNS names and IP addresses of the subjectAltName extension, in the certificate's order (`example.com`,
   * `*.example.com`, `192.0.2.1`): the names browsers match the host against (RFC 6125). Other kinds (email,
   * URI) are left out. Empty when the extension is absent.
   */
  san: string[];
  /** notBefore, ISO 8601 UTC (`2026-01-01T00:00:00.000Z`). */
  valid_from: string;
  /** notAfter, ISO 8601 UTC. */
  valid_to: string;
  /** Whole days from the check to notAfter, rounded down; negative once expired. */
  days_to_expiry: number;
  /** The public key's algorithm: `RSA`, `RSA-PSS`, `EC`, `Ed25519`, `Ed448`, `DSA`, or another name in upper case. */
  key_type: string;
  /** The key's size in bits: the modulus for RSA and DSA, the curve's field size for EC (256 for P-256), 256 for Ed25519, 456 for Ed448; null when unknown. */
  key_bits: number | null;
  /** The certificate's signature algorithm, OpenSSL's long name: `sha256WithRSAEncryption`, `ecdsa-with-SHA256`, `ED25519`, `RSASSA-PSS`. */
  signature_algorithm: string;
  /** SHA-256 of the DER certificate, colon-separated upper-case hex, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint_sha256: string;
  /** The serial number, upper-case hex. */
  serial_number: string;
}

/**
 * A distinguished name as Node prints it (one `attr=value` per line, least specific first, values already
 * escaped the RFC 2253 way) turned into an RFC 4514 string (the RDNs in reverse order, `,` between them).
 */
export function rfc4514Name(multiline: string): string {
  return multiline.split('\n').filter(Boolean).reverse().join(',');
}

/**
 * The DNS names and IP addresses of Node's subjectAltName string (`DNS:a.test, IP Address:127.0.0.1`; values with
 * commas or quotes come JSON-quoted, since Node 17.3.1 / CVE-2021-44533).
 */
export function parseSubjectAltName(value: string | undefined): string[] {
  if (!value) return [];
  const out: string[] = [];
  const entry = /(?:^|, )([A-Za-z][A-Za-z ]*):("(?:[^"\\]|\\.)*"|[^,]*)/g;
  for (let m = entry.exec(value); m; m = entry.exec(value)) {
    const kind = m[1]!;
    if (kind !== 'DNS' && kind !== 'IP Address') continue;
    let v = m[2]!;
    if (v.startsWith('"')) {
      try {
        v = JSON.parse(v) as string;
      } catch { /* keep it quoted */ }
    }
    out.push(v);
  }
  return out;
}

/** Field size in bits of the named curves Node reports (`prime256v1`, `secp384r1`, …). */
function curveBits(name: string | undefined): number | null {
  if (!name) return null;
  const known: Record<string, number> = { prime256v1: 256, secp256r1: 256, secp256k1: 256, secp384r1: 384, secp521r1: 521, prime192v1: 192, secp224r1: 224 };
  if (known[name] !== undefined) return known[name]!;
  const digits = /(\d{3})/.exec(name);
  return digits ? Number(digits[1]) : null;
}

/** The key's type and size as reported in {@link CertificateInfo}. */
function keyOf(x: X509Certificate): { type: string; bits: number | null } {
  const key = x.publicKey;
  const type = key.asymmetricKeyType ?? 'unknown';
  const details = key.asymmetricKeyDetails ?? {};
  switch (type) {
    case 'rsa': return { type: 'RSA', bits: details.modulusLength ?? null };
    case 'rsa-pss': return { type: 'RSA-PSS', bits: details.modulusLength ?? null };
    case 'dsa': return { type: 'DSA', bits: details.modulusLength ?? null };
    case 'ec': return { type: 'EC', bits: curveBits(details.namedCurve) };
    case 'ed25519': return { type: 'Ed25519', bits: 256 };
    case 'ed448': return { type: 'Ed448', bits: 456 };
    default: return { type: type.toUpperCase(), bits: null };
  }
}

/**
 * Describes a certificate from its DER bytes.
 * @param now the time of the check (ms since the epoch), for `days_to_expiry`.
 * @throws Error when the bytes are not a certificate OpenSSL can parse.
 */
export function describeCertificate(der: Buffer, now: number): CertificateInfo {
  const x = new X509Certificate(der);
  const key = keyOf(x);
  const validTo = x.validToDate;
  return {
    subject: rfc4514Name(x.subject),
    issuer: rfc4514Name(x.issuer),
    san: parseSubjectAltName(x.subjectAltName),
    valid_from: x.validFromDate.toISOString(),
    valid_to: validTo.toISOString(),
    days_to_expiry: Math.floor((validTo.getTime() - now) / 86_400_000),
    key_type: key.type,
    key_bits: key.bits,
    signature_algorithm: x.signatureAlgorithm ?? x.signatureAlgorithmOid,
    fingerprint_sha256: x.fingerprint256,
    serial_number: x.serialNumber.toUpperCase(),
  };
}

/**
 * RSA-equivalent strength of an elliptic-curve size in bits (NIST SP 800-57 Part 1 Rev. 5, Table 2: 224-bit
 * ECC ~ 2048-bit RSA, 256 ~ 3072, 384 ~ 7680, 512+ ~ 15360), as SSL Labs converts ECDSA keys (SSL Pulse:
 * "256-bit ECDSA keys have strength equivalent to that of 3072-bit RSA keys").
 */
function ecEquivalent(bits: number): number {
  if (bits >= 512) return 15360;
  if (bits >= 384) return 7680;
  if (bits >= 250) return 3072; // X25519 reports 253
  if (bits >= 224) return 2048;
  if (bits >= 160) return 1024;
  return 512;
}

/** RSA-equivalent strength of a certificate key (the key exchange's authentication part); null when unknown. */
export function certificateKeyStrength(cert: Pick<CertificateInfo, 'key_type' | 'key_bits'>): number | null {
  if (cert.key_bits === null) return null;
  switch (cert.key_type) {
    case 'RSA': case 'RSA-PSS': case 'DSA': return cert.key_bits;
    case 'EC': return ecEquivalent(cert.key_bits);
    case 'Ed25519': return 3072;
    case 'Ed448': return 7680;
    default: return null;
  }
}

/**
 * RSA-equivalent strength of the ephemeral key exchange of a handshake, from `TLSSocket#getEphemeralKeyInfo()`:
 * `{type: 'DH', size}` (the DH group size itself), `{type: 'ECDH', name, size}`, or on TLS 1.3
 * `{type: 'TLSGroup', name}` (X25519, P-256, ffdhe2048, or a hybrid such as X25519MLKEM768, rated by its
 * classical part). Null when there was none (RSA key exchange) or the group is unknown.
 */
export function ephemeralStrength(info: { type?: string; name?: string; size?: number } | null | undefined): number | null {
  if (!info || !info.type) return null;
  if (info.type === 'DH') return info.size ?? null;
  const name = (info.name ?? '').toLowerCase();
  const ffdhe = /^ffdhe(\d+)$/.exec(name);
  if (ffdhe) return Number(ffdhe[1]);
  if (/x448/.test(name)) return 7680;
  if (/x25519|p-?256|secp256r1|prime256v1|brainpoolp256/.test(name)) return 3072;
  if (/p-?384|secp384r1|brainpoolp384/.test(name)) return 7680;
  if (/p-?521|secp521r1|brainpoolp512/.test(name)) return 15360;
  if (/^mlkem(512|768|1024)$/.test(name)) return name.endsWith('512') ? 3072 : name.endsWith('768') ? 7680 : 15360;
  if (info.type === 'ECDH' && info.size) return ecEquivalent(info.size);
  return null;
}
