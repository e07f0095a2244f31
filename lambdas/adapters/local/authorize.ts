/**
 * The authorizer step of API Gateway for the local service: a route with `auth` runs the very Lambda
 * TOKEN authorizer the cloud runs (lambdas/authorizer/handler.ts) on the `Authorization` header, and its
 * context becomes `requestContext.authorizer` of the proxy event, as API Gateway passes it
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-use-lambda-authorizer.html).
 *
 * Like API Gateway (lib/api.ts: `resultsCacheTtl` 5 minutes), allowed results are cached per header value;
 * refusals are not. The cache changes nothing a caller sees: the handlers read the account fresh and
 * check the cached key digest against it (http/middleware.ts), so a replaced key or a deleted account is
 * refused at once. It saves the key look-up on every poll.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { handler as authorizer } from '../../authorizer/handler.ts';
import { errorResult, type ApiResult } from '../../http/middleware.ts';

/** How long an allowed result is reused, ms (API Gateway's cache TTL in lib/api.ts). */
const CACHE_TTL_MS = 5 * 60_000;
/** Most header values cached at once; the oldest goes first. */
const CACHE_MAX_ENTRIES = 10_000;

type AuthorizerContext = NonNullable<APIGatewayProxyEvent['requestContext']['authorizer']>;

const cache = new Map<string, { context: AuthorizerContext; expires: number }>();

/** Runs the authorizer, or reuses its allowed result for the same header within the TTL. */
async function authorizerContext(header: string, event: APIGatewayProxyEvent): Promise<AuthorizerContext> {
  const now = Date.now();
  const hit = cache.get(header);
  if (hit && hit.expires > now) return hit.context;
  const auth = await authorizer({
    type: 'TOKEN',
    authorizationToken: header,
    methodArn: `arn:aws:execute-api:local:000000000000:local/local/${event.httpMethod}${event.path}`,
  });
  const context: AuthorizerContext = { principalId: auth.principalId, ...auth.context };
  cache.delete(header);
  if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(header, { context, expires: now + CACHE_TTL_MS });
  return context;
}

/**
 * Authorizes a request and puts the authorizer's context into its event.
 * @returns null when the call may go on; otherwise the 401 `unauthorized` result to send, as API Gateway
 *   answers when the authorizer throws `Unauthorized`.
 * @throws whatever else the authorizer throws (the caller answers 500).
 */
export async function authorizeRequest(event: APIGatewayProxyEvent): Promise<ApiResult | null> {
  const header = event.headers.authorization;
  try {
    event.requestContext.authorizer = { ...(await authorizerContext(header ?? '', event)) };
    return null;
  } catch (err) {
    if ((err as Error).message !== 'Unauthorized') throw err;
    return errorResult('unauthorized', header
      ? 'Invalid API key: it is malformed, unknown or was replaced'
      : 'Missing API key: send Authorization: Bearer sai_…');
  }
}
