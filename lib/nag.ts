/**
 * cdk-nag AwsSolutions findings this design accepts, each acknowledged with its reason
 * (`Validations.of(…).acknowledge`, cdk-nag v3). Anything not acknowledged here fails the synth and the
 * CDK tests (test/cdk/stack.test.ts).
 */
import { Stack, Token, Validations, type CfnElement } from 'aws-cdk-lib';
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
  ack('AwsSolutions-S1', 'The results bucket holds job results and screenshots that expire in days, and the dashboard bucket holds only the dashboard\'s public build (read through CloudFront); server access logs would cost more than they tell.');
  ack('AwsSolutions-SMG4', 'The sealing secret cannot rotate automatically: sealed API keys would stop opening (a new key is issued at the next login). Rotation is an operator procedure (docs/security.md).');
  ack('AwsSolutions-APIG2', 'Request bodies are validated in each handler (JSON Schema with ajv), which answers the service error shape with field paths.');
  ack('AwsSolutions-APIG3', 'AWS WAF is an optional, per-account add-on; throttling per account (usage plans) and per stage is configured.');
  ack('AwsSolutions-APIG4', 'POST /auth/login/ exchanges a password for the key and must work without one; every other method uses the Lambda authorizer.');
  const dashboardBucket = logicalId(stack.dashboard.bucket.node.defaultChild as CfnElement);
  ack('AwsSolutions-CFR1', 'The dashboard is for every country the service is sold in; no geo restriction.');
  ack('AwsSolutions-CFR2', 'AWS WAF is an optional, per-account add-on (as for the API); the dashboard is static files and the API keeps its own throttling.');
  ack('AwsSolutions-CFR3', 'The dashboard is static files; API requests through it are logged by API Gateway and the Lambdas. CloudFront logs would need a log bucket with ACLs for no added insight.');
  ack('AwsSolutions-CFR4', 'The CloudFront default certificate (*.cloudfront.net) fixes the policy at TLSv1; a deployment with its own domain sets a certificate and TLSv1.2_2021 (README, "Dashboard").');
  ack('AwsSolutions-L1', "CDK's BucketDeployment custom resource (the dashboard's files to S3) runs on the runtime CDK picks for it; it runs only at deploy time.");
  ack('AwsSolutions-IAM5[Action::s3:DeleteObject*]', "CDK's BucketDeployment replaces the dashboard's files (prune): deletes scoped to the dashboard bucket.");
  ack(`AwsSolutions-IAM5[Resource::<${dashboardBucket}.Arn>/*]`, "CDK's BucketDeployment writes the dashboard's files: objects of the dashboard bucket only.");
  // The bootstrap asset bucket's ARN as cdk-nag prints it: literal partition and region for a stack with an
  // environment, CloudFormation pseudo parameters for an environment-agnostic one (the tests').
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  for (const partition of ['aws', '<AWS::Partition>']) {
    ack(`AwsSolutions-IAM5[Resource::arn:${partition}:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-${region}/*]`, "CDK's BucketDeployment reads the dashboard's asset zip from the CDK bootstrap asset bucket.");
  }
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  for (const partition of ['aws', '<AWS::Partition>']) {
    ack(`AwsSolutions-IAM5[Resource::arn:${partition}:scheduler:${region}:${account}:schedule/${stack.scheduling.groupName}/*]`,
      "Schedules of the stage's own schedule group: one EventBridge schedule per stored schedule, named after its id, not known in advance (issue 26).");
  }
  ack('AwsSolutions-COG4', 'Callers authenticate with service API keys (Bearer sai_…) through a Lambda TOKEN authorizer, not Cognito (docs/spec.md, Authentication).');
}
