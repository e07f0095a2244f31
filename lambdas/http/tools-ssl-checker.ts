/**
 * POST /api/v1/tools/ssl-checker/ (SPEC.md area B; docs/tools.md "ssl-checker"): the certificate and chain of the
 * URL's host (port: `port`, else the URL's, else 443), trust, the TLS versions it accepts, HSTS, and a grade.
 */
import { startToolCall, timeLeftMs, withRefundOnUnreachable } from '../core/tools.ts';
import { checkSsl, checkSslPortAllowed } from '../tools/ssl.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

interface SslBody { url: string; port?: number }

export const handler = apiHandler<SslBody>(route('POST', '/api/v1/tools/ssl-checker/'), async (_event, { svc, account, body: b }) => {
  checkSslPortAllowed(svc.plans, account.plan, b); // a port the plan does not allow: 403 before anything is spent
  const call = await startToolCall(svc, account, 'ssl-checker', b.url);
  const port = b.port ?? (call.url.port ? Number(call.url.port) : 443);
  return json(200, await withRefundOnUnreachable(svc, account, call, () => checkSsl(call.url.hostname.replace(/^\[|\]$/g, ''), port, {
    guard: svc.guard, signal: call.signal, timeoutMs: Math.min(20_000, timeLeftMs(call)),
  })));
});
