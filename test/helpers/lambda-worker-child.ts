/**
 * A child process that plays a run-worker Lambda instance as closely as this machine allows: the Lambda
 * environment variables set before anything loads (so the worker launches Chromium with
 * @sparticuz/chromium's own arguments, --single-process and --in-process-gpu included), the AWS services
 * from the environment (DynamoDB Local; S3 in memory), and the handler called with an SQS event as the
 * event source mapping sends it. Prints one JSON line and exits.
 *
 * Not imitated: AWS_EXECUTION_ENV. On Lambda it makes @sparticuz/chromium unpack Amazon Linux 2023
 * system libraries and put them first on LD_LIBRARY_PATH; loaded into this Debian process they make
 * Chromium's renderer crash at the first page, which says nothing about Lambda.
 *
 * Input (environment): everything createAwsServices reads, plus DYNAMODB_ENDPOINT and JOB_ID.
 */
import fs from 'node:fs';

Object.assign(process.env, {
  AWS_LAMBDA_FUNCTION_NAME: 'scrape-ai-test-worker-run',
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '2048',
  AWS_REGION: 'us-east-1',
  LAMBDA_TASK_ROOT: '/var/task',
});

const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
const { S3Client } = await import('@aws-sdk/client-s3');
const { createAwsServices } = await import('../../lambdas/adapters/aws/services.ts');
const { installServices } = await import('../../lambdas/core/services.ts');
const { handler, onBrowserLaunch, closeBrowser } = await import('../../lambdas/workers/run-queue-consumer.ts');
const { memoryS3, sqsEvent, sqsRecord } = await import('./aws-events.ts');

const s3 = memoryS3();
installServices(createAwsServices(process.env, {
  dynamodb: new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  s3: new S3Client({ region: 'us-east-1' }),
}));
let cmdline = '';
onBrowserLaunch((pid) => { cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '); });
const batch = await handler(sqsEvent(sqsRecord(JSON.stringify({ job_id: process.env.JOB_ID }))));
await closeBrowser();
s3.restore();
process.stdout.write(JSON.stringify({ batch, cmdline }) + '\n');
process.exit(0);
