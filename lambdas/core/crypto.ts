/**
 * Secrets at rest: API keys and passwords are never stored in plain text.
 *
 * - API keys: `sai_` + 40 base62 characters (238 bits) from the CSPRNG. Stored twice: a SHA-256 digest
 *   (hex) to look the key up, and an AES-256-GCM sealed copy so that login can hand the key back
 *   (docs/spec.md, Authentication: login returns the key). The sealing key is derived from SAI_SECRET with
 *   HKDF-SHA256 (RFC 5869).
 * - Passwords: scrypt (RFC 7914) from node:crypto, N=2^15, r=8, p=1, 16-byte salt, 32-byte hash.
 * - Comparisons of secrets use `timingSafeEqual`.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Characters after the prefix: 40 base62 characters, about 238 bits (docs/security.md, "Keys and passwords"). */
const API_KEY_LENGTH = 40;
const API_KEY_PREFIX = 'sai_';
const API_KEY_RE = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9]{32,128}$`);

/** A new API key: `sai_` + {@link API_KEY_LENGTH} uniformly random base62 characters. */
export function generateApiKey(): string {
  let s = API_KEY_PREFIX;
  for (let i = 0; i < API_KEY_LENGTH; i++) s += BASE62[randomInt(62)];
  return s;
}

/** True when a string has the shape of an API key (cheap check before any look-up). */
export function looksLikeApiKey(key: string): boolean {
  return API_KEY_RE.test(key);
}

/** SHA-256 of an API key, lower-case hex: the stored look-up key. */
export function apiKeyDigest(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time equality of two hex digests of the same length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/**
 * Seals and opens API keys with AES-256-GCM. Sealed form: `v1.` + base64url(12-byte IV | 16-byte tag |
 * ciphertext). The account id is bound as additional authenticated data, so a sealed key copied to
 * another account's record does not open.
 */
export class KeySealer {
  private readonly key: Buffer;

  /** @param secret SAI_SECRET (any length; at least 32 characters recommended). */
  constructor(secret: string) {
    if (!secret) throw new Error('KeySealer needs a secret (SAI_SECRET)');
    this.key = Buffer.from(hkdfSync('sha256', secret, 'scrape-ai', 'api-key-seal/v1', 32));
  }

  seal(plain: string, accountId: number): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(String(accountId)));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url')}`;
  }

  /** @throws Error when the sealed value was altered, sealed for another account or with another secret. */
  open(sealed: string, accountId: number): string {
    if (!sealed.startsWith('v1.')) throw new Error('unknown sealed key format');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    if (raw.length < 28) throw new Error('sealed key too short');
    // A fixed 16-byte tag: a shorter one would weaken the authentication (Node's DEP0182).
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12), { authTagLength: 16 });
    decipher.setAAD(Buffer.from(String(accountId)));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

function scryptAsync(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, 32, { ...params, maxmem: SCRYPT.maxmem }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Hashes a password: `scrypt$N$r$p$<salt b64url>$<hash b64url>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** A hash of a random password, to spend the same time when an email is unknown. */
let dummyHash: Promise<string> | null = null;

/**
 * Checks a password against a stored hash in constant time. With `stored` null (unknown account) it
 * still runs scrypt, so response time does not tell whether an email exists.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  const target = stored ?? await dummyHash;
  const parts = target.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return stored !== null && timingSafeEqual(actual, expected);
}

/**
 * A UUID (version 8, RFC 9562 section 5.8) from SHA-256 of `seed`: every caller with the same seed names the same
 * record, so a retried or duplicate step finds what an earlier one made instead of making it twice (a schedule's
 * firing for a slot, the config and the run of a generate job).
 */
export function derivedUuid(seed: string): string {
  const h = createHash('sha256').update(seed).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
