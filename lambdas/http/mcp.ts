/**
 * POST /mcp (issue 27; docs/mcp.md): the Model Context Protocol over Streamable HTTP, stateless, with the caller's key
 * (the authorizer ran, as for every keyed route). Each tool call runs a REST route's handler in-process as the caller
 * (lambdas/mcp/operations.ts). The local service streams an SSE answer (progress notifications while a job runs, then
 * the result); API Gateway's REST integration cannot, so on AWS the answer arrives whole.
 */
import { answerMcpRequest } from '../mcp/server.ts';
import { MAX_WAITS } from '../mcp/tools.ts';
import { invoker } from '../mcp/operations.ts';
import type { Services } from '../core/services.ts';
import type { AccountRecord } from '../core/ports.ts';
import { reserveBadRequestSlot } from '../core/throttles.ts';
import { fixedWindow } from '../core/fixed-window.ts';
import { CodedError, isCodedError, type ErrorCode } from '../errors.ts';
import { apiHandler, MAX_BODY_BYTES } from './middleware.ts';
import { responseStreamsEnabled, streamedResult } from './response-streams.ts';
import { route } from '../routes.ts';

/** API Gateway's integration limit, ms: a request's answer must be sent within it on AWS. */
const GATEWAY_LIMIT_MS = 29_000;
/** Kept back on AWS from the gateway's limit for what follows a wait (the last status read, the rows, the answer), ms. */
const AFTER_WAIT_MS = 6_000;
/** The local service's default wait for a job, ms: under MCP clients' usual 60 s request time-out. */
const LOCAL_MAX_WAIT_MS = 45_000;

/**
 * The latest time a tool may stop waiting for a job, ms since the epoch: locally `SAI_MCP_WAIT_MS` (45 s) from now; on
 * AWS what API Gateway's 29 s (from the request's arrival) and the function's own deadline leave, less
 * {@link AFTER_WAIT_MS}.
 */
function waitUntil(requestTimeEpoch: number | undefined, remainingMs: number): number {
  const now = Date.now();
  if (process.env.AWS_LAMBDA_FUNCTION_NAME) return Math.min((requestTimeEpoch ?? now) + GATEWAY_LIMIT_MS, now + remainingMs) - AFTER_WAIT_MS;
  const set = Number(process.env.SAI_MCP_WAIT_MS);
  return now + (process.env.SAI_MCP_WAIT_MS !== undefined && Number.isFinite(set) && set >= 0 ? set : LOCAL_MAX_WAIT_MS);
}

/**
 * A place among the account's {@link MAX_WAITS} waits (a store counter per 15-minute window, so a place
 * a crashed process never gave back is free again by the next window).
 * @returns the function that gives it back, or null when the account has none left.
 */
async function waitSlot(svc: Services, account: AccountRecord): Promise<(() => Promise<void>) | null> {
  const w = fixedWindow(svc.clock.now(), 15 * 60_000);
  const counter = `mcp-waits:${w.key}`;
  const { ok } = await svc.store.consume(account.id, counter, 1, MAX_WAITS, new Date(w.end.getTime() + 15 * 60_000).toISOString());
  return ok ? () => svc.store.refund(account.id, counter, 1) : null;
}

/** The service's code for an HTTP refusal of the SDK's transport. */
const TRANSPORT_CODES: Readonly<Record<number, ErrorCode>> = { 406: 'not_acceptable', 413: 'payload_too_large', 415: 'unsupported_media_type', 404: 'not_found', 405: 'method_not_allowed' };

/**
 * The SDK transport's refusal of a request (an `Accept` or `Content-Type` it cannot serve, a body that is not JSON-RPC)
 * as the service's `{error, code, details}` like every other 4xx (the protocol lets the body of such an answer be
 * anything): the transport's message, and its JSON-RPC error code in `details`.
 */
function transportRefusal(status: number, body: string): CodedError {
  let rpc: { code?: number; message?: string } = {};
  try {
    rpc = (JSON.parse(body) as { error?: typeof rpc }).error ?? {};
  } catch {
    // Not JSON: the status alone says it.
  }
  const message = rpc.message ?? `The MCP transport refused the request (HTTP ${status})`;
  const code: ErrorCode = TRANSPORT_CODES[status] ?? (status === 400 ? (rpc.code === -32700 ? 'invalid_json' : 'invalid_request') : 'internal_error');
  return new CodedError(code, message, rpc.code === undefined ? [] : [{ jsonrpc_code: rpc.code }]);
}

