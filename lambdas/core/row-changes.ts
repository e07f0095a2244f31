/**
 * Changes between two runs of a config (issue 26): the rows added, removed and changed in a completed run
 * against the config's previous completed run. Pure functions; the job executor and the API call them.
 *
 * Rows are matched on the config's `output.deduplicate_fields` when it names them (keyed), else on all their
 * values (unkeyed). Values are compared as JSON values: deep equality where object key order does not count
 * and array order does, `1` and `"1"` differ, `-0` equals `0`, `NaN` equals `NaN`; `undefined` reads as `null`
 * in an array and as absent in an object (as JSON.stringify writes them); a row's own field that is `null` or
 * `undefined` is the same as a missing field (a field missing on one side reads as null).
 *
 * Linear time: each row (unkeyed) or key (keyed) is written once to a canonical text, and rows are matched
 * through a Map from that text to a chain of row indices; a matched pair (keyed) is compared field by field in
 * place. The text is JSON.stringify's (native: fast to write, flat to hash) of the row as it is, when each of its
 * objects has its keys in the order first seen at its place in the rows of this comparison (the rows of one
 * config nearly always do), else of a copy of the objects that do not, rebuilt in that order (see Slot). A
 * value JSON cannot write (NaN, Infinity, a bigint) or a container 64 levels down goes to a slow serialiser of
 * the same meaning. Rows come from hostile pages, so no value's depth can overflow the stack: the copy, the
 * comparison and the slow serialiser recurse for at most {@link MAX_RECURSION} levels, and the slow serialiser
 * continues below them with an explicit stack (V8's JSON.stringify itself throws a RangeError on a value about
 * 10,000 levels deep, so it cannot be the fallback).
 */

/** One row of a run's result: field name to value (strings, numbers, booleans, null, arrays, plain objects). */
export type Row = Record<string, unknown>;

/** One row present in both runs under the same key whose other values differ. */
export interface ChangedRow {
  /**
   * The key fields' values (keyed comparison), e.g. `{url: "https://…"}`, read from the current run's row (equal
   * to the previous row's by the match); a missing key field reads as null.
   */
  key: Record<string, unknown>;
  /**
   * Each field whose value differs (fields of either row; a field missing on one side reads as null): the
   * current row's fields first, in its key order, then those only the previous row has. `old` and `new` are the
   * rows' own values (not copies), or null for a missing field.
   */
  fields: Record<string, { old: unknown; new: unknown }>;
  /** The row in the current run (the input object itself). */
  row: Row;
}

/** What changed from the previous run to the current one. Rows are the input objects themselves, not copies. */
export interface RowChanges {
  /** Rows of the current run that match no row of the previous run, in the current run's order. */
  added: Row[];
  /** Rows of the previous run that match no row of the current run, in the previous run's order. */
  removed: Row[];
  /** Matched rows whose values differ, in the current run's order; always empty when {@link key_fields} is null. */
  changed: ChangedRow[];
  /** The fields rows were matched on, or null when matched on all values. */
  key_fields: string[] | null;
}

/** Levels of a value handled by recursion (copying, comparing, serialising); below them an explicit stack takes over. */
const MAX_RECURSION = 64;

/**
 * Compares the rows of two runs of one config.
 *
 * With `keyFields` (non-empty): a row's key is the tuple of those fields' values (a missing field is null). Rows
 * are matched by key as multisets: the i-th row with a key in `previous` matches the i-th row with that key in
 * `current`; unmatched rows are added or removed. A matched pair is changed when any field of either row
 * differs (module comment for what equal means).
 *
 * Without (`null`, `undefined` or `[]`): two rows are the same row when all their values are equal, as
 * multisets (a row twice before and once now: one removed); the order of rows is not a change, and `changed` is
 * empty.
 *
 * O(n) in the total size of the rows, plus sorting the keys of the objects whose keys are not in their place's
 * usual order (module comment). The inputs are not changed.
 * @param previous the previous completed run's rows.
 * @param current the current run's rows.
 * @param keyFields the config's `output.deduplicate_fields`, if any.
 * @throws TypeError when a value it has to serialise refers to itself (a row JSON cannot hold either).
 */
