/**
 * The DNS/WHOIS tool (docs/spec.md, "Tool endpoints", `POST /api/v1/tools/dns-whois/`; docs/tools.md): a host's DNS records,
 * its addresses with their reverse names, and the registration data of its registered domain.
 *
 * The steps, all within one time budget ({@link DnsWhoisOptions.timeoutMs}):
 * 1. The host: an IP literal is reported as itself (its reverse name, and the RDAP data of the IP network it
 *    belongs to); a name is looked up as given, and its registered domain (the Public Suffix List's ICANN
 *    section, through tldts: `www.example.co.uk` → `example.co.uk`) is what RDAP and WHOIS are asked about.
 * 2. DNS, with node:dns's `Resolver` (c-ares): A, AAAA, CNAME, MX, NS, TXT, SOA and CAA in parallel, on the
 *    system's resolvers or the servers a caller names (each checked by the outbound guard first). TTLs where Node
 *    gives them (A and AAAA). A name that does not exist (NXDOMAIN) is a finding: `dns: {}` and `error`.
 * 3. Reverse names (PTR, `Resolver#reverse`) of the A and AAAA addresses.
 * 4. Registration data: RDAP (RFC 9082 queries, RFC 9083 answers) at the server the IANA bootstrap (RFC 9224)
 *    names for the TLD, through the project's {@link Fetcher}; where the TLD has no RDAP service, port-43 WHOIS
 *    (RFC 3912) at the TLD's WHOIS server. DNS and registration data are looked up at the same time.
 *
 * The addresses DNS answers with are only reported, never connected to, so the guard does not check them.
 *
 * The DNS servers a caller names are asked on port 53 only ({@link checkDnsServers}): any other port would let a
 * caller probe public hosts' ports through the service. Another port is accepted only for an address that the
 * outbound guard refuses by default and SAI_OUTBOUND_ALLOW opens (a DNS server of local development or a test).
 */
import { withTargetUrl } from './report-url.ts';
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import { parse as parseDomain } from 'tldts';
import { CodedError } from '../errors.ts';
import { OutboundGuard, TargetForbiddenError } from '../net/guard.ts';
import { BUNDLED_RDAP_BOOTSTRAP, queryRdap, rdapBaseForAddress, rdapBaseForDomain, type RdapBootstrap, type RegistrationData } from './rdap.ts';
import { isWhoisNotFound, parseWhois, queryWhois, type WhoisServer } from './whois.ts';

export type { RdapBootstrap } from './rdap.ts';

// ---- the report ----

/** An A or AAAA record: the address and its TTL in seconds, as the resolver gave it (a cache's TTL counts down). */
export interface AddressRecord {
  address: string;
  ttl: number;
}

/** An MX record (RFC 1035 3.3.9): the mail exchanger and its preference (lower is tried first). */
export interface MxRecord {
  exchange: string;
  priority: number;
}

/** A TXT record (RFC 1035 3.3.14): its character-strings, and their concatenation as SPF and DKIM read it (RFC 7208 3.3). */
export interface TxtRecord {
  value: string;
  strings: string[];
}

/** The SOA record (RFC 1035 3.3.13), with node:dns's field names; times in seconds. */
export interface SoaRecord {
  /** MNAME: the primary name server. */
  nsname: string;
  /** RNAME: the zone administrator's mailbox, `@` written as the first dot. */
  hostmaster: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  /** MINIMUM: the TTL of negative answers (RFC 2308 4). */
  minttl: number;
}

/** A CAA record (RFC 8659 4.1): flags (128 = issuer critical), property tag (`issue`, `issuewild`, `iodef`…) and value. */
export interface CaaRecord {
  flags: number;
  critical: boolean;
  tag: string;
  value: string;
}

/** The record types the tool asks for. */
export type DnsRecordType = 'A' | 'AAAA' | 'CNAME' | 'MX' | 'NS' | 'TXT' | 'SOA' | 'CAA';

