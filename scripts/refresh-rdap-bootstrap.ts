/**
 * Rewrites lambdas/tools/rdap-bootstrap.json, the DNS/WHOIS tool's snapshot of IANA's public registration data:
 * - `dns`, `ipv4`, `ipv6`: the RDAP bootstrap registries of RFC 9224 from https://data.iana.org/rdap/, as published;
 * - `whois.servers`: for each TLD of https://data.iana.org/TLD/tlds-alpha-by-domain.txt that has no RDAP service
 *   in `dns`, the `whois:` line of its record at whois.iana.org (RFC 3912; the Root Zone Database's WHOIS server).
 *
 * Usage: `node scripts/refresh-rdap-bootstrap.ts` (a few minutes: one WHOIS query per TLD without RDAP, four at a
 * time), then review the diff and commit it. An operator's script: it reaches IANA directly, not through the
 * outbound guard, and the service never runs it.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { RdapBootstrap, RdapBootstrapFile } from '../lambdas/tools/rdap.ts';

const OUT = path.resolve(import.meta.dirname, '../lambdas/tools/rdap-bootstrap.json');
const IANA_RDAP = 'https://data.iana.org/rdap/';
const IANA_TLDS = 'https://data.iana.org/TLD/tlds-alpha-by-domain.txt';
const IANA_WHOIS = 'whois.iana.org';

/** The snapshot file: the bootstrap data and where it came from. */
export type BootstrapSnapshot = Required<RdapBootstrap> & { about: string };

/** Fetches one bootstrap registry and checks its shape (RFC 9224 section 3). */
async function fetchRegistry(name: 'dns' | 'ipv4' | 'ipv6'): Promise<RdapBootstrapFile> {
  const res = await fetch(`${IANA_RDAP}${name}.json`, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`${IANA_RDAP}${name}.json: HTTP ${res.status}`);
  const json = (await res.json()) as RdapBootstrapFile;
  const ok = typeof json.publication === 'string' && typeof json.version === 'string' && Array.isArray(json.services)
    && json.services.every((s) => Array.isArray(s) && Array.isArray(s[0]) && Array.isArray(s[1]));
  if (!ok || json.services.length < (name === 'dns' ? 100 : 3)) throw new Error(`${IANA_RDAP}${name}.json is not a bootstrap registry`);
  return json;
}

/** One query to whois.iana.org; resolves with the answer's text. */
function whoisIana(query: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host: IANA_WHOIS, port: 43 }, () => socket.end(`${query}\r\n`));
    socket.setTimeout(15_000, () => socket.destroy(new Error(`${IANA_WHOIS}: no answer for ${query}`)));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

/** The WHOIS server of each TLD without RDAP, from its IANA record's `whois:` line (none: left out). */
async function whoisServers(tlds: string[]): Promise<Record<string, string>> {
  const servers: Record<string, string> = {};
  let next = 0;
  const worker = async () => {
    while (next < tlds.length) {
      const tld = tlds[next++]!;
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          const host = /^whois:\s*(\S+)/im.exec(await whoisIana(tld))?.[1];
          if (host) servers[tld] = host.toLowerCase();
          break;
        } catch (err) {
          if (attempt === 2) console.warn(`${tld}: ${(err as Error).message}`);
        }
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return Object.fromEntries(Object.entries(servers).sort(([a], [b]) => a.localeCompare(b)));
}

/** The snapshot as written: IANA's key order, one bootstrap service or one WHOIS server per line. */
export function formatSnapshot(s: BootstrapSnapshot): string {
  const registry = (f: RdapBootstrapFile) => [
    '{',
    `    "description": ${JSON.stringify(f.description ?? '')},`,
    `    "publication": ${JSON.stringify(f.publication)},`,
    '    "services": [',
    f.services.map((svc) => `      ${JSON.stringify(svc)}`).join(',\n'),
    '    ],',
    `    "version": ${JSON.stringify(f.version)}`,
    '  }',
  ].join('\n');
  const servers = Object.entries(s.whois.servers).map(([tld, host]) => `      ${JSON.stringify(tld)}: ${JSON.stringify(host)}`).join(',\n');
  return [
    '{',
    `  "about": ${JSON.stringify(s.about)},`,
    `  "dns": ${registry(s.dns)},`,
    `  "ipv4": ${registry(s.ipv4)},`,
    `  "ipv6": ${registry(s.ipv6)},`,
    '  "whois": {',
    `    "collected": ${JSON.stringify(s.whois.collected ?? '')},`,
    '    "servers": {',
    servers,
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const [dns, ipv4, ipv6] = await Promise.all([fetchRegistry('dns'), fetchRegistry('ipv4'), fetchRegistry('ipv6')]);
  const tldsRes = await fetch(IANA_TLDS, { signal: AbortSignal.timeout(30_000) });
  if (!tldsRes.ok) throw new Error(`${IANA_TLDS}: HTTP ${tldsRes.status}`);
  const withRdap = new Set(dns.services.flatMap(([entries]) => entries.map((e) => e.toLowerCase())));
  const tlds = (await tldsRes.text()).split('\n').map((l) => l.trim().toLowerCase()).filter((l) => l && !l.startsWith('#'));
  const servers = await whoisServers(tlds.filter((t) => !withRdap.has(t)));
  const collected = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const snapshot: BootstrapSnapshot = {
    about: `IANA RDAP bootstrap registries (RFC 9224) and port-43 WHOIS servers of the TLDs without RDAP; IANA publishes both as public data. dns, ipv4 and ipv6 are ${IANA_RDAP}{dns,ipv4,ipv6}.json as published (publication dates inside); whois.servers are the whois: lines of ${IANA_WHOIS} for each TLD of ${IANA_TLDS} without RDAP, collected ${collected}. Written by scripts/refresh-rdap-bootstrap.ts.`,
    dns, ipv4, ipv6,
    whois: { collected, servers },
  };
  fs.writeFileSync(OUT, formatSnapshot(snapshot));
  console.log(`${path.relative(process.cwd(), OUT)}: dns ${dns.publication} (${withRdap.size} TLDs with RDAP), ipv4 ${ipv4.publication}, ipv6 ${ipv6.publication}, ${Object.keys(servers).length} WHOIS servers`);
}

if (import.meta.main) await main();
