/**
 * POST /api/v1/tools/ssl-checker/ (docs/spec.md, "Tool endpoints"; docs/tools.md "ssl-checker"): the certificate and chain of the
 * URL's host (port: `port`, else the URL's, else 443), trust, the TLS versions it accepts, HSTS, and a grade. The
 * handshakes and the certificates are read in a tool worker (core/tool-thread.ts), like pages.
 */
import { runPageTool, timeLeftMs, toolWork } from '../core/tools.ts';
import { checkSsl, checkSslPortAllowed } from '../tools/ssl.ts';
import { apiHandler, jsonText } from './middleware.ts';
import { route } from '../routes.ts';

interface SslBody { url: string; port?: number }

const work = toolWork<SslBody>('ssl-checker', import.meta.url, async ({ call, guard }, b) => {
  const port = b.port ?? (call.url.port ? Number(call.url.port) : 443);
  return { url: call.url.href, ...(await checkSsl(call.url.hostname.replace(/^\[|\]$/g, ''), port, { guard, signal: call.signal, timeoutMs: Math.min(20_000, timeLeftMs(call)) })) };
});

export const handler = apiHandler<SslBody>(route('POST', '/api/v1/tools/ssl-checker/'), async (_event, { svc, account, body }) => {
  checkSslPortAllowed(svc.plans, account.plan, body); // a port the plan does not allow: 403 before anything is spent
  return jsonText(200, await runPageTool(svc, account, work, body.url, body));
});
