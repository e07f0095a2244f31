/**
 * RDAP, the Registration Data Access Protocol, for the DNS/WHOIS tool (lambdas/tools/dns-whois.ts): which server
 * to ask (the IANA bootstrap registries of RFC 9224), how to ask (the queries of RFC 9082, over the project's
 * {@link Fetcher}, so the outbound guard sees every connection and every redirect hop) and how to read the answer
 * (the JSON responses of RFC 9083: events, entities, status, nameservers, secureDNS).
 *
 * The bootstrap data is bundled (rdap-bootstrap.json beside this file, rewritten by
 * scripts/refresh-rdap-bootstrap.ts): nothing is fetched from IANA at run time.
 */
import fs from 'node:fs';
import ipaddr from 'ipaddr.js';
import { isCodedError } from '../errors.ts';
import { Fetcher } from '../net/fetch.ts';
import type { OutboundGuard } from '../net/guard.ts';
import bundled from './rdap-bootstrap.json' with { type: 'json' };

/**
 * One IANA bootstrap registry (RFC 9224 section 3): `services` pairs a list of entries (DNS labels such as
 * `com`, or address prefixes such as `41.0.0.0/8`) with the base URLs of the RDAP service for them.
 */
export interface RdapBootstrapFile {
  description?: string;
  /** When IANA published the file (RFC 3339). */
  publication: string;
  version: string;
  services: Array<[string[], string[]]>;
}

/**
 * The bootstrap data the tool reads: the IANA registries for domain names and IP networks, and the port-43
 * WHOIS server (RFC 3912) of each TLD that has no RDAP service.
 */
export interface RdapBootstrap {
  /** `https://data.iana.org/rdap/dns.json`. */
  dns: RdapBootstrapFile;
  /** `https://data.iana.org/rdap/ipv4.json`; without it IP literals get no registration data. */
  ipv4?: RdapBootstrapFile;
  /** `https://data.iana.org/rdap/ipv6.json`. */
  ipv6?: RdapBootstrapFile;
  /** WHOIS servers by TLD (lower case, A-labels), from IANA's Root Zone Database. */
  whois?: { collected?: string; servers: Record<string, string> };
}

/** The snapshot bundled with the service (lambdas/tools/rdap-bootstrap.json); `about` says where it came from. */
export const BUNDLED_RDAP_BOOTSTRAP = bundled as unknown as RdapBootstrap & { about: string };

let configured: { file: string; bootstrap: RdapBootstrap } | null = null;

/**
 * The bootstrap the service uses: the file named by `SAI_RDAP_BOOTSTRAP_FILE` (same shape as rdap-bootstrap.json:
 * a newer snapshot, a private registry's RDAP server, a local one in tests), else the bundled snapshot. Read once
 * per process (per Lambda instance).
 * @throws Error naming the file when it cannot be read or lacks the `dns` registry.
 */
export function configuredRdapBootstrap(env: NodeJS.ProcessEnv = process.env): RdapBootstrap {
  const file = env.SAI_RDAP_BOOTSTRAP_FILE?.trim();
  if (!file) return BUNDLED_RDAP_BOOTSTRAP;
  if (configured?.file !== file) {
    const data = JSON.parse(fs.readFileSync(file, 'utf8')) as RdapBootstrap;
    if (!Array.isArray(data?.dns?.services)) throw new Error(`SAI_RDAP_BOOTSTRAP_FILE ${file}: no "dns" registry with "services" (RFC 9224)`);
    configured = { file, bootstrap: data };
  }
  return configured.bootstrap;
}