export function compareRows(previous: readonly Row[], current: readonly Row[], keyFields?: readonly string[] | null): RowChanges {
  const fields = keyFields && keyFields.length ? [...keyFields] : null;
  const texts = new Texts();
  const identity = fields ? (row: Row) => texts.key(row, fields) : (row: Row) => texts.row(row);
  // The previous rows of each identity as a chain from its first row `h` (the Map's value): `next[i]` is the row
  // after i (-1: none), `tail[h]` the chain's last row while building it, `cursor[h]` its first row not matched yet.
  const n = previous.length;
  const head = new Map<string, number>();
  const next = new Int32Array(n).fill(-1);
  const tail = new Int32Array(n);
  const cursor = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const id = identity(previous[i]!);
    const h = head.get(id);
    if (h === undefined) {
      head.set(id, i);
      tail[i] = cursor[i] = i;
    } else {
      next[tail[h]!] = i;
      tail[h] = i;
    }
  }
  const matched = new Uint8Array(n);
  const added: Row[] = [];
  const changed: ChangedRow[] = [];
  for (const row of current) {
    const h = head.get(identity(row));
    const i = h === undefined ? -1 : cursor[h]!;
    if (i < 0) {
      added.push(row);
      continue;
    }
    cursor[h!] = next[i]!;
    matched[i] = 1;
    if (!fields) continue;
    const diff = diffFields(previous[i]!, row, texts);
    if (diff) {
      const key: Record<string, unknown> = {};
      for (const f of fields) setOwn(key, f, fieldValue(row, f));
      changed.push({ key, fields: diff, row });
    }
  }
  const removed = previous.filter((_, i) => !matched[i]);
  return { added, removed, changed, key_fields: fields };
}

/** A row's own field, or null when it is missing or undefined (never an inherited property such as `constructor`). */
function fieldValue(row: Row, name: string): unknown {
  if (!Object.hasOwn(row, name)) return null;
  const v = row[name];
  return v === undefined ? null : v;
}

/** Sets an own enumerable property, even one named `__proto__` (plain assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
}

/** The fields that differ between a matched pair (null when none does): current's fields, then previous-only ones. */
function diffFields(prev: Row, cur: Row, texts: Texts): Record<string, { old: unknown; new: unknown }> | null {
  let out: Record<string, { old: unknown; new: unknown }> | null = null;
  for (const name of Object.keys(cur)) {
    const o = fieldValue(prev, name);
    const n = fieldValue(cur, name);
    if (!sameValue(o, n, 0, texts)) setOwn((out ??= {}), name, { old: o, new: n });
  }
  for (const name of Object.keys(prev)) {
    if (Object.hasOwn(cur, name)) continue;
    const o = fieldValue(prev, name);
    if (!sameValue(o, null, 0, texts)) setOwn((out ??= {}), name, { old: o, new: null });
  }
  return out;
}

/**
 * Equality of two values as their canonical texts define it, compared in place (no text, no copy): recursion
 * for {@link MAX_RECURSION} levels, then the texts of what is below.
 */
function sameValue(a: unknown, b: unknown, depth: number, texts: Texts): boolean {
  if (a === b) return true;
  const objA = typeof a === 'object' && a !== null;
  const objB = typeof b === 'object' && b !== null;
  if (!objA || !objB) return !objA && !objB && sameScalar(a, b);
  if (depth >= MAX_RECURSION) return texts.value(a) === texts.value(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const y = b as unknown[];
    if (a.length !== y.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], y[i], depth + 1, texts)) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let present = 0;
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (absent(v)) continue;
    present++;
    if (!Object.hasOwn(y, k)) return false;
    const w = y[k];
    if (absent(w) || !sameValue(v, w, depth + 1, texts)) return false;
  }
  for (const k of Object.keys(y)) if (!absent(y[k])) present--;
  return present === 0; // every present key of a is present in b, and b has no other
}

