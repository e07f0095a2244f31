/**
 * The fast path of parseHtml(): htmlparser2's Tokenizer (fast, index-based callbacks) drives a port of
 * parse5's tree construction (WHATWG HTML, "13.2.6 Tree construction",
 * https://html.spec.whatwg.org/multipage/parsing.html#tree-construction), restricted to the subset that
 * real pages use. It builds the nodes parse5-htmlparser2-tree-adapter builds (its createElement, appendChild
 * and insertText are mirrored below; the rest goes through the adapter), so a tree it returns is the tree
 * `parse5.parse(html, { treeAdapter: adapter })` returns.
 *
 * Outside the subset it gives up: it throws BAIL, and parse.ts parses the whole document with parse5. It
 * gives up wherever the spec would need
 * - the list of active formatting elements reconstructed, or the adoption agency algorithm beyond its
 *   no-furthest-block case (misnested formatting elements such as `<b><p></b>`),
 * - foster parenting (text or elements where a table may not hold them),
 * - templates, framesets, `<plaintext>`,
 * - any bound of limits.ts: more than MAX_DEPTH open elements (where Chromium's depth rule would attach an
 *   element elsewhere), MAX_FORMATTING_ELEMENTS active formatting elements after a marker, MAX_NODES nodes or
 *   MAX_TEXT_CHARS characters of text (bounded-parse5.ts applies them). Below them every step walks at most
 *   MAX_DEPTH open elements and MAX_FORMATTING_ELEMENTS entries, so the fast path is linear in the input too;
 * - an input the two tokenizers read differently (see the callbacks below and docs/html-parsing.md): `</ x>`,
 *   `</>`, `<!>`, a comment ended by `--!>` or by the end of the input, end tags with quoted attributes, an
 *   input that ends inside a tag name or a declaration, CDATA holding `>` in HTML content, a character
 *   reference htmlparser2 decodes otherwise than the spec, one in a textarea or a self-closed title.
 *
 * parse5 8.1.1 is the reference, including where it departs from today's spec (implied end tags "thoroughly" in
 * generateImpliedEndTagsWithExclusion, select parsing before customizable select: the 25 html5lib document tests
 * parse5 fails are all select tests). The code below follows parse5's parser/index.js and open-element-stack.js
 * function by function, under the same names, so the two can be read side by side; where parse5 8 indexes its stack
 * (indexOfTopmost, hasSpecialElementAbove, …) this walks the stack, which the fast path keeps at most MAX_DEPTH deep.
 * parse5 8 changed behaviour from 7.3.0 in what this subset reaches (ported here): an element's namespace counts in
 * the "any other end tag" loop, li/dd/dt, the reset of the insertion mode, popping to a tag and implied end tags; the
 * adoption agency pops a current node of the tag that is not in the list (its step 2) and looks for that very entry's
 * element in scope; a foreign end tag closes the topmost foreign element of its name above every HTML element; and
 * `&#13;` is a whitespace character token.
 *
 * htmlparser2 10.1.0's Tokenizer is used through five private fields (index, sectionStart, entityStart,
 * isSpecial, state): the builder reads raw text, RCDATA and script data itself (raw-text.ts) and moves the
 * tokenizer past it, checks the span of each character reference, and reads the tokenizer's state at the end
 * of the input. parse.ts checks at load that htmlparser2's version is in the range this was verified on and that
 * these fields exist and work, and falls back to parse5 for every document otherwise.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { adapter } from 'parse5-htmlparser2-tree-adapter';
import { foreignContent, html as P5, Token } from 'parse5';
import { Document, Element, Text, type ChildNode, type ParentNode } from 'domhandler';
import { findRawTextEnd, findScriptEnd } from './raw-text.ts';
import { referenceDecodedRight } from './references.ts';
import { knownName, NAME_OF, TAG_ID_OF } from './names.ts';
import { MAX_DEPTH, MAX_FORMATTING_ELEMENTS, MAX_NODES, MAX_OPEN_ELEMENTS as MAX_AFE_ENTRIES, MAX_TEXT_CHARS } from './limits.ts';

type TagToken = Token.TagToken;
type Attribute = Token.Attribute;
type CharacterToken = Token.CharacterToken;
type CommentToken = Token.CommentToken;
type AnyToken = TagToken | CharacterToken | CommentToken | DoctypeToken | EofToken;
const TokenType = Token.TokenType;
const $ = P5.TAG_ID;
type TagId = P5.TAG_ID;
const NS = P5.NS;
const getTagID = P5.getTagID;
const SPECIAL_ELEMENTS = P5.SPECIAL_ELEMENTS;
const NUMBERED_HEADERS = P5.NUMBERED_HEADERS;
const DOCUMENT_MODE = P5.DOCUMENT_MODE;

/** A doctype as parse5 reads it (name, ids and the document mode it implies), from parse.ts's cache. */
export interface DoctypeInfo {
  name: string;
  publicId: string;
  systemId: string;
  mode: P5.DOCUMENT_MODE;
}
interface DoctypeToken {
  type: typeof TokenType.DOCTYPE;
  info: DoctypeInfo;
}
interface EofToken {
  type: typeof TokenType.EOF;
}
const EOF_TOKEN: EofToken = { type: TokenType.EOF };

/** Thrown (one shared instance, no stack) when the fast path gives up; `reason` says why. */
class Bail {
  reason = '';
}
export const BAIL = new Bail();
function bail(reason: string): never {
  BAIL.reason = reason;
  throw BAIL;
}

/** The fields of htmlparser2's Tokenizer the builder reads and moves (private in its typings). */
export interface TokenizerInternals {
  index: number;
  sectionStart: number;
  entityStart: number;
  isSpecial: boolean;
  state: number;
}
/** htmlparser2 10.1.0 Tokenizer states (its `State` enum is not exported). */
const TK = {
  Text: 1,
  BeforeTagName: 2,
  InTagName: 3,
  BeforeClosingTagName: 5,
  InClosingTagName: 6,
  BeforeAttributeName: 8,
  InAttributeValueNq: 14,
  InCommentLike: 21,
  InSpecialTag: 25,
  InEntity: 26,
} as const;

const MODE = {
  INITIAL: 0,
  BEFORE_HTML: 1,
  BEFORE_HEAD: 2,
  IN_HEAD: 3,
  AFTER_HEAD: 5,
  IN_BODY: 6,
  TEXT: 7,
  IN_TABLE: 8,
  IN_TABLE_TEXT: 9,
  IN_CAPTION: 10,
  IN_COLUMN_GROUP: 11,
  IN_TABLE_BODY: 12,
  IN_ROW: 13,
  IN_CELL: 14,
  IN_SELECT: 15,
  IN_SELECT_IN_TABLE: 16,
  AFTER_BODY: 18,
  AFTER_AFTER_BODY: 21,
} as const;
type Mode = (typeof MODE)[keyof typeof MODE];

const RAW = { RCDATA: 1, RAWTEXT: 2, SCRIPT: 3 } as const;
type RawKind = (typeof RAW)[keyof typeof RAW];

// open-element-stack.js
const IMPLICIT_END_TAG_REQUIRED = new Set<TagId>([$.DD, $.DT, $.LI, $.OPTGROUP, $.OPTION, $.P, $.RB, $.RP, $.RT, $.RTC]);
const IMPLICIT_END_TAG_REQUIRED_THOROUGHLY = new Set<TagId>([
  ...IMPLICIT_END_TAG_REQUIRED,
  $.CAPTION,
  $.COLGROUP,
  $.TBODY,
  $.TD,
  $.TFOOT,
  $.TH,
  $.THEAD,
  $.TR,
]);
const SCOPING_ELEMENTS_HTML = new Set<TagId>([$.APPLET, $.CAPTION, $.HTML, $.MARQUEE, $.OBJECT, $.TABLE, $.TD, $.TEMPLATE, $.TH]);
const SCOPING_ELEMENTS_HTML_LIST = new Set<TagId>([...SCOPING_ELEMENTS_HTML, $.OL, $.UL]);
const SCOPING_ELEMENTS_HTML_BUTTON = new Set<TagId>([...SCOPING_ELEMENTS_HTML, $.BUTTON]);
const SCOPING_ELEMENTS_MATHML = new Set<TagId>([$.ANNOTATION_XML, $.MI, $.MN, $.MO, $.MS, $.MTEXT]);
const SCOPING_ELEMENTS_SVG = new Set<TagId>([$.DESC, $.FOREIGN_OBJECT, $.TITLE]);
const TABLE_ROW_CONTEXT = new Set<TagId>([$.TR, $.TEMPLATE, $.HTML]);
const TABLE_BODY_CONTEXT = new Set<TagId>([$.TBODY, $.TFOOT, $.THEAD, $.TEMPLATE, $.HTML]);
const TABLE_CONTEXT = new Set<TagId>([$.TABLE, $.TEMPLATE, $.HTML]);
const TABLE_CELLS = new Set<TagId>([$.TD, $.TH]);
// parser/index.js
/** The elements that can select an insertion mode when it is reset (parse5 8's INSERTION_MODE_TAGS). */
const INSERTION_MODE_TAGS = new Set<TagId>([
  $.TR, $.TBODY, $.THEAD, $.TFOOT, $.CAPTION, $.COLGROUP, $.TABLE, $.FRAMESET, $.SELECT, $.TEMPLATE, $.TD, $.TH, $.HEAD, $.BODY, $.HTML,
]);
const TABLE_STRUCTURE_TAGS = new Set<TagId>([$.TABLE, $.TBODY, $.TFOOT, $.THEAD, $.TR]);
const TABLE_VOID_ELEMENTS = new Set<TagId>([$.CAPTION, $.COL, $.COLGROUP, $.TBODY, $.TD, $.TFOOT, $.TH, $.THEAD, $.TR]);
const EMPTY_ATTRS: Attribute[] = [];
const SPECIAL_HTML = SPECIAL_ELEMENTS[NS.HTML];
const SPECIAL_SVG = SPECIAL_ELEMENTS[NS.SVG];
const SPECIAL_MATHML = SPECIAL_ELEMENTS[NS.MATHML];
/** parse5's `_isSpecialElement` without the lookup by namespace string. */
function isSpecialElement(element: Element, tagID: TagId): boolean {
  const ns = element.namespace;
  if (ns === NS.HTML) return SPECIAL_HTML.has(tagID);
  if (ns === NS.SVG) return SPECIAL_SVG.has(tagID);
  return ns === NS.MATHML && SPECIAL_MATHML.has(tagID);
}

const NOAH_ARK_CAPACITY = 3;
/** Once a tag has this many attributes, its duplicate check uses a set of their names (bounded-parse5.ts does the same). */
const ATTR_SET_FROM = 8;
/** An entry of the list of active formatting elements (parse5 also keeps the token, to recreate the element). */
interface AfeEntry {
  element: Element;
}
/** The marker of the list of active formatting elements. */
const MARKER = null;
type AfeItem = AfeEntry | typeof MARKER;

const UPPER = /[A-Z]+/g;
/** ASCII-only lower-casing, as the tokenizer does for tag and attribute names. */
function lowerAscii(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return s.replace(UPPER, (m) => m.toLowerCase());
  }
  return s;
}

/** The input stream preprocessing (CR LF and lone CR become LF), applied to each slice taken from the source. */
function normalizeNewlines(s: string): string {
  let cr = s.indexOf('\r');
  if (cr === -1) return s;
  // By hand: most slices are short, and a RegExp replace costs more to set up than to run on them.
  let out = '';
  let from = 0;
  do {
    out += s.slice(from, cr);
    if (s.charCodeAt(cr + 1) === 0x0a) {
      from = cr + 1; // keep the LF of CR LF
    } else {
      out += '\n';
      from = cr + 1;
    }
    cr = s.indexOf('\r', from);
  } while (cr !== -1);
  return out + s.slice(from);
}

/**
 * Whitespace for tree construction: tab, LF, FF, CR and space (parse5 8's tokenizer, as the spec). The source text is
 * normalised (no CR left), so a CR here came from `&#13;`: a whitespace character token, as in parse5 8.
 */
function isWhitespaceCode(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}

/**
 * The attribute maps' constructor. parse5-htmlparser2-tree-adapter makes them with `Object.create(null)`: no
 * inherited property, so an attribute may be called `constructor` or `__proto__`. Objects from this
 * constructor inherit nothing either (their prototype is an empty object whose own prototype is null), and
 * V8 keeps them in fast mode where it keeps `Object.create(null)` objects in dictionary mode: about 40 ns less
 * per element built, and faster attribute reads in selectors. Only `Object.getPrototypeOf` tells them apart.
 */
const AttributeMap = function AttributeMap() {} as unknown as new () => Record<string, string>;
AttributeMap.prototype = Object.create(null) as object;