/** A base URL ending in `/`, the HTTPS one first when a service lists several (RFC 9224 section 3: prefer HTTPS). */
function preferredBase(urls: string[]): string | null {
  const list = urls.filter((u) => /^https?:\/\//i.test(u));
  const chosen = list.find((u) => /^https:/i.test(u)) ?? list[0];
  if (!chosen) return null;
  return chosen.endsWith('/') ? chosen : `${chosen}/`;
}

/**
 * The RDAP base URL for a domain name: the entry that matches the most labels from the right (RFC 9224 section 4;
 * IANA's file has TLDs only, the rule allows more labels).
 * @param domain lower case, A-labels (`xn--…`), no trailing dot.
 * @returns the base URL (ending in `/`), or null when no RDAP service is known for the name's TLD.
 */
export function rdapBaseForDomain(bootstrap: RdapBootstrap, domain: string): string | null {
  const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
  let best: { labels: number; base: string } | null = null;
  for (const [entries, urls] of bootstrap.dns.services) {
    for (const entry of entries) {
      const e = entry.toLowerCase().replace(/^\.|\.$/g, '');
      const n = e.split('.').length;
      if (n > labels.length || (best && n <= best.labels)) continue;
      if (labels.slice(-n).join('.') !== e) continue;
      const base = preferredBase(urls);
      if (base) best = { labels: n, base };
    }
  }
  return best?.base ?? null;
}

/**
 * The RDAP base URL for an IP address: the longest matching prefix of the ipv4 or ipv6 registry (RFC 9224
 * section 5).
 * @returns the base URL, or null when the registry is not bundled or no prefix matches.
 */
export function rdapBaseForAddress(bootstrap: RdapBootstrap, address: string): string | null {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(address);
  } catch {
    return null;
  }
  const file = addr.kind() === 'ipv4' ? bootstrap.ipv4 : bootstrap.ipv6;
  let best: { bits: number; base: string } | null = null;
  for (const [entries, urls] of file?.services ?? []) {
    for (const entry of entries) {
      let range: [ipaddr.IPv4 | ipaddr.IPv6, number];
      try {
        range = ipaddr.parseCIDR(entry);
      } catch {
        continue;
      }
      if (range[0].kind() !== addr.kind() || !addr.match(range) || (best && range[1] <= best.bits)) continue;
      const base = preferredBase(urls);
      if (base) best = { bits: range[1], base };
    }
  }
  return best?.base ?? null;
}

/** The IP network an address belongs to, from an RDAP ip network object (RFC 9083 section 5.4). */
export interface RdapNetwork {
  /** The registry's identifier of the network (`NET-93-184-216-0-1`). */
  handle: string | null;
  /** The network's name (`EDGECAST-NETBLK-03`). */
  name: string | null;
  /** First and last address of the network. */
  start_address: string | null;
  end_address: string | null;
  /** The network's prefixes in CIDR notation (the `cidr0` extension where the server has it). */
  cidrs: string[];
  /** ISO 3166-1 alpha-2 code the registry gives. */
  country: string | null;
  /** The RIR's allocation type (`DIRECT ALLOCATION`, `ASSIGNED PA`). */
  type: string | null;
  /** The `fn` of the entity with the `registrant` role: the holder of the network. */
  holder: string | null;
}

/** What the tool reads from an RDAP answer (RFC 9083), before it becomes the report's `whois`. */
export interface RegistrationData {
  /** The sponsoring registrar's name (RDAP: the `registrar` entity's `fn`). */
  registrar: string | null;
  /** Its IANA Registrar ID (gTLDs). */
  registrar_iana_id: string | null;
  /** Registration, last change and expiry, ISO 8601 (`2024-08-14T07:01:31Z`; a date alone when WHOIS gives no time). */
  created: string | null;
  updated: string | null;
  expires: string | null;
  /** EPP status values (RFC 5731 2.3, `clientTransferProhibited`), RDAP's mapped by RFC 8056. */
  status: string[];
  /** The delegation's name servers in the registry, lower case. */
  nameservers: string[];
  /** Whether the delegation is DNSSEC-signed (RDAP `secureDNS.delegationSigned`); null when not said. */
  dnssec: boolean | null;
  /** For an IP literal: the IP network (RDAP ip network object); else null. */
  network: RdapNetwork | null;
}

/** RFC 8056 section 2: the two RDAP status values whose EPP name is not their camelCase form. */
const RDAP_TO_EPP: Record<string, string> = { active: 'ok', associated: 'linked' };

/**
 * A status value in its EPP form (RFC 5731 section 2.3, `clientTransferProhibited`): RDAP's words
 * (`client transfer prohibited`, RFC 9083 section 4.6 and the RFC 8056 mapping) become camelCase, `active` becomes
 * `ok`; an EPP value stays as it is. RDAP values without an EPP counterpart (`locked`, `renew prohibited`) take
 * the same camelCase form.
 */
export function eppStatus(value: string): string {
  const v = value.trim();
  const lower = v.toLowerCase();
  if (RDAP_TO_EPP[lower]) return RDAP_TO_EPP[lower];
  if (!/\s/.test(v)) return v;
  return lower.split(/\s+/).map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

/** An RFC 3339 date as ISO 8601 in UTC (`2024-08-14T07:01:31Z`), null when it does not parse. */
function isoDate(value: unknown): string | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const t = Date.parse(value.trim());
  if (Number.isNaN(t)) return null;
  return new Date(t).toISOString().replace(/\.000Z$/, 'Z');
}