/** Equality of two values that are not both non-null objects and not `===`: {@link scalar}'s texts, without making them. */
function sameScalar(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a !== a && b !== b; // NaN; 0 and -0 are ===
  return readsAsNull(a) && readsAsNull(b); // different strings, booleans, bigints, or mixed types differ
}

/** Whether {@link scalar} writes a value as `null`. */
function readsAsNull(value: unknown): boolean {
  return value === null || value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/**
 * The canonical texts of one comparison (one call of {@link compareRows}): JSON.stringify of each row, key or
 * value as it is, or of a copy with some objects' keys put in order (module comment). A value goes to the slow
 * serialiser ({@link canonical}, its text after a `~`) when JSON cannot write it: a non-finite number, a bigint,
 * or a container {@link MAX_RECURSION} levels down. Equal values give equal texts and unequal ones different
 * texts: the path depends on the value only, the two paths' texts never meet (`~` starts no JSON), and on the
 * fast path each object's keys come in the order its {@link Slot} fixed.
 */
class Texts {
  private readonly rows = newSlot();
  private readonly keys = newSlot();
  private readonly values = newSlot();

  /** A row's text: its fields without those that are null or undefined (a missing field reads as null). */
  row(row: Row): string {
    return serialise(() => prepare(row, this.rows, 0, true), () => canonicalRow(row));
  }

  /** The text of a row's key: of its one key field's value, or of the array of its key fields' values. */
  key(row: Row, fields: readonly string[]): string {
    const value = fields.length === 1 ? fieldValue(row, fields[0]!) : fields.map((f) => fieldValue(row, f));
    return serialise(() => prepare(value, this.keys, 0, false), () => canonical(value, 0));
  }

  /** A value's text (what {@link sameValue} compares below its recursion). */
  value(value: unknown): string {
    return serialise(() => prepare(value, this.values, 0, false), () => canonical(value, 0));
  }
}

/**
 * Where a value sits in a row (its path of field names, `[]` for an array's elements), with the order of the keys
 * of the objects seen there: the order of first sight in this comparison. Rows of one config have the same keys
 * in the same order at the same place nearly always, so JSON.stringify writes most objects as they are; the
 * others are copied with their keys in this order. (V8 writes integer-like keys such as "2" and "10" first, in
 * numeric order, whatever the insertion order: on both paths, so the texts still agree.) A hostile row makes at
 * most one slot per object or array it holds.
 */
interface Slot {
  /** Each key's rank: 0 for the first seen on an object here, then 1, 2 … */
  ranks: Map<string, number>;
  /** The keys of the last object here whose keys were in rank order (a later object with these keys is too). */
  inOrder: string[] | undefined;
  /** The slots of the objects and arrays under each key. */
  fields: Map<string, Slot> | undefined;
  /** The slot of the elements of the arrays here. */
  items: Slot | undefined;
}

/** A slot where nothing has been seen yet. */
function newSlot(): Slot {
  return { ranks: new Map(), inOrder: undefined, fields: undefined, items: undefined };
}

/** Gives a key seen for the first time at a slot the next rank. */
function newRank(ranks: Map<string, number>, key: string): number {
  const rank = ranks.size;
  ranks.set(key, rank);
  return rank;
}

/** Whether two key lists are the same list (strings compared by value; V8's property names compare by pointer). */
function sameKeys(keys: readonly string[], other: readonly string[] | undefined): boolean {
  if (!other || keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== other[i]) return false;
  return true;
}

/** The slot of the objects and arrays under `key` of the objects at `slot`. */
function fieldSlot(slot: Slot, key: string): Slot {
  const fields = (slot.fields ??= new Map());
  let s = fields.get(key);
  if (!s) fields.set(key, (s = newSlot()));
  return s;
}

/** Thrown by {@link prepare} (not an Error: no stack to capture) for a value JSON.stringify cannot write canonically. */
const UNSAFE = Object.freeze({ unsafe: true });
/** A property {@link prepare} leaves out of a copy. */
const OMIT = Symbol('omit');

/**
 * The value JSON.stringify writes canonically for `value`: the value itself when every object in it is plain,
 * holds no {@link absent} value (nor, with `dropNull`, a null one at this level) and has its keys in its slot's
 * order; else a copy of the parts that are not (objects rebuilt in their slot's order without those values).
 * @param depth of the value (a row's fields are at 1).
 * @param dropNull leaves out the null values of this object (a row's fields).
 * @throws UNSAFE for a non-finite number, a bigint, or a container {@link MAX_RECURSION} levels down.
 */
function prepare(value: unknown, slot: Slot, depth: number, dropNull: boolean): unknown {
  if (typeof value !== 'object' || value === null) {
    if ((typeof value === 'number' && !Number.isFinite(value)) || typeof value === 'bigint') throw UNSAFE;
    return value;
  }
  if (depth >= MAX_RECURSION) throw UNSAFE;
  if (Array.isArray(value)) {
    const items = (slot.items ??= newSlot());
    let out: unknown[] | null = Object.getPrototypeOf(value) === Array.prototype ? null : new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const p = prepare(v, items, depth + 1, false);
      if (out === null && p !== v) out = value.slice(0, i);
      if (out !== null) out[i] = p;
    }
    return out ?? value;
  }
  const obj = value as Record<string, unknown>;
  const proto: unknown = Object.getPrototypeOf(obj);
  const keys = Object.keys(obj);
  const ranks = slot.ranks;
  // The prepared values, once the object cannot be written as it is (a class instance: from the start).
  let vals: unknown[] | null = proto === Object.prototype || proto === null ? null : new Array<unknown>(keys.length);
  // The same keys as the last object here that had them in order: in order too, no need to look up ranks.
  const known = sameKeys(keys, slot.inOrder);
  let ordered = true;
  let last = -1;
  for (let j = 0; j < keys.length; j++) {
    const k = keys[j]!;
    if (!known) {
      const rank = ranks.get(k) ?? newRank(ranks, k);
      if (rank < last) ordered = false;
      last = rank;
    }
    const v = obj[k];
    const p =
      typeof v === 'string' || typeof v === 'boolean' ? v
      : absent(v) || (dropNull && v === null) ? OMIT
      : prepare(v, typeof v === 'object' && v !== null ? fieldSlot(slot, k) : slot, depth + 1, false);
    if (vals === null && (p !== v || !ordered)) {
      vals = new Array<unknown>(keys.length);
      for (let i = 0; i < j; i++) vals[i] = obj[keys[i]!]; // written as they are so far
    }
    if (vals !== null) vals[j] = p;
  }
  if (ordered && !known) slot.inOrder = keys;
  if (vals === null) return obj;
  const order = keys.map((_, i) => i).sort((a, b) => ranks.get(keys[a]!)! - ranks.get(keys[b]!)!);
  const out: Record<string, unknown> = {};
  for (const i of order) if (vals[i] !== OMIT) setOwn(out, keys[i]!, vals[i]);
  return out;
}

