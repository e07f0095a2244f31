/**
 * HTML to a DOM the way a browser builds it (WHATWG HTML tree construction), at htmlparser2's speed.
 *
 * parseHtml() returns exactly the tree parse5 builds with parse5-htmlparser2-tree-adapter (domhandler
 * nodes, as cheerio's non-slim `load()` has them): html/head/body implied, `<tbody>` inserted, `<p>` closed
 * by block start tags, `</h2>` closing an `<h3>`, and so on. A fast path (tree-builder.ts: htmlparser2's
 * tokenizer driving a port of parse5's tree construction) answers for the documents it can build exactly;
 * on anything outside its subset it gives up and parse5 parses the whole document. The invariant, tested on
 * the corpus and on random tag soup (test/unit/html-parse.test.ts): whenever the fast path returns a tree,
 * it is identical to parse5's. See docs/html-parsing.md.
 *
 * Every page is hostile input: the tree and the work are bounded (limits.ts, docs/html-parsing.md "Bounds"):
 * Chromium's depth rule at 512 open elements, a stack of at most 1,024, at most 64 active formatting elements,
 * 500,000 nodes and 10 Mi characters of text; under them the parse is linear in the input. The fast path gives up
 * on any bound; the fallback (bounded-parse5.ts) applies them. parseTruncation(doc) says whether a bound cut the
 * document short.
 */
import { type Document, type ProcessingInstruction, isDirective } from 'domhandler';
import { BAIL, FastTreeBuilder, type DoctypeInfo, type TokenizerInternals } from './tree-builder.ts';
import { treeDifference } from './compare.ts';
import { Tokenizer } from 'htmlparser2';
import { parseBounded } from './bounded-parse5.ts';

export { MAX_DEPTH, MAX_FORMATTING_ELEMENTS, MAX_NODES, MAX_OPEN_ELEMENTS, MAX_TEXT_CHARS, parseTruncation, type ParseLimit } from './limits.ts';

/**
 * parse5 with the htmlparser2 tree adapter, scripting enabled (`<noscript>` content is text, as in a
 * browser running scripts), within the bounds of limits.ts (bounded-parse5.ts): the reference and the fallback.
 * Below the bounds (every page of the corpus) this is `parse5.parse()`'s tree.
 */
export function parseHtmlWithParse5(html: string): Document {
  return parseBounded(html);
}

const doctypes = new Map<string, DoctypeInfo>();
const DOCTYPE_CACHE_SIZE = 64;

/**
 * How parse5 reads a doctype (`decl`: the text between `<!` and `>`): the doctype token ends at the first
 * `>` whatever the context, so parsing it alone gives its name, ids and document mode exactly.
 */
function doctypeOf(decl: string): DoctypeInfo {
  let info = doctypes.get(decl);
  if (info) return info;
  const doc = parseHtmlWithParse5(`<!${decl}>`);
  const node = doc.children.find((n) => isDirective(n) && n.name === '!doctype') as ProcessingInstruction;
  const read: DoctypeInfo = {
    name: node['x-name'] ?? '',
    publicId: node['x-publicId'] ?? '',
    systemId: node['x-systemId'] ?? '',
    mode: (doc['x-mode'] ?? 'no-quirks') as DoctypeInfo['mode'],
  };
  if (doctypes.size >= DOCTYPE_CACHE_SIZE) doctypes.clear();
  doctypes.set(decl, read);
  return read;
}

let lastBail = '';

/**
 * The fast path alone: the document, or null when the input is outside its subset (then
 * lastBailReason() says why). Never returns a tree that differs from parseHtmlWithParse5()'s.
 * @throws what the fast path throws besides giving up (a bug: tests call this to see it; parseHtml() falls
 *   back to parse5 instead).
 */
export function parseHtmlFast(html: string): Document | null {
  if (!fastPathUsable) {
    lastBail = 'fast path disabled: htmlparser2 Tokenizer internals differ from 10.1.0';
    return null;
  }
  if (html.includes('\0')) {
    lastBail = 'NUL character';
    return null;
  }
  try {
    return new FastTreeBuilder(html, doctypeOf).run();
  } catch (err) {
    if (err !== BAIL) throw err;
    lastBail = BAIL.reason;
    return null;
  }
}

/** Why the last parseHtmlFast() call returned null. */
export function lastBailReason(): string {
  return lastBail;
}

/**
 * Parses an HTML document as a browser does: the fast path when it answers, parse5 otherwise.
 * @throws TypeError when `html` is not a string.
 * @returns a domhandler Document (nodes as parse5-htmlparser2-tree-adapter makes them), ready for cheerio's
 *   `load()`.
 */
export function parseHtml(html: string): Document {
  if (typeof html !== 'string') throw new TypeError(`parseHtml: html must be a string, not ${html === null ? 'null' : typeof html}`);
  try {
    const doc = parseHtmlFast(html);
    if (doc) return doc;
  } catch (err) {
    lastBail = `fast path error: ${err instanceof Error ? err.message : String(err)}`;
  }
  return parseHtmlWithParse5(html);
}

/**
 * The fast path moves htmlparser2's tokenizer through private fields. If an htmlparser2 other than 10.1.0
 * lays them out differently, every document goes to parse5 (slower, never wrong): checked once at load on a
 * document that uses each of them.
 */
function checkFastPath(): boolean {
  const probe = new Tokenizer({}, {} as never) as unknown as TokenizerInternals;
  const numbers = [probe.index, probe.sectionStart, probe.entityStart, probe.state];
  if (numbers.some((n) => typeof n !== 'number') || typeof probe.isSpecial !== 'boolean') {
    return false;
  }
  const sample =
    '<!DOCTYPE html><title>a &amp; b</title><noscript><p>x</noscript><table><tr><td>1<svg viewbox="0 0 1 1"><title>t</title></svg>' +
    '<a title="&copy; &not x">' +
    '</table><script>if (a </b) {}</script><textarea>\nt</textarea><p>end<!-- c -->';
  try {
    fastPathUsable = true;
    const fast = parseHtmlFast(sample);
    return fast !== null && treeDifference(fast, parseHtmlWithParse5(sample)) === null;
  } catch {
    return false;
  }
}
let fastPathUsable = true;
fastPathUsable = checkFastPath();
