/**
 * The crawler's warnings (lambdas/engine/crawl/warnings.ts): each message once, at most 200, sorted by the request
 * they are about, warnings about no request last, ties in the order they were added.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WARNINGS, NO_REQUEST, Warnings } from '../../lambdas/engine/crawl/warnings.ts';

describe('crawl warnings', () => {
  it('keeps a message once, even with another seq', () => {
    const w = new Warnings();
    w.add('a', 3);
    w.add('a', 1);
    w.add('a');
    assert.deepEqual(w.list(), ['a']);
  });

  it('sorts by request seq; no seq sorts last; equal seqs keep their order', () => {
    const w = new Warnings();
    w.add('page limit');
    w.add('detail 5', 5);
    w.add('listing 2 first', 2);
    w.add('listing 2 second', 2);
    w.add('loader');
    w.add('index', 0);
    assert.deepEqual(w.list(), ['index', 'listing 2 first', 'listing 2 second', 'detail 5', 'page limit', 'loader']);
    assert.equal(NO_REQUEST, Number.MAX_SAFE_INTEGER);
  });

  it(`keeps at most ${MAX_WARNINGS}: later ones are dropped, not earlier ones`, () => {
    const w = new Warnings();
    for (let i = 0; i < MAX_WARNINGS + 50; i++) w.add(`w${i}`, MAX_WARNINGS + 50 - i);
    const list = w.list();
    assert.equal(list.length, MAX_WARNINGS);
    assert.ok(list.includes('w0'));
    assert.ok(!list.includes(`w${MAX_WARNINGS}`));
    // A repeat of a kept message is still refused once full.
    w.add('w0', 0);
    assert.equal(w.list().length, MAX_WARNINGS);
  });

  it('list() leaves the warnings as they are (called twice, same answer)', () => {
    const w = new Warnings();
    w.add('b', 2);
    w.add('a', 1);
    assert.deepEqual(w.list(), ['a', 'b']);
    w.add('c', 0);
    assert.deepEqual(w.list(), ['c', 'a', 'b']);
  });
});
