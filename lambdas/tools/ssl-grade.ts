/**
 * The SSL checker's grade (lambdas/tools/ssl.ts): SSL Labs' SSL Server Rating Guide, numerical part of version
 * 2009 (github.com/ssllabs/research, docs/SSL_Server_Rating_Guide.xml, and the wiki page "SSL Server Rating
 * Guide") with the caps SSL Labs announced since (Qualys blog posts cited per rule below). The whole rule set,
 * with what this checker can and cannot probe, is in docs/tools.md ("ssl-checker").
 *
 * 1. Three category scores, 0-100: protocol support (best and worst protocol averaged), key exchange (the weakest
 *    key or DH/ECDH group seen, in RSA-equivalent bits) and cipher strength (strongest and weakest cipher averaged).
 * 2. score = 0.3 protocol + 0.3 key exchange + 0.4 cipher strength; a zero category makes the score zero.
 * 3. Letter: A >= 80, B >= 65, C >= 50, D >= 35, E >= 20, else F.
 * 4. Caps: each rule that fires lowers the letter to at most its cap.
 * 5. A+ for an uncapped A whose server sends a valid HSTS header with max-age >= 180 days.
 * 6. Trust: a certificate that does not validate gives T, a valid one for another name gives M (the guide's
 *    "out of scope" grades); `grade_ignoring_trust` keeps the grade steps 1-5 gave, as SSL Labs shows it.
 */

/** A letter grade. T: certificate not trusted; M: certificate name mismatch (SSL Server Rating Guide). */
export type Grade = 'A+' | 'A' | 'B' | 'C' | 'D' | 'E' | 'F' | 'T' | 'M';

/** The grades, best first, for JSON Schemas and comparisons. */
export const GRADES: readonly Grade[] = ['A+', 'A', 'B', 'C', 'D', 'E', 'F', 'T', 'M'];

/** The protocol versions probed, as `TLSSocket#getProtocol()` names them. */
export type TlsVersion = 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';

export const TLS_VERSIONS: readonly TlsVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

/** One observation of the check: a rule that lowered the grade (`cap`), or a note that did not (`cap: null`). */
export interface SslFinding {
  /** A stable identifier (`tls_1_0_supported`, `no_forward_secrecy`, `certificate_not_trusted`, …; docs/tools.md lists them). */
  id: string;
  /** The highest grade the rule allows, or null for a note that does not change the grade. */
  cap: Grade | null;
  /** What was seen, in words. */
  message: string;
}

/** The category scores and the weighted total, 0-100 (SSL Server Rating Guide, "Scoring"). */
export interface SslScore {
  protocol: number;
  key_exchange: number;
  cipher_strength: number;
  /** 0.3 protocol + 0.3 key exchange + 0.4 cipher strength, one decimal; 0 when a category is 0. */
  total: number;
}

/** The parsed Strict-Transport-Security header (RFC 6797, section 6.1). */
export interface HstsInfo {
  /** A Strict-Transport-Security header was in the answer to `GET /`. */
  present: boolean;
  /** The header follows RFC 6797's grammar: max-age given once as delta-seconds, no directive twice (a browser ignores it otherwise). */
  valid: boolean;
  /** `max-age` in seconds; null when absent or not a number. */
  max_age: number | null;
  include_subdomains: boolean;
  /** The `preload` directive (hstspreload.org's requirement; not part of RFC 6797). */
  preload: boolean;
  /** The first header's value as received (RFC 6797 8.1: only the first one counts); null when absent. */
  header: string | null;
  /** HTTP status of the answer to `GET /`; null when the server gave no HTTP answer over TLS. */
  http_status: number | null;
}

