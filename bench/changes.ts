/**
 * `npm run bench -- changes`: compareRows (lambdas/core/row-changes.ts, issue 26: rows added, removed and changed
 * between two runs of a config) on generated result sets, against the minimal way one would write it inline.
 *
 * Result sets: N rows (10,000 and 100,000) of two shapes: `flat` (product-like rows of 10 scalar fields) and
 * `nested` (a product with an offers array of objects, a specs object with a nested object, tag and breadcrumb
 * arrays). The current run is the previous one with 5% of the rows removed, 10% changed (one value: a price, a
 * title, a rating, an offer's price) and 5% new rows inserted at random places; every row is a fresh copy (as a
 * run's rows read back from storage are). In the nested shape, 2% of the unchanged rows also have their `specs`
 * object's keys in another order (a JSON-LD block that a site serialises in another order): the same value.
 * Compared keyed (on `url`, the config's `output.deduplicate_fields: [url]`) and unkeyed (on all values).
 *
 * Peer: JSON.stringify of each row without sorting keys; keyed, a Map from JSON.stringify(url) to the previous
 * row and JSON.stringify of each matched pair (and of each field of a changed pair, for the fields' old and new);
 * unkeyed, a Set difference of the rows' JSON texts. Each round times ours then the peer on the same arrays;
 * prints the median ms over --rounds rounds after one warm-up round, and ours/peer. Checks ours against the
 * counts the generator made, and reports where the peer's counts differ (the reordered `specs` objects).
 *
 * Options: --rounds N (7; 100,000-row sets use half, at least 3), --sizes 10000,100000, --only flat,nested.
 * Exit code: 0 when ours found exactly the generated changes every time, 1 otherwise.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { compareRows, type Row } from '../lambdas/core/row-changes.ts';
import { gitHead } from './report.ts';
import { prng } from '../test/fixtures/html/tag-soup.ts'; // mulberry32

/** Share of the previous rows removed, changed, and (of the previous count) added. */
const REMOVED = 0.05;
const CHANGED = 0.1;
const ADDED = 0.05;
/** Share of the unchanged nested rows whose `specs` object keys come in another order. */
const REORDERED = 0.02;

type Shape = 'flat' | 'nested';


const WORDS = ['acme', 'blue', 'compact', 'deluxe', 'eco', 'fast', 'gold', 'heavy', 'iron', 'jet', 'kit', 'lite', 'max', 'nano', 'ultra', 'pro'];
const CATEGORIES = ['Home', 'Garden', 'Tools', 'Kitchen', 'Outdoor', 'Office'];

function makeRow(shape: Shape, id: number, rand: () => number): Row {
  const word = () => WORDS[Math.floor(rand() * WORDS.length)]!;
  const url = `https://shop.example.com/p/${id}-${word()}`;
  const title = `${word()} ${word()} ${word()} ${id}`;
  const price = Math.round(rand() * 50_000) / 100;
  if (shape === 'flat') {
    return {
      url,
      title,
      price,
      currency: 'EUR',
      rating: Math.round(rand() * 50) / 10,
      reviews: Math.floor(rand() * 2000),
      in_stock: rand() < 0.8,
      brand: word(),
      category: CATEGORIES[id % CATEGORIES.length]!,
      image: `https://img.example.com/${id}.jpg`,
    };
  }
  return {
    url,
    title,
    price,
    offers: Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, i) => ({
      seller: { name: `${word()} store ${i}`, rating: Math.round(rand() * 50) / 10 },
      price: { amount: Math.round(rand() * 50_000) / 100, currency: 'EUR' },
      available: rand() < 0.7,
    })),
    specs: { weight_kg: Math.round(rand() * 100) / 10, color: word(), size: { w: id % 97, h: id % 89, d: id % 83 } },
    tags: Array.from({ length: Math.floor(rand() * 5) }, word),
    breadcrumbs: ['Shop', CATEGORIES[id % CATEGORIES.length]!, word()],
    in_stock: rand() < 0.8,
  };
}

/** A deep copy; with `reorderSpecs`, the `specs` object's keys (and its `size`'s) in reverse order. */
function copyRow(row: Row, reorderSpecs: boolean): Row {
  const out = structuredClone(row);
  if (reorderSpecs && out.specs) {
    const specs = out.specs as Record<string, unknown>;
    const size = specs.size as Record<string, unknown>;
    specs.size = Object.fromEntries(Object.entries(size).reverse());
    out.specs = Object.fromEntries(Object.entries(specs).reverse());
  }
  return out;
}