/** The host's records by type; a type with no records is absent (`{}` for a name that does not exist). */
export interface DnsRecords {
  A?: AddressRecord[];
  AAAA?: AddressRecord[];
  CNAME?: string[];
  MX?: MxRecord[];
  NS?: string[];
  TXT?: TxtRecord[];
  SOA?: SoaRecord;
  CAA?: CaaRecord[];
}

/**
 * A DNS failure. `code` is the DNS RCODE's name where there is one (`NXDOMAIN`, `SERVFAIL`, `REFUSED`, `FORMERR`,
 * `NOTIMP`), else `TIMEOUT` (no answer in time), `CONNREFUSED` (nothing listens on the server's port),
 * `NOT_PUBLIC` (not asked: a name outside the public DNS, or a private address's reverse name) or node:dns's own
 * code (`EBADRESP`…).
 */
export interface DnsError {
  code: string;
  message: string;
}

/** A query of one record type that failed while others answered. */
export interface DnsQueryError extends DnsError {
  type: DnsRecordType;
}

/** An address of the host with its reverse names (PTR records of `in-addr.arpa` / `ip6.arpa`, RFC 1035 3.5, RFC 3596 2.5). */
export interface IpAddressInfo {
  address: string;
  family: 4 | 6;
  /** The PTR names, lower case; empty when the address has none. */
  reverse: string[];
  /** Why the reverse lookup failed (not set for "no PTR record"), else null. */
  error: DnsError | null;
}

/** Why the registration data is missing or partial. */
export type WhoisErrorCode =
  | 'not_found' // the registry has no such domain (RDAP 404, a WHOIS "no match")
  | 'no_domain' // the host has no registered domain (a public suffix, an unknown TLD, a private address)
  | 'no_service' // neither RDAP nor a WHOIS server is known for the TLD or the address
  | 'forbidden' // the outbound guard refused the server's address
  | 'unreachable' // the server could not be reached (refused, reset, DNS)
  | 'timeout' // no answer within the time budget
  | 'bad_response'; // an HTTP error status, a body that is not RDAP JSON, a WHOIS text without known fields

/** The registration data (`whois`), from RDAP or port-43 WHOIS. */
export interface WhoisRecord extends RegistrationData {
  /** The protocol of the server that answered (with data, "not found" or an unreadable answer); null when none answered. */
  source: 'rdap' | 'whois' | null;
  /** The RDAP request URL (after redirects), or `whois://<server>[:port]/<query>`; null when no server was asked. */
  url: string | null;
  /** The port-43 answer as text (at most {@link RAW_WHOIS_CHARS} characters); null for RDAP. */
  raw: string | null;
  error: { code: WhoisErrorCode; message: string } | null;
}

/** The response of the DNS/WHOIS tool. */
export interface DnsWhoisReport {
  /** The host looked up: lower case, A-labels (punycode), no brackets, no trailing dot. */
  host: string;
  host_type: 'name' | 'ipv4' | 'ipv6';
  /** The registered domain RDAP/WHOIS was asked about; null for an IP literal or a public suffix. */
  domain: string | null;
  dns: DnsRecords;
  /** Why the name has no records: `NXDOMAIN`, or the error every query failed with; null when it answered. */
  error: DnsError | null;
  /** Queries of single types that failed while others answered (a record type the servers cannot give). */
  dns_errors: DnsQueryError[];
  /** The A and AAAA addresses (for an IP literal: the address), each with its reverse names. */
  ips: IpAddressInfo[];
  whois: WhoisRecord;
}

/** Options of {@link lookupDnsWhois}. */
export interface DnsWhoisOptions {
  /** Decides every outbound connection: RDAP over HTTP(S), port-43 WHOIS, and the DNS servers a caller names. */
  guard: OutboundGuard;
  /**
   * DNS servers as `IP` or `IP:port` (`[IPv6]:port`), instead of the system's (node:dns `Resolver`, which reads
   * /etc/resolv.conf). Each is checked with the guard: a private, loopback or metadata address is refused unless
   * the allowlist permits it.
   */
  servers?: string[];
  /** The RDAP bootstrap and WHOIS server map. @default the bundled snapshot (rdap-bootstrap.json) */
  bootstrap?: RdapBootstrap;
  /** The port-43 WHOIS server of a TLD without RDAP; null for none. @default the bootstrap's `whois.servers`, port 43 */
  whoisServer?: (tld: string) => WhoisServer | null;
  /** Aborts the lookup: it rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Time for the whole lookup in ms: what has not answered by then is reported as `TIMEOUT` / `timeout`, and the
   * report is returned. @default 15000
   */
  timeoutMs?: number;
}

