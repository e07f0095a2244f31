/**
 * Page analysis for the config generator (docs/generate.md, "Finding the records"): the repeated record
 * structures of a page, scored, each with a CSS selector that matches its items.
 *
 * The steps, after MDR (Liu, Grossman and Zhai, "Mining Data Records in Web Pages", KDD 2003) and DEPTA
 * (Zhai and Liu, 2005), which find records as similar sibling subtrees, and Instant Data Scraper's scoring
 * of a list by how much of the page it covers:
 * 1. Measure every element once, bottom-up: its visible text (non-space characters), the part of it inside
 *    links, its links and images, its elements.
 * 2. Candidates: under each element, the children that share a tag and their stable classes (3 or more); and,
 *    where classes differ from item to item, children of one tag whose subtrees are alike (Jaccard
 *    similarity of their tag paths).
 * 3. Score each by the share of the page's text its items hold, their number, how alike they are, how much
 *    each holds (text, fields, a link), less for menus (short texts that are all links), page chrome (nav,
 *    header, footer, aside) and items that all say the same.
 * 4. For the best ones, a selector that matches exactly the items: `tag.class`, then with more classes, then
 *    under the parent's id or class; generated class names (`css-1x2y3z`) and ids are avoided.
 *
 * Works on the tree a browser builds (engine/html/parse.ts), over HTML fetched or rendered.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { isTag, isText, type AnyNode, type Element, type ParentNode } from 'domhandler';
import { loadHtml } from '../engine/extract.ts';
import { layoutFactor, readLayout, type PageLayout } from './layout.ts';

/** Elements whose content is not page text. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object', 'canvas', 'select', 'option']);
/** Children that never form records. */
const NOT_RECORDS = new Set(['br', 'hr', 'wbr', 'script', 'style', 'noscript', 'template', 'link', 'meta', 'input', 'option', 'source', 'track', 'param', 'col', 'colgroup']);
/** Landmarks whose lists are page chrome, not content. */
const CHROME_TAGS = new Set(['nav', 'header', 'footer', 'aside']);
const CHROME_WORDS = /(^|[-_\s])([a-z]*nav|navbar|navigation|[a-z]*menu|menubar|footer|header|breadcrumbs?|pagination|pager|sidebar|toolbar|tabs?|dropdown|social|share|cookie|banner|masthead|skip|legal|sitemap)([-_\s]|$)/i;

/** Measures of one element, from its subtree. */
interface Measure {
  /** Non-space characters of visible text. */
  text: number;
  /** Of which inside links. */
  linkText: number;
  links: number;
  images: number;
  elements: number;
  /** Checkboxes and radio buttons (filters and forms, not records). */
  choices: number;
}

/** A repeated record structure found on a page. */
export interface RecordCandidate {
  /** The items, in document order: each record's first element (the container match). */
  items: Element[];
  /**
   * Each record's elements: the item alone, or, for records spread over siblings (a table row and the row after
   * it, `dt`/`dd` pairs), the item and the siblings after it that belong to it.
   */
  members: Element[][];
  /** `extract.following_siblings` for these records: the element siblings after the item they span, at most (0: one element). */
  span: number;
  /** A CSS selector for the items (matches exactly them when `exact`). */
  selector: string;
  /** Whether `selector` matches exactly the items on this page. */
  exact: boolean;
  count: number;
  /** Higher is better; comparable within one page. */
  score: number;
  /** Share of the page's text inside the items (0-1). */
  coverage: number;
  /** Mean structural similarity of the items to their most typical one (0-1). */
  similarity: number;
  /** Mean visible characters per item. */
  textPerItem: number;
  /** The first item's text, shortened. */
  sample: string;
  /** The measures the score came from, per item on average (for logs and tuning). */
  features: Record<string, number>;
}

/** What {@link analyzePage} found. */
export interface PageAnalysis {
  /** Cheerio over the parsed page (for the field and pagination steps). */
  $: CheerioAPI;
  url: string;
  title: string;
  /** Non-space characters of visible text in the body. */
  textLength: number;
  /** Candidates, best first (at most {@link MAX_CANDIDATES}). */
  candidates: RecordCandidate[];
  /** Whether the rendered layout (element boxes, ./layout.ts) scored the candidates. */
  hasLayout: boolean;
}

/** Candidates kept per page. */
const MAX_CANDIDATES = 12;
/** Tag paths collected per item for the similarity, at most. */
const MAX_PATHS = 80;
/** Depth of the tag paths. */
const PATH_DEPTH = 3;

const measures = new WeakMap<Element, Measure>();

function nonSpace(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 32 && c !== 160) n++;
  }
  return n;
}

function classesOf(el: Element): string[] {
  const c = el.attribs.class;
  return c ? c.split(/\s+/).filter(Boolean) : [];
}

/**
 * Whether a class or id looks generated (CSS-in-JS hashes, build ids): such names change between builds or
 * pages and make selectors that break.
 */
export function looksGenerated(name: string): boolean {
  if (name.length > 40) return true;
  if (/^(css|sc|jsx|emotion|styled|svelte|tw)-[a-z0-9]+$/i.test(name)) return true;
  if (/\d{4,}/.test(name)) return true;
  if (/^_?[a-zA-Z0-9]{5,8}$/.test(name) && /[0-9]/.test(name) && /[A-Z]/.test(name) && /[a-z]/.test(name)) return true;
  if (/^[a-z]{1,3}[A-Z][a-zA-Z]{3,}$/.test(name) && /[A-Z].*[A-Z]/.test(name)) return true;
  if (/^_[a-z0-9]{4,}$/i.test(name) && /\d/.test(name)) return true;
  return false;
}