/** One value changed, of the kinds a page changes between runs. */
function changeRow(shape: Shape, row: Row, rand: () => number): Row {
  const out = structuredClone(row);
  const r = rand();
  if (shape === 'nested' && r < 0.4) {
    const offers = out.offers as Array<{ price: { amount: number } }>;
    offers[0]!.price.amount = Math.round(offers[0]!.price.amount * 100 + 100) / 100;
  } else if (r < 0.6) {
    out.price = Math.round((out.price as number) * 100 + 100) / 100;
  } else if (r < 0.8) {
    out.title = `${out.title as string} (new)`;
  } else if (shape === 'flat') {
    out.rating = Math.round(((out.rating as number) + 0.1) * 10) / 10;
  } else {
    out.tags = [...(out.tags as string[]), 'sale'];
  }
  return out;
}

interface Case {
  shape: Shape;
  size: number;
  previous: Row[];
  current: Row[];
  expected: { added: number; removed: number; changed: number };
  /** Unchanged rows whose `specs` keys were reordered (the same value). */
  reordered: number;
}

function makeCase(shape: Shape, size: number, seed: number): Case {
  const rand = prng(seed);
  const previous = Array.from({ length: size }, (_, i) => makeRow(shape, i, rand));
  const current: Row[] = [];
  let removed = 0;
  let changed = 0;
  let reordered = 0;
  for (const row of previous) {
    const r = rand();
    if (r < REMOVED) removed++;
    else if (r < REMOVED + CHANGED) {
      current.push(changeRow(shape, row, rand));
      changed++;
    } else {
      const reorder = shape === 'nested' && rand() < REORDERED;
      if (reorder) reordered++;
      current.push(copyRow(row, reorder));
    }
  }
  const added = Math.round(size * ADDED);
  for (let i = 0; i < added; i++) current.splice(Math.floor(rand() * (current.length + 1)), 0, makeRow(shape, size + i, rand));
  return { shape, size, previous, current, expected: { added, removed, changed }, reordered };
}

interface Counts { added: number; removed: number; changed: number }

/** The minimal inline version, keyed: a Map by the key's JSON, JSON.stringify of the pair, then of each field. */
function peerKeyed(previous: readonly Row[], current: readonly Row[], key: string): Counts {
  const prevKeys = previous.map((r) => JSON.stringify(r[key]));
  const byKey = new Map<string, Row>();
  previous.forEach((r, i) => byKey.set(prevKeys[i]!, r));
  const seen = new Set<string>();
  const added: Row[] = [];
  const changed: Array<{ key: Record<string, unknown>; fields: Record<string, { old: unknown; new: unknown }>; row: Row }> = [];
  for (const row of current) {
    const k = JSON.stringify(row[key]);
    const old = byKey.get(k);
    if (!old) {
      added.push(row);
      continue;
    }
    seen.add(k);
    if (JSON.stringify(old) === JSON.stringify(row)) continue;
    const fields: Record<string, { old: unknown; new: unknown }> = {};
    for (const f of new Set([...Object.keys(old), ...Object.keys(row)])) {
      if (JSON.stringify(old[f]) !== JSON.stringify(row[f])) fields[f] = { old: old[f] ?? null, new: row[f] ?? null };
    }
    changed.push({ key: { [key]: row[key] }, fields, row });
  }
  const removed = previous.filter((_, i) => !seen.has(prevKeys[i]!));
  return { added: added.length, removed: removed.length, changed: changed.length };
}

/** The minimal inline version, unkeyed: a Set difference of the rows' JSON texts. */
function peerUnkeyed(previous: readonly Row[], current: readonly Row[]): Counts {
  const p = previous.map((r) => JSON.stringify(r));
  const c = current.map((r) => JSON.stringify(r));
  const ps = new Set(p);
  const cs = new Set(c);
  const added = current.filter((_, i) => !ps.has(c[i]!));
  const removed = previous.filter((_, i) => !cs.has(p[i]!));
  return { added: added.length, removed: removed.length, changed: 0 };
}