type Json = Record<string, unknown>;

function asObject(v: unknown): Json | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function asString(v: unknown): string | null {
  return typeof v === 'string' && v.trim() ? v.trim() : null;
}

/** The `fn` (formatted name) of an entity's jCard (RFC 7095; RFC 9083 section 5.1 `vcardArray`), else its `org`. */
function entityName(entity: Json): string | null {
  const card = asArray(asArray(entity.vcardArray)[1]);
  const prop = (name: string) => card.map(asArray).find((p) => p[0] === name);
  const fn = prop('fn');
  const fnValue = fn ? asString(fn[3]) : null;
  if (fnValue) return fnValue;
  const org = prop('org');
  if (org) return asString(Array.isArray(org[3]) ? org[3][0] : org[3]);
  return null;
}

/** Entities with a role, searched breadth-first through nested `entities` (registrars sometimes sit inside). */
function findEntity(root: Json, role: string): Json | null {
  let level = asArray(root.entities).map(asObject).filter((e): e is Json => e !== null);
  for (let depth = 0; depth < 3 && level.length; depth++) {
    const hit = level.find((e) => asArray(e.roles).some((r) => typeof r === 'string' && r.toLowerCase() === role));
    if (hit) return hit;
    level = level.flatMap((e) => asArray(e.entities).map(asObject).filter((x): x is Json => x !== null));
  }
  return null;
}

/** The date of the first event with an action (RFC 9083 section 4.5; actions from section 10.2.3). */
function eventDate(obj: Json, action: string): string | null {
  for (const e of asArray(obj.events)) {
    const ev = asObject(e);
    if (ev && typeof ev.eventAction === 'string' && ev.eventAction.toLowerCase() === action) {
      const d = isoDate(ev.eventDate);
      if (d) return d;
    }
  }
  return null;
}

/**
 * Reads the registration data of an RDAP domain or ip network object (RFC 9083 sections 5.3 and 5.4):
 * - `registrar`: the `fn` of the entity with the `registrar` role, `registrar_iana_id` its `IANA Registrar ID` public id;
 * - `created`, `updated`, `expires`: the `registration`, `last changed` and `expiration` events;
 * - `status`: in EPP form ({@link eppStatus}); `nameservers`: the `ldhName`s, lower case, no trailing dot;
 * - `dnssec`: `secureDNS.delegationSigned` (RFC 9083 section 5.3), null when absent;
 * - `network`: for an `ip network` object, the network and its holder (the `registrant` entity).
 */
export function readRdapObject(json: unknown): RegistrationData {
  const obj = asObject(json) ?? {};
  const registrarEntity = findEntity(obj, 'registrar');
  const ianaId = registrarEntity
    ? asArray(registrarEntity.publicIds).map(asObject).find((p) => p && typeof p.type === 'string' && /iana registrar id/i.test(p.type))
    : undefined;
  const nameservers = asArray(obj.nameservers)
    .map(asObject)
    .map((ns) => asString(ns?.ldhName) ?? asString(ns?.unicodeName))
    .filter((n): n is string => n !== null)
    .map((n) => n.toLowerCase().replace(/\.$/, ''));
  const secure = asObject(obj.secureDNS);
  const isNetwork = obj.objectClassName === 'ip network';
  let network: RdapNetwork | null = null;
  if (isNetwork) {
    const holder = findEntity(obj, 'registrant');
    const cidrs = asArray(obj.cidr0_cidrs).map(asObject).flatMap((c) => {
      const prefix = asString(c?.v4prefix) ?? asString(c?.v6prefix);
      return prefix && typeof c?.length === 'number' ? [`${prefix}/${c.length}`] : [];
    });
    network = {
      handle: asString(obj.handle),
      name: asString(obj.name),
      start_address: asString(obj.startAddress),
      end_address: asString(obj.endAddress),
      cidrs,
      country: asString(obj.country),
      type: asString(obj.type),
      holder: holder ? entityName(holder) : null,
    };
  }
  return {
    registrar: registrarEntity ? entityName(registrarEntity) : null,
    registrar_iana_id: ianaId ? asString(ianaId.identifier) ?? (typeof ianaId.identifier === 'number' ? String(ianaId.identifier) : null) : null,
    created: eventDate(obj, 'registration'),
    updated: eventDate(obj, 'last changed'),
    expires: eventDate(obj, 'expiration'),
    status: [...new Set(asArray(obj.status).map(asString).filter((s): s is string => s !== null).map(eppStatus))],
    nameservers: [...new Set(nameservers)],
    dnssec: secure && typeof secure.delegationSigned === 'boolean' ? secure.delegationSigned : null,
    network,
  };
}

