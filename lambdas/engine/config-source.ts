/**
 * Reading the YAML text of a config, in time linear in its size and bounded by caps (docs/limits.md):
 *
 * 1. {@link scanYaml}: one pass of the yaml library's `Lexer` counts tokens and nesting and stops at the
 *    first cap crossed, before any tree is built. The library's parser costs 1-2 µs per token (a blank
 *    line is a token), so the token cap bounds the parse that follows (measured: 50,000 tokens in
 *    60-110 ms on the 2-core machine).
 * 2. `parseDocument` without the library's unique-key check (it compares every key with every other key
 *    of its mapping: 25,000 keys took 4 s), then {@link indexDocument}: one walk of the tree that finds
 *    duplicate keys with a set per mapping, enforces the key cap per mapping, and records where each
 *    config path starts in the text, so that placing a problem is a lookup, not a search of the tree.
 *
 * Used by parseConfig (./config.ts); nothing here knows the config language itself.
 */
import { Lexer, LineCounter, isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Document, type Node as YamlNode } from 'yaml';

/** Most YAML tokens (scalars, keys, indicators, whitespace runs, comments, line breaks) a config may have. A config of 200 fields and 200 detail fields, each with six keys and five transforms, has about 21,000. */
export const MAX_CONFIG_TOKENS = 50_000;
/** Deepest nesting of collections in a config (a config needs 5: extract.fields[i].transform[j]). */
export const MAX_CONFIG_DEPTH = 32;
/** Most keys in one mapping (the language's largest mapping has 12). */
export const MAX_MAPPING_KEYS = 100;

/** A path in a config: keys and list indexes, e.g. `['extract', 'fields', 2, 'type']`. */
export type Segment = string | number;

/** A problem found while reading the text: a message and a 1-based place. */
export interface SourceProblem {
  message: string;
  line?: number;
  column?: number;
}

/** The lexer's control characters (yaml's docs for `Lexer`): they stand for no text of the source. */
const CONTROL = new Set(['\x02', '\x18', '\x1f']);

/** 1-based line and column of an offset, counted once per text. */
function lineCol(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/**
 * Counts tokens and nesting with the yaml library's lexer and stops at the first cap crossed.
 *
 * Nesting is an upper bound that needs no parse: open flow collections, plus the indentation levels of
 * block lines, plus the `-` and `?` indicators before a line's content (`- - - x` nests three lists).
 * @returns null when the text is within the caps; else the problem, placed where the cap was crossed.
 */
export function scanYaml(text: string): SourceProblem | null {
  let tokens = 0;
  let offset = 0;
  let flow = 0;
  let lineStart = 0;
  let lineIndicators = 0;
  let lineHasContent = false;
  const indents: number[] = [];
  for (const token of new Lexer().lex(text)) {
    if (CONTROL.has(token)) continue;
    const at = offset;
    offset += token.length;
    if (++tokens > MAX_CONFIG_TOKENS) {
      return { message: `the config is too long: more than ${MAX_CONFIG_TOKENS.toLocaleString('en-US')} YAML tokens (keys, values, indicators, comments and line breaks; a config of 200 fields and 200 detail fields has about 21,000)`, ...lineCol(text, at) };
    }
    const c = token.charCodeAt(0);
    if (token === '\n' || token === '\r\n') {
      lineStart = offset;
      lineIndicators = 0;
      lineHasContent = false;
      continue;
    }
    if (c === 0x20 || c === 0x09 || c === 0x23 /* # */) continue;
    if (flow === 0 && !lineHasContent) {
      const column = at - lineStart;
      while (indents.length && indents[indents.length - 1]! >= column) indents.pop();
      indents.push(column);
    }
    lineHasContent = true;
    if (token === '[' || token === '{') flow++;
    else if ((token === ']' || token === '}') && flow > 0) flow--;
    else if (flow === 0 && (token === '-' || token === '?')) lineIndicators++;
    if (flow + indents.length + lineIndicators > MAX_CONFIG_DEPTH) {
      return { message: `the config is nested too deeply: more than ${MAX_CONFIG_DEPTH} levels of lists and mappings (a config needs 5)`, ...lineCol(text, at) };
    }
  }
  return null;
}

/** Where config paths start in the text: formatted path (`extract.fields[2].type`) -> offset. */
export type PathIndex = Map<string, number>;

/** `['extract', 'fields', 2, 'type']` -> `extract.fields[2].type`. */
export function formatPath(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) out = appendSegment(out, s);
  return out;
}

function appendSegment(path: string, s: Segment): string {
  return typeof s === 'number' ? `${path}[${s}]` : path ? `${path}.${s}` : s;
}

/**
 * One walk of the tree: the start of every path (a mapping entry at its key, a list item at the item),
 * duplicate keys and the key cap. Aliases are not followed: a path through an alias is placed at the alias.
 * @returns the index, and the problems (duplicate keys, mappings over {@link MAX_MAPPING_KEYS}) in
 *   document order.
 */
export function indexDocument(doc: Document, lc: LineCounter): { index: PathIndex; problems: SourceProblem[] } {
  const index: PathIndex = new Map();
  const problems: SourceProblem[] = [];
  const place = (offset: number | undefined) => {
    if (offset === undefined) return {};
    const p = lc.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const walk = (node: unknown, path: string) => {
    if (isAlias(node)) return;
    if (isMap(node)) {
      if (node.items.length > MAX_MAPPING_KEYS) {
        problems.push({ message: `${path || 'the top level'} has ${node.items.length} keys; a mapping of a config has at most ${MAX_MAPPING_KEYS}`, ...place(node.range?.[0]) });
        return;
      }
      const seen = new Map<string, number | undefined>();
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const keyNode = pair.key as YamlNode | null;
        const key = isScalar(keyNode) ? String(keyNode.value) : null;
        const at = keyNode?.range?.[0];
        if (key === null) {
          walk(pair.value, path);
          continue;
        }
        if (seen.has(key)) {
          const first = place(seen.get(key));
          problems.push({ message: `duplicate key "${key}"${first.line ? ` (first at line ${first.line})` : ''}: keys of a mapping must be unique`, ...place(at) });
          continue;
        }
        seen.set(key, at);
        const child = appendSegment(path, key);
        if (at !== undefined) index.set(child, at);
        walk(pair.value, child);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const child = appendSegment(path, i);
        const at = (item as YamlNode | null)?.range?.[0];
        if (at !== undefined) index.set(child, at);
        walk(item, child);
      });
    }
  };
  const root = doc.contents as YamlNode | null;
  if (root?.range) index.set('', root.range[0]);
  walk(root, '');
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  return { index, problems };
}

/**
 * Where a config path lives in the text: the deepest prefix of it that the index knows (a missing key
 * is placed at the mapping that lacks it).
 * @returns 1-based line and column, or nothing when not even the document has a place.
 */
export function locate(index: PathIndex, lc: LineCounter, segments: readonly Segment[]): { line?: number; column?: number } {
  let offset = index.get('');
  let path = '';
  for (const s of segments) {
    path = appendSegment(path, s);
    const at = index.get(path);
    if (at === undefined) break;
    offset = at;
  }
  if (offset === undefined) return {};
  const pos = lc.linePos(offset);
  return { line: pos.line, column: pos.col };
}

/** A parsed config text: the tree, its line counter and its syntax errors. */
export function parseYaml(text: string): { doc: Document; lc: LineCounter } {
  const lc = new LineCounter();
  // uniqueKeys: false: indexDocument finds duplicates in linear time (the library's check is quadratic).
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true, uniqueKeys: false, strict: true });
  return { doc, lc };
}