/** What the grade is computed from: the probes' results. */
export interface GradeInput {
  protocols: Record<TlsVersion, boolean>;
  /** The suite negotiated with a modern client's preference list (the main handshake). */
  negotiated: { protocol: string; forwardSecrecy: boolean; aead: boolean; bits: number };
  /** Strongest and weakest cipher strength (bits) over every successful handshake. */
  strongestBits: number;
  weakestBits: number;
  /** Weakest key exchange over every successful handshake, RSA-equivalent bits (the certificate key and the DH/ECDH group); 0 for an anonymous suite; null when unknown. */
  keyExchangeBits: number | null;
  /** The certificate key alone, RSA-equivalent bits (null when unknown). */
  certificateKeyBits: number | null;
  /** Signature algorithms of the leaf and intermediate certificates (a root's self-signature does not count). */
  signatures: string[];
  /** The chain validates against the trust store (name aside). */
  chainTrusted: boolean;
  hostnameMatch: boolean;
  /** The verification error (OpenSSL's or Node's code), null when none. */
  authorizationError: string | null;
  daysToExpiry: number;
  hsts: HstsInfo;
  /** The server accepted a suite without authentication or without encryption (aNULL/eNULL); null: not probed. */
  acceptsInsecureSuites: boolean | null;
  /** The server accepted a suite without forward secrecy (RSA key exchange); null: not probed. */
  acceptsNonForwardSecret: boolean | null;
  /** The server accepted a CBC (non-AEAD) suite; null: not probed. */
  acceptsCbc: boolean | null;
}

/** The grade and how it came about. */
export interface GradeResult {
  grade: Grade;
  /** The grade when certificate trust and name are set aside (never T or M). */
  grade_ignoring_trust: Grade;
  score: SslScore;
  findings: SslFinding[];
}

/** HSTS max-age needed for A+: 180 days (SSL Labs' "long max-age"; 15,552,000 s, as SSL Labs applies it). */
const HSTS_MIN_MAX_AGE = 15_552_000;

/** Protocol support scores (guide, table "Protocol support rating guide"; TLS 1.3 scores as TLS 1.2). */
const PROTOCOL_SCORE: Record<TlsVersion, number> = { TLSv1: 90, 'TLSv1.1': 95, 'TLSv1.2': 100, 'TLSv1.3': 100 };

/** Key exchange score of a key or group strength in RSA-equivalent bits (guide, "Key exchange rating guide"). */
export function keyExchangeScore(bits: number): number {
  if (bits <= 0) return 0;
  if (bits < 512) return 20;
  if (bits < 1024) return 40;
  if (bits < 2048) return 80;
  if (bits < 4096) return 90;
  return 100;
}

/** Cipher strength score of a symmetric cipher's strength in bits (guide, "Cipher strength rating guide"). */
export function cipherStrengthScore(bits: number): number {
  if (bits <= 0) return 0;
  if (bits < 128) return 20;
  if (bits < 256) return 80;
  return 100;
}

/** The letter of a numerical score (guide, table "Letter grade translation"). */
export function letterOf(score: number): Grade {
  if (score >= 80) return 'A';
  if (score >= 65) return 'B';
  if (score >= 50) return 'C';
  if (score >= 35) return 'D';
  if (score >= 20) return 'E';
  return 'F';
}

const RANK: Record<Grade, number> = { 'A+': 0, A: 1, B: 2, C: 3, D: 4, E: 5, F: 6, T: 7, M: 7 };

/** The worse of two letters A+..F. */
function worse(a: Grade, b: Grade): Grade {
  return RANK[a] >= RANK[b] ? a : b;
}

/** The versions in words. */
export const VERSION_LABEL: Record<TlsVersion, string> = { TLSv1: 'TLS 1.0', 'TLSv1.1': 'TLS 1.1', 'TLSv1.2': 'TLS 1.2', 'TLSv1.3': 'TLS 1.3' };

/**
 * Grades a server from what the probes saw (the file's comment gives the steps; docs/tools.md the sources).
 *
 * **Example usage:**
 * ```ts
 * const { grade, score, findings } = gradeServer(input);
 * ```
 */
