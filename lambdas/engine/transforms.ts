/**
 * The 13 transforms of the YAML config language (SPEC.md, "YAML config language", transform table).
 *
 * Transforms are pure functions on values, with no DOM and no Node built-ins, so the very same module
 * runs in the lightweight engine, over the heavy engine's rendered HTML and in the browser extension
 * (ARCHITECTURE.md, idea 4). A transform string is parsed once per config (`compileTransforms`), not
 * once per row.
 *
 * Value rules (docs/config-language.md, "Transforms"):
 * - string transforms turn a number or boolean into its string first; `null` passes through unchanged;
 * - `to_number` and `extract_number` give a number, or `null` when there is no number;
 * - arguments are separated by `:`; a literal colon inside an argument is written `\:`.
 */

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

/** Every transform name of SPEC.md, for the schema and error messages. */
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

function compileRegex(pattern: string, where: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch (err) {
    try {
      // Patterns written for Python or PCRE often use escapes that the `u` flag rejects ("\-").
      return new RegExp(pattern);
    } catch {
      // V8 repeats the pattern and flags ("Invalid regular expression: /(/u: Unterminated group"); keep the reason.
      const reason = (err as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
      throw new TransformError(`${where}: invalid regular expression /${pattern}/: ${reason}`);
    }
  }
}

/**
 * Runs a regex over text the way the `regex` field type and the `regex:` transform do: the first
 * capture group when the pattern has one, else the whole match; `null` when nothing matches.
 */
export function regexExtract(re: RegExp, text: string): string | null {
  const m = re.exec(text);
  if (!m) return null;
  if (m.length > 1) {
    for (let i = 1; i < m.length; i++) if (m[i] !== undefined) return m[i]!;
    return null;
  }
  return m[0];
}

/** Compiles a regex for the `regex` field type; throws {@link TransformError} when invalid. */
export function compilePattern(pattern: string): RegExp {
  return compileRegex(pattern, 'pattern');
}

function toInt(text: string | undefined, what: string, spec: string): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  if (!/^-?\d+$/.test(text.trim())) throw new TransformError(`${spec}: ${what} must be an integer, got "${text}"`);
  return Number(text);
}

/**
 * Compiles one transform string of SPEC.md's table ("strip", "regex:\\d+", "replace:a:b",
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

/** Removes tags (and the content of script and style elements) and decodes the common entities. */
function stripHtml(s: string): string {
  return s
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    });
}
