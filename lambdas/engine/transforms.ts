/**
 * The 13 transforms of the YAML config language (docs/spec.md, "YAML config language"; docs/config-language.md, "Transforms").
 *
 * Transforms are pure functions on values, with no DOM and no Node built-ins, so the very same module
 * runs in the lightweight engine, over the heavy engine's rendered HTML and in the browser extension
 * (docs/architecture.md, idea 4). A transform string is parsed once per config (`compileTransforms`), not
 * once per row.
 *
 * Value rules (docs/config-language.md, "Transforms"):
 * - string transforms turn a number or boolean into its string first; `null` passes through unchanged;
 * - `to_number` and `extract_number` give a number, or `null` when there is no number;
 * - arguments are separated by `:`; a literal colon inside an argument is written `\:`.
 *
 * Regular expressions (`regex:` and the `regex` field type) run on RE2 (re2js: pure JavaScript, so the extension
 * runs them too): matching takes time linear in the text whatever the pattern, so `^(a+)+$` cannot backtrack for
 * ever. The syntax is RE2's, read the way JavaScript reads the common cases ({@link compilePattern}); what RE2
 * cannot run (backreferences, lookaround) is refused when the config is validated.
 */
import { RE2JS } from 're2js';

/** A value a field can hold while it goes through its transforms. */
export type FieldValue = string | number | boolean | null;

/** One parsed transform, ready to apply. */
export type Transform = (value: FieldValue) => FieldValue;

/** Thrown by {@link compileTransform} for an unknown transform or bad arguments. */
export class TransformError extends Error {
  override name = 'TransformError';
}

/** Currency symbols removed by `strip_currency`: pound, dollar, euro, yen, lira, plus their common variants. */
const CURRENCY = /US\$|[£$€¥₺￥＄￡]|\bTL(?=\s*\d)|(?<=\d\s*)TL\b/gu;

/** Every transform name of docs/spec.md, for the schema and error messages. */
export const TRANSFORM_NAMES = [
  'strip', 'lowercase', 'uppercase', 'strip_currency', 'to_number', 'extract_number', 'strip_html',
  'trim_whitespace', 'regex', 'replace', 'split', 'slice', 'template',
] as const;

function asText(value: FieldValue): string | null {
  if (value === null) return null;
  return typeof value === 'string' ? value : String(value);
}

/** Applies a string-to-string function, letting `null` through. */
function onText(fn: (s: string) => FieldValue): Transform {
  return (value) => {
    const text = asText(value);
    return text === null ? null : fn(text);
  };
}

/** Characters that only ever group digits by thousands: spaces (plain, no-break, narrow no-break, thin, figure) and apostrophes. */
const GROUP_SPACE = "[ \\u00a0\\u202f\\u2009\\u2007'\\u2019]";

/**
 * A number as written in a text: a sign (not glued to a word: "SKU-12" has no negative number), then
 * digits in runs joined by `.` or `,`, or by a space or apostrophe when exactly three digits follow
 * ("1 234", "1'000"), or a leading `.` ("$.50"); then an exponent ("1e3"). A separator is taken only
 * between digits, so "3." ends at the 3. The run may still not be one number ("12.03.2024"):
 * {@link readNumber} decides.
 */
const NUMBER_RUN = new RegExp(
  `(?:(?<![\\p{L}\\p{N}.,])[-+\\u2212])?(?:\\d+(?:(?:[.,]|${GROUP_SPACE}(?=\\d{3}(?!\\d)))\\d+)*|(?<![\\p{N}])\\.\\d+)(?:[eE][-+]?\\d+)?`,
  'u',
);

