/**
 * The outbound-request guard (docs/architecture.md, idea 6). Every request the service makes on a user's
 * behalf (engine fetches, tool requests, every request a browser page makes) is decided here.
 *
 * The decision is taken on the address a connection actually goes to, not on the URL's text:
 * - the WHATWG URL parser first normalizes every IPv4 notation (decimal `2130706433`, hex `0x7f.1`,
 *   octal `0177.0.0.1`, short `127.1`) to dotted quads, so an IP literal is checked as what it is;
 * - host names are resolved by {@link OutboundGuard.lookup}, which the HTTP client uses as the socket's
 *   `lookup`: the checked address is the one the socket connects to (no second resolution, so no
 *   DNS-rebinding window), and every redirect hop opens its connection through the same path;
 * - IPv4-mapped IPv6 (`::ffff:127.0.0.1`), NAT64, 6to4, Teredo and IPv4-compatible (`::127.0.0.1`)
 *   forms are unwrapped or refused.
 *
 * Only globally routable unicast addresses pass (ipaddr.js range `unicast`; for IPv6, within 2000::/3),
 * unless an allowlist entry (SAI_OUTBOUND_ALLOW: CIDRs or host names) permits them. Only http and https pass.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { CodedError } from '../errors.ts';

/** Thrown when a target is refused; code `target_forbidden`. */
export class TargetForbiddenError extends CodedError {
  constructor(message: string, url?: string) {
    super('target_forbidden', message, url ? [{ url }] : []);
    this.name = 'TargetForbiddenError';
  }
}

/** One resolved address. `family` is 4 or 6. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to its addresses. The default is `dns.lookup` (getaddrinfo: /etc/hosts, then DNS). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardOptions {
  /**
   * Entries that pass although private: CIDRs (`127.0.0.0/8`, `::1/128`), single addresses, or host
   * names (`localhost`, `.internal.example` for a suffix). Empty by default.
   */
  allow?: readonly string[];
  /** Host name resolution; tests inject one to model names that resolve inside. */
  resolve?: Resolver;
}

const defaultResolve: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family }));

/** Names a range for the error message, e.g. "loopback", "private", "link-local (cloud metadata)". */
function rangeLabel(range: string, address: string): string {
  if (address === '169.254.169.254' || address === 'fd00:ec2::254') return 'link-local (cloud metadata service)';
  const labels: Record<string, string> = {
    loopback: 'loopback', private: 'private', linkLocal: 'link-local', uniqueLocal: 'unique local',
    unspecified: 'unspecified', broadcast: 'broadcast', multicast: 'multicast', carrierGradeNat: 'carrier-grade NAT',
    reserved: 'reserved', rfc6052: 'NAT64', '6to4': '6to4', teredo: 'Teredo', rfc6145: 'IPv4-translated', ipv4Mapped: 'IPv4-mapped',
    ipv4Compatible: 'IPv4-compatible (deprecated)', notGlobalUnicast: 'reserved (outside 2000::/3)',
  };
  return labels[range] ?? range;
}

/** IPv6 global unicast (RFC 4291): ipaddr.js calls every address outside its special ranges `unicast`. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** The deprecated IPv4-compatible form (`::10.0.0.1`, RFC 4291 2.5.5.1); `::` and `::1` have their own ranges. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** Parses SAI_OUTBOUND_ALLOW: comma-separated CIDRs, addresses or host names; blanks ignored. */
export function parseAllowList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * Decides on outbound targets. One instance per process is enough; it keeps no per-request state.
 *
 * **Example usage:**
 * ```ts
 * const guard = new OutboundGuard({ allow: ['127.0.0.0/8'] });
 * guard.checkUrl('http://169.254.169.254/latest/meta-data/'); // throws TargetForbiddenError
 * const agent = new Agent({ connect: guard.connectOptions() }); // every socket goes through guard.lookup
 * ```
 */
export class OutboundGuard {
  readonly allow: readonly string[];
  private readonly cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  private readonly hosts = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly resolve: Resolver;
  /** Decisions on addresses already seen (address -> refusal or null). */
  private readonly decided = new Map<string, string | null>();

  /** @throws Error when an allowlist entry is neither a CIDR, an address nor a host name. */
  constructor(options: GuardOptions = {}) {
    this.allow = options.allow ?? [];
    this.resolve = options.resolve ?? defaultResolve;
    for (const entry of this.allow) {
      const e = entry.toLowerCase();
      if (e.includes('/')) {
        try {
          this.cidrs.push(ipaddr.parseCIDR(e));
        } catch {
          throw new Error(`SAI_OUTBOUND_ALLOW: "${entry}" is not a valid CIDR`);
        }
      } else if (ipaddr.isValid(e.replace(/^\[|\]$/g, ''))) {
        const a = ipaddr.parse(e.replace(/^\[|\]$/g, ''));
        this.cidrs.push([a, a.kind() === 'ipv4' ? 32 : 128]);
      } else if (/^\.?[a-z0-9-]+(\.[a-z0-9-]+)*\.?$/.test(e)) {
        if (e.startsWith('.')) this.suffixes.push(e);
        else this.hosts.add(e.replace(/\.$/, ''));
      } else {
        throw new Error(`SAI_OUTBOUND_ALLOW: "${entry}" is neither a CIDR, an IP address nor a host name`);
      }
    }
  }

