/**
 * parse5 within the bounds of limits.ts: parseHtml()'s fallback and the reference its fast path is compared with.
 *
 * parse5 7.3.0 has no bound of its own. Its stack of open elements, its list of active formatting elements and
 * its tokenizer's duplicate-attribute check grow with the input, and most of its steps walk them: 400,000
 * unclosed `<span>`s followed by as many stray end tags, 1 MB of `<div>x` in a `<table>`, 300,000 distinct
 * `<b class=N>`, or one tag with 200,000 attributes each take minutes; 5 MB of `<b><i><p>` builds 4 GB of tree.
 * This subclass of its Parser (overriding methods parse5 marks protected or internal, and the methods of its
 * stack, list and tokenizer instances) adds:
 * - Chromium's depth rule ({@link MAX_DEPTH}): an element or comment inserted while more elements are open is
 *   attached to the parent of its intended parent (not when it is foster-parented; text is not moved);
 * - a stack of at most {@link MAX_OPEN_ELEMENTS}: when it is full, the oldest open elements above MAX_DEPTH
 *   leave it (never a `<template>`, whose content mode parse5 tracks apart);
 * - at most {@link MAX_FORMATTING_ELEMENTS} active formatting elements after the last marker, and at most
 *   MAX_OPEN_ELEMENTS entries in the whole list (markers of cells that left the stack would stay for ever);
 * - a count of the open elements of each tag, so that "has an element in scope" and an end tag that matches no
 *   open element answer without walking the stack;
 * - a duplicate-attribute check in constant time (a set of the tag's names once it has 8);
 * - {@link MAX_NODES} and {@link MAX_TEXT_CHARS}: parsing stops at the node or text that would pass them.
 * Under these bounds a token costs at most a walk of the bounded stack and list: the parse is linear in the
 * input. Below them (every page of the corpus) the tree is parse5's own.
 */
import { Parser, html as P5, type ParserOptions, type Token } from 'parse5';
import { adapter, type Htmlparser2TreeAdapterMap } from 'parse5-htmlparser2-tree-adapter';
import type { ChildNode, Document, Element, ParentNode } from 'domhandler';
import { MAX_DEPTH, MAX_FORMATTING_ELEMENTS, MAX_NODES, MAX_OPEN_ELEMENTS, MAX_TEXT_CHARS, markTruncated, type ParseLimit } from './limits.ts';
import { adoptAttributes, createElement } from './tree-builder.ts';

type TagToken = Token.TagToken;
type Attribute = Token.Attribute;
const $ = P5.TAG_ID;

/** Thrown out of the tokenizer to stop parsing at a bound; parseBounded() keeps the document built so far. */
class Stop {
  readonly limit: ParseLimit;
  constructor(limit: ParseLimit) {
    this.limit = limit;
  }
}

/** The node and text budget of one parse, spent by the tree adapter below. */
interface Budget {
  nodes: number;
  text: number;
}

/**
 * parse5-htmlparser2-tree-adapter, counting the nodes and characters it creates against the bounds. Elements are
 * made as the fast path makes them (tree-builder.ts: the same nodes, attribute maps V8 keeps in fast mode and one
 * shared namespace map for attributes without namespaces): a third less memory than the adapter's three
 * dictionary-mode maps per element.
 */