/**
 * Reads one run of {@link NUMBER_RUN} as a JavaScript number literal ("-1234.5", "1e3"), or `null` when
 * the run is not one number.
 *
 * Decisions (docs/config-language.md, "Numbers"):
 * - spaces and apostrophes group thousands; a `.` or `,` after such groups is the decimal separator
 *   ("1 234,50" -> 1234.5);
 * - when both `.` and `,` appear, the last is the decimal separator and may appear once ("1.234,56",
 *   "-1,234.56"; "1,23,456.78", Indian grouping, too);
 * - a lone `,` followed by exactly three digits after 1 to 3 leading digits (not a lone 0) groups
 *   thousands ("1,500" -> 1500), otherwise it is a decimal comma ("12,5", "0,500");
 * - a lone `.` is a decimal point ("1.500" -> 1.5: ambiguous, read as JavaScript and most English pages do);
 * - the same separator twice or more groups thousands when every group after the first has three
 *   digits ("2.500.000"), otherwise the run is not one number ("12.03.2024", "2.0.1", "8,10,12").
 */
function readNumber(run: string): string | null {
  const m = /^([-+\u2212]?)(.*?)([eE][-+]?\d+)?$/u.exec(run)!;
  const sign = m[1] === '' || m[1] === '+' ? '' : '-';
  const exponent = m[3] ?? '';
  const body = m[2]!;
  let intPart: string;
  let fraction = '';
  const spaced = body.split(new RegExp(GROUP_SPACE, 'u'));
  if (spaced.length > 1) {
    const last = /^(\d{3})(?:[.,](\d+))?$/.exec(spaced.at(-1)!);
    if (!/^\d{1,3}$/.test(spaced[0]!) || !last || !spaced.slice(1, -1).every((g) => /^\d{3}$/.test(g))) return null;
    intPart = spaced.slice(0, -1).join('') + last[1];
    fraction = last[2] ?? '';
  } else if (body.startsWith('.')) {
    intPart = '0';
    fraction = body.slice(1);
  } else {
    const lastDot = body.lastIndexOf('.');
    const lastComma = body.lastIndexOf(',');
    if (lastDot !== -1 && lastComma !== -1) {
      const decimal = lastDot > lastComma ? '.' : ',';
      const at = Math.max(lastDot, lastComma);
      if (body.indexOf(decimal) !== at) return null;
      intPart = body.slice(0, at).replace(/[.,]/g, '');
      fraction = body.slice(at + 1);
    } else if (lastDot === -1 && lastComma === -1) {
      intPart = body;
    } else {
      const sep = lastDot !== -1 ? '.' : ',';
      const groups = body.split(sep);
      const thousands = groups.slice(1).every((g) => g.length === 3) && /^\d{1,3}$/.test(groups[0]!) && groups[0] !== '0';
      if (groups.length > 2) {
        if (!thousands) return null;
        intPart = groups.join('');
      } else if (sep === ',' && thousands) {
        intPart = groups.join('');
      } else {
        [intPart, fraction] = groups as [string, string];
      }
    }
  }
  return `${sign}${intPart}${fraction ? `.${fraction}` : ''}${exponent}`;
}

/**
 * The one number parser of the language, behind `to_number` (mode `whole`: the text, trimmed, must be
 * one number) and `extract_number` (mode `first`: the first number in the text). For a text that is
 * exactly one number the two agree. In mode `first`, a first run that is not one number ("v2.0.1",
 * "12.03.2024") gives its leading integer (2, 12): the text has digits, and the first of them is the
 * likeliest reading.
 * @returns the number, or `null` when there is none (or it is not finite, "1e999").
 */
function parseNumber(text: string, mode: 'whole' | 'first' = 'whole'): number | null {
  const whole = mode === 'whole';
  const s = whole ? text.trim() : text;
  const m = NUMBER_RUN.exec(s);
  if (!m) return null;
  if (whole && (m.index !== 0 || m[0].length !== s.length)) return null;
  const literal = readNumber(m[0]) ?? (whole ? null : /^[-+\u2212]?\d+/u.exec(m[0])?.[0].replace('\u2212', '-'));
  if (literal == null) return null;
  const n = Number(literal);
  return Number.isFinite(n) ? n : null;
}

