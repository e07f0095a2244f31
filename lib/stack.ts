/**
 * One stack per stage: data, queues, schedules (EventBridge Scheduler), API, workers, alarms, and the outputs the README's deploy section
 * names. Every function gets the same service environment (lambdas/adapters/aws/services.ts).
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { Billing } from '../lambdas/core/plans.ts';
import { Alarms } from './alarms.ts';
import { Api } from './api.ts';
import { Dashboard } from './dashboard.ts';
import { Data } from './data.ts';
import { Queues } from './queues.ts';
import { Scheduling } from './scheduler.ts';
import type { StageConfig } from './stage.ts';
import { Workers } from './workers.ts';

export interface ScrapeAiStackProps extends StackProps {
  stage: StageConfig;
  /** SAI_BILLING of the deployment. @default 'credits' */
  billing?: Billing;
  /**
   * ARN of a Secrets Manager secret whose string is an Anthropic API key (`-c anthropicSecretArn=…`): the
   * generate worker then uses the Claude agent. @default none: configs are generated without an LLM
   */
  anthropicSecretArn?: string;
  /**
   * ARN of a Secrets Manager secret whose string is the operator's proxy groups (the JSON of SAI_PROXIES,
   * docs/crawler.md "Upstream proxies"; `-c proxiesSecretArn=…`): the run worker reads it. @default none: runs go direct
   */
  proxiesSecretArn?: string;
}

export class ScrapeAiStack extends Stack {
  readonly data: Data;
  readonly queues: Queues;
  readonly scheduling: Scheduling;
  readonly api: Api;
  readonly workers: Workers;
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ScrapeAiStackProps) {
    super(scope, id, props);
    const { stage } = props;
    const billing = props.billing ?? 'credits';
    this.data = new Data(this, 'Data', stage);
    this.queues = new Queues(this, 'Queues', stage);
    this.scheduling = new Scheduling(this, 'Scheduling', { stage, queues: this.queues });
    const environment: Record<string, string> = {
      STAGE: stage.name,
      SAI_BILLING: billing,
      TABLE_NAME: this.data.table.tableName,
      BUCKET_NAME: this.data.bucket.bucketName,
      RUN_QUEUE_URL: this.queues.run.queue.queueUrl,
      GENERATE_QUEUE_URL: this.queues.generate.queue.queueUrl,
      WEBHOOK_QUEUE_URL: this.queues.webhook.queue.queueUrl,
      RUN_QUEUE_ARN: this.queues.run.queue.queueArn,
      SCHEDULE_GROUP: this.scheduling.groupName,
      SCHEDULER_ROLE_ARN: this.scheduling.role.roleArn,
      SEALING_SECRET_ARN: this.data.sealingSecret.secretArn,
      MAX_RECEIVES: String(stage.maxReceives),
      JOB_RETENTION_DAYS: String(stage.jobRetentionDays),
    };
    this.api = new Api(this, 'Api', { stage, billing, data: this.data, queues: this.queues, scheduling: this.scheduling, environment });
    const anthropicSecret = props.anthropicSecretArn ? Secret.fromSecretCompleteArn(this, 'AnthropicKey', props.anthropicSecretArn) : undefined;
    const proxiesSecret = props.proxiesSecretArn ? Secret.fromSecretCompleteArn(this, 'ProxiesSecret', props.proxiesSecretArn) : undefined;
    this.workers = new Workers(this, 'Workers', { stage, data: this.data, queues: this.queues, scheduling: this.scheduling, environment, ...(anthropicSecret ? { anthropicSecret } : {}), ...(proxiesSecret ? { proxiesSecret } : {}) });
    if (stage.alarms) {
      new Alarms(this, 'Alarms', { stage, queues: this.queues, api: this.api.restApi, functions: [this.api.authorizerFunction, ...this.api.functions.values(), this.workers.run, this.workers.generate, this.workers.deadLetters, this.workers.webhooks, this.workers.scheduleSweeper] });
    }

    this.dashboard = new Dashboard(this, 'Dashboard', { stage, api: this.api.restApi });
    new CfnOutput(this, 'DashboardUrl', { value: `https://${this.dashboard.distribution.distributionDomainName}/`, description: 'The web dashboard (its API calls go to /api/v1/ on the same host)' });
    new CfnOutput(this, 'ApiUrl', { value: `${this.api.restApi.url}api/v1/`, description: 'Base URL of the API' });
    new CfnOutput(this, 'TableName', { value: this.data.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.data.bucket.bucketName });
    new CfnOutput(this, 'RunQueueUrl', { value: this.queues.run.queue.queueUrl });
    new CfnOutput(this, 'SealingSecretArn', { value: this.data.sealingSecret.secretArn });
    new CfnOutput(this, 'UsagePlanIds', {
      value: this.toJsonString(Object.fromEntries([...this.api.usagePlans].map(([name, plan]) => [name, plan.usagePlanId]))),
      description: 'Usage plan id per plan (for USAGE_PLAN_IDS of the accounts CLI)',
    });
  }
}
