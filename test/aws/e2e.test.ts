/**
 * End to end in the cloud shape: the Lambda handlers driven exactly as API Gateway (proxy events, the
 * TOKEN authorizer first) and SQS (event source mapping batches) would drive them, on the DynamoDB store
 * against DynamoDB Local, with S3 and SQS stand-ins. Login, create config, run, worker, status, results;
 * then the worker's batch semantics: partial failures, redelivery, the last attempt, dead letters.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SecretsManagerClient, GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createAwsServices } from '../../lambdas/adapters/aws/services.ts';
import { installServices, type Services } from '../../lambdas/core/services.ts';
import { createAccount, rotateApiKey, setPlan } from '../../lambdas/core/accounts.ts';
import { ApiGatewayUsageKeys } from '../../lambdas/adapters/aws/usage-keys.ts';
import {
  APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteUsagePlanKeyCommand, GetApiKeyCommand, NotFoundException,
} from '@aws-sdk/client-api-gateway';
import { handler as authorizer } from '../../lambdas/authorizer/handler.ts';
import { handler as login } from '../../lambdas/http/login.ts';
import { handler as createConfig } from '../../lambdas/http/configs-create.ts';
import { handler as run } from '../../lambdas/http/run.ts';
import { handler as status } from '../../lambdas/http/job-status.ts';
import { handler as results } from '../../lambdas/http/job-results.ts';
import { handler as me } from '../../lambdas/http/me.ts';
import { handler as runWorker } from '../../lambdas/workers/run-queue-consumer.ts';
import { handler as generate } from '../../lambdas/http/generate.ts';
import { handler as generateWorker } from '../../lambdas/workers/generate-queue-consumer.ts';
import { handler as deadLetter } from '../../lambdas/workers/dead-letter.ts';
import { handler as mcp } from '../../lambdas/http/mcp.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { exportRows } from '../../lambdas/export/rows-export.ts';
import { withoutZipTimes } from '../helpers/zip-times.ts';
import { bookDetails } from '../fixtures/site/books.ts';
import { startDynamoLocal, type DynamoLocal } from '../helpers/dynamodb-local.ts';
import { lambdaContext, memoryS3, memorySqs, proxyEvent, sqsEvent, sqsRecord, tokenEvent } from '../helpers/aws-events.ts';

type ApiHandler = typeof login;
const call = async (h: ApiHandler, e: APIGatewayProxyEvent) => {
  const r = (await h(e, lambdaContext() as Parameters<ApiHandler>[1], { signal: new AbortController().signal }))!;
  return { status: r.statusCode, body: r.body ? JSON.parse(r.body) : null, headers: r.headers ?? {} };
};

describe('the Lambda handlers in the cloud shape', () => {
  let ddb: DynamoLocal;
  let site: FixtureSite;
  let s3: ReturnType<typeof memoryS3>;
  let sqs: ReturnType<typeof memorySqs>;
  let secrets: ReturnType<typeof mockClient>;
  let svc: Services;
  const RUN_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/scrape-ai-test-run';
  const GENERATE_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/scrape-ai-test-generate';

  before(async () => {
    [ddb, site] = await Promise.all([startDynamoLocal(), startFixtureSite()]);
    const table = await ddb.createTable();
    s3 = memoryS3();
    sqs = memorySqs();
    secrets = mockClient(SecretsManagerClient);
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'sealing secret of the test stage' });
    svc = createAwsServices({
      STAGE: 'test', TABLE_NAME: table, RUN_QUEUE_URL: RUN_QUEUE, GENERATE_QUEUE_URL: GENERATE_QUEUE, BUCKET_NAME: 'results', SEALING_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:x',
      SAI_OUTBOUND_ALLOW: '127.0.0.0/8', MAX_RECEIVES: '3', JOB_RETENTION_DAYS: '30',
    }, {
      dynamodb: ddb.client(), s3: new S3Client({ region: 'us-east-1' }), sqs: new SQSClient({ region: 'us-east-1' }), secrets: new SecretsManagerClient({ region: 'us-east-1' }),
    });
    installServices(svc);
  });
  after(async () => {
    s3?.restore();
    sqs?.restore();
    secrets?.restore();
    await site?.close();
    await ddb?.stop();
  });

  /** What API Gateway does for a method with the TOKEN authorizer: authorize, then call with the context. */
  async function authorized(key: string, h: ApiHandler, method: string, resource: string, path: string, o: Parameters<typeof proxyEvent>[3] = {}) {
    const auth = await authorizer(tokenEvent(`Bearer ${key}`, method, path));
    assert.equal(auth.policyDocument.Statement[0]!.Effect, 'Allow');
    return call(h, proxyEvent(method, resource, path, { ...o, authorizer: { principalId: auth.principalId, ...auth.context } }));
  }

  it('login, create config, run, worker, status, results', async () => {
    const { account } = await createAccount(svc, { email: 'cloud@example.com', password: 'cloud password', plan: 'growth' });
    const l = await call(login, proxyEvent('POST', '/api/v1/auth/login/', '/api/v1/auth/login/', { body: { email: 'cloud@example.com', password: 'cloud password' } }));
    assert.equal(l.status, 200);
    const key = l.body.api_key as string;
    assert.match(key, /^sai_/);
    await assert.rejects(authorizer(tokenEvent('Bearer sai_' + 'x'.repeat(40), 'GET', '/api/v1/me/')), /Unauthorized/);

    const m = await authorized(key, me, 'GET', '/api/v1/me/', '/api/v1/me/');
    assert.equal(m.body.user.id, account.id);
    assert.equal(m.body.subscription.credits_remaining, 75);

    const yaml = `target: { url: "${site.url}/books/" }
extract:
  container: article.product_pod
  fields:
    - { name: title, selector: h3 a, type: attribute, attribute: title }
    - { name: url, selector: h3 a, type: link }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number] }
detail_fields:
  fields:
    - { name: upc, selector: "table tr:first-child td" }
`;
    const c = await authorized(key, createConfig, 'POST', '/api/v1/configs/', '/api/v1/configs/', { body: { name: 'books', target_url: `${site.url}/books/`, yaml_content: yaml } });
    assert.equal(c.status, 201);
    const r = await authorized(key, run, 'POST', '/api/v1/run/', '/api/v1/run/', { body: { config_id: c.body.id } });
    assert.equal(r.status, 202);
    assert.deepEqual(r.body, { id: r.body.id, status: 'pending', progress: 0, job_type: 'run' });
    assert.equal(sqs.sent.length, 1);
    assert.equal(sqs.sent[0]!.url, RUN_QUEUE);
    assert.deepEqual(JSON.parse(sqs.sent[0]!.body), { job_id: r.body.id });

    const statusPath = `/api/v1/jobs/${r.body.id}/status/`;
    const pending = await authorized(key, status, 'GET', '/api/v1/jobs/{id}/status/', statusPath, { params: { id: r.body.id } });
    assert.equal(pending.body.status, 'pending');

    const batch = await runWorker(sqsEvent(sqsRecord(sqs.sent[0]!.body)));
    assert.deepEqual(batch, { batchItemFailures: [] });

    const done = await authorized(key, status, 'GET', '/api/v1/jobs/{id}/status/', statusPath, { params: { id: r.body.id } });
    assert.equal(done.body.status, 'completed', done.body.status_message);
    assert.equal(done.body.progress, 100);
    assert.equal(done.body.results.row_count, 20);
    assert.equal(done.body.pages_scraped, 21);
    assert.match(done.body.status_message, /^Completed: 20 rows from 21 pages: 1 listing, 20 detail \(/, 'counted and said as the local service does');
    assert.deepEqual([done.body.config_id, done.body.config_name, done.body.warning_count, done.body.warnings], [c.body.id, 'books', 0, []]);
    assert.ok(s3.objects.has(`results/results/${account.id}/${r.body.id}/1.json`), 'rows are in S3, not in the job item');
    assert.ok(s3.objects.has(`results/results/${account.id}/${r.body.id}/1.preview.json`), 'and a preview for status polls');

    const res = await authorized(key, results, 'GET', '/api/v1/jobs/{id}/results/', `/api/v1/jobs/${r.body.id}/results/`, { params: { id: r.body.id } });
    assert.equal(res.status, 200);
    const books = bookDetails();
    assert.deepEqual(res.body[0].data.map((x: { upc: string }) => x.upc), books.map((b) => b.upc));
    assert.equal(res.body[0].data[0].price, books[0]!.price);

    // Exports: made in place and answered whole (base64, as API Gateway's binary media types want), the bytes of
    // exportRows; the account's places (2 at once, a DynamoDB counter) are given back after each.
    for (const format of ['csv', 'xlsx', 'json', 'csv'] as const) {
      const auth = await authorizer(tokenEvent(`Bearer ${key}`, 'GET', `/api/v1/jobs/${r.body.id}/results/`));
      const file: APIGatewayProxyResult = (await results(proxyEvent('GET', '/api/v1/jobs/{id}/results/', `/api/v1/jobs/${r.body.id}/results/`, { params: { id: r.body.id }, query: { format }, authorizer: { principalId: auth.principalId, ...auth.context } }),
        lambdaContext() as Parameters<ApiHandler>[1], { signal: new AbortController().signal }))!;
      assert.equal(file.statusCode, 200, file.body.slice(0, 300));
      const bytes = format === 'json' ? Buffer.from(file.body) : Buffer.from(file.body, 'base64');
      assert.equal(file.isBase64Encoded ?? false, format !== 'json');
      const want = Buffer.from((await exportRows(res.body[0].data, format)).body);
      assert.ok(format === 'xlsx' ? withoutZipTimes(bytes).equals(withoutZipTimes(want)) : bytes.equals(want), `${format}: ${bytes.length} bytes against ${want.length}`);
    }
  });

  it('a replaced key stops working at once, although API Gateway serves the cached authorizer result for 5 minutes', async () => {
    const { apiKey: oldKey } = await createAccount(svc, { email: 'rotate@example.com', password: 'cloud password', plan: 'growth' });
    const auth = await authorizer(tokenEvent(`Bearer ${oldKey}`, 'GET', '/api/v1/me/'));
    // What API Gateway keeps in its cache for this token and hands to every call within the TTL.
    const cached = { principalId: auth.principalId, ...auth.context };
    assert.equal((await call(me, proxyEvent('GET', '/api/v1/me/', '/api/v1/me/', { authorizer: cached }))).status, 200);

    const { apiKey: newKey } = await rotateApiKey(svc, 'rotate@example.com');
    const stale = await call(me, proxyEvent('GET', '/api/v1/me/', '/api/v1/me/', { authorizer: cached }));
    assert.equal(stale.status, 401, JSON.stringify(stale.body));
    assert.equal(stale.body.code, 'unauthorized');
    assert.match(stale.body.error, /replaced/);
    const staleRun = await call(run, proxyEvent('POST', '/api/v1/run/', '/api/v1/run/', { authorizer: cached, body: { yaml_content: 'x' } }));
    assert.equal(staleRun.status, 401, 'refused before the body is looked at');
    await assert.rejects(authorizer(tokenEvent(`Bearer ${oldKey}`, 'GET', '/api/v1/me/')), /Unauthorized/);
    assert.equal((await authorized(newKey, me, 'GET', '/api/v1/me/', '/api/v1/me/')).body.user.email, 'rotate@example.com');
    const l = await call(login, proxyEvent('POST', '/api/v1/auth/login/', '/api/v1/auth/login/', { body: { email: 'rotate@example.com', password: 'cloud password' } }));
    assert.equal(l.body.api_key, newKey, 'login returns the new key');
  });

  it('generate: the handler queues on the generate queue, the generate worker saves a config and its rows', async () => {
    const { apiKey } = await createAccount(svc, { email: 'gen@example.com', password: 'cloud password', plan: 'growth' });
    const url = `${site.url}/quotes/`;
    const g = await authorized(apiKey, generate, 'POST', '/api/v1/generate/', '/api/v1/generate/', { body: { url, prompt: 'quotes and their authors' } });
    assert.equal(g.status, 202, JSON.stringify(g.body));
    assert.equal(g.body.job_type, 'generate');
    const message = sqs.sent.find((m) => m.url === GENERATE_QUEUE && JSON.parse(m.body).job_id === g.body.id);
    assert.ok(message, 'sent to the generate queue');
    const batch = await generateWorker(sqsEvent(sqsRecord(message.body, 1, 'scrape-ai-test-generate')));
    assert.deepEqual(batch, { batchItemFailures: [] });
    const st = await authorized(apiKey, status, 'GET', '/api/v1/jobs/{id}/status/', `/api/v1/jobs/${g.body.id}/status/`, { params: { id: g.body.id } });
    assert.equal(st.body.status, 'completed', st.body.status_message);
    assert.equal(st.body.results.data[0].author, 'Ada Whitmore');
    const saved = await svc.store.getConfig((await svc.store.getAccountByEmail('gen@example.com'))!.id, st.body.yaml_config.id);
    assert.equal(saved?.prompt, 'quotes and their authors');
    assert.equal(saved?.yaml_content, st.body.yaml_config.yaml_content);
  });

  it('generate with run: true: the generate worker queues a metered run of the saved config on the run queue, whose worker gives every row; a run the quota no longer allows is said, not thrown', async () => {
    const { account, apiKey } = await createAccount(svc, { email: 'gen-run@example.com', password: 'cloud password', plan: 'growth' });
    const url = `${site.url}/quotes/`;
    const g = await authorized(apiKey, generate, 'POST', '/api/v1/generate/', '/api/v1/generate/', { body: { url, prompt: 'every quote with its author', run: true } });
    assert.equal(g.status, 202, JSON.stringify(g.body));
    const message = sqs.sent.find((m) => m.url === GENERATE_QUEUE && JSON.parse(m.body).job_id === g.body.id)!;
    assert.deepEqual(await generateWorker(sqsEvent(sqsRecord(message.body, 1, 'scrape-ai-test-generate'))), { batchItemFailures: [] });
    const statusOf = async (id: string) => (await authorized(apiKey, status, 'GET', '/api/v1/jobs/{id}/status/', `/api/v1/jobs/${id}/status/`, { params: { id } })).body;
    const st = await statusOf(g.body.id);
    assert.equal(st.status, 'completed', st.status_message);
    assert.ok(st.run_job_id, JSON.stringify(st));
    const runMessage = sqs.sent.find((m) => m.url === RUN_QUEUE && JSON.parse(m.body).job_id === st.run_job_id);
    assert.ok(runMessage, 'the run is queued on the run queue, as POST /run/ queues it');
    // A second delivery of the finished generate message (at-least-once) starts no second run and saves no second config.
    await generateWorker(sqsEvent(sqsRecord(message.body, 2, 'scrape-ai-test-generate')));
    assert.equal(sqs.sent.filter((m) => m.url === RUN_QUEUE && JSON.parse(m.body).job_id === st.run_job_id).length, 1);
    assert.equal((await svc.store.listConfigs(account.id)).length, 1);
    assert.deepEqual(await runWorker(sqsEvent(sqsRecord(runMessage.body))), { batchItemFailures: [] });
    const run = await statusOf(st.run_job_id);
    assert.equal(run.status, 'completed', run.status_message);
    assert.equal(run.yaml_config.id, st.yaml_config.id);
    assert.equal(run.results.row_count, 100, 'every quote of the ten pages');
    const m = await authorized(apiKey, me, 'GET', '/api/v1/me/', '/api/v1/me/');
    assert.equal(m.body.subscription.credits_remaining, 75 - 2, 'the generation and its run');

    // Accepted with room for both, then the month's credits are spent elsewhere before the generation ends.
    const g2 = await authorized(apiKey, generate, 'POST', '/api/v1/generate/', '/api/v1/generate/', { body: { url, prompt: 'quotes, authors and tags', run: true } });
    assert.equal(g2.status, 202, JSON.stringify(g2.body));
    const month = new Date().toISOString().slice(0, 7);
    const used = await svc.store.getCounter(account.id, `credits:${month}`);
    assert.ok((await svc.store.consume(account.id, `credits:${month}`, 75_000 - used, 75_000)).ok);
    const message2 = sqs.sent.find((x) => x.url === GENERATE_QUEUE && JSON.parse(x.body).job_id === g2.body.id)!;
    assert.deepEqual(await generateWorker(sqsEvent(sqsRecord(message2.body, 1, 'scrape-ai-test-generate'))), { batchItemFailures: [] });
    const st2 = await statusOf(g2.body.id);
    assert.equal(st2.status, 'completed', 'the config and the trial rows stand');
    assert.equal(st2.run_job_id, null);
    assert.match(st2.run_error, /^quota_exceeded: /);
    assert.match(st2.status_message, /the run of the saved config for all the rows could not start \(quota_exceeded: /);
    // With one credit left, a generate alone could be paid for, a generate and its run cannot: refused up front.
    await svc.store.refund(account.id, `credits:${month}`, 1000);
    const g3 = await authorized(apiKey, generate, 'POST', '/api/v1/generate/', '/api/v1/generate/', { body: { url, prompt: 'quotes', run: true } });
    assert.equal(g3.status, 429, JSON.stringify(g3.body));
    assert.equal(g3.body.code, 'quota_exceeded');
    assert.match(g3.body.error, /1 of 75 credits left, this generate and its run costs 2/);
    assert.equal((await authorized(apiKey, generate, 'POST', '/api/v1/generate/', '/api/v1/generate/', { body: { url, prompt: 'quotes' } })).status, 202);
  });

  it('MCP (POST /mcp) on the DynamoDB store: run_config answers a job still running within its wait, the run worker runs it, get_job gives its rows; a YAML error is a tool error with its line', async () => {
    const { apiKey } = await createAccount(svc, { email: 'mcp@example.com', password: 'cloud password', plan: 'growth' });
    /** One JSON-RPC request as API Gateway delivers it (binary media types: the body base64), the SSE answer parsed. */
    const rpc = async (id: number, method: string, params: unknown) => {
      const auth = await authorizer(tokenEvent(`Bearer ${apiKey}`, 'POST', '/mcp'));
      const e = proxyEvent('POST', '/mcp', '/mcp', { headers: { accept: 'application/json, text/event-stream', authorization: `Bearer ${apiKey}` }, authorizer: { principalId: auth.principalId, ...auth.context } });
      e.body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, params })).toString('base64');
      e.isBase64Encoded = true;
      const r = (await mcp(e, lambdaContext() as Parameters<ApiHandler>[1], { signal: new AbortController().signal }))!;
      assert.equal(r.statusCode, 200, r.body);
      const data = r.body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { id?: number; result?: any; method?: string });
      return data.find((m) => m.id === id)!.result;
    };
    const init = await rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'aws-test', version: '1' } });
    assert.equal(init.serverInfo.name, 'scrape-ai');
    const yaml = `target: { url: "${site.url}/books/" }\nextract:\n  container: article.product_pod\n  fields:\n    - { name: title, selector: h3 a, type: attribute, attribute: title }\n`;
    const started = await rpc(2, 'tools/call', { name: 'run_config', arguments: { yaml_content: yaml, wait_seconds: 0 } });
    assert.equal(started.structuredContent.finished, false, JSON.stringify(started));
    const jobId = started.structuredContent.job_id as string;
    const message = sqs.sent.find((m) => m.url === RUN_QUEUE && JSON.parse(m.body).job_id === jobId);
    assert.ok(message, 'queued on the run queue, as POST /run/ does');
    assert.deepEqual(await runWorker(sqsEvent(sqsRecord(message.body))), { batchItemFailures: [] });
    const done = await rpc(3, 'tools/call', { name: 'get_job', arguments: { job_id: jobId, max_rows: 3 } });
    assert.equal(done.structuredContent.finished, true);
    assert.equal(done.structuredContent.rows.length, 3);
    assert.equal(done.structuredContent.rows[0].title, bookDetails()[0]!.title);
    // A client-chosen Host that makes no URL is not a 500; a body over 1 MiB (API Gateway lets 10 MB through) is 413.
    const auth = await authorizer(tokenEvent(`Bearer ${apiKey}`, 'POST', '/mcp'));
    const odd = proxyEvent('POST', '/mcp', '/mcp', { headers: { accept: 'application/json, text/event-stream', host: 'a b' }, authorizer: { principalId: auth.principalId, ...auth.context }, body: { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} } });
    assert.equal((await mcp(odd, lambdaContext() as Parameters<ApiHandler>[1], { signal: new AbortController().signal }))!.statusCode, 200);
    const big = proxyEvent('POST', '/mcp', '/mcp', { headers: { accept: 'application/json, text/event-stream' }, authorizer: { principalId: auth.principalId, ...auth.context } });
    big.body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'run_config', arguments: { yaml_content: 'x'.repeat(1100 * 1024) } } })).toString('base64');
    big.isBase64Encoded = true;
    const refused = (await mcp(big, lambdaContext() as Parameters<ApiHandler>[1], { signal: new AbortController().signal }))!;
    assert.equal(refused.statusCode, 413);
    assert.equal(JSON.parse(refused.body).code, 'payload_too_large');

    const bad = await rpc(4, 'tools/call', { name: 'run_config', arguments: { yaml_content: 'extract: [\n' } });
    assert.equal(bad.isError, true);
    const body = JSON.parse(bad.content[0].text);
    assert.equal(body.code, 'invalid_config');
    assert.equal(typeof body.details[0].line, 'number');
  });

  it('worker batches: a transient failure is reported for redelivery, other records complete', async () => {
    const { apiKey } = await createAccount(svc, { email: 'batch@example.com', password: 'cloud password', plan: 'pro' });
    const start = async (path: string) => (await authorized(apiKey, run, 'POST', '/api/v1/run/', '/api/v1/run/', {
      body: { yaml_content: `target: { url: "${site.url}${path}" }\nextract: { container: div.quote, fields: [{ name: t, selector: span.text }] }\n` },
    })).body.id as string;
    const ok = await start('/quotes/');
    const gone = await start('/status/404/');
    const flaky = await start('/quotes/page/2/');
    const messages = sqs.sent.slice(-3);
    // The third record's rows cannot be stored (S3 fails once): a transient, unexpected error.
    const records = messages.map((m) => sqsRecord(m.body));
    s3.state.failPuts = 0;
    const first = await runWorker(sqsEvent(records[0]!, records[1]!));
    assert.deepEqual(first.batchItemFailures, []);
    s3.state.failPuts = 1;
    const second = await runWorker(sqsEvent(records[2]!));
    assert.deepEqual(second.batchItemFailures, [{ itemIdentifier: records[2]!.messageId }], 'reported for redelivery');
    const job = async (id: string) => (await authorized(apiKey, status, 'GET', '/api/v1/jobs/{id}/status/', `/api/v1/jobs/${id}/status/`, { params: { id } })).body;
    assert.equal((await job(ok)).status, 'completed');
    assert.equal((await job(gone)).status, 'failed');
    assert.match((await job(gone)).status_message, /^target_failed: .*404/);
    const between = await job(flaky);
    assert.equal(between.status, 'running');
    assert.match(between.status_message, /^Attempt 1 failed with an internal error; it will be retried$/);
    assert.doesNotMatch(between.status_message, /We encountered/, 'internal error details stay in the log');

    // Redelivery (receive count 2) succeeds, and a duplicate delivery of a finished job is a no-op.
    const redelivered = await runWorker(sqsEvent(sqsRecord(messages[2]!.body, 2)));
    assert.deepEqual(redelivered.batchItemFailures, []);
    const after = await job(flaky);
    assert.equal(after.status, 'completed');
    assert.equal(after.results.row_count, 10);
    const duplicate = await runWorker(sqsEvent(sqsRecord(messages[0]!.body, 4)));
    assert.deepEqual(duplicate.batchItemFailures, []);
    assert.equal((await job(ok)).completed_at, (await job(ok)).completed_at);
  });

  it('the last delivery ends the job failed; the dead-letter consumer fails jobs the queue gave up on', async () => {
    const { apiKey } = await createAccount(svc, { email: 'dlq@example.com', password: 'cloud password', plan: 'pro' });
    const start = async () => (await authorized(apiKey, run, 'POST', '/api/v1/run/', '/api/v1/run/', {
      body: { yaml_content: `target: { url: "${site.url}/quotes/" }\nextract: { container: div.quote, fields: [{ name: t, selector: span.text }] }\n` },
    })).body.id as string;
    const job = async (id: string) => (await authorized(apiKey, status, 'GET', '/api/v1/jobs/{id}/status/', `/api/v1/jobs/${id}/status/`, { params: { id } })).body;

    const last = await start();
    s3.state.failPuts = 1;
    const r = await runWorker(sqsEvent(sqsRecord(sqs.sent.at(-1)!.body, 3)));
    assert.deepEqual(r.batchItemFailures, [], 'nothing left to retry');
    const failed = await job(last);
    assert.equal(failed.status, 'failed');
    assert.match(failed.status_message, /^internal_error: Gave up after 3 attempts, each ended by an internal error \(logged with job id /);

    const lost = await start();
    // The worker died on every delivery (never answered): SQS moves the message to the dead-letter queue.
    await deadLetter(sqsEvent(sqsRecord(sqs.sent.at(-1)!.body, 3, 'scrape-ai-test-run-dlq')));
    const dead = await job(lost);
    assert.equal(dead.status, 'failed');
    assert.match(dead.status_message, /^worker_lost: the job was attempted 3 time\(s\)/);
    assert.ok(dead.completed_at);
  });

  it('each account gets its own API Gateway key in its plan\'s usage plan; the authorizer returns it; set-plan moves it', async () => {
    const apigw = mockClient(APIGatewayClient);
    let n = 0;
    apigw.on(CreateApiKeyCommand).callsFake(async () => ({ id: `key-${++n}`, value: `usage-value-${n}` }));
    apigw.on(GetApiKeyCommand).callsFake(async (input: { apiKey: string }) => ({ id: input.apiKey, value: `usage-value-${input.apiKey.slice(4)}` }));
    apigw.on(DeleteUsagePlanKeyCommand).rejects(new NotFoundException({ message: 'not in plan', $metadata: {} }));
    apigw.on(CreateUsagePlanKeyCommand).resolves({});
    try {
      const withKeys: Services = { ...svc, usageKeys: new ApiGatewayUsageKeys({ usagePlanIds: { free: 'up-free', growth: 'up-growth', pro: 'up-pro' }, namePrefix: 'scrape-ai-test', client: new APIGatewayClient({ region: 'us-east-1' }) }) };
      const a = await createAccount(withKeys, { email: 'keyed-a@example.com', password: 'cloud password', plan: 'growth' });
      const b = await createAccount(withKeys, { email: 'keyed-b@example.com', password: 'cloud password', plan: 'growth' });
      assert.notEqual(a.account.usage_key_value, b.account.usage_key_value, 'one key per account, not per plan');
      const authA = await authorizer(tokenEvent(`Bearer ${a.apiKey}`, 'GET', '/api/v1/me/'));
      assert.equal(authA.usageIdentifierKey, a.account.usage_key_value);
      assert.deepEqual(apigw.commandCalls(CreateUsagePlanKeyCommand).map((c) => [c.args[0].input.usagePlanId, c.args[0].input.keyId]), [['up-growth', 'key-1'], ['up-growth', 'key-2']]);
      const moved = await setPlan(withKeys, 'keyed-a@example.com', 'pro');
      assert.equal(moved.usage_key_id, 'key-1', 'the same key, moved');
      assert.deepEqual(apigw.commandCalls(CreateUsagePlanKeyCommand).at(-1)!.args[0].input, { usagePlanId: 'up-pro', keyId: 'key-1', keyType: 'API_KEY' });
      assert.ok(apigw.commandCalls(DeleteUsagePlanKeyCommand).some((c) => c.args[0].input.usagePlanId === 'up-growth' && c.args[0].input.keyId === 'key-1'));
      const stored = await svc.store.getAccountByEmail('keyed-a@example.com');
      assert.equal(stored?.plan, 'pro');
      assert.equal(stored?.usage_key_value, 'usage-value-1');
    } finally {
      apigw.restore();
    }
  });

  it('unreadable records are dropped, not retried for ever', async () => {
    const r = await runWorker(sqsEvent(sqsRecord('not json'), sqsRecord('{"job_id":"00000000-0000-4000-8000-000000000000"}')));
    assert.deepEqual(r.batchItemFailures, []);
  });
});