/** Splits `a:b\:c:d` into `['a', 'b:c', 'd']`: colon-separated arguments with `\:` as a literal colon. */
function splitArgs(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && text[i + 1] === ':') { cur += ':'; i++; continue; }
    if (ch === ':') { out.push(cur); cur = ''; continue; }
    cur += ch;
  }
  out.push(cur);
  return out;
}

/**
 * Limits of the regular expressions of a config (docs/config-language.md, "Regular expressions"). RE2 matches in
 * time proportional to the text's length times the pattern's program size (its NFA, when its DFA gives up): the
 * text a pattern reads is cut so that the product stays under `workLimit` (about a second of matching at the
 * slowest rate measured, 18 ns a step), and at `maxInputChars` for small patterns.
 */
export const REGEX_LIMITS = {
  /** Largest RE2 program accepted, in instructions (`RE2JS.programSize()`). */
  maxProgramSize: 2_000,
  /** Characters of a value a pattern reads at most (the first ones); UTF-16 code units. */
  maxInputChars: 1_000_000,
  /** Characters × program size a pattern may spend on one value: it reads at most workLimit / program size characters. */
  workLimit: 50_000_000,
} as const;

/** A compiled pattern of the `regex` field type or the `regex:` transform: RE2, linear time. */
export interface Pattern {
  /** The pattern as written in the config. */
  readonly source: string;
  /** Characters of a value this pattern reads (the first ones). */
  readonly maxInput: number;
  /** The match: the whole match, then each group (undefined when it took no part); null when nothing matches. */
  exec(text: string): ArrayLike<string | undefined | null> | null;
}

/** JavaScript's `\s` (ECMAScript WhiteSpace and LineTerminator), as RE2 class ranges. */
const JS_SPACE = '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
/** Its complement (JavaScript's `\S`), as RE2 class ranges. */
const JS_NOT_SPACE =
  '\\x{0}-\\x{8}\\x{E}-\\x{1F}\\x{21}-\\x{9F}\\x{A1}-\\x{167F}\\x{1681}-\\x{1FFF}\\x{200B}-\\x{2027}\\x{202A}-\\x{202E}\\x{2030}-\\x{205E}\\x{2060}-\\x{2FFF}\\x{3001}-\\x{FEFE}\\x{FF00}-\\x{10FFFF}';
/** JavaScript's `.` without the `s` flag: anything but a line terminator. */
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';
const ANY = '\\x{0}-\\x{10FFFF}';

/** A construct JavaScript has and RE2 cannot run. */
function unsupported(what: string): never {
  throw new SyntaxError(`${what} not supported (RE2 syntax, which matches in linear time)`);
}

/**
 * A JavaScript-syntax pattern as RE2 syntax, so that the patterns people write for JavaScript (and the generator
 * writes) match as they do there: `\s` and `\S` are JavaScript's (Unicode spaces, not RE2's six ASCII ones), `.`
 * excludes `\r`, U+2028 and U+2029 as well as `\n` (unless `(?s)`), `\uXXXX`, `\u{X}`, `\cX`, `\0` and `\/` are
 * read, `[^]` and `[]` are any character and none, a `[` inside a class is literal. The rest is RE2's own syntax,
 * which JavaScript shares for the common cases (`\d`, `\w`, `\b`, `\p{L}`, `(?<name>…)`, lazy quantifiers), plus
 * inline flags (`(?i)`, `(?s)`, `(?m)`, `(?U)`).
 * @throws SyntaxError for backreferences, lookahead and lookbehind, octal escapes.
 */
