/**
 * cdk-nag AwsSolutions findings this design accepts, each acknowledged with its reason
 * (`Validations.of(…).acknowledge`, cdk-nag v3). Anything not acknowledged here fails the synth and the
 * CDK tests (test/cdk/stack.test.ts).
 */
import { Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import type { ScrapeAiStack } from './stack.ts';

function logicalId(element: CfnElement): string {
  return Stack.of(element).resolve(Stack.of(element).getLogicalId(element)) as string;
}

export function suppressNagFindings(stack: ScrapeAiStack): void {
  const v = Validations.of(stack);
  const ack = (id: string, reason: string) => v.acknowledge({ id, reason });
  const table = logicalId(stack.data.table.node.defaultChild as CfnElement);
  const bucket = logicalId(stack.data.bucket.node.defaultChild as CfnElement);

  ack('AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'The AWS-managed basic execution role grants only CloudWatch Logs writes; data access is granted per function, least privilege.');
  ack('AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    'The AWS-managed role API Gateway needs to write its execution and access logs.');
  ack(`AwsSolutions-IAM5[Resource::<${table}.Arn>/index/*]`,
    'Queries of the one table use its two GSIs (jobs per account, unfinished jobs); the grant is scoped to that table\'s indexes.');
  ack('AwsSolutions-IAM5[Resource::*]', 'X-Ray tracing: xray:PutTraceSegments and PutTelemetryRecords support no resource-level permissions.');
  ack(`AwsSolutions-IAM5[Resource::<${bucket}.Arn>/*]`, 'Objects of the one results bucket: keys are per account and job, not known in advance.');
  for (const action of ['s3:List*', 's3:GetObject*', 's3:GetBucket*', 's3:Abort*']) {
    ack(`AwsSolutions-IAM5[Action::${action}]`, `CDK's bucket grant (grantRead/grantPut) of the one results bucket; ${action} is scoped to that bucket.`);
  }
  ack('AwsSolutions-S1', 'The bucket holds job results and screenshots that expire in days; server access logs would cost more than the objects.');
  ack('AwsSolutions-SMG4', 'The sealing secret cannot rotate automatically: sealed API keys would stop opening (a new key is issued at the next login). Rotation is an operator procedure (docs/security.md).');
  ack('AwsSolutions-APIG2', 'Request bodies are validated in each handler (JSON Schema with ajv), which answers the service error shape with field paths.');
  ack('AwsSolutions-APIG3', 'AWS WAF is an optional, per-account add-on; throttling per account (usage plans) and per stage is configured.');
  ack('AwsSolutions-APIG4', 'POST /auth/login/ exchanges a password for the key and must work without one; every other method uses the Lambda authorizer.');
  ack('AwsSolutions-COG4', 'Callers authenticate with service API keys (Bearer sai_…) through a Lambda TOKEN authorizer, not Cognito (SPEC.md, Authentication).');
}