function countingAdapter(budget: Budget): typeof adapter {
  const node = (): void => {
    if (++budget.nodes > MAX_NODES) throw new Stop('nodes');
  };
  /** The part of `text` that fits, and whether that is all of it. */
  const fit = (text: string): [string, boolean] => {
    const left = MAX_TEXT_CHARS - budget.text;
    if (text.length <= left) {
      budget.text += text.length;
      return [text, true];
    }
    budget.text = MAX_TEXT_CHARS;
    return [text.slice(0, left), false];
  };
  return {
    ...adapter,
    createElement(tagName: string, namespaceURI: P5.NS, attrs: Attribute[]) {
      node();
      return createElement(tagName, namespaceURI, attrs);
    },
    adoptAttributes(recipient: Element, attrs: Attribute[]) {
      adoptAttributes(recipient, attrs);
    },
    createCommentNode(data: string) {
      node();
      return adapter.createCommentNode(data);
    },
    insertText(parentNode: ParentNode, text: string) {
      if (parentNode.children[parentNode.children.length - 1]?.type !== 'text') node();
      const [part, all] = fit(text);
      if (part) adapter.insertText(parentNode, part);
      if (!all) throw new Stop('text');
    },
    insertTextBefore(parentNode: ParentNode, text: string, referenceNode: ChildNode) {
      if (referenceNode.prev?.type !== 'text') node();
      const [part, all] = fit(text);
      if (part) adapter.insertTextBefore(parentNode, part, referenceNode);
      if (!all) throw new Stop('text');
    },
  };
}

/** The parse5 internals this module reaches (as they are in parse5 7.3.0's JavaScript). */
interface StackInternals {
  items: ParentNode[];
  tagIDs: P5.TAG_ID[];
  stackTop: number;
  current: ParentNode | undefined;
  currentTmplContentOrNode: ParentNode;
  push(element: Element, tagID: P5.TAG_ID): void;
  replace(oldElement: Element, newElement: Element): void;
  insertAfter(referenceElement: Element, newElement: Element, newElementID: P5.TAG_ID): void;
  hasInScope(tagName: P5.TAG_ID): boolean;
  hasInListItemScope(tagName: P5.TAG_ID): boolean;
  hasInButtonScope(tagName: P5.TAG_ID): boolean;
  hasInTableScope(tagName: P5.TAG_ID): boolean;
  hasInSelectScope(tagName: P5.TAG_ID): boolean;
  hasNumberedHeaderInScope(): boolean;
  hasTableBodyContextInTableScope(): boolean;
}
interface AfeInternals {
  entries: Array<{ type: number; element?: Element; token?: TagToken }>;
  pushElement(element: Element, token: TagToken): void;
  insertMarker(): void;
}
interface TokenizerInternals {
  currentToken: TagToken;
  currentAttr: Attribute;
  _leaveAttrName(): void;
}
interface ParserInternals {
  openElements: StackInternals;
  activeFormattingElements: AfeInternals;
  tokenizer: TokenizerInternals;
  document: Document;
  insertionMode: number;
  currentNotInHTML: boolean;
  skipNextNewLine: boolean;
  currentToken: unknown;
  _shouldFosterParentOnInsertion(): boolean;
}

/** Open elements dropped from the stack at once when it is full (half of what sits above MAX_DEPTH): O(1) a push. */
const DROP_AT_ONCE = (MAX_OPEN_ELEMENTS - MAX_DEPTH) / 2;
/** Once a tag has this many attributes, its duplicate check uses a set of their names. */
const ATTR_SET_FROM = 8;
/** ASCII lower case (names are lower case but for the adjusted names of SVG and MathML elements). */
function lowerCase(name: string): string {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return name.toLowerCase();
  }
  return name;
}

/** parse5's EntryType of formatting-element-list.js. */
const MARKER_TYPE = 0;
/** parse5's InsertionMode values (parser/index.js; not exported). */
const MODE = { IN_BODY: 6, IN_TABLE: 8, IN_CAPTION: 10, IN_TABLE_BODY: 12, IN_ROW: 13, IN_CELL: 14, IN_SELECT: 15, IN_SELECT_IN_TABLE: 16, IN_TEMPLATE: 17 };
/**
 * The insertion modes where an end tag outside {@link END_TAGS_APART} only closes the open element of its name, if
 * any: "any other end tag" of in body (the generic loop), of the table modes (in body, with foster parenting), of
 * in cell and in caption (in body), of the select modes and in template (ignored).
 */
