/**
 * Fingerprint patterns (webappanalyzer README, "Patterns" and "Tags"): a regular expression source with
 * `\;confidence:N` and `\;version:` tags, compiled as Wappalyzer does (case-insensitive, unbounded quantifiers
 * bounded at 250), with the literal text any match must contain (a cheap pre-filter), and the version a match gives.
 */
import type { RawPattern, RawPatterns } from '../fingerprints.ts';

/** A compiled pattern: its regex and tags. */
export interface Pattern {
  regex: RegExp;
  /**
   * Lower-case strings one of which any match must contain (see {@link requiredLiterals}); null when the
   * pattern has none worth checking. A value whose lower-case form contains none of them is not tested.
   */
  literals: string[] | null;
  /** 0-100, from `\;confidence:N` (100 when absent). */
  confidence: number;
  /** The `\;version:` template ('' when absent). */
  version: string;
}

const patternCache = new Map<string, Pattern | null>();

/**
 * Rewrites unbounded quantifiers as Wappalyzer does (`+` to `{1,250}`, `*` to `{0,250}`), leaving escaped
 * characters and character classes alone: a regex then backtracks over at most 250 characters per quantifier.
 */
export function boundQuantifiers(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      out += c + (source[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === '+') {
      out += '{1,250}';
    } else if (c === '*') {
      out += '{0,250}';
    } else {
      out += c;
    }
  }
  return out;
}

/** Escapes that stand for one literal character (others, such as `\d` or `\b`, are classes or assertions). */
const LITERAL_ESCAPE = /[^A-Za-z0-9]/;

/**
 * The literal text every match of a regex must contain, per top-level alternative: the longest run of plain
 * characters outside groups and classes that no quantifier makes optional, lower-cased. null when some
 * alternative has no such run of at least 3 ASCII characters (then the regex is always run).
 *
 * Used as a pre-filter: with the `i` flag (without `u`), an ASCII pattern character matches only that
 * character in either case (ECMA-262 Canonicalize never folds non-ASCII into ASCII), so a value whose
 * lower-case form lacks the literal cannot match. It spares running hundreds of case-insensitive regexes
 * (which get no literal search of their own) over half a megabyte of HTML.
 */
export function requiredLiterals(source: string): string[] | null {
  const alternatives: string[] = [];
  let best = '';
  let run = '';
  let depth = 0;
  const flush = (): void => {
    if (run.length > best.length) best = run;
    run = '';
  };
  const endAlternative = (): boolean => {
    flush();
    if (best.length < 3 || !/^[\x20-\x7e]+$/.test(best)) return false;
    alternatives.push(best.toLowerCase());
    best = '';
    return true;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (depth > 0) {
      // Inside a group: only find where it ends.
      if (c === '\\') i++;
      else if (c === '[') {
        for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
      } else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) flush();
      continue;
    }
    // Quantifier on the previous atom.
    const quantifier = /^(?:[?*+]|\{(\d+)(?:,\d*)?\})\??/.exec(source.slice(i, i + 16));
    if (quantifier) {
      const min = quantifier[0][0] === '+' ? 1 : quantifier[0][0] === '{' ? Number(quantifier[1]) : 0;
      if (min === 0) run = run.slice(0, -1);
      flush();
      i += quantifier[0].length - 1;
      continue;
    }
    if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined) return null;
      if (LITERAL_ESCAPE.test(next)) run += next;
      else flush();
      i++;
    } else if (c === '[') {
      flush();
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
      run = '';
    } else if (c === '(') {
      flush();
      depth = 1;
    } else if (c === '|') {
      if (!endAlternative()) return null;
    } else if (c === '.' || c === '^' || c === '$' || c === ')') {
      flush();
    } else {
      run += c;
    }
  }
  if (depth > 0 || !endAlternative()) return null;
  return alternatives;
}

/**
 * Compiles one pattern of the format (`regex\;version:\1\;confidence:50`); null when its regex does not
 * compile in JavaScript (a few patterns use other engines' syntax, such as `(?i)`), which then never matches.
 */
function compilePattern(raw: RawPattern): Pattern | null {
  const key = String(raw);
  if (patternCache.has(key)) return patternCache.get(key)!;
  const [source = '', ...tags] = key.split('\\;');
  let confidence = 100;
  let version = '';
  for (const tag of tags) {
    const colon = tag.indexOf(':');
    if (colon < 0) continue;
    const name = tag.slice(0, colon);
    const value = tag.slice(colon + 1);
    if (name === 'confidence') {
      const n = Number.parseInt(value, 10);
      if (Number.isFinite(n)) confidence = Math.max(0, Math.min(100, n));
    } else if (name === 'version') {
      version = value;
    }
  }
  let pattern: Pattern | null;
  try {
    pattern = { regex: new RegExp(boundQuantifiers(source), 'i'), literals: requiredLiterals(source), confidence, version };
  } catch {
    pattern = null;
  }
  patternCache.set(key, pattern);
  return pattern;
}

/** `value` as an array: a single value wrapped, undefined (or null) as none. */
export function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** The patterns of one fingerprint field, compiled; those that do not compile left out. */
export function patternsOf(raw: RawPatterns | undefined): Pattern[] {
  return toArray(raw).map(compilePattern).filter((p): p is Pattern => p !== null);
}

/**
 * The version a match gives, by the pattern's template (webappanalyzer README, "Version syntax"; Wappalyzer's
 * `resolveVersion`): `\N` is group N, `\N?a:b` is `a` when group N matched something and `b` otherwise; groups
 * longer than 10 characters are not used.
 */
export function resolveVersion(template: string, match: RegExpExecArray): string {
  if (!template) return '';
  let resolved = template;
  for (let index = 0; index < match.length; index++) {
    const group = match[index];
    if (group !== undefined && group.length > 10) continue;
    const ternary = new RegExp(`\\\\${index}\\?([^:]*):(.*)$`).exec(resolved);
    if (ternary) resolved = resolved.replace(ternary[0], group ? ternary[1]! : ternary[2]!);
    resolved = resolved.trim().replace(new RegExp(`\\\\${index}(?!\\d)`, 'g'), group ?? '');
  }
  return resolved.replace(/\\\d+/g, '').trim();
}
