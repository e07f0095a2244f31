/**
 * docs/openapi.json (scripts/openapi.ts, from the route table lambdas/routes.ts) is a valid OpenAPI 3.1 document
 * by a standard validator (@readme/openapi-parser), and it holds every route, every status code a route answers
 * with and every error code that has an HTTP status. The route table's own invariants are checked here too:
 * `startsWork` is set exactly on the routes whose handler meters, bodies compile as the middleware compiles them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { validate, compileErrors } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import { ERROR_CODES, type ErrorCode, type ErrorCodeSpec } from '../../lambdas/errors.ts';

const statusOf = (c: ErrorCode) => (ERROR_CODES[c] as ErrorCodeSpec).status;
import { routes, TOOL_REPORTS } from '../../lambdas/routes.ts';
import { LINK_CHECK_BOUNDS } from '../../lambdas/http/schemas.ts';
import { LINK_CHECK_DEFAULTS } from '../../lambdas/tools/links.ts';
import { HTTP_ERROR_CODES, openApiDocument } from '../../scripts/openapi.ts';

const root = path.resolve(import.meta.dirname, '../..');
const readDoc = () => JSON.parse(fs.readFileSync(path.join(root, 'docs/openapi.json'), 'utf8')) as Record<string, any>;

describe('docs/openapi.json', () => {
  it('is a valid OpenAPI 3.1.0 document (@readme/openapi-parser)', async () => {
    const doc = readDoc();
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.0.0', 'docs/spec.md, "Versioning": the interface version is 1.0.0');
    const result = await validate(doc as unknown as Parameters<typeof validate>[0]);
    assert.ok(result.valid, result.valid ? '' : compileErrors(result));
  });

  it('the validator refuses a broken document (the check can fail)', async () => {
    const doc = readDoc();
    delete doc.paths['/api/v1/me/'].get.responses;
    doc.paths['/api/v1/run/'].post.requestBody.content = 'not an object';
    assert.equal((await validate(doc as unknown as Parameters<typeof validate>[0])).valid, false);
  });

  it('has one operation per route, with its summary, security, body and x-metered', () => {
    const doc = readDoc();
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
    assert.deepEqual(ops.sort(), routes.map((r) => `${r.method} ${r.path}`).sort());
    for (const r of routes) {
      const op = doc.paths[r.path][r.method.toLowerCase()];
      assert.equal(op.summary, r.summary);
      assert.deepEqual(op.security, r.auth ? [{ apiKey: [] }] : [], `${r.path}: security`);
      assert.deepEqual(op.requestBody?.content['application/json'].schema, r.body, `${r.path}: body`);
      assert.equal(op['x-metered'] === true, r.startsWork, `${r.path}: x-metered`);
      for (const q of r.query ?? []) assert.ok(op.parameters.some((p: { name: string; in: string }) => p.name === q.name && p.in === 'query'), `${r.path}: ?${q.name}`);
      if (r.path.includes('{id}')) assert.ok(op.parameters.some((p: { name: string; in: string }) => p.name === 'id' && p.in === 'path'), `${r.path}: {id}`);
    }
  });

  it("lists each route's statuses and, per error status, exactly the route's codes", () => {
    const doc = readDoc();
    for (const r of routes) {
      const responses = doc.paths[r.path][r.method.toLowerCase()].responses as Record<string, any>;
      for (const st of Object.keys(r.responses)) assert.ok(responses[st], `${r.method} ${r.path}: ${st}`);
      const statuses = new Set([...Object.keys(r.responses), ...r.errors.map((c) => String(statusOf(c)))]);
      assert.deepEqual(Object.keys(responses).sort(), [...statuses].sort(), `${r.method} ${r.path}`);
      for (const code of r.errors) {
        const res = responses[String(statusOf(code))];
        assert.ok(res.content['application/json'].schema.allOf[1].properties.code.enum.includes(code), `${r.path}: ${code}`);
        assert.match(res.description, new RegExp(`\`${code}\``));
      }
    }
  });

  it('every error code with an HTTP status is in the Error schema, and in some operation or the server-wide list', () => {
    const doc = readDoc();
    const withStatus = Object.entries(ERROR_CODES).filter(([, s]) => 'status' in s).map(([c]) => c);
    assert.ok(withStatus.length > 10);
    assert.deepEqual([...doc.components.schemas.Error.properties.code.enum].sort(), withStatus.sort());
    assert.deepEqual([...HTTP_ERROR_CODES].sort(), withStatus.sort());
    const inRoutes = new Set<string>(routes.flatMap((r) => r.errors));
    for (const code of withStatus) assert.ok(inRoutes.has(code) || doc.info.description.includes(`\`${code}\``), code);
    // Codes without a status (job, cli, fetcher) are no HTTP answer.
    for (const r of routes) for (const c of r.errors) assert.ok('status' in ERROR_CODES[c as ErrorCode], `${r.path}: ${c} has no HTTP status`);
  });

  it("resolves every tool's report schema, and declares the bearer key", () => {
    const doc = readDoc();
    for (const name of Object.values(TOOL_REPORTS)) {
      assert.equal(doc.components.schemas[name].type, 'object', name);
      assert.equal(doc.components.schemas[name].$id, undefined, `${name}: no $id inside components`);
    }
    const text = JSON.stringify(doc);
    for (const m of text.matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)) assert.ok(doc.components.schemas[m[1]!], m[1]);
    assert.deepEqual({ type: doc.components.securitySchemes.apiKey.type, scheme: doc.components.securitySchemes.apiKey.scheme }, { type: 'http', scheme: 'bearer' });
  });

  it('equals what scripts/openapi.ts builds now', () => {
    assert.deepEqual(readDoc(), JSON.parse(JSON.stringify(openApiDocument())));
  });
});

describe('the route table', () => {
  it('each body schema compiles as lambdas/http/middleware.ts compiles it (ajv strict)', () => {
    const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: false });
    for (const r of routes) if (r.body) assert.doesNotThrow(() => ajv.compile(r.body!), r.path);
    assert.ok(routes.filter((r) => r.body).length >= 12);
  });

  it('each answer schema compiles (ajv strict), tools\' by reference', () => {
    const ajv = new Ajv({ strict: true, allowUnionTypes: true });
    for (const r of routes) {
      for (const res of Object.values(r.responses)) {
        if (res.schema && !('$ref' in res.schema)) assert.doesNotThrow(() => ajv.compile(res.schema!), r.path);
        if (res.schema && '$ref' in res.schema) assert.ok(Object.values(TOOL_REPORTS).some((n) => res.schema!.$ref === `#/components/schemas/${n}`), r.path);
      }
    }
  });

  it('startsWork is set exactly on the routes whose handler meters (through core/metering.ts `meter`)', () => {
    const src = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');
    // The entry points that call meter(): checked here so that the list cannot silently go stale.
    const entries: Record<string, string> = { startToolCall: 'lambdas/core/tools.ts', runPageTool: 'lambdas/core/tools.ts', takeScreenshot: 'lambdas/core/screenshots.ts', startRun: 'lambdas/core/run-jobs.ts', startGenerate: 'lambdas/core/generate-jobs.ts' };
    for (const [fn, file] of Object.entries(entries)) {
      const body = src(file).split(new RegExp(`export async function ${fn}\\b`))[1]?.split(/\nexport /)[0] ?? '';
      assert.match(body, /\b(meter|startToolCall)\(/, `${fn} meters`);
    }
    const meters = new RegExp(`\\b(${Object.keys(entries).join('|')}|meter)\\(`);
    for (const r of routes) assert.equal(meters.test(src(`lambdas/${r.handler}`)), r.startsWork, `${r.handler}: startsWork`);
  });

  it("the broken-link checker's body bounds are the checker's own", () => {
    assert.equal(LINK_CHECK_BOUNDS.maxDepth, LINK_CHECK_DEFAULTS.maxDepth);
    assert.equal(LINK_CHECK_BOUNDS.maxMaxLinks, LINK_CHECK_DEFAULTS.maxMaxLinks);
  });

  it('no handler declares its own auth or body schema: apiHandler takes the route', () => {
    for (const r of routes) {
      const text = fs.readFileSync(path.join(root, 'lambdas', r.handler), 'utf8');
      assert.ok(text.includes(`apiHandler`) && text.includes(`route('${r.method}', '${r.path}')`), r.handler);
    }
  });
});
