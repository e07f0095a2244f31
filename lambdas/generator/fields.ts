/**
 * The fields of a record list (docs/generate.md, "Fields"): the columns the items share, found by aligning
 * their text holders, links and images by their path from the item (as DEPTA aligns data items of similar
 * records, simplified to paths), each recognised as a title, link, image, price, date, rating or text, named
 * after the prompt's words where one fits and descriptively otherwise.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { isTag, isText, type AnyNode, type Element } from 'domhandler';
import type { FieldSpec } from '../engine/config.ts';
import { stableClasses, visibleText } from './analyze.ts';
import type { AskedField, FieldKind } from './prompt.ts';

/** A column the items share. */
export interface Column {
  /** Selector inside the item (CSS), e.g. `h3 a`, `p.price_color`. */
  selector: string;
  /** What the column holds. */
  kind: FieldKind;
  /** The field that reads it (name set by {@link nameColumns}). */
  spec: FieldSpec;
  /** Share of the items that have it (0-1). */
  presence: number;
  /** Values of the first items, as extracted. */
  samples: string[];
  /** Document order inside the item (for the field order). */
  order: number;
  /** Name suggested by the page (a class like `price_color`, `author`), when there is one. */
  hint: string | null;
  /** Matches of the selector per item, on average (tags: several). */
  perItem: number;
}

/** Inline formatting tags: their text belongs to the element around them. */
const INLINE = new Set(['b', 'i', 'em', 'strong', 'u', 's', 'small', 'sup', 'sub', 'font', 'mark', 'abbr', 'cite', 'q', 'bdi', 'bdo', 'wbr', 'br', 'code', 'tt', 'big', 'del', 'ins', 'time']);
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'button', 'select', 'option', 'input', 'textarea', 'iframe', 'form']);

/** Words in class names that say what a column is. */
const HINT_WORDS: Array<[RegExp, string, FieldKind]> = [
  [/title|headline|heading|name|subject/, 'title', 'title'],
  [/price|cost|amount|salary/, 'price', 'price'],
  [/rating|stars?|score|grade/, 'rating', 'rating'],
  [/date|time|posted|published|ago/, 'date', 'date'],
  [/author|byline|user(name)?|seller|company|brand|source|publisher|artist|channel|owner|poster|employer/, 'author', 'author'],
  [/desc|summary|snippet|excerpt|abstract|teaser|blurb|body|content|text|lead|dek|caption/, 'description', 'description'],
  [/categor|genre|section|breadcrumb|department|kicker/, 'category', 'category'],
  [/tags?\b|keywords?|topics?/, 'tags', 'tags'],
  [/location|address|city|place|region|country/, 'location', 'location'],
  [/count|views?|votes?|points?|likes?|comments?|reviews?|downloads?|stock|qty|quantity/, 'count', 'number'],
  [/url|link|href/, 'url', 'url'],
  [/image|img|thumb|photo|picture|cover|logo|avatar/, 'image', 'image'],
];

const PRICE_RE = /(?:[$£€¥₹₺₩₽]|\b(?:usd|eur|gbp|cad|aud|inr|jpy|chf|us\s?\$|cdn\$|rs\.?))\s?\d[\d.,\s]*|\d[\d.,]*\s?(?:[$£€¥₹₺₩₽]|\b(?:usd|eur|gbp|kr|zł))/i;
const DATE_RE = /\b(?:\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}-\d{2}-\d{2}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?,?\s+\d{4}|\d+\s+(?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\s+ago|yesterday|today)\b/i;
const RATING_RE = /\b\d(?:\.\d)?\s*(?:\/\s*5|out of 5|stars?)\b/i;
const NUMBER_RE = /^[\s(]*[-+]?\d[\d.,]*\s*[kmb]?\+?\s*(?:[a-z%]+\s*){0,2}\)?$/i;

/** Most fields a config gets when every column is kept. */
const MAX_FIELDS = 25;

/** A text holder, link or image found in one item, with its path from the item. */
interface Occurrence {
  key: string;
  steps: string[];
  el: Element;
  what: 'text' | 'link' | 'image';
  order: number;
}

/**
 * One step of a column's path: the tag with its first stable class; a sibling of the same tag and classes
 * (table cells, the spans of a byline) gets its place (`td:nth-of-type(2)`), so the columns stay apart.
 */
