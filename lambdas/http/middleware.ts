/**
 * The middy middlewares every API handler is built from, one concern each (the AWS Powertools way):
 * the Lambda context in every log line (Powertools Logger), services, errors (the one place codes become
 * status codes), the caller's account, the JSON body.
 * Handlers take an API Gateway REST (v1) proxy event and return a proxy result, the same locally
 * (lambdas/adapters/local/api-gateway-event.ts builds the event) and on Lambda.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { CodedError, ERROR_CODES, isCodedError, type ErrorCode } from '../errors.ts';
import type { AccountRecord } from '../core/ports.ts';
import type { RouteDef } from '../routes.ts';
import { digestsEqual } from '../core/crypto.ts';
import { services, type Services } from '../core/services.ts';
import { logger } from '../logger.ts';
import { isBadRequestStatus, releaseBadRequestSlot, reserveBadRequestSlot } from '../core/throttles.ts';

export type ApiEvent = APIGatewayProxyEvent;
export type ApiResult = APIGatewayProxyResult;

/** What the middlewares hand to a handler, besides the event. */
export interface ApiContext extends Context {
  svc: Services;
  /** The caller (routes with auth). */
  account: AccountRecord;
  /** The parsed and validated JSON body (routes with a body schema). */
  body: unknown;
}

/**
 * HTTP status of each error code that can be an API answer, derived from the closed list
 * (`ERROR_CODES` in lambdas/errors.ts). A code without one (a job-level or CLI code) reaching a handler is
 * a programming error and answers 500.
 */
export const STATUS_BY_CODE: Readonly<Partial<Record<ErrorCode, number>>> = Object.fromEntries(
  Object.entries(ERROR_CODES).flatMap(([code, spec]) => ('status' in spec ? [[code, spec.status]] : [])),
);

/** Largest JSON body accepted, in bytes (docs/limits.md). */
export const MAX_BODY_BYTES = 1024 * 1024;

const BASE_HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'Access-Control-Allow-Origin': '*',
};

/** A JSON response. */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResult {
  return { statusCode, headers: { ...BASE_HEADERS, ...headers }, body: body === undefined ? '' : JSON.stringify(body) };
}

/** A JSON response whose body is already JSON text (the caller vouches for it). */
export function jsonText(statusCode: number, text: string): ApiResult {
  return { statusCode, headers: { ...BASE_HEADERS }, body: text };
}

/** An empty response (204). */
export function noContent(): ApiResult {
  return { statusCode: 204, headers: { 'Access-Control-Allow-Origin': '*' }, body: '' };
}

/** The error body of ARCHITECTURE.md: `{error, code, details}`. */
export function errorResult(code: ErrorCode, message: string, details: unknown[] = [], headers?: Record<string, string>): ApiResult {
  return json(STATUS_BY_CODE[code] ?? 500, { error: message, code, details }, headers);
}

/** Installs the process's services in the context (cold start builds them once). */
function withServices(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    before: async (request) => {
      request.context.svc = await services();
    },
  };
}

/** Maps thrown errors to `{error, code, details}` responses; anything uncoded is a 500 that is logged. */
function errors(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    onError: async (request) => {
      const err = request.error as unknown;
      if (isCodedError(err) && STATUS_BY_CODE[err.code]) {
        request.response = errorResult(err.code, err.message, err.details, err.headers);
        return;
      }
      if ((err as Error | null)?.name === 'BadCursorError') {
        request.response = errorResult('invalid_cursor', 'The cursor is not one this service returned');
        return;
      }
      const requestId = request.event?.requestContext?.requestId ?? request.context?.awsRequestId ?? 'unknown';
      logger.error('unhandled error', { requestId, error: err });
      request.response = errorResult('internal_error', `Internal error; quote request id ${requestId} when reporting it`);
    },
  };
}

/**
 * Loads the caller's account from the authorizer's context (`requestContext.authorizer.accountId`,
 * set by API Gateway from lambdas/authorizer, or by the local service, which runs the same authorizer).
 * The authorizer's result is cached (5 minutes per token on API Gateway, as locally), so the account is
 * read fresh here and the key the authorizer saw (`keyDigest`) must still be the account's: a replaced key
 * or a deleted account is refused at once. A context without `keyDigest` (cached by the authorizer of an
 * earlier deploy, for at most those 5 minutes) is checked by account only.
 */
function account(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    before: async (request) => {
      const auth = request.event.requestContext?.authorizer;
      const id = Number(auth?.accountId);
      const acc = Number.isInteger(id) && id > 0 ? await request.context.svc.store.getAccount(id) : null;
      if (!acc) throw new CodedError('unauthorized', 'Missing or invalid API key: send Authorization: Bearer sai_…');
      const seen = auth?.keyDigest;
      if (typeof seen === 'string' && !(acc.api_key_digest && digestsEqual(acc.api_key_digest, seen))) {
        throw new CodedError('unauthorized', 'Invalid API key: it was replaced; log in for the current one');
      }
      request.context.account = acc;
    },
  };
}

