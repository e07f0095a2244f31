/**
 * A field's CSS selector compiled once per config, for the search inside each item.
 *
 * cheerio's `.find()` parses and compiles a selector on every call, with the item as its `:scope`
 * (`h3 a` inside an item means `:scope h3 a`): for a crawl that is the same few selectors compiled again for
 * every item of every page. Here each selector is compiled once, with the same absolutizing css-select applies
 * for cheerio (the item as `:scope`, joined by css-select's "flexible descendant" combinator) but with a
 * `:sai-scope` pseudo-class that matches the item being searched, set right before each search (searches are
 * synchronous), so the matches are exactly cheerio's. Selectors cheerio treats specially are left to cheerio: jQuery's
 * positional filters (`:first`, `:eq(1)`, …, cheerio-select's own), `:scope`, and selectors that start with a
 * combinator (`> a`, `+ p`), whose matches need not be inside the item. test/unit/field-selector.test.ts
 * holds the two to the same results on the fixture site's pages, test/corpus/field-selector.test.ts on real pages.
 *
 * Items spread over sibling elements (`extract.following_siblings`) search differently: see
 * {@link compileSiblingsSelector}.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { _compileToken as compileToken } from 'css-select';
import { isTraversal, parse, type Selector } from 'css-what';
import { findAll, findOne } from 'domutils';
import { isTag, type AnyNode, type Element, type ParentNode } from 'domhandler';

/** cheerio-select's positional filters (cheerio-select/lib/esm/positionals.js). */
const POSITIONAL = new Set(['first', 'last', 'eq', 'gt', 'nth', 'lt', 'even', 'odd']);

/** The element searched now; the `:sai-scope` pseudo-class matches it alone. */
let scope: AnyNode | null = null;

const OPTIONS = {
  xmlMode: false,
  // The pseudo-class reads `scope`, which changes from search to search: no result may be cached across them.
  cacheResults: false,
  relativeSelector: false,
  pseudos: { 'sai-scope': (el: Element) => el === scope },
};

function needsCheerio(tokens: readonly Selector[]): boolean {
  return tokens.some((t) => t.type === 'pseudo' && (POSITIONAL.has(t.name) || t.name === 'scope'
    || (Array.isArray(t.data) && t.data.some((inner) => needsCheerio(inner)))));
}

/** A compiled field selector: finds the first match or every match inside an element. */
export interface FieldSelector {
  /** The first match inside `item` (its descendants, in document order), or null. */
  first(item: ParentNode): Element | null;
  /** Every match inside `item`, in document order. */
  all(item: ParentNode): Element[];
}

/**
 * Compiles a field's selector.
 * @returns null for a selector cheerio should run itself (see the file's comment) or one that does not parse
 *   (parseConfig refused it already).
 */
export function compileFieldSelector(selector: string): FieldSelector | null {
  let groups: Selector[][];
  try {
    groups = parse(selector);
  } catch {
    return null;
  }
  if (!groups.length || groups.some((g) => !g.length || isTraversal(g[0]!) || needsCheerio(g))) return null;
  // As css-select absolutizes a selector for cheerio's `.find()` on an element: `:scope`, then its "flexible
  // descendant" combinator, which lets the item itself match the selector's first compound (`div *` inside a div).
  const scoped = groups.map((g) => [{ type: 'pseudo', name: 'sai-scope', data: null }, { type: '_flexibleDescendant' }, ...g] as unknown as Selector[]);
  const inItem = compileToken<AnyNode, Element>(scoped, OPTIONS as never);
  // The whole document (a single item, a detail page): every element is inside it, and a pseudo-class is only
  // ever tried on elements, so the document gets the selector without the scope.
  const inDocument = compileToken<AnyNode, Element>(groups.map((g) => [...g]), OPTIONS as never);
  const testFor = (item: ParentNode) => (isTag(item) ? inItem : inDocument);
  return {
    first(item) {
      scope = item;
      try {
        return findOne(testFor(item), item.children, true);
      } finally {
        scope = null;
      }
    },
    all(item) {
      scope = item;
      try {
        return findAll(testFor(item), item.children);
      } finally {
        scope = null;
      }
    },
  };
}

/**
 * A field's selector for an item made of several sibling elements (`extract.following_siblings`): the container
 * match and the siblings after it. Its matches are the elements the selector matches in the whole document
 * (ancestors outside the item allowed, as jQuery's `.find()` reads a selector) that are one of the item's
 * elements or inside one of them, in document order. `dt + dd` thus finds the `dd` of a `dt`/`dd` item, and
 * `tr.q + tr a` the links of the row after the `tr.q` row.
 */
export interface SiblingsSelector {
  /** The first match in the item's elements, or null. */
  first($: CheerioAPI, elements: readonly Element[]): Element | null;
  /** Every match in the item's elements, in document order. */
  all($: CheerioAPI, elements: readonly Element[]): Element[];
}

/** The item's elements and everything inside them, in document order (the elements are siblings, in order). */
function withDescendants(elements: readonly Element[]): Element[] {
  return elements.flatMap((el) => [el, ...findAll(() => true, el.children)]);
}

/** Whether `node` is one of `elements` or inside one of them. */
function within(node: AnyNode, elements: ReadonlySet<AnyNode>): boolean {
  for (let n: AnyNode | null = node; n; n = n.parent) if (elements.has(n)) return true;
  return false;
}

/**
 * Compiles a field's selector for items spread over sibling elements. A plain selector is compiled once and
 * tried on the item's elements and their descendants. Those cheerio treats specially are run by cheerio on each
 * item: jQuery's positional filters (`a:first`, `td:eq(1)`) pick among the item's matches, and a selector that
 * starts with a combinator or uses `:scope` (`> td`, `+ tr`) is relative to each of the item's elements; either
 * way only matches in the item are kept.
 */
export function compileSiblingsSelector(selector: string): SiblingsSelector {
  let groups: Selector[][] | null;
  try {
    groups = parse(selector);
  } catch {
    groups = null;
  }
  if (groups?.length && groups.every((g) => g.length && !isTraversal(g[0]!) && !needsCheerio(g))) {
    // Not made relative to an element: the selector reads the whole document, like `$(selector)`.
    const test = compileToken<AnyNode, Element>(groups, { xmlMode: false, relativeSelector: false } as never);
    return {
      first: (_$, elements) => findOne(test, elements as Element[], true),
      all: (_$, elements) => findAll(test, elements as Element[]),
    };
  }
  const relative = !groups || groups.some((g) => !g.length || isTraversal(g[0]!) || hasScope(g));
  const all = ($: CheerioAPI, elements: readonly Element[]): Element[] => {
    if (relative) {
      const inside = new Set<AnyNode>(elements);
      return $(elements as Element[]).find(selector).toArray().filter((el) => within(el, inside));
    }
    return $(withDescendants(elements)).filter(selector).toArray();
  };
  return { all, first: ($, elements) => all($, elements)[0] ?? null };
}

function hasScope(tokens: readonly Selector[]): boolean {
  return tokens.some((t) => t.type === 'pseudo' && (t.name === 'scope' || (Array.isArray(t.data) && t.data.some((inner) => hasScope(inner)))));
}
