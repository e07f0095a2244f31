/**
 * Upstream proxies (docs/crawler.md, "Upstream proxies"; docs/security.md): the operator's declaration of proxy groups
 * (HTTP, HTTPS and SOCKS5, with credentials) and the group a config gets. The one way a connection goes through a
 * proxy is ./tunnel.ts (kept apart, with the SOCKS library, so that the API's functions, which only read
 * declarations, do not carry it).
 *
 * The outbound guard still decides on the target: the caller resolves the target's name through the guard and
 * hands the checked address to {@link openTunnel}, which asks the proxy for a tunnel to that address (an HTTP
 * `CONNECT 93.184.215.14:443`, a SOCKS5 CONNECT to the IPv4/IPv6 address), never to the name, so the proxy cannot
 * resolve it again to another (inside) address. TLS to the target then runs through the tunnel with the target's
 * name (SNI and certificate check). A proxy is only ever an address the operator declared.
 *
 * Credentials stay in this module: a proxy is named by its {@link UpstreamProxy.label} (`group#2 (host:port)`)
 * in every message, and an error from below is rewritten without them.
 */
import net from 'node:net';
import { CodedError } from '../errors.ts';

/** One upstream proxy, as the operator declared it. */
export interface UpstreamProxy {
  protocol: 'http:' | 'https:' | 'socks5:';
  host: string;
  port: number;
  /** Decoded user name; `{session}` in it is replaced by the session's id (rotating proxies' sticky sessions). */
  username?: string;
  password?: string;
  /** `group#n (host:port)`: how messages name it. Never holds a credential. */
  label: string;
  /** Whether the user name has `{session}`: each session of the pool is then another exit of the same proxy. */
  perSession: boolean;
}

/** The operator's proxy groups: SAI_PROXIES / SAI_PROXIES_FILE locally, a Secrets Manager secret on AWS. */
export interface ProxyGroups {
  /** The group a config without `target.proxy` uses; null: none. */
  default: string | null;
  groups: ReadonlyMap<string, readonly UpstreamProxy[]>;
}

/** No proxies declared. */
export const NO_PROXIES: ProxyGroups = { default: null, groups: new Map() };

const DEFAULT_PORTS: Record<UpstreamProxy['protocol'], number> = { 'http:': 80, 'https:': 443, 'socks5:': 1080 };

/**
 * Parses the operator's declaration: `{"default": "residential", "groups": {"dc": ["http://user:pass@dc1.example:8080",
 * "socks5://user:pass@10.0.0.5:1080"], "residential": ["http://cust-{session}:pw@gate.example:7777"]}}`.
 * @throws Error naming what is wrong (a group, an entry by its position, never its credentials).
 */
export function parseProxyGroups(text: string | undefined, source = 'SAI_PROXIES'): ProxyGroups {
  if (!text?.trim()) return NO_PROXIES;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${source}: not JSON (expected {"default": "<group>", "groups": {"<group>": ["http://user:pass@host:port", …]}})`);
  }
  const r = raw as { default?: unknown; groups?: unknown };
  if (!r || typeof r !== 'object' || !r.groups || typeof r.groups !== 'object' || Array.isArray(r.groups)) throw new Error(`${source}: "groups" must be an object of group names to lists of proxy URLs`);
  const groups = new Map<string, UpstreamProxy[]>();
  for (const [name, list] of Object.entries(r.groups as Record<string, unknown>)) {
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(name) || name === 'none') throw new Error(`${source}: group name "${name.slice(0, 100)}" must be letters, digits, _ . - (and not "none")`);
    if (!Array.isArray(list) || list.length === 0 || list.length > 1000) throw new Error(`${source}: group "${name}" must be a list of 1 to 1000 proxy URLs`);
    groups.set(name, list.map((entry, i) => parseProxyUrl(entry, `${name}#${i + 1}`, source)));
  }
  const def = r.default === undefined || r.default === null ? null : String(r.default);
  if (def !== null && !groups.has(def)) throw new Error(`${source}: "default" names no group ("${def.slice(0, 100)}")`);
  return { default: def, groups };
}

function parseProxyUrl(entry: unknown, name: string, source: string): UpstreamProxy {
  let u: URL;
  try {
    u = new URL(String(entry));
  } catch {
    throw new Error(`${source}: proxy ${name} is not a URL`);
  }
  const protocol = u.protocol === 'socks5h:' || u.protocol === 'socks:' ? 'socks5:' : u.protocol;
  if (protocol !== 'http:' && protocol !== 'https:' && protocol !== 'socks5:') throw new Error(`${source}: proxy ${name} must be http://, https:// or socks5:// (got ${u.protocol.slice(0, 20)})`);
  if (u.pathname !== '/' && u.pathname !== '' || u.search || u.hash) throw new Error(`${source}: proxy ${name} must be scheme://[user:password@]host:port, without a path`);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = Number(u.port) || DEFAULT_PORTS[protocol];
  const username = u.username ? decodeURIComponent(u.username).replace(/%7Bsession%7D/gi, '{session}') : undefined;
  return {
    protocol, host, port,
    ...(username !== undefined ? { username } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    label: `${name} (${net.isIPv6(host) ? `[${host}]` : host}:${port})`,
    perSession: username?.includes('{session}') ?? false,
  };
}

/**
 * The proxies of a config's `target.proxy`: `none` is direct (null); a group name is that group; absent is the
 * operator's default group (direct when there is none).
 * @throws CodedError `invalid_config` at `target.proxy` for a group the operator did not declare (the message lists
 *   the declared ones).
 */
export function proxyGroupFor(choice: string | undefined, groups: ProxyGroups): readonly UpstreamProxy[] | null {
  if (choice === 'none') return null;
  const name = choice ?? groups.default;
  if (name === null) return null;
  const group = groups.groups.get(name);
  if (!group) {
    const known = [...groups.groups.keys()];
    throw new CodedError('invalid_config', `target.proxy: no proxy group named "${name}" (${known.length ? `the operator declares: ${known.join(', ')}` : 'the operator declares none'}; or none)`,
      [{ path: 'target.proxy', message: `no proxy group named "${name}"` }]);
  }
  return group;
}