function toRe2Syntax(pattern: string): string {
  let out = '';
  let inClass = false;
  /** The `s` flag of each open group, innermost last (RE2 scopes `(?s)` to its group). */
  const dotAll: boolean[] = [false];
  const n = pattern.length;
  for (let i = 0; i < n; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === undefined) {
        out += '\\';
        continue;
      }
      i++;
      if (e >= '1' && e <= '9') unsupported(inClass ? `octal escapes (\\${e}) are` : `backreferences (\\${e}) are`);
      if (e === 'k' && pattern[i + 1] === '<') unsupported('backreferences (\\k<name>) are');
      if (e === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (e === 'S') out += inClass ? JS_NOT_SPACE : `[${JS_NOT_SPACE}]`;
      else if (e === '0') {
        if (/[0-9]/.test(pattern[i + 1] ?? '')) unsupported('octal escapes (\\0N) are');
        out += '\\x{0}';
      } else if (e === 'u' && /^\{[0-9A-Fa-f]{1,6}\}/.test(pattern.slice(i + 1, i + 9))) {
        const close = pattern.indexOf('}', i + 1);
        out += `\\x{${pattern.slice(i + 2, close)}}`;
        i = close;
      } else if (e === 'u' && /^[0-9A-Fa-f]{4}$/.test(pattern.slice(i + 1, i + 5))) {
        out += `\\x{${pattern.slice(i + 1, i + 5)}}`;
        i += 4;
      } else if (e === 'c' && /^[A-Za-z]$/.test(pattern[i + 1] ?? '')) {
        out += `\\x{${(pattern.charCodeAt(i + 1) % 32).toString(16)}}`;
        i += 1;
      } else if (e === '/') out += '/';
      else out += `\\${e}`;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c === '[' ? '\\[' : c;
      continue;
    }
    switch (c) {
      case '[':
        if (pattern.startsWith('[^]', i)) {
          out += `[${ANY}]`;
          i += 2;
        } else if (pattern.startsWith('[]', i)) {
          out += `[^${ANY}]`;
          i += 1;
        } else {
          inClass = true;
          out += '[';
          if (pattern[i + 1] === '^') {
            out += '^';
            i++;
          }
          // A `]` first in a class is literal for RE2 (an empty class for JavaScript, handled above).
        }
        break;
      case '(': {
        if (pattern.startsWith('(?=', i) || pattern.startsWith('(?!', i)) unsupported('lookahead ((?=…), (?!…)) is');
        if (pattern.startsWith('(?<=', i) || pattern.startsWith('(?<!', i)) unsupported('lookbehind ((?<=…), (?<!…)) is');
        const flags = /^\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])/.exec(pattern.slice(i, i + 16));
        const inherited = dotAll[dotAll.length - 1]!;
        if (flags) {
          const s = flags[1]!.includes('s') ? true : flags[2]?.includes('s') ? false : inherited;
          if (flags[3] === ')') dotAll[dotAll.length - 1] = s; // (?s): the rest of the enclosing group
          else dotAll.push(s); // (?s:…)
          out += flags[0];
          i += flags[0].length - 1;
        } else {
          dotAll.push(inherited);
          out += c;
        }
        break;
      }
      case ')':
        if (dotAll.length > 1) dotAll.pop();
        out += c;
        break;
      case '.':
        out += dotAll[dotAll.length - 1] ? '.' : JS_DOT;
        break;
      default:
        out += c;
    }
  }
  return out;
}

/** RE2's reason, without its prefix ("missing closing ): `(`"). */
function re2Reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/^error parsing regexp: /, '');
}

/** A pattern as error messages quote it: its first 100 characters. */
function shown(pattern: string): string {
  return pattern.length > 100 ? `${pattern.slice(0, 100)}…` : pattern;
}

function compileRegex(pattern: string, where: string): Pattern {
  let re: RE2JS;
  try {
    re = RE2JS.compile(toRe2Syntax(pattern));
  } catch (err) {
    throw new TransformError(`${shown(where)}: invalid regular expression /${shown(pattern)}/: ${re2Reason(err)}`);
  }
  const size = re.programSize();
  if (size > REGEX_LIMITS.maxProgramSize) {
    throw new TransformError(`${shown(where)}: regular expression /${shown(pattern)}/ is too large: ${size} RE2 instructions, at most ${REGEX_LIMITS.maxProgramSize}`);
  }
  const maxInput = Math.min(REGEX_LIMITS.maxInputChars, Math.floor(REGEX_LIMITS.workLimit / Math.max(size, 1)));
  return {
    source: pattern,
    maxInput,
    exec: (text) => re.exec(text.length > maxInput ? text.slice(0, maxInput) : text),
  };
}

