/**
 * The run-worker Lambda handler runs the browser engine with @sparticuz/chromium's own launch arguments,
 * in a child process that imitates the Lambda environment (test/helpers/lambda-worker-child.ts), against
 * DynamoDB Local. What cannot be imitated here: the Lambda sandbox itself, Amazon Linux 2023's system
 * libraries (see the child's header), /opt layers and the read-only file system outside /tmp.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { DynamoStore } from '../../lambdas/adapters/aws/dynamo-store.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { startDynamoLocal, type DynamoLocal } from '../helpers/dynamodb-local.ts';

const run = promisify(execFile);

describe('run worker in a Lambda-like environment', () => {
  let ddb: DynamoLocal;
  let site: FixtureSite;
  before(async () => { [ddb, site] = await Promise.all([startDynamoLocal(), startFixtureSite()]); });
  after(async () => {
    await site?.close();
    await ddb?.stop();
  });

  it('runs a heavy job from an SQS event with the Lambda launch arguments of @sparticuz/chromium', async () => {
    const table = await ddb.createTable();
    const store = new DynamoStore({ tableName: table, client: ddb.client() });
    const account = await store.createAccount({ email: 'lambda@example.com', first_name: '', last_name: '', plan: 'pro', password_hash: 'x', api_key_digest: null, api_key_sealed: null });
    const now = new Date().toISOString();
    const yaml = `target: { url: "${site.url}/js/quotes/", engine: heavy, browser: { wait_selector: div.quote } }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: tags, type: eval, script: "el.querySelectorAll('a.tag').length" }
`;
    const id = randomUUID();
    await store.createJob({
      id, account_id: account.id, job_type: 'run', status: 'pending', progress: 0, status_message: 'Queued', items_found: 0, pages_scraped: 0,
      api_discovered: false, target_url: `${site.url}/js/quotes/`, config_id: null, yaml_content: yaml, created_at: now, updated_at: now,
      started_at: null, completed_at: null, attempts: 0, row_count: 0, results_key: null, prompt: null,
    });
    const { stdout } = await run(process.execPath, [path.join(import.meta.dirname, '..', 'helpers', 'lambda-worker-child.ts')], {
      env: {
        ...process.env, TABLE_NAME: table, BUCKET_NAME: 'results', STAGE: 'test', SAI_OUTBOUND_ALLOW: '127.0.0.0/8',
        DYNAMODB_ENDPOINT: ddb.endpoint, JOB_ID: id, JOB_TIMEOUT_MS: '120000',
      },
      timeout: 180_000,
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as { batch: { batchItemFailures: unknown[] }; cmdline: string };
    assert.deepEqual(out.batch, { batchItemFailures: [] });
    assert.match(out.cmdline, /--single-process/, "@sparticuz/chromium's own arguments, unchanged");
    assert.match(out.cmdline, /--proxy-server=http:\/\/127\.0\.0\.1:\d+/, 'behind the guard proxy');
    assert.match(out.cmdline, /--in-process-gpu/);
    const job = (await store.getJobById(id))!;
    assert.equal(job.status, 'completed', job.status_message);
    assert.match(job.status_message, /heavy engine; target\.engine is heavy/);
    assert.equal(job.row_count, 10);
    assert.equal(job.api_discovered, true);

  });
});