const ORDINARY_END_TAG_MODES = new Set([MODE.IN_BODY, MODE.IN_TABLE, MODE.IN_CAPTION, MODE.IN_TABLE_BODY, MODE.IN_ROW, MODE.IN_CELL, MODE.IN_SELECT, MODE.IN_SELECT_IN_TABLE, MODE.IN_TEMPLATE]);
/** End tags some insertion mode handles apart (parse5's endTagIn* functions): never skipped. */
const END_TAGS_APART = new Set<P5.TAG_ID>([
  $.A, $.B, $.I, $.S, $.U, $.EM, $.TT, $.BIG, $.CODE, $.FONT, $.NOBR, $.SMALL, $.STRIKE, $.STRONG, $.P, $.DL, $.UL, $.OL,
  $.DIR, $.DIV, $.NAV, $.PRE, $.MAIN, $.MENU, $.ASIDE, $.BUTTON, $.CENTER, $.FIGURE, $.FOOTER, $.HEADER, $.HGROUP,
  $.DIALOG, $.ADDRESS, $.ARTICLE, $.DETAILS, $.SEARCH, $.SECTION, $.SUMMARY, $.LISTING, $.FIELDSET, $.BLOCKQUOTE,
  $.FIGCAPTION, $.LI, $.DD, $.DT, $.H1, $.H2, $.H3, $.H4, $.H5, $.H6, $.BR, $.BODY, $.HTML, $.HEAD, $.FORM, $.APPLET,
  $.OBJECT, $.MARQUEE, $.TEMPLATE, $.TABLE, $.CAPTION, $.COL, $.COLGROUP, $.TBODY, $.TFOOT, $.THEAD, $.TR, $.TD, $.TH,
  $.SELECT, $.OPTION, $.OPTGROUP, $.SCRIPT, $.NOSCRIPT, $.FRAMESET,
]);

class BoundedParser extends Parser<Htmlparser2TreeAdapterMap> {
  /**
   * Open elements by tag ID (an element's ID is its lower-cased name's: foreign elements' adjusted names differ from
   * their tokens' in case only), and by name for tags without an ID (how parse5's end tag loop matches them). A
   * count of 0 means no open element of that tag.
   */
  private readonly openByID: number[] = [];
  private readonly openByName = new Map<string, number>();

