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

/** The error body of docs/architecture.md: `{error, code, details}`. */
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

/** Most problems an `invalid_request` answer lists (message and details); the message counts the others (docs/errors.md). */
export const MAX_BODY_PROBLEMS = 10;
/** Longest field path quoted in a problem, characters; a longer one (a key of 500 KB) is cut and ends with `…`. */
const MAX_PROBLEM_PATH_CHARS = 100;
/** Largest `maxItems` a body schema may give an array: {@link boundedBody} keeps at most this many items plus one. */
const MAX_SCHEMA_ITEMS = 1000;

type Schema = Record<string, unknown>;
type BodyProblem = { path: string; message: string };

const isSchema = (x: unknown): x is Schema => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Checks once per route that a body schema bounds the work of a failed validation: every array has `maxItems` (at
 * most {@link MAX_SCHEMA_ITEMS}) and `additionalProperties` is never a schema, so that {@link boundedBody} can cut a
 * body down to what the schema can complain about.
 * @throws Error naming the schema path (a programming error, caught when the handler module loads).
 */
function assertBoundedSchema(schema: Schema, at = '(body)'): void {
  if (isSchema(schema.items)) {
    if (typeof schema.maxItems !== 'number' || schema.maxItems > MAX_SCHEMA_ITEMS) throw new Error(`body schema ${at}: an array needs maxItems <= ${MAX_SCHEMA_ITEMS}`);
    assertBoundedSchema(schema.items, `${at}[]`);
  }
  if (isSchema(schema.additionalProperties)) throw new Error(`body schema ${at}: additionalProperties must be true or false, not a schema`);
  if (isSchema(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) if (isSchema(v)) assertBoundedSchema(v, `${at}.${k}`);
}

/**
 * A copy of a parsed body that has everything the schema can complain about, in bounded size: in an object whose
 * schema refuses unknown fields (`additionalProperties: false`), its known fields (each cut down the same way) and the
 * first {@link MAX_BODY_PROBLEMS} unknown ones (their values left out: the name is the problem); an array longer than
 * its `maxItems` is cut to `maxItems + 1` items (still one too many: the problem is kept, the items past it are not
 * checked one by one). `unknownLeftOut` counts the unknown fields left out, each one problem more.
 */
function boundedBody(value: unknown, schema: Schema, out: { unknownLeftOut: number }): unknown {
  if (Array.isArray(value)) {
    if (!isSchema(schema.items) || typeof schema.maxItems !== 'number') return value;
    const items = schema.items;
    return value.slice(0, schema.maxItems + 1).map((v) => boundedBody(v, items, out));
  }
  if (typeof value !== 'object' || value === null || !isSchema(schema.properties)) return value;
  const props = schema.properties;
  const obj = value as Record<string, unknown>;
  // No prototype: a field named __proto__ stays a field.
  const copy = Object.create(null) as Record<string, unknown>;
  // One pass over the names (a body of 50,000 keys costs that pass, not 50,000 errors); the known fields by name.
  const names = Object.keys(obj);
  let known = 0;
  for (const k of Object.keys(props)) {
    if (!Object.hasOwn(obj, k)) continue;
    known++;
    copy[k] = isSchema(props[k]) ? boundedBody(obj[k], props[k], out) : obj[k];
  }
  if (known === names.length) return copy;
  if (schema.additionalProperties !== false) {
    // Unknown fields are allowed and have no schema: kept as they are (they cannot fail).
    for (const k of names) if (!Object.hasOwn(props, k)) copy[k] = obj[k];
    return copy;
  }
  let listed = 0;
  for (let i = 0; i < names.length && listed < MAX_BODY_PROBLEMS; i++) {
    if (Object.hasOwn(props, names[i]!)) continue;
    copy[names[i]!] = null;
    listed++;
  }
  out.unknownLeftOut += names.length - known - listed;
  return copy;
}

/** A field path for people, cut to {@link MAX_PROBLEM_PATH_CHARS}. */
function shortPath(path: string): string {
  return path.length > MAX_PROBLEM_PATH_CHARS ? `${path.slice(0, MAX_PROBLEM_PATH_CHARS - 1)}…` : path;
}

function bodyProblems(errors: ErrorObject[]): BodyProblem[] {
  return errors.map((e) => {
    const path = e.instancePath.slice(1).replace(/\//g, '.');
    if (e.keyword === 'required') return { path: shortPath((e.params as { missingProperty: string }).missingProperty), message: 'is required' };
    if (e.keyword === 'additionalProperties') return { path: shortPath([path, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.')), message: 'is not a known field' };
    return { path: shortPath(path || '(body)'), message: e.message ?? 'is invalid' };
  });
}

/** What a body validator found: nothing, or the problems to list (at most {@link MAX_BODY_PROBLEMS}) and how many there are. */
type BodyCheck = { ok: true } | { ok: false; problems: BodyProblem[]; total: number };

/**
 * A route's body validator, bounded whatever the body: the body is cut down by {@link boundedBody} (one pass over
 * each object's names) and validated with every error, so at most {@link MAX_BODY_PROBLEMS} unknown fields per object
 * are collected whatever its size; the others are counted, not listed. Problems other than unknown fields come first.
 */
export function bodyValidator(schema: Schema): (body: unknown) => BodyCheck {
  assertBoundedSchema(schema);
  const validate = ajv.compile(schema);
  return (body) => {
    const out = { unknownLeftOut: 0 };
    // The cut-down body is valid exactly when the body is: it keeps every known field and, of the rest, enough to fail.
    if (validate(boundedBody(body, schema, out))) return { ok: true };
    const found = bodyProblems(validate.errors ?? []);
    const unknownField = (p: BodyProblem) => (p.message === 'is not a known field' ? 1 : 0);
    const sorted = found.map((p, i) => [p, i] as const).sort((a, b) => unknownField(a[0]) - unknownField(b[0]) || a[1] - b[1]).map(([p]) => p);
    return { ok: false, problems: sorted.slice(0, MAX_BODY_PROBLEMS), total: found.length + out.unknownLeftOut };
  };
}

/**
 * The message of an `invalid_request` for body problems: the listed ones, then how many more there are.
 * **Example:** `Invalid request body: url is required; k0 is not a known field; … and 49,990 more problems (50,000 in all)`.
 */
export function bodyProblemsMessage(problems: readonly BodyProblem[], total: number): string {
  const listed = problems.map((p) => `${p.path} ${p.message}`).join('; ');
  const more = total - problems.length;
  return `Invalid request body: ${listed}${more > 0 ? `; and ${more.toLocaleString('en-US')} more problem${more === 1 ? '' : 's'} (${total.toLocaleString('en-US')} in all; details list the first ${problems.length})` : ''}`;
}

/** Parses the JSON body (base64 too) and validates it against the route's schema. */
function jsonBody(validate: (body: unknown) => BodyCheck): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
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
        throw new CodedError('invalid_json', `The request body is not valid JSON (${(err as Error).message})${ct && !/json/i.test(ct) ? `; send it with Content-Type: application/json, not ${ct.slice(0, 100)}` : ''}`);
      }
      const check = validate(body);
      if (!check.ok) throw new CodedError('invalid_request', bodyProblemsMessage(check.problems, check.total), check.problems);
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
  if (def.body) h.use(jsonBody(bodyValidator(def.body)));
  return h.handler(fn as (event: ApiEvent, context: ApiContext) => Promise<ApiResult>);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `{id}` path parameter as a UUID. @throws CodedError `not_found` for anything else (no such resource). */
export function uuidParam(event: ApiEvent, what: string): string {
  const id = event.pathParameters?.id ?? '';
  if (!UUID_RE.test(id)) throw new CodedError('not_found', `${what} ${id} not found`);
  return id.toLowerCase();
}

/**
 * A whole-number query parameter from `min` to `max`, `fallback` when absent.
 * @throws CodedError `invalid_request` naming the parameter, its range and the value given (first 20 characters).
 */
export function intQueryParam(event: ApiEvent, name: string, fallback: number, min: number, max: number): number {
  const value = event.queryStringParameters?.[name];
  if (value === undefined || value === null) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new CodedError('invalid_request', `${name} must be an integer from ${min} to ${max}; got "${value.slice(0, 20)}"`, [{ path: name, message: 'out of range' }]);
  }
  return n;
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