/**
 * Runs a pattern over text the way the `regex` field type and the `regex:` transform do: the first group that
 * took part in the match when the pattern has groups, else the whole match; `null` when nothing matches. The
 * pattern reads the first `maxInput` characters of the text at most.
 */
export function regexExtract(re: Pattern, text: string): string | null {
  const m = re.exec(text);
  if (!m) return null;
  if (m.length > 1) {
    for (let i = 1; i < m.length; i++) {
      const group = m[i];
      if (group !== undefined && group !== null) return group;
    }
    return null;
  }
  return m[0] ?? null;
}

/**
 * Compiles a pattern of the `regex` field type (the `regex:` transform compiles its own the same way): RE2 syntax
 * as {@link toRe2Syntax} reads it, linear-time matching.
 * @throws TransformError when the pattern is invalid, uses what RE2 cannot run (backreferences, lookaround), or
 *   is larger than `REGEX_LIMITS.maxProgramSize`.
 */
export function compilePattern(pattern: string): Pattern {
  return compileRegex(pattern, 'pattern');
}

function toInt(text: string | undefined, what: string, spec: string): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  if (!/^-?\d+$/.test(text.trim())) throw new TransformError(`${spec}: ${what} must be an integer, got "${text}"`);
  return Number(text);
}

/**
 * Compiles one transform string of the language's list (docs/config-language.md, "Transforms") ("strip", "regex:\\d+", "replace:a:b",
 * "split:,:0", "slice:0:10", "template:Price {value}").
 * @throws TransformError for an unknown name or invalid arguments (a bad regex, a non-integer index).
 */
export function compileTransform(spec: string): Transform {
  const colon = spec.indexOf(':');
  const name = (colon === -1 ? spec : spec.slice(0, colon)).trim();
  const rest = colon === -1 ? undefined : spec.slice(colon + 1);
  const noArgs = (t: Transform): Transform => {
    if (rest !== undefined) throw new TransformError(`${spec}: "${name}" takes no arguments`);
    return t;
  };
  switch (name) {
    case 'strip':
      return noArgs(onText((s) => s.trim()));
    case 'lowercase':
      return noArgs(onText((s) => s.toLowerCase()));
    case 'uppercase':
      return noArgs(onText((s) => s.toUpperCase()));
    case 'strip_currency':
      return noArgs(onText((s) => s.replace(CURRENCY, '').trim()));
    case 'to_number':
      return noArgs((v) => (typeof v === 'number' ? v : v === null || typeof v === 'boolean' ? null : parseNumber(v)));
    case 'extract_number':
      return noArgs((v) => (typeof v === 'number' ? v : v === null || typeof v === 'boolean' ? null : parseNumber(v, 'first')));
    case 'strip_html':
      return noArgs(onText(stripHtml));
    case 'trim_whitespace':
      return noArgs(onText((s) => s.replace(/\s+/gu, ' ').trim()));
    case 'regex': {
      if (!rest) throw new TransformError(`${spec}: regex needs a pattern, e.g. "regex:(\\d+)"`);
      const re = compileRegex(rest, spec);
      return onText((s) => regexExtract(re, s));
    }
    case 'replace': {
      const args = rest === undefined ? [] : splitArgs(rest);
      if (args.length !== 2 || args[0] === '') {
        throw new TransformError(`${spec}: replace needs OLD and NEW, e.g. "replace:USD:$" (write a literal colon as \\:)`);
      }
      const [from, to] = args as [string, string];
      return onText((s) => s.split(from).join(to));
    }
    case 'split': {
      // The index is after the last colon, so the delimiter itself may be ":" ("split:::1").
      const last = rest === undefined ? -1 : rest.lastIndexOf(':');
      if (rest === undefined || last <= 0) {
        throw new TransformError(`${spec}: split needs DELIM and INDEX, e.g. "split:,:0"`);
      }
      const delim = rest.slice(0, last).replace(/\\:/g, ':');
      const index = toInt(rest.slice(last + 1), 'INDEX', spec) ?? 0;
      return onText((s) => {
        const parts = s.split(delim);
        const i = index < 0 ? parts.length + index : index;
        return i >= 0 && i < parts.length ? parts[i]! : null;
      });
    }
    case 'slice': {
      const args = rest === undefined ? [] : rest.split(':');
      if (args.length < 1 || args.length > 2) throw new TransformError(`${spec}: slice needs START[:END], e.g. "slice:0:10"`);
      const start = toInt(args[0], 'START', spec) ?? 0;
      const end = toInt(args[1], 'END', spec);
      return onText((s) => Array.from(s).slice(start, end).join(''));
    }
    case 'template': {
      if (rest === undefined || !rest.includes('{value}')) {
        throw new TransformError(`${spec}: template needs {value} in its text, e.g. "template:https://example.com{value}"`);
      }
      // The text is the one argument: colons in it are literal, and the documented `\:` escape is one too.
      const parts = rest.replace(/\\:/g, ':').split('{value}');
      return onText((s) => parts.join(s));
    }
    default:
      throw new TransformError(`unknown transform "${name}"; known: ${TRANSFORM_NAMES.join(', ')}`);
  }
}

