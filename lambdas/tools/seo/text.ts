/**
 * Text as the SEO analyzer reads it: an element's text content, cut (docs/tools.md, "Limits of the analysis"),
 * whitespace folded, and words counted as a reader would count them.
 */
import { isTag, isText, type AnyNode, type Element } from 'domhandler';

/**
 * Characters of one element's text read (a title, a heading, a link, an `aria-labelledby` target), and nodes
 * visited for it: headings and links nested in hundreds of others would otherwise be read once for each, and a
 * million images labelled by `<body>` would read the page a million times (docs/tools.md, "Limits of the analysis").
 */
const ELEMENT_TEXT_CHARS = 2_000;
const ELEMENT_TEXT_NODES = 10_000;

/** Text of an element's subtree, scripts, styles and templates left out; the first {@link ELEMENT_TEXT_CHARS} characters. */
export function textContent(el: Element): string {
  let out = '';
  let visited = 0;
  const stack: AnyNode[] = [];
  // The first children only: pushing all of an element's million children would cost a million steps a call.
  const push = (children: AnyNode[]): void => {
    for (let i = Math.min(children.length, ELEMENT_TEXT_NODES - visited) - 1; i >= 0; i--) stack.push(children[i]!);
  };
  push(el.children);
  while (stack.length && out.length < ELEMENT_TEXT_CHARS && visited < ELEMENT_TEXT_NODES) {
    const node = stack.pop()!;
    visited++;
    if (isText(node)) out += node.data.length > ELEMENT_TEXT_CHARS - out.length ? node.data.slice(0, ELEMENT_TEXT_CHARS - out.length) : node.data;
    else if (isTag(node) && node.name !== 'script' && node.name !== 'style' && node.name !== 'template') push(node.children);
  }
  return out;
}

/** Collapses runs of ASCII whitespace to one space and trims (the HTML standard's "strip and collapse"). */
export function foldSpace(s: string): string {
  return s.replace(/[\t\n\f\r ]+/g, ' ').trim();
}

/** Scripts whose words are not separated by spaces: counted by ICU's word segmentation instead. */
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD_CHAR = /[\p{L}\p{N}]/u;
let segmenter: Intl.Segmenter | undefined;

/** Words in `text`: space-separated tokens with a letter or digit; tokens of Han, kana, Thai, Lao, Khmer or Myanmar split by ICU's word segmentation. */
export function countWords(text: string): number {
  let count = 0;
  for (const token of text.split(/\s+/)) {
    if (!token || !WORD_CHAR.test(token)) continue;
    if (UNSPACED_SCRIPT.test(token)) {
      segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
      for (const seg of segmenter.segment(token)) if (seg.isWordLike) count++;
    } else {
      count++;
    }
  }
  return count;
}