/** At most this many addresses get a reverse lookup (a round-robin name can have dozens). */
const MAX_REVERSE = 16;
/** Characters of a port-43 answer kept in `whois.raw`. */
const RAW_WHOIS_CHARS = 16_384;
const DEFAULT_TIMEOUT_MS = 15_000;

const RECORD_TYPES: DnsRecordType[] = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SOA', 'CAA'];

// ---- the schema ----

const nullableString = { type: ['string', 'null'] } as const;
const isoDateSchema = { type: ['string', 'null'], pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z)?$' } as const;
const errorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'message'],
  properties: { code: { type: 'string', minLength: 1 }, message: { type: 'string' } },
} as const;
const addressRecords = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['address', 'ttl'],
    properties: { address: { type: 'string' }, ttl: { type: 'integer', minimum: 0 } },
  },
} as const;
const u32 = { type: 'integer', minimum: 0, maximum: 4294967295 } as const;

/**
 * JSON Schema (draft-07, ajv strict mode with `allowUnionTypes`) of a {@link DnsWhoisReport}, what {@link lookupDnsWhois}
 * returns. The tool's answer adds `url`: {@link dnsWhoisReportSchema}.
 */
export const dnsWhoisLookupSchema = {
  $id: 'https://scrape-ai.dev/schemas/tools/dns-whois-lookup.json',
  title: 'DnsWhoisLookup',
  type: 'object',
  additionalProperties: false,
  required: ['host', 'host_type', 'domain', 'dns', 'error', 'dns_errors', 'ips', 'whois'],
  properties: {
    host: { type: 'string', minLength: 1 },
    host_type: { type: 'string', enum: ['name', 'ipv4', 'ipv6'] },
    domain: nullableString,
    dns: {
      type: 'object',
      additionalProperties: false,
      properties: {
        A: addressRecords,
        AAAA: addressRecords,
        CNAME: { type: 'array', items: { type: 'string' } },
        MX: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['exchange', 'priority'],
            properties: { exchange: { type: 'string' }, priority: { type: 'integer', minimum: 0, maximum: 65535 } },
          },
        },
        NS: { type: 'array', items: { type: 'string' } },
        TXT: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['value', 'strings'],
            properties: { value: { type: 'string' }, strings: { type: 'array', items: { type: 'string' } } },
          },
        },
        SOA: {
          type: 'object',
          additionalProperties: false,
          required: ['nsname', 'hostmaster', 'serial', 'refresh', 'retry', 'expire', 'minttl'],
          properties: { nsname: { type: 'string' }, hostmaster: { type: 'string' }, serial: u32, refresh: u32, retry: u32, expire: u32, minttl: u32 },
        },
        CAA: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['flags', 'critical', 'tag', 'value'],
            properties: { flags: { type: 'integer', minimum: 0, maximum: 255 }, critical: { type: 'boolean' }, tag: { type: 'string' }, value: { type: 'string' } },
          },
        },
      },
    },
    error: { anyOf: [errorSchema, { type: 'null' }] },
    dns_errors: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'code', 'message'],
        properties: { type: { type: 'string', enum: RECORD_TYPES }, code: { type: 'string', minLength: 1 }, message: { type: 'string' } },
      },
    },
    ips: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['address', 'family', 'reverse', 'error'],
        properties: {
          address: { type: 'string' },
          family: { type: 'integer', enum: [4, 6] },
          reverse: { type: 'array', items: { type: 'string' } },
          error: { anyOf: [errorSchema, { type: 'null' }] },
        },
      },
    },
    whois: {
      type: 'object',
      additionalProperties: false,
      required: ['source', 'url', 'registrar', 'registrar_iana_id', 'created', 'updated', 'expires', 'status', 'nameservers', 'dnssec', 'network', 'raw', 'error'],
      properties: {
        source: { enum: ['rdap', 'whois', null] },
        url: nullableString,
        registrar: nullableString,
        registrar_iana_id: nullableString,
        created: isoDateSchema,
        updated: isoDateSchema,
        expires: isoDateSchema,
        status: { type: 'array', items: { type: 'string' } },
        nameservers: { type: 'array', items: { type: 'string' } },
        dnssec: { type: ['boolean', 'null'] },
        network: {
          anyOf: [
            { type: 'null' },
            {
              type: 'object',
              additionalProperties: false,
              required: ['handle', 'name', 'start_address', 'end_address', 'cidrs', 'country', 'type', 'holder'],
              properties: {
                handle: nullableString,
                name: nullableString,
                start_address: nullableString,
                end_address: nullableString,
                cidrs: { type: 'array', items: { type: 'string' } },
                country: nullableString,
                type: nullableString,
                holder: nullableString,
              },
            },
          ],
        },
        raw: { type: ['string', 'null'], maxLength: RAW_WHOIS_CHARS },
        error: {
          anyOf: [
            { type: 'null' },
            {
              type: 'object',
              additionalProperties: false,
              required: ['code', 'message'],
              properties: {
                code: { type: 'string', enum: ['not_found', 'no_domain', 'no_service', 'forbidden', 'unreachable', 'timeout', 'bad_response'] },
                message: { type: 'string' },
              },
            },
          ],
        },
      },
    },
  },
} as const;