// parse5-htmlparser2-tree-adapter's createElement, appendChild and insertText, node for node (the same classes,
// properties and property order), without the calls through the adapter object on the hottest paths.
// bounded-parse5.ts builds its elements with these two as well.
export function createElement(tagName: string, namespaceURI: string, attrs: Attribute[]): Element {
  const attribs = new AttributeMap();
  let namespaced = false;
  for (let i = 0; i < attrs.length; i++) {
    const attr = attrs[i]!;
    attribs[attr.name] = attr.value;
    if (attr.namespace !== undefined || attr.prefix !== undefined) namespaced = true;
  }
  const node = new Element(tagName, attribs, []);
  node.namespace = namespaceURI;
  if (namespaced) {
    const attribsNamespace = new AttributeMap();
    const attribsPrefix = new AttributeMap();
    for (let i = 0; i < attrs.length; i++) {
      const attr = attrs[i]!;
      attribsNamespace[attr.name] = attr.namespace!;
      attribsPrefix[attr.name] = attr.prefix!;
    }
    node['x-attribsNamespace'] = attribsNamespace;
    node['x-attribsPrefix'] = attribsPrefix;
  } else {
    // No attribute of this element has a namespace or a prefix (every attribute outside foreign content): parse5
    // gives it two maps of undefined values; one shared empty map reads the same for every name and spares
    // the garbage of two objects per element.
    node['x-attribsNamespace'] = NO_NAMESPACES;
    node['x-attribsPrefix'] = NO_NAMESPACES;
  }
  return node;
}

/** The namespace and prefix map of elements whose attributes have none (see createElement). */
const NO_NAMESPACES: Record<string, string> = Object.freeze(new AttributeMap());

/** The adapter's adoptAttributes (a second `<html>` or `<body>` tag adds its attributes), on maps of the element's own. */
export function adoptAttributes(element: Element, attrs: Attribute[]): void {
  if (element['x-attribsNamespace'] === NO_NAMESPACES) element['x-attribsNamespace'] = new AttributeMap();
  if (element['x-attribsPrefix'] === NO_NAMESPACES) element['x-attribsPrefix'] = new AttributeMap();
  adapter.adoptAttributes(element, attrs);
}

function appendChild(parentNode: ParentNode, newNode: ChildNode): void {
  const children = parentNode.children;
  const prev = children[children.length - 1];
  if (prev) {
    prev.next = newNode;
    newNode.prev = prev;
  }
  children.push(newNode);
  newNode.parent = parentNode;
}

function insertText(parentNode: ParentNode, text: string): void {
  const children = parentNode.children;
  const lastChild = children[children.length - 1];
  if (lastChild !== undefined && lastChild.type === 'text') (lastChild as Text).data += text;
  else appendChild(parentNode, new Text(text));
}

function newTagToken(type: typeof TokenType.START_TAG | typeof TokenType.END_TAG): TagToken {
  return { type, tagName: '', tagID: $.UNKNOWN, selfClosing: false, ackSelfClosing: false, attrs: EMPTY_ATTRS, location: null };
}

function isHiddenInput(token: TagToken): boolean {
  const type = Token.getTokenAttr(token, P5.ATTRS.TYPE);
  return type != null && type.toLowerCase() === 'hidden';
}

/**
 * Builds one document. Use once: `new FastTreeBuilder(html, doctypeOf).run()`; throws BAIL to give up.
 * @param html the input, without NUL characters. CR and CR LF are normalised to LF in every slice taken from
 *   it (htmlparser2's tokenizer treats CR as whitespace, as the spec treats the LF it becomes), which spares
 *   a copy of the whole input.
 * @param doctypeOf how parse5 reads a doctype, given the text between `<!` and `>`.
 */
export class FastTreeBuilder implements TokenizerCallbacks {
  private readonly buf: string;
  private readonly hasCR: boolean;
  private readonly tokenizer: Tokenizer;
  private readonly tk: TokenizerInternals;
  private readonly doctypeOf: (decl: string) => DoctypeInfo;
  readonly document: Document;

  // The stack of open elements (open-element-stack.js), the current node and its tag ID.
  private items: Element[] = [];
  private tagIDs: TagId[] = [];
  private stackTop = -1;
  private current: ParentNode | undefined;
  private currentTagId: TagId | undefined = $.UNKNOWN;
  /** How many `p` are on the stack: with none, "has a p element in button scope" is false without a walk. */
  private openP = 0;
  /** Nodes created and characters of text inserted so far, against MAX_NODES and MAX_TEXT_CHARS. */
  private nodeCount = 0;
  private textCount = 0;

  /** The list of active formatting elements, newest last (parse5 keeps it newest first). */
  private afe: AfeItem[] = [];

  private insertionMode: Mode = MODE.INITIAL;
  private originalInsertionMode: Mode = MODE.INITIAL;
  private headElement: Element | null = null;
  private formElement: Element | null = null;
  private currentNotInHTML = false;
  private inForeignNode = false;
  private pendingCharacterTokens: CharacterToken[] = [];
  private hasNonWhitespacePendingCharacterToken = false;
  private skipNextNewLine = false;
  private fosterParentingEnabled = false;

  // Tokenizer glue: the tag being read, text not yet processed, raw text handling. One start and one end tag
  // token are reused: nothing keeps a token once it has been processed.
  private readonly tag: TagToken = newTagToken(TokenType.START_TAG);
  private readonly endTag: TagToken = newTagToken(TokenType.END_TAG);
  /**
   * The start tag's attributes, reused from tag to tag with their objects (createElement copies them out;
   * parse5's foreign-content adjustments write only the fields every object already has).
   */
  private readonly attrList: Attribute[] = [];
  private attrCount = 0;
  /** attrArrays[n]: the first n objects of attrList, the token's `attrs` for a tag with n attributes. */
  private readonly attrArrays: Attribute[][] = [EMPTY_ATTRS];
  private attrName = '';
  private attrValue = '';
  /** The names of the tag's attributes once it has ATTR_SET_FROM of them: the duplicate check in constant time. */
  private attrNames: Set<string> | null = null;
  private pendingText = '';
  /** Index of the `>` that ended the start tag being processed. */
  private tagEnd = 0;
  private tagSelfClosedForTokenizer = false;
  /** htmlparser2 reads the current title's RCDATA (it decodes entities there); keep its special state. */
  private keepSpecial = false;
  private inTokenizerRcdata = false;
  private ending = false;
  private emittedLtSlashAtEnd = false;

  constructor(html: string, doctypeOf: (decl: string) => DoctypeInfo) {
    this.buf = html;
    this.hasCR = html.includes('\r');
    this.doctypeOf = doctypeOf;
    this.document = adapter.createDocument() as Document;
    this.current = this.document;
    this.tokenizer = new Tokenizer({ xmlMode: false, decodeEntities: true }, this);
    this.tk = this.tokenizer as unknown as TokenizerInternals;
  }