/** JSON.stringify of what `fast` returns, or `~` and `slow`'s text when `fast` throws {@link UNSAFE}. */
function serialise(fast: () => unknown, slow: () => string): string {
  let v: unknown;
  try {
    v = fast();
  } catch (err) {
    if (err !== UNSAFE) throw err;
    return '~' + slow();
  }
  return JSON.stringify(v);
}

/** A value that is not a non-null object: JSON's text, except non-finite numbers (`NaN`, `Infinity`) and bigints (`12n`), which JSON has no text for. */
function scalar(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return String(value); // JSON's text for finite numbers (and "0" for -0); "NaN", "Infinity", "-Infinity" otherwise
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return `${value}n`;
    default:
      return 'null'; // null, undefined, functions, symbols: JSON.stringify's null in an array
  }
}

/** Whether an object's property is left out of its canonical text (JSON.stringify leaves these out too). */
function absent(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** An object's own enumerable keys that are not {@link absent}, sorted (UTF-16 code units). */
function presentKeys(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj).sort();
  let keep = 0;
  for (const k of keys) if (!absent(obj[k])) keys[keep++] = k;
  keys.length = keep;
  return keys;
}

/** {@link Texts.row}'s text by the slow serialiser: the row's fields sorted, without null and undefined ones, each value {@link canonical}. */
function canonicalRow(row: Row): string {
  let s = '{';
  let sep = '';
  for (const k of Object.keys(row).sort()) {
    const v = row[k];
    if (v === null || absent(v)) continue;
    s += sep + JSON.stringify(k) + ':' + canonical(v, 1);
    sep = ',';
  }
  return s + '}';
}