/** JSON Schema of the DNS/WHOIS tool's answer (POST /api/v1/tools/dns-whois/): `url` and the {@link DnsWhoisReport}. */
export const dnsWhoisReportSchema = withTargetUrl(dnsWhoisLookupSchema, 'https://scrape-ai.dev/schemas/tools/dns-whois.json', 'DnsWhoisReport');

// ---- the host and the servers ----

/** A host as the tool reads it: `url.hostname` without brackets and trailing dot, lower case. */
function normalizeHost(host: string): { host: string; type: DnsWhoisReport['host_type'] } {
  const h = host.trim().replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  const family = net.isIP(h);
  if (family === 4) return { host: h, type: 'ipv4' };
  if (family === 6) return { host: h, type: 'ipv6' };
  // What the WHATWG URL parser leaves in a hostname: LDH labels (A-labels for IDNs) and, in practice, `_`.
  if (!h || h.length > 253 || !/^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(h)) {
    throw new CodedError('invalid_url', `"${host}" is not a host name or an IP address`, [{ url: host }]);
  }
  return { host: h, type: 'name' };
}

/** The only port of a DNS server a caller names (DNS, RFC 1035 4.2), except for allowlisted private servers. */
export const DNS_SERVER_PORT = 53;

/** The guard without an allowlist: an address it refuses is private, loopback, link-local or metadata. */
const PUBLIC_ONLY = new OutboundGuard();

/**
 * Parses and checks the DNS servers a caller names: `IP`, `IP:port`, `[IPv6]` or `[IPv6]:port`. The port must be
 * {@link DNS_SERVER_PORT} (or left out), except for an address only SAI_OUTBOUND_ALLOW permits (local development,
 * tests), which may use any.
 * @returns the servers as `Resolver#setServers` takes them.
 * @throws CodedError `invalid_request` (`details: [{path, message}]`) for a server that is not an address, or a
 *   public one on a port other than 53; TargetForbiddenError (`target_forbidden`) for an address the guard refuses
 *   (`guard.refusal`).
 */