export function gradeServer(input: GradeInput): GradeResult {
  const findings: SslFinding[] = [];
  const add = (id: string, cap: Grade | null, message: string) => findings.push({ id, cap, message });

  // 1-2. The numerical score.
  const supported = (Object.keys(input.protocols) as TlsVersion[]).filter((v) => input.protocols[v]);
  const protoScores = supported.map((v) => PROTOCOL_SCORE[v]);
  const protocol = protoScores.length ? (Math.max(...protoScores) + Math.min(...protoScores)) / 2 : 0;
  const keyExchange = input.keyExchangeBits === null ? 0 : keyExchangeScore(input.keyExchangeBits);
  const cipher = (cipherStrengthScore(input.strongestBits) + cipherStrengthScore(input.weakestBits)) / 2;
  const raw = protocol && keyExchange && cipher ? 0.3 * protocol + 0.3 * keyExchange + 0.4 * cipher : 0;
  const total = Math.round(raw * 10) / 10;
  let grade = letterOf(raw);

  // 4. Caps, each with the announcement that introduced it.
  const old = (['TLSv1', 'TLSv1.1'] as const).filter((v) => input.protocols[v]);
  if (old.length) {
    // Qualys, "SSL Labs Grade Change for TLS 1.0 and TLS 1.1 Protocols" (2018-11-19; live 2020-01-31): capped to B.
    add('tls_1_0_or_1_1_supported', 'B', `The server accepts ${old.map((v) => VERSION_LABEL[v]).join(' and ')}, deprecated since 2021 (RFC 8996).`);
  }
  if (!input.protocols['TLSv1.2'] && !input.protocols['TLSv1.3']) {
    // Rating guide 2009e (2014): no TLS 1.2 caps to B; raised to C in 2015 (Qualys, "No Change to RC4 Grading in September").
    add('no_tls_1_2', 'C', 'The server accepts neither TLS 1.2 nor TLS 1.3.');
  }
  if (!input.negotiated.forwardSecrecy) {
    // Qualys, "SSL Labs Grading Update: Forward Secrecy, Authenticated Encryption and ROBOT" (2018-02-02): capped to B.
    add('no_forward_secrecy', 'B', 'A modern client that offers ECDHE suites first still gets a suite without forward secrecy (RSA key exchange).');
  }
  if (!input.negotiated.aead) {
    // Same announcement: no AEAD suite negotiated with clients that support one caps to B.
    add('no_aead', 'B', 'A modern client that offers AEAD suites (GCM, ChaCha20-Poly1305) first still gets a CBC suite.');
  }
  if (input.certificateKeyBits !== null && input.certificateKeyBits < 1024) {
    // Qualys, "SSL Labs: Stricter Security Requirements for 2014" (2014-01-21): keys below 1024 bits are insecure, F.
    add('insecure_key', 'F', `The certificate key is weaker than 1024-bit RSA (${input.certificateKeyBits} RSA-equivalent bits).`);
  } else if (input.certificateKeyBits !== null && input.certificateKeyBits < 2048) {
    // Same post: keys below 2048 bits are weak, capped to B.
    add('weak_key', 'B', `The certificate key is weaker than 2048-bit RSA (${input.certificateKeyBits} RSA-equivalent bits).`);
  }
  if (input.signatures.some((s) => /md5|md2/i.test(s))) {
    // Same post: MD5 certificate signatures are insecure, F.
    add('md5_signature', 'F', 'A certificate of the chain is signed with MD5 or MD2.');
  }
  if (input.acceptsInsecureSuites) {
    // Guide: anonymous key exchange and no encryption score 0% in their category, which makes the score 0 (F).
    add('insecure_suites', 'F', 'The server accepts a suite without authentication (anonymous) or without encryption (NULL).');
  }
  for (const f of findings) if (f.cap) grade = worse(grade, f.cap);

  // 5. A+.
  const hstsLong = input.hsts.valid && (input.hsts.max_age ?? 0) >= HSTS_MIN_MAX_AGE;
  if (grade === 'A' && !findings.some((f) => f.cap) && hstsLong) grade = 'A+';

  // Notes that do not change the grade.
  if (!input.hsts.present) add('hsts_missing', null, input.hsts.http_status === null ? 'No HTTP answer over TLS to GET /, so no Strict-Transport-Security header was seen.' : 'No Strict-Transport-Security header in the answer to GET / (needed for A+).');
  else if (!input.hsts.valid) add('hsts_invalid', null, 'The Strict-Transport-Security header does not follow RFC 6797 (browsers ignore it).');
  else if (!hstsLong) add('hsts_short', null, `HSTS max-age is ${input.hsts.max_age} s, under the ${HSTS_MIN_MAX_AGE} s (180 days) A+ asks for.`);
  if (input.acceptsNonForwardSecret) add('non_forward_secret_suites', null, 'The server also accepts suites without forward secrecy (RSA key exchange) from clients that offer only those.');
  if (input.acceptsCbc) add('cbc_suites', null, 'The server also accepts CBC (non-AEAD) suites from clients that offer only those.');
  if (input.daysToExpiry >= 0 && input.daysToExpiry < 30) add('expires_soon', null, `The certificate expires in ${input.daysToExpiry} day(s).`);

  const gradeIgnoringTrust = grade;
  // 6. Trust.
  const sha1 = input.signatures.some((s) => /sha1(?!\d)|sha-1(?!\d)/i.test(s));
  if (sha1) {
    // Browsers have rejected SHA-1-signed server certificates since early 2017; SSL Labs lists them as not trusted.
    add('sha1_signature', 'T', 'A certificate of the chain is signed with SHA-1, which browsers no longer accept.');
  }
  if (!input.chainTrusted || sha1) {
    if (!input.chainTrusted) add('certificate_not_trusted', 'T', `The certificate chain does not validate: ${input.authorizationError ?? 'unknown error'}.`);
    grade = 'T';
  } else if (!input.hostnameMatch) {
    add('hostname_mismatch', 'M', 'The certificate is not valid for the host name.');
    grade = 'M';
  }

  return { grade, grade_ignoring_trust: gradeIgnoringTrust, score: { protocol, key_exchange: keyExchange, cipher_strength: cipher, total }, findings };
}

