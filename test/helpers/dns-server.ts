/**
 * A small authoritative-and-recursive-looking DNS server on loopback, for the DNS/WHOIS tool's tests.
 *
 * It answers from a zone given as records by owner name, over UDP and TCP on the same port (RFC 1035 4.2;
 * TCP messages carry a two-byte length prefix, 4.2.2), the way a recursive resolver answers a stub resolver:
 * - a name with records: the records of the asked type (NOERROR; none of that type is NODATA, RFC 2308 2.2);
 * - a name with a CNAME: the CNAME, then the target's records of the asked type (RFC 1034 4.3.2 step 3a); a chain
 *   that ends at a name the zone does not have is answered with NXDOMAIN (RFC 6604 3);
 * - a name the zone does not have: NXDOMAIN (RFC 1035 4.1.1 RCODE 3) with the zone's SOA in the authority section;
 * - over UDP, an answer larger than the client's EDNS payload size (RFC 6891 6.2.5), or than 512 bytes without
 *   EDNS, goes back truncated (TC bit, no answers), so the client retries over TCP (RFC 7766 5).
 *
 * `mode` makes it misbehave: `silent` never answers (time-outs), `servfail` and `refused` answer every query with
 * that RCODE; `failTypes` answers SERVFAIL for some record types only. Every query it reads is recorded in `queries`.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type Packet } from 'dns-packet';

/** How the server answers. */
type DnsServerMode = 'answer' | 'silent' | 'servfail' | 'refused';

/** One query the server read. */
interface DnsQueryLog {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
}

/** A record of the zone: a dns-packet answer of any type, its owner `name` optional (taken from the zone's key). */
type ZoneRecord = Answer extends infer A ? (A extends Answer ? Omit<A, 'name'> & { name?: string } : never) : never;

/** Options of {@link startDnsServer}. */
export interface DnsServerOptions {
  /** Records by owner name (lower case, no trailing dot); each record's `name` is filled in from the key. */
  zone: Record<string, ZoneRecord[]>;
  /** The SOA record sent with NXDOMAIN answers, if any (an entry of `zone`, by owner name). */
  soaOwner?: string;
  /** @default 'answer' */
  mode?: DnsServerMode;
  /** Loopback address to bind. @default '127.0.0.1' */
  host?: string;
  /** Record types answered with SERVFAIL while the others are answered (a server that cannot give one type). */
  failTypes?: string[];
}

/** A running test DNS server. */
export interface DnsTestServer {
  host: string;
  port: number;
  /** `host:port`, as `Resolver#setServers` takes it (IPv6 in brackets). */
  address: string;
  queries: DnsQueryLog[];
  mode: DnsServerMode;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

function normalize(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** Builds the answer packet of one query (NOERROR, NODATA or NXDOMAIN), following CNAMEs inside the zone. */
function answer(query: DecodedPacket, options: DnsServerOptions, mode: DnsServerMode): Packet {
  const question = query.questions?.[0];
  const base: Packet = {
    type: 'response',
    id: query.id,
    questions: query.questions ?? [],
    answers: [],
    authorities: [],
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
  };
  if (mode === 'servfail') return { ...base, flags: base.flags! | RCODE.SERVFAIL };
  if (mode === 'refused') return { ...base, flags: base.flags! | RCODE.REFUSED };
  if (!question) return { ...base, flags: base.flags! | 1 /* FORMERR */ };
  if (options.failTypes?.includes(question.type)) return { ...base, flags: base.flags! | RCODE.SERVFAIL };
  const records = (owner: string) => (options.zone[owner] ?? []).map((r) => ({ ...r, name: r.name ?? owner }) as Answer);
  const answers: Answer[] = [];
  let owner = normalize(question.name);
  for (let hops = 0; hops < 8; hops++) {
    if (!(owner in options.zone)) {
      // A CNAME chain that ends at a name that does not exist: the chain, with NXDOMAIN (RFC 6604 3).
      const soa = options.soaOwner ? records(options.soaOwner).filter((r) => r.type === 'SOA') : [];
      return { ...base, flags: base.flags! | RCODE.NXDOMAIN, answers, authorities: soa };
    }
    const here = records(owner);
    const cname = here.find((r) => r.type === 'CNAME');
    if (cname && question.type !== 'CNAME') {
      answers.push(cname);
      owner = normalize(String((cname as { data: unknown }).data));
      continue;
    }
    answers.push(...here.filter((r) => r.type === question.type));
    break;
  }
  return { ...base, answers };
}

/** The UDP payload size the client accepts: its EDNS OPT record's (RFC 6891 6.1.2), else 512 (RFC 1035 4.2.1). */
function udpLimit(query: DecodedPacket): number {
  const opt = query.additionals?.find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined;
  return Math.max(512, Math.min(opt?.udpPayloadSize ?? 512, 4096));
}

/**
 * Starts a DNS server on a loopback address and a free port (the same port for UDP and TCP).
 *
 * **Example usage:**
 * ```ts
 * const dns = await startDnsServer({ zone: { 'example.test': [{ type: 'A', ttl: 300, data: '192.0.2.1' }] } });
 * resolver.setServers([dns.address]);
 * await dns.close();
 * ```
 */
export async function startDnsServer(options: DnsServerOptions): Promise<DnsTestServer> {
  const host = options.host ?? '127.0.0.1';
  const queries: DnsQueryLog[] = [];
  const state = { mode: options.mode ?? 'answer' };
  const sockets = new Set<net.Socket>();

  const respond = (buf: Buffer, transport: 'udp' | 'tcp'): Buffer | null => {
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(buf);
    } catch {
      return null;
    }
    const q = query.questions?.[0];
    queries.push({ name: q ? normalize(q.name) : '', type: q?.type ?? '', transport });
    if (state.mode === 'silent') return null;
    const packet = answer(query, options, state.mode);
    let out = dnsPacket.encode(packet);
    if (transport === 'udp' && out.length > udpLimit(query)) {
      out = dnsPacket.encode({ ...packet, answers: [], authorities: [], flags: packet.flags! | dnsPacket.TRUNCATED_RESPONSE });
    }
    return out;
  };

  for (let attempt = 0; ; attempt++) {
    const udp = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    udp.on('message', (msg, rinfo) => {
      const out = respond(msg, 'udp');
      if (out) udp.send(out, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, host, () => resolve());
    });
    const port = udp.address().port;
    const tcp = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 2) {
          const length = pending.readUInt16BE(0);
          if (pending.length < 2 + length) break;
          const message = pending.subarray(2, 2 + length);
          pending = pending.subarray(2 + length);
          const out = respond(message, 'tcp');
          if (out) {
            const prefix = Buffer.alloc(2);
            prefix.writeUInt16BE(out.length);
            socket.write(Buffer.concat([prefix, out]));
          }
        }
      });
    });
    const listening = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, host, () => resolve(true));
    });
    if (!listening) {
      udp.close();
      if (attempt < 5) continue;
      throw new Error(`startDnsServer: no port free for both UDP and TCP on ${host}`);
    }
    return {
      host,
      port,
      address: net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`,
      queries,
      get mode() {
        return state.mode;
      },
      set mode(m: DnsServerMode) {
        state.mode = m;
      },
      close: () => new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        udp.close();
        tcp.close(() => resolve());
      }),
    };
  }
}