export function checkDnsServers(guard: OutboundGuard, servers: readonly string[]): string[] {
  return servers.map((raw, i) => {
    const s = raw.trim();
    let address = s;
    let port: number | null = null;
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s);
    const v4port = /^([\d.]+):(\d{1,5})$/.exec(s);
    if (bracketed) {
      address = bracketed[1]!;
      port = bracketed[2] ? Number(bracketed[2]) : null;
    } else if (v4port) {
      address = v4port[1]!;
      port = Number(v4port[2]);
    }
    const family = net.isIP(address);
    if (!family || (bracketed && family !== 6) || (port !== null && (port < 1 || port > 65535))) {
      throw new CodedError('invalid_request', `DNS server "${raw}" is not an IP address with an optional port`, [{ path: `servers[${i}]`, message: 'expected IP, IP:port or [IPv6]:port' }]);
    }
    const why = guard.refusal(address);
    if (why) throw new TargetForbiddenError(`Refused the DNS server ${address}: ${why}. Private, loopback, link-local and metadata addresses are not queried unless SAI_OUTBOUND_ALLOW permits them.`);
    if (port !== null && port !== DNS_SERVER_PORT && PUBLIC_ONLY.refusal(address) === null) {
      throw new CodedError('invalid_request', `DNS server "${raw}": DNS servers are asked on port ${DNS_SERVER_PORT} only (got ${port})`, [{ path: `servers[${i}]`, message: `port must be ${DNS_SERVER_PORT}` }]);
    }
    if (family === 6) return port === null ? address : `[${address}]:${port}`;
    return port === null ? address : `${address}:${port}`;
  });
}

/**
 * The registered domain of a host name (PSL ICANN section); a TLD the PSL lacks but the bootstrap knows counts too.
 * `public` says whether the name is under a TLD of the public DNS at all (not `localhost`, `*.internal`, `*.local`,
 * a single label): the others are not looked up.
 */
function registeredDomain(host: string, bootstrap: RdapBootstrap): { domain: string | null; tld: string | null; public: boolean } {
  const parsed = parseDomain(host, { allowPrivateDomains: false });
  const labels = host.split('.');
  const tld = labels.at(-1) ?? null;
  if (parsed.isIcann) return { domain: parsed.domain, tld, public: true };
  if (tld && labels.length >= 2 && (rdapBaseForDomain(bootstrap, host) || bootstrap.whois?.servers[tld])) {
    return { domain: labels.slice(-2).join('.'), tld, public: true };
  }
  return { domain: null, tld, public: false };
}

// ---- DNS ----

const RCODE_NAMES: Record<string, string> = {
  ENOTFOUND: 'NXDOMAIN', ESERVFAIL: 'SERVFAIL', EREFUSED: 'REFUSED', EFORMERR: 'FORMERR', ENOTIMP: 'NOTIMP',
  ETIMEOUT: 'TIMEOUT', ECANCELLED: 'TIMEOUT', ECONNREFUSED: 'CONNREFUSED',
};

const RCODE_TEXT: Record<string, string> = {
  NXDOMAIN: 'the name does not exist (NXDOMAIN)',
  SERVFAIL: 'the DNS server failed to answer (SERVFAIL)',
  REFUSED: 'the DNS server refused the query (REFUSED)',
  FORMERR: 'the DNS server could not read the query (FORMERR)',
  NOTIMP: 'the DNS server does not support the query (NOTIMP)',
  TIMEOUT: 'no answer in time',
  CONNREFUSED: 'the DNS server could not be reached',
};

/** A node:dns error as a {@link DnsError}; null for "no records of this type" (ENODATA: NOERROR with no answer). */
function dnsError(err: unknown, what: string): DnsError | null {
  const nodeCode = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
  if (nodeCode === 'ENODATA') return null;
  const code = RCODE_NAMES[nodeCode] ?? nodeCode;
  return { code, message: `${what}: ${RCODE_TEXT[code] ?? (err as Error).message}` };
}

