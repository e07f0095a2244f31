/**
 * CDK assertions on the synthesized stacks: every route has its method and function, each function's
 * IAM policy allows only what its route needs, queues have dead-letter queues, the bucket blocks public
 * access, the table and workers are as the issue asks, usage plans follow the plans file; cdk-nag's
 * AwsSolutions pack passes with every acknowledgement carrying a reason. Bundling is skipped here
 * (test/cdk/synth.test.ts runs the real `cdk synth`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { MCP_OPERATIONS, routes } from '../../lambdas/routes.ts';
import { loadPlans } from '../../lambdas/core/plans.ts';
import { routeFunctionId } from '../../lib/api.ts';
import { suppressNagFindings } from '../../lib/nag.ts';
import { ScrapeAiStack } from '../../lib/stack.ts';
import { stageConfig } from '../../lib/stage.ts';

type Resources = Record<string, { Type: string; Properties?: any; DeletionPolicy?: string; Metadata?: any }>;

function synth(stageName: string, anthropicSecretArn?: string) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new ScrapeAiStack(app, `Test-${stageName}`, { stage: stageConfig(stageName), ...(anthropicSecretArn ? { anthropicSecretArn } : {}) });
  suppressNagFindings(stack);
  const template = Template.fromStack(stack);
  return { app, stack, template, resources: template.toJSON().Resources as Resources };
}

const dev = synth('dev');
const prod = synth('prod');

function byType(resources: Resources, type: string) {
  return Object.entries(resources).filter(([, r]) => r.Type === type);
}

/** Full path of an API Gateway resource, from its PathPart chain. */
function resourcePath(resources: Resources, id: unknown): string {
  if (typeof id === 'object' && id !== null && 'Fn::GetAtt' in id) return '';
  const ref = (id as { Ref: string }).Ref;
  const r = resources[ref]!;
  return `${resourcePath(resources, r.Properties.ParentId)}/${r.Properties.PathPart}`;
}

function functionLogicalId(resources: Resources, name: string): string {
  const hit = byType(resources, 'AWS::Lambda::Function').find(([, r]) => r.Properties.FunctionName === name);
  assert.ok(hit, `no function named ${name}`);
  return hit[0];
}