  /** A guard configured from the environment (SAI_OUTBOUND_ALLOW). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): OutboundGuard {
    return new OutboundGuard({ allow: parseAllowList(env.SAI_OUTBOUND_ALLOW) });
  }

  /** Allowlisted by name (IP literals are matched by the CIDR entries only). */
  private hostAllowed(hostname: string): boolean {
    const h = hostname.toLowerCase().replace(/\.$/, '');
    return this.hosts.has(h) || this.suffixes.some((s) => h.endsWith(s));
  }

  /**
   * Why an address is refused, as `"10.0.0.1 is a private address"`, or `null` when it may be connected to.
   * @param address an IPv4 or IPv6 address (no brackets).
   */
  refusal(address: string): string | null {
    const known = this.decided.get(address);
    if (known !== undefined) return known;
    const c = this.classify(address);
    const why = c && `${c.address} is ${c.kind}`;
    // The allowlist never changes, so a decision holds; a bounded cache spares a crawl the parse per request.
    if (this.decided.size >= 4096) this.decided.clear();
    this.decided.set(address, why);
    return why;
  }

  /** The refused address (IPv4-mapped forms unwrapped) and its kind ("a private address"), or null. */
  private classify(address: string): { address: string; kind: string } | null {
    let addr: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      addr = ipaddr.parse(address);
    } catch {
      return { address: `"${address}"`, kind: 'not an IP address' };
    }
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
    for (const [net, bits] of this.cidrs) {
      if (net.kind() === addr.kind() && addr.match(net, bits)) return null;
    }
    let range: string = addr.range();
    // Outside 2000::/3 nothing is assigned as global unicast, and `::10.0.0.1` (IPv4-compatible) still
    // reaches the embedded IPv4 address through some stacks' automatic tunnels: refuse both.
    if (range === 'unicast' && addr.kind() === 'ipv6' && !addr.match(IPV6_GLOBAL_UNICAST)) {
      range = addr.match(IPV4_COMPATIBLE) ? 'ipv4Compatible' : 'notGlobalUnicast';
    }
    if (range === 'unicast') return null;
    const label = rangeLabel(range, addr.toString());
    return { address: addr.toString(), kind: `${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label} address` };
  }

  /**
   * Checks what can be checked without resolving: the scheme, and the address when the host is an IP
   * literal (in any notation the URL parser accepts).
   * @returns the parsed URL.
   * @throws TargetForbiddenError for a refused scheme or address; CodedError `invalid_url` for a URL that does not parse.
   */
  checkUrl(input: string | URL): URL {
    let url: URL;
    try {
      url = typeof input === 'string' ? new URL(input) : input;
    } catch {
      throw new CodedError('invalid_url', `"${String(input)}" is not a valid absolute URL`, [{ url: String(input) }]);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TargetForbiddenError(`Refused ${url.href}: only http and https URLs are fetched (got ${url.protocol.replace(':', '')})`, url.href);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) {
      const why = this.refusal(host);
      if (why) throw new TargetForbiddenError(`Refused ${url.href}: ${why}. ${this.hint()}`, url.href);
    }
    return url;
  }

  private hint(): string {
    return 'Private, loopback, link-local and metadata addresses are not fetched unless SAI_OUTBOUND_ALLOW permits them.';
  }

  /**
   * Resolves a host and checks every address it resolves to (one refused address refuses the host, so a
   * round-robin name cannot smuggle an inside address).
   * @throws TargetForbiddenError when an address is refused; the resolver's error when the name does not resolve.
   */
  async resolveChecked(hostname: string): Promise<ResolvedAddress[]> {
    const host = hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) {
      const why = this.refusal(host);
      if (why) throw new TargetForbiddenError(`Refused ${host}: ${why}. ${this.hint()}`);
      return [{ address: host, family: net.isIP(host) }];
    }
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolve(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') throw new CodedError('dns_failed', `${host} does not resolve to any address`, [{ host }]);
      throw err;
    }
    if (!addresses.length) throw new CodedError('dns_failed', `${host} does not resolve to any address`, [{ host }]);
    if (!this.hostAllowed(host)) {
      for (const a of addresses) {
        const c = this.classify(a.address);
        // The address itself stays out of the message: job messages are read by callers, and an inside
        // address of an inside name is not theirs to learn.
        if (c) throw new TargetForbiddenError(`Refused ${host}: it resolves to ${c.kind}. ${this.hint()}`, host);
      }
    }
    return addresses;
  }

  /**
   * A `lookup` for `net.connect`/`tls.connect` (and so for undici's connector): resolves through
   * {@link resolveChecked}, so the socket connects only to an address this guard accepted.
   */
  readonly lookup = (hostname: string, options: dns.LookupOptions | number | undefined, callback: (...args: unknown[]) => void): void => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    const family = typeof options === 'object' && options !== null ? options.family : options;
    this.resolveChecked(hostname).then((addresses) => {
      const wanted = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
      const list = wanted.length ? wanted : addresses;
      if (all) callback(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    }, (err: unknown) => callback(err));
  };
}
