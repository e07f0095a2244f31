/**
 * The CDK app: one stack per stage. `npx cdk synth -c stage=dev` (or `npm run synth -- -c stage=prod`),
 * `npm run deploy -- -c stage=prod` (add `-c anthropicSecretArn=arn:…` to give the generate worker the Claude agent, `-c proxiesSecretArn=arn:…` to give
 * the run worker the operator's upstream proxies). cdk-nag's AwsSolutions checks run on every synth; every suppression
 * carries its reason (lib/nag.ts).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { billingFromEnv } from '../lambdas/core/plans.ts';
import { ScrapeAiStack } from '../lib/stack.ts';
import { suppressNagFindings } from '../lib/nag.ts';
import { stageConfig } from '../lib/stage.ts';

const app = new App();
const stage = stageConfig(String(app.node.tryGetContext('stage') ?? 'dev'));
const anthropicSecretArn = app.node.tryGetContext('anthropicSecretArn') as string | undefined;
const proxiesSecretArn = app.node.tryGetContext('proxiesSecretArn') as string | undefined;
const stack = new ScrapeAiStack(app, `ScrapeAi-${stage.name}`, {
  stage,
  billing: billingFromEnv(process.env),
  ...(anthropicSecretArn ? { anthropicSecretArn } : {}),
  ...(proxiesSecretArn ? { proxiesSecretArn } : {}),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: `scrape-ai (${stage.name}): web scraping and website analysis service`,
  tags: { app: 'scrape-ai', stage: stage.name },
});
suppressNagFindings(stack);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