  constructor(options: ParserOptions<Htmlparser2TreeAdapterMap>) {
    super(options);
    const self = this as unknown as ParserInternals;
    const parser = this;
    const openByID = this.openByID;
    const none = (tagID: P5.TAG_ID): boolean => !openByID[tagID];

    // The stack of open elements: at most MAX_OPEN_ELEMENTS, scope checks by count first.
    const stack = self.openElements;
    const push = stack.push;
    stack.push = function boundedPush(this: StackInternals, element: Element, tagID: P5.TAG_ID): void {
      if (this.stackTop + 1 >= MAX_OPEN_ELEMENTS) dropOldest(this);
      push.call(this, element, tagID);
    };
    /** Drops DROP_AT_ONCE of the oldest open elements above MAX_DEPTH (templates stay) from the stack, not the tree. */
    const dropOldest = (s: StackInternals): void => {
      let kept = MAX_DEPTH;
      let dropped = 0;
      for (let i = MAX_DEPTH; i <= s.stackTop; i++) {
        if (dropped < DROP_AT_ONCE && i < s.stackTop && s.tagIDs[i] !== $.TEMPLATE) {
          this.onItemPop(s.items[i]!, false);
          dropped++;
          continue;
        }
        s.items[kept] = s.items[i]!;
        s.tagIDs[kept] = s.tagIDs[i]!;
        kept++;
      }
      if (dropped === 0) throw new Stop('depth');
      s.items.length = kept;
      s.tagIDs.length = kept;
      s.stackTop = kept - 1;
    };
    const insertAfter = stack.insertAfter;
    stack.insertAfter = function countedInsertAfter(this: StackInternals, reference: Element, newElement: Element, newElementID: P5.TAG_ID): void {
      insertAfter.call(this, reference, newElement, newElementID);
      // parse5 reports the current node as pushed here, not the new element (unless it is the current node).
      const current = this.current as Element | undefined;
      if (current !== newElement) {
        if (current) parser.uncount(current);
        parser.count(newElement);
      }
    };
    // With the root <html> at the bottom of the stack, a tag with no open element is in no scope.
    const rooted = (s: StackInternals): boolean => s.stackTop >= 0 && s.tagIDs[0] === $.HTML;
    for (const name of ['hasInScope', 'hasInListItemScope', 'hasInButtonScope', 'hasInTableScope', 'hasInSelectScope'] as const) {
      const check = stack[name];
      stack[name] = function countedScope(this: StackInternals, tagName: P5.TAG_ID): boolean {
        return tagName !== $.UNKNOWN && none(tagName) && rooted(this) ? false : check.call(this, tagName);
      };
    }
    const headers = stack.hasNumberedHeaderInScope;
    stack.hasNumberedHeaderInScope = function countedHeaders(this: StackInternals): boolean {
      const any = !none($.H1) || !none($.H2) || !none($.H3) || !none($.H4) || !none($.H5) || !none($.H6);
      return !any && rooted(this) ? false : headers.call(this);
    };
    const tableBody = stack.hasTableBodyContextInTableScope;
    stack.hasTableBodyContextInTableScope = function countedTableBody(this: StackInternals): boolean {
      return none($.TBODY) && none($.THEAD) && none($.TFOOT) && rooted(this) ? false : tableBody.call(this);
    };

    // The list of active formatting elements (newest first in parse5).
    const afe = self.activeFormattingElements;
    afe.pushElement = function boundedPushElement(this: AfeInternals, element: Element, token: TagToken): void {
      ensureNoahArkCondition(this.entries, element, token);
      const entries = this.entries;
      let n = 0;
      while (n < entries.length && entries[n]!.type !== MARKER_TYPE) n++;
      if (n >= MAX_FORMATTING_ELEMENTS) entries.splice(n - 1, 1);
      else if (entries.length >= MAX_OPEN_ELEMENTS) entries.pop();
      entries.unshift({ type: 1, element, token });
    };
    // Markers too: the cells that left the stack never close, and their markers would stay for ever.
    const insertMarker = afe.insertMarker;
    afe.insertMarker = function boundedInsertMarker(this: AfeInternals): void {
      if (this.entries.length >= MAX_OPEN_ELEMENTS) this.entries.pop();
      insertMarker.call(this);
    };

    // The tokenizer's duplicate-attribute check (the first of two alike wins), in constant time.
    const names = new WeakMap<TagToken, Set<string>>();
    self.tokenizer._leaveAttrName = function leaveAttrName(this: TokenizerInternals): void {
      const token = this.currentToken;
      const attrs = token.attrs;
      const name = this.currentAttr.name;
      if (attrs.length < ATTR_SET_FROM) {
        for (let i = 0; i < attrs.length; i++) if (attrs[i]!.name === name) return;
      } else {
        let set = names.get(token);
        if (!set) names.set(token, (set = new Set(attrs.map((a) => a.name))));
        if (set.has(name)) return;
        set.add(name);
      }
      attrs.push(this.currentAttr);
    };
  }

  private count(element: Element, delta = 1): void {
    const id = P5.getTagID(lowerCase(element.name));
    if (id !== $.UNKNOWN) this.openByID[id] = (this.openByID[id] ?? 0) + delta;
    else this.openByName.set(element.name, (this.openByName.get(element.name) ?? 0) + delta);
  }

  private uncount(element: Element): void {
    this.count(element, -1);
  }

  /** How many elements of an end tag's tag are open (the tag ID's, or the name's for a tag without an ID). */
  private openOf(token: TagToken): number {
    return (token.tagID === $.UNKNOWN ? this.openByName.get(token.tagName) : this.openByID[token.tagID]) ?? 0;
  }

