/**
 * Port-43 WHOIS (RFC 3912) for the DNS/WHOIS tool (lambdas/tools/dns-whois.ts): the fallback for registries
 * without RDAP. The protocol is one line out (the query and CRLF), free text back until the server closes.
 *
 * The connection goes through the outbound guard: a server given as an IP literal is checked with
 * `guard.refusal` before the socket opens, a host name is resolved by `guard.lookup` as the socket's `lookup`
 * (so the address checked is the address connected to).
 *
 * The text has no standard shape. {@link parseWhois} reads the `Key: value` lines most registries write (the
 * ICANN registry format of the 2013 RAA and the Registry Agreement's Specification 4, and the usual ccTLD
 * variants: `nserver:`, `paid-till:`, `[Created on]`, indented sections such as `Name servers:` followed by one
 * server a line).
 */
import net from 'node:net';
import { TargetForbiddenError, type OutboundGuard } from '../net/guard.ts';
import { eppStatus } from './rdap.ts';

/** A WHOIS server: host name or IP address, and port (43 for the protocol). */
export interface WhoisServer {
  host: string;
  port: number;
}

/** Largest WHOIS answer read, bytes; the rest is dropped (registry answers are a few KiB). */
const WHOIS_MAX_BYTES = 256 * 1024;

/**
 * Sends one WHOIS query (`<query>\r\n`) and reads the answer until the server closes the connection, at most
 * {@link WHOIS_MAX_BYTES}.
 * @returns the answer as text (UTF-8; Latin-1 when it is not valid UTF-8).
 * @throws TargetForbiddenError when the guard refuses the server's address; a DOMException `TimeoutError` after
 *   `timeoutMs`; the socket's error (`ECONNREFUSED`, `ENOTFOUND`…); the signal's reason when it aborts.
 */
export function queryWhois(guard: OutboundGuard, server: WhoisServer, query: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const host = server.host.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) {
      const why = guard.refusal(host);
      if (why) {
        reject(new TargetForbiddenError(`Refused the WHOIS server ${host}: ${why}.`));
        return;
      }
    }
    if (options.signal?.aborted) {
      reject(options.signal.reason);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const socket = net.connect({ host, port: server.port, lookup: guard.lookup as unknown as net.LookupFunction });
    const finish = (err: unknown, text?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err) reject(err);
      else resolve(text!);
    };
    const onAbort = () => finish(options.signal!.reason);
    const timer = setTimeout(() => finish(new DOMException(`The WHOIS server ${host}:${server.port} did not answer within ${options.timeoutMs} ms`, 'TimeoutError')), options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // Write without half-closing: the server ends the exchange by closing (RFC 3912 section 2).
    socket.on('connect', () => socket.write(`${query}\r\n`));
    socket.on('data', (chunk: Buffer) => {
      if (size >= WHOIS_MAX_BYTES) return;
      chunks.push(chunk.subarray(0, WHOIS_MAX_BYTES - size));
      size += Math.min(chunk.length, WHOIS_MAX_BYTES - size);
      if (size >= WHOIS_MAX_BYTES) finish(null, decode(Buffer.concat(chunks)));
    });
    socket.on('end', () => finish(null, decode(Buffer.concat(chunks))));
    socket.on('close', () => finish(null, decode(Buffer.concat(chunks))));
    socket.on('error', (err) => finish(err));
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 when the bytes are valid UTF-8, else Latin-1 (older ccTLD servers); CRLF becomes LF. */
function decode(bytes: Buffer): string {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    text = bytes.toString('latin1');
  }
  return text.replace(/\r\n?/g, '\n');
}

/** What {@link parseWhois} reads. */
export interface WhoisData {
  registrar: string | null;
  registrar_iana_id: string | null;
  created: string | null;
  updated: string | null;
  expires: string | null;
  status: string[];
  nameservers: string[];
  dnssec: boolean | null;
}

