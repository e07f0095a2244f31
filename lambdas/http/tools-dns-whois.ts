/**
 * POST /api/v1/tools/dns-whois/ (docs/spec.md, "Tool endpoints"; docs/tools.md "dns-whois"): the DNS records of the URL's host,
 * its addresses with their reverse names, and its registration (RDAP, port-43 WHOIS where a registry has no RDAP);
 * `servers` names the DNS servers to ask (each checked by the outbound guard). The answers are read in a tool
 * worker (core/tool-thread.ts), like pages.
 */
import { runPageTool, timeLeftMs, toolWork } from '../core/tools.ts';
import { checkDnsServers, lookupDnsWhois } from '../tools/dns-whois.ts';
import { configuredRdapBootstrap } from '../tools/rdap.ts';
import { apiHandler, jsonText } from './middleware.ts';
import { route } from '../routes.ts';

interface DnsBody { url: string; servers?: string[] }

const work = toolWork<DnsBody>('dns-whois', import.meta.url, async ({ call, guard }, b) => ({
  url: call.url.href,
  ...(await lookupDnsWhois(call.url.hostname.replace(/^\[|\]$/g, ''), {
    guard, bootstrap: configuredRdapBootstrap(), ...(b.servers ? { servers: b.servers } : {}), signal: call.signal, timeoutMs: Math.min(15_000, timeLeftMs(call)),
  })),
}));

export const handler = apiHandler<DnsBody>(route('POST', '/api/v1/tools/dns-whois/'), async (_event, { svc, account, body: b }) => {
  if (b.servers) checkDnsServers(svc.guard, b.servers); // a refused server is a 400 before anything is spent
  return jsonText(200, await runPageTool(svc, account, work, b.url, b));
});
