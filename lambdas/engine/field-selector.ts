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
 * holds the two to the same results on real pages.
 */
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