  /** Tokenizes and builds the whole input; returns the document or throws BAIL. */
  run(): Document {
    this.tokenizer.write(this.buf);
    if (this.tk.state === TK.InEntity) {
      // The input ends inside what htmlparser2's decoder still reads as a character reference. entities 7
      // sometimes reads on past characters that cannot belong to one (`&eta<A`) and then emits them all
      // as text; the spec would have ended the reference at the first of them.
      for (let i = this.tk.entityStart + 1; i < this.buf.length; i++) {
        const c = this.buf.charCodeAt(i);
        const alnum = (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
        if (!alnum && c !== 0x23) bail('input ends in a character reference htmlparser2 reads on');
      }
    }
    this.ending = true;
    this.tokenizer.end();
    return this.document;
  }

  // ---------------------------------------------------------------------------------------------
  // Tokenizer callbacks: turn htmlparser2's index-based events into parse5's tokens.

  ontext(start: number, endIndex: number): void {
    const buf = this.buf;
    if (buf.charCodeAt(start) === 0x3c && buf.charCodeAt(start + 1) === 0x2f && !this.inTokenizerRcdata) {
      // htmlparser2 emits `</>` and `</ …>` as text; the spec ignores the first and makes a bogus comment
      // of the second. Only `</` at the very end of the input is text for both.
      if (this.ending && this.tk.state === TK.BeforeClosingTagName && endIndex - start === 2 && endIndex === buf.length) {
        this.emittedLtSlashAtEnd = true;
      } else {
        bail('end tag open followed by whitespace or `>`');
      }
    }
    const text = buf.slice(start, endIndex);
    this.pendingText += this.hasCR ? normalizeNewlines(text) : text;
  }

  ontextentity(codepoint: number): void {
    if (!referenceDecodedRight(this.buf, this.tk.entityStart, this.tk.sectionStart, codepoint, false)) {
      bail('character reference htmlparser2 decodes otherwise');
    }
    this.pendingText += String.fromCodePoint(codepoint);
  }

  onopentagname(start: number, endIndex: number): void {
    if (this.pendingText) this.flushText();
    const tag = this.tag;
    const k = knownName(this.buf, start, endIndex);
    if (k !== -1) {
      tag.tagName = NAME_OF[k]!;
      tag.tagID = TAG_ID_OF[k]!;
    } else {
      tag.tagName = lowerAscii(this.buf.slice(start, endIndex));
      tag.tagID = getTagID(tag.tagName);
    }
    tag.selfClosing = false;
    this.attrCount = 0;
    this.attrNames = null;
  }

  onattribname(start: number, endIndex: number): void {
    const k = knownName(this.buf, start, endIndex);
    this.attrName = k !== -1 ? NAME_OF[k]! : lowerAscii(this.buf.slice(start, endIndex));
    this.attrValue = '';
  }

  onattribdata(start: number, endIndex: number): void {
    const value = this.buf.slice(start, endIndex);
    this.attrValue += this.hasCR ? normalizeNewlines(value) : value;
  }

  onattribentity(codepoint: number): void {
    // The reference spans entityStart (its `&`) to sectionStart (just after it).
    if (!referenceDecodedRight(this.buf, this.tk.entityStart, this.tk.sectionStart, codepoint, true)) {
      bail('character reference htmlparser2 decodes otherwise');
    }
    this.attrValue += String.fromCodePoint(codepoint);
  }

  onattribend(): void {
    const list = this.attrList;
    const n = this.attrCount;
    const name = this.attrName;
    // The first one wins. A tag with 200,000 attributes would take minutes of pairwise checks: past a few, a set.
    if (n < ATTR_SET_FROM) {
      for (let i = 0; i < n; i++) if (list[i]!.name === name) return;
    } else {
      let names = this.attrNames;
      if (names === null) {
        names = this.attrNames = new Set<string>();
        for (let i = 0; i < n; i++) names.add(list[i]!.name);
      }
      if (names.has(name)) return;
      names.add(name);
    }
    let attr = list[n];
    if (attr === undefined) {
      attr = { name, value: this.attrValue, namespace: undefined, prefix: undefined };
      list[n] = attr;
    } else {
      attr.name = name;
      attr.value = this.attrValue;
      attr.namespace = undefined;
      attr.prefix = undefined;
    }
    this.attrCount = n + 1;
  }

  onopentagend(endIndex: number): void {
    this.startTagRead(endIndex, false);
  }

  onselfclosingtag(endIndex: number): void {
    // htmlparser2 also reports `<a/ >` here; for the spec only a `/` right before `>` self-closes.
    this.tag.selfClosing = this.buf.charCodeAt(endIndex - 1) === 0x2f;
    this.startTagRead(endIndex, true);
  }

  private startTagRead(endIndex: number, selfClosedForTokenizer: boolean): void {
    const token = this.tag;
    const n = this.attrCount;
    token.attrs = this.attrArrays[n] ??= this.attrList.slice(0, n);
    this.tagEnd = endIndex;
    this.tagSelfClosedForTokenizer = selfClosedForTokenizer;
    this.keepSpecial = false;
    this.onStartTag(token);
    // htmlparser2 treats script, style, title, textarea and xmp as raw text wherever they are; the spec only
    // where the tree builder says so (never in foreign content, nor where the start tag is ignored).
    if (!this.keepSpecial && this.tk.isSpecial) this.tk.isSpecial = false;
  }

  onclosetag(start: number, endIndex: number): void {
    const buf = this.buf;
    if (this.pendingText) this.flushText();
    if (buf.charCodeAt(start - 1) !== 0x2f) bail('whitespace between `</` and the tag name');
    if (buf.charCodeAt(endIndex) !== 0x3e) {
      // The spec reads attributes in end tags (quoted values may hold `>`); htmlparser2 skips to the first `>`.
      const gt = buf.indexOf('>', endIndex);
      if (gt === -1) bail('end tag cut by the end of the input');
      for (let i = endIndex; i < gt; i++) {
        const c = buf.charCodeAt(i);
        if (c === 0x22 || c === 0x27) bail('quote in an end tag');
      }
    }
    const token = this.endTag;
    const k = knownName(buf, start, endIndex);
    if (k !== -1) {
      token.tagName = NAME_OF[k]!;
      token.tagID = TAG_ID_OF[k]!;
    } else {
      let name = buf.slice(start, endIndex);
      const slash = name.indexOf('/');
      if (slash !== -1) {
        // htmlparser2 reads `</p/>` as the end tag "p/"; for the spec the name ends at the `/` and what
        // follows up to `>` is attributes, where a quoted value may hold a `>`.
        if (name.includes('"', slash) || name.includes("'", slash)) bail('quote in an end tag');
        name = name.slice(0, slash);
      }
      token.tagName = lowerAscii(name);
      token.tagID = getTagID(token.tagName);
    }
    this.inTokenizerRcdata = false;
    this.onEndTag(token);
  }

  oncomment(start: number, endIndex: number, endOffset: number): void {
    if (this.pendingText) this.flushText();
    if (this.ending) bail('comment cut by the end of the input');
    // A bogus comment from `</` and a character that cannot start a tag name: htmlparser2 also skips
    // whitespace after `</` (`</ #>`), which the spec keeps in the comment.
    if (endOffset === 0 && this.buf.charCodeAt(start - 1) !== 0x2f) bail('whitespace after `</`');
    const data = normalizeNewlines(this.buf.slice(start, endIndex - endOffset));
    // `--!>` ends a comment for the spec, not for htmlparser2.
    if (endOffset === 2 && data.includes('--!>')) bail('comment ended by --!>');
    this.onComment({ type: TokenType.COMMENT, data, location: null });
  }

  oncdata(start: number, endIndex: number, endOffset: number): void {
    if (this.pendingText) this.flushText();
    if (this.ending) bail('CDATA cut by the end of the input');
    const text = normalizeNewlines(this.buf.slice(start, endIndex - endOffset));
    if (this.inForeignNode) {
      // A CDATA section: its text as characters.
      if (text) this.processCharacters(text);
      return;
    }
    // In HTML content `<![CDATA[` opens a bogus comment that ends at the first `>`.
    if (text.includes('>')) bail('CDATA holding `>` in HTML content');
    this.onComment({ type: TokenType.COMMENT, data: `[CDATA[${text}]]`, location: null });
  }

  ondeclaration(start: number, endIndex: number): void {
    if (this.pendingText) this.flushText();
    const decl = normalizeNewlines(this.buf.slice(start, endIndex));
    // `<!>` and `<!->` end at their own `>` for the spec; htmlparser2 runs on to the next one.
    if (decl.includes('>')) bail('`<!>` or `<!->`');
    if (decl.length >= 7 && lowerAscii(decl.slice(0, 7)) === 'doctype') {
      this.onDoctype({ type: TokenType.DOCTYPE, info: this.doctypeOf(decl) });
    } else {
      this.onComment({ type: TokenType.COMMENT, data: decl, location: null });
    }
  }

  onprocessinginstruction(start: number, endIndex: number): void {
    if (this.pendingText) this.flushText();
    // `<?…>` is a bogus comment whose data starts with the `?`.
    this.onComment({ type: TokenType.COMMENT, data: `?${normalizeNewlines(this.buf.slice(start, endIndex))}`, location: null });
  }

  onend(): void {
    const s = this.tk.state;
    // The states in which the input may end with the same tokens for both tokenizers: text, raw text read by
    // htmlparser2, `<` (text), `</` (text, checked in ontext), and inside a tag after its name has started
    // (the tag is dropped by both). Everything else (a comment, a declaration, `<!`, `<?`, `<s`…) differs.
    const ok =
      s === TK.Text ||
      s === TK.InSpecialTag ||
      s === TK.BeforeTagName ||
      (s === TK.BeforeClosingTagName && this.emittedLtSlashAtEnd) ||
      s === TK.InTagName ||
      s === TK.InClosingTagName ||
      (s >= TK.BeforeAttributeName && s <= TK.InAttributeValueNq);
    if (!ok) bail(`input ends in tokenizer state ${s}`);
    // `</ x` at the end: htmlparser2 skipped the whitespace and drops an end tag; the spec emits a comment.
    if (s === TK.InClosingTagName && this.buf.charCodeAt(this.tk.sectionStart - 1) !== 0x2f) bail('input ends after `</` and whitespace');
    if (this.pendingText) this.flushText();
    this.onEof(EOF_TOKEN);
  }

  // ---------------------------------------------------------------------------------------------
  // Character tokens

  private flushText(): void {
    const text = this.pendingText;
    this.pendingText = '';
    this.processCharacters(text);
  }

  /**
   * Processes a run of characters as parse5's tokenizer would deliver it: whitespace and other characters
   * as separate tokens, the newline after `<pre>`, `<listing>` and `<textarea>` dropped.
   */
  private processCharacters(text: string): void {
    if (this.skipNextNewLine) {
      this.skipNextNewLine = false;
      if (text.charCodeAt(0) === 0x0a) {
        if (text.length === 1) return;
        text = text.slice(1);
      }
    }
    const mode = this.insertionMode;
    if (this.inForeignNode || mode === MODE.TEXT || mode === MODE.IN_SELECT || mode === MODE.IN_SELECT_IN_TABLE) {
      this.insertCharacters(text);
      return;
    }
    if (mode === MODE.IN_BODY || mode === MODE.IN_CELL || mode === MODE.IN_CAPTION) {
      this.reconstructActiveFormattingElements();
      this.insertCharacters(text);
      return;
    }
    let allWhitespace = true;
    for (let i = 0; i < text.length; i++) {
      if (!isWhitespaceCode(text.charCodeAt(i))) {
        allWhitespace = false;
        break;
      }
    }
    if (
      (mode === MODE.IN_TABLE || mode === MODE.IN_TABLE_BODY || mode === MODE.IN_ROW) &&
      this.currentTagId !== undefined &&
      TABLE_STRUCTURE_TAGS.has(this.currentTagId)
    ) {
      // The "in table text" mode in one step: this is the whole run of characters before the next token, so
      // whitespace goes to the current node and anything else would be foster-parented.
      if (!allWhitespace) bail('foster parenting of text');
      this.insertCharacters(text);
      return;
    }
    if (allWhitespace) {
      // Whitespace between the tags of the head and around html and body: onWhitespaceCharacter without a token.
      switch (mode) {
        case MODE.INITIAL:
        case MODE.BEFORE_HTML:
        case MODE.BEFORE_HEAD:
          return;
        case MODE.IN_HEAD:
        case MODE.AFTER_HEAD:
        case MODE.IN_COLUMN_GROUP:
          this.insertCharacters(text);
          return;
        case MODE.AFTER_BODY:
        case MODE.AFTER_AFTER_BODY:
          this.reconstructActiveFormattingElements();
          this.insertCharacters(text);
          return;
      }
    }
    // Modes that treat whitespace apart: split into whitespace and non-whitespace tokens.
    let i = 0;
    const n = text.length;
    while (i < n) {
      const ws = isWhitespaceCode(text.charCodeAt(i));
      let j = i + 1;
      while (j < n && isWhitespaceCode(text.charCodeAt(j)) === ws) j++;
      const token: CharacterToken = {
        type: ws ? TokenType.WHITESPACE_CHARACTER : TokenType.CHARACTER,
        chars: i === 0 && j === n ? text : text.slice(i, j),
        location: null,
      };
      if (ws) this.onWhitespaceCharacter(token);
      else this.onCharacter(token);
      i = j;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The stack of open elements (open-element-stack.js)

  private push(element: Element, tagID: TagId): void {
    // Past MAX_DEPTH open elements Chromium attaches what comes next elsewhere (bounded-parse5.ts does too).
    if (this.stackTop + 2 > MAX_DEPTH) bail(`more than ${MAX_DEPTH} open elements`);
    if (tagID === $.P) this.openP++;
    this.stackTop++;
    this.items[this.stackTop] = element;
    this.current = element;
    this.tagIDs[this.stackTop] = tagID;
    this.currentTagId = tagID;
    if (this.stackTop > 0) this.setContextModes(element, tagID);
  }

  private updateCurrentElement(): void {
    this.current = this.items[this.stackTop];
    this.currentTagId = this.tagIDs[this.stackTop];
  }

  private pop(): void {
    if (this.currentTagId === $.P) this.openP--;
    this.stackTop--;
    this.updateCurrentElement();
    this.setContextModes(this.current, this.currentTagId);
  }

  private indexOfElement(element: Element): number {
    return this.items.lastIndexOf(element, this.stackTop);
  }

  private shortenToLength(idx: number): void {
    if (this.stackTop < idx) return;
    for (let i = this.stackTop; i >= idx; i--) if (this.tagIDs[i] === $.P) this.openP--;
    this.stackTop = idx - 1;
    this.updateCurrentElement();
    this.setContextModes(this.current, this.currentTagId);
  }

  /** parse5's indexOfTopmost: the index of the topmost open HTML element with this tag, or -1. */
  private indexOfTopmost(tagID: TagId): number {
    for (let i = this.stackTop; i >= 0; i--) {
      if (this.tagIDs[i] === tagID && this.items[i]!.namespace === NS.HTML) return i;
    }
    return -1;
  }

  /** parse5's indexOfTopmostByName: the topmost open element in `ns` named `tagName`, or -1. */
  private indexOfTopmostByName(ns: P5.NS, tagName: string): number {
    for (let i = this.stackTop; i >= 0; i--) {
      const element = this.items[i]!;
      if (element.name === tagName && element.namespace === ns) return i;
    }
    return -1;
  }

  /** parse5's indexOfTopmostHtmlElement: the index of the topmost open HTML element, or -1. */
  private indexOfTopmostHtmlElement(): number {
    let i = this.stackTop;
    while (i >= 0 && this.items[i]!.namespace !== NS.HTML) i--;
    return i;
  }

  private popUntilTagNamePopped(tagName: TagId): void {
    this.shortenToLength(Math.max(this.indexOfTopmost(tagName), 0));
  }

  private indexOfTagNames(tagNames: Set<TagId>, namespace: P5.NS): number {
    for (let i = this.stackTop; i >= 0; i--) {
      if (tagNames.has(this.tagIDs[i]!) && this.items[i]!.namespace === namespace) return i;
    }
    return -1;
  }

  private popUntilPopped(tagNames: Set<TagId>, targetNS: P5.NS): void {
    this.shortenToLength(Math.max(this.indexOfTagNames(tagNames, targetNS), 0));
  }

  private clearBackTo(tagNames: Set<TagId>, targetNS: P5.NS): void {
    this.shortenToLength(this.indexOfTagNames(tagNames, targetNS) + 1);
  }

  private removeFromStack(element: Element): void {
    const idx = this.indexOfElement(element);
    if (idx < 0) return;
    if (idx === this.stackTop) {
      this.pop();
    } else {
      if (this.tagIDs[idx] === $.P) this.openP--;
      this.items.splice(idx, 1);
      this.tagIDs.splice(idx, 1);
      this.stackTop--;
      this.updateCurrentElement();
    }
  }

  private stackContains(element: Element): boolean {
    return this.indexOfElement(element) > -1;
  }

  /**
   * parse5's _scanScope for one tag: whether an HTML element with the tag (and, if given, that very element) is open
   * above every element that bounds the scope; true when neither is open.
   */
  private hasInDynamicScope(tagName: TagId, htmlScope: Set<TagId>, element?: Element): boolean {
    for (let i = this.stackTop; i >= 0; i--) {
      const tn = this.tagIDs[i]!;
      switch (this.items[i]!.namespace) {
        case NS.HTML: {
          if (tn === tagName && (element === undefined || this.items[i] === element)) return true;
          if (htmlScope.has(tn)) return false;
          break;
        }
        case NS.SVG: {
          if (SCOPING_ELEMENTS_SVG.has(tn)) return false;
          break;
        }
        case NS.MATHML: {
          if (SCOPING_ELEMENTS_MATHML.has(tn)) return false;
          break;
        }
      }
    }
    return true;
  }

  /** If `element` is given, only that element (a `tagName` element) is looked for (the adoption agency's check). */
  private hasInScope(tagName: TagId, element?: Element): boolean {
    return this.hasInDynamicScope(tagName, SCOPING_ELEMENTS_HTML, element);
  }

  private hasInListItemScope(tagName: TagId): boolean {
    return this.hasInDynamicScope(tagName, SCOPING_ELEMENTS_HTML_LIST);
  }

  private hasInButtonScope(tagName: TagId): boolean {
    if (tagName === $.P && this.openP === 0) return false;
    return this.hasInDynamicScope(tagName, SCOPING_ELEMENTS_HTML_BUTTON);
  }

  private hasNumberedHeaderInScope(): boolean {
    for (let i = this.stackTop; i >= 0; i--) {
      const tn = this.tagIDs[i]!;
      switch (this.items[i]!.namespace) {
        case NS.HTML: {
          if (NUMBERED_HEADERS.has(tn)) return true;
          if (SCOPING_ELEMENTS_HTML.has(tn)) return false;
          break;
        }
        case NS.SVG: {
          if (SCOPING_ELEMENTS_SVG.has(tn)) return false;
          break;
        }
        case NS.MATHML: {
          if (SCOPING_ELEMENTS_MATHML.has(tn)) return false;
          break;
        }
      }
    }
    return true;
  }

  private hasInTableScope(tagName: TagId): boolean {
    for (let i = this.stackTop; i >= 0; i--) {
      if (this.items[i]!.namespace !== NS.HTML) continue;
      const tn = this.tagIDs[i];
      if (tn === tagName) return true;
      if (tn === $.TABLE || tn === $.HTML) return false;
    }
    return true;
  }

  private hasTableBodyContextInTableScope(): boolean {
    for (let i = this.stackTop; i >= 0; i--) {
      if (this.items[i]!.namespace !== NS.HTML) continue;
      switch (this.tagIDs[i]) {
        case $.TBODY:
        case $.THEAD:
        case $.TFOOT:
          return true;
        case $.TABLE:
        case $.HTML:
          return false;
      }
    }
    return true;
  }

  private hasInSelectScope(tagName: TagId): boolean {
    for (let i = this.stackTop; i >= 0; i--) {
      if (this.items[i]!.namespace !== NS.HTML) continue;
      const tn = this.tagIDs[i];
      if (tn === tagName) return true;
      if (tn !== $.OPTION && tn !== $.OPTGROUP) return false;
    }
    return true;
  }

  /** Whether the current node is an HTML element (parse5 8 generates implied end tags only for those). */
  private currentIsHtml(): boolean {
    return (this.current as Element).namespace === NS.HTML;
  }

  private generateImpliedEndTags(): void {
    while (this.currentTagId !== undefined && IMPLICIT_END_TAG_REQUIRED.has(this.currentTagId) && this.currentIsHtml()) this.pop();
  }

  private generateImpliedEndTagsWithExclusion(exclusionId: TagId): void {
    while (
      this.currentTagId !== undefined &&
      this.currentTagId !== exclusionId &&
      IMPLICIT_END_TAG_REQUIRED_THOROUGHLY.has(this.currentTagId) &&
      this.currentIsHtml()
    ) {
      this.pop();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The list of active formatting elements (formatting-element-list.js)

  // The whole list is bounded too (MAX_AFE_ENTRIES, markers included) so that the walks below stay short; the
  // fallback needs no such bound, as parse5 8's walks of its list stop at the last marker.
  private insertMarker(): void {
    if (this.afe.length >= MAX_AFE_ENTRIES) bail(`more than ${MAX_AFE_ENTRIES} entries of active formatting elements and markers`);
    this.afe.push(MARKER);
  }

  private pushFormattingElement(element: Element): void {
    this.ensureNoahArkCondition(element);
    const afe = this.afe;
    let n = 0;
    while (n < afe.length && afe[afe.length - 1 - n] !== MARKER) n++;
    if (n >= MAX_FORMATTING_ELEMENTS) bail(`more than ${MAX_FORMATTING_ELEMENTS} active formatting elements`);
    if (afe.length >= MAX_AFE_ENTRIES) bail(`more than ${MAX_AFE_ENTRIES} entries of active formatting elements and markers`);
    afe.push({ element });
  }

  /**
   * Noah's Ark: of the entries after the last marker with the new element's tag name and attributes, at most three
   * stay. This is parse5 7's _ensureNoahArkCondition (indices translated from its newest-first list); parse5 8 groups
   * the entries by tag and attribute set and drops the oldest of a group past three, the same entry wherever entries
   * are only ever pushed, as here (the fast path gives up before the adoption agency would insert one elsewhere).
   */
  private ensureNoahArkCondition(newElement: Element): void {
    const entries = this.afe;
    if (entries.length < NOAH_ARK_CAPACITY) return;
    const neAttrs = adapter.getAttrList(newElement);
    const candidates: { idx: number; attrs: Attribute[] }[] = [];
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[entries.length - 1 - i];
      if (entry === MARKER) break;
      const element = entry!.element;
      if (element.name === newElement.name && element.namespace === newElement.namespace) {
        const elementAttrs = adapter.getAttrList(element);
        if (elementAttrs.length === neAttrs.length) candidates.push({ idx: i, attrs: elementAttrs });
      }
    }
    if (candidates.length < NOAH_ARK_CAPACITY) return;
    const neAttrsMap = new Map(neAttrs.map((a) => [a.name, a.value]));
    let validCandidates = 0;
    for (const candidate of candidates) {
      if (candidate.attrs.every((a) => neAttrsMap.get(a.name) === a.value)) {
        validCandidates += 1;
        if (validCandidates >= NOAH_ARK_CAPACITY) entries.splice(entries.length - 1 - candidate.idx, 1);
      }
    }
  }

  private removeAfeEntry(entry: AfeEntry): void {
    const idx = this.afe.lastIndexOf(entry);
    if (idx !== -1) this.afe.splice(idx, 1);
  }

  private clearAfeToLastMarker(): void {
    const idx = this.afe.lastIndexOf(MARKER);
    this.afe.length = idx === -1 ? 0 : idx;
  }

  /** parse5's getElementEntry: the entry of `element` anywhere in the list, or null. */
  private afeEntryOf(element: Element): AfeEntry | null {
    for (let i = this.afe.length - 1; i >= 0; i--) {
      const entry = this.afe[i];
      if (entry !== MARKER && entry!.element === element) return entry!;
    }
    return null;
  }

  private afeEntryInScopeWithTagName(tagName: string): AfeEntry | null {
    for (let i = this.afe.length - 1; i >= 0; i--) {
      const entry = this.afe[i];
      if (entry === MARKER) return null;
      if (entry!.element.name === tagName) return entry!;
    }
    return null;
  }

  private reconstructActiveFormattingElements(): void {
    const n = this.afe.length;
    if (n === 0) return;
    const newest = this.afe[n - 1];
    if (newest === MARKER || this.stackContains(newest!.element)) return;
    bail('active formatting elements to reconstruct');
  }

  // ---------------------------------------------------------------------------------------------
  // Tree mutation (parser/index.js)

  private setContextModes(current: ParentNode | undefined, tid: TagId | undefined): void {
    const isHTML = current === this.document || (current !== undefined && (current as Element).namespace === NS.HTML);
    this.currentNotInHTML = !isHTML;
    this.inForeignNode = !isHTML && current !== undefined && tid !== undefined && !this.isIntegrationPoint(tid, current as Element);
  }

  private isIntegrationPoint(tid: TagId, element: Element, foreignNS?: P5.NS): boolean {
    const attrs = tid === $.ANNOTATION_XML ? adapter.getAttrList(element) : EMPTY_ATTRS;
    return foreignContent.isIntegrationPoint(tid, element.namespace as P5.NS, attrs, foreignNS);
  }

  private shouldFosterParentOnInsertion(): boolean {
    return this.fosterParentingEnabled && this.currentTagId !== undefined && TABLE_STRUCTURE_TAGS.has(this.currentTagId);
  }

  /** Counts a node about to be created against MAX_NODES. */
  private countNode(): void {
    if (++this.nodeCount > MAX_NODES) bail(`more than ${MAX_NODES} nodes`);
  }

  private attachElementToTree(element: Element): void {
    if (this.shouldFosterParentOnInsertion()) bail('foster parenting');
    appendChild(this.current ?? this.document, element);
  }

  private appendElement(token: TagToken, namespaceURI: P5.NS): void {
    this.countNode();
    const element = createElement(token.tagName, namespaceURI, token.attrs);
    this.attachElementToTree(element);
  }

  private insertElement(token: TagToken, namespaceURI: P5.NS): void {
    this.countNode();
    const element = createElement(token.tagName, namespaceURI, token.attrs);
    this.attachElementToTree(element);
    this.push(element, token.tagID);
  }

  private insertFakeElement(tagName: string, tagID: TagId): void {
    this.countNode();
    const element = createElement(tagName, NS.HTML, EMPTY_ATTRS);
    this.attachElementToTree(element);
    this.push(element, tagID);
  }

  private appendCommentNode(token: CommentToken, parent: ParentNode): void {
    this.countNode();
    adapter.appendChild(parent, adapter.createCommentNode(token.data));
  }

  private insertCharacters(chars: string): void {
    if (this.shouldFosterParentOnInsertion()) bail('foster parenting of text');
    const parent = this.current as ParentNode;
    if (parent.children.at(-1)?.type !== 'text') this.countNode();
    if ((this.textCount += chars.length) > MAX_TEXT_CHARS) bail(`more than ${MAX_TEXT_CHARS} characters of text`);
    insertText(parent, chars);
  }

  // ---------------------------------------------------------------------------------------------
  // Raw text, RCDATA and script data: read from the source, the tokenizer moved past it.

  /**
   * parse5's `tokenizer.state = RCDATA | RAWTEXT | SCRIPT_DATA` for the start tag being processed.
   * The element is already the current node.
   */
  private switchTokenizerToRawText(kind: RawKind, name: string): void {
    const buf = this.buf;
    const from = this.tagEnd + 1;
    const tk = this.tk;
    if (kind === RAW.RCDATA && name === 'title' && !this.tagSelfClosedForTokenizer && tk.isSpecial) {
      // htmlparser2 reads titles as the spec reads RCDATA (entities decoded), but ends them only at
      // `</title` followed by whitespace or `>`; the spec also at `</title/`.
      const end = findRawTextEnd(buf, from, name);
      if (end !== -1 && buf.charCodeAt(end + 2 + name.length) === 0x2f) bail('`</title/`');
      // While it matches a `<`, `</t`, … that turns out not to be `</title`, htmlparser2 does not look for
      // character references: an `&` right after such a prefix stays undecoded.
      const stop = end === -1 ? buf.length : end;
      // (Only the 7 characters before each `&` are looked at: a search back to the last `<` would make a title of
      // 2 MB of `&a` quadratic.)
      for (let amp = buf.indexOf('&', from); amp !== -1 && amp < stop; amp = buf.indexOf('&', amp + 1)) {
        for (let lt = amp - 1; lt >= from && amp - lt <= 7; lt--) {
          if (buf.charCodeAt(lt) === 0x3c) bail('character reference after `<` in a title');
        }
      }
      this.keepSpecial = true;
      this.inTokenizerRcdata = true;
      return;
    }
    let end = kind === RAW.SCRIPT ? findScriptEnd(buf, from) : findRawTextEnd(buf, from, name);
    if (end === -1) end = buf.length;
    if (end > from) {
      const content = normalizeNewlines(buf.slice(from, end));
      if (kind === RAW.RCDATA && content.includes('&')) bail('character reference in RCDATA');
      this.processCharacters(content);
    }
    // The tokenizer goes on from the end tag (or the end of the input), in its text state.
    tk.index = end - 1;
  }

  private switchToTextParsing(token: TagToken, kind: RawKind): void {
    this.insertElement(token, NS.HTML);
    this.originalInsertionMode = this.insertionMode;
    this.insertionMode = MODE.TEXT;
    this.switchTokenizerToRawText(kind, token.tagName);
  }

  // ---------------------------------------------------------------------------------------------
  // Token dispatch (parser/index.js: _processToken, onCharacter, onComment, …)

  private processToken(token: AnyToken): void {
    switch (token.type) {
      case TokenType.CHARACTER:
        this.onCharacter(token as CharacterToken);
        break;
      case TokenType.WHITESPACE_CHARACTER:
        this.onWhitespaceCharacter(token as CharacterToken);
        break;
      case TokenType.COMMENT:
        this.onComment(token as CommentToken);
        break;
      case TokenType.DOCTYPE:
        this.onDoctype(token as DoctypeToken);
        break;
      case TokenType.START_TAG:
        this.processStartTag(token as TagToken);
        break;
      case TokenType.END_TAG:
        this.onEndTag(token as TagToken);
        break;
      case TokenType.EOF:
        this.onEof(token as EofToken);
        break;
    }
  }

  private onCharacter(token: CharacterToken): void {
    this.skipNextNewLine = false;
    if (this.inForeignNode) {
      this.insertCharacters(token.chars);
      return;
    }
    switch (this.insertionMode) {
      case MODE.INITIAL:
        this.tokenInInitialMode(token);
        break;
      case MODE.BEFORE_HTML:
        this.tokenBeforeHtml(token);
        break;
      case MODE.BEFORE_HEAD:
        this.tokenBeforeHead(token);
        break;
      case MODE.IN_HEAD:
        this.tokenInHead(token);
        break;
      case MODE.AFTER_HEAD:
        this.tokenAfterHead(token);
        break;
      case MODE.IN_BODY:
      case MODE.IN_CAPTION:
      case MODE.IN_CELL:
        this.characterInBody(token);
        break;
      case MODE.TEXT:
      case MODE.IN_SELECT:
      case MODE.IN_SELECT_IN_TABLE:
        this.insertCharacters(token.chars);
        break;
      case MODE.IN_TABLE:
      case MODE.IN_TABLE_BODY:
      case MODE.IN_ROW:
        this.characterInTable(token);
        break;
      case MODE.IN_TABLE_TEXT:
        this.pendingCharacterTokens.push(token);
        this.hasNonWhitespacePendingCharacterToken = true;
        break;
      case MODE.IN_COLUMN_GROUP:
        this.tokenInColumnGroup(token);
        break;
      case MODE.AFTER_BODY:
        this.tokenAfterBody(token);
        break;
      case MODE.AFTER_AFTER_BODY:
        this.tokenAfterAfterBody(token);
        break;
    }
  }

  private onWhitespaceCharacter(token: CharacterToken): void {
    if (this.inForeignNode) {
      this.insertCharacters(token.chars);
      return;
    }
    switch (this.insertionMode) {
      case MODE.IN_HEAD:
      case MODE.AFTER_HEAD:
      case MODE.TEXT:
      case MODE.IN_COLUMN_GROUP:
      case MODE.IN_SELECT:
      case MODE.IN_SELECT_IN_TABLE:
        this.insertCharacters(token.chars);
        break;
      case MODE.IN_BODY:
      case MODE.IN_CAPTION:
      case MODE.IN_CELL:
      case MODE.AFTER_BODY:
      case MODE.AFTER_AFTER_BODY:
        this.reconstructActiveFormattingElements();
        this.insertCharacters(token.chars);
        break;
      case MODE.IN_TABLE:
      case MODE.IN_TABLE_BODY:
      case MODE.IN_ROW:
        this.characterInTable(token);
        break;
      case MODE.IN_TABLE_TEXT:
        this.pendingCharacterTokens.push(token);
        break;
      // INITIAL, BEFORE_HTML, BEFORE_HEAD: ignored
    }
  }

  private onComment(token: CommentToken): void {
    this.skipNextNewLine = false;
    if (this.currentNotInHTML) {
      this.appendCommentNode(token, this.current as ParentNode);
      return;
    }
    switch (this.insertionMode) {
      case MODE.IN_TABLE_TEXT:
        this.tokenInTableText(token);
        break;
      case MODE.AFTER_BODY:
        this.appendCommentNode(token, this.items[0]!);
        break;
      case MODE.AFTER_AFTER_BODY:
        this.appendCommentNode(token, this.document);
        break;
      case MODE.TEXT:
        break;
      default:
        this.appendCommentNode(token, this.current ?? this.document);
    }
  }

  private onDoctype(token: DoctypeToken): void {
    this.skipNextNewLine = false;
    if (this.insertionMode === MODE.INITIAL) {
      const { info } = token;
      adapter.setDocumentType(this.document, info.name, info.publicId, info.systemId);
      adapter.setDocumentMode(this.document, info.mode);
      this.insertionMode = MODE.BEFORE_HTML;
    } else if (this.insertionMode === MODE.IN_TABLE_TEXT) {
      this.tokenInTableText(token);
    }
  }

  private onStartTag(token: TagToken): void {
    this.skipNextNewLine = false;
    this.processStartTag(token);
  }

  private processStartTag(token: TagToken): void {
    if (this.shouldProcessStartTagTokenInForeignContent(token)) this.startTagInForeignContent(token);
    else this.startTagOutsideForeignContent(token);
  }

  private shouldProcessStartTagTokenInForeignContent(token: TagToken): boolean {
    if (!this.currentNotInHTML) return false;
    const current = this.current as Element;
    const currentTagId = this.currentTagId;
    if (token.tagID === $.SVG && current.name === 'annotation-xml' && current.namespace === NS.MATHML) return false;
    return (
      this.inForeignNode ||
      ((token.tagID === $.MGLYPH || token.tagID === $.MALIGNMARK) &&
        currentTagId !== undefined &&
        !this.isIntegrationPoint(currentTagId, current, NS.HTML))
    );
  }

  private startTagOutsideForeignContent(token: TagToken): void {
    switch (this.insertionMode) {
      case MODE.INITIAL:
        this.tokenInInitialMode(token);
        break;
      case MODE.BEFORE_HTML:
        this.startTagBeforeHtml(token);
        break;
      case MODE.BEFORE_HEAD:
        this.startTagBeforeHead(token);
        break;
      case MODE.IN_HEAD:
        this.startTagInHead(token);
        break;
      case MODE.AFTER_HEAD:
        this.startTagAfterHead(token);
        break;
      case MODE.IN_BODY:
        this.startTagInBody(token);
        break;
      case MODE.IN_TABLE:
        this.startTagInTable(token);
        break;
      case MODE.IN_TABLE_TEXT:
        this.tokenInTableText(token);
        break;
      case MODE.IN_CAPTION:
        this.startTagInCaption(token);
        break;
      case MODE.IN_COLUMN_GROUP:
        this.startTagInColumnGroup(token);
        break;
      case MODE.IN_TABLE_BODY:
        this.startTagInTableBody(token);
        break;
      case MODE.IN_ROW:
        this.startTagInRow(token);
        break;
      case MODE.IN_CELL:
        this.startTagInCell(token);
        break;
      case MODE.IN_SELECT:
        this.startTagInSelect(token);
        break;
      case MODE.IN_SELECT_IN_TABLE:
        this.startTagInSelectInTable(token);
        break;
      case MODE.AFTER_BODY:
        this.startTagAfterBody(token);
        break;
      case MODE.AFTER_AFTER_BODY:
        this.startTagAfterAfterBody(token);
        break;
      default:
        bail('start tag in an unsupported insertion mode');
    }
  }

  private onEndTag(token: TagToken): void {
    this.skipNextNewLine = false;
    if (this.currentNotInHTML) this.endTagInForeignContent(token);
    else this.endTagOutsideForeignContent(token);
  }

  private endTagOutsideForeignContent(token: TagToken): void {
    switch (this.insertionMode) {
      case MODE.INITIAL:
        this.tokenInInitialMode(token);
        break;
      case MODE.BEFORE_HTML:
        this.endTagBeforeHtml(token);
        break;
      case MODE.BEFORE_HEAD:
        this.endTagBeforeHead(token);
        break;
      case MODE.IN_HEAD:
        this.endTagInHead(token);
        break;
      case MODE.AFTER_HEAD:
        this.endTagAfterHead(token);
        break;
      case MODE.IN_BODY:
        this.endTagInBody(token);
        break;
      case MODE.TEXT:
        this.endTagInText();
        break;
      case MODE.IN_TABLE:
        this.endTagInTable(token);
        break;
      case MODE.IN_TABLE_TEXT:
        this.tokenInTableText(token);
        break;
      case MODE.IN_CAPTION:
        this.endTagInCaption(token);
        break;
      case MODE.IN_COLUMN_GROUP:
        this.endTagInColumnGroup(token);
        break;
      case MODE.IN_TABLE_BODY:
        this.endTagInTableBody(token);
        break;
      case MODE.IN_ROW:
        this.endTagInRow(token);
        break;
      case MODE.IN_CELL:
        this.endTagInCell(token);
        break;
      case MODE.IN_SELECT:
        this.endTagInSelect(token);
        break;
      case MODE.IN_SELECT_IN_TABLE:
        this.endTagInSelectInTable(token);
        break;
      case MODE.AFTER_BODY:
        this.endTagAfterBody(token);
        break;
      case MODE.AFTER_AFTER_BODY:
        this.tokenAfterAfterBody(token);
        break;
      default:
        bail('end tag in an unsupported insertion mode');
    }
  }

  private onEof(token: EofToken): void {
    switch (this.insertionMode) {
      case MODE.INITIAL:
        this.tokenInInitialMode(token);
        break;
      case MODE.BEFORE_HTML:
        this.tokenBeforeHtml(token);
        break;
      case MODE.BEFORE_HEAD:
        this.tokenBeforeHead(token);
        break;
      case MODE.IN_HEAD:
        this.tokenInHead(token);
        break;
      case MODE.AFTER_HEAD:
        this.tokenAfterHead(token);
        break;
      case MODE.TEXT:
        // eofInText
        this.pop();
        this.insertionMode = this.originalInsertionMode;
        this.onEof(token);
        break;
      case MODE.IN_TABLE_TEXT:
        this.tokenInTableText(token);
        break;
      default:
      // in body, table modes, select, after body, after after body: stop parsing (no templates here)
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The adoption agency algorithm: only the cases without a furthest block.

  private callAdoptionAgency(token: TagToken): void {
    // Step 2: the current node is an HTML element of the token's tag that is not in the list: pop it, and done.
    const current = this.current as Element;
    if (this.currentTagId === token.tagID && current.namespace === NS.HTML && this.afeEntryOf(current) === null) {
      this.pop();
      return;
    }
    for (let i = 0; i < 8; i++) {
      const formattingElementEntry = this.aaObtainFormattingElementEntry(token);
      if (!formattingElementEntry) break;
      if (this.aaObtainFurthestBlock(formattingElementEntry)) bail('adoption agency with a furthest block');
      break;
    }
  }

  private aaObtainFormattingElementEntry(token: TagToken): AfeEntry | null {
    let entry = this.afeEntryInScopeWithTagName(token.tagName);
    if (entry) {
      if (!this.stackContains(entry.element)) {
        this.removeAfeEntry(entry);
        entry = null;
      } else if (!this.hasInScope(token.tagID, entry.element)) {
        entry = null;
      }
    } else {
      this.genericEndTagInBody(token);
    }
    return entry;
  }

  /** True when there is a furthest block; otherwise pops up to the formatting element, as parse5 does. */
  private aaObtainFurthestBlock(entry: AfeEntry): boolean {
    let idx = this.stackTop;
    for (; idx >= 0; idx--) {
      const element = this.items[idx]!;
      if (element === entry.element) break;
      if (isSpecialElement(element, this.tagIDs[idx]!)) return true;
    }
    this.shortenToLength(Math.max(idx, 0));
    this.removeAfeEntry(entry);
    return false;
  }

  // ---------------------------------------------------------------------------------------------
  // The "initial", "before html", "before head", "in head" and "after head" insertion modes

  private tokenInInitialMode(token: AnyToken): void {
    adapter.setDocumentMode(this.document, DOCUMENT_MODE.QUIRKS);
    this.insertionMode = MODE.BEFORE_HTML;
    this.processToken(token);
  }

  private startTagBeforeHtml(token: TagToken): void {
    if (token.tagID === $.HTML) {
      this.insertElement(token, NS.HTML);
      this.insertionMode = MODE.BEFORE_HEAD;
    } else {
      this.tokenBeforeHtml(token);
    }
  }

  private endTagBeforeHtml(token: TagToken): void {
    const tn = token.tagID;
    if (tn === $.HTML || tn === $.HEAD || tn === $.BODY || tn === $.BR) this.tokenBeforeHtml(token);
  }

  private tokenBeforeHtml(token: AnyToken): void {
    // _insertFakeRootElement
    this.countNode();
    const element = adapter.createElement('html', NS.HTML, []) as Element;
    adapter.appendChild(this.current as ParentNode, element);
    this.push(element, $.HTML);
    this.insertionMode = MODE.BEFORE_HEAD;
    this.processToken(token);
  }

  private startTagBeforeHead(token: TagToken): void {
    switch (token.tagID) {
      case $.HTML:
        this.startTagInBody(token);
        break;
      case $.HEAD:
        this.insertElement(token, NS.HTML);
        this.headElement = this.current as Element;
        this.insertionMode = MODE.IN_HEAD;
        break;
      default:
        this.tokenBeforeHead(token);
    }
  }

  private endTagBeforeHead(token: TagToken): void {
    const tn = token.tagID;
    if (tn === $.HEAD || tn === $.BODY || tn === $.HTML || tn === $.BR) this.tokenBeforeHead(token);
  }

  private tokenBeforeHead(token: AnyToken): void {
    this.insertFakeElement('head', $.HEAD);
    this.headElement = this.current as Element;
    this.insertionMode = MODE.IN_HEAD;
    this.processToken(token);
  }

  private startTagInHead(token: TagToken): void {
    switch (token.tagID) {
      case $.HTML:
        this.startTagInBody(token);
        break;
      case $.BASE:
      case $.BASEFONT:
      case $.BGSOUND:
      case $.LINK:
      case $.META:
        this.appendElement(token, NS.HTML);
        break;
      case $.TITLE:
        this.switchToTextParsing(token, RAW.RCDATA);
        break;
      case $.NOSCRIPT:
      // scripting enabled, as in a browser
      case $.NOFRAMES:
      case $.STYLE:
        this.switchToTextParsing(token, RAW.RAWTEXT);
        break;
      case $.SCRIPT:
        this.switchToTextParsing(token, RAW.SCRIPT);
        break;
      case $.TEMPLATE:
        bail('template');
      case $.HEAD:
        break;
      default:
        this.tokenInHead(token);
    }
  }

  private endTagInHead(token: TagToken): void {
    switch (token.tagID) {
      case $.HEAD:
        this.pop();
        this.insertionMode = MODE.AFTER_HEAD;
        break;
      case $.BODY:
      case $.BR:
      case $.HTML:
        this.tokenInHead(token);
        break;
      case $.TEMPLATE:
        // templateEndTagInHead with no template open: ignored
        break;
      default:
    }
  }

  private tokenInHead(token: AnyToken): void {
    this.pop();
    this.insertionMode = MODE.AFTER_HEAD;
    this.processToken(token);
  }

  private startTagAfterHead(token: TagToken): void {
    switch (token.tagID) {
      case $.HTML:
        this.startTagInBody(token);
        break;
      case $.BODY:
        this.insertElement(token, NS.HTML);
        this.insertionMode = MODE.IN_BODY;
        break;
      case $.FRAMESET:
        bail('frameset');
      case $.BASE:
      case $.BASEFONT:
      case $.BGSOUND:
      case $.LINK:
      case $.META:
      case $.NOFRAMES:
      case $.SCRIPT:
      case $.STYLE:
      case $.TEMPLATE:
      case $.TITLE:
        this.push(this.headElement!, $.HEAD);
        this.startTagInHead(token);
        this.removeFromStack(this.headElement!);
        break;
      case $.HEAD:
        break;
      default:
        this.tokenAfterHead(token);
    }
  }

  private endTagAfterHead(token: TagToken): void {
    switch (token.tagID) {
      case $.BODY:
      case $.HTML:
      case $.BR:
        this.tokenAfterHead(token);
        break;
      default:
      // template end tag with no template open, and any other end tag: ignored
    }
  }

  private tokenAfterHead(token: AnyToken): void {
    this.insertFakeElement('body', $.BODY);
    this.insertionMode = MODE.IN_BODY;
    this.modeInBody(token);
  }

  // ---------------------------------------------------------------------------------------------
  // The "in body" insertion mode

  private modeInBody(token: AnyToken): void {
    switch (token.type) {
      case TokenType.CHARACTER:
        this.characterInBody(token as CharacterToken);
        break;
      case TokenType.WHITESPACE_CHARACTER:
        this.reconstructActiveFormattingElements();
        this.insertCharacters((token as CharacterToken).chars);
        break;
      case TokenType.COMMENT:
        this.appendCommentNode(token as CommentToken, this.current ?? this.document);
        break;
      case TokenType.START_TAG:
        this.startTagInBody(token as TagToken);
        break;
      case TokenType.END_TAG:
        this.endTagInBody(token as TagToken);
        break;
      default:
      // EOF: stop parsing; a doctype: ignored
    }
  }

  private characterInBody(token: CharacterToken): void {
    this.reconstructActiveFormattingElements();
    this.insertCharacters(token.chars);
  }

  private htmlStartTagInBody(token: TagToken): void {
    adoptAttributes(this.items[0]!, token.attrs);
  }

  private bodyStartTagInBody(token: TagToken): void {
    const bodyElement = this.stackTop >= 1 && this.tagIDs[1] === $.BODY ? this.items[1]! : null;
    if (bodyElement) adoptAttributes(bodyElement, token.attrs);
  }

  private closePElement(): void {
    this.generateImpliedEndTagsWithExclusion($.P);
    this.popUntilTagNamePopped($.P);
  }

  private addressStartTagInBody(token: TagToken): void {
    if (this.hasInButtonScope($.P)) this.closePElement();
    this.insertElement(token, NS.HTML);
  }

  private numberedHeaderStartTagInBody(token: TagToken): void {
    if (this.hasInButtonScope($.P)) this.closePElement();
    if (this.currentTagId !== undefined && NUMBERED_HEADERS.has(this.currentTagId)) this.pop();
    this.insertElement(token, NS.HTML);
  }

  private preStartTagInBody(token: TagToken): void {
    if (this.hasInButtonScope($.P)) this.closePElement();
    this.insertElement(token, NS.HTML);
    this.skipNextNewLine = true;
  }

  private formStartTagInBody(token: TagToken): void {
    if (!this.formElement) {
      if (this.hasInButtonScope($.P)) this.closePElement();
      this.insertElement(token, NS.HTML);
      this.formElement = this.current as Element;
    }
  }

  /**
   * The topmost open HTML item of the token's kind closes, unless a special element other than HTML address, div and p
   * is open above it (parse5 8).
   */
  private listItemStartTagInBody(token: TagToken): void {
    const idx = token.tagID === $.LI ? this.indexOfTopmost($.LI) : Math.max(this.indexOfTopmost($.DD), this.indexOfTopmost($.DT));
    if (idx !== -1 && !this.hasListItemBoundaryAbove(idx)) {
      const elementId = this.tagIDs[idx]!;
      this.generateImpliedEndTagsWithExclusion(elementId);
      this.popUntilTagNamePopped(elementId);
    }
    if (this.hasInButtonScope($.P)) this.closePElement();
    this.insertElement(token, NS.HTML);
  }

  /** Whether a special element is open above index `idx` (parse5's hasSpecialElementAbove). */
  private hasSpecialElementAbove(idx: number): boolean {
    for (let i = this.stackTop; i > idx; i--) if (isSpecialElement(this.items[i]!, this.tagIDs[i]!)) return true;
    return false;
  }

  /** Whether a special element other than HTML address, div and p is open above index `idx` (hasListItemBoundaryAbove). */
  private hasListItemBoundaryAbove(idx: number): boolean {
    for (let i = this.stackTop; i > idx; i--) {
      const element = this.items[i]!;
      const tn = this.tagIDs[i]!;
      if (element.namespace === NS.HTML && (tn === $.ADDRESS || tn === $.DIV || tn === $.P)) continue;
      if (isSpecialElement(element, tn)) return true;
    }
    return false;
  }

  private buttonStartTagInBody(token: TagToken): void {
    if (this.hasInScope($.BUTTON)) {
      this.generateImpliedEndTags();
      this.popUntilTagNamePopped($.BUTTON);
    }
    this.reconstructActiveFormattingElements();
    this.insertElement(token, NS.HTML);
  }

  private aStartTagInBody(token: TagToken): void {
    const activeElementEntry = this.afeEntryInScopeWithTagName('a');
    if (activeElementEntry) {
      this.callAdoptionAgency(token);
      this.removeFromStack(activeElementEntry.element);
      this.removeAfeEntry(activeElementEntry);
    }
    this.reconstructActiveFormattingElements();
    this.insertElement(token, NS.HTML);
    this.pushFormattingElement(this.current as Element);
  }

  private bStartTagInBody(token: TagToken): void {
    this.reconstructActiveFormattingElements();
    this.insertElement(token, NS.HTML);
    this.pushFormattingElement(this.current as Element);
  }

  private nobrStartTagInBody(token: TagToken): void {
    this.reconstructActiveFormattingElements();
    if (this.hasInScope($.NOBR)) {
      this.callAdoptionAgency(token);
      this.reconstructActiveFormattingElements();
    }
    this.insertElement(token, NS.HTML);
    this.pushFormattingElement(this.current as Element);
  }

  private appletStartTagInBody(token: TagToken): void {
    this.reconstructActiveFormattingElements();
    this.insertElement(token, NS.HTML);
    this.insertMarker();
  }

  private tableStartTagInBody(token: TagToken): void {
    if (adapter.getDocumentMode(this.document) !== DOCUMENT_MODE.QUIRKS && this.hasInButtonScope($.P)) this.closePElement();
    this.insertElement(token, NS.HTML);
    this.insertionMode = MODE.IN_TABLE;
  }

  private areaStartTagInBody(token: TagToken): void {
    this.reconstructActiveFormattingElements();
    this.appendElement(token, NS.HTML);
  }

  private hrStartTagInBody(token: TagToken): void {
    if (this.hasInButtonScope($.P)) this.closePElement();
    this.appendElement(token, NS.HTML);
  }

  private textareaStartTagInBody(token: TagToken): void {
    this.insertElement(token, NS.HTML);
    this.skipNextNewLine = true;
    this.originalInsertionMode = this.insertionMode;
    this.insertionMode = MODE.TEXT;
    this.switchTokenizerToRawText(RAW.RCDATA, 'textarea');
  }

  private xmpStartTagInBody(token: TagToken): void {
    if (this.hasInButtonScope($.P)) this.closePElement();
    this.reconstructActiveFormattingElements();
    this.switchToTextParsing(token, RAW.RAWTEXT);
  }

  private selectStartTagInBody(token: TagToken): void {
    this.reconstructActiveFormattingElements();
    this.insertElement(token, NS.HTML);
    const m = this.insertionMode;
    this.insertionMode =
      m === MODE.IN_TABLE || m === MODE.IN_CAPTION || m === MODE.IN_TABLE_BODY || m === MODE.IN_ROW || m === MODE.IN_CELL
        ? MODE.IN_SELECT_IN_TABLE
        : MODE.IN_SELECT;
  }

  private optgroupStartTagInBody(token: TagToken): void {
    if (this.currentTagId === $.OPTION) this.pop();
    this.reconstructActiveFormattingElements();
    this.insertElement(token, NS.HTML);
  }

  private rbStartTagInBody(token: TagToken): void {
    if (this.hasInScope($.RUBY)) this.generateImpliedEndTags();
    this.insertElement(token, NS.HTML);
  }

  private rtStartTagInBody(token: TagToken): void {
    if (this.hasInScope($.RUBY)) this.generateImpliedEndTagsWithExclusion($.RTC);
    this.insertElement(token, NS.HTML);
  }

  private foreignStartTagInBody(token: TagToken, ns: P5.NS): void {
    this.reconstructActiveFormattingElements();
    if (ns === NS.MATHML) foreignContent.adjustTokenMathMLAttrs(token);
    else foreignContent.adjustTokenSVGAttrs(token);
    foreignContent.adjustTokenXMLAttrs(token);
    if (token.selfClosing) this.appendElement(token, ns);
    else this.insertElement(token, ns);
  }

  private genericStartTagInBody(token: TagToken): void {
    this.reconstructActiveFormattingElements();
    this.insertElement(token, NS.HTML);
  }

  private startTagInBody(token: TagToken): void {
    switch (token.tagID) {
      case $.I:
      case $.S:
      case $.B:
      case $.U:
      case $.EM:
      case $.TT:
      case $.BIG:
      case $.CODE:
      case $.FONT:
      case $.SMALL:
      case $.STRIKE:
      case $.STRONG:
        this.bStartTagInBody(token);
        break;
      case $.A:
        this.aStartTagInBody(token);
        break;
      case $.H1:
      case $.H2:
      case $.H3:
      case $.H4:
      case $.H5:
      case $.H6:
        this.numberedHeaderStartTagInBody(token);
        break;
      case $.P:
      case $.DL:
      case $.OL:
      case $.UL:
      case $.DIV:
      case $.DIR:
      case $.NAV:
      case $.MAIN:
      case $.MENU:
      case $.ASIDE:
      case $.CENTER:
      case $.FIGURE:
      case $.FOOTER:
      case $.HEADER:
      case $.HGROUP:
      case $.DIALOG:
      case $.DETAILS:
      case $.ADDRESS:
      case $.ARTICLE:
      case $.SEARCH:
      case $.SECTION:
      case $.SUMMARY:
      case $.FIELDSET:
      case $.BLOCKQUOTE:
      case $.FIGCAPTION:
        this.addressStartTagInBody(token);
        break;
      case $.LI:
      case $.DD:
      case $.DT:
        this.listItemStartTagInBody(token);
        break;
      case $.BR:
      case $.IMG:
      case $.WBR:
      case $.AREA:
      case $.EMBED:
      case $.KEYGEN:
        this.areaStartTagInBody(token);
        break;
      case $.HR:
        this.hrStartTagInBody(token);
        break;
      case $.RB:
      case $.RTC:
        this.rbStartTagInBody(token);
        break;
      case $.RT:
      case $.RP:
        this.rtStartTagInBody(token);
        break;
      case $.PRE:
      case $.LISTING:
        this.preStartTagInBody(token);
        break;
      case $.XMP:
        this.xmpStartTagInBody(token);
        break;
      case $.SVG:
        this.foreignStartTagInBody(token, NS.SVG);
        break;
      case $.HTML:
        this.htmlStartTagInBody(token);
        break;
      case $.BASE:
      case $.LINK:
      case $.META:
      case $.STYLE:
      case $.TITLE:
      case $.SCRIPT:
      case $.BGSOUND:
      case $.BASEFONT:
      case $.TEMPLATE:
        this.startTagInHead(token);
        break;
      case $.BODY:
        this.bodyStartTagInBody(token);
        break;
      case $.FORM:
        this.formStartTagInBody(token);
        break;
      case $.NOBR:
        this.nobrStartTagInBody(token);
        break;
      case $.MATH:
        this.foreignStartTagInBody(token, NS.MATHML);
        break;
      case $.TABLE:
        this.tableStartTagInBody(token);
        break;
      case $.INPUT:
        this.areaStartTagInBody(token);
        break;
      case $.PARAM:
      case $.TRACK:
      case $.SOURCE:
        this.appendElement(token, NS.HTML);
        break;
      case $.IMAGE:
        token.tagName = 'img';
        token.tagID = $.IMG;
        this.areaStartTagInBody(token);
        break;
      case $.BUTTON:
        this.buttonStartTagInBody(token);
        break;
      case $.APPLET:
      case $.OBJECT:
      case $.MARQUEE:
        this.appletStartTagInBody(token);
        break;
      case $.IFRAME:
      case $.NOEMBED:
      case $.NOFRAMES:
      case $.NOSCRIPT:
        // noscript as raw text: scripting enabled, as in a browser
        this.switchToTextParsing(token, RAW.RAWTEXT);
        break;
      case $.SELECT:
        this.selectStartTagInBody(token);
        break;
      case $.OPTION:
      case $.OPTGROUP:
        this.optgroupStartTagInBody(token);
        break;
      case $.FRAMESET:
        bail('frameset');
      case $.TEXTAREA:
        this.textareaStartTagInBody(token);
        break;
      case $.PLAINTEXT:
        bail('plaintext');
      case $.COL:
      case $.TH:
      case $.TD:
      case $.TR:
      case $.HEAD:
      case $.FRAME:
      case $.TBODY:
      case $.TFOOT:
      case $.THEAD:
      case $.CAPTION:
      case $.COLGROUP:
        break;
      default:
        this.genericStartTagInBody(token);
    }
  }

  private addressEndTagInBody(token: TagToken): void {
    const tn = token.tagID;
    if (this.hasInScope(tn)) {
      this.generateImpliedEndTags();
      this.popUntilTagNamePopped(tn);
    }
  }

  private formEndTagInBody(): void {
    const formElement = this.formElement;
    this.formElement = null;
    if (formElement && this.hasInScope($.FORM)) {
      this.generateImpliedEndTags();
      this.removeFromStack(formElement);
    }
  }

  private pEndTagInBody(): void {
    if (!this.hasInButtonScope($.P)) this.insertFakeElement('p', $.P);
    this.closePElement();
  }

  private liEndTagInBody(): void {
    if (this.hasInListItemScope($.LI)) {
      this.generateImpliedEndTagsWithExclusion($.LI);
      this.popUntilTagNamePopped($.LI);
    }
  }

  private ddEndTagInBody(token: TagToken): void {
    const tn = token.tagID;
    if (this.hasInScope(tn)) {
      this.generateImpliedEndTagsWithExclusion(tn);
      this.popUntilTagNamePopped(tn);
    }
  }

  private numberedHeaderEndTagInBody(): void {
    if (this.hasNumberedHeaderInScope()) {
      this.generateImpliedEndTags();
      this.popUntilPopped(NUMBERED_HEADERS, NS.HTML);
    }
  }

  private appletEndTagInBody(token: TagToken): void {
    const tn = token.tagID;
    if (this.hasInScope(tn)) {
      this.generateImpliedEndTags();
      this.popUntilTagNamePopped(tn);
      this.clearAfeToLastMarker();
    }
  }

  private brEndTagInBody(): void {
    this.reconstructActiveFormattingElements();
    this.insertFakeElement('br', $.BR);
    this.pop();
  }

  /**
   * The topmost open HTML element with the token's name closes, unless a special element is open above it; a tag
   * without an ID is matched by name (parse5 8).
   */
  private genericEndTagInBody(token: TagToken): void {
    const tid = token.tagID;
    const i = tid === $.UNKNOWN ? this.indexOfTopmostByName(NS.HTML, token.tagName) : this.indexOfTopmost(tid);
    if (i > 0 && !this.hasSpecialElementAbove(i)) {
      this.generateImpliedEndTagsWithExclusion(tid);
      if (this.stackTop >= i) this.shortenToLength(i);
    }
  }

  private endTagInBody(token: TagToken): void {
    switch (token.tagID) {
      case $.A:
      case $.B:
      case $.I:
      case $.S:
      case $.U:
      case $.EM:
      case $.TT:
      case $.BIG:
      case $.CODE:
      case $.FONT:
      case $.NOBR:
      case $.SMALL:
      case $.STRIKE:
      case $.STRONG:
        this.callAdoptionAgency(token);
        break;
      case $.P:
        this.pEndTagInBody();
        break;
      case $.DL:
      case $.UL:
      case $.OL:
      case $.DIR:
      case $.DIV:
      case $.NAV:
      case $.PRE:
      case $.MAIN:
      case $.MENU:
      case $.ASIDE:
      case $.BUTTON:
      case $.CENTER:
      case $.FIGURE:
      case $.FOOTER:
      case $.HEADER:
      case $.HGROUP:
      case $.DIALOG:
      case $.ADDRESS:
      case $.ARTICLE:
      case $.DETAILS:
      case $.SEARCH:
      case $.SECTION:
      case $.SUMMARY:
      case $.LISTING:
      case $.FIELDSET:
      case $.BLOCKQUOTE:
      case $.FIGCAPTION:
        this.addressEndTagInBody(token);
        break;
      case $.LI:
        this.liEndTagInBody();
        break;
      case $.DD:
      case $.DT:
        this.ddEndTagInBody(token);
        break;
      case $.H1:
      case $.H2:
      case $.H3:
      case $.H4:
      case $.H5:
      case $.H6:
        this.numberedHeaderEndTagInBody();
        break;
      case $.BR:
        this.brEndTagInBody();
        break;
      case $.BODY:
        if (this.hasInScope($.BODY)) this.insertionMode = MODE.AFTER_BODY;
        break;
      case $.HTML:
        if (this.hasInScope($.BODY)) {
          this.insertionMode = MODE.AFTER_BODY;
          this.endTagAfterBody(token);
        }
        break;
      case $.FORM:
        this.formEndTagInBody();
        break;
      case $.APPLET:
      case $.OBJECT:
      case $.MARQUEE:
        this.appletEndTagInBody(token);
        break;
      case $.TEMPLATE:
        // no template is ever open here: ignored
        break;
      default:
        this.genericEndTagInBody(token);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The "text" insertion mode

  private endTagInText(): void {
    this.pop();
    this.insertionMode = this.originalInsertionMode;
  }

  // ---------------------------------------------------------------------------------------------
  // The "in table", "in table text", "in caption" and "in column group" insertion modes

  private characterInTable(token: CharacterToken): void {
    if (this.currentTagId !== undefined && TABLE_STRUCTURE_TAGS.has(this.currentTagId)) {
      this.pendingCharacterTokens.length = 0;
      this.hasNonWhitespacePendingCharacterToken = false;
      this.originalInsertionMode = this.insertionMode;
      this.insertionMode = MODE.IN_TABLE_TEXT;
      this.pendingCharacterTokens.push(token);
      if (token.type === TokenType.CHARACTER) this.hasNonWhitespacePendingCharacterToken = true;
    } else {
      this.tokenInTable(token);
    }
  }

  private startTagInTable(token: TagToken): void {
    switch (token.tagID) {
      case $.TD:
      case $.TH:
      case $.TR:
        this.clearBackTo(TABLE_CONTEXT, NS.HTML);
        this.insertFakeElement('tbody', $.TBODY);
        this.insertionMode = MODE.IN_TABLE_BODY;
        this.startTagInTableBody(token);
        break;
      case $.STYLE:
      case $.SCRIPT:
      case $.TEMPLATE:
        this.startTagInHead(token);
        break;
      case $.COL:
        this.clearBackTo(TABLE_CONTEXT, NS.HTML);
        this.insertFakeElement('colgroup', $.COLGROUP);
        this.insertionMode = MODE.IN_COLUMN_GROUP;
        this.startTagInColumnGroup(token);
        break;
      case $.FORM:
        if (!this.formElement) {
          this.insertElement(token, NS.HTML);
          this.formElement = this.current as Element;
          this.pop();
        }
        break;
      case $.TABLE:
        if (this.hasInTableScope($.TABLE)) {
          this.popUntilTagNamePopped($.TABLE);
          this.resetInsertionMode();
          this.processStartTag(token);
        }
        break;
      case $.TBODY:
      case $.TFOOT:
      case $.THEAD:
        this.clearBackTo(TABLE_CONTEXT, NS.HTML);
        this.insertElement(token, NS.HTML);
        this.insertionMode = MODE.IN_TABLE_BODY;
        break;
      case $.INPUT:
        if (isHiddenInput(token)) this.appendElement(token, NS.HTML);
        else this.tokenInTable(token);
        break;
      case $.CAPTION:
        this.clearBackTo(TABLE_CONTEXT, NS.HTML);
        this.insertMarker();
        this.insertElement(token, NS.HTML);
        this.insertionMode = MODE.IN_CAPTION;
        break;
      case $.COLGROUP:
        this.clearBackTo(TABLE_CONTEXT, NS.HTML);
        this.insertElement(token, NS.HTML);
        this.insertionMode = MODE.IN_COLUMN_GROUP;
        break;
      default:
        this.tokenInTable(token);
    }
  }

  private endTagInTable(token: TagToken): void {
    switch (token.tagID) {
      case $.TABLE:
        if (this.hasInTableScope($.TABLE)) {
          this.popUntilTagNamePopped($.TABLE);
          this.resetInsertionMode();
        }
        break;
      case $.TEMPLATE:
      case $.BODY:
      case $.CAPTION:
      case $.COL:
      case $.COLGROUP:
      case $.HTML:
      case $.TBODY:
      case $.TD:
      case $.TFOOT:
      case $.TH:
      case $.THEAD:
      case $.TR:
        break;
      default:
        this.tokenInTable(token);
    }
  }

  private tokenInTable(token: AnyToken): void {
    const saved = this.fosterParentingEnabled;
    this.fosterParentingEnabled = true;
    this.modeInBody(token);
    this.fosterParentingEnabled = saved;
  }

  private tokenInTableText(token: AnyToken): void {
    const pending = this.pendingCharacterTokens;
    if (this.hasNonWhitespacePendingCharacterToken) {
      for (let i = 0; i < pending.length; i++) this.tokenInTable(pending[i]!);
    } else {
      for (let i = 0; i < pending.length; i++) this.insertCharacters(pending[i]!.chars);
    }
    this.insertionMode = this.originalInsertionMode;
    this.processToken(token);
  }

  private startTagInCaption(token: TagToken): void {
    if (TABLE_VOID_ELEMENTS.has(token.tagID)) {
      if (this.hasInTableScope($.CAPTION)) {
        this.generateImpliedEndTags();
        this.popUntilTagNamePopped($.CAPTION);
        this.clearAfeToLastMarker();
        this.insertionMode = MODE.IN_TABLE;
        this.startTagInTable(token);
      }
    } else {
      this.startTagInBody(token);
    }
  }

  private endTagInCaption(token: TagToken): void {
    const tn = token.tagID;
    switch (tn) {
      case $.CAPTION:
      case $.TABLE:
        if (this.hasInTableScope($.CAPTION)) {
          this.generateImpliedEndTags();
          this.popUntilTagNamePopped($.CAPTION);
          this.clearAfeToLastMarker();
          this.insertionMode = MODE.IN_TABLE;
          if (tn === $.TABLE) this.endTagInTable(token);
        }
        break;
      case $.BODY:
      case $.COL:
      case $.COLGROUP:
      case $.HTML:
      case $.TBODY:
      case $.TD:
      case $.TFOOT:
      case $.TH:
      case $.THEAD:
      case $.TR:
        break;
      default:
        this.endTagInBody(token);
    }
  }

  private startTagInColumnGroup(token: TagToken): void {
    switch (token.tagID) {
      case $.HTML:
        this.startTagInBody(token);
        break;
      case $.COL:
        this.appendElement(token, NS.HTML);
        break;
      case $.TEMPLATE:
        this.startTagInHead(token);
        break;
      default:
        this.tokenInColumnGroup(token);
    }
  }

  private endTagInColumnGroup(token: TagToken): void {
    switch (token.tagID) {
      case $.COLGROUP:
        if (this.currentTagId === $.COLGROUP) {
          this.pop();
          this.insertionMode = MODE.IN_TABLE;
        }
        break;
      case $.TEMPLATE:
      case $.COL:
        break;
      default:
        this.tokenInColumnGroup(token);
    }
  }

  private tokenInColumnGroup(token: AnyToken): void {
    if (this.currentTagId === $.COLGROUP) {
      this.pop();
      this.insertionMode = MODE.IN_TABLE;
      this.processToken(token);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The "in table body", "in row" and "in cell" insertion modes

  private startTagInTableBody(token: TagToken): void {
    switch (token.tagID) {
      case $.TR:
        this.clearBackTo(TABLE_BODY_CONTEXT, NS.HTML);
        this.insertElement(token, NS.HTML);
        this.insertionMode = MODE.IN_ROW;
        break;
      case $.TH:
      case $.TD:
        this.clearBackTo(TABLE_BODY_CONTEXT, NS.HTML);
        this.insertFakeElement('tr', $.TR);
        this.insertionMode = MODE.IN_ROW;
        this.startTagInRow(token);
        break;
      case $.CAPTION:
      case $.COL:
      case $.COLGROUP:
      case $.TBODY:
      case $.TFOOT:
      case $.THEAD:
        if (this.hasTableBodyContextInTableScope()) {
          this.clearBackTo(TABLE_BODY_CONTEXT, NS.HTML);
          this.pop();
          this.insertionMode = MODE.IN_TABLE;
          this.startTagInTable(token);
        }
        break;
      default:
        this.startTagInTable(token);
    }
  }

  private endTagInTableBody(token: TagToken): void {
    const tn = token.tagID;
    switch (tn) {
      case $.TBODY:
      case $.TFOOT:
      case $.THEAD:
        if (this.hasInTableScope(tn)) {
          this.clearBackTo(TABLE_BODY_CONTEXT, NS.HTML);
          this.pop();
          this.insertionMode = MODE.IN_TABLE;
        }
        break;
      case $.TABLE:
        if (this.hasTableBodyContextInTableScope()) {
          this.clearBackTo(TABLE_BODY_CONTEXT, NS.HTML);
          this.pop();
          this.insertionMode = MODE.IN_TABLE;
          this.endTagInTable(token);
        }
        break;
      case $.BODY:
      case $.CAPTION:
      case $.COL:
      case $.COLGROUP:
      case $.HTML:
      case $.TD:
      case $.TH:
      case $.TR:
        break;
      default:
        this.endTagInTable(token);
    }
  }

  private startTagInRow(token: TagToken): void {
    switch (token.tagID) {
      case $.TH:
      case $.TD:
        this.clearBackTo(TABLE_ROW_CONTEXT, NS.HTML);
        this.insertElement(token, NS.HTML);
        this.insertionMode = MODE.IN_CELL;
        this.insertMarker();
        break;
      case $.CAPTION:
      case $.COL:
      case $.COLGROUP:
      case $.TBODY:
      case $.TFOOT:
      case $.THEAD:
      case $.TR:
        if (this.hasInTableScope($.TR)) {
          this.clearBackTo(TABLE_ROW_CONTEXT, NS.HTML);
          this.pop();
          this.insertionMode = MODE.IN_TABLE_BODY;
          this.startTagInTableBody(token);
        }
        break;
      default:
        this.startTagInTable(token);
    }
  }

  private endTagInRow(token: TagToken): void {
    switch (token.tagID) {
      case $.TR:
        if (this.hasInTableScope($.TR)) {
          this.clearBackTo(TABLE_ROW_CONTEXT, NS.HTML);
          this.pop();
          this.insertionMode = MODE.IN_TABLE_BODY;
        }
        break;
      case $.TABLE:
        if (this.hasInTableScope($.TR)) {
          this.clearBackTo(TABLE_ROW_CONTEXT, NS.HTML);
          this.pop();
          this.insertionMode = MODE.IN_TABLE_BODY;
          this.endTagInTableBody(token);
        }
        break;
      case $.TBODY:
      case $.TFOOT:
      case $.THEAD:
        if (this.hasInTableScope(token.tagID) || this.hasInTableScope($.TR)) {
          this.clearBackTo(TABLE_ROW_CONTEXT, NS.HTML);
          this.pop();
          this.insertionMode = MODE.IN_TABLE_BODY;
          this.endTagInTableBody(token);
        }
        break;
      case $.BODY:
      case $.CAPTION:
      case $.COL:
      case $.COLGROUP:
      case $.HTML:
      case $.TD:
      case $.TH:
        break;
      default:
        this.endTagInTable(token);
    }
  }

  private closeTableCell(): void {
    this.generateImpliedEndTags();
    this.popUntilPopped(TABLE_CELLS, NS.HTML);
    this.clearAfeToLastMarker();
    this.insertionMode = MODE.IN_ROW;
  }

  private startTagInCell(token: TagToken): void {
    if (TABLE_VOID_ELEMENTS.has(token.tagID)) {
      if (this.hasInTableScope($.TD) || this.hasInTableScope($.TH)) {
        this.closeTableCell();
        this.startTagInRow(token);
      }
    } else {
      this.startTagInBody(token);
    }
  }

  private endTagInCell(token: TagToken): void {
    const tn = token.tagID;
    switch (tn) {
      case $.TD:
      case $.TH:
        if (this.hasInTableScope(tn)) {
          this.generateImpliedEndTags();
          this.popUntilTagNamePopped(tn);
          this.clearAfeToLastMarker();
          this.insertionMode = MODE.IN_ROW;
        }
        break;
      case $.TABLE:
      case $.TBODY:
      case $.TFOOT:
      case $.THEAD:
      case $.TR:
        if (this.hasInTableScope(tn)) {
          this.closeTableCell();
          this.endTagInRow(token);
        }
        break;
      case $.BODY:
      case $.CAPTION:
      case $.COL:
      case $.COLGROUP:
      case $.HTML:
        break;
      default:
        this.endTagInBody(token);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The "in select" and "in select in table" insertion modes

  private startTagInSelect(token: TagToken): void {
    switch (token.tagID) {
      case $.HTML:
        this.startTagInBody(token);
        break;
      case $.OPTION:
        if (this.currentTagId === $.OPTION) this.pop();
        this.insertElement(token, NS.HTML);
        break;
      case $.OPTGROUP:
        if (this.currentTagId === $.OPTION) this.pop();
        if (this.currentTagId === $.OPTGROUP) this.pop();
        this.insertElement(token, NS.HTML);
        break;
      case $.HR:
        if (this.currentTagId === $.OPTION) this.pop();
        if (this.currentTagId === $.OPTGROUP) this.pop();
        this.appendElement(token, NS.HTML);
        break;
      case $.INPUT:
      case $.KEYGEN:
      case $.TEXTAREA:
      case $.SELECT:
        if (this.hasInSelectScope($.SELECT)) {
          this.popUntilTagNamePopped($.SELECT);
          this.resetInsertionMode();
          if (token.tagID !== $.SELECT) this.processStartTag(token);
        }
        break;
      case $.SCRIPT:
      case $.TEMPLATE:
        this.startTagInHead(token);
        break;
      default:
      // ignored
    }
  }

  private endTagInSelect(token: TagToken): void {
    switch (token.tagID) {
      case $.OPTGROUP:
        if (this.stackTop > 0 && this.currentTagId === $.OPTION && this.tagIDs[this.stackTop - 1] === $.OPTGROUP) this.pop();
        if (this.currentTagId === $.OPTGROUP) this.pop();
        break;
      case $.OPTION:
        if (this.currentTagId === $.OPTION) this.pop();
        break;
      case $.SELECT:
        if (this.hasInSelectScope($.SELECT)) {
          this.popUntilTagNamePopped($.SELECT);
          this.resetInsertionMode();
        }
        break;
      default:
      // template end tag with no template open, and any other end tag: ignored
    }
  }

  private startTagInSelectInTable(token: TagToken): void {
    const tn = token.tagID;
    if (tn === $.CAPTION || tn === $.TABLE || tn === $.TBODY || tn === $.TFOOT || tn === $.THEAD || tn === $.TR || tn === $.TD || tn === $.TH) {
      this.popUntilTagNamePopped($.SELECT);
      this.resetInsertionMode();
      this.processStartTag(token);
    } else {
      this.startTagInSelect(token);
    }
  }

  private endTagInSelectInTable(token: TagToken): void {
    const tn = token.tagID;
    if (tn === $.CAPTION || tn === $.TABLE || tn === $.TBODY || tn === $.TFOOT || tn === $.THEAD || tn === $.TR || tn === $.TD || tn === $.TH) {
      if (this.hasInTableScope(tn)) {
        this.popUntilTagNamePopped($.SELECT);
        this.resetInsertionMode();
        this.onEndTag(token);
      }
    } else {
      this.endTagInSelect(token);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // "Reset the insertion mode appropriately" (no templates, no fragment context)

  /** The topmost open HTML element that selects an insertion mode decides it (parse5 8: only HTML elements do). */
  private resetInsertionMode(): void {
    let i = this.stackTop;
    while (i >= 0 && !(INSERTION_MODE_TAGS.has(this.tagIDs[i]!) && this.items[i]!.namespace === NS.HTML)) i--;
    if (i >= 0) {
      switch (this.tagIDs[i]) {
        case $.TR:
          this.insertionMode = MODE.IN_ROW;
          return;
        case $.TBODY:
        case $.THEAD:
        case $.TFOOT:
          this.insertionMode = MODE.IN_TABLE_BODY;
          return;
        case $.CAPTION:
          this.insertionMode = MODE.IN_CAPTION;
          return;
        case $.COLGROUP:
          this.insertionMode = MODE.IN_COLUMN_GROUP;
          return;
        case $.TABLE:
          this.insertionMode = MODE.IN_TABLE;
          return;
        case $.BODY:
          this.insertionMode = MODE.IN_BODY;
          return;
        case $.FRAMESET:
        case $.TEMPLATE:
          bail('reset of the insertion mode at a frameset or template');
        case $.SELECT:
          this.resetInsertionModeForSelect(i);
          return;
        case $.HTML:
          this.insertionMode = this.headElement ? MODE.AFTER_HEAD : MODE.BEFORE_HEAD;
          return;
        case $.TD:
        case $.TH:
          if (i > 0) {
            this.insertionMode = MODE.IN_CELL;
            return;
          }
          break;
        case $.HEAD:
          if (i > 0) {
            this.insertionMode = MODE.IN_HEAD;
            return;
          }
          break;
      }
    }
    this.insertionMode = MODE.IN_BODY;
  }

  private resetInsertionModeForSelect(selectIdx: number): void {
    // The select is the topmost element that selects a mode, so open tables and templates are below it.
    if (selectIdx > 0) {
      const tableIdx = this.indexOfTopmost($.TABLE);
      if (tableIdx > 0 && tableIdx > this.indexOfTopmost($.TEMPLATE)) {
        this.insertionMode = MODE.IN_SELECT_IN_TABLE;
        return;
      }
    }
    this.insertionMode = MODE.IN_SELECT;
  }

  // ---------------------------------------------------------------------------------------------
  // The "after body" and "after after body" insertion modes

  private startTagAfterBody(token: TagToken): void {
    if (token.tagID === $.HTML) this.startTagInBody(token);
    else this.tokenAfterBody(token);
  }

  private endTagAfterBody(token: TagToken): void {
    if (token.tagID === $.HTML) this.insertionMode = MODE.AFTER_AFTER_BODY;
    else this.tokenAfterBody(token);
  }

  private tokenAfterBody(token: AnyToken): void {
    this.insertionMode = MODE.IN_BODY;
    this.modeInBody(token);
  }

  private startTagAfterAfterBody(token: TagToken): void {
    if (token.tagID === $.HTML) this.startTagInBody(token);
    else this.tokenAfterAfterBody(token);
  }

  private tokenAfterAfterBody(token: AnyToken): void {
    this.insertionMode = MODE.IN_BODY;
    this.modeInBody(token);
  }

  // ---------------------------------------------------------------------------------------------
  // The rules for parsing tokens in foreign content

  private popUntilHtmlOrIntegrationPoint(): void {
    while (
      (this.current as Element).namespace !== NS.HTML &&
      this.currentTagId !== undefined &&
      !this.isIntegrationPoint(this.currentTagId, this.current as Element)
    ) {
      this.pop();
    }
  }

  private startTagInForeignContent(token: TagToken): void {
    if (foreignContent.causesExit(token)) {
      this.popUntilHtmlOrIntegrationPoint();
      this.startTagOutsideForeignContent(token);
      return;
    }
    const currentNs = (this.current as Element).namespace as P5.NS;
    if (currentNs === NS.MATHML) {
      foreignContent.adjustTokenMathMLAttrs(token);
    } else if (currentNs === NS.SVG) {
      foreignContent.adjustTokenSVGTagName(token);
      foreignContent.adjustTokenSVGAttrs(token);
    }
    foreignContent.adjustTokenXMLAttrs(token);
    if (token.selfClosing) this.appendElement(token, currentNs);
    else this.insertElement(token, currentNs);
  }

  private endTagInForeignContent(token: TagToken): void {
    if (token.tagID === $.P || token.tagID === $.BR) {
      this.popUntilHtmlOrIntegrationPoint();
      this.endTagOutsideForeignContent(token);
      return;
    }
    if (this.stackTop === 0) return;
    // The topmost foreign element with the token's name closes, unless an HTML element is open above it. Foreign names
    // are the lower-cased start tag name or its SVG adjustment (parse5 8).
    const { tagName } = token;
    const adjusted = foreignContent.SVG_TAG_NAMES_ADJUSTMENT_MAP.get(tagName);
    const i = Math.max(
      this.indexOfTopmostByName(NS.SVG, tagName),
      this.indexOfTopmostByName(NS.MATHML, tagName),
      adjusted === undefined ? -1 : this.indexOfTopmostByName(NS.SVG, adjusted),
    );
    if (i > this.indexOfTopmostHtmlElement()) this.shortenToLength(i);
    else this.endTagOutsideForeignContent(token);
  }
}