/** Why an RDAP query gave no registration data. */
type RdapFailure = 'not_found' | 'forbidden' | 'unreachable' | 'timeout' | 'bad_response';

/** The outcome of one RDAP query: the data, or why there is none. */
export type RdapResult =
  | { ok: true; url: string; data: RegistrationData }
  | { ok: false; url: string; code: RdapFailure; message: string };

/** Largest RDAP answer read, bytes: a domain object is a few KiB; some registries add long notices. */
const RDAP_MAX_BYTES = 1024 * 1024;

/** The name of an error's cause chain that tells a time-out (a TimeoutError DOMException or Node's ETIMEDOUT). */
function isTimeout(err: unknown): boolean {
  for (let e = err as { name?: unknown; code?: unknown; cause?: unknown } | undefined, d = 0; e && d < 5; e = e.cause as typeof e, d++) {
    if (e.name === 'TimeoutError' || e.code === 'ETIMEDOUT' || (typeof e.code === 'string' && /TIMEOUT/.test(e.code))) return true;
  }
  return false;
}

/**
 * Asks an RDAP server for one object (`<base>domain/<name>` or `<base>ip/<address>`, RFC 9082 section 3.1) through
 * the outbound guard (a {@link Fetcher} on `guard`: the server's address, and every redirect hop's, is checked).
 * Never throws for the server's failures: a 404 is `not_found`, a refused address `forbidden`, a connection that
 * fails `unreachable`, a time-out `timeout`, any other status or a body that is not an RDAP JSON object `bad_response`.
 * @param timeoutMs time for the whole query (one retry on a 5xx, 429 or network error included).
 * @throws the signal's reason when `signal` aborts for another reason than a time-out.
 */
export async function queryRdap(guard: OutboundGuard, url: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<RdapResult> {
  const timeoutMs = Math.max(1, Math.round(options.timeoutMs));
  const fetcher = new Fetcher(guard, { timeoutMs, maxBytes: RDAP_MAX_BYTES, retries: 1, retryBaseMs: 250, retryMaxMs: 1_000 });
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const page = await fetcher.fetch(url, { signal, headers: { accept: 'application/rdap+json, application/json;q=0.9' } });
    if (page.status === 404) return { ok: false, url: page.url, code: 'not_found', message: `The RDAP server has no record of this name (HTTP 404 from ${page.url})` };
    if (page.status < 200 || page.status > 299) {
      return { ok: false, url: page.url, code: 'bad_response', message: `The RDAP server answered HTTP ${page.status} (${page.url})` };
    }
    let json: unknown;
    try {
      json = JSON.parse(page.text);
    } catch {
      return { ok: false, url: page.url, code: 'bad_response', message: `The RDAP answer of ${page.url} is not JSON (${page.contentType || 'no Content-Type'})` };
    }
    if (!asObject(json)) return { ok: false, url: page.url, code: 'bad_response', message: `The RDAP answer of ${page.url} is not a JSON object` };
    return { ok: true, url: page.url, data: readRdapObject(json) };
  } catch (err) {
    if (options.signal?.aborted && !timeout.aborted && !isTimeout(options.signal.reason)) throw options.signal.reason;
    if (isCodedError(err) && err.code === 'target_forbidden') return { ok: false, url, code: 'forbidden', message: `The outbound guard refused the RDAP server: ${err.message}` };
    if (timeout.aborted || isTimeout(err) || (options.signal?.aborted && isTimeout(options.signal.reason))) {
      return { ok: false, url, code: 'timeout', message: `The RDAP server did not answer within ${timeoutMs} ms (${url})` };
    }
    const detail = ((err as Error).message ?? String(err)).split('\n')[0];
    return { ok: false, url, code: 'unreachable', message: `The RDAP server could not be reached: ${detail}` };
  } finally {
    await fetcher.close().catch(() => undefined);
  }
}
