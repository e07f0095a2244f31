/** Changes between two runs of a config (issue 26): compareRows, keyed on deduplicate_fields and on all values. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { compareRows, type Row } from '../../lambdas/core/row-changes.ts';
import { prng } from '../fixtures/html/tag-soup.ts'; // mulberry32

/** Freezes a value and everything in it, so that any write by the code under test throws (ES modules are strict). */
function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) stack.push(child);
  }
  return value;
}

/** A value nested `levels` deep: arrays, or objects `{a: …}` when `objects`; `leaf` at the bottom. */
function nested(levels: number, leaf: unknown, objects = false): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = objects ? { a: v, b: i } : [v, i];
  return v;
}

describe('compareRows, keyed on deduplicate_fields', () => {
  it('finds added, removed and changed rows, with the changed fields old and new values', () => {
    const previous = [
      { url: 'https://x.test/1', title: 'One', price: 10 },
      { url: 'https://x.test/2', title: 'Two', price: 20 },
      { url: 'https://x.test/3', title: 'Three', price: 30 },
    ];
    const current = [
      { url: 'https://x.test/4', title: 'Four', price: 40 },
      { url: 'https://x.test/3', title: 'Three', price: 35 },
      { url: 'https://x.test/1', title: 'One', price: 10 },
    ];
    const r = compareRows(previous, current, ['url']);
    assert.deepEqual(r.key_fields, ['url']);
    assert.equal(r.added.length, 1);
    assert.equal(r.added[0], current[0], 'the input row itself, not a copy');
    assert.deepEqual(r.removed, [previous[1]]);
    assert.equal(r.removed[0], previous[1]);
    assert.deepEqual(r.changed, [{ key: { url: 'https://x.test/3' }, fields: { price: { old: 30, new: 35 } }, row: current[1] }]);
    assert.equal(r.changed[0]!.row, current[1]);
  });

  it('a field on one side only reads as null there: null and missing are the same, a value against missing is a change', () => {
    const previous = [
      { url: 'a', gone: 'x', nulled: null },
      { url: 'b', same: null },
    ];
    const current = [
      { url: 'a', fresh: 1, nulled: undefined },
      { url: 'b' },
    ];
    const r = compareRows(previous, current, ['url']);
    assert.deepEqual(r.added, []);
    assert.deepEqual(r.removed, []);
    assert.equal(r.changed.length, 1);
    assert.deepEqual(r.changed[0]!.fields, { fresh: { old: null, new: 1 }, gone: { old: 'x', new: null } });
    assert.deepEqual(Object.keys(r.changed[0]!.fields), ['fresh', 'gone'], "the current row's fields first, then the previous row's own");
  });

  it('rows missing a key field have null there: they match a row whose key field is null, in order', () => {
    const previous = [{ title: 'no url 1' }, { url: null, title: 'null url' }, { url: 'u', title: 'has url' }];
    const current = [{ url: null, title: 'no url 1' }, { url: 'u', title: 'has url' }];
    const r = compareRows(previous, current, ['url']);
    assert.deepEqual(r.changed, [], 'the first keyless row of each run match, and are equal (null = missing)');
    assert.deepEqual(r.added, []);
    assert.deepEqual(r.removed, [previous[1]]);
    const r2 = compareRows([{ url: 'u' }], [{ title: 'no url' }], ['url']);
    assert.deepEqual(r2.added, [{ title: 'no url' }]);
    assert.deepEqual(r2.removed, [{ url: 'u' }]);
  });

  it('a key of several fields is the tuple of their values (strings with commas do not run into the next field)', () => {
    const previous = [
      { site: 'a', id: 1, v: 'p' },
      { site: 'a,1', v: 'q' },
      { site: 'a', id: '1', v: 'r' },
    ];
    const current = [
      { site: 'a', id: 1, v: 'P' },
      { id: null, site: 'a,1', v: 'q' },
      { site: 'a', id: 2, v: 'r' },
    ];
    const r = compareRows(previous, current, ['site', 'id']);
    assert.deepEqual(r.changed, [{ key: { site: 'a', id: 1 }, fields: { v: { old: 'p', new: 'P' } }, row: current[0] }]);
    assert.deepEqual(r.added, [current[2]]);
    assert.deepEqual(r.removed, [previous[2]], 'id "1" is not id 1');
  });

  it('duplicate keys match as a multiset, the i-th occurrence before with the i-th now', () => {
    const previous = [
      { url: 'u', v: 1 },
      { url: 'w', v: 9 },
      { url: 'u', v: 2 },
      { url: 'u', v: 3 },
    ];
    const current = [
      { url: 'u', v: 2 },
      { url: 'u', v: 2 },
      { url: 'w', v: 9 },
    ];
    const r = compareRows(previous, current, ['url']);
    // Occurrences pair up in order (not by best fit): u1↔v:2 (changed), u2↔v:2 (same), u3 is removed.
    assert.deepEqual(r.changed, [{ key: { url: 'u' }, fields: { v: { old: 1, new: 2 } }, row: current[0] }]);
    assert.deepEqual(r.removed, [previous[3]]);
    assert.equal(r.removed[0], previous[3]);
    assert.deepEqual(r.added, []);
    const more = compareRows([{ url: 'u', v: 1 }], [{ url: 'u', v: 1 }, { url: 'u', v: 2 }, { url: 'u', v: 3 }], ['url']);
    assert.deepEqual(more.added, [{ url: 'u', v: 2 }, { url: 'u', v: 3 }], 'the later occurrences now are added');
    assert.deepEqual(more.changed, []);
  });

  it('equality is deep: object key order does not count, array order does, 1 is not "1"', () => {
    const previous = [
      { url: 'a', spec: { w: 1, h: 2, tags: ['x', 'y'] } },
      { url: 'b', list: [1, 2, 3] },
      { url: 'c', n: 1 },
      { url: 'd', flag: true, nothing: null },
    ];
    const current = [
      { spec: { tags: ['x', 'y'], h: 2, w: 1 }, url: 'a' },
      { url: 'b', list: [3, 2, 1] },
      { url: 'c', n: '1' },
      { url: 'd', flag: 'true', nothing: 'null' },
    ];
    const r = compareRows(previous, current, ['url']);
    assert.deepEqual(
      r.changed.map((c) => [c.key, c.fields]),
      [
        [{ url: 'b' }, { list: { old: [1, 2, 3], new: [3, 2, 1] } }],
        [{ url: 'c' }, { n: { old: 1, new: '1' } }],
        [{ url: 'd' }, { flag: { old: true, new: 'true' }, nothing: { old: null, new: 'null' } }],
      ],
    );
  });

  it('a change deep inside a nested value reports the whole field, old and new', () => {
    const previous = [{ url: 'a', offers: [{ seller: { name: 'S', rating: 4.5 }, price: { amount: 10, currency: 'EUR' } }] }];
    const current = [{ url: 'a', offers: [{ price: { currency: 'EUR', amount: 10 }, seller: { rating: 4.6, name: 'S' } }] }];
    const r = compareRows(previous, current, ['url']);
    assert.equal(r.changed.length, 1);
    assert.deepEqual(Object.keys(r.changed[0]!.fields), ['offers']);
    assert.equal(r.changed[0]!.fields.offers!.old, previous[0]!.offers, "the rows' own values");
    assert.equal(r.changed[0]!.fields.offers!.new, current[0]!.offers);
    const same = compareRows(previous, [{ url: 'a', offers: [{ price: { currency: 'EUR', amount: 10 }, seller: { rating: 4.5, name: 'S' } }] }], ['url']);
    assert.deepEqual(same.changed, []);
  });

  it('numbers: NaN equals NaN, -0 equals 0; undefined inside an object is absent and inside an array null, as in JSON', () => {
    // eslint-disable-next-line no-sparse-arrays
    const before = { url: 'a', n: NaN, z: 0, o: { p: 1, q: undefined }, arr: [undefined, , 1] };
    const now = { url: 'a', o: { p: 1 }, z: -0, n: NaN, arr: [null, null, 1] };
    assert.deepEqual(compareRows([before], [now], ['url']).changed, []);
    assert.deepEqual(compareRows([before], [now]), { added: [], removed: [], changed: [], key_fields: null }, 'on all values too');
    assert.equal(compareRows([{ url: 'a', n: NaN }], [{ url: 'a', n: null }], ['url']).changed.length, 1, 'NaN is not null');
    assert.equal(compareRows([{ n: NaN }], [{ n: null }]).added.length, 1);
    assert.equal(compareRows([{ url: 'a', n: Infinity }], [{ url: 'a', n: -Infinity }], ['url']).changed.length, 1);
    assert.equal(compareRows([{ o: { p: null } }], [{ o: {} }]).added.length, 1, 'a null inside an object is a value, unlike a null field');
  });

  it('the same value is the same whatever the key order at each place, integer-like keys included, and whether JSON can write it', () => {
    // Objects at different places with the same keys in different orders; "2" and "10" sort differently as text and as numbers.
    const first = { url: 'a', spec: { x: 1, y: { a: 1, b: 2 }, 10: 'ten', 2: 'two' }, list: [{ b: 1, a: 2 }, { a: 3, b: 4 }], n: NaN };
    const second = { n: NaN, list: [{ a: 2, b: 1 }, { b: 4, a: 3 }], spec: { 2: 'two', y: { b: 2, a: 1 }, 10: 'ten', x: 1 }, url: 'a' };
    const withoutNaN = (r: Row) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'n'));
    for (const [p, c] of [[first, second], [second, first], [withoutNaN(first), withoutNaN(second)]] as const) {
      assert.deepEqual(compareRows([p], [c]).added, []);
      assert.deepEqual(compareRows([p, c], [c, p]).added, []);
      assert.deepEqual(compareRows([p], [c], ['url']).changed, []);
      assert.deepEqual(compareRows([{ k: p }], [{ k: c }], ['k']).added, [], 'as a key');
    }
    // Past the depth JSON.stringify is given (64 levels), with the key order swapped at every level.
    const deep = (levels: number, swap: boolean, leaf: unknown): unknown => {
      let v = leaf;
      for (let i = 0; i < levels; i++) v = swap ? { b: i, a: v } : { a: v, b: i };
      return v;
    };
    for (const levels of [63, 64, 65, 70, 200]) {
      assert.deepEqual(compareRows([{ v: deep(levels, false, 'x') }], [{ v: deep(levels, true, 'x') }]).added, [], `${levels} levels`);
      assert.equal(compareRows([{ v: deep(levels, false, 'x') }], [{ v: deep(levels, true, 'y') }]).added.length, 1, `${levels} levels`);
      assert.deepEqual(compareRows([{ u: 1, v: deep(levels, false, 'x') }], [{ u: 1, v: deep(levels, true, 'x') }], ['u']).changed, []);
      assert.equal(compareRows([{ u: 1, v: deep(levels, false, 'x') }], [{ u: 1, v: deep(levels, true, 'y') }], ['u']).changed.length, 1);
      assert.equal(compareRows([{ v: deep(levels, false, { 'a:1,b': 2 }) }], [{ v: deep(levels, false, { a: 1, b: 2 }) }]).added.length, 1, 'keys are quoted');
      assert.equal(compareRows([{ v: deep(levels, false, ['1']) }], [{ v: deep(levels, false, [1]) }]).added.length, 1, '"1" is not 1');
    }
  });

  it('an empty key list matches on all values, like none', () => {
    const r = compareRows([{ url: 'a', v: 1 }], [{ url: 'a', v: 2 }], []);
    assert.equal(r.key_fields, null);
    assert.deepEqual(r.changed, []);
    assert.deepEqual(r.added, [{ url: 'a', v: 2 }]);
    assert.deepEqual(r.removed, [{ url: 'a', v: 1 }]);
  });

  it('field names of Object.prototype are only own fields; a __proto__ field is an ordinary field', () => {
    const previous = [JSON.parse('{"__proto__": {"x": 1}, "url": "a"}') as Row];
    const current = [JSON.parse('{"__proto__": {"x": 2}, "url": "a"}') as Row];
    const r = compareRows(previous, current, ['url']);
    assert.equal(r.changed.length, 1);
    assert.ok(Object.hasOwn(r.changed[0]!.fields, '__proto__'));
    assert.deepEqual(Object.getOwnPropertyDescriptor(r.changed[0]!.fields, '__proto__')!.value, { old: { x: 1 }, new: { x: 2 } });
    assert.equal(Object.getPrototypeOf(r.changed[0]!.fields), Object.prototype);
    // A key field named after an inherited property reads as null on rows that lack it.
    const c = compareRows([{ v: 1 }], [{ v: 2 }], ['constructor']);
    assert.deepEqual(c.changed, [{ key: { constructor: null }, fields: { v: { old: 1, new: 2 } }, row: { v: 2 } }]);
  });
});