/**
 * The bad-request throttle of core/throttles.ts, on routes with an account and a body: a slot of the
 * account's allowance is taken before the body is parsed (429 when none is left) and given back unless
 * the call is refused with 400, 403 or 413.
 */
function badRequests(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  const reserved = new WeakMap<object, AccountRecord>();
  const release = async (request: { context: ApiContext }) => {
    const account = reserved.get(request.context);
    if (!account) return;
    reserved.delete(request.context);
    await releaseBadRequestSlot(request.context.svc, account).catch((e: unknown) => logger.warn('bad-request slot not given back', { error: e }));
  };
  return {
    before: async (request) => {
      if (await reserveBadRequestSlot(request.context.svc, request.context.account)) reserved.set(request.context, request.context.account);
    },
    after: release,
    onError: async (request) => {
      const err = request.error as unknown;
      if (isCodedError(err) && isBadRequestStatus(STATUS_BY_CODE[err.code] ?? 0)) {
        reserved.delete(request.context);
        return;
      }
      await release(request);
    },
  };
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: false });

function bodyProblems(errors: ErrorObject[]): Array<{ path: string; message: string }> {
  return errors.map((e) => {
    const path = e.instancePath.slice(1).replace(/\//g, '.');
    if (e.keyword === 'required') return { path: (e.params as { missingProperty: string }).missingProperty, message: 'is required' };
    if (e.keyword === 'additionalProperties') return { path: [path, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.'), message: 'is not a known field' };
    return { path: path || '(body)', message: e.message ?? 'is invalid' };
  });
}

/** Parses the JSON body (base64 too) and validates it against the route's schema. */
function jsonBody(validate: ValidateFunction): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    before: async (request) => {
      const e = request.event;
      const raw = e.body == null ? '' : e.isBase64Encoded ? Buffer.from(e.body, 'base64').toString('utf8') : e.body;
      if (Buffer.byteLength(raw) > MAX_BODY_BYTES) {
        throw new CodedError('payload_too_large', `The request body is too large (size: ${Buffer.byteLength(raw)} bytes, limit: ${MAX_BODY_BYTES} bytes)`);
      }
      let body: unknown;
      try {
        body = raw.trim() === '' ? {} : JSON.parse(raw);
      } catch (err) {
        const ct = requestHeader(e, 'content-type');
        throw new CodedError('invalid_json', `The request body is not valid JSON (${(err as Error).message})${ct && !/json/i.test(ct) ? `; send it with Content-Type: application/json, not ${ct}` : ''}`);
      }
      if (!validate(body)) {
        const problems = bodyProblems(validate.errors ?? []);
        throw new CodedError('invalid_request', `Invalid request body: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, problems);
      }
      request.context.body = body;
    },
  };
}

/**
 * Builds a route's Lambda handler: services, error mapping, the caller's account and the body, around
 * a function that does the route's work. Whether the route needs a key and its body's schema are the route
 * table's (lambdas/routes.ts), declared there once.
 *
 * **Example usage:**
 * ```ts
 * export const handler = apiHandler(route('GET', '/api/v1/me/'), async (event, { svc, account }) =>
 *   json(200, await accountView(svc, account)));
 * ```
 */
export function apiHandler<B = unknown>(
  def: Pick<RouteDef, 'auth' | 'body'>,
  fn: (event: ApiEvent, context: ApiContext & { body: B }) => Promise<ApiResult>,
) {
  const h = middy<ApiEvent, ApiResult, Error, ApiContext>().use(injectLambdaContext(logger, { resetKeys: true })).use(withServices()).use(errors());
  if (def.auth) h.use(account());
  if (def.auth && def.body) h.use(badRequests());
  if (def.body) h.use(jsonBody(ajv.compile(def.body)));
  return h.handler(fn as (event: ApiEvent, context: ApiContext) => Promise<ApiResult>);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `{id}` path parameter as a UUID. @throws CodedError `not_found` for anything else (no such resource). */
export function uuidParam(event: ApiEvent, what: string): string {
  const id = event.pathParameters?.id ?? '';
  if (!UUID_RE.test(id)) throw new CodedError('not_found', `${what} ${id} not found`);
  return id.toLowerCase();
}

/** A request header by name, whatever its case (API Gateway keeps the client's; node:http lower-cases). */
export function requestHeader(event: ApiEvent, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(event.headers ?? {})) if (k.toLowerCase() === lower && v != null) return v;
  return undefined;
}

/** Whether the caller asks for JSON in its `Accept` header (the screenshot tool answers an image otherwise). */
export function acceptsJson(event: ApiEvent): boolean {
  return /\bapplication\/json\b/i.test(requestHeader(event, 'accept') ?? '');
}

/** A binary response (an image), base64 in the proxy result as API Gateway's binary media types expect. */
export function binary(statusCode: number, body: Buffer, contentType: string, headers: Record<string, string> = {}): ApiResult {
  return {
    statusCode,
    headers: { 'Content-Type': contentType, 'Cache-Control': 'no-store', 'Access-Control-Allow-Origin': '*', ...headers },
    body: body.toString('base64'),
    isBase64Encoded: true,
  };
}
