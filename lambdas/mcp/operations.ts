/**
 * How an MCP tool does its work: by running a REST route's own handler in this process (lambdas/routes.ts
 * `MCP_OPERATIONS`), with the MCP request's authorizer context, so that the body's validation, the bad-request
 * throttle, the plan, the rate limits, metering, the outbound guard and the error codes are exactly the route's
 * (issue 27: "the same core functions, not calls to our own HTTP API"). No socket is opened: the call is a function
 * call with a proxy event built here.
 *
 * The handlers are imported statically: in a Lambda bundle a tool worker loads the bundle itself to find the tools'
 * registered work (core/tool-thread.ts), so every tool's `toolWork` must run when the module loads.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { route, type MCP_OPERATIONS } from '../routes.ts';
import { requestHeader } from '../http/middleware.ts';
import { handler as configsList } from '../http/configs-list.ts';
import { handler as configsGet } from '../http/configs-get.ts';
import { handler as generate } from '../http/generate.ts';
import { handler as run } from '../http/run.ts';
import { handler as jobStatus } from '../http/job-status.ts';
import { handler as jobResults } from '../http/job-results.ts';
import { handler as seoAnalyzer } from '../http/tools-seo-analyzer.ts';
import { handler as techDetector } from '../http/tools-tech-detector.ts';
import { handler as leadGeneration } from '../http/tools-lead-generation.ts';
import { handler as screenshot } from '../http/tools-screenshot.ts';
import { handler as contentExtractor } from '../http/tools-content-extractor.ts';
import { handler as brokenLinkChecker } from '../http/tools-broken-link-checker.ts';
import { handler as dnsWhois } from '../http/tools-dns-whois.ts';
import { handler as sslChecker } from '../http/tools-ssl-checker.ts';

/** `METHOD path` of a route the MCP server may call. */
export type Operation = (typeof MCP_OPERATIONS)[number];

type RouteHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** A middy handler as the local router calls it: event and context (middy's own type adds an optional third argument). */
const h = (handler: unknown) => handler as RouteHandler;

const HANDLERS: Readonly<Record<Operation, RouteHandler>> = {
  'GET /api/v1/configs/': h(configsList),
  'GET /api/v1/configs/{id}/': h(configsGet),
  'POST /api/v1/generate/': h(generate),
  'POST /api/v1/run/': h(run),
  'GET /api/v1/jobs/{id}/status/': h(jobStatus),
  'GET /api/v1/jobs/{id}/results/': h(jobResults),
  'POST /api/v1/tools/seo-analyzer/': h(seoAnalyzer),
  'POST /api/v1/tools/tech-detector/': h(techDetector),
  'POST /api/v1/tools/lead-generation/': h(leadGeneration),
  'POST /api/v1/tools/screenshot/': h(screenshot),
  'POST /api/v1/tools/content-extractor/': h(contentExtractor),
  'POST /api/v1/tools/broken-link-checker/': h(brokenLinkChecker),
  'POST /api/v1/tools/dns-whois/': h(dnsWhois),
  'POST /api/v1/tools/ssl-checker/': h(sslChecker),
};

/** One call of a route: its `{id}`, query parameters, JSON body and extra headers (`Accept`). */
export interface OperationRequest {
  id?: string;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The caller of the MCP request: its proxy event (with the authorizer's context) and Lambda context. */
export interface Caller {
  event: APIGatewayProxyEvent;
  context: Context;
}

/** A route call's time locally, ms: API Gateway's integration limit, as the local router gives each request. */
const CALL_DEADLINE_MS = 29_000;

/**
 * The Lambda context of one route call: an object of its own (the route's middlewares set `svc`, `account` and `body`
 * on it) with the call's request id. On Lambda the function's deadline is every call's; locally each call gets API
 * Gateway's 29 s from its start, as a request of its own would, not what is left of the MCP request's (a tool that
 * waited 40 s for a job must still read its rows).
 */
export function callContext(outer: Context, requestId: string, onLambda = Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME)): Context {
  const { getRemainingTimeInMillis, done, fail, succeed, ...plain } = outer;
  const deadline = Date.now() + CALL_DEADLINE_MS;
  const remaining = onLambda ? getRemainingTimeInMillis : () => Math.max(0, deadline - Date.now());
  return { ...plain, awsRequestId: requestId, getRemainingTimeInMillis: remaining, done, fail, succeed } as Context;
}

/** Runs routes' handlers as the caller. */
export type Invoke = (op: Operation, req?: OperationRequest) => Promise<APIGatewayProxyResult>;

/**
 * An {@link Invoke} for one MCP request: each call gets a proxy event made from the MCP request's (its
 * `requestContext`, with the authorizer's account and key digest, and its `Authorization` header) and a fresh
 * Lambda context object, so the route's middlewares see exactly what they would over HTTP.
 * @returns the route's proxy result, errors included (`{error, code, details}` with its status).
 */
export function invoker(caller: Caller): Invoke {
  let calls = 0;
  return async (op, req = {}) => {
    const [method, path] = op.split(' ') as [string, string];
    const def = route(method as 'GET' | 'POST', path);
    const concretePath = req.id === undefined ? path : path.replace('{id}', encodeURIComponent(req.id));
    const authorization = requestHeader(caller.event, 'authorization');
    const headers: Record<string, string> = {
      ...(authorization ? { authorization } : {}),
      ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...req.headers,
    };
    const requestId = `${caller.event.requestContext.requestId}:${++calls}`;
    const event: APIGatewayProxyEvent = {
      ...caller.event,
      httpMethod: def.method,
      path: concretePath,
      resource: def.path,
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
      pathParameters: req.id === undefined ? null : { id: req.id },
      queryStringParameters: req.query && Object.keys(req.query).length ? req.query : null,
      multiValueQueryStringParameters: req.query && Object.keys(req.query).length ? Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, [v]])) : null,
      body: req.body === undefined ? null : JSON.stringify(req.body),
      isBase64Encoded: false,
      requestContext: { ...caller.event.requestContext, httpMethod: def.method, path: concretePath, resourcePath: def.path, requestId },
    };
    return HANDLERS[op](event, callContext(caller.context, requestId));
  };
}
