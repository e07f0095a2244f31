/**
 * Test certificates made at test time with the `openssl` CLI (OpenSSL 3.0 at /usr/bin/openssl, or the first
 * `openssl` on PATH): a root CA, an intermediate CA it signs, and leaf certificates the intermediate signs, with
 * the names, keys and validity periods the SSL checker's tests need. Nothing is written to the repository: keys and
 * certificates live in a temporary folder that {@link TlsFixtures.cleanup} removes.
 *
 * `openssl ca` signs the certificates because it, unlike `openssl x509 -req` in OpenSSL 3.0, takes explicit
 * `-startdate`/`-enddate`: expired and not-yet-valid certificates need dates in the past and the future.
 *
 * **Example usage:**
 * ```ts
 * const fx = await makeTlsFixtures();
 * const server = tls.createServer({ key: fx.leaves.valid.key, cert: fx.leaves.valid.cert + fx.intermediate.cert });
 * // … checkSsl(…, { ca: [fx.root.cert] }) …
 * await fx.cleanup();
 * ```
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The openssl binary: OPENSSL if set, /usr/bin/openssl when present, else `openssl` from PATH. */
async function opensslBin(): Promise<string> {
  if (process.env.OPENSSL) return process.env.OPENSSL;
  try {
    await fs.access('/usr/bin/openssl');
    return '/usr/bin/openssl';
  } catch {
    return 'openssl';
  }
}

/** Runs openssl with `args` in `cwd`; resolves with stdout. */
async function openssl(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const { stdout } = await run(await opensslBin(), args, { cwd: options.cwd, env: { ...process.env, ...options.env }, maxBuffer: 4 * 1024 * 1024 });
  return stdout;
}

/** A key pair and its certificate, PEM, with the files they are stored in. */
export interface KeyAndCert {
  key: string;
  cert: string;
  keyFile: string;
  certFile: string;
}

/** Key algorithms the fixtures make. */
type KeySpec = 'rsa2048' | 'rsa1024' | 'ec256' | 'ed25519';

/** What a leaf certificate looks like. */
interface LeafSpec {
  cn: string;
  /** subjectAltName value, OpenSSL syntax (`DNS:a.test,IP:127.0.0.1`). */
  san: string;
  key: KeySpec;
  /** `YYYYMMDDHHMMSSZ`; default now (openssl's default) */
  start?: string;
  /** `YYYYMMDDHHMMSSZ`; default start + 90 days */
  end?: string;
  /** Message digest of the signature. @default 'sha256' */
  md?: string;
}

/** The leaves the SSL checker's tests use, by purpose. */
interface Leaves {
  /** valid.test (and 127.0.0.1), RSA 2048, valid now for 90 days. */
  valid: KeyAndCert;
  /** ec.test, EC P-256. */
  ec: KeyAndCert;
  /** ed.test, Ed25519. */
  ed25519: KeyAndCert;
  /** expired.test, valid only in January 2020. */
  expired: KeyAndCert;
  /** future.test, valid from 2099. */
  future: KeyAndCert;
  /** other.test only: served for valid.test it is the wrong host. */
  other: KeyAndCert;
  /** self.test, self-signed (no CA). */
  selfSigned: KeyAndCert;
  /** weak.test, RSA 1024 (a server needs `@SECLEVEL=0` to load it). */
  weak: KeyAndCert;
  /** sha1.test, signed with SHA-1. */
  sha1: KeyAndCert;
}

/** Everything {@link makeTlsFixtures} made. */
export interface TlsFixtures {
  dir: string;
  root: KeyAndCert;
  intermediate: KeyAndCert;
  leaves: Leaves;
  /** Removes the temporary folder. */
  cleanup(): Promise<void>;
}

