/**
 * What API Gateway does around a Lambda proxy integration, for the local service: a node:http request
 * becomes an API Gateway REST (v1) proxy event, the handler gets a Lambda context, and the proxy result
 * is written back as the HTTP response.
 * Shapes: https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html
 * ("Input format of a Lambda function for proxy integration") and the `aws-lambda` type definitions.
 */
import { resultStream } from '../../http/response-streams.ts';
import type http from 'node:http';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { ApiResult } from '../../http/middleware.ts';

/** Time a handler may take, as API Gateway's integration timeout (ms). */
const INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * A map for names the client chooses (headers, query parameters, path parameters): no prototype, so a
 * parameter named `constructor`, `__proto__` or `hasOwnProperty` is a plain key like any other.
 */
function nameMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * Builds the proxy event of a request.
 * @param resource the route's path as in the route table, e.g. `/api/v1/jobs/{id}/status/`.
 * @param params the decoded path parameters.
 * @param body the body as UTF-8 text; empty means none (`body: null`, as API Gateway sends it).
 */
export function toProxyEvent(req: http.IncomingMessage, url: URL, resource: string, params: ReadonlyMap<string, string>, body: string, requestId: string): APIGatewayProxyEvent {
  const headers = nameMap<string>();
  const multiValueHeaders = nameMap<string[]>();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    headers[name] = values.join(', ');
    multiValueHeaders[name] = values;
  }
  const query = nameMap<string>();
  const multiQuery = nameMap<string[]>();
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  const hasQuery = url.searchParams.size > 0;
  const pathParameters = nameMap<string>();
  for (const [name, value] of params) pathParameters[name] = value;
  const method = req.method ?? 'GET';
  return {
    resource,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: params.size ? pathParameters : null,
    stageVariables: null,
    body: body === '' ? null : body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      httpMethod: method,
      identity: {
        accessKey: null, accountId: null, apiKey: null, apiKeyId: null, caller: null, clientCert: null,
        cognitoAuthenticationProvider: null, cognitoAuthenticationType: null, cognitoIdentityId: null,
        cognitoIdentityPoolId: null, principalOrgId: null, sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null, userAgent: req.headers['user-agent'] ?? null, userArn: null,
      },
      path: url.pathname,
      protocol: `HTTP/${req.httpVersion}`,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: resource,
      resourcePath: resource,
      stage: 'local',
    },
  };
}

/** The Lambda context of one invocation of `functionName` (its handler module), with API Gateway's 29 s. */
export function lambdaContext(requestId: string, functionName: string): Context {
  const deadline = Date.now() + INTEGRATION_TIMEOUT_MS;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Writes a proxy result as the response, with the request id API Gateway would add. */
export function writeProxyResult(res: http.ServerResponse, result: ApiResult, requestId: string): void {
  const headers: Record<string, string | number | boolean> = { ...(result.headers ?? {}), 'x-request-id': requestId };
  res.writeHead(result.statusCode, headers as http.OutgoingHttpHeaders);
  const stream = resultStream(result);
  if (stream) {
    writeStream(res, stream);
    return;
  }
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/**
 * Writes a streamed body (http/response-streams.ts) chunk by chunk as it comes, waiting for the socket to drain; a
 * client that goes away cancels the stream (its producer stops).
 */
function writeStream(res: http.ServerResponse, stream: ReadableStream<Uint8Array>): void {
  const reader = stream.getReader();
  const gone = () => void reader.cancel().catch(() => undefined);
  res.once('close', gone);
  // The status and headers now: the client knows the answer has begun before its first event.
  res.flushHeaders();
  const drained = () => new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await drained();
        if (res.destroyed) return;
      }
      res.end();
    } catch {
      res.destroy();
    } finally {
      res.off('close', gone);
    }
  })();
}
