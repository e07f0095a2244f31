/**
 * The MCP server's pure parts (lambdas/mcp/): paging rows within the answer's size bound, each route call's Lambda
 * context (its own deadline off Lambda), and the tool catalogue against the route table (every input schema compiles
 * with the routes' bounded validator; the analysis tools' output schemas are standalone).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Context } from 'aws-lambda';
import { Ajv } from 'ajv';
import { mcpTools, pageOfRows, MAX_ROWS_JSON_CHARS } from '../../lambdas/mcp/tools.ts';
import { callContext } from '../../lambdas/mcp/operations.ts';
import { bodyValidator } from '../../lambdas/http/middleware.ts';

describe('pageOfRows', () => {
  const rows = Array.from({ length: 10 }, (_, i) => ({ i, text: 'x'.repeat(100) }));

  it('gives limit rows from offset, whether more follow and where the next page starts', () => {
    assert.deepEqual(pageOfRows(rows, 0, 4).rows.map((r) => r.i), [0, 1, 2, 3]);
    assert.deepEqual(pageOfRows(rows, 8, 4), { rows: rows.slice(8), has_more: false, next_offset: null });
    assert.deepEqual(pageOfRows(rows, 4, 4).next_offset, 8);
    assert.deepEqual(pageOfRows(rows, 20, 4), { rows: [], has_more: false, next_offset: null });
  });

  it('stops before the rows\' JSON passes the bound, but always gives one row', () => {
    const size = JSON.stringify(rows[0]).length + 1;
    const page = pageOfRows(rows, 0, 10, size * 3 + 1);
    assert.deepEqual(page.rows.map((r) => r.i), [0, 1, 2]);
    assert.equal(page.next_offset, 3);
    const huge = [{ text: 'y'.repeat(MAX_ROWS_JSON_CHARS * 2) }, { text: 'z' }];
    assert.equal(pageOfRows(huge, 0, 10).rows.length, 1, 'a row larger than the bound is still given alone');
    assert.equal(pageOfRows(huge, 0, 10).next_offset, 1);
  });
});

describe('callContext', () => {
  const outer = { awsRequestId: 'outer', functionName: 'mcp', getRemainingTimeInMillis: () => 0, done() {}, fail() {}, succeed() {} } as unknown as Context;

  it('off Lambda: a context of its own with 29 s from the call, whatever is left of the MCP request\'s', () => {
    const c = callContext(outer, 'outer:1', false);
    assert.notEqual(c, outer);
    assert.equal(c.awsRequestId, 'outer:1');
    assert.ok(c.getRemainingTimeInMillis() > 28_000 && c.getRemainingTimeInMillis() <= 29_000);
    (c as Context & { svc?: unknown }).svc = 1;
    assert.equal((outer as Context & { svc?: unknown }).svc, undefined, 'what a route\'s middlewares set stays on its own context');
  });

  it('on Lambda: the function\'s own deadline', () => {
    assert.equal(callContext(outer, 'outer:2', true).getRemainingTimeInMillis(), 0);
  });
});

describe('the tool catalogue', () => {
  it('every input schema compiles with the routes\' bounded body validator and refuses an unknown field', () => {
    for (const t of mcpTools) {
      const check = bodyValidator(t.listing.inputSchema as Record<string, unknown>);
      const result = check({ not_a_field: 1 });
      assert.equal(result.ok, false, t.listing.name);
    }
  });

  it('output schemas are standalone JSON Schemas (their $refs resolve within them)', () => {
    const ajv = new Ajv({ strict: false, allowUnionTypes: true });
    const withOutput = mcpTools.filter((t) => t.listing.outputSchema);
    assert.ok(withOutput.length >= 9, `${withOutput.length} tools declare an output schema`);
    for (const t of withOutput) assert.doesNotThrow(() => ajv.compile(t.listing.outputSchema!), t.listing.name);
  });
});
