/**
 * POST /mcp (issue 27; docs/mcp.md): the Model Context Protocol over Streamable HTTP, stateless, with the caller's key
 * (the authorizer ran, as for every keyed route). Each tool call runs a REST route's handler in-process as the caller
 * (lambdas/mcp/operations.ts). The local service streams an SSE answer (progress notifications while a job runs, then
 * the result); API Gateway's REST integration cannot, so on AWS the answer arrives whole.
 */
import { answerMcpRequest } from '../mcp/server.ts';
import { invoker } from '../mcp/operations.ts';
import { reserveBadRequestSlot } from '../core/throttles.ts';
import { CodedError, type ErrorCode } from '../errors.ts';
import { apiHandler, requestHeader } from './middleware.ts';
import { responseStreamsEnabled, streamedResult } from './response-streams.ts';
import { route } from '../routes.ts';

/** API Gateway's integration limit (29 s) less room for the answer: the longest a tool waits for a job on AWS, ms. */
const LAMBDA_MAX_WAIT_MS = 24_000;
/** The local service's default wait for a job, ms: under MCP clients' usual 60 s request time-out. */
const LOCAL_MAX_WAIT_MS = 45_000;

/**
 * Most JSON-RPC messages in one POST (a batch, which MCP 2025-03-26 allowed and later versions dropped): each tool
 * call of a batch runs at once, so a batch is bounded well below the SDK's own 100.
 */
export const MAX_MCP_BATCH = 10;

/** The deployment's longest wait for a job, ms (`SAI_MCP_WAIT_MS` locally). */
function maxWaitMs(remainingMs: number): number {
  if (process.env.AWS_LAMBDA_FUNCTION_NAME) return Math.max(0, Math.min(LAMBDA_MAX_WAIT_MS, remainingMs - 5_000));
  const set = Number(process.env.SAI_MCP_WAIT_MS);
  return Number.isFinite(set) && set >= 0 ? set : LOCAL_MAX_WAIT_MS;
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

export const handler = apiHandler(route('POST', '/mcp'), async (event, context) => {
  const body = event.body == null ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (body.trimStart().startsWith('[')) {
    let n = 0;
    try {
      const parsed: unknown = JSON.parse(body);
      n = Array.isArray(parsed) ? parsed.length : 0;
    } catch {
      // Not JSON: the SDK's transport answers the JSON-RPC parse error.
    }
    if (n > MAX_MCP_BATCH) throw new CodedError('invalid_request', `A JSON-RPC batch to /mcp may hold at most ${MAX_MCP_BATCH} messages; got ${n}`, [{ path: '(body)', message: `at most ${MAX_MCP_BATCH} messages` }]);
  }
  const headers = new Headers();
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v != null) headers.set(k, v);
  const request = new Request(`http://${requestHeader(event, 'host') ?? 'localhost'}/mcp`, { method: 'POST', headers, body });
  const res = await answerMcpRequest(request, {
    invoke: invoker({ event, context }),
    maxWaitMs: maxWaitMs(context.getRemainingTimeInMillis?.() ?? 30_000),
    countRefusal: () => reserveBadRequestSlot(context.svc, context.account),
    stream: responseStreamsEnabled(),
  });
  const answerHeaders = { ...res.headers, 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store' };
  if (res.stream) return streamedResult({ statusCode: res.status, headers: answerHeaders, body: '' }, res.stream);
  if (res.status >= 400) throw transportRefusal(res.status, res.body);
  return { statusCode: res.status, headers: answerHeaders, body: res.body };
});