/** Every action the function's role may take, with the resources of each statement. */
function policyOf(resources: Resources, fnLogicalId: string): Array<{ actions: string[]; resources: string }> {
  const roleRef = resources[fnLogicalId]!.Properties.Role['Fn::GetAtt'][0];
  return byType(resources, 'AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleRef))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
    .map((s) => ({ actions: ([] as string[]).concat(s.Action), resources: JSON.stringify(s.Resource) }));
}

const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

describe('CDK stack', () => {
  it('every route of the route table has its method, its own function and the authorizer when it needs a key', () => {
    const { resources } = dev;
    const all = byType(resources, 'AWS::ApiGateway::Method').filter(([, m]) => m.Properties.HttpMethod !== 'OPTIONS');
    // GET and DELETE /mcp answer 405 from API Gateway itself (a MOCK integration, no function): the MCP endpoint is stateless.
    const mocks = all.filter(([, m]) => m.Properties.Integration?.Type === 'MOCK');
    assert.deepEqual(mocks.map(([, m]) => `${m.Properties.HttpMethod} ${resourcePath(resources, m.Properties.ResourceId)}`).sort(), ['DELETE /mcp', 'GET /mcp']);
    for (const [, m] of mocks) {
      assert.equal(m.Properties.Integration.IntegrationResponses[0].StatusCode, '405');
      assert.equal(m.Properties.Integration.IntegrationResponses[0].ResponseParameters['method.response.header.Allow'], "'POST'");
    }
    const methods = all.filter((x) => !mocks.includes(x));
    assert.equal(methods.length, routes.length);
    for (const route of routes) {
      const path = route.path.replace(/\/$/, '');
      const found = methods.find(([, m]) => m.Properties.HttpMethod === route.method && resourcePath(resources, m.Properties.ResourceId) === path);
      assert.ok(found, `${route.method} ${route.path} has a method`);
      const m = found[1].Properties;
      const fnId = functionLogicalId(resources, `scrape-ai-dev-${routeFunctionId(route)}`);
      assert.match(JSON.stringify(m.Integration.Uri), new RegExp(`"${fnId}","Arn"`), `${route.path} integrates its own function`);
      assert.equal(m.Integration.Type, 'AWS_PROXY');
      assert.equal(m.AuthorizationType, route.auth ? 'CUSTOM' : 'NONE', route.path);
      assert.equal(m.ApiKeyRequired, route.auth, `${route.path}: usage plans apply to keyed routes`);
      const fn = resources[fnId]!.Properties;
      assert.equal(fn.Runtime, 'nodejs24.x');
      if (route.browser) {
        // The routes that render pages (screenshot, tech-detector render): Chromium's layer, x86_64, the workers' memory.
        assert.deepEqual(fn.Architectures, ['x86_64'], `${route.path}: Chromium needs x86_64`);
        assert.equal(fn.Layers?.length, 1, `${route.path}: the Chromium layer`);
        assert.ok(fn.MemorySize >= 1600, `${route.path}: ${fn.MemorySize} MB`);
      } else {
        assert.deepEqual(fn.Architectures, ['arm64'], 'API functions need no Chromium: arm64');
        assert.equal(fn.Layers, undefined, `${route.path} has no layer`);
      }
      assert.equal(fn.Handler, 'index.handler');
      assert.equal(fn.TracingConfig.Mode, 'Active');
    }
  });

  it('routes declare only what they need: GETs never write (but results\' exports counter), only run and generate enqueue (each on its own queue, and the webhook queue for a job that fails there), only login and webhook creation read the secret, only schedule changes and config deletion touch EventBridge Scheduler', () => {
    // The MCP route runs the routes of MCP_OPERATIONS in-process: its access is exactly theirs together.
    const mcp = routes.find((r) => r.path === '/mcp')!;
    const used = MCP_OPERATIONS.map((op) => routes.find((r) => `${r.method} ${r.path}` === op)!);
    assert.deepEqual(new Set(mcp.access.queues), new Set(used.flatMap((r) => r.access.queues ?? [])), 'MCP: the queues of its operations');
    assert.equal(mcp.access.bucket, 'read-write', 'MCP: results read, screenshots stored');
    assert.equal(mcp.access.table, 'write');
    assert.ok(!mcp.access.secret && !mcp.access.scheduler, 'MCP: no secret, no scheduler (none of its operations needs them)');
    for (const r of routes) {
      if (r === mcp) continue;
      // One GET writes: results, for the counter of the account's exports at once (core/exports.ts, issue 37).
      if (r.method === 'GET') assert.equal(r.access.table, r.path === '/api/v1/jobs/{id}/results/' ? 'write' : 'read', r.path);
      assert.deepEqual(r.access.queues ?? [], r.path === '/api/v1/run/' ? ['run', 'webhook'] : r.path === '/api/v1/generate/' ? ['generate', 'webhook'] : [], r.path);
      assert.equal(r.access.secret === true, r.path === '/api/v1/auth/login/' || (r.method === 'POST' && r.path === '/api/v1/webhooks/'), r.path);
      assert.equal(r.access.scheduler === true, (r.path.startsWith('/api/v1/schedules/') && r.method !== 'GET') || (r.method === 'DELETE' && r.path === '/api/v1/configs/{id}/'), r.path);
      assert.equal(r.access.bucket === 'read', /\/jobs\/\{id\}\/(status|results|changes)\/$|\/screenshots\/\{id\}\/$/.test(r.path), r.path);
      assert.notEqual(r.access.bucket, 'write', r.path);
      // Only the screenshot tool stores an object, and it reads it back to sign its URL.
      assert.equal(r.access.bucket === 'read-write', r.path === '/api/v1/tools/screenshot/', r.path);
      if (r.path.startsWith('/api/v1/tools/')) assert.equal(r.startsWork && r.auth && r.access.table === 'write', true, `${r.path}: a metered call`);
    }
  });

  it('each function may touch only the table, queue, bucket and secret its route declares', () => {
    const { resources } = dev;
    for (const route of routes) {
      const policy = policyOf(resources, functionLogicalId(resources, `scrape-ai-dev-${routeFunctionId(route)}`));
      const actions = policy.flatMap((s) => s.actions);
      const where = `${route.method} ${route.path}`;
      assert.ok(actions.includes('dynamodb:GetItem') && actions.includes('dynamodb:Query'), `${where} reads the table`);
      assert.equal(WRITE_ACTIONS.some((a) => actions.includes(a)), route.access.table === 'write', `${where} table writes`);
      assert.equal(actions.some((a) => a.startsWith('sqs:')), (route.access.queues ?? []).length > 0, `${where} queue access`);
      assert.equal(actions.some((a) => a.startsWith('s3:GetObject')), route.access.bucket === 'read' || route.access.bucket === 'read-write', `${where} bucket reads`);
      assert.equal(actions.some((a) => a.startsWith('s3:PutObject')), route.access.bucket === 'write' || route.access.bucket === 'read-write', `${where} bucket writes`);
      assert.equal(actions.some((a) => a.startsWith('s3:Delete')), false, `${where} never deletes objects`);
      assert.equal(actions.some((a) => a.startsWith('secretsmanager:')), route.access.secret === true, `${where} secret`);
      assert.ok(!actions.some((a) => a.includes('*') && !/^(s3|dynamodb|xray):\w*\*?$/.test(a) && !/^s3:(GetObject|GetBucket|List|Abort|PutObject|DeleteObject)\*$/.test(a)), `${where}: no broad wildcards ${actions}`);
      assert.ok(!actions.includes('dynamodb:*') && !actions.includes('s3:*') && !actions.includes('sqs:*'));
      for (const s of policy.filter((x) => x.actions.some((a) => a.startsWith('sqs:')))) {
        if (route.path === '/mcp') {
          assert.match(s.resources, /Queues(Run|Generate|Webhook)[0-9A-F]{8}"/, `${where} sends to the run, generate and webhook queues`);
          assert.doesNotMatch(s.resources, /Queues(?!Run|Generate|Webhook)\w+[0-9A-F]{8}"/, `${where} sends to no other queue`);
          continue;
        }
        const queue = route.access.queues![0] === 'run' ? 'Run' : 'Generate';
        assert.match(s.resources, new RegExp(`Queues(${queue}|Webhook)[0-9A-F]{8}"`), `${where} sends to its own queue and the webhook queue only`);
        assert.doesNotMatch(s.resources, new RegExp(`Queues${queue === 'Run' ? 'Generate' : 'Run'}[0-9A-F]{8}"`), `${where} sends to its own queue only`);
      }
      // EventBridge Scheduler: the stage's group only, and PassRole of the scheduler's role to that service only.
      const scheduling = policy.filter((x) => x.actions.some((a) => a.startsWith('scheduler:') || a === 'iam:PassRole'));
      assert.equal(scheduling.length > 0, route.access.scheduler === true, `${where} scheduler access`);
      for (const s of scheduling) assert.match(s.resources, /schedule\/scrape-ai-dev-schedules\/\*|SchedulingSchedulerRole/, `${where}: its own schedules and role only`);
    }
    const worker = policyOf(resources, functionLogicalId(resources, 'scrape-ai-dev-worker-run')).flatMap((s) => s.actions);
    assert.ok(worker.includes('dynamodb:UpdateItem') && worker.some((a) => a.startsWith('s3:PutObject')));
    assert.ok(worker.some((a) => a.startsWith('s3:GetObject')), "the run worker reads the previous run's rows (changes, issue 26)");
    assert.ok(!worker.some((a) => a.startsWith('s3:Delete')), 'the run worker deletes no object');
    assert.ok(!worker.some((a) => a.startsWith('secretsmanager:')), 'the run worker does not read the secret');
    // It sends only a much-deferred job's message again, to its own queue (lambdas/workers/job-queue-handler.ts).
    for (const s of policyOf(resources, functionLogicalId(resources, 'scrape-ai-dev-worker-run')).filter((x) => x.actions.includes('sqs:SendMessage'))) {
      assert.match(s.resources, /Queues(Run|Webhook)[0-9A-F]{8}"/);
      assert.doesNotMatch(s.resources, /QueuesGenerate[0-9A-F]{8}"/, 'the run worker never sends to the generate queue');
    }
    const authorizer = policyOf(resources, functionLogicalId(resources, 'scrape-ai-dev-authorizer')).flatMap((s) => s.actions);
    assert.ok(!authorizer.some((a) => WRITE_ACTIONS.includes(a) || a.startsWith('s3:') || a.startsWith('sqs:') || a.startsWith('secretsmanager:')), 'the authorizer only reads');
  });

  it('the authorizer is a cached TOKEN authorizer and API keys come from it', () => {
    dev.template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN', IdentitySource: 'method.request.header.Authorization', AuthorizerResultTtlInSeconds: 300,
      IdentityValidationExpression: Match.stringLikeRegexp('sai_'),
    });
    // Images of the screenshot tool leave the Lambda base64-encoded; API Gateway decodes binary media types only.
    dev.template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER', BinaryMediaTypes: ['*/*'] });
    dev.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'UNAUTHORIZED', StatusCode: '401', ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"code":"unauthorized"') },
    });
  });

  it('one usage plan per plan, with the throttle and quota of the plans file', () => {
    const plans = loadPlans('credits').plans;
    const usagePlans = byType(dev.resources, 'AWS::ApiGateway::UsagePlan').map(([, r]) => r.Properties);
    assert.equal(usagePlans.length, Object.keys(plans).length);
    for (const plan of Object.values(plans)) {
      const u = usagePlans.find((x) => x.UsagePlanName === `scrape-ai-dev-${plan.name}`);
      assert.ok(u, plan.name);
      assert.deepEqual(u.Throttle, { RateLimit: plan.gateway!.rate_per_second, BurstLimit: plan.gateway!.burst });
      assert.deepEqual(u.Quota, { Limit: plan.gateway!.requests_per_month, Period: 'MONTH' });
    }
  });

  it('queues: each job queue has a dead-letter queue, a visibility time-out above the worker time-out, encryption', () => {
    const queues = byType(dev.resources, 'AWS::SQS::Queue').map(([id, r]) => ({ id, ...r.Properties }));
    for (const name of ['run', 'generate']) {
      const q = queues.find((x) => x.QueueName === `scrape-ai-dev-${name}`);
      assert.ok(q, name);
      assert.equal(q.RedrivePolicy.maxReceiveCount, 3 + 100, 'maxReceives, plus the receives that only deferred a job of an account at its limit');
      assert.ok(JSON.stringify(q.RedrivePolicy.deadLetterTargetArn).includes(queues.find((x) => x.QueueName === `scrape-ai-dev-${name}-dlq`)!.id));
      assert.ok(q.VisibilityTimeout > 900, `visibility ${q.VisibilityTimeout}s above the 900 s worker time-out`);
      assert.equal(q.SqsManagedSseEnabled, true);
    }
  });

  it('the run worker: Chromium layer, x86_64, at least 1600 MB, large /tmp, one message at a time with partial batch failures', () => {
    const { resources } = dev;
    const w = resources[functionLogicalId(resources, 'scrape-ai-dev-worker-run')]!.Properties;
    assert.deepEqual(w.Architectures, ['x86_64']);
    assert.ok(w.MemorySize >= 1600);
    assert.ok(w.EphemeralStorage.Size >= 2048);
    assert.equal(w.Timeout, 900);
    assert.equal(w.Layers.length, 1);
    const layer = resources[w.Layers[0].Ref]!;
    assert.equal(layer.Type, 'AWS::Lambda::LayerVersion');
    assert.deepEqual(layer.Properties.CompatibleArchitectures, ['x86_64']);
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'], FunctionName: { Ref: functionLogicalId(resources, 'scrape-ai-dev-worker-run') },
    });
    assert.equal(w.Environment.Variables.WORKER_CONCURRENCY, '2', "the event source's maximum concurrency: an account may hold all but one");
    assert.equal(w.Environment.Variables.MAX_DEFERRALS, '100');
    dev.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionLogicalId(resources, 'scrape-ai-dev-worker-run') }, ScalingConfig: { MaximumConcurrency: 2 },
    });
    const actions = policyOf(resources, functionLogicalId(resources, 'scrape-ai-dev-worker-run')).flatMap((s) => s.actions);
    assert.ok(actions.includes('sqs:ChangeMessageVisibility'), 'defers a job of an account at its limit');
    assert.ok(actions.includes('sqs:SendMessage'), 'sends a much-deferred job again as a fresh message');
    const dlq = byType(resources, 'AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FunctionName.Ref === functionLogicalId(resources, 'scrape-ai-dev-worker-dead-letters'));
    assert.equal(dlq.length, 2, 'the dead-letter consumer reads both dead-letter queues');
  });

  it('the generate worker: the run worker\'s shape on the generate queue; Anthropic\'s key only when the deployment names one', () => {
    const { resources } = dev;
    const id = functionLogicalId(resources, 'scrape-ai-dev-worker-generate');
    const w = resources[id]!.Properties;
    assert.deepEqual(w.Architectures, ['x86_64']);
    assert.ok(w.MemorySize >= 1600);
    assert.equal(w.Timeout, 900);
    assert.equal(w.Layers.length, 1);
    assert.equal(w.Environment.Variables.ANTHROPIC_SECRET_ARN, undefined);
    const mapping = byType(resources, 'AWS::Lambda::EventSourceMapping').find(([, m]) => m.Properties.FunctionName.Ref === id)!;
    assert.match(JSON.stringify(mapping[1].Properties.EventSourceArn), /QueuesGenerate[0-9A-F]{8}"/);
    assert.equal(mapping[1].Properties.BatchSize, 1);
    assert.ok(!policyOf(resources, id).some((s) => s.actions.some((a) => a.startsWith('secretsmanager:'))), 'no secret without one named');
    const sends = policyOf(resources, id).filter((s) => s.actions.includes('sqs:SendMessage')).map((s) => s.resources).join(' ');
    assert.match(sends, /QueuesRun[0-9A-F]{8}"/, 'a generate job with run: true queues its run on the run queue (issue 40)');

    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:anthropic-AbCdEf';
    const withKey = synth('dev', arn);
    const gid = functionLogicalId(withKey.resources, 'scrape-ai-dev-worker-generate');
    assert.equal(withKey.resources[gid]!.Properties.Environment.Variables.ANTHROPIC_SECRET_ARN, arn);
    const reads = policyOf(withKey.resources, gid).filter((s) => s.actions.includes('secretsmanager:GetSecretValue'));
    assert.equal(reads.length, 1);
    assert.match(reads[0]!.resources, /anthropic-AbCdEf/);
    const run = functionLogicalId(withKey.resources, 'scrape-ai-dev-worker-run');
    assert.ok(!policyOf(withKey.resources, run).some((s) => s.actions.some((a) => a.startsWith('secretsmanager:'))), 'the run worker never reads it');
  });

  it('the bucket blocks public access, is encrypted, TLS only, with lifecycle rules', () => {
    dev.template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Prefix: 'results/', ExpirationInDays: 7, Status: 'Enabled' })]) },
    });
    dev.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('the table: on demand, point-in-time recovery, TTL, the two indexes; per-stage retention', () => {
    dev.template.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'scrape-ai-dev', BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'GSI1' }), Match.objectLike({ IndexName: 'GSI2' })],
    });
    const table = (r: Resources) => byType(r, 'AWS::DynamoDB::Table')[0]![1];
    assert.equal(table(dev.resources).DeletionPolicy, 'Delete');
    assert.equal(table(prod.resources).DeletionPolicy, 'Retain');
    assert.equal(table(prod.resources).Properties.DeletionProtectionEnabled, true);
    const logs = (r: Resources) => byType(r, 'AWS::Logs::LogGroup').find(([, g]) => g.Properties.LogGroupName === `/aws/lambda/scrape-ai-${r === dev.resources ? 'dev' : 'prod'}-api-run`)![1].Properties.RetentionInDays;
    assert.equal(logs(dev.resources), 14);
    assert.equal(logs(prod.resources), 90);
  });

  it('alarms on dead-letter depth, function errors and API 5xx', () => {
    dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'scrape-ai-dev-run-dead-letters', MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 0 });
    dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'scrape-ai-dev-api-5xx', MetricName: '5XXError' });
    assert.ok(byType(dev.resources, 'AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties.MetricName === 'Errors').length >= routes.length + 3);
  });

  it('schedules and webhooks (issue 26): the schedule group, the scheduler role that may only send to the run queue, the run worker re-arming schedules, the webhook worker on its own queue', () => {
    const { resources } = dev;
    const groups = byType(resources, 'AWS::Scheduler::ScheduleGroup');
    assert.deepEqual(groups.map(([, g]) => g.Properties.Name), ['scrape-ai-dev-schedules']);
    const [roleId, role] = byType(resources, 'AWS::IAM::Role').find(([id]) => id.startsWith('SchedulingSchedulerRole'))!;
    assert.equal(role.Properties.AssumeRolePolicyDocument.Statement[0].Principal.Service, 'scheduler.amazonaws.com');
    const rolePolicy = byType(resources, 'AWS::IAM::Policy').filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
    assert.deepEqual([...new Set(rolePolicy.flatMap((x) => ([] as string[]).concat(x.Action)))].sort(), ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
    for (const x of rolePolicy) assert.match(JSON.stringify(x.Resource), /QueuesRun[0-9A-F]{8}"/, 'the scheduler role sends to the run queue only');
    const run = policyOf(resources, functionLogicalId(resources, 'scrape-ai-dev-worker-run'));
    assert.ok(run.some((x) => x.actions.includes('scheduler:UpdateSchedule') && /scrape-ai-dev-schedules\/\*/.test(x.resources)), 'the run worker re-arms schedules of its group');
    assert.ok(run.some((x) => x.actions.includes('iam:PassRole') && /SchedulingSchedulerRole/.test(x.resources)), 'and passes the scheduler role');
    const hooksId = functionLogicalId(resources, 'scrape-ai-dev-worker-webhooks');
    const hooks = policyOf(resources, hooksId);
    assert.ok(hooks.some((x) => x.actions.includes('secretsmanager:GetSecretValue')), 'the webhook worker opens sealed signing secrets');
    assert.ok(!hooks.some((x) => x.actions.some((a) => a.startsWith('s3:') || a.startsWith('scheduler:'))), 'and touches no bucket and no schedule');
    for (const x of hooks.filter((y) => y.actions.includes('sqs:SendMessage'))) assert.match(x.resources, /QueuesWebhook[0-9A-F]{8}"/, 'it queues retries on its own queue only');
    const mapping = byType(resources, 'AWS::Lambda::EventSourceMapping').find(([, m]) => m.Properties.FunctionName.Ref === hooksId)!;
    assert.match(JSON.stringify(mapping[1].Properties.EventSourceArn), /QueuesWebhook[0-9A-F]{8}"/);
    assert.deepEqual(mapping[1].Properties.FunctionResponseTypes, ['ReportBatchItemFailures']);
    // The sweeper of lost triggers: every 5 minutes, reads the table, sends to the run queue only.
    const sweeperId = functionLogicalId(resources, 'scrape-ai-dev-worker-schedule-sweeper');
    const rule = byType(resources, 'AWS::Events::Rule').find(([, r]) => JSON.stringify(r.Properties.Targets).includes(sweeperId))!;
    assert.equal(rule[1].Properties.ScheduleExpression, 'rate(5 minutes)');
    const sweeper = policyOf(resources, sweeperId);
    assert.ok(!sweeper.some((x) => x.actions.some((a) => WRITE_ACTIONS.includes(a) || a.startsWith('scheduler:') || a.startsWith('s3:') || a.startsWith('secretsmanager:'))), 'the sweeper only reads the table and sends');
    for (const x of sweeper.filter((y) => y.actions.includes('sqs:SendMessage'))) assert.match(x.resources, /QueuesRun[0-9A-F]{8}"/);
    const queue = byType(resources, 'AWS::SQS::Queue').find(([, q]) => q.Properties.QueueName === 'scrape-ai-dev-webhook')!;
    assert.ok(queue[1].Properties.RedrivePolicy, 'the webhook queue has a dead-letter queue');
  });

  it('cdk-nag AwsSolutions passes, and every acknowledged finding carries a reason', () => {
    for (const stageName of ['dev', 'prod']) {
      const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
      const stack = new ScrapeAiStack(app, `Nag-${stageName}`, { stage: stageConfig(stageName) });
      suppressNagFindings(stack);
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
      assert.doesNotThrow(() => app.synth(), `AwsSolutions on ${stageName}`);
      const acks = stack.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) => Object.entries(m.data as Record<string, string>));
      assert.ok(acks.length >= 10);
      for (const [id, reason] of acks) assert.ok(typeof reason === 'string' && reason.length > 30, `${id} has a reason`);
    }
    // Without the acknowledgements the same pack fails: it really runs.
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    new ScrapeAiStack(app, 'Nag-bare', { stage: stageConfig('dev') });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    assert.throws(() => app.synth(), /Validation failed/);
  });
});
