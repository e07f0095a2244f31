/**
 * The layout signal of the record finder (docs/generate.md, "The layout, where the page is rendered"): on a page the
 * generator rendered, each element's box tells records from what only looks like them. Records are boxes of like
 * size, aligned (one left edge down a list, one top edge along a grid row), inside the page's main column; a
 * carousel's cards run past the viewport's edge, a rail is a narrow column at one side, a footer's lists lie at the
 * document's bottom, a header's at its top, and CSS-hidden copies have no box at all. That is the visual side of
 * record finding (DEPTA, Zhai and Liu 2005; VIPS, Cai et al. 2003), used here as a factor on analyze.ts's score.
 *
 * The boxes come in the HTML itself: the browser loader marks them as `data-sai-box` when asked
 * (engine/browser/page-guard.ts, documentHtml with `boxes`). {@link readLayout} takes them off the tree, so that no
 * selector or field ever sees them; HTML that was not rendered here has none, and a page's own attributes of that
 * name are ignored unless the caller says the page was rendered.
 */
import type { Element } from 'domhandler';
import { BOX_ATTRIBUTE, VIEWPORT_ATTRIBUTE } from '../engine/browser/page-guard.ts';

/** An element's border box, CSS pixels from the document's top left. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The rendered layout of a page, as {@link readLayout} read it. */
export interface PageLayout {
  /** The browser window's inner size, CSS pixels. */
  viewport: { w: number; h: number };
  /** The document's scroll size, CSS pixels. */
  document: { w: number; h: number };
  boxes: WeakMap<Element, Box>;
}

/** What {@link layoutFactor} found, for the candidate's features (logs and tuning). */
export interface LayoutVerdict {
  /** Multiplies the candidate's score: 1 for records that look like records, less for the rest. */
  factor: number;
  /** Share of the records with a box of any size (shown). */
  shown: number;
  /** Share of the shown records whose width is the median width (±10%). */
  likeWidth: number;
  /** Share of the shown records sharing a left edge or a top edge with another. */
  aligned: number;
  /** What the layout says the block is: not the records (hidden … header), or records in the main column. */
  kind?: 'hidden' | 'mixed' | 'carousel' | 'rail' | 'footer' | 'header' | 'main';
}

/** The factor of like records in the main column. */
const MAIN_COLUMN = 1.25;

const BOX_VALUE = /^(-?\d{1,7}),(-?\d{1,7}),(\d{1,7}),(\d{1,7})$/;
const VIEWPORT_VALUE = /^(\d{1,5}),(\d{1,5}),(\d{1,7}),(\d{1,7})$/;

/**
 * Reads the boxes of a rendered page and takes the attributes off the elements.
 * @param root the `<html>` element (holding the viewport attribute).
 * @param all every element of the page, in any order.
 * @param rendered whether this HTML was read with boxes by this service: otherwise the attributes are only removed.
 * @returns the layout, or null for a page without one (not rendered, or no viewport attribute).
 */
export function readLayout(root: Element | undefined, all: readonly Element[], rendered: boolean): PageLayout | null {
  const view = root?.attribs[VIEWPORT_ATTRIBUTE];
  if (root) delete root.attribs[VIEWPORT_ATTRIBUTE];
  const boxes = new WeakMap<Element, Box>();
  for (const el of all) {
    const value = el.attribs[BOX_ATTRIBUTE];
    if (value === undefined) continue;
    delete el.attribs[BOX_ATTRIBUTE];
    const m = rendered ? BOX_VALUE.exec(value) : null;
    if (m) boxes.set(el, { x: +m[1]!, y: +m[2]!, w: +m[3]!, h: +m[4]! });
  }
  const v = rendered && view ? VIEWPORT_VALUE.exec(view) : null;
  if (!v) return null;
  return { viewport: { w: +v[1]!, h: +v[2]! }, document: { w: Math.max(+v[1]!, +v[3]!), h: Math.max(+v[2]!, +v[4]!) }, boxes };
}

/** The box around a record's shown elements; null when none is shown (or none was marked). */
function recordBox(record: readonly Element[], layout: PageLayout): Box | null {
  let x1 = Infinity, y1 = Infinity, x2 = -Infinity, y2 = -Infinity;
  for (const el of record) {
    const b = layout.boxes.get(el);
    if (!b || b.w < 1 || b.h < 1) continue;
    x1 = Math.min(x1, b.x); y1 = Math.min(y1, b.y); x2 = Math.max(x2, b.x + b.w); y2 = Math.max(y2, b.y + b.h);
  }
  return x1 === Infinity ? null : { x: x1, y: y1, w: x2 - x1, h: y2 - y1 };
}

