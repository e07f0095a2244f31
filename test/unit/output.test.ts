/**
 * `output` (lambdas/engine/output.ts): deduplication by whole row or by `deduplicate_fields`, with object key order
 * not counting, and rows nested deeper than the stack allows (a hostile page) deduplicated, not a crash.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeRows } from '../../lambdas/engine/output.ts';

describe('finalizeRows', () => {
  it('keeps the first of equal rows; key order does not count, array order and types do', () => {
    const rows = [
      { a: 1, b: { x: 1, y: [1, 2] } },
      { b: { y: [1, 2], x: 1 }, a: 1 },
      { a: 1, b: { x: 1, y: [2, 1] } },
      { a: '1', b: { x: 1, y: [1, 2] } },
    ];
    assert.deepEqual(finalizeRows(rows, { deduplicate: true } as never), [rows[0], rows[2], rows[3]]);
  });

  it('by deduplicate_fields: a missing field is null; then limit', () => {
    const rows = [{ url: '/a', t: 1 }, { url: '/a', t: 2 }, { t: 3 }, { url: null, t: 4 }, { url: '/b', t: 5 }];
    assert.deepEqual(finalizeRows(rows, { deduplicate: true, deduplicate_fields: ['url'] } as never).map((r) => r.t), [1, 3, 5]);
    assert.deepEqual(finalizeRows(rows, { deduplicate: true, deduplicate_fields: ['url'], limit: 2 } as never).map((r) => r.t), [1, 3]);
  });

  it('rows 20,000 levels deep are compared, not a stack overflow', () => {
    const deep = (leaf: number) => {
      let v: unknown = leaf;
      for (let i = 0; i < 20_000; i++) v = i % 2 ? [v] : { k: v };
      return v;
    };
    const rows = [{ d: deep(1) }, { d: deep(1) }, { d: deep(2) }];
    assert.equal(finalizeRows(rows, { deduplicate: true } as never).length, 2);
  });
});