// Keys as registries write them, lower case, without the colon or the JPRS brackets. A key inside an indented
// section is also read as "<section> <key>" (`Registrar:` then `  Name: …` is "registrar name").
const KEYS = {
  registrar: ['registrar', 'sponsoring registrar', 'registrar name', 'registrar organization', 'registrar organisation', 'registrar-name', 'registrar handle'],
  registrarIanaId: ['registrar iana id', 'sponsoring registrar iana id'],
  created: ['creation date', 'created', 'created on', 'created date', 'registered', 'registered on', 'registration date', 'registration time',
    'domain registration date', 'domain record activated', 'registered date', 'domain name commencement date', 'record created', 'activation'],
  updated: ['updated date', 'last updated', 'last updated on', 'last-update', 'last update', 'last modified', 'last-modified', 'changed', 'modified',
    'updated', 'domain record last updated', 'last updated date', 'modification date'],
  expires: ['registry expiry date', 'registrar registration expiration date', 'expiration date', 'expiry date', 'expires', 'expire', 'expires on',
    'paid-till', 'renewal date', 'valid until', 'domain expiration date', 'record expires on', 'expiration time', 'registration expiration date',
    'free-date', 'expire date'],
  status: ['domain status', 'status', 'state', 'registration status', 'domain state'],
  nameservers: ['name server', 'name servers', 'nameserver', 'nameservers', 'nserver', 'dns', 'name server information', 'host name', 'domain servers in listed order'],
  dnssec: ['dnssec', 'dnssec status', 'signing key', 'dnskey', 'ds record'],
} as const;

/** Answers that say the registry has no such domain (matched against the whole text). */
const NOT_FOUND = /^\s*(?:%+\s*)?(?:no match(?: for)?|not found|no entries found|no data found|domain not found|no such domain|no object found|object does not exist|the queried object does not exist|status:\s*(?:free|available)|domain status:\s*(?:free|available|no object found)|this domain (?:name )?is available|no information available|nothing found)\b/im;

/**
 * Whether a WHOIS answer says the domain is not registered (`No match for`, `NOT FOUND`, DENIC's `Status: free`,
 * `The queried object does not exist`).
 */
export function isWhoisNotFound(text: string): boolean {
  return NOT_FOUND.test(text);
}

const MONTHS: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };

function pad(n: number | string, width = 2): string {
  return String(n).padStart(width, '0');
}

/**
 * A WHOIS date as ISO 8601: `YYYY-MM-DDTHH:MM:SSZ` when the text has a time (UTC unless it names an offset),
 * `YYYY-MM-DD` when it has a date only. Reads `2024-01-17T10:36:34Z`, `2024-01-17 10:36:34`, `2024.01.17`,
 * `2024/01/17` (JPRS), `20240117` (registro.br), `17-Jan-2024`, `17 January 2024 10:36:34 UTC`, `17.01.2024`
 * (day first). Null otherwise (`before Aug-1996`).
 */
export function whoisDate(value: string): string | null {
  const v = value.trim();
  const build = (y: number, mo: number, d: number, h?: string, mi?: string, s?: string, zone?: string): string | null => {
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970 || y > 2200) return null;
    const date = `${y}-${pad(mo)}-${pad(d)}`;
    if (h === undefined) return date;
    let t = Date.UTC(y, mo - 1, d, Number(h), Number(mi ?? 0), Number(s ?? 0));
    const off = /^([+-])(\d{2}):?(\d{2})$/.exec(zone ?? '');
    if (off) t -= (off[1] === '-' ? -1 : 1) * (Number(off[2]) * 60 + Number(off[3])) * 60_000;
    return Number.isNaN(t) ? null : new Date(t).toISOString().replace(/\.000Z$/, 'Z');
  };
  const zone = '\\s*(Z|UTC|GMT|[+-]\\d{2}:?\\d{2})?';
  let m = new RegExp(`^(\\d{4})[-./](\\d{1,2})[-./](\\d{1,2})(?:[T\\s]+(\\d{1,2}):(\\d{2})(?::(\\d{2}))?(?:\\.\\d+)?${zone})?`, 'i').exec(v);
  if (m) return build(+m[1]!, +m[2]!, +m[3]!, m[4], m[5], m[6], m[7]);
  m = /^(\d{4})(\d{2})(\d{2})\b/.exec(v);
  if (m) return build(+m[1]!, +m[2]!, +m[3]!);
  m = new RegExp(`^(\\d{1,2})[-\\s]([a-z]{3})[a-z]*\\.?[-\\s](\\d{4})(?:[T\\s]+(\\d{1,2}):(\\d{2})(?::(\\d{2}))?${zone})?`, 'i').exec(v);
  if (m && MONTHS[m[2]!.toLowerCase()]) return build(+m[3]!, MONTHS[m[2]!.toLowerCase()]!, +m[1]!, m[4], m[5], m[6], m[7]);
  m = /^(\d{1,2})\.(\d{1,2})\.(\d{4})\b/.exec(v);
  if (m) return build(+m[3]!, +m[2]!, +m[1]!);
  return null;
}

