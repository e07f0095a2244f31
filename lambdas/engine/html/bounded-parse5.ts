/**
 * parse5 within the bounds of limits.ts: parseHtml()'s fallback and the reference its fast path is compared with.
 *
 * parse5 8 keeps its own work per token bounded where parse5 7 walked its structures: its stack of open elements
 * indexes itself once it is 64 deep (scope checks, end tags that match nothing and the reset of the insertion mode
 * answer in constant time), its list of active formatting elements is a linked list indexed by tag and attributes
 * (Noah's Ark in constant time), and its tokenizer checks duplicate attributes against a set once a tag has 64.
 * It still bounds neither the tree nor the memory: 100,000 nested `<div>`s make a tree 100,000 deep (every recursive
 * walk of it overflows the stack), 300,000 distinct `<b class=N>` stay active and are reopened in every block, and
 * 5 MB of `<b><i><p>` builds 4 GB of tree. This subclass of its Parser (overriding methods parse5 marks protected or
 * internal, and the methods of its stack and list instances) adds:
 * - Chromium's depth rule ({@link MAX_DEPTH}): an element or comment inserted while more elements are open is
 *   attached to the parent of its intended parent (not when it is foster-parented; text is not moved);
 * - a stack of at most {@link MAX_OPEN_ELEMENTS}: when it is full, the oldest open elements above MAX_DEPTH
 *   leave it (never a `<template>`, whose content mode parse5 tracks apart);
 * - at most {@link MAX_FORMATTING_ELEMENTS} active formatting elements after the last marker;
 * - {@link MAX_NODES} and {@link MAX_TEXT_CHARS}: parsing stops at the node or text that would pass them.
 * Under these bounds a token costs at most a walk of the bounded stack and list: the parse is linear in the
 * input. Below them (every page of the corpus) the tree is parse5's own.
 *
 * The whole list of active formatting elements is not bounded apart: every walk of it stops at the last marker,
 * and each entry is an element or a marker inserted with an element, so it holds at most twice MAX_NODES entries.
 */
import { Parser, html as P5, type ParserOptions, type Token } from 'parse5';
import { adapter, type Htmlparser2TreeAdapterMap } from 'parse5-htmlparser2-tree-adapter';
import type { ChildNode, Document, Element, ParentNode } from 'domhandler';
import { MAX_DEPTH, MAX_FORMATTING_ELEMENTS, MAX_NODES, MAX_OPEN_ELEMENTS, MAX_TEXT_CHARS, markTruncated, type ParseLimit } from './limits.ts';
import { adoptAttributes, createElement } from './tree-builder.ts';

type Map5 = Htmlparser2TreeAdapterMap;
type Attribute = Token.Attribute;
type TagToken = Token.TagToken;
/** parse5's stack of open elements, list of active formatting elements and insertion location (not exported by name). */
type Stack = Parser<Map5>['openElements'];
type FormattingList = Parser<Map5>['activeFormattingElements'];
type InsertionLocation = ReturnType<Parser<Map5>['_getInsertionLocation']>;
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
  const fitTextBudget = (text: string): [string, boolean] => {
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
      const [part, all] = fitTextBudget(text);
      if (part) adapter.insertText(parentNode, part);
      if (!all) throw new Stop('text');
    },
    insertTextBefore(parentNode: ParentNode, text: string, referenceNode: ChildNode) {
      if (referenceNode.prev?.type !== 'text') node();
      const [part, all] = fitTextBudget(text);
      if (part) adapter.insertTextBefore(parentNode, part, referenceNode);
      if (!all) throw new Stop('text');
    },
  };
}

/** Open elements dropped from the stack at once when it is full (half of what sits above MAX_DEPTH). */
const DROP_AT_ONCE = (MAX_OPEN_ELEMENTS - MAX_DEPTH) / 2;
/** parse5's EntryType.Element of formatting-element-list.js (not exported). */
const ELEMENT_ENTRY = 1;

/** parse5's stack method that pops the current element without telling the parser (private in its typings). */
interface StackInternals {
  _popCurrent(): void;
}

