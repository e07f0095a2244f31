/**
 * The closed list of error codes (lambdas/errors.ts, docs/architecture.md "Errors"): which codes a failed job
 * can carry, which are HTTP answers and with which status, that the HTTP layer takes its statuses from
 * the list, and that no code is written in the source outside it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CodedError, ERROR_CODES, isCodedError, isErrorCode, type ErrorCodeSpec } from '../../lambdas/errors.ts';
import { errorResult, STATUS_BY_CODE } from '../../lambdas/http/middleware.ts';

const root = path.resolve(import.meta.dirname, '../..');
const list = ERROR_CODES as Record<string, ErrorCodeSpec>;
const codesWhere = (place: string) => Object.keys(list).filter((c) => list[c]!.where.includes(place as never)).sort();

/** Every .ts file under a folder of the repository. */
function sources(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(root, dir, f));
}

describe('ERROR_CODES', () => {
  it('job-level codes are exactly those a run or a generation can end with', () => {
    assert.deepEqual(codesWhere('job'), [
      'action_failed', 'api_no_records', 'api_not_json', 'api_query_limit', 'blocked', 'browser_crashed', 'browser_required', 'dns_failed', 'generation_failed', 'internal_error', 'invalid_config',
      'job_timeout', 'page_crashed', 'page_unsettled', 'response_too_large', 'robots_disallowed', 'target_failed', 'target_forbidden', 'worker_lost',
    ]);
  });

  it('fetch_failed is the fetcher\'s own code, not a job-level one', () => {
    assert.deepEqual(list.fetch_failed!.where, ['fetcher']);
  });

  it('a code has an HTTP status exactly when it can be an HTTP answer, and statuses are 4xx or 5xx', () => {
    for (const [code, spec] of Object.entries(list)) {
      assert.equal(spec.status !== undefined, spec.where.includes('http'), code);
      if (spec.status !== undefined) assert.ok(spec.status >= 400 && spec.status <= 599, code);
      assert.ok(spec.where.length > 0, `${code} arises somewhere`);
      assert.match(code, /^[a-z]+(?:_[a-z]+)*$/, 'codes are snake_case');
      assert.ok(spec.description.length > 10, `${code} is described`);
    }
  });

  it('statuses follow docs/spec.md: 400 bad data, 401 bad key or login, 404 missing, 429 limits, 500 server error', () => {
    const status = (c: string) => list[c]!.status;
    for (const c of ['invalid_request', 'invalid_json', 'invalid_config', 'browser_required', 'target_forbidden']) assert.equal(status(c), 400, c);
    for (const c of ['unauthorized', 'invalid_credentials']) assert.equal(status(c), 401, c);
    assert.equal(status('not_found'), 404);
    for (const c of ['rate_limited', 'quota_exceeded']) assert.equal(status(c), 429, c);
    assert.equal(status('internal_error'), 500);
  });
});

describe('the HTTP layer takes statuses from the list', () => {
  it('STATUS_BY_CODE has exactly the codes with a status, with that status', () => {
    assert.deepEqual(Object.keys(STATUS_BY_CODE).sort(), codesWhere('http'));
    for (const c of codesWhere('http')) assert.equal(STATUS_BY_CODE[c as keyof typeof STATUS_BY_CODE], list[c]!.status, c);
  });

  it('an unknown plan is a 403, not a 500', () => {
    const r = errorResult('plan_unknown', 'The account\'s plan "gold" is not offered by this service');
    assert.equal(r.statusCode, 403);
    assert.deepEqual(JSON.parse(r.body), { error: 'The account\'s plan "gold" is not offered by this service', code: 'plan_unknown', details: [] });
  });

  it('a job-level code that reaches a handler is a programming error: 500', () => {
    assert.equal(errorResult('target_failed', 'x').statusCode, 500);
  });
});

describe('isCodedError', () => {
  it('accepts a CodedError and its plain copy from another thread, refuses codes outside the list', () => {
    const err = new CodedError('job_timeout', 'too slow');
    assert.ok(isCodedError(err));
    assert.ok(isCodedError(structuredClone({ code: err.code, message: err.message, details: err.details })));
    assert.equal(isCodedError({ code: 'ECONNRESET', details: [] }), false);
    assert.equal(isCodedError({ code: 'job_timeout' }), false, 'details are part of the shape');
    assert.equal(isErrorCode('toString'), false, 'inherited names are not codes');
  });
});

describe('codes in the source', () => {
  const files = [...sources('lambdas'), ...sources('bin')];

  it('every code a status_message is built with is a job-level code of the list', () => {
    const found = new Set<string>();
    for (const f of files) {
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/status_message: `([a-z_]+): /g)) found.add(m[1]!);
    }
    assert.ok(found.size > 0, 'the scan finds the status_message templates');
    for (const code of found) assert.ok(list[code]?.where.includes('job'), `${code} is not a job-level code of ERROR_CODES`);
  });

  it('every code passed as a string literal to an error constructor is in the list', () => {
    const found = new Set<string>();
    for (const f of files) {
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/(?:CodedError|FetchError|errorResult)\(\s*'([a-z_]+)'/g)) found.add(m[1]!);
    }
    assert.ok(found.size > 10, 'the scan finds the throw sites');
    for (const code of found) assert.ok(isErrorCode(code), code);
  });
});
