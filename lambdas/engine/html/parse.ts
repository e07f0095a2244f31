/**
 * HTML to a DOM the way a browser builds it (WHATWG HTML tree construction), at htmlparser2's speed.
 *
 * parseHtml() returns exactly the tree parse5 8 builds with parse5-htmlparser2-tree-adapter (domhandler
 * nodes, as cheerio's non-slim `load()` has them): html/head/body implied, `<tbody>` inserted, `<p>` closed
 * by block start tags, `</h2>` closing an `<h3>`, and so on. A fast path (tree-builder.ts: htmlparser2's
 * tokenizer driving a port of parse5's tree construction) answers for the documents it can build exactly;
 * on anything outside its subset it gives up and parse5 parses the whole document. The invariant, tested on
 * the fixture site's pages and random tag soup (test/unit/html-parse.test.ts), and on the corpus
 * (test/corpus/html-parse.test.ts): whenever the fast path returns a tree,
 * it is identical to parse5's. The fast path runs only with an htmlparser2 in HTMLPARSER2_VERIFIED_RANGE whose
 * tokenizer passes a probe at load (checkFastPath). See docs/html-parsing.md.
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
// The bare specifier's package.json is not in htmlparser2's exports; this is the file `htmlparser2` resolves to from
// here (esbuild inlines it in the Lambda bundles).
import htmlparser2Package from '../../../node_modules/htmlparser2/package.json' with { type: 'json' };

export { MAX_DEPTH, MAX_FORMATTING_ELEMENTS, MAX_NODES, MAX_OPEN_ELEMENTS, MAX_TEXT_CHARS, parseTruncation, type ParseLimit } from './limits.ts';

/**
 * parse5 with the htmlparser2 tree adapter, scripting enabled (`<noscript>` content is text, as in a
 * browser running scripts), within the bounds of limits.ts (bounded-parse5.ts): the reference and the fallback.
 * Below the bounds (every page of the corpus) this is `parse5.parse()`'s tree.
 * @throws only what parse5 itself throws on a bug (none known in parse5 8.1.1: 7.3.0 threw a RangeError on a hex
 *   character reference with 254 or more leading zeros).
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
  if (fastPathOff !== null) {
    lastBail = fastPathOff;
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
 * The htmlparser2 versions the fast path was verified on (`test/unit/html-parse.test.ts`, `test/corpus/html-parse.test.ts` and the html5lib tests, on
 * 10.1.0): a range of plain `major.minor.patch` comparators (`>=`, `>`, `<=`, `<`, `=`), all of which must hold.
 * Patch releases of 10.1 are admitted unverified, on semver's promise (the probe at load still checks the Tokenizer's
 * private fields); 10.2 and later are not: the fast path is then off and every document goes to parse5.
 */
export const HTMLPARSER2_VERIFIED_RANGE = '>=10.1.0 <10.2.0';

/** The installed htmlparser2's version (its package.json, read when the module is loaded or bundled). */
export const HTMLPARSER2_VERSION: string = htmlparser2Package.version;

/** `[major, minor, patch]` of a plain `x.y.z` version, or null for anything else (a pre-release, a build tag). */
function versionParts(version: string): [number, number, number] | null {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/**
 * Whether `version` satisfies `range` (space-separated comparators such as `>=10.1.0 <10.2.0`, all of which must hold).
 * A version that is not plain `x.y.z` (a pre-release) satisfies no range.
 * @throws Error when a comparator of `range` is not `>=`, `>`, `<=`, `<`, `=` or nothing followed by `x.y.z`.
 */
export function versionInRange(version: string, range: string): boolean {
  const v = versionParts(version);
  const comparators = range.trim().split(/\s+/);
  let ok = v !== null;
  for (const comparator of comparators) {
    const m = /^(>=|<=|>|<|=)?(.*)$/.exec(comparator)!;
    const bound = versionParts(m[2]!);
    if (!bound) throw new Error(`versionInRange: bad comparator ${JSON.stringify(comparator)} in ${JSON.stringify(range)}`);
    if (!v) continue;
    let cmp = 0;
    for (let i = 0; i < 3 && cmp === 0; i++) cmp = Math.sign(v[i]! - bound[i]!);
    const op = m[1] ?? '=';
    const holds = op === '>=' ? cmp >= 0 : op === '>' ? cmp > 0 : op === '<=' ? cmp <= 0 : op === '<' ? cmp < 0 : cmp === 0;
    ok &&= holds;
  }
  return ok;
}

/**
 * The fast path moves htmlparser2's tokenizer through private fields, so it runs only with an htmlparser2 in
 * {@link HTMLPARSER2_VERIFIED_RANGE} whose Tokenizer has those fields and reads a probe document that uses each of
 * them into parse5's tree. Otherwise every document goes to parse5 (slower, never wrong).
 * @returns why the fast path cannot run with htmlparser2 `version`, or null when it can.
 */
function fastPathBlocker(version: string): string | null {
  if (!versionInRange(version, HTMLPARSER2_VERIFIED_RANGE)) {
    return `fast path disabled: htmlparser2 ${version} is outside ${HTMLPARSER2_VERIFIED_RANGE}, the versions it was verified on`;
  }
  const internalsDiffer = `fast path disabled: htmlparser2 ${version}'s Tokenizer internals differ from those of ${HTMLPARSER2_VERIFIED_RANGE}`;
  const probe = new Tokenizer({}, {} as never) as unknown as TokenizerInternals;
  const numbers = [probe.index, probe.sectionStart, probe.entityStart, probe.state];
  if (numbers.some((n) => typeof n !== 'number') || typeof probe.isSpecial !== 'boolean') return internalsDiffer;
  const sample =
    '<!DOCTYPE html><title>a &amp; b</title><noscript><p>x</noscript><table><tr><td>1<svg viewbox="0 0 1 1"><title>t</title></svg>' +
    '<a title="&copy; &not x">' +
    '</table><script>if (a </b) {}</script><textarea>\nt</textarea><p>end<!-- c -->';
  try {
    const fast = new FastTreeBuilder(sample, doctypeOf).run();
    return treeDifference(fast, parseHtmlWithParse5(sample)) === null ? null : internalsDiffer;
  } catch {
    return internalsDiffer;
  }
}

/** Why the fast path is off (see fastPathBlocker), or null when it is on. */
let fastPathOff: string | null = null;

/**
 * Checks the fast path against htmlparser2 `version` (done at load with the installed one, {@link HTMLPARSER2_VERSION})
 * and turns it off or on accordingly. Tests pass another version to see parseHtml() fall back to parse5.
 * @returns true when the fast path is on.
 */
export function checkFastPath(version: string = HTMLPARSER2_VERSION): boolean {
  fastPathOff = fastPathBlocker(version);
  return fastPathOff === null;
}
checkFastPath();