describe('compareRows, on all values', () => {
  it('is a multiset difference: duplicates count, the earliest copies match first', () => {
    const r0 = { a: 1 };
    const previous = [r0, { a: 1 }, { b: 2 }, { a: 1 }];
    const current = [{ b: 2 }, { a: 1 }, { c: 3 }];
    const r = compareRows(previous, current);
    assert.equal(r.key_fields, null);
    assert.deepEqual(r.changed, []);
    assert.deepEqual(r.added, [{ c: 3 }]);
    assert.equal(r.added[0], current[2]);
    assert.equal(r.removed.length, 2);
    assert.equal(r.removed[0], previous[1], 'in the previous order, after the matched first copy');
    assert.equal(r.removed[1], previous[3]);
    const grown = compareRows([{ a: 1 }], [{ a: 1 }, { a: 1 }], null);
    assert.deepEqual([grown.added, grown.removed], [[{ a: 1 }], []]);
  });

  it('reordering rows or object keys is not a change; reordering an array is', () => {
    const previous = [{ a: 1, b: { x: 1, y: [1, 2] } }, { a: 2 }, { a: 3 }];
    const current = [{ a: 3 }, { b: { y: [1, 2], x: 1 }, a: 1 }, { a: 2 }];
    assert.deepEqual(compareRows(previous, current), { added: [], removed: [], changed: [], key_fields: null });
    const swapped = compareRows([{ y: [1, 2] }], [{ y: [2, 1] }]);
    assert.deepEqual([swapped.added, swapped.removed], [[{ y: [2, 1] }], [{ y: [1, 2] }]]);
  });

  it('1 and "1" differ; a null field is the same as a missing one', () => {
    const r = compareRows([{ a: 1 }, { b: null, c: 'x' }], [{ a: '1' }, { c: 'x' }]);
    assert.deepEqual(r.added, [{ a: '1' }]);
    assert.deepEqual(r.removed, [{ a: 1 }]);
  });
});

