/**
 * The REST API, built from the one route table (lambdas/routes.ts): a resource per path segment, a
 * method and a function per route, the Lambda TOKEN authorizer on every route that needs a key, and one
 * usage plan per plan (API keys come from the authorizer: apiKeySourceType AUTHORIZER, one key per
 * account, assigned by lambdas/adapters/aws/usage-keys.ts). Each function gets exactly the access its
 * route declares.
 */
import { Duration } from 'aws-cdk-lib';
import {
  AccessLogFormat, ApiKeySourceType, Cors, EndpointType, LambdaIntegration, LogGroupLogDestination, MethodLoggingLevel, MockIntegration, PassthroughBehavior, Period,
  ResponseType, RestApi, TokenAuthorizer, UsagePlan, type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import { Architecture, type ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { routes, type RouteDef } from '../lambdas/routes.ts';
import { loadPlans, type Billing } from '../lambdas/core/plans.ts';
import type { Data } from './data.ts';
import { chromiumLayer } from './chromium-layer.ts';
import { serviceFunction } from './lambda.ts';
import type { Queues } from './queues.ts';
import type { Scheduling } from './scheduler.ts';
import { physicalNames, type StageConfig } from './stage.ts';

export interface ApiProps {
  stage: StageConfig;
  billing: Billing;
  data: Data;
  queues: Queues;
  scheduling: Scheduling;
  /** Environment every function of the service gets. */
  environment: Record<string, string>;
}

/** Least memory of a tool's function, MB: its tool worker's heap cap is half of it (lambdas/core/tools.ts). */
const TOOL_FUNCTION_MIN_MEMORY_MB = 1024;

/** A function id from its handler module: `http/job-status.ts` -> `api-job-status`. */
export function routeFunctionId(route: RouteDef): string {
  return `api-${route.handler.replace(/^http\//, '').replace(/\.ts$/, '')}`;
}

const errorTemplate = (code: string, message: string) => ({
  'application/json': JSON.stringify({ error: message, code, details: [] }),
});

export class Api extends Construct {
  readonly restApi: RestApi;
  readonly functions = new Map<RouteDef, NodejsFunction>();
  readonly authorizerFunction: NodejsFunction;
  readonly usagePlans = new Map<string, UsagePlan>();

  constructor(scope: Construct, id: string, p: ApiProps) {
    super(scope, id);
    const { stage } = p;
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: stage.removalPolicy });
    this.restApi = new RestApi(this, 'RestApi', {
      restApiName: physicalNames(stage.name).restApi,
      description: 'scrape-ai HTTP API (docs/spec.md), one Lambda per route',
      endpointTypes: [EndpointType.REGIONAL],
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // Images (the screenshot tool) leave the Lambdas base64-encoded (isBase64Encoded); API Gateway decodes them only
      // for binary media types. JSON answers are not base64 and pass unchanged; JSON bodies arrive base64, which
      // the handlers decode (lambdas/http/middleware.ts).
      binaryMediaTypes: ['*/*'],
      cloudWatchRole: true,
      deployOptions: {
        stageName: stage.name,
        throttlingRateLimit: stage.apiThrottle.rateLimit,
        throttlingBurstLimit: stage.apiThrottle.burstLimit,
        loggingLevel: MethodLoggingLevel.ERROR,
        metricsEnabled: true,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      },
      defaultCorsPreflightOptions: { allowOrigins: Cors.ALL_ORIGINS, allowMethods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'], allowHeaders: ['Authorization', 'Content-Type', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'], maxAge: Duration.minutes(10) },
    });

    // API Gateway's own refusals in the service's error shape (docs/errors.md).
    const cors = { 'Access-Control-Allow-Origin': "'*'" };
    this.restApi.addGatewayResponse('Unauthorized', { type: ResponseType.UNAUTHORIZED, statusCode: '401', responseHeaders: cors, templates: errorTemplate('unauthorized', 'Missing or invalid API key: send Authorization: Bearer sai_…') });
    this.restApi.addGatewayResponse('AccessDenied', { type: ResponseType.ACCESS_DENIED, statusCode: '401', responseHeaders: cors, templates: errorTemplate('unauthorized', 'Invalid API key: it is malformed, unknown or was replaced') });
    this.restApi.addGatewayResponse('Throttled', { type: ResponseType.THROTTLED, statusCode: '429', responseHeaders: { ...cors, 'Retry-After': "'1'" }, templates: errorTemplate('rate_limited', 'Too many requests for your plan; slow down and retry') });
    this.restApi.addGatewayResponse('QuotaExceeded', { type: ResponseType.QUOTA_EXCEEDED, statusCode: '429', responseHeaders: cors, templates: errorTemplate('quota_exceeded', "Your plan's monthly request quota at the API gateway is used up") });
    this.restApi.addGatewayResponse('MissingRoute', { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, statusCode: '404', responseHeaders: cors, templates: errorTemplate('not_found', 'No such route; the API lives under /api/v1/') });
    this.restApi.addGatewayResponse('BadBody', { type: ResponseType.REQUEST_TOO_LARGE, statusCode: '413', responseHeaders: cors, templates: errorTemplate('payload_too_large', 'The request body is too large') });
    this.restApi.addGatewayResponse('Default5xx', { type: ResponseType.DEFAULT_5XX, responseHeaders: cors, templates: errorTemplate('internal_error', 'Internal error at the API gateway') });

    this.authorizerFunction = serviceFunction(this, 'authorizer', {
      entry: 'authorizer/handler.ts', stage, environment: p.environment, memoryMb: 512, description: 'Bearer sai_ key to account (TOKEN authorizer)',
    });
    p.data.table.grantReadData(this.authorizerFunction);
    const authorizer = new TokenAuthorizer(this, 'KeyAuthorizer', {
      handler: this.authorizerFunction,
      identitySource: 'method.request.header.Authorization',
      // Malformed headers are refused by API Gateway itself, without invoking the function.
      validationRegex: '^[Bb][Ee][Aa][Rr][Ee][Rr] +sai_[A-Za-z0-9]{32,128} *$',
      resultsCacheTtl: Duration.minutes(5),
    });

    // One Chromium layer for the routes that render pages (the screenshot tool, the tech detector's render).
    let chromium: ILayerVersion | null = null;
    for (const route of routes) {
      const fn = serviceFunction(this, routeFunctionId(route), {
        entry: route.handler, stage, environment: p.environment, description: `${route.method} ${route.path}: ${route.summary}`,
        // The tools' work runs in a worker thread whose heap is capped at half the function's memory (core/tools.ts
        // defaultToolSettings): at least 1 GB, so that the thread gets the 512 MB a 5 MB page may need.
        ...(route.path.startsWith('/api/v1/tools/') ? { memoryMb: Math.max(stage.apiMemoryMb, TOOL_FUNCTION_MIN_MEMORY_MB) } : {}),
        ...(route.browser ? {
          architecture: Architecture.X86_64,
          memoryMb: stage.workerMemoryMb,
          ephemeralStorageMb: stage.workerEphemeralMb,
          layers: [chromium ??= chromiumLayer(this, 'Chromium')],
        } : {}),
      });
      this.grant(route, fn, p);
      this.functions.set(route, fn);
      resourceFor(this.restApi.root, route.path).addMethod(route.method, new LambdaIntegration(fn), route.auth
        ? { authorizer, apiKeyRequired: true }
        : { apiKeyRequired: false });
    }

    // The MCP endpoint is stateless (docs/mcp.md): no server-to-client stream (GET) and no session to end (DELETE).
    // The protocol wants 405 for both, which clients take as "not offered"; answered by API Gateway, no function.
    const mcp = resourceFor(this.restApi.root, '/mcp');
    for (const method of ['GET', 'DELETE']) {
      mcp.addMethod(method, new MockIntegration({
        // Whatever the request's Content-Type: a body without a template passes through, and the only integration
        // response (no selection pattern, so the default) answers 405 to anything.
        requestTemplates: { 'application/json': '{"statusCode": 405}' },
        passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
        integrationResponses: [{
          statusCode: '405',
          responseParameters: { 'method.response.header.Allow': "'POST'", 'method.response.header.Access-Control-Allow-Origin': "'*'" },
          responseTemplates: errorTemplate('method_not_allowed', `${method} is not allowed on /mcp; allowed: POST (the MCP endpoint is stateless)`),
        }],
      }), {
        apiKeyRequired: false,
        methodResponses: [{ statusCode: '405', responseParameters: { 'method.response.header.Allow': true, 'method.response.header.Access-Control-Allow-Origin': true } }],
      });
    }

    const plans = loadPlans(p.billing);
    for (const plan of Object.values(plans.plans)) {
      const gw = plan.gateway ?? { rate_per_second: 10, burst: 20, requests_per_month: 100_000 };
      const usagePlan = this.restApi.addUsagePlan(`Plan-${plan.name}`, {
        name: physicalNames(stage.name).usagePlan(plan.name),
        description: `${plan.label}: per-account throttle and monthly request quota at the gateway`,
        throttle: { rateLimit: gw.rate_per_second, burstLimit: gw.burst },
        quota: { limit: gw.requests_per_month, period: Period.MONTH },
        apiStages: [{ api: this.restApi, stage: this.restApi.deploymentStage }],
      });
      this.usagePlans.set(plan.name, usagePlan);
    }
  }

  /** Least privilege: exactly the route's declared access. */
  private grant(route: RouteDef, fn: NodejsFunction, p: ApiProps): void {
    const a = route.access;
    if (a.table === 'write') p.data.table.grantReadWriteData(fn);
    else p.data.table.grantReadData(fn);
    for (const q of a.queues ?? []) p.queues[q].queue.grantSendMessages(fn);
    if (a.bucket === 'read' || a.bucket === 'read-write') p.data.bucket.grantRead(fn);
    if (a.bucket === 'write' || a.bucket === 'read-write') p.data.bucket.grantPut(fn);
    if (a.secret) p.data.sealingSecret.grantRead(fn);
    if (a.scheduler) p.scheduling.grantManage(fn);
  }
}

/** The resource of a route path (`/api/v1/jobs/{id}/status/`), made segment by segment. */
function resourceFor(root: IResource, routePath: string): IResource {
  let r = root;
  for (const segment of routePath.split('/').filter(Boolean)) r = r.getResource(segment) ?? r.addResource(segment);
  return r;
}
