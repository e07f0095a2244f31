/**
 * Tag and attribute names read straight from the source: a known name (parse5's tag names, the common
 * attribute names) comes back as one shared lower-case string without copying it out of the input,
 * lower-casing it or hashing a new string. Element names and attribute keys are then the same internalized
 * strings on every element, which also makes later property and name comparisons cheaper (selectors).
 */
import { html as P5 } from 'parse5';

const ATTRIBUTE_NAMES = (
  'id class style title lang dir hidden tabindex href src srcset sizes alt width height type name value content ' +
  'rel media charset http-equiv property itemprop itemscope itemtype target role for action method placeholder ' +
  'checked selected disabled readonly required multiple colspan rowspan align valign border cellpadding ' +
  'cellspacing bgcolor color face size loading decoding async defer crossorigin integrity referrerpolicy ' +
  'onclick onload data-src data-id data-type data-url data-lazy-src data-original aria-label aria-hidden ' +
  'aria-expanded aria-controls aria-haspopup aria-labelledby aria-describedby xmlns viewbox fill d stroke ' +
  'stroke-width points cx cy r x y transform focusable label nonce autocomplete maxlength download'
).split(' ');

/** The known names (lower-case only: the input is compared lower-cased) and their parse5 tag IDs. */
export const NAME_OF: readonly string[] = [...new Set([...Object.values(P5.TAG_NAMES), ...ATTRIBUTE_NAMES])].filter((n) => n === n.toLowerCase());
export const TAG_ID_OF: readonly P5.TAG_ID[] = NAME_OF.map((n) => P5.getTagID(n));

const TABLE_BITS = 11;
const TABLE_MASK = (1 << TABLE_BITS) - 1;
/** Open addressing: slot → index into NAMES + 1 (0: empty). */
const TABLE = new Int32Array(1 << TABLE_BITS);

function hashLower(s: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h;
}

for (let k = 0; k < NAME_OF.length; k++) {
  const name = NAME_OF[k]!;
  let slot = hashLower(name, 0, name.length) & TABLE_MASK;
  while (TABLE[slot] !== 0) slot = (slot + 1) & TABLE_MASK;
  TABLE[slot] = k + 1;
}

/**
 * The index in NAME_OF of `html.slice(start, end)` when it is a known name in any ASCII case, else -1 (then
 * the caller slices and lower-cases it itself).
 */
export function knownName(html: string, start: number, end: number): number {
  const len = end - start;
  let slot = hashLower(html, start, end) & TABLE_MASK;
  for (;;) {
    const k = TABLE[slot]!;
    if (k === 0) return -1;
    const name = NAME_OF[k - 1]!;
    if (name.length === len) {
      let i = 0;
      for (; i < len; i++) {
        let c = html.charCodeAt(start + i);
        if (c >= 0x41 && c <= 0x5a) c |= 0x20;
        if (c !== name.charCodeAt(i)) break;
      }
      if (i === len) return k - 1;
    }
    slot = (slot + 1) & TABLE_MASK;
  }
}