  override onItemPush(node: ParentNode, tid: number, isTop: boolean): void {
    this.count(node as Element);
    super.onItemPush(node, tid, isTop);
  }

  override onItemPop(node: ParentNode, isTop: boolean): void {
    this.uncount(node as Element);
    super.onItemPop(node, isTop);
  }

  /**
   * An end tag that only closes an open element of its name, when none is open, does nothing: answered without
   * parse5's walk down the stack (400,000 open `<span>`s and 600,000 `</x>` would cost 2.4e11 steps).
   */
  override onEndTag(token: TagToken): void {
    const self = this as unknown as ParserInternals;
    if (
      !self.currentNotInHTML &&
      ORDINARY_END_TAG_MODES.has(self.insertionMode) &&
      !END_TAGS_APART.has(token.tagID) &&
      this.openOf(token) === 0
    ) {
      self.skipNextNewLine = false;
      self.currentToken = token;
      return;
    }
    super.onEndTag(token);
  }

  /** Chromium's depth rule for elements (HTMLConstructionSite::AttachLater). */
  override _attachElementToTree(element: Element, location: Token.LocationWithAttributes | null): void {
    const self = this as unknown as ParserInternals;
    if (self.openElements.stackTop + 1 > MAX_DEPTH && !self._shouldFosterParentOnInsertion()) {
      const parent = self.openElements.currentTmplContentOrNode?.parent;
      if (parent) {
        adapter.appendChild(parent, element);
        return;
      }
    }
    super._attachElementToTree(element, location);
  }

  /** Chromium's depth rule for comments (attached as elements are). */
  override _appendCommentNode(token: Token.CommentToken, parent: ParentNode): void {
    const self = this as unknown as ParserInternals;
    if (self.openElements.stackTop + 1 > MAX_DEPTH && parent.parent) parent = parent.parent;
    super._appendCommentNode(token, parent);
  }
}

/**
 * parse5's FormattingElementList._ensureNoahArkCondition (newest-first entries), reading each entry's attributes
 * from its token: parse5 reads them from the element (`getAttrList`, a new array a call through domhandler's
 * `attributes` getter), up to 64 times a push. The entries' elements were made from their tokens' attributes.
 */
function ensureNoahArkCondition(entries: AfeInternals['entries'], newElement: Element, token: TagToken): void {
  const NOAH_ARK_CAPACITY = 3;
  if (entries.length < NOAH_ARK_CAPACITY) return;
  const neAttrs = token.attrs;
  const candidates: Array<{ idx: number; attrs: Attribute[] }> = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.type === MARKER_TYPE) break;
    const element = entry.element!;
    if (element.name === newElement.name && element.namespace === newElement.namespace && entry.token!.attrs.length === neAttrs.length) {
      candidates.push({ idx: i, attrs: entry.token!.attrs });
    }
  }
  if (candidates.length < NOAH_ARK_CAPACITY) return;
  const neAttrsMap = new Map(neAttrs.map((a) => [a.name, a.value]));
  let validCandidates = 0;
  // As parse5: the indices are not adjusted after a removal.
  for (const candidate of candidates) {
    if (candidate.attrs.every((a) => neAttrsMap.get(a.name) === a.value)) {
      validCandidates += 1;
      if (validCandidates >= NOAH_ARK_CAPACITY) entries.splice(candidate.idx, 1);
    }
  }
}

/**
 * Parses a whole document with parse5 (htmlparser2 tree adapter, scripting enabled) within the bounds of limits.ts.
 * A document cut short by a bound is recorded for parseTruncation().
 */
export function parseBounded(html: string): Document {
  const budget: Budget = { nodes: 0, text: 0 };
  const parser = new BoundedParser({ treeAdapter: countingAdapter(budget), scriptingEnabled: true });
  try {
    parser.tokenizer.write(html, true);
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    markTruncated(parser.document, err.limit);
  }
  return parser.document as Document;
}