/** Classes that can go in a selector: stable-looking and not state (`active`, `odd`, `first`). */
export function stableClasses(el: Element): string[] {
  return classesOf(el).filter((c) => !looksGenerated(c)
    && !/^(active|selected|current|odd|even|first|last|hover|focus|open|closed|visible|hidden|clearfix|cf|row|col|ng-[a-z-]+|js-[a-z-]+)$/i.test(c)
    // Grid and layout helpers (Bootstrap, Foundation): they say where, not what.
    && !/^((col|offset|pull|push)(-(xs|sm|md|lg|xl|xxl))?-\d+|span\d+|(hidden|visible)-(xs|sm|md|lg|xl)(-[a-z]+)?|(small|medium|large)-\d+|columns?)$/i.test(c)
    && /^[A-Za-z_-][\w-]*$/.test(c));
}

/** Whether an element's own name says it is page chrome. */
function isChromeElement(el: Element): boolean {
  if (CHROME_TAGS.has(el.name)) return true;
  const role = el.attribs.role;
  if (role && /^(navigation|banner|contentinfo|menu|menubar|tablist|complementary)$/.test(role)) return true;
  const names = `${el.attribs.id ?? ''} ${el.attribs.class ?? ''}`;
  return names.length > 1 && CHROME_WORDS.test(names);
}

/** Measures every element under `root`, bottom-up (iterative: pages can be deep). */
function measureTree(root: ParentNode): Measure {
  const total: Measure = { text: 0, linkText: 0, links: 0, images: 0, elements: 0, choices: 0 };
  type Frame = { node: ParentNode; m: Measure; i: number; inLink: boolean };
  const stack: Frame[] = [{ node: root, m: total, i: 0, inLink: false }];
  while (stack.length) {
    const f = stack[stack.length - 1]!;
    const children = f.node.children;
    if (f.i >= children.length) {
      stack.pop();
      const parent = stack[stack.length - 1];
      if (parent) {
        const p = parent.m;
        p.text += f.m.text; p.linkText += f.m.linkText; p.links += f.m.links; p.images += f.m.images; p.elements += f.m.elements + 1; p.choices += f.m.choices;
      }
      continue;
    }
    const child = children[f.i++]!;
    if (isText(child)) {
      const n = nonSpace(child.data);
      f.m.text += n;
      if (f.inLink) f.m.linkText += n;
    } else if (isTag(child)) {
      if (SKIPPED.has(child.name)) continue;
      const choice = child.name === 'input' && /^(checkbox|radio)$/i.test(child.attribs.type ?? '') ? 1 : 0;
      const m: Measure = { text: 0, linkText: 0, links: child.name === 'a' && child.attribs.href ? 1 : 0, images: child.name === 'img' ? 1 : 0, elements: 0, choices: choice };
      measures.set(child, m);
      stack.push({ node: child, m, i: 0, inLink: f.inLink || child.name === 'a' });
    }
  }
  return total;
}

function measureOf(el: Element): Measure {
  return measures.get(el) ?? { text: 0, linkText: 0, links: 0, images: 0, elements: 0, choices: 0 };
}

/** Landmarks HTML gives page chrome: by tag, or by ARIA role. */
function isChromeLandmark(el: Element): boolean {
  return CHROME_TAGS.has(el.name) || /^(navigation|banner|contentinfo|complementary)$/.test(el.attribs.role ?? '');
}

/**
 * Whether an element lies in page chrome: inside (or is) a nav, header, footer or aside (the landmarks, by tag
 * or role, unless one wraps nearly the whole page), or an element named like one that holds a small part of the
 * page's text (a wrapper called `page-header-wrap` that holds the whole page is not chrome).
 */
function inChrome(el: Element, pageText: number, main: Element | null): boolean {
  for (let n: Element | null = el; n; n = n.parent && isTag(n.parent) ? n.parent : null) {
    if (n.name === 'body' || n.name === 'html') return false;
    // A self-contained piece of content (HTML's <article>) is no chrome, whatever its classes say
    // (tumblr's posts are `<article class="… reblog_header">`).
    if (n.name === 'article') return false;
    const share = measureOf(n).text / Math.max(1, pageText);
    // A landmark is chrome, unless it wraps nearly the whole page (and the main content, when the page marks it).
    if (isChromeLandmark(n) ? share < 0.8 || (main !== null && !contains(n, main)) : isChromeElement(n) && share < 0.35) return true;
  }
  return false;
}

/** The page's main content, when it marks it: `<main>` or `role="main"` (the largest, when several). */
function mainOf(all: Element[]): Element | null {
  let best: Element | null = null;
  for (const el of all) if ((el.name === 'main' || el.attribs.role === 'main') && (!best || measureOf(el).text > measureOf(best).text)) best = el;
  return best;
}

/** Class names that hide an element (Bootstrap, Foundation, Tailwind, Etsy's and 9GAG's own). */
const HIDDEN_CLASS = /(^|\s)(hide|hidden|d-none|display-none|is-hidden|invisible|collapse)(\s|$)/;

/**
 * Whether an element or an ancestor is hidden in the served page: the `hidden` attribute,
 * `aria-hidden="true"`, an inline `display:none` or `visibility:hidden`, or a class that hides.
 */
function isHidden(el: Element): boolean {
  for (let n: Element | null = el; n && n.name !== 'body'; n = n.parent && isTag(n.parent) ? n.parent : null) {
    const a = n.attribs;
    if (a.hidden !== undefined || a['aria-hidden'] === 'true') return true;
    if (a.style && /(display\s*:\s*none|visibility\s*:\s*hidden)/i.test(a.style)) return true;
    if (a.class && HIDDEN_CLASS.test(a.class)) return true;
  }
  return false;
}

