/**
 * The page-analysis tools' Lambda handlers in the cloud shape (docs/tools.md): driven as API Gateway drives them
 * (the TOKEN authorizer first, then a proxy event whose JSON body arrives base64-encoded, as it does with the
 * API's `binaryMediaTypes: ["*\/*"]`), on the DynamoDB store against DynamoDB Local with S3 in memory. Each tool
 * answers; the screenshot tool answers an image as base64 for API Gateway to decode, or stores it and hands out
 * a presigned S3 URL.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SecretsManagerClient, GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createAwsServices } from '../../lambdas/adapters/aws/services.ts';
import { installServices, type Services } from '../../lambdas/core/services.ts';
import { createAccount } from '../../lambdas/core/accounts.ts';
import { handler as authorizer } from '../../lambdas/authorizer/handler.ts';
import { handler as seo } from '../../lambdas/http/tools-seo-analyzer.ts';
import { handler as tech } from '../../lambdas/http/tools-tech-detector.ts';
import { handler as leads } from '../../lambdas/http/tools-lead-generation.ts';
import { handler as screenshot } from '../../lambdas/http/tools-screenshot.ts';
import { handler as content } from '../../lambdas/http/tools-content-extractor.ts';
import { handler as storedScreenshot } from '../../lambdas/http/screenshots-get.ts';
import { handler as links } from '../../lambdas/http/tools-broken-link-checker.ts';
import { handler as dnsWhois } from '../../lambdas/http/tools-dns-whois.ts';
import { handler as sslChecker } from '../../lambdas/http/tools-ssl-checker.ts';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { startDnsServer } from '../helpers/dns-server.ts';
import { makeTlsFixtures } from '../helpers/tls-fixtures.ts';
import { closeBrowser } from '../../lambdas/workers/worker-browser.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { startDynamoLocal, type DynamoLocal } from '../helpers/dynamodb-local.ts';
import { lambdaContext, memoryS3, proxyEvent, tokenEvent } from '../helpers/aws-events.ts';

type ApiHandler = typeof seo;
const invoke = async (h: ApiHandler, e: APIGatewayProxyEvent) => (await h(e, lambdaContext() as Parameters<ApiHandler>[1], { signal: new AbortController().signal }))!;

describe('the tool handlers in the cloud shape', () => {
  let ddb: DynamoLocal;
  let site: FixtureSite;
  let s3: ReturnType<typeof memoryS3>;
  let secrets: ReturnType<typeof mockClient>;
  let svc: Services;
  let key: string;

  before(async () => {
    [ddb, site] = await Promise.all([startDynamoLocal(), startFixtureSite()]);
    const table = await ddb.createTable();
    s3 = memoryS3();
    secrets = mockClient(SecretsManagerClient);
    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'sealing secret of the test stage' });
    svc = createAwsServices({
      STAGE: 'test', TABLE_NAME: table, RUN_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/run', GENERATE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/generate',
      BUCKET_NAME: 'results', SEALING_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:x', SAI_OUTBOUND_ALLOW: '127.0.0.0/8', MAX_RECEIVES: '3', JOB_RETENTION_DAYS: '30',
    }, {
      dynamodb: ddb.client(),
      // Presigning needs credentials (it signs locally, nothing is sent).
      s3: new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' } }),
      sqs: new SQSClient({ region: 'us-east-1' }),
      secrets: new SecretsManagerClient({ region: 'us-east-1' }),
    });
    installServices(svc);
    key = (await createAccount(svc, { email: 'tools@example.com', password: 'correct horse battery', plan: 'pro' })).apiKey;
  });
  after(async () => {
    await closeBrowser();
    s3?.restore();
    secrets?.restore();
    await site?.close();
    await ddb?.stop();
  });

  /** API Gateway: the authorizer, then the method with the authorizer's context and the body base64-encoded. */
  async function post(h: ApiHandler, tool: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const path = `/api/v1/tools/${tool}/`;
    const auth = await authorizer(tokenEvent(`Bearer ${key}`, 'POST', path));
    assert.equal(auth.policyDocument.Statement[0]!.Effect, 'Allow');
    const event = proxyEvent('POST', path, path, { headers, authorizer: { principalId: auth.principalId, ...auth.context } });
    event.body = Buffer.from(JSON.stringify(body)).toString('base64');
    event.isBase64Encoded = true;
    return invoke(h, event);
  }

  it('each page tool answers 200 with its report', async () => {
    const url = `${site.url}/books/`;
    for (const [name, h, field] of [['seo-analyzer', seo, 'audits'], ['tech-detector', tech, 'technologies'], ['lead-generation', leads, 'emails'], ['content-extractor', content, 'word_count']] as const) {
      const r = await post(h, name, { url });
      assert.equal(r.statusCode, 200, `${name}: ${r.body}`);
      assert.equal(r.isBase64Encoded ?? false, false);
      assert.ok(field in JSON.parse(r.body), `${name} answers ${field}`);
    }
    const refused = await post(seo, 'seo-analyzer', { url: 'http://169.254.169.254/latest/meta-data/' });
    assert.equal(refused.statusCode, 400);
    assert.equal(JSON.parse(refused.body).code, 'target_forbidden');
  });

  it('screenshot: the image base64-encoded for API Gateway, or stored in S3 behind a presigned URL', async () => {
    const image = await post(screenshot, 'screenshot', { url: `${site.url}/quotes/`, width: 320, height: 240 });
    assert.equal(image.statusCode, 200, image.body);
    assert.equal(image.isBase64Encoded, true);
    assert.equal(image.headers?.['Content-Type'], 'image/png');
    const png = Buffer.from(image.body, 'base64');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [320, 240]);

    const stored = await post(screenshot, 'screenshot', { url: `${site.url}/quotes/`, width: 320, height: 240, format: 'webp' }, { Accept: 'application/json' });
    assert.equal(stored.statusCode, 200, stored.body);
    const body = JSON.parse(stored.body);
    const presigned = new URL(body.url);
    assert.equal(presigned.hostname, 'results.s3.us-east-1.amazonaws.com');
    assert.match(presigned.pathname, /^\/screenshots\/[0-9a-z]+-[A-Za-z0-9_-]{22}\.webp$/);
    assert.equal(presigned.searchParams.get('X-Amz-Expires'), '3600');
    assert.ok(presigned.searchParams.get('X-Amz-Signature'));
    const object = s3.objects.get(`results${decodeURIComponent(presigned.pathname)}`);
    assert.ok(object, 'the image is in the bucket');
    assert.equal(object.contentType, 'image/webp');
    assert.equal(object.body.length, body.bytes);
    assert.deepEqual([body.width, body.height, body.format], [320, 240, 'webp']);

    // The service's own route serves the same object (the local deployment's URL), without a key.
    const id = presigned.pathname.split('/').pop()!;
    const served = await invoke(storedScreenshot, proxyEvent('GET', '/api/v1/screenshots/{id}/', `/api/v1/screenshots/${id}/`, { params: { id } }));
    assert.equal(served.statusCode, 200);
    assert.equal(Buffer.from(served.body, 'base64').length, body.bytes);
  });

  it('the site tools: broken links of a page, DNS from a named server, a TLS certificate', async () => {
    const checked = await post(links, 'broken-link-checker', { url: `${site.url}/quotes/`, max_links: 30 });
    assert.equal(checked.statusCode, 200, checked.body);
    const report = JSON.parse(checked.body);
    assert.ok(report.links.length > 0 && report.links.length <= 30);
    assert.ok(report.links.some((l: { state: string }) => l.state === 'ok'));

    const dns = await startDnsServer({ zone: { 'example.com': [{ type: 'A', ttl: 60, data: '192.0.2.10' }] } });
    const fx = await makeTlsFixtures();
    const server = tls.createServer({ key: fx.leaves.valid.key, cert: fx.leaves.valid.cert + fx.intermediate.cert }, (s) => { s.on('error', () => undefined); s.end(); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const d = await post(dnsWhois, 'dns-whois', { url: 'https://example.com/', servers: [dns.address] });
      assert.equal(d.statusCode, 200, d.body);
      assert.deepEqual(JSON.parse(d.body).dns.A.map((a: { address: string }) => a.address), ['192.0.2.10']);
      const port = (server.address() as AddressInfo).port;
      const c = await post(sslChecker, 'ssl-checker', { url: `https://127.0.0.1:${port}/` });
      assert.equal(c.statusCode, 200, c.body);
      const ssl = JSON.parse(c.body);
      assert.equal(ssl.port, port);
      assert.equal(ssl.hostname_match, true);
      assert.equal(ssl.authorized, false, 'the test CA is not in this process\'s trust store');
    } finally {
      await new Promise((r) => server.close(r));
      await dns.close();
      await fx.cleanup();
    }
  });
});