/**
 * The body as the SDK transport reads it: UTF-8 decoded by `TextDecoder` (which drops one leading byte-order mark), then
 * `JSON.parse`d. The handler parses it once, checks it, and hands the transport that same value (`parsedBody`), so what
 * runs is what was counted (a second reading of the text once let a U+FEFF-prefixed batch of 100 calls through).
 * @returns the parsed value, or `undefined` when the body is not JSON (the transport then answers its parse error).
 */
function parseBody(bytes: Uint8Array): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(new TextDecoder().decode(bytes)) as unknown };
  } catch {
    return undefined;
  }
}

/** Messages of a JSON-RPC body that run something: every message with a method other than a notification's. */
function runnableMessages(parsed: unknown): number {
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.filter((m) => typeof m === 'object' && m !== null && 'method' in m
    && !(typeof m.method === 'string' && m.method.startsWith('notifications/'))).length;
}

/**
 * Refuses what the transport would take but the service does not: a body over {@link MAX_BODY_BYTES} (API Gateway
 * lets 10 MB through; the local server refuses it before this) and a batch of more than one request (MCP 2025-06-18
 * dropped batches; each request of one would run at once, past the usage plan's count of one HTTP request). The
 * count is of the parsed value the transport is then given, never of another reading of the text.
 * @throws CodedError `payload_too_large`, `invalid_request`
 */
function checkBody(bytes: Uint8Array, parsed: { value: unknown } | undefined): void {
  if (bytes.byteLength > MAX_BODY_BYTES) throw new CodedError('payload_too_large', `The request body is too large (size: ${bytes.byteLength} bytes, limit: ${MAX_BODY_BYTES} bytes)`);
  if (!parsed || !Array.isArray(parsed.value)) return;
  const requests = runnableMessages(parsed.value);
  if (requests > 1) throw new CodedError('invalid_request', `A JSON-RPC batch to /mcp may hold one request; got ${requests} (send them one POST each)`, [{ path: '(body)', message: 'at most one request' }]);
}

/** The transport's request: the caller's headers (a value `Headers` refuses is left out), a fixed URL. */
function mcpRequest(headers: Record<string, string | undefined> | null, body: Uint8Array): Request {
  const h = new Headers();
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v == null) continue;
    try {
      h.set(k, v);
    } catch {
      // A header name or value the Fetch standard refuses: not one the transport reads.
    }
  }
  // The URL is only the transport's `requestInfo`; the caller's Host is not trusted to make one.
  return new Request('http://localhost/mcp', { method: 'POST', headers: h, body: new Uint8Array(body) });
}

export const handler = apiHandler(route('POST', '/mcp'), async (event, context) => {
  const { svc, account } = context;
  const counted = async <T>(work: () => T | Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      // A refused request counts against the bad-request allowance, as a refused REST body does.
      if (isCodedError(err) && err.code !== 'rate_limited') await reserveBadRequestSlot(svc, account);
      throw err;
    }
  };
  const body = event.body == null ? new Uint8Array() : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  const parsed = parseBody(body);
  await counted(() => checkBody(body, parsed));
  const res = await answerMcpRequest(mcpRequest(event.headers, body), {
    parsedBody: parsed?.value,
    invoke: invoker({ event, context }),
    waitUntil: waitUntil(event.requestContext?.requestTimeEpoch, context.getRemainingTimeInMillis?.() ?? GATEWAY_LIMIT_MS),
    waitSlot: () => waitSlot(svc, account),
    countRefusal: () => reserveBadRequestSlot(svc, account),
    stream: responseStreamsEnabled(),
    maxBodyBytes: MAX_BODY_BYTES,
  });
  // One Cache-Control: the service's.
  const answerHeaders = Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== 'cache-control'));
  Object.assign(answerHeaders, { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store' });
  if (res.stream) return streamedResult({ statusCode: res.status, headers: answerHeaders, body: '' }, res.stream);
  if (res.status >= 400) return counted(() => { throw transportRefusal(res.status, res.body); });
  return { statusCode: res.status, headers: answerHeaders, body: res.body };
});