/** The records of one type, in the report's shape. */
async function query(resolver: Resolver, host: string, type: DnsRecordType): Promise<DnsRecords[DnsRecordType]> {
  const lower = (s: string) => s.toLowerCase().replace(/\.$/, '');
  switch (type) {
    case 'A':
      return (await resolver.resolve4(host, { ttl: true })).map((r) => ({ address: r.address, ttl: r.ttl }));
    case 'AAAA':
      return (await resolver.resolve6(host, { ttl: true })).map((r) => ({ address: r.address, ttl: r.ttl }));
    case 'CNAME':
      return (await resolver.resolveCname(host)).map(lower);
    case 'MX':
      return (await resolver.resolveMx(host)).map((r) => ({ exchange: lower(r.exchange), priority: r.priority })).sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange));
    case 'NS':
      return (await resolver.resolveNs(host)).map(lower).sort();
    case 'TXT':
      return (await resolver.resolveTxt(host)).map((strings) => ({ value: strings.join(''), strings }));
    case 'SOA': {
      const s = await resolver.resolveSoa(host);
      return { nsname: lower(s.nsname), hostmaster: lower(s.hostmaster), serial: s.serial, refresh: s.refresh, retry: s.retry, expire: s.expire, minttl: s.minttl };
    }
    case 'CAA':
      return (await resolver.resolveCaa(host)).map((r) => {
        // node:dns puts the tag as the key (`{critical: 0, issue: 'letsencrypt.org'}`).
        const [tag, value] = Object.entries(r).find(([k]) => k !== 'critical' && k !== 'type') ?? ['', ''];
        const flags = Number(r.critical) || 0;
        return { flags, critical: (flags & 128) !== 0, tag, value: String(value) };
      });
  }
}

/** The DNS part of the report: records, the name-level error, per-type errors, addresses with reverse names. */
async function lookupDns(
  resolver: Resolver, guard: OutboundGuard, host: string, hostType: DnsWhoisReport['host_type'], publicName: boolean, signal: AbortSignal,
): Promise<Pick<DnsWhoisReport, 'dns' | 'error' | 'dns_errors' | 'ips'>> {
  if (hostType !== 'name') {
    return { dns: {}, error: null, dns_errors: [], ips: [await reverse(resolver, guard, host, hostType === 'ipv4' ? 4 : 6, signal)] };
  }
  if (!publicName) {
    return { dns: {}, error: { code: 'NOT_PUBLIC', message: `${host} is not under a top-level domain of the public DNS: not looked up` }, dns_errors: [], ips: [] };
  }
  const settled = await Promise.allSettled(RECORD_TYPES.map((t) => query(resolver, host, t)));
  const dns: DnsRecords = {};
  const failures: DnsQueryError[] = [];
  let answered = false;
  settled.forEach((s, i) => {
    const type = RECORD_TYPES[i]!;
    if (s.status === 'fulfilled') {
      answered = true;
      const v = s.value;
      if (Array.isArray(v) ? v.length : v) (dns as Record<string, unknown>)[type] = v;
      return;
    }
    // c-ares reads a NODATA answer to an SOA query that carries only a CNAME (a subdomain aliased to a name
    // that is not a zone apex) as a bad response: there is no SOA at the name, which is not an error.
    const e = type === 'SOA' && (s.reason as NodeJS.ErrnoException).code === 'EBADRESP' ? null : dnsError(s.reason, `${type} ${host}`);
    if (!e) answered = true; // NODATA: the name exists
    else failures.push({ type, ...e });
  });
  if (!answered) {
    // Every query failed: NXDOMAIN if any server said so (RFC 8020: nothing exists at or below the name), else the
    // first failure (a server that times out or refuses every query).
    const nx = failures.find((f) => f.code === 'NXDOMAIN') ?? failures[0]!;
    return { dns: {}, error: { code: nx.code, message: nx.code === 'NXDOMAIN' ? `${host} does not exist (NXDOMAIN)` : nx.message }, dns_errors: [], ips: [] };
  }
  const addresses = [...(dns.A ?? []).map((r) => [r.address, 4] as const), ...(dns.AAAA ?? []).map((r) => [r.address, 6] as const)];
  const unique = [...new Map(addresses.map(([a, f]) => [a, f])).entries()].slice(0, MAX_REVERSE);
  const ips = await Promise.all(unique.map(([a, f]) => reverse(resolver, guard, a, f, signal)));
  return { dns, error: null, dns_errors: failures, ips };
}

/**
 * The reverse names of an address; "no PTR" (NXDOMAIN or NODATA) is an empty list, not an error. Addresses the guard
 * refuses (private, loopback, link-local…) are not looked up: `NOT_PUBLIC`.
 */