/** The tag paths under an element, up to {@link PATH_DEPTH} levels and {@link MAX_PATHS} paths: its shape. */
function shapeOf(el: Element): Set<string> {
  const out = new Set<string>();
  const walk = (node: Element, prefix: string, depth: number) => {
    for (const c of node.children) {
      if (out.size >= MAX_PATHS) return;
      if (!isTag(c) || SKIPPED.has(c.name)) continue;
      const cls = stableClasses(c)[0];
      const path = `${prefix}/${c.name}${cls ? `.${cls}` : ''}`;
      out.add(path);
      if (depth < PATH_DEPTH) walk(c, path, depth + 1);
    }
  };
  walk(el, '', 1);
  return out;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size && !b.size) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/** The shape of a record: its elements' shapes, each path prefixed with the element's place in the record. */
function recordShape(record: Element[]): Set<string> {
  if (record.length === 1) return shapeOf(record[0]!);
  const out = new Set<string>();
  record.forEach((el, j) => {
    out.add(`${j}:${el.name}`);
    for (const p of shapeOf(el)) out.add(`${j}:${p}`);
  });
  return out;
}

/** Mean similarity of shapes to their medoid (the one most like the others), over a sample. */
function similarityOf(records: Element[][]): number {
  // Consecutive records, not every k-th: a sample by a fixed step would see one kind of an alternating list.
  const sample = records.length > 20 ? [...records.slice(0, 16), ...records.slice(-4)] : records;
  const shapes = sample.map(recordShape);
  let best = 0;
  for (let i = 0; i < shapes.length; i++) {
    let sum = 0;
    for (let j = 0; j < shapes.length; j++) if (i !== j) sum += jaccard(shapes[i]!, shapes[j]!);
    best = Math.max(best, shapes.length > 1 ? sum / (shapes.length - 1) : 1);
  }
  return best;
}

function textOf(node: AnyNode): string {
  if (isText(node)) return node.data;
  if (!isTag(node) || SKIPPED.has(node.name)) return '';
  let s = '';
  for (const c of node.children) s += textOf(c) + (isTag(c) && /^(p|div|li|td|th|br|h\d|tr|dd|dt)$/.test(c.name) ? ' ' : '');
  return s;
}

/** Visible text of an element, whitespace folded. */
export function visibleText(el: AnyNode): string {
  return textOf(el).replace(/\s+/g, ' ').trim();
}

/** Whether two sibling elements are of one kind: the same tag, and alike in shape (Jaccard of tag paths ≥ 0.6). */
function alike(a: Element, b: Element, shapes: Map<Element, Set<string>>): boolean {
  if (a.name !== b.name) return false;
  const sa = shapes.get(a) ?? shapes.set(a, shapeOf(a)).get(a)!;
  const sb = shapes.get(b) ?? shapes.set(b, shapeOf(b)).get(b)!;
  return jaccard(sa, sb) >= 0.6;
}

/** Longest record, in sibling elements, looked for (MDR's largest generalized node). */
const MAX_PERIOD = 4;

/**
 * Records spread over k sibling elements (MDR's generalized nodes, k = 2 to 4): under one parent, a run of
 * children whose kinds repeat every k elements (a quote row and its tags row, `dt` and `dd`, a heading and its
 * paragraph), where the k elements of a period are not all of one kind (that is a plain list). The run's first
 * element starts the first record; each record is the k elements from there (the last may be shorter). Every
 * place in the record must hold text in most records (a spacer row between records is no part of them).
 * @returns the groups found: each a list of records, each record its elements in order.
 */
function periodicGroups(parent: Element): Element[][][] {
  const kids = parent.children.filter((c): c is Element => isTag(c) && !NOT_RECORDS.has(c.name) && !SKIPPED.has(c.name));
  if (kids.length < 6) return [];
  const shapes = new Map<Element, Set<string>>();
  const out: Element[][][] = [];
  const covered: Array<[number, number]> = [];
  for (let k = 2; k <= MAX_PERIOD; k++) {
    for (let s = 0; s + 3 * k <= kids.length; ) {
      let e = s;
      while (e + k < kids.length && alike(kids[e]!, kids[e + k]!, shapes)) e++;
      // kids[s .. e + k) repeats with period k.
      const end = e + k;
      if (e - s + k >= 3 * k && !covered.some(([a, b]) => a <= s && end <= b)) {
        const first = kids.slice(s, s + k);
        const plain = first.every((el, i) => i === 0 || alike(first[i - 1]!, el, shapes));
        if (!plain) {
          const records: Element[][] = [];
          for (let i = s; i < end; i += k) records.push(kids.slice(i, Math.min(i + k, end)));
          const texty = Array.from({ length: k }, (_, j) => records.filter((r) => r[j] && measureOf(r[j]!).text > 0).length / records.length);
          if (texty.every((x) => x >= 0.5)) {
            out.push(records);
            covered.push([s, end]);
          }
        }
        s = end;
      } else {
        s++;
      }
    }
  }
  return out;
}