/** A `Key: value` line (the key up to 60 characters, no URL scheme), or a JPRS `[Key]  value` line. */
const KEY_LINE = /^(\s*)(?:\[([^\]]{1,60})\]\s*(.*)|([A-Za-z][A-Za-z0-9 ._/()'-]{0,59}?)\s*\.*:(?!\/\/)\s*(.*))$/;

/** The values of each key of a WHOIS answer, in order, keys lower case (see {@link KEYS} for sections). */
function readFields(text: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  const add = (key: string, value: string) => {
    const k = key.toLowerCase().replace(/\s+/g, ' ').trim();
    const v = value.trim();
    if (!k || !v) return;
    const list = fields.get(k) ?? [];
    list.push(v);
    fields.set(k, list);
  };
  let section: { key: string; indent: number } | null = null;
  for (const raw of text.split('\n')) {
    if (/^\s*(?:%|#|>>>|--)/.test(raw)) {
      section = null;
      continue;
    }
    if (!raw.trim()) {
      section = null;
      continue;
    }
    const indent = /^\s*/.exec(raw)![0].replace(/\t/g, '        ').length;
    if (section && indent <= section.indent) section = null;
    const m = KEY_LINE.exec(raw);
    if (m) {
      const key = (m[2] ?? m[4] ?? '').trim();
      const value = (m[2] !== undefined ? m[3] : m[5]) ?? '';
      if (section) add(`${section.key} ${key}`, value);
      add(key, value);
      if (!value.trim() && !section) section = { key: key.toLowerCase(), indent };
      continue;
    }
    if (section) add(section.key, raw);
  }
  return fields;
}

function first(fields: Map<string, string[]>, keys: readonly string[]): string | null {
  for (const k of keys) {
    const v = fields.get(k)?.[0];
    if (v) return v;
  }
  return null;
}

function all(fields: Map<string, string[]>, keys: readonly string[]): string[] {
  return keys.flatMap((k) => fields.get(k) ?? []);
}

/**
 * Reads the registration data of a port-43 WHOIS answer (best effort: the format is free text):
 * - dates through {@link whoisDate}; the first key of each list in {@link KEYS} that has a value wins;
 * - `status`: each value's first word when it is followed by an ICANN URL (`clientTransferProhibited
 *   https://icann.org/epp#…`), comma lists split (`REGISTERED, DELEGATED`), RDAP-style words mapped to EPP
 *   ({@link eppStatus}), other registry words kept as written;
 * - `nameservers`: the first word of each value (some add addresses), lower case, no trailing dot;
 * - `dnssec`: true for `signedDelegation`, `signed`, `yes`, `active` or a DS/DNSKEY line, false for
 *   `unsigned`, `no`, `inactive`; null when the answer does not say.
 * @returns null when the text has none of these fields.
 */
export function parseWhois(text: string): WhoisData | null {
  const fields = readFields(text);
  const date = (keys: readonly string[]) => {
    for (const v of all(fields, keys)) {
      const d = whoisDate(v);
      if (d) return d;
    }
    return null;
  };
  const status = [...new Set(all(fields, KEYS.status).flatMap((v) => {
    const cut = v.replace(/\s*\(?https?:\/\/\S*\)?.*$/, '').trim();
    return cut.split(/\s*,\s*/).filter(Boolean).map((s) => (/^[a-z]+(?: [a-z]+)+$/i.test(s) && s.split(' ').length <= 4 ? eppStatus(s) : s));
  }).filter((s) => s.length <= 100))];
  const nameservers = [...new Set(all(fields, KEYS.nameservers)
    .map((v) => v.split(/\s+/)[0]!.toLowerCase().replace(/\.$/, ''))
    .filter((n) => /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(n)))];
  let dnssec: boolean | null = null;
  for (const k of KEYS.dnssec) {
    const v = fields.get(k)?.[0];
    if (!v) continue;
    if (k === 'dnssec' || k === 'dnssec status') {
      if (/^(signed|signeddelegation|yes|active|true)/i.test(v)) dnssec = true;
      else if (/^(unsigned|no|inactive|false|none)/i.test(v)) dnssec = false;
    } else {
      dnssec = true;
    }
    if (dnssec !== null) break;
  }
  const registrar = first(fields, KEYS.registrar);
  const data: WhoisData = {
    registrar: registrar && registrar.length <= 200 ? registrar : null,
    registrar_iana_id: first(fields, KEYS.registrarIanaId),
    created: date(KEYS.created),
    updated: date(KEYS.updated),
    expires: date(KEYS.expires),
    status,
    nameservers,
    dnssec,
  };
  const found = Object.values(data).some((v) => (Array.isArray(v) ? v.length > 0 : v !== null));
  return found ? data : null;
}
