/**
 * The authorizer step of API Gateway for the local service: a route with `auth` runs the very Lambda
 * TOKEN authorizer the cloud runs (lambdas/authorizer/handler.ts) on the `Authorization` header, and its
 * context becomes `requestContext.authorizer` of the proxy event, as API Gateway passes it
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-use-lambda-authorizer.html).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { handler as authorizer } from '../../authorizer/handler.ts';
import { errorResult, type ApiResult } from '../../http/middleware.ts';

/**
 * Authorizes a request and puts the authorizer's context into its event.
 * @returns null when the call may go on; otherwise the 401 `unauthorized` result to send, as API Gateway
 *   answers when the authorizer throws `Unauthorized`.
 * @throws whatever else the authorizer throws (the caller answers 500).
 */
export async function authorizeRequest(event: APIGatewayProxyEvent): Promise<ApiResult | null> {
  const header = event.headers.authorization;
  try {
    const auth = await authorizer({
      type: 'TOKEN',
      authorizationToken: header ?? '',
      methodArn: `arn:aws:execute-api:local:000000000000:local/local/${event.httpMethod}${event.path}`,
    });
    event.requestContext.authorizer = { principalId: auth.principalId, ...auth.context };
    return null;
  } catch (err) {
    if ((err as Error).message !== 'Unauthorized') throw err;
    return errorResult('unauthorized', header
      ? 'Invalid API key: it is malformed, unknown or was replaced'
      : 'Missing API key: send Authorization: Bearer sai_…');
  }
}