describe('compareRows, edges', () => {
  it('both runs empty: nothing changed', () => {
    assert.deepEqual(compareRows([], [], ['url']), { added: [], removed: [], changed: [], key_fields: ['url'] });
    assert.deepEqual(compareRows([], []), { added: [], removed: [], changed: [], key_fields: null });
  });

  it('a first run (no previous rows) is all added, in order; an empty current run is all removed, in order', () => {
    const rows = [{ url: 'b' }, { url: 'a' }, { url: 'b' }];
    for (const key of [['url'], null]) {
      const first = compareRows([], rows, key);
      assert.deepEqual(first.added, rows);
      first.added.forEach((row, i) => assert.equal(row, rows[i]));
      assert.deepEqual([first.removed, first.changed], [[], []]);
      const gone = compareRows(rows, [], key);
      assert.deepEqual(gone.removed, rows);
      assert.deepEqual([gone.added, gone.changed], [[], []]);
    }
  });

  it('outputs keep the specified orders: added and changed as now, removed as before', () => {
    const previous = [{ k: 'r1' }, { k: 'c1', v: 0 }, { k: 'r2' }, { k: 'c2', v: 0 }, { k: 'r3' }];
    const current = [{ k: 'c2', v: 1 }, { k: 'a1' }, { k: 'c1', v: 1 }, { k: 'a2' }];
    const r = compareRows(previous, current, ['k']);
    assert.deepEqual(r.added.map((x) => x.k), ['a1', 'a2']);
    assert.deepEqual(r.removed.map((x) => x.k), ['r1', 'r2', 'r3']);
    assert.deepEqual(r.changed.map((x) => x.key.k), ['c2', 'c1']);
  });

  it('a value 10,000 levels deep neither throws nor overflows the stack, and is compared exactly', () => {
    for (const objects of [false, true]) {
      const deepA = nested(10_000, 'leaf', objects);
      const deepB = nested(10_000, 'leaf', objects); // equal, another object
      const deepC = nested(10_000, 'other', objects); // differs at the bottom only
      const keyed = compareRows([{ url: 'a', v: deepA }, { url: 'b', v: deepA }], [{ url: 'a', v: deepB }, { url: 'b', v: deepC }], ['url']);
      assert.deepEqual(keyed.changed.map((c) => c.key), [{ url: 'b' }]);
      assert.equal(keyed.changed[0]!.fields.v!.new, deepC);
      const all = compareRows([{ v: deepA }, { v: deepA }], [{ v: deepC }, { v: deepB }]);
      assert.equal(all.added.length, 1);
      assert.equal(all.added[0]!.v, deepC);
      assert.equal(all.removed.length, 1);
      // A deep value as the key itself.
      const byDeepKey = compareRows([{ k: deepA, n: 1 }], [{ k: deepB, n: 2 }], ['k']);
      assert.equal(byDeepKey.changed.length, 1);
    }
  });

  it('a value that refers to itself, when it has to be read through, is refused with a TypeError, not a hang or a stack overflow', () => {
    const loop = () => {
      const v: Record<string, unknown> = { a: 1 };
      v.self = v;
      return v;
    };
    assert.throws(() => compareRows([{ v: loop() }], []), TypeError);
    assert.throws(() => compareRows([{ url: 'a', v: loop() }], [{ url: 'a', v: loop() }], ['url']), TypeError, 'two loops of the same shape');
    assert.throws(() => compareRows([{ url: loop() }], [], ['url']), TypeError, 'as a key');
    // A pair that differs before the loop is reached needs no more reading.
    assert.equal(compareRows([{ url: 'a', v: loop() }], [{ url: 'a', v: { a: 2 } }], ['url']).changed.length, 1);
  });

  it('does not change its inputs', () => {
    const previous = [{ url: 'a', v: { x: [1, { y: 2 }] } }, { url: 'b', v: 1 }, { url: 'b', v: 1 }, { title: 'no url' }];
    const current = [{ url: 'b', v: 2 }, { url: 'c', v: { x: [1] } }, { url: 'a', v: { x: [1, { y: 3 }] } }];
    const keys = ['url'];
    const snapshot = structuredClone({ previous, current, keys });
    deepFreeze(previous);
    deepFreeze(current);
    deepFreeze(keys);
    const keyed = compareRows(previous, current, keys);
    const all = compareRows(previous, current);
    assert.deepEqual({ previous, current, keys }, snapshot);
    assert.notEqual(keyed.key_fields, keys, 'key_fields is a copy');
    assert.equal(keyed.changed.length, 2);
    assert.equal(all.added.length, 3);
  });
});