/**
 * Drops DROP_AT_ONCE of the oldest open elements above MAX_DEPTH (never the current one, nor a template) from the
 * stack, not the tree. The elements above MAX_DEPTH are popped without telling the parser and the kept ones pushed
 * back in order (the last push makes the current node current again, as it was); the parser is told of the dropped
 * ones as parse5's own removeAt tells it. Popping and pushing are constant time on parse5's indexed stack, where
 * removeAt walks every open element above the one it removes to update its counts.
 * @param push parse5's own push (not the bounded one).
 * @param parser told of each dropped element (onItemPop, not at the top).
 * @throws Stop('depth') when nothing can be dropped (more than MAX_OPEN_ELEMENTS nested templates).
 */
function dropOldest(stack: Stack, push: Stack['push'], parser: Parser<Map5>): void {
  const above: Array<[Element, P5.TAG_ID]> = []; // top first
  for (let i = stack.stackTop, n = stack.depth; n > MAX_DEPTH; i = stack.slotBelow(i), n--) {
    above.push([stack.items[i] as Element, stack.tagIDs[i]!]);
  }
  above.reverse();
  const last = above.length - 1;
  const dropped = new Set<number>();
  for (let j = 0; j < last && dropped.size < DROP_AT_ONCE; j++) if (above[j]![1] !== $.TEMPLATE) dropped.add(j);
  if (dropped.size === 0) throw new Stop('depth');
  const internals = stack as unknown as StackInternals;
  for (let j = 0; j <= last; j++) internals._popCurrent();
  for (let j = 0; j <= last; j++) if (!dropped.has(j)) push.call(stack, above[j]![0], above[j]![1]);
  for (const j of dropped) parser.onItemPop(above[j]![0], false);
}

/**
 * After parse5's pushElement (which applies Noah's Ark itself): past MAX_FORMATTING_ELEMENTS entries after the last
 * marker, the oldest of them leaves the list (it stays open and in the tree; it is only no longer reopened).
 */
function capFormattingElements(list: FormattingList): void {
  let count = 0;
  let oldest = list.newest;
  for (let entry = list.newest; entry !== null && entry.type === ELEMENT_ENTRY; entry = entry.older) {
    count++;
    oldest = entry;
  }
  if (count > MAX_FORMATTING_ELEMENTS && oldest !== null && oldest.type === ELEMENT_ENTRY) list.removeEntry(oldest);
}

class BoundedParser extends Parser<Map5> {
  constructor(options: ParserOptions<Map5>) {
    super(options);
    // The stack of open elements: at most MAX_OPEN_ELEMENTS.
    const stack = this.openElements;
    const push = stack.push;
    const parser = this;
    stack.push = function boundedPush(this: Stack, element: Element, tagID: P5.TAG_ID): void {
      if (this.depth >= MAX_OPEN_ELEMENTS) dropOldest(this, push, parser);
      push.call(this, element, tagID);
    };
    // The list of active formatting elements: at most MAX_FORMATTING_ELEMENTS after the last marker.
    const list = this.activeFormattingElements;
    const pushElement = list.pushElement;
    list.pushElement = function boundedPushElement(this: FormattingList, element: Element, token: TagToken): void {
      pushElement.call(this, element, token);
      capFormattingElements(this);
    };
  }

  /** Chromium's depth rule for elements (HTMLConstructionSite::AttachLater): past MAX_DEPTH, the intended parent's parent. */
  override _getInsertionLocation(): InsertionLocation {
    if (this.openElements.depth > MAX_DEPTH && !this._shouldFosterParentOnInsertion()) {
      const parent = this.openElements.currentTmplContentOrNode?.parent;
      if (parent) return { parent, beforeElement: null };
    }
    return super._getInsertionLocation();
  }

  /** Chromium's depth rule for comments (attached as elements are). */
  override _appendCommentNode(token: Token.CommentToken, parent: ParentNode): void {
    if (this.openElements.depth > MAX_DEPTH && parent.parent) parent = parent.parent;
    super._appendCommentNode(token, parent);
  }
}

/**
 * Parses a whole document with parse5 (htmlparser2 tree adapter, scripting enabled) within the bounds of limits.ts.
 * A document cut short by a bound is recorded for parseTruncation().
 * @param html the document, any string (character references of any length, NUL characters).
 * @returns the domhandler Document built (up to the bound that stopped it, if one did).
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