/**
 * The slow serialiser's text of a value: JSON with each object's keys sorted (`.sort()`), and `NaN`, `Infinity`,
 * `-Infinity`, `12n` for what JSON has no text for. Recurses for {@link MAX_RECURSION} levels, then hands the
 * rest to {@link canonicalDeep}.
 * @param depth the value's depth so far.
 */
function canonical(value: unknown, depth: number): string {
  if (typeof value !== 'object' || value === null) return scalar(value);
  if (depth >= MAX_RECURSION) return canonicalDeep(value);
  if (Array.isArray(value)) {
    let s = '[';
    for (let i = 0; i < value.length; i++) s += (i ? ',' : '') + canonical(value[i], depth + 1);
    return s + ']';
  }
  const obj = value as Record<string, unknown>;
  let s = '{';
  let sep = '';
  for (const k of presentKeys(obj)) {
    s += sep + JSON.stringify(k) + ':' + canonical(obj[k], depth + 1);
    sep = ',';
  }
  return s + '}';
}

const TEXT = 0;
const VALUE = 1;
const LEAVE = 2;

/**
 * {@link canonical} with an explicit stack: any depth, bounded only by memory. Keeps the objects on the current
 * path to refuse a cycle (which would otherwise never end).
 * @throws TypeError on a circular reference.
 */
function canonicalDeep(root: object): string {
  let out = '';
  // Work items, last first: TEXT (append the string), VALUE (serialise), LEAVE (the object leaves the path).
  const kinds: number[] = [VALUE];
  const items: unknown[] = [root];
  const onPath = new Set<object>();
  while (kinds.length) {
    const kind = kinds.pop()!;
    const item = items.pop();
    if (kind === TEXT) {
      out += item as string;
      continue;
    }
    if (kind === LEAVE) {
      onPath.delete(item as object);
      continue;
    }
    if (typeof item !== 'object' || item === null) {
      out += scalar(item);
      continue;
    }
    if (onPath.has(item)) throw new TypeError('a row value refers to itself');
    onPath.add(item);
    kinds.push(LEAVE);
    items.push(item);
    if (Array.isArray(item)) {
      out += '[';
      kinds.push(TEXT);
      items.push(']');
      for (let i = item.length - 1; i >= 0; i--) {
        kinds.push(VALUE);
        items.push(item[i]);
        if (i) {
          kinds.push(TEXT);
          items.push(',');
        }
      }
    } else {
      const obj = item as Record<string, unknown>;
      const keys = presentKeys(obj);
      out += '{';
      kinds.push(TEXT);
      items.push('}');
      for (let i = keys.length - 1; i >= 0; i--) {
        kinds.push(VALUE);
        items.push(obj[keys[i]!]);
        kinds.push(TEXT);
        items.push((i ? ',' : '') + JSON.stringify(keys[i]) + ':');
      }
    }
  }
  return out;
}