const CA_CONFIG = (dir: string) => `
[ ca ]
default_ca = fixture_ca
[ fixture_ca ]
dir = ${dir}/db
database = $dir/index.txt
new_certs_dir = $dir
serial = $dir/serial
default_md = sha256
policy = policy_any
unique_subject = no
email_in_dn = no
copy_extensions = none
default_days = 90
[ policy_any ]
commonName = supplied
organizationName = optional
[ ca_ext ]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ leaf_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = $ENV::FIXTURE_SAN
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

function keyArgs(spec: KeySpec): string[] {
  switch (spec) {
    case 'rsa2048': return ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'];
    case 'rsa1024': return ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024'];
    case 'ec256': return ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'];
    case 'ed25519': return ['-algorithm', 'ED25519'];
  }
}

/** Makes the CA, the intermediate and the leaves in a new temporary folder (about a second). */
export async function makeTlsFixtures(): Promise<TlsFixtures> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sai-tls-'));
  await fs.mkdir(path.join(dir, 'db'));
  await fs.writeFile(path.join(dir, 'db', 'index.txt'), '');
  await fs.writeFile(path.join(dir, 'db', 'serial'), '1000\n');
  const config = path.join(dir, 'ca.cnf');
  await fs.writeFile(config, CA_CONFIG(dir));
  const file = (name: string) => path.join(dir, name);

  const genkey = async (name: string, spec: KeySpec) => {
    await openssl(['genpkey', ...keyArgs(spec), '-out', file(`${name}.key`)]);
    return file(`${name}.key`);
  };
  const read = async (name: string): Promise<KeyAndCert> => ({
    key: await fs.readFile(file(`${name}.key`), 'utf8'),
    cert: await fs.readFile(file(`${name}.crt`), 'utf8'),
    keyFile: file(`${name}.key`),
    certFile: file(`${name}.crt`),
  });
  // `openssl ca` keeps a database: sign one certificate at a time.
  const sign = async (name: string, issuer: string, ext: string, cn: string, san: string, opts: { start?: string; end?: string; md?: string } = {}) => {
    await openssl(['req', '-new', '-key', file(`${name}.key`), '-subj', `/O=scrape-ai tests/CN=${cn}`, '-out', file(`${name}.csr`)]);
    const dates = [...(opts.start ? ['-startdate', opts.start] : []), ...(opts.end ? ['-enddate', opts.end] : [])];
    await openssl(['ca', '-batch', '-config', config, '-cert', file(`${issuer}.crt`), '-keyfile', file(`${issuer}.key`),
      '-in', file(`${name}.csr`), '-out', file(`${name}.crt`), '-extensions', ext, '-notext', '-md', opts.md ?? 'sha256', ...dates],
    { env: { FIXTURE_SAN: san } });
  };

  await genkey('root', 'rsa2048');
  await openssl(['req', '-x509', '-new', '-key', file('root.key'), '-subj', '/O=scrape-ai tests/CN=scrape-ai Test Root CA', '-days', '3650',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', file('root.crt')]);
  await genkey('intermediate', 'rsa2048');
  await sign('intermediate', 'root', 'ca_ext', 'scrape-ai Test Intermediate CA', 'DNS:unused.invalid');

  const specs: Record<Exclude<keyof Leaves, 'selfSigned'>, LeafSpec> = {
    valid: { cn: 'valid.test', san: 'DNS:valid.test,DNS:www.valid.test,IP:127.0.0.1', key: 'rsa2048' },
    ec: { cn: 'ec.test', san: 'DNS:ec.test', key: 'ec256' },
    ed25519: { cn: 'ed.test', san: 'DNS:ed.test', key: 'ed25519' },
    expired: { cn: 'expired.test', san: 'DNS:expired.test', key: 'ec256', start: '20200101000000Z', end: '20200201000000Z' },
    future: { cn: 'future.test', san: 'DNS:future.test', key: 'ec256', start: '20990101000000Z', end: '20991231000000Z' },
    other: { cn: 'other.test', san: 'DNS:other.test', key: 'ec256' },
    weak: { cn: 'weak.test', san: 'DNS:weak.test', key: 'rsa1024' },
    sha1: { cn: 'sha1.test', san: 'DNS:sha1.test', key: 'ec256', md: 'sha1' },
  };
  await Promise.all(Object.entries(specs).map(([name, s]) => genkey(name, s.key)));
  for (const [name, s] of Object.entries(specs)) {
    await sign(name, 'intermediate', 'leaf_ext', s.cn, s.san, { ...(s.start ? { start: s.start } : {}), ...(s.end ? { end: s.end } : {}), md: s.md ?? 'sha256' });
  }
  await genkey('self', 'ec256');
  await openssl(['req', '-x509', '-new', '-key', file('self.key'), '-subj', '/CN=self.test', '-days', '30',
    '-addext', 'subjectAltName=DNS:self.test', '-out', file('self.crt')]);

  const leaves: Leaves = {
    valid: await read('valid'), ec: await read('ec'), ed25519: await read('ed25519'), expired: await read('expired'),
    future: await read('future'), other: await read('other'), selfSigned: await read('self'),
    weak: await read('weak'), sha1: await read('sha1'),
  };
  return {
    dir,
    root: await read('root'),
    intermediate: await read('intermediate'),
    leaves,
    cleanup: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

/** `openssl x509 -fingerprint -sha256` of a certificate file: `AB:CD:…`, computed by OpenSSL, not by Node. */
export async function opensslFingerprint(certFile: string): Promise<string> {
  const out = await openssl(['x509', '-in', certFile, '-noout', '-fingerprint', '-sha256']);
  return out.trim().split('=')[1]!.trim();
}

/** A field of `openssl x509 -text` (e.g. `Signature Algorithm`, `Public-Key`), the first occurrence's value. */
export async function opensslTextField(certFile: string, field: string): Promise<string> {
  const out = await openssl(['x509', '-in', certFile, '-noout', '-text']);
  const line = out.split('\n').find((l) => l.trim().startsWith(`${field}:`));
  if (!line) throw new Error(`openssl x509 -text has no "${field}" in ${certFile}`);
  return line.split(':').slice(1).join(':').trim();
}

/** The subject or issuer of a certificate file as `openssl x509 -nameopt RFC2253` prints it (an RFC 4514 string). */
export async function opensslName(certFile: string, which: 'subject' | 'issuer'): Promise<string> {
  const out = await openssl(['x509', '-in', certFile, '-noout', `-${which}`, '-nameopt', 'RFC2253']);
  return out.trim().replace(new RegExp(`^${which}=`), '');
}