async function reverse(resolver: Resolver, guard: OutboundGuard, address: string, family: 4 | 6, signal: AbortSignal): Promise<IpAddressInfo> {
  // The reverse zones of private ranges exist only inside (a VPC's resolver names its hosts): not asked.
  const why = guard.refusal(address);
  if (why) return { address, family, reverse: [], error: { code: 'NOT_PUBLIC', message: `PTR ${address}: not looked up, ${why}` } };
  // Resolver#cancel() ends the queries under way only: one started after the budget ran out would run on.
  if (signal.aborted) return { address, family, reverse: [], error: { code: 'TIMEOUT', message: `PTR ${address}: ${RCODE_TEXT.TIMEOUT}` } };
  try {
    const names = (await resolver.reverse(address)).map((n) => n.toLowerCase().replace(/\.$/, ''));
    return { address, family, reverse: [...new Set(names)], error: null };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return { address, family, reverse: [], error: null };
    return { address, family, reverse: [], error: dnsError(err, `PTR ${address}`) };
  }
}

// ---- registration data ----

function emptyWhois(error: WhoisRecord['error'], url: string | null = null, source: WhoisRecord['source'] = null): WhoisRecord {
  return {
    source, url, registrar: null, registrar_iana_id: null, created: null, updated: null, expires: null,
    status: [], nameservers: [], dnssec: null, network: null, raw: null, error,
  };
}

/** The WHOIS URL of a port-43 query, for the report: `whois://host[:port]/query`. */
function whoisUrl(server: WhoisServer, q: string): string {
  const host = net.isIPv6(server.host) ? `[${server.host}]` : server.host;
  return `whois://${host}${server.port === 43 ? '' : `:${server.port}`}/${q}`;
}

/** Port-43 WHOIS of a registered domain at its TLD's server (RFC 3912). */
async function lookupPort43(guard: OutboundGuard, server: WhoisServer, domain: string, timeoutMs: number, signal: AbortSignal): Promise<WhoisRecord> {
  const url = whoisUrl(server, domain);
  let text: string;
  try {
    text = await queryWhois(guard, server, domain, { timeoutMs, signal });
  } catch (err) {
    if (signal.aborted && (signal.reason as Error)?.name !== 'TimeoutError') throw signal.reason;
    if ((err as CodedError).code === 'target_forbidden') return emptyWhois({ code: 'forbidden', message: `The outbound guard refused the WHOIS server: ${(err as Error).message}` }, url);
    if ((err as Error).name === 'TimeoutError') return emptyWhois({ code: 'timeout', message: `The WHOIS server ${server.host} did not answer within ${timeoutMs} ms` }, url);
    const code = (err as NodeJS.ErrnoException).code;
    return emptyWhois({ code: 'unreachable', message: `The WHOIS server ${server.host}:${server.port} could not be reached${code ? ` (${code})` : ''}: ${(err as Error).message}` }, url);
  }
  if (!text.trim()) return emptyWhois({ code: 'bad_response', message: `The WHOIS server ${server.host} closed the connection without an answer` }, url, 'whois');
  const raw = text.slice(0, RAW_WHOIS_CHARS);
  if (isWhoisNotFound(text)) return { ...emptyWhois({ code: 'not_found', message: `The WHOIS server ${server.host} has no record of ${domain}` }, url, 'whois'), raw };
  const data = parseWhois(text);
  if (!data) return { ...emptyWhois({ code: 'bad_response', message: `The answer of the WHOIS server ${server.host} has none of the known fields` }, url, 'whois'), raw };
  return { source: 'whois', url, ...data, network: null, raw, error: null };
}