function ours(previous: readonly Row[], current: readonly Row[], key: string | null): Counts {
  const r = compareRows(previous, current, key ? [key] : null);
  return { added: r.added.length, removed: r.removed.length, changed: r.changed.length };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function time<T>(fn: () => T): { ms: number; out: T } {
  const t0 = performance.now();
  const out = fn();
  return { ms: performance.now() - t0, out };
}

const fmtCounts = (c: Counts) => `${c.added}/${c.removed}/${c.changed}`;
const same = (a: Counts, b: Counts) => a.added === b.added && a.removed === b.removed && a.changed === b.changed;

/** Runs the bench; returns 0 when ours found exactly the generated changes in every case, else 1. */
export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { rounds: { type: 'string', default: '7' }, sizes: { type: 'string', default: '10000,100000' }, only: { type: 'string', default: 'flat,nested' } },
  });
  const rounds = Number(values.rounds);
  const sizes = values.sizes.split(',').map(Number);
  const shapes = values.only.split(',').filter((s): s is Shape => s === 'flat' || s === 'nested');
  if (!(rounds >= 1) || sizes.some((n) => !(n >= 20)) || !shapes.length) throw new Error('--rounds must be at least 1, --sizes at least 20 each, --only flat and/or nested');
  const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`changes: commit ${gitHead()?.slice(0, 7)}; node ${process.version}; ${cpus().length} CPUs; load average ${load()} (1, 5, 15 min)`);
  console.log(`current run = previous - ${REMOVED * 100}% removed, ${CHANGED * 100}% changed (one value), + ${ADDED * 100}% added at random places; every row a fresh copy; ` +
    `nested: ${REORDERED * 100}% of the unchanged rows' specs keys in another order`);
  console.log('ms: median of the timed rounds after one warm-up round, ours then the peer in each round; counts: added/removed/changed\n');
  console.log(`${'shape'.padEnd(7)}${'rows'.padStart(8)}  ${'match'.padEnd(7)}${'rounds'.padStart(7)}${'ours ms'.padStart(10)}${'peer ms'.padStart(10)}${'ours/peer'.padStart(11)}   ${'expected'.padEnd(18)}${'ours'.padEnd(18)}peer`);
  let ok = true;
  const notes: string[] = [];
  let seed = 26;
  for (const size of sizes) {
    for (const shape of shapes) {
      const c = makeCase(shape, size, seed++);
      const n = size >= 50_000 ? Math.max(3, Math.ceil(rounds / 2)) : rounds;
      for (const key of ['url', null] as const) {
        // Unkeyed, a changed row is one removed and one added.
        const e = c.expected;
        const expected = key ? e : { added: e.added + e.changed, removed: e.removed + e.changed, changed: 0 };
        const runOurs = () => ours(c.previous, c.current, key);
        const runPeer = () => (key ? peerKeyed(c.previous, c.current, key) : peerUnkeyed(c.previous, c.current));
        runOurs();
        runPeer();
        const oursMs: number[] = [];
        const peerMs: number[] = [];
        let oursCounts: Counts | undefined;
        let peerCounts: Counts | undefined;
        for (let r = 0; r < n; r++) {
          const a = time(runOurs);
          const b = time(runPeer);
          oursMs.push(a.ms);
          peerMs.push(b.ms);
          oursCounts = a.out;
          peerCounts = b.out;
        }
        const o = median(oursMs);
        const p = median(peerMs);
        const match = key ? 'url' : 'all';
        console.log(
          `${shape.padEnd(7)}${size.toLocaleString('en').padStart(8)}  ${match.padEnd(7)}${String(n).padStart(7)}${o.toFixed(1).padStart(10)}${p.toFixed(1).padStart(10)}${(o / p).toFixed(2).padStart(10)}x   ` +
            `${fmtCounts(expected).padEnd(18)}${fmtCounts(oursCounts!).padEnd(18)}${fmtCounts(peerCounts!)}`,
        );
        if (!same(oursCounts!, expected)) {
          ok = false;
          notes.push(`${shape} ${size} ${match}: ours found ${fmtCounts(oursCounts!)}, the generator made ${fmtCounts(expected)}`);
        }
        if (!same(peerCounts!, expected)) {
          const why = c.reordered
            ? ` (${c.reordered} unchanged rows have their specs keys in another order: the peer, comparing JSON texts without sorting keys, ` +
              (key ? 'reports them as changed)' : 'reports each as one removed and one added)')
            : '';
          notes.push(`${shape} ${size} ${match}: the peer found ${fmtCounts(peerCounts!)}, not ${fmtCounts(expected)}${why}`);
        }
      }
    }
  }
  console.log(`\nload average after: ${load()}`);
  console.log(ok ? 'ours found exactly the generated changes in every case' : 'ours did NOT find the generated changes in every case');
  for (const note of notes) console.log(`  ${note}`);
  return ok ? 0 : 1;
}