/** Compiles a field's transform list, in order. @throws TransformError naming the index of the bad one. */
export function compileTransforms(specs: readonly string[] | undefined): Transform[] {
  if (!specs) return [];
  return specs.map((s, i) => {
    try {
      return compileTransform(s);
    } catch (err) {
      const e = new TransformError((err as Error).message);
      (e as TransformError & { index: number }).index = i;
      throw e;
    }
  });
}

/** Applies compiled transforms in order. */
export function applyTransforms(value: FieldValue, transforms: readonly Transform[]): FieldValue {
  let v = value;
  for (const t of transforms) v = t(v);
  return v;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/**
 * Removes tags (and the content of script and style elements) and decodes the common entities: the passes of
 * `s.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '').replace(/<!--[\s\S]*?-->/g, '').replace(/<[^>]*>/g, '')`,
 * each written as a scan (V8 runs those expressions in time quadratic in the number of `<script`, `<!--` or `<`
 * that nothing closes, each searching to the end of the value), then the entities.
 */
function stripHtml(s: string): string {
  return removeSpans(removeSpans(removeScriptsAndStyles(s), '<!--', '-->'), '<', '>').replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

/** `s.replace(/OPEN[\s\S]*?CLOSE/g, '')` (OPEN and CLOSE literal) in one pass: once a CLOSE is missing, no later OPEN closes. */
function removeSpans(s: string, open: string, close: string): string {
  const out: string[] = [];
  let from = 0;
  for (;;) {
    const start = s.indexOf(open, from);
    if (start === -1) break;
    const end = s.indexOf(close, start + open.length);
    if (end === -1) break;
    out.push(s.slice(from, start));
    from = end + close.length;
  }
  out.push(s.slice(from));
  return out.join('');
}

/** `s.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')` in one pass over `s`. */
function removeScriptsAndStyles(s: string): string {
  const starts = /<(script|style)(?![A-Za-z0-9_])/gi;
  const out: string[] = [];
  let from = 0;
  /** Per element name, whether some end tag may still follow (none does after a search that failed). */
  const closable: Record<string, boolean> = { script: true, style: true };
  let m: RegExpExecArray | null;
  while ((m = starts.exec(s)) !== null) {
    const name = m[1]!.toLowerCase();
    if (!closable[name]) continue;
    const ends = name === 'script' ? /<\/script\s*>/gi : /<\/style\s*>/gi;
    ends.lastIndex = m.index + m[0].length;
    const end = ends.exec(s);
    if (!end) {
      closable[name] = false;
      continue;
    }
    out.push(s.slice(from, m.index));
    from = end.index + end[0].length;
    starts.lastIndex = from;
  }
  out.push(s.slice(from));
  return out.join('');
}
