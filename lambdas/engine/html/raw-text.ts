/**
 * Where the text of a raw text, RCDATA or script element ends, by the WHATWG tokenizer's rules
 * (https://html.spec.whatwg.org/multipage/parsing.html#rawtext-state and the script data states after it).
 * The fast tree builder reads these elements' content from the source itself instead of letting
 * htmlparser2's tokenizer do it: htmlparser2 knows only script, style, title, textarea and xmp, ends them at
 * `</name` followed by whitespace or `>` (the spec also accepts `/`), and ignores the escape states of
 * script data.
 */

const LT = 0x3c;
const SLASH = 0x2f;
const GT = 0x3e;
const BANG = 0x21;
const DASH = 0x2d;

function isAsciiAlpha(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

/** Tab, LF, FF, space, and CR (the input is not normalised: CR and CR LF stand for LF). */
function isTagWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}

/**
 * Whether `html` has, at `i`, the characters of `name` (lower-case ASCII) in any ASCII case, followed by
 * whitespace, `/` or `>`: the "appropriate end tag" test once `</` has been read.
 */
function endTagNameAt(html: string, i: number, name: string): boolean {
  const n = name.length;
  for (let k = 0; k < n; k++) {
    if ((html.charCodeAt(i + k) | 0x20) !== name.charCodeAt(k)) return false;
  }
  const c = html.charCodeAt(i + n);
  return c === GT || c === SLASH || isTagWhitespace(c);
}

/**
 * Index of the `<` of the end tag that closes a RAWTEXT or RCDATA element whose content starts at `from`,
 * or -1 when the content runs to the end of the input.
 * @param name the element's tag name, lower-case ASCII.
 */
export function findRawTextEnd(html: string, from: number, name: string): number {
  let i = from;
  for (;;) {
    i = html.indexOf('</', i);
    if (i === -1) return -1;
    if (endTagNameAt(html, i + 2, name)) return i;
    i += 2;
  }
}

/**
 * Index of the `<` of the `</script` that ends script data starting at `from`, or -1 (runs to the end).
 * Follows the script data, escaped and double-escaped states: inside `<!--`, a `<script` starts a section
 * in which `</script>` does not end the element.
 */
export function findScriptEnd(html: string, from: number): number {
  const simple = findRawTextEnd(html, from, 'script');
  // Without `<!--` before the first candidate end, the escape states are never entered. (The search stays
  // inside the script: a page has many scripts and often no `<!--` after them.)
  const content = simple === -1 ? html.slice(from) : html.slice(from, simple);
  if (!content.includes('<!--')) return simple;
  return scanScriptData(html, from);
}

const S = {
  data: 0,
  escaped: 1,
  escapedDash: 2,
  escapedDashDash: 3,
  doubleEscaped: 4,
  doubleEscapedDash: 5,
  doubleEscapedDashDash: 6,
} as const;

/** The script data states of the tokenizer, character by character; only the end matters here. */
function scanScriptData(html: string, from: number): number {
  const len = html.length;
  let state: number = S.data;
  let i = from;
  while (i < len) {
    const c = html.charCodeAt(i);
    switch (state) {
      case S.data: {
        if (c !== LT) {
          i++;
          break;
        }
        const next = html.charCodeAt(i + 1);
        if (next === SLASH) {
          if (endTagNameAt(html, i + 2, 'script')) return i;
          i += 2; // "</" then anything else: reconsumed in script data
        } else if (next === BANG && html.charCodeAt(i + 2) === DASH && html.charCodeAt(i + 3) === DASH) {
          state = S.escapedDashDash;
          i += 4;
        } else {
          i++;
        }
        break;
      }
      case S.escaped:
      case S.escapedDash:
      case S.escapedDashDash: {
        if (c === DASH) {
          state = state === S.escaped ? S.escapedDash : S.escapedDashDash;
          i++;
        } else if (c === GT && state === S.escapedDashDash) {
          state = S.data;
          i++;
        } else if (c === LT) {
          // script data escaped less-than sign state
          const next = html.charCodeAt(i + 1);
          if (next === SLASH) {
            if (endTagNameAt(html, i + 2, 'script')) return i;
            state = S.escaped;
            i += 2;
          } else if (isAsciiAlpha(next)) {
            // script data double escape start state: the tag name, then whitespace, `/` or `>`
            let j = i + 1;
            while (j < len && isAsciiAlpha(html.charCodeAt(j))) j++;
            const t = html.charCodeAt(j);
            const isScript = j - (i + 1) === 6 && endTagNameAt(html, i + 1, 'script');
            state = isScript && (t === GT || t === SLASH || isTagWhitespace(t)) ? S.doubleEscaped : S.escaped;
            // The terminator (if any) is consumed by the double escape start state.
            i = j < len && (t === GT || t === SLASH || isTagWhitespace(t)) ? j + 1 : j;
          } else {
            state = S.escaped;
            i++;
          }
        } else {
          state = S.escaped;
          i++;
        }
        break;
      }
      default: {
        // double escaped, double escaped dash, double escaped dash dash
        if (c === DASH) {
          state = state === S.doubleEscaped ? S.doubleEscapedDash : S.doubleEscapedDashDash;
          i++;
        } else if (c === GT && state === S.doubleEscapedDashDash) {
          state = S.data;
          i++;
        } else if (c === LT) {
          // script data double escaped less-than sign state: `/` starts the double escape end state
          if (html.charCodeAt(i + 1) === SLASH) {
            let j = i + 2;
            while (j < len && isAsciiAlpha(html.charCodeAt(j))) j++;
            const t = html.charCodeAt(j);
            const ends = t === GT || t === SLASH || isTagWhitespace(t);
            const isScript = j - (i + 2) === 6 && endTagNameAt(html, i + 2, 'script');
            state = ends && isScript ? S.escaped : S.doubleEscaped;
            i = j < len && ends ? j + 1 : j;
          } else {
            state = S.doubleEscaped;
            i++;
          }
        } else {
          state = S.doubleEscaped;
          i++;
        }
      }
    }
  }
  return -1;
}
