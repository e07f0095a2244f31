/**
 * The API Gateway Lambda authorizer (TOKEN type): `Authorization: Bearer sai_…` to the account.
 * Allows the call with the account id, email, plan and the key's digest in the context (handlers read
 * `requestContext.authorizer.accountId` and check `keyDigest` against the account); an unknown or malformed key is refused with the error
 * `Unauthorized`, which API Gateway turns into 401. The local service calls this same function (adapters/local/authorize.ts).
 */
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { authenticate } from '../core/accounts.ts';
import { services } from '../core/services.ts';

/** Reads the key of an `Authorization` header value: `Bearer <key>` (case-insensitive scheme). */
export function bearerKey(header: string | undefined): string | null {
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1]! : null;
}

export async function handler(event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const key = bearerKey(event.authorizationToken);
  const account = key ? await authenticate(await services(), key) : null;
  if (!account) throw new Error('Unauthorized');
  // The policy covers every method of this stage, so a cached result serves the account's other calls.
  const arn = event.methodArn.split('/').slice(0, 2).join('/') + '/*';
  return {
    principalId: String(account.id),
    policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: arn }] },
    // keyDigest: API Gateway caches this result for 5 minutes per token; the handlers compare the digest
    // with the account's current one, so a replaced key stops working at once (http/middleware.ts).
    context: { accountId: account.id, email: account.email, plan: account.plan, keyDigest: account.api_key_digest! },
    // API Gateway counts this account's calls against its own API key in its plan's usage plan.
    ...(account.usage_key_value ? { usageIdentifierKey: account.usage_key_value } : {}),
  };
}