/**
 * Parses a Strict-Transport-Security value (RFC 6797, section 6.1): `;`-separated directives, names
 * case-insensitive, values a token or a quoted-string; `max-age` required (delta-seconds); a directive given twice
 * makes the header invalid (6.1 rule 2; a browser ignores such a header, 8.1); unknown directives are ignored (6.1
 * rule 5). `preload` is hstspreload.org's directive.
 */
export function parseHsts(header: string | null, httpStatus: number | null): HstsInfo {
  const out: HstsInfo = { present: header !== null, valid: false, max_age: null, include_subdomains: false, preload: false, header, http_status: httpStatus };
  if (header === null) return out;
  const seen = new Set<string>();
  let duplicate = false;
  let maxAgeOk = false;
  for (const part of header.split(';')) {
    const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^\s;]*)\s*)?$/.exec(part);
    if (!m) {
      if (part.trim()) duplicate = true; // not a directive: the header does not follow the grammar
      continue;
    }
    const name = m[1]!.toLowerCase();
    if (seen.has(name)) duplicate = true;
    seen.add(name);
    let value = m[2];
    if (value?.startsWith('"')) value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    if (name === 'max-age') {
      if (value !== undefined && /^\d+$/.test(value)) {
        out.max_age = Number(value);
        maxAgeOk = Number.isSafeInteger(out.max_age);
      }
    } else if (name === 'includesubdomains') {
      out.include_subdomains = true;
    } else if (name === 'preload') {
      out.preload = true;
    }
  }
  out.valid = maxAgeOk && !duplicate;
  return out;
}