describe('compareRows, property: applying the changes to the previous run gives the current run', () => {
  const FIELDS = ['url', 'a', 'b', 'c', 'd', '7'];

  function gen(rand: () => number) {
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const shuffle = <T>(xs: T[]): T[] => {
      for (let i = xs.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [xs[i], xs[j]] = [xs[j]!, xs[i]!];
      }
      return xs;
    };
    // A small value space, so that equal values, near misses (1 vs "1") and duplicates are frequent.
    const value = (depth: number): unknown => {
      const r = rand();
      if (depth < 2 && r < 0.12) return Array.from({ length: Math.floor(rand() * 3) }, () => value(depth + 1));
      if (depth < 2 && r < 0.24) {
        const o: Record<string, unknown> = {};
        for (const k of shuffle(['x', 'y', 'z', '1', '10']).slice(0, Math.floor(rand() * 4))) o[k] = value(depth + 1);
        return o;
      }
      if (depth === 0 && r < 0.26) {
        // Past JSON.stringify's 64 levels (the slow serialiser's ground).
        let v: unknown = pick([1, 'x']);
        for (let i = 60 + Math.floor(rand() * 10); i > 0; i--) v = rand() < 0.5 ? [v] : { x: v, y: pick([1, 2]) };
        return v;
      }
      return pick([0, 1, 2, '0', '1', '2', true, false, null, 'x', NaN]);
    };
    const row = (): Row => {
      const out: Row = {};
      for (const f of shuffle([...FIELDS])) {
        if (f === 'url' ? rand() < 0.85 : rand() < 0.6) out[f] = f === 'url' ? pick(['u0', 'u1', 'u2', 'u3', 'u4', 1, '1', null]) : value(0);
      }
      return out;
    };
    /** A deep copy with every object's keys in a new random order (the same row to compareRows). */
    const reorder = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(reorder);
      if (typeof v !== 'object' || v === null) return v;
      const o: Record<string, unknown> = {};
      for (const k of shuffle(Object.keys(v))) o[k] = reorder((v as Record<string, unknown>)[k]);
      return o;
    };
    return { rand, pick, shuffle, value, row, reorder };
  }

  /** The test's own equality of rows: a top-level null field is a missing one, then deep strict equality (key order free). */
  const normal = (row: Row): Row => Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null && v !== undefined));
  const sameRow = (x: Row, y: Row) => isDeepStrictEqual(normal(x), normal(y));
  const own = (row: Row, f: string) => (Object.hasOwn(row, f) && row[f] !== undefined ? row[f] : null);
  const sameKey = (x: Row, y: Row, keys: readonly string[]) => keys.every((f) => isDeepStrictEqual(own(x, f), own(y, f)));

  function assertSameMultiset(actual: Row[], expected: readonly Row[], what: string): void {
    const left = [...expected];
    for (const row of actual) {
      const i = left.findIndex((e) => sameRow(e, row));
      assert.ok(i >= 0, `${what}: ${JSON.stringify(row)} is not among the current rows left`);
      left.splice(i, 1);
    }
    assert.deepEqual(left, [], `${what}: current rows not produced`);
  }

  /** Indices in `among` (by identity) of `rows`, checking each is there once and that they are in increasing order. */
  function positions(rows: readonly Row[], among: readonly Row[], what: string): number[] {
    const at = rows.map((r) => among.indexOf(r));
    assert.ok(at.every((i) => i >= 0), `${what}: rows are the input objects`);
    assert.ok(at.every((i, n) => n === 0 || i > at[n - 1]!), `${what}: in input order, each once`);
    return at;
  }

  it('holds on 400 random pairs of runs, keyed and on all values', () => {
    const rand = prng(0x26);
    for (let n = 0; n < 400; n++) {
      const g = gen(rand);
      const previous = Array.from({ length: Math.floor(rand() * 12) }, g.row);
      for (let d = Math.floor(rand() * 3); d > 0 && previous.length; d--) previous.push(g.reorder(g.pick(previous)) as Row); // duplicates
      const current: Row[] = [];
      for (const row of previous) {
        const r = rand();
        if (r < 0.2) continue; // removed
        const copy = g.reorder(row) as Row;
        if (r < 0.45) {
          const f = g.pick(FIELDS);
          if (rand() < 0.3) delete copy[f];
          else copy[f] = g.value(0);
        }
        current.push(copy);
      }
      for (let a = Math.floor(rand() * 4); a > 0; a--) current.push(g.row());
      g.shuffle(current);
      const keys = g.pick([['url'], ['url', 'a'], ['b']]);
      const ctx = (mode: string) => `case ${n} (${mode}): ${JSON.stringify({ previous, current, keys })}`;

      // Keyed.
      const k = compareRows(previous, current, keys);
      assert.deepEqual(k.key_fields, keys);
      const addedAt = positions(k.added, current, ctx('keyed, added'));
      positions(k.removed, previous, ctx('keyed, removed'));
      const changedAt = positions(k.changed.map((c) => c.row), current, ctx('keyed, changed'));
      assert.ok(!addedAt.some((i) => changedAt.includes(i)), ctx('keyed: a row is added or changed, not both'));
      for (const a of k.added) assert.ok(!k.removed.some((r) => sameKey(a, r, keys)), ctx('keyed: an added row has no removed row of its key'));
      const applied = previous.filter((r) => !k.removed.includes(r)).map((r) => ({ ...r }) as Row);
      const partners = new Set<number>();
      for (const c of k.changed) {
        // The spec's rule: the i-th row of a key now pairs with the i-th row of that key before.
        const j = current.indexOf(c.row);
        const occurrence = current.slice(0, j).filter((r) => sameKey(r, c.row, keys)).length;
        const before = previous.filter((r) => sameKey(r, c.row, keys));
        const partner = before[occurrence];
        assert.ok(partner && !k.removed.includes(partner), ctx('keyed: a changed row has its partner before'));
        assert.deepEqual(c.key, Object.fromEntries(keys.map((f) => [f, own(c.row, f)])), ctx('keyed: key'));
        const union = new Set([...Object.keys(partner), ...Object.keys(c.row)]);
        const differing = [...union].filter((f) => !isDeepStrictEqual(own(partner, f), own(c.row, f)));
        assert.deepEqual(Object.keys(c.fields).sort(), differing.sort(), ctx('keyed: exactly the differing fields'));
        for (const [f, { old, new: now }] of Object.entries(c.fields)) {
          assert.deepEqual([old, now], [own(partner, f), own(c.row, f)], ctx(`keyed: old and new of ${f}`));
        }
        const at = previous.filter((r) => !k.removed.includes(r)).indexOf(partner);
        assert.ok(!partners.has(at), ctx('keyed: one changed row per partner'));
        partners.add(at);
        for (const [f, { new: now }] of Object.entries(c.fields)) applied[at]![f] = now;
      }
      assertSameMultiset([...applied, ...k.added], current, ctx('keyed'));

      // On all values.
      const u = compareRows(previous, current);
      assert.equal(u.key_fields, null);
      assert.deepEqual(u.changed, []);
      positions(u.added, current, ctx('unkeyed, added'));
      positions(u.removed, previous, ctx('unkeyed, removed'));
      for (const a of u.added) assert.ok(!u.removed.some((r) => sameRow(a, r)), ctx('unkeyed: an added row equals no removed row'));
      assertSameMultiset([...previous.filter((r) => !u.removed.includes(r)), ...u.added], current, ctx('unkeyed'));
    }
  });
});