function step(el: Element): string {
  const cls = stableClasses(el)[0];
  const base = cls ? `${el.name}.${cls.replace(/([^\w-])/g, '\\$1')}` : el.name;
  const parent = el.parent;
  // Repeated siblings with a class are a list of one kind (tags); only plain ones are told apart by place.
  if (cls || !parent || !isTag(parent as AnyNode)) return base;
  const same = (parent as Element).children.filter((c): c is Element => isTag(c) && c.name === el.name && stableClasses(c)[0] === cls);
  if (same.length < 2) return base;
  const ofType = (parent as Element).children.filter((c): c is Element => isTag(c) && c.name === el.name);
  return `${base}:nth-of-type(${ofType.indexOf(el) + 1})`;
}

/**
 * The element a text node belongs to: its nearest ancestor that is not plain inline formatting. An inline
 * element with a class or an itemprop (`<small class="author">`) names its text and holds it itself.
 */
function holderOf(node: AnyNode, item: Element): Element | null {
  let p = node.parent as Element | null;
  while (p && p !== item && isTag(p) && INLINE.has(p.name) && !stableClasses(p).length && !p.attribs.itemprop) p = p.parent as Element | null;
  return p && isTag(p) ? p : null;
}

/** Text holders, links and images of one item, in document order, each with its path. */
function occurrences(item: Element): Occurrence[] {
  const out: Occurrence[] = [];
  const seen = new Set<string>();
  let order = 0;
  const pathOf = (el: Element): string[] => {
    const steps: string[] = [];
    for (let n: Element | null = el; n && n !== item; n = n.parent && isTag(n.parent) ? n.parent : null) steps.unshift(step(n));
    return steps;
  };
  const add = (el: Element, what: Occurrence['what']) => {
    const steps = el === item ? [] : pathOf(el);
    const key = `${what}:${steps.join('>')}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ key, steps, el, what, order: order++ });
  };
  const walk = (node: AnyNode) => {
    if (isText(node)) {
      if (node.data.trim()) {
        const h = holderOf(node, item);
        if (h) add(h, 'text');
      }
      return;
    }
    if (!isTag(node) || SKIP.has(node.name)) return;
    if (node.name === 'a' && node.attribs.href && !/^\s*(#|javascript:)/i.test(node.attribs.href)) add(node, 'link');
    if (node.name === 'img' && (node.attribs.src || node.attribs['data-src'])) add(node, 'image');
    for (const c of node.children) walk(c);
  };
  walk(item);
  return out;
}

/** Kind of a column from its values (and the element), before any name. */
function kindOf(values: string[], what: Occurrence['what'], el: Element, hint: FieldKind | null): FieldKind {
  if (what === 'link') return 'url';
  if (what === 'image') return 'image';
  const filled = values.filter(Boolean);
  const share = (re: RegExp) => filled.filter((v) => re.test(v)).length / Math.max(1, filled.length);
  if (hint === 'rating' || (filled.length && share(RATING_RE) >= 0.6)) return 'rating';
  if (filled.length && share(PRICE_RE) >= 0.6 && filled.every((v) => v.length < 40)) return 'price';
  if (hint === 'date' || (filled.length && share(DATE_RE) >= 0.6 && filled.every((v) => v.length < 60))) return 'date';
  if (/^h[1-6]$/.test(el.name)) return 'title';
  if (hint) return hint;
  if (filled.length && filled.every((v) => NUMBER_RE.test(v))) return 'number';
  return 'text';
}

function hintOf(el: Element): { name: string; kind: FieldKind } | null {
  const names = [...stableClasses(el), el.attribs.itemprop ?? '', el.attribs['data-testid'] ?? '', el.attribs.id && !/\d/.test(el.attribs.id) ? el.attribs.id : ''].join(' ').toLowerCase();
  if (!names.trim()) return null;
  for (const [re, name, kind] of HINT_WORDS) if (re.test(names)) return { name, kind };
  return null;
}

/**
 * The hint a table's header gives a cell's column (`<th>Author</th>` over the cell): its words through the
 * same name list as classes; a header of other words names the column itself (`<th>ISBN</th>` gives `isbn`).
 */
function headerHintOf(el: Element, item: Element): { name: string; kind: FieldKind | null } | null {
  if (item.name !== 'tr') return null;
  let cell: Element | null = el;
  while (cell && cell.parent !== item) cell = cell.parent && isTag(cell.parent) ? cell.parent : null;
  if (!cell || (cell.name !== 'td' && cell.name !== 'th')) return null;
  const index = item.children.filter(isTag).indexOf(cell);
  // The header row: the table's first row made of <th> cells (in <thead> or not).
  let table: AnyNode | null = item.parent;
  while (table && !(isTag(table) && table.name === 'table')) table = table.parent;
  if (!table) return null;
  const rows: Element[] = [];
  const collect = (n: Element) => { for (const c of n.children) if (isTag(c)) { if (c.name === 'tr') rows.push(c); else if (['thead', 'tbody', 'tfoot'].includes(c.name)) collect(c); } };
  collect(table as Element);
  const header = rows.find((r) => r.children.some((c) => isTag(c) && c.name === 'th'));
  const th = header?.children.filter(isTag)[index];
  const text = th ? visibleText(th).trim().toLowerCase() : '';
  if (!text || text.length > 40) return null;
  for (const [re, name, kind] of HINT_WORDS) if (re.test(text)) return { name, kind };
  const name = text.replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
  return name ? { name, kind: null } : null;
}

/** The shortest selector suffix of a path that finds this column's element first in most items. */
function shortestSelector($: CheerioAPI, items: Element[], steps: string[], elements: Map<Element, Element>): string {
  for (let k = 1; k <= steps.length; k++) {
    const sel = steps.slice(steps.length - k).join(' ');
    let hits = 0;
    let tried = 0;
    for (const it of items) {
      const want = elements.get(it);
      if (!want) continue;
      tried++;
      try {
        if ($(it).find(sel).first()[0] === want) hits++;
      } catch {
        break;
      }
    }
    if (tried && hits / tried >= 0.9) return sel;
  }
  return steps.join(' > ');
}

/**
 * The columns the items share, in item order.
 * @param items the record elements (sampled: the first 40 are read).
 * @returns columns present in at least 30% of the items (and two of them), each with a field spec named
 *   after its kind or hint (rename with {@link nameColumns}).
 */
export function findColumns($: CheerioAPI, items: Element[], baseUrl: string): Column[] {
  const sample = items.slice(0, 40);
  const byKey = new Map<string, { occ: Occurrence[]; byItem: Map<Element, Element> }>();
  for (const it of sample) {
    for (const o of occurrences(it)) {
      let g = byKey.get(o.key);
      if (!g) { g = { occ: [], byItem: new Map() }; byKey.set(o.key, g); }
      if (!g.byItem.has(it)) { g.occ.push(o); g.byItem.set(it, o.el); }
    }
  }
  const min = Math.max(2, Math.ceil(sample.length * 0.3));
  const columns: Column[] = [];
  for (const g of byKey.values()) {
    if (g.occ.length < Math.min(min, sample.length)) continue;
    const first = g.occ[0]!;
    const selector = first.steps.length ? shortestSelector($, sample, first.steps, g.byItem) : '';
    const hint = hintOf(first.el) ?? headerHintOf(first.el, g.byItem.keys().next().value!);
    let values: string[];
    let spec: FieldSpec;
    const sel = selector ? { selector } : {};
    if (first.what === 'link') {
      values = g.occ.slice(0, 5).map((o) => new URL(o.el.attribs.href!, baseUrl).href);
      spec = { name: 'url', ...sel, type: 'link' } as FieldSpec;
    } else if (first.what === 'image') {
      values = g.occ.slice(0, 5).map((o) => o.el.attribs.src ?? o.el.attribs['data-src'] ?? '');
      spec = { name: 'image', ...sel, type: 'image_url' } as FieldSpec;
    } else {
      values = g.occ.slice(0, 8).map((o) => visibleText(o.el));
      spec = { name: 'text', ...sel, type: 'text', transform: ['trim_whitespace'] } as FieldSpec;
      // A link text cut short ("A Light in the ...") whose title attribute holds it whole.
      const titles = g.occ.slice(0, 8).map((o) => o.el.attribs.title ?? '');
      if (first.el.name === 'a' && values.some((v) => /(\.\.\.|…)$/.test(v)) && titles.every((t, i) => t.length >= values[i]!.replace(/(\.\.\.|…)$/, '').trim().length)) {
        values = titles;
        spec = { name: 'text', ...sel, type: 'attribute', attribute: 'title' } as FieldSpec;
      }
    }
    const kind = kindOf(values, first.what, first.el, hint?.kind ?? null);
    // Stars drawn by class (`<p class="star-rating Three">`): the class carries the rating.
    if (first.what === 'text' && kind === 'rating' && !values.some((v) => /\d/.test(v))) continue;
    const perItem = selector ? sample.slice(0, 10).reduce((n, it) => n + $(it).find(selector).length, 0) / Math.min(10, sample.length) : 1;
    columns.push({ selector, kind, spec, presence: g.occ.length / sample.length, samples: values.slice(0, 5), order: first.order, hint: hint?.name ?? null, perItem });
  }
  columns.push(...ratingByClass(sample));
  columns.sort((a, b) => a.order - b.order);
  return dropRedundant(columns);
}

/** A rating drawn with a class (`star-rating Three`, `rating-4`): an attribute field with the class. */
function ratingByClass(items: Element[]): Column[] {
  for (const it of items.slice(0, 3)) {
    const stack: Element[] = [it];
    while (stack.length) {
      const el = stack.pop()!;
      const cls = el.attribs.class ?? '';
      const m = /\b(star-?rating|rating|stars?)\b[\w\s-]*?\b(one|two|three|four|five|[1-5](?:[-_.]5)?)\b/i.exec(cls);
      if (m) {
        const selector = `${el.name}.${m[1]}`;
        const present = items.filter((x) => x.attribs && (function find(n: Element): boolean { return (n.attribs.class ?? '').includes(m[1]!) || n.children.some((c) => isTag(c) && find(c)); })(x)).length;
        return [{
          selector, kind: 'rating', presence: present / items.length, samples: [cls], order: 1e6, hint: 'rating', perItem: 1,
          spec: { name: 'rating', selector, type: 'attribute', attribute: 'class', transform: [`replace:${m[1]}:`, 'trim_whitespace'] } as FieldSpec,
        }];
      }
      for (const c of el.children) if (isTag(c)) stack.push(c);
    }
  }
  return [];
}

/** Drops columns that repeat another: the same selector and kind twice, separators ("|", "by"). */
function dropRedundant(columns: Column[]): Column[] {
  const out: Column[] = [];
  const seen = new Set<string>();
  for (const c of columns) {
    const key = `${c.spec.type}|${c.selector}`;
    if (seen.has(key)) continue;
    if (c.spec.type === 'text' && c.samples.every((v) => v.replace(/[\s|·•:,–—-]/g, '').length <= 2)) continue;
    seen.add(key);
    out.push(c);
  }
  return out;
}

/**
 * Where a column fits an asked field: 0 (not at all) to about 4 (the same kind and a matching name). A field
 * of no known kind ("UPC", "ISBN") fits only a column whose class or label names it.
 */
function fitOf(c: Column, f: AskedField): number {
  const words = f.words.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 1 && !['the', 'its', 'their', 'each', 'and'].includes(w));
  const hay = `${c.hint ?? ''} ${c.selector}`.toLowerCase();
  const named = words.some((w) => hay.includes(w.replace(/s$/, '')));
  const labelled = words.some((w) => c.samples.some((v) => new RegExp(`^\\s*${w.replace(/s$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}s?\\b`, 'i').test(v)));
  if (f.kind === 'text') return named ? 2.5 : labelled ? 2 : 0;
  let s = 0;
  if (c.kind === f.kind) s += 2;
  else if (f.kind === 'title' && c.kind === 'text') s += 0.5;
  else if (f.kind === 'description' && c.kind === 'text') s += 1;
  if (named) s += 1.5;
  return s;
}

/**
 * Chooses and names the fields of a config from the columns: the prompt's fields, each on the column that
 * fits it best (a title prefers the first link's text or a heading, a description the longest text); with
 * `everyColumn` (the prompt names nothing, or asks for "details", "everything"), every other column too, with a
 * descriptive name (title, url, image, price, …).
 * @param o.everyColumn keep every column, the asked ones first (default: when nothing is asked)
 * @returns the chosen fields (asked ones first, in the prompt's order, then the rest in item order), and the asked
 *   fields no column fits (candidates for a detail page).
 */
export function nameColumns(columns: Column[], asked: AskedField[], o: { everyColumn?: boolean } = {}): { fields: FieldSpec[]; missing: AskedField[] } {
  const everyColumn = o.everyColumn ?? asked.length === 0;
  const used = new Set<Column>();
  const named = new Map<Column, string>();
  const missing: AskedField[] = [];
  const titleColumn = pickTitle(columns);
  for (const f of asked) {
    let best: Column | null = null;
    let bestFit = 0;
    for (const c of columns) {
      if (used.has(c) && !(f.kind === 'url' && c.spec.type === 'link')) continue;
      let s = fitOf(c, f);
      if (f.kind === 'title' && c === titleColumn) s += 2.5;
      if (f.kind === 'description' && c.kind === 'text') s += Math.min(1, avgLength(c) / 100);
      if (f.kind === 'tags' && c.perItem >= 1.5) s += 1.5;
      s *= 0.5 + 0.5 * c.presence;
      if (s > bestFit) { best = c; bestFit = s; }
    }
    if (best && bestFit >= 1) {
      used.add(best);
      named.set(best, f.name);
    } else {
      missing.push(f);
    }
  }
  // The asked fields first, in the prompt's order …
  const askedOrder = new Map(asked.map((f, i) => [f.name, i]));
  const chosen = columns.filter((c) => named.has(c)).sort((a, b) => askedOrder.get(named.get(a)!)! - askedOrder.get(named.get(b)!)!);
  if (everyColumn) {
    // … then every other column in item order (IDS-like: what a person sees in each record), the title first-named.
    const rest = columns.filter((c) => !named.has(c)).slice(0, MAX_FIELDS);
    chosen.push(...rest.sort((a, b) => a.order - b.order));
  }
  const names = new Set<string>(chosen.filter((c) => named.has(c)).map((c) => named.get(c)!));
  const fields: FieldSpec[] = [];
  const titleTaken = asked.some((f) => f.name === 'title');
  for (const c of chosen) {
    let name = named.get(c);
    if (name === undefined) {
      const base = c === titleColumn && !titleTaken && !named.has(c) ? 'title' : defaultName(c);
      name = base;
      for (let i = 2; names.has(name); i++) name = `${base}_${i}`;
      names.add(name);
    }
    // Several matches per item (tags, authors): all of them.
    const multiple = c.perItem >= 1.5 && c.spec.type === 'text' && (c.kind === 'tags' || asked.some((f) => f.name === named.get(c) && f.kind === 'tags') || (everyColumn && !named.has(c)));
    // A price asked for is a number; a price among everything on show keeps its currency as shown ("CAD$138.95 (P)").
    const askedPrice = c.kind === 'price' && c.spec.type === 'text' && asked.some((f) => f.kind === 'price' && f.name === named.get(c));
    const spec = askedPrice ? { ...c.spec, transform: ['extract_number'] } : c.spec;
    fields.push({ ...spec, name, ...(multiple ? { multiple: true } : {}) } as FieldSpec);
  }
  return { fields, missing };
}

function avgLength(c: Column): number {
  return c.samples.reduce((s, v) => s + v.length, 0) / Math.max(1, c.samples.length);
}

function defaultName(c: Column): string {
  switch (c.kind) {
    case 'url': return 'url';
    case 'image': return 'image';
    case 'text': return c.hint && c.hint !== 'url' && c.hint !== 'image' ? c.hint : 'text';
    default: return c.hint && c.kind === 'number' ? (c.hint === 'count' ? 'count' : c.hint) : c.kind;
  }
}

/**
 * The column that names each record: a heading's or the first link's text of some length, else the first
 * text of some length.
 */
function pickTitle(columns: Column[]): Column | null {
  const texts = columns.filter((c) => (c.spec.type === 'text' || (c.spec.type === 'attribute' && c.spec.attribute === 'title')) && c.presence >= 0.5 && avgLength(c) >= 3);
  const score = (c: Column) => {
    let s = 0;
    if (c.kind === 'title' || c.hint === 'title') s += 3;
    if (/\bh[1-6]\b/.test(c.selector)) s += 2;
    if (c.spec.type === 'attribute') s += 1;
    if (/(^|\s|>)a(\.|$|\s)/.test(c.selector.split(' ').pop() ?? '')) s += 1.5;
    if (['price', 'date', 'number', 'rating'].includes(c.kind)) s -= 3;
    const len = avgLength(c);
    if (len >= 10 && len <= 150) s += 1;
    if (len > 300) s -= 1;
    s -= c.order * 0.02;
    return s;
  };
  return texts.sort((a, b) => score(b) - score(a))[0] ?? null;
}
