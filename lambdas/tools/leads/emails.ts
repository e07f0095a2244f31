/**
 * Email addresses (step 2 of index.ts's module comment): the expressions that find them in text, plain and spelled
 * out, the junk left out, `mailto:` URLs and Cloudflare's email protection.
 */
import { percentDecode } from './text.ts';

const LOCAL = '[A-Za-z0-9_][A-Za-z0-9._%+-]{0,63}';
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** An address in text: a local part of the characters real addresses use, a host, a TLD of 2-24 letters. */
export const EMAIL_IN_TEXT = new RegExp(`(?<![A-Za-z0-9._%+\\-/])(${LOCAL})@((?:${LABEL}\\.)+[A-Za-z]{2,24})(?![A-Za-z0-9-]|\\.[A-Za-z0-9])`, 'g');
/** `name @ domain.com`: an @ with spaces around it. */
export const EMAIL_SPACED = new RegExp(`(?<![A-Za-z0-9._%+\\-/])(${LOCAL}) {1,2}@ {1,2}((?:${LABEL}\\.)+[A-Za-z]{2,24})(?![A-Za-z0-9-]|\\.[A-Za-z0-9])`, 'g');
const AT_WORDS = 'at|arroba|arobase|ät|@';
const DOT_WORDS = 'dot|punkt|punto|point|\\.';
const AT_BRACKETED = `\\s*[\\[({<]\\s*(?:${AT_WORDS})\\s*[\\])}>]\\s*`;
/** A bare ` at ` between spaces (source of a regular expression): with it, a spelled-out address needs a spelled-out dot too. */
export const AT_SPACED = '\\s+(?:at|AT)\\s+';
const DOT_BRACKETED = `\\s*[\\[({<]\\s*(?:${DOT_WORDS})\\s*[\\])}>]\\s*`;
const DOT_SPACED = '\\s+(?:dot|DOT)\\s+';
/** The spelled-out forms: `name [at] domain [dot] edu`, `name(at)domain.org`, `name at domain dot com`. */
export const EMAIL_SPELLED = new RegExp(
  `(?<![A-Za-z0-9._%+-])(${LOCAL})(${AT_BRACKETED}|${AT_SPACED})(${LABEL}(?:(?:${DOT_BRACKETED}|${DOT_SPACED}|\\.)${LABEL})+)(?![A-Za-z0-9-])`,
  'gi',
);
/** Splits the domain of a spelled-out address at its dots, written or spelled out. */
export const DOT_SPELLED_SPLIT = new RegExp(`${DOT_BRACKETED}|${DOT_SPACED}|\\.`, 'i');
const VALID_EMAIL = new RegExp(`^(${LOCAL})@((?:${LABEL}\\.)+[A-Za-z]{2,24})$`);

/** File extensions that look like TLDs after an `@2x`: `logo@2x.png` is an image, not an address. */
const FILE_TLDS = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'webp', 'svg', 'bmp', 'ico', 'tif', 'tiff', 'avif', 'heic', 'css', 'js', 'mjs', 'json', 'xml', 'map',
  'woff', 'woff2', 'ttf', 'otf', 'eot', 'mp4', 'webm', 'mp3', 'wav', 'pdf', 'zip', 'html', 'htm', 'php', 'aspx',
]);
/** Documentation and placeholder domains (RFC 2606 and form hints). */
const PLACEHOLDER_DOMAINS = /^(?:(?:[a-z0-9-]+\.)*example\.(?:com|org|net|edu)|(?:[a-z0-9-]+\.)*(?:example|test|invalid|localhost|local)|domain\.[a-z]+|(?:your|my)(?:-?(?:domain|company|site|website|email|business|mail))\.[a-z]+|company\.com|website\.com|site\.com|email\.com|mail\.com|emailaddress\.com|address\.com)$/;
/** Placeholder local parts: junk on a generic domain (`your@email.com`). */
const PLACEHOLDER_LOCALS = new Set([
  'you', 'your', 'yourname', 'your.name', 'youremail', 'your.email', 'name', 'username', 'user', 'email', 'someone', 'somebody', 'me',
  'john.doe', 'jane.doe', 'johndoe', 'janedoe', 'john', 'jane', 'firstname.lastname', 'first.last', 'firstname', 'vorname.nachname',
  'prenom.nom', 'nombre', 'xxx', 'xyz', 'abc', 'test', 'example', 'sample',
]);
/** Error-reporting and analytics hosts whose addresses are keys, not mailboxes. */
const DSN_DOMAINS = /(?:^|\.)(?:sentry\.io|sentry-next\.wixpress\.com|sentry\.wixpress\.com|wixpress\.com|ingest\.sentry\.io|getsentry\.com)$/;

/** The address normalised (domain lower-cased), or null when it is not a usable address (junk, placeholder, malformed). */
export function cleanEmail(raw: string): string | null {
  const m = VALID_EMAIL.exec(raw.trim());
  if (!m) return null;
  const local = m[1]!;
  const domain = m[2]!.toLowerCase();
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  if (FILE_TLDS.has(tld)) return null;
  if (/^\d+x$/i.test(domain.split('.')[0]!)) return null; // sprite@3x.<anything>
  if (PLACEHOLDER_DOMAINS.test(domain)) return null;
  if (PLACEHOLDER_LOCALS.has(local.toLowerCase()) && /^(?:email|mail|domain|company|website|site|yourdomain|yourcompany|gmail|example)\.[a-z]+$/.test(domain)) return null;
  if (DSN_DOMAINS.test(domain)) return null;
  if (/^[0-9a-f]{16,}$/i.test(local)) return null; // a hash, not a mailbox
  if (local.includes('..') || local.startsWith('.') || local.endsWith('.')) return null;
  return `${local}@${domain}`;
}

/** The addresses of a `mailto:` URL (RFC 6068: comma-separated, query after `?`). */
export function mailtoAddresses(href: string): string[] {
  const body = href.replace(/^\s*mailto:/i, '');
  const to = body.split('?')[0]!;
  return percentDecode(to)
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Cloudflare email obfuscation: hex, first byte the key, each next byte XOR the key. Null on malformed input. */
export function decodeCloudflareEmail(hex: string): string | null {
  if (!/^(?:[0-9a-f]{2}){2,}$/i.test(hex)) return null;
  const key = parseInt(hex.slice(0, 2), 16);
  let out = '';
  for (let i = 2; i < hex.length; i += 2) out += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16) ^ key);
  try {
    // The bytes are the address's UTF-8 (Cloudflare's decoder runs decodeURIComponent(escape(s)) over them).
    return decodeURIComponent(escape(out));
  } catch {
    return out;
  }
}