/** Groups of children that could be records, under one parent. */
function groupsUnder(parent: Element): Element[][] {
  const kids = parent.children.filter((c): c is Element => isTag(c) && !NOT_RECORDS.has(c.name) && !SKIPPED.has(c.name));
  if (kids.length < 2) return [];
  const out: Element[][] = [];
  const byKey = new Map<string, Element[]>();
  const byTag = new Map<string, Element[]>();
  for (const k of kids) {
    const key = `${k.name}|${stableClasses(k).sort().join('.')}`;
    (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(k);
    (byTag.get(k.name) ?? byTag.set(k.name, []).get(k.name)!).push(k);
  }
  for (const g of byKey.values()) if (g.length >= 2) out.push(g);
  // One tag whose class sets differ item to item (odd/even, featured, per-item modifiers): the tag group as
  // a whole, when it is more than its biggest class group.
  for (const g of byTag.values()) {
    const biggest = Math.max(...[...byKey.entries()].filter(([k]) => k.startsWith(`${g[0]!.name}|`)).map(([, v]) => v.length));
    if (g.length >= 3 && g.length > biggest) out.push(g);
  }
  // A list's head and foot of its tag (a table's header row of <th>, a pager row): the group without them too.
  for (const g of [...out]) {
    const trimmed = trimEnds(g);
    if (trimmed.length !== g.length) out.push(trimmed);
  }
  return out;
}

/**
 * A group without the items at its start and end (two at most each) that are unlike the rest: shaped unlike the
 * group's medoid (Jaccard of tag paths under 0.35), or made of `<th>` cells only.
 */
function trimEnds(items: Element[]): Element[] {
  if (items.length < 5) return items;
  // The medoid of at most 16 consecutive items from the middle, the ends left out (bounded work on lists of any
  // length).
  const inner = items.length > 6 ? items.slice(2, -2) : items.slice(1, -1);
  const from = Math.max(0, Math.floor(inner.length / 2) - 8);
  const middle = inner.slice(from, from + 16);
  const sample = middle.map(shapeOf);
  let medoid = sample[0]!;
  let best = -1;
  for (let i = 0; i < sample.length; i++) {
    let sum = 0;
    for (let j = 0; j < sample.length; j++) if (i !== j) sum += jaccard(sample[i]!, sample[j]!);
    if (sum > best) { best = sum; medoid = sample[i]!; }
  }
  // Attributes every middle item has with one value (`valign="top"`, `bgcolor`): an end without it is no record.
  const shared = Object.entries(middle[0]!.attribs).filter(([k, v]) => k !== 'id' && k !== 'class' && middle.every((m) => m.attribs[k] === v));
  const cells = (tr: Element) => tr.children.filter(isTag).length;
  const rowCells = new Set(middle.filter((m) => m.name === 'tr').map(cells));
  const unlike = (i: number) => {
    const it = items[i]!;
    if (jaccard(shapeOf(it), medoid) < 0.35) return true;
    if (shared.some(([k, v]) => it.attribs[k] !== v)) return true;
    // A table's header row (<th> cells only), or a row of another number of cells (a pager in one wide cell).
    return it.name === 'tr' && (it.children.filter(isTag).every((c) => c.name === 'th') || (rowCells.size === 1 && !rowCells.has(cells(it))));
  };
  let start = 0;
  let end = items.length;
  while (start < 2 && start < end - 3 && unlike(start)) start++;
  while (items.length - end < 2 && end - 3 > start && unlike(end - 1)) end--;
  return items.slice(start, end);
}

/**
 * Scores a group of items. Coverage (the share of the page's text) matters most; then the number of items,
 * how alike they are and how much each holds; menus, chrome and identical items lose.
 */
function scoreGroup(items: Element[], pageText: number, members?: Element[][], main: Element | null = null, layout: PageLayout | null = null): Omit<RecordCandidate, 'selector' | 'exact' | 'sample'> | null {
  let records = members ?? items.map((it) => [it]);
  // Empty slots (ad placeholders, archived entries without content) neither count nor weigh.
  const withContent = records.filter((r) => recordMeasure(r).text > 0);
  if (withContent.length >= 2) records = withContent;
  items = records.map((r) => r[0]!);
  const ms = records.map(recordMeasure);
  const text = ms.reduce((s, m) => s + m.text, 0);
  if (text === 0) return null;
  const n = items.length;
  const coverage = Math.min(1, text / Math.max(1, pageText));
  const textPerItem = text / n;
  const linkShare = ms.reduce((s, m) => s + m.linkText, 0) / text;
  const linksPerItem = ms.reduce((s, m) => s + m.links, 0) / n;
  const withLink = ms.filter((m) => m.links > 0).length / n;
  const withText = ms.filter((m) => m.text >= 3).length / n;
  const elementsPerItem = ms.reduce((s, m) => s + m.elements, 0) / n;
  const similarity = similarityOf(records);
  // Coverage matters, but a long list of small records must be able to beat a few big blocks.
  let score = coverage ** 0.7 * Math.log2(n + 1) * similarity ** 1.5 * withText;
  // Records carry a few links each (a title, an author, a thumbnail); blocks of many links are menus and filters.
  if (linksPerItem > 12 && linkShare > 0.75) score *= 0.25;
  else if (linksPerItem > 6 && linkShare > 0.5 && !items.every((it) => it.name === 'article')) score *= 0.5;
  if (withLink < 0.5) score *= 0.75;
  // Menus and tag clouds: short items made of one link each, or items whose text is all in several links.
  if (textPerItem < 25 && linkShare > 0.8 && elementsPerItem <= 3) score *= 0.3;
  else if (linkShare > 0.9 && linksPerItem >= 3) score *= 0.3;
  if (textPerItem < 8) score *= 0.4;
  else if (textPerItem < 16) score *= 0.7;
  // Each record is a small part of the page; items that each hold a large part of it are page sections.
  if (textPerItem > pageText * 0.25) score *= 0.3;
  // Richer items (several elements, a picture) look more like records than single words.
  score *= 0.6 + 0.4 * Math.min(1, elementsPerItem / 4);
  score *= 1 + 0.8 * (ms.filter((m) => m.images > 0).length / n);
  // Checkboxes and radio buttons in most items: a filter or a form.
  if (ms.filter((m) => m.choices > 0).length / n >= 0.5) score *= 0.4;
  const chrome = inChrome(items[0]!, pageText, main) && inChrome(items[n - 1]!, pageText, main);
  if (chrome) score *= 0.2;
  // Furniture beside the results: a carousel, a slider, a block of recommendations or related links.
  const furniture = inFurniture(items[0]!, pageText);
  if (furniture) score *= 0.5;
  // The page names the list as its results (`#search-results`, `ol.results`, `div.product-list`).
  const named = namedResults(items[0]!);
  if (named && !furniture) score *= 1.3;
  // Items a visitor does not see: in a hidden dialog or a collapsed panel.
  if (items.filter(isHidden).length / n >= 0.5) score *= 0.2;
  // Items that say the same (a row of "Add to cart" buttons, one schedule shown per time zone) are not
  // distinct records.
  const sample = n > 60 ? records.filter((_, i) => i % Math.ceil(n / 60) === 0) : records;
  const distinct = new Set(sample.map((r) => r.map(visibleText).join(' ').slice(0, 400))).size / sample.length;
  if (n >= 3 && distinct < 0.8) score *= distinct * distinct;
  if (n === 2) score *= 0.5;
  // Where the page was rendered, the boxes: records are shown, alike in size and aligned, in the main column
  // (./layout.ts); carousels, rails, footers and hidden copies are not.
  const seen = layout ? layoutFactor(records, layout) : null;
  if (seen) score *= seen.factor;
  const features = { linksPerItem, withLink, linkShare, elementsPerItem, images: ms.filter((m) => m.images > 0).length / n, chrome: chrome ? 1 : 0, furniture: furniture ? 1 : 0, distinct, ...(seen ? { layout: seen.factor } : {}) };
  const span = members ? Math.max(0, ...records.map(spanOf)) : 0;
  return { items, members: records, span, count: n, score, coverage, similarity, textPerItem, features };
}

/** The measures of a record: the sums over its elements. */
function recordMeasure(record: Element[]): Measure {
  if (record.length === 1) return measureOf(record[0]!);
  const m: Measure = { text: 0, linkText: 0, links: 0, images: 0, elements: 0, choices: 0 };
  for (const el of record) {
    const x = measureOf(el);
    m.text += x.text; m.linkText += x.linkText; m.links += x.links; m.images += x.images; m.elements += x.elements + 1; m.choices += x.choices;
  }
  return m;
}

/** How many element siblings after its first element a record reaches (its `following_siblings`). */
function spanOf(record: Element[]): number {
  if (record.length < 2) return 0;
  const last = record[record.length - 1]!;
  let k = 0;
  for (let n = record[0]!.next; n; n = n.next) {
    if (!isTag(n)) continue;
    k++;
    if (n === last) return k;
  }
  return k;
}

/**
 * Items of one tag and class spread over several parents (a list split by an ad block, results in
 * columns): every element of the page with that tag and stable class, none inside another.
 */
function classGroups(all: Element[]): Element[][] {
  const byKey = new Map<string, Element[]>();
  for (const el of all) {
    for (const c of stableClasses(el)) {
      const key = `${el.name}.${c}`;
      (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(el);
    }
  }
  const out: Element[][] = [];
  for (const els of byKey.values()) {
    if (els.length < 3 || els.length > 500) continue;
    // Spread over a few parents (a list in blocks), not one per parent (a part of each record).
    const parents = new Set(els.map((e) => e.parent)).size;
    // … unless each is its parent's only element (a product in each cell of a table laid out as a grid).
    const alone = els.filter((e) => (e.parent as Element).children.filter(isTag).length === 1).length;
    if (parents < 2 || (parents > els.length / 2 && alone < els.length * 0.8)) continue;
    const set = new Set(els);
    const outer = els.filter((e) => {
      for (let p = e.parent; p; p = p.parent) if (set.has(p as Element)) return false;
      return true;
    });
    if (outer.length >= 3) out.push(outer);
  }
  return out;
}

/** Names a page gives the list of its results: results, search results, hits, listings, products, items. */
const RESULTS_WORDS = /(^|[\s_-])(results?|search-?results?|serp|hits|listings?|products?-?(list|grid)|(item|product|result)s|search-?list)([\s_-]|$)|[a-z](Results|Listings?)([A-Z\s_-]|$)/;

/** Whether the items or an ancestor (up to 6 levels) is named as the page's results (see {@link RESULTS_WORDS}). */
function namedResults(el: Element): boolean {
  let n: Element | null = el;
  for (let depth = 0; n && n.name !== 'body' && depth < 7; depth++, n = n.parent && isTag(n.parent) ? n.parent : null) {
    if (RESULTS_WORDS.test(`${n.attribs.id ?? ''} ${n.attribs.class ?? ''}`)) return true;
  }
  return false;
}

/** Names of the page's furniture that holds lists of other things than the results: carousels, recommendations. */
const FURNITURE_WORDS = /(^|[\s_-])(carousel|slider|slideshow|swiper|slick|owl-carousel|glide|flickity|ticker|marquee|recommend(ed|ations?)?|related|also-(like|bought|viewed)|trending|most-popular)([\s_-]|$)|[a-z](Carousel|Slider|Recommend|Related)/i;

/** Whether an element lies in page furniture (see {@link FURNITURE_WORDS}) that holds a small part of the page's text. */
function inFurniture(el: Element, pageText: number): boolean {
  for (let n: Element | null = el.parent && isTag(el.parent) ? el.parent : null; n && n.name !== 'body'; n = n.parent && isTag(n.parent) ? n.parent : null) {
    if (FURNITURE_WORDS.test(`${n.attribs.id ?? ''} ${n.attribs.class ?? ''}`) && measureOf(n).text < pageText * 0.5) return true;
  }
  return false;
}

/** Names of regions beside the main content: related links, rails, sidebars, promotions. */
const SECONDARY_WORDS = /(^|[\s_-])(related|rail|right-?rail|sidebar|side-bar|aside|secondary|recommend(ed|ations)?|promo(tion)?s?|sponsored)|(Related|Rail|Sidebar|Recommend)/i;

/**
 * Whether some of the items, not all, lie in a secondary region (an ancestor whose id or class says
 * "related", "rail", "sidebar"): the results and a related rail are two lists, even with one class.
 */
function spansSecondary(items: Element[]): boolean {
  let inSecondary = 0;
  for (const it of items) {
    for (let p = it.parent as Element | null; p && isTag(p) && p.name !== 'body'; p = p.parent as Element | null) {
      if (SECONDARY_WORDS.test(`${p.attribs.id ?? ''} ${p.attribs.class ?? ''}`)) { inSecondary++; break; }
    }
  }
  return inSecondary > 0 && inSecondary < items.length;
}

/** Share of `inner` items that lie inside one of the `outer` items. */
function insideShare(inner: Element[], outer: Element[]): number {
  const set = new Set<ParentNode>(outer);
  let n = 0;
  for (const x of inner) {
    for (let p = x.parent; p; p = p.parent) if (set.has(p)) { n++; break; }
  }
  return n / inner.length;
}

/** Whether `inner` is `outer` or inside it. */
function contains(outer: Element, inner: Element): boolean {
  for (let n: ParentNode | null = inner; n; n = n.parent) if (n === outer) return true;
  return false;
}

/**
 * The items' one inner element, when each item only wraps it (`<li class="col-xs-6"><article
 * class="product_pod">`): the inner elements name the records better. Goes down while every item has
 * exactly one element child with a stable class shared by all, holding nearly all of its text.
 */
function tighten(items: Element[]): Element[] {
  let cur = items;
  for (let depth = 0; depth < 3; depth++) {
    const inner: Element[] = [];
    for (const it of cur) {
      const kids = it.children.filter((c): c is Element => isTag(c) && !SKIPPED.has(c.name) && !NOT_RECORDS.has(c.name));
      if (kids.length !== 1) return cur;
      const k = kids[0]!;
      if (measureOf(k).text < measureOf(it).text * 0.9) return cur;
      inner.push(k);
    }
    const key = (e: Element) => `${e.name}.${stableClasses(e)[0] ?? ''}`;
    if (!stableClasses(inner[0]!).length || inner.some((e) => key(e) !== key(inner[0]!))) return cur;
    cur = inner;
  }
  return cur;
}

/** Matches of a selector on the page, or null when the selector is not valid. */
function matches($: CheerioAPI, selector: string): Element[] | null {
  try {
    return $(selector).toArray().filter(isTag) as Element[];
  } catch {
    return null;
  }
}

function sameSet(a: Element[], b: readonly Element[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set<Element>(b);
  return a.every((x) => s.has(x));
}

function cssIdent(s: string): string {
  return s.replace(/([^\w-])/g, '\\$1');
}

/** A short selector for one element (the items' parent), by id or stable classes. */
function anchorOf(el: Element): string | null {
  const id = el.attribs.id;
  if (id && !looksGenerated(id) && /^[A-Za-z][\w-]*$/.test(id)) return `#${cssIdent(id)}`;
  const cls = stableClasses(el);
  if (cls.length) return `${el.name}.${cls.slice(0, 2).map(cssIdent).join('.')}`;
  return null;
}

/**
 * A selector that matches exactly the items on this page, preferring the short and stable: `tag.class`,
 * `tag.a.b`, `.class`, `#parent > tag.class`, `parent-anchor > tag`, one ancestor further up.
 * @returns the selector and whether it is exact (else the best superset found, or the parent path).
 */
function selectorFor($: CheerioAPI, items: Element[]): { selector: string; exact: boolean } {
  const first = items[0]!;
  const tag = first.name;
  // Classes every item has.
  let common = stableClasses(first);
  for (const it of items.slice(1)) {
    const c = new Set(stableClasses(it));
    common = common.filter((x) => c.has(x));
  }
  const tries: string[] = [];
  for (const c of common) tries.push(`${tag}.${cssIdent(c)}`);
  if (common.length >= 2) tries.push(`${tag}.${common.slice(0, 3).map(cssIdent).join('.')}`);
  const parent = first.parent && isTag(first.parent) ? first.parent : null;
  const parentAnchor = parent ? anchorOf(parent) : null;
  if (parentAnchor) {
    for (const c of common) tries.push(`${parentAnchor} > ${tag}.${cssIdent(c)}`);
    tries.push(`${parentAnchor} > ${tag}`);
  }
  const grand = parent?.parent && isTag(parent.parent) ? parent.parent : null;
  const grandAnchor = grand ? anchorOf(grand) : null;
  if (grandAnchor && parent) {
    const pc = stableClasses(parent)[0];
    const mid = pc ? `${parent.name}.${cssIdent(pc)}` : parent.name;
    for (const c of common) tries.push(`${grandAnchor} > ${mid} > ${tag}.${cssIdent(c)}`);
    tries.push(`${grandAnchor} > ${mid} > ${tag}`);
  }
  // Items spread over several parents (a list in columns or blocks) that share the class with others elsewhere
  // (a sidebar's copies): the nearest anchored ancestor of all of them (`section.primary a.game-icon`).
  const lca = commonAncestor(items);
  for (let n: Element | null = lca, depth = 0; n && n.name !== 'body' && depth < 6; n = n.parent && isTag(n.parent) ? n.parent : null, depth++) {
    if (n === parent) continue;
    const anchor = anchorOf(n);
    if (!anchor) continue;
    for (const c of common) tries.push(`${anchor} ${tag}.${cssIdent(c)}`);
  }
  // Items without a class of their own (old table layouts): an attribute they all have (`tr[style]`,
  // `td[valign="top"]`), alone or under the parent's anchor.
  const attrs = commonAttributes(items);
  for (const at of attrs) tries.push(`${tag}${at}`);
  if (parentAnchor) for (const at of attrs) tries.push(`${parentAnchor} > ${tag}${at}`);
  let fallback: string | null = null;
  const attempt = (sel: string): string | null => {
    const m = matches($, sel);
    if (!m) return null;
    if (sameSet(m, items)) return sel;
    // A superset with a few others that lack what every item holds (empty ad slots): `:has()` tells them apart.
    if (m.length <= items.length * 1.5 && items.every((it) => m.includes(it))) {
      const narrowed = narrowByContent($, sel, first, items) ?? narrowByDesktop($, sel, m, items);
      if (narrowed) return narrowed;
    }
    // A superset that holds the items and few others is a usable fallback.
    if (!fallback && m.length <= items.length * 1.2 && items.every((it) => m.includes(it))) fallback = sel;
    return null;
  };
  for (const sel of tries) {
    const found = attempt(sel);
    if (found) return { selector: found, exact: true };
  }
  if (fallback) return { selector: fallback, exact: false };
  // The structural path: the parent's path from an anchored ancestor (or the body), each unanchored step placed
  // among its siblings of the same tag (`table:nth-of-type(3)`), then the tag, then with an attribute.
  const path: string[] = [];
  let node: Element | null = parent;
  for (let depth = 0; node && depth < 12 && node.name !== 'html'; depth++) {
    const a = anchorOf(node);
    path.unshift(a ?? placed(node));
    if (a?.startsWith('#') || node.name === 'body') break;
    node = node.parent && isTag(node.parent) ? node.parent : null;
  }
  const base = path.join(' > ');
  for (const sel of [`${base} > ${tag}`, ...attrs.map((at) => `${base} > ${tag}${at}`)]) {
    const found = attempt(sel);
    if (found) return { selector: found, exact: true };
  }
  const sel = fallback ?? `${base} > ${tag}`;
  const m = matches($, sel);
  return { selector: sel, exact: m !== null && sameSet(m, items) };
}

/** The nearest element that holds all the items (the items' parent when they share one). */
function commonAncestor(items: Element[]): Element | null {
  const chain = (el: Element): Element[] => {
    const out: Element[] = [];
    for (let n = el.parent; n && isTag(n); n = n.parent) out.push(n as Element);
    return out;
  };
  let candidates = chain(items[0]!);
  for (const it of items.slice(1)) {
    const set = new Set(chain(it));
    candidates = candidates.filter((c) => set.has(c));
  }
  return candidates[0] ?? null;
}

/** An element's tag, with its place among its siblings of that tag when it has some (`table:nth-of-type(2)`). */
function placed(el: Element): string {
  const parent = el.parent;
  if (!parent || !isTag(parent)) return el.name;
  const same = parent.children.filter((c): c is Element => isTag(c) && c.name === el.name);
  return same.length > 1 ? `${el.name}:nth-of-type(${same.indexOf(el) + 1})` : el.name;
}

/** Attributes that never make a selector: unique per element, or no part of the markup's structure. */
const NOT_SELECTOR_ATTRIBUTES = /^(id|class|href|src|srcset|alt|title|name|value|for|tabindex|on[a-z]+|data-(id|index|key|pos|position|reactid|rank)|aria-(labelledby|describedby|controls|posinset))$/i;

/**
 * Attribute selectors every item satisfies: `[name="value"]` when all items have the same short value, then
 * `[name]` (at most 6).
 */
function commonAttributes(items: Element[]): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(items[0]!.attribs)) {
    if (NOT_SELECTOR_ATTRIBUTES.test(name) || !/^[a-z][a-z0-9_-]*$/i.test(name)) continue;
    if (!items.every((it) => it.attribs[name] !== undefined)) continue;
    if (value.length <= 40 && items.every((it) => it.attribs[name] === value) && !/["\\\n]/.test(value)) out.push(`[${name}="${value}"]`);
    out.push(`[${name}]`);
    if (out.length >= 6) break;
  }
  return out;
}

/**
 * `sel:has(x)` matching exactly the items, where `x` is a descendant of the first item (its tag with a
 * stable class, or its tag) that every item holds and the other matches of `sel` lack; null when none does.
 */
function narrowByContent($: CheerioAPI, sel: string, first: Element, items: Element[]): string | null {
  const signatures: string[] = [];
  const walk = (el: Element) => {
    for (const c of el.children) {
      if (!isTag(c) || SKIPPED.has(c.name) || signatures.length >= 40) continue;
      const cls = stableClasses(c)[0];
      if (cls) signatures.push(`${c.name}.${cssIdent(cls)}`);
      signatures.push(c.name);
      walk(c);
    }
  };
  walk(first);
  for (const x of new Set(signatures)) {
    const m = matches($, `${sel}:has(${x})`);
    if (m && sameSet(m, items)) return `${sel}:has(${x})`;
  }
  return null;
}

/**
 * Classes that hide an element on a desktop-wide screen (Bootstrap 3/4/5, Foundation, Etsy's own): a
 * responsive page repeats some records once per screen width, and a desktop visitor sees one copy.
 */
const DESKTOP_HIDDEN_CLASS = /^(hide-xl|hidden-xl|d-xl-none|hidden-desktop|hide-desktop|hide-for-large|hide-for-xlarge)$/;

/** The desktop-hiding class of an element or its nearest ancestor that has one, or null. */
function desktopHidingClass(el: Element): string | null {
  for (let n: Element | null = el; n && n.name !== 'body'; n = n.parent && isTag(n.parent) ? n.parent : null) {
    const c = classesOf(n).find((x) => DESKTOP_HIDDEN_CLASS.test(x));
    if (c) return c;
  }
  return null;
}

/** Whether a desktop visitor does not see the element (see {@link DESKTOP_HIDDEN_CLASS}). */
function hiddenOnDesktop(el: Element): boolean {
  return desktopHidingClass(el) !== null;
}

/** `sel:not(.hide-xl *)` matching exactly the items, when the others are hidden on a desktop; else null. */
function narrowByDesktop($: CheerioAPI, sel: string, matched: Element[], items: Element[]): string | null {
  const want = new Set(items);
  const classes = new Set(matched.filter((m) => !want.has(m)).map(desktopHidingClass));
  if (classes.has(null)) return null;
  const parts = [...classes].map((c) => `:not(.${cssIdent(c!)} *)`).join('');
  const m = matches($, `${sel}${parts}`);
  return m && sameSet(m, items) ? `${sel}${parts}` : null;
}

/**
 * Finds the repeated record structures of a page.
 * @param html the page's HTML (as served, or as a browser rendered it).
 * @param url its URL (after redirects).
 * @param options `rendered`: the HTML was read from this service's browser with boxes (workbench.ts), so its
 *   `data-sai-box` attributes are the layout (./layout.ts) and score the candidates; otherwise they are dropped.
 * @returns the candidates best first, each with a selector; none on a page without repeated content.
 */
export function analyzePage(html: string, url: string, options: { rendered?: boolean } = {}): PageAnalysis {
  const $ = loadHtml(html);
  const root = $.root()[0] as unknown as ParentNode;
  const total = measureTree(root);
  const body = $('body')[0] as Element | undefined;
  const pageText = body ? measureOf(body).text : total.text;
  const scored: Array<Omit<RecordCandidate, 'selector' | 'exact' | 'sample'>> = [];
  const all = $('*').toArray() as Element[];
  // The boxes a rendering marked (./layout.ts), taken off the tree so that no selector or field sees them.
  const layout = readLayout($('html')[0] as Element | undefined, all, options.rendered === true);
  // The page's main content, when it marks one that holds a tenth of its text or more (a stray <main> around a
  // search box is no guide).
  const marked = mainOf(all);
  const main = marked && measureOf(marked).text >= pageText * 0.1 ? marked : null;
  for (const el of all) {
    if (SKIPPED.has(el.name)) continue;
    for (const group of groupsUnder(el)) {
      const s = scoreGroup(group, pageText, undefined, main, layout);
      if (s && s.score > 0) scored.push(s);
    }
    for (const records of periodicGroups(el)) {
      const s = scoreGroup(records.map((r) => r[0]!), pageText, records, main, layout);
      // A list of single elements explains the same page more simply: it wins a tie.
      if (s && s.score > 0) scored.push({ ...s, score: s.score * 0.9 });
    }
  }
  const splitLists = new Set<(typeof scored)[number]>();
  for (const group of classGroups(all.filter((el) => !SKIPPED.has(el.name) && measures.has(el)))) {
    const s = scoreGroup(group, pageText, undefined, main, layout);
    // Items of one class in differently named sections (the results and a "related" rail) are two lists;
    // one list split by an ad block lies in one section.
    if (s && spansSecondary(group)) s.score *= 0.5;
    else if (s) splitLists.add(s);
    if (s && s.score > 0) scored.push(s);
  }
  // The page marks its main content: lists in it come first, lists outside it (beside it, around it) after.
  if (main) {
    for (const c of scored) c.score *= contains(main, c.items[0]!) ? 1.25 : 0.8;
  }
  // Structures inside records (a post's table, each product's key-value lines, its tags) lose to the
  // records that hold them: most of their items lie inside the items of a comparable record-like group.
  scored.sort((a, b) => b.score - a.score);
  const top = scored.slice(0, 80);
  const strong = top.filter((c) => c.count >= 3 && c.similarity >= 0.5);
  for (const c of top) {
    const holder = strong.find((d) => d !== c && d.score > c.score * 0.2 && insideShare(c.items, d.members.flat()) >= 0.8 && insideShare(d.items, c.items) === 0);
    // Unless the holders are rows of a grid: several whole records each (a link apiece), and nearly all their text.
    const gridRows = holder && c.count >= holder.count * 2 && (c.features.withLink ?? 0) >= 0.8 && c.textPerItem * c.count >= 0.85 * holder.textPerItem * holder.count;
    if (holder && !gridRows) c.score *= 0.3;
  }
  // The best list and more items of its class in a sibling list of the same kind (a first row of
  // four, then the rest): one list split in two.
  scored.sort((a, b) => b.score - a.score);
  const best = scored[0];
  if (best) {
    const parentKind = (el: Element) => { const p = el.parent as Element; return `${p.name}.${stableClasses(p)[0] ?? ''}`; };
    const kind = parentKind(best.items[0]!);
    const classes = stableClasses(best.items[0]!).join(' ');
    const whole = [...splitLists].find((g) => g !== best && g.count > best.count && g.count <= best.count * 2 && g.similarity >= 0.6
      && best.items.every((it) => g.items.includes(it)) && g.items.every((it) => parentKind(it) === kind && stableClasses(it).join(' ') === classes));
    if (whole) whole.score = best.score * 1.01;
  }
  scored.sort((a, b) => b.score - a.score);
  const candidates: RecordCandidate[] = [];
  for (const found of scored) {
    if (candidates.length >= MAX_CANDIDATES) break;
    let s = found;
    if (found.span === 0) {
      // Empty slots among the items (an ad's placeholder, a spacer `<li>`) are no records.
      const tight = tighten(found.items);
      const filled = tight.filter((it) => visibleText(it).trim() !== '' && !hiddenOnDesktop(it));
      const kept = filled.length >= 2 && filled.length < tight.length ? filled : tight;
      s = { ...found, items: kept, members: kept.map((it) => [it]), count: kept.length };
    }
    // The same items under another grouping are one candidate.
    if (candidates.some((c) => c.items.length === s.items.length && c.items[0] === s.items[0] && c.span === s.span)) continue;
    const { selector, exact } = selectorFor($, s.items);
    candidates.push({ ...s, selector, exact, sample: s.members[0]!.map(visibleText).join(' ').slice(0, 160) });
  }
  return { $, url, title: $('title').first().text().trim(), textLength: pageText, candidates, hasLayout: layout !== null };
}
