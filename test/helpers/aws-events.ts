/**
 * Events shaped exactly as API Gateway (REST proxy integration, TOKEN authorizer) and SQS (Lambda event
 * source mapping) deliver them, and in-memory stand-ins for S3 and SQS behind aws-sdk-client-mock.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

const API_ID = 'abc123';
const STAGE = 'test';

/** A REST API proxy event; `authorizer` is what API Gateway copies from the authorizer's context. */
export function proxyEvent(method: string, resource: string, path: string, o: {
  body?: unknown; headers?: Record<string, string>; query?: Record<string, string>; params?: Record<string, string>; authorizer?: Record<string, unknown> | null;
} = {}): APIGatewayProxyEvent {
  const headers = { 'content-type': 'application/json', ...(o.headers ?? {}) };
  return {
    resource, path, httpMethod: method, headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: o.query ?? null,
    multiValueQueryStringParameters: o.query ? Object.fromEntries(Object.entries(o.query).map(([k, v]) => [k, [v]])) : null,
    pathParameters: o.params ?? null,
    stageVariables: null,
    body: o.body === undefined ? null : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012', apiId: API_ID, authorizer: o.authorizer ?? null, httpMethod: method, path: `/${STAGE}${path}`,
      protocol: 'HTTP/1.1', requestId: randomUUID(), requestTimeEpoch: Date.now(), resourceId: 'r1', resourcePath: resource, stage: STAGE,
      identity: {
        accessKey: null, accountId: null, apiKey: null, apiKeyId: null, caller: null, clientCert: null, cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null, cognitoIdentityId: null, cognitoIdentityPoolId: null, principalOrgId: null, sourceIp: '203.0.113.7',
        user: null, userAgent: 'test', userArn: null,
      },
    },
  };
}

/** A TOKEN authorizer event for a method. */
export function tokenEvent(authorization: string, method: string, path: string): APIGatewayTokenAuthorizerEvent {
  return { type: 'TOKEN', authorizationToken: authorization, methodArn: `arn:aws:execute-api:us-east-1:123456789012:${API_ID}/${STAGE}/${method}${path}` };
}

/** An SQS record as the event source mapping delivers it. */
export function sqsRecord(body: string, receiveCount = 1, queue = 'scrape-ai-test-run'): SQSRecord {
  const now = String(Date.now());
  return {
    messageId: randomUUID(), receiptHandle: `AQEB${randomUUID()}`, body,
    attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: now, SenderId: 'AIDAEXAMPLE', ApproximateFirstReceiveTimestamp: now },
    messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${queue}`, awsRegion: 'us-east-1',
  };
}

export const sqsEvent = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

export function lambdaContext(name = 'fn'): Context {
  return {
    callbackWaitsForEmptyEventLoop: false, functionName: name, functionVersion: '$LATEST', invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
    memoryLimitInMB: '1024', awsRequestId: randomUUID(), logGroupName: `/aws/lambda/${name}`, logStreamName: 's', getRemainingTimeInMillis: () => 30_000,
    done: () => undefined, fail: () => undefined, succeed: () => undefined,
  };
}

/** S3 as a Map: PutObject stores, GetObject reads (NoSuchKey when absent), DeleteObject removes. `failPuts` makes puts fail. */
export function memoryS3() {
  const objects = new Map<string, { body: Buffer; contentType?: string }>();
  const state = { failPuts: 0 };
  const mock = mockClient(S3Client);
  mock.on(PutObjectCommand).callsFake(async (input: { Bucket: string; Key: string; Body: string | Uint8Array; ContentType?: string }) => {
    if (state.failPuts > 0) {
      state.failPuts--;
      throw Object.assign(new Error('We encountered an internal error. Please try again.'), { name: 'InternalError', $fault: 'server' });
    }
    objects.set(`${input.Bucket}/${input.Key}`, { body: Buffer.from(input.Body), contentType: input.ContentType });
    return {};
  });
  mock.on(GetObjectCommand).callsFake(async (input: { Bucket: string; Key: string }) => {
    const o = objects.get(`${input.Bucket}/${input.Key}`);
    if (!o) throw new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} });
    return { Body: { transformToByteArray: async () => new Uint8Array(o.body) }, ContentType: o.contentType };
  });
  mock.on(DeleteObjectCommand).callsFake(async (input: { Bucket: string; Key: string }) => {
    objects.delete(`${input.Bucket}/${input.Key}`);
    return {};
  });
  return { objects, state, restore: () => mock.restore() };
}

/** SQS SendMessage into an in-memory list per queue URL. */
export function memorySqs() {
  const sent: Array<{ url: string; body: string }> = [];
  const mock = mockClient(SQSClient);
  mock.on(SendMessageCommand).callsFake(async (input: { QueueUrl: string; MessageBody: string }) => {
    sent.push({ url: input.QueueUrl, body: input.MessageBody });
    return { MessageId: randomUUID() };
  });
  return { sent, restore: () => mock.restore() };
}