/** The sizes of the groups of like widths (each within 10% of its narrowest), widest group first. */
function widthClusters(widths: number[]): number[] {
  const sorted = [...widths].sort((a, b) => a - b);
  const sizes: number[] = [];
  let start = -Infinity;
  for (const w of sorted) {
    if (w > Math.max(start + 4, start * 1.1)) { sizes.push(0); start = w; }
    sizes[sizes.length - 1]!++;
  }
  return sizes.sort((a, b) => b - a);
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Share of the boxes with an edge (`key`) within 2 px of another box's. */
function sharedEdge(boxes: Box[], key: 'x' | 'y'): boolean[] {
  const sorted = boxes.map((b, i) => ({ v: b[key], i })).sort((a, b) => a.v - b.v);
  const out = new Array<boolean>(boxes.length).fill(false);
  for (let k = 0; k < sorted.length; k++) {
    const near = (k > 0 && sorted[k]!.v - sorted[k - 1]!.v <= 2) || (k + 1 < sorted.length && sorted[k + 1]!.v - sorted[k]!.v <= 2);
    if (near) out[sorted[k]!.i] = true;
  }
  return out;
}

/**
 * How much a candidate's records look like records on the rendered page (the module's rules, in order):
 * - fewer than half shown (no box: `display:none`, a collapsed panel): ×0.2, `hidden`;
 * - four or more in two or three widths (groups of like width, each of two or more, holding 80% of them; under 80% of
 *   the median width): ×0.25, `mixed` (several lists of one class);
 * - a quarter or more lying past the viewport's left or right edge, on at most two rows: ×0.3, `carousel`;
 * - three or more in a column under 30% of the viewport's width whose middle is in its outer 30% on either side:
 *   ×0.5, `rail`;
 * - all in the document's last 15% (a document at least two viewports high): ×0.4, `footer`; all above
 *   min(250 px, 15%) of it: ×0.6, `header`;
 * - else like size and alignment: ×size × (0.7 + 0.3 × aligned), where size is 0.5 + 0.5 × likeHeight (the share of
 *   heights within 2.5 times the median's) for records of one width (80% or more), 0.7 for widths that vary freely
 *   (a justified gallery); and ×1.25 (`main`) for records of one
 *   width (80% or more) spanning at least 40% of the viewport's width about its middle (its central half).
 * @param records each record's elements (the item alone, or the item and its siblings).
 */
export function layoutFactor(records: readonly (readonly Element[])[], layout: PageLayout): LayoutVerdict {
  const all = records.map((r) => recordBox(r, layout));
  const boxes = all.filter((b): b is Box => b !== null);
  const shown = boxes.length / Math.max(1, records.length);
  if (shown < 0.5) return { factor: 0.2, shown, likeWidth: 0, aligned: 0, kind: 'hidden' };
  if (boxes.length < 2) return { factor: 1, shown, likeWidth: 1, aligned: 1 };
  const vw = layout.viewport.w;
  const likeW = median(boxes.map((b) => b.w));
  const likeH = median(boxes.map((b) => b.h));
  const likeWidth = boxes.filter((b) => Math.abs(b.w - likeW) <= Math.max(4, likeW * 0.1)).length / boxes.length;
  const likeHeight = boxes.filter((b) => b.h <= likeH * 2.5 && b.h >= likeH / 2.5).length / boxes.length;
  const byX = sharedEdge(boxes, 'x');
  const byY = sharedEdge(boxes, 'y');
  const aligned = boxes.filter((_, i) => byX[i] || byY[i]).length / boxes.length;
  // Records of one list are one width (a list's rows, a grid's cards). A few widths, each shared by several, are
  // several lists of one class (the results and a rail's cards); widths that vary freely (a justified gallery,
  // boxes sized by their text) say less.
  const clusters = widthClusters(boxes.map((b) => b.w));
  const several = clusters.filter((c) => c >= 2);
  const mixed = likeWidth < 0.8 && several.length >= 2 && several.length <= 3 && several.reduce((s, c) => s + c, 0) >= boxes.length * 0.8;
  const size = likeWidth >= 0.8 ? 0.5 + 0.5 * likeHeight : mixed ? 0.5 : 0.7;
  const factor = size * (0.7 + 0.3 * aligned);
  const verdict = (f: number, kind: LayoutVerdict['kind']): LayoutVerdict => ({ factor: factor * f, shown, likeWidth, aligned, kind });
  if (boxes.length >= 4 && mixed) return verdict(0.5, 'mixed');
  const outside = boxes.filter((b) => b.x + b.w <= 0 || b.x >= vw).length / boxes.length;
  const rows = new Set(boxes.map((b) => Math.round(b.y / 8))).size;
  if (outside >= 0.25 && rows <= 2) return verdict(0.3, 'carousel');
  const x1 = Math.min(...boxes.map((b) => b.x));
  const x2 = Math.max(...boxes.map((b) => b.x + b.w));
  const y1 = Math.min(...boxes.map((b) => b.y));
  const y2 = Math.max(...boxes.map((b) => b.y + b.h));
  const middle = (x1 + x2) / 2;
  if (boxes.length >= 3 && vw >= 900 && x2 - x1 < vw * 0.3 && (middle < vw * 0.3 || middle > vw * 0.7)) return verdict(0.5, 'rail');
  const dh = layout.document.h;
  if (dh >= 2 * layout.viewport.h) {
    if (y1 >= dh * 0.85) return verdict(0.4, 'footer');
    if (y2 <= Math.min(250, dh * 0.15)) return verdict(0.6, 'header');
  }
  // Like boxes in the page's main column: wide, and about its middle.
  if (likeWidth >= 0.8 && x2 - x1 >= vw * 0.4 && middle >= vw * 0.25 && middle <= vw * 0.75) return { factor: factor * MAIN_COLUMN, shown, likeWidth, aligned, kind: 'main' };
  return { factor, shown, likeWidth, aligned };
}