/** The registration data of a registered domain or an IP address: RDAP where the bootstrap has it, else port 43. */
async function lookupRegistration(
  guard: OutboundGuard, target: { domain: string | null; tld: string | null; address: string | null },
  bootstrap: RdapBootstrap, whoisServer: (tld: string) => WhoisServer | null, timeoutMs: number, signal: AbortSignal,
): Promise<WhoisRecord> {
  if (target.address) {
    const base = rdapBaseForAddress(bootstrap, target.address);
    if (!base) return emptyWhois({ code: 'no_service', message: `No RDAP service is known for ${target.address} (not allocated by a regional Internet registry)` });
    return rdapRecord(guard, `${base}ip/${target.address}`, timeoutMs, signal);
  }
  if (!target.domain) {
    return emptyWhois({ code: 'no_domain', message: 'The host has no registered domain (it is a public suffix, or its TLD is unknown)' });
  }
  const base = rdapBaseForDomain(bootstrap, target.domain);
  if (base) return rdapRecord(guard, `${base}domain/${target.domain}`, timeoutMs, signal);
  const server = target.tld ? whoisServer(target.tld) : null;
  if (!server) return emptyWhois({ code: 'no_service', message: `Neither RDAP nor a WHOIS server is known for .${target.tld}` });
  return lookupPort43(guard, server, target.domain, timeoutMs, signal);
}

async function rdapRecord(guard: OutboundGuard, url: string, timeoutMs: number, signal: AbortSignal): Promise<WhoisRecord> {
  const r = await queryRdap(guard, url, { timeoutMs, signal });
  if (!r.ok) return emptyWhois({ code: r.code, message: r.message }, r.url, r.code === 'not_found' || r.code === 'bad_response' ? 'rdap' : null);
  return { source: 'rdap', url: r.url, ...r.data, raw: null, error: null };
}

// ---- the tool ----

/**
 * Looks up a host's DNS records, addresses and reverse names, and its registered domain's registration data.
 * A name that does not exist, a registry that does not answer, a record type a server refuses: each is reported in
 * the answer, not thrown.
 *
 * **Example usage:**
 * ```ts
 * const report = await lookupDnsWhois(url.hostname, { guard, signal: call.signal });
 * report.dns.MX; // [{exchange: 'mx1.example.com', priority: 10}]
 * report.whois.expires; // '2026-08-13T04:00:00Z'
 * ```
 * @param host `URL#hostname`: a name (A-labels) or an IP literal (IPv6 with or without brackets).
 * @throws CodedError `invalid_url` for a host that is neither; `invalid_request` for a malformed DNS server;
 *   TargetForbiddenError (`target_forbidden`) for a DNS server the guard refuses; the signal's reason when aborted.
 */
export async function lookupDnsWhois(host: string, options: DnsWhoisOptions): Promise<DnsWhoisReport> {
  const { host: h, type } = normalizeHost(host);
  const servers = options.servers ? checkDnsServers(options.guard, options.servers) : null;
  const bootstrap = options.bootstrap ?? BUNDLED_RDAP_BOOTSTRAP;
  const whoisServer = options.whoisServer ?? ((tld: string) => {
    const server = bootstrap.whois?.servers[tld];
    return server ? { host: server, port: 43 } : null;
  });
  const timeoutMs = Math.max(100, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const deadline = Date.now() + timeoutMs;
  options.signal?.throwIfAborted();

  // One signal for the lookup: the caller's, or the budget running out (a TimeoutError reason).
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(new DOMException(`The DNS/WHOIS lookup of ${h} exceeded its ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
  const onAbort = () => budget.abort(options.signal!.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });

  // c-ares: each query is sent up to `tries` times, waiting `timeout` ms, then doubling; the budget cancels the rest.
  const resolver = new Resolver({ timeout: Math.min(2_000, Math.max(200, Math.floor(timeoutMs / 4))), tries: 2 });
  if (servers) resolver.setServers(servers);
  const onBudget = () => resolver.cancel();
  budget.signal.addEventListener('abort', onBudget, { once: true });

  const { domain, tld, public: publicName } = type === 'name' ? registeredDomain(h, bootstrap) : { domain: null, tld: null, public: true };
  try {
    const [dnsPart, whois] = await Promise.all([
      lookupDns(resolver, options.guard, h, type, publicName, budget.signal),
      lookupRegistration(options.guard, { domain, tld, address: type === 'name' ? null : h }, bootstrap, whoisServer, Math.max(1, deadline - Date.now()), budget.signal),
    ]);
    if (options.signal?.aborted) throw options.signal.reason;
    return { host: h, host_type: type, domain, ...dnsPart, whois };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    budget.signal.removeEventListener('abort', onBudget);
  }
}
