/**
 * Text as the lead generator reads it: the page's visible text, one line per block, walked without recursion and
 * cut ({@link LEADS_LIMITS}); and the small string helpers the extractors share.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { isTag, isText, type AnyNode } from 'domhandler';
import { clipMiddle } from '../page.ts';
import { LEADS_LIMITS } from './limits.ts';

/** Elements whose content is not page text. */
const NOT_TEXT = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object', 'canvas', 'select', 'textarea']);
/** Elements that end a line of text: a number or an address never runs across them. */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'tbody', 'td',
  'tfoot', 'th', 'thead', 'tr', 'ul', 'option', 'label', 'button', 'input', 'img',
]);

/**
 * The visible text of the body, one line per block; inline elements join (`<span>+1</span> 650…` stays one
 * number). Walked without recursion; at most {@link LEADS_LIMITS}.textChars characters, its first and last halves.
 */
export function pageText($: CheerioAPI): string {
  const out: string[] = [];
  const root = $.root()[0];
  // A node to read, or a block's end (a line break).
  const stack: Array<AnyNode | null> = root ? [...root.children].reverse() : [];
  while (stack.length) {
    const n = stack.pop()!;
    if (n === null) {
      out.push('\n');
    } else if (isText(n)) {
      out.push(n.data);
    } else if (isTag(n)) {
      const name = n.name.toLowerCase();
      if (NOT_TEXT.has(name)) continue;
      if (BLOCKS.has(name)) {
        out.push('\n');
        stack.push(null);
      }
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }
  const text = clipMiddle(out.join(''), LEADS_LIMITS.textChars);
  return foldLines(text.replace(/[\t\f\r\u00a0\u2000-\u200b\u202f\u205f\u3000]/g, ' '));
}

/**
 * `text.replace(/ *\n\s*\/g, '\n')` in linear time: spaces before a line break and whitespace after it (blank
 * lines too) go. (V8 runs that expression in time quadratic in a run of spaces that no line break ends.)
 */
function foldLines(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    const last = i === lines.length - 1;
    if (i > 0) {
      let start = 0;
      while (start < line.length && /\s/.test(line[start]!)) start++;
      line = line.slice(start);
      if (!line && !last) continue; // swallowed by the whitespace after the previous line break
    }
    if (!last) {
      let end = line.length;
      while (end > 0 && line.charCodeAt(end - 1) === 0x20) end--;
      line = line.slice(0, end);
    }
    out.push(line);
  }
  return out.join('\n');
}

/** The number of decimal digits in `s` (Unicode Nd), counting no further than `stop`. */
export function digits(s: string, stop = Infinity): number {
  let n = 0;
  for (const m of s.matchAll(/\p{Nd}/gu)) {
    void m;
    if (++n >= stop) break;
  }
  return n;
}

/** Percent-decoding that keeps the input when it is not valid percent-encoding. */
export function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
