/**
 * Draws the browser extension's icons (clients/extension/public/icon/<size>.png, issue 28): the sizes Chrome and
 * the Chrome Web Store ask for, 16, 32, 48 and 128 px. WXT finds `public/icon/<size>.png` and lists them as the
 * manifest's `icons` (clients/extension/wxt.config.ts also names two as the toolbar action's `default_icon`).
 *
 * The picture: a blue rounded square (the dashboard's accent colour, #1d4ed8) with three white rows, each a bullet
 * and a bar, the last one shorter: rows of data taken from a page. It is drawn here, without a graphics library:
 * each pixel is the share of an 8×8 grid of samples inside each shape (anti-aliased edges), and the bars' edges
 * fall on whole pixels at every size, so the 16 px icon stays sharp. The 128 px icon keeps the store's 16 px
 * transparent margin (a 96 px picture); the smaller ones a margin of 1/16. Deterministic: the same bytes each run.
 *
 * Usage: node scripts/extension-icons.ts   (writes the four PNGs; commit them)
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const ROOT = path.resolve(import.meta.dirname, '..');
export const ICON_DIR = path.join(ROOT, 'clients/extension/public/icon');

/** The sizes in px, as the Chrome Web Store lists them. */
export const ICON_SIZES = [16, 32, 48, 128] as const;

type Rgb = [number, number, number];
const TOP: Rgb = [0x25, 0x63, 0xeb];
const BOTTOM: Rgb = [0x1d, 0x4e, 0xd8];
const WHITE: Rgb = [0xff, 0xff, 0xff];
const SAMPLES = 8;

interface Box { x0: number; y0: number; x1: number; y1: number; r: number }

/** Whether the point is inside the box with rounded corners of radius `r`. */
function inside(b: Box, x: number, y: number): boolean {
  if (x < b.x0 || x >= b.x1 || y < b.y0 || y >= b.y1) return false;
  const cx = Math.min(Math.max(x, b.x0 + b.r), b.x1 - b.r);
  const cy = Math.min(Math.max(y, b.y0 + b.r), b.y1 - b.r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= b.r ** 2;
}

/** The share (0-1) of pixel (px, py) the box covers. */
function coverage(b: Box, px: number, py: number): number {
  let n = 0;
  for (let i = 0; i < SAMPLES; i++) {
    for (let j = 0; j < SAMPLES; j++) if (inside(b, px + (i + 0.5) / SAMPLES, py + (j + 0.5) / SAMPLES)) n++;
  }
  return n / (SAMPLES * SAMPLES);
}

/** The shapes of the icon at `size` px: the background square and the white rows (bullets and bars). */
function shapes(size: number): { back: Box; rows: Box[] } {
  const pad = size === 128 ? 16 : Math.round(size / 16);
  const side = size - 2 * pad;
  const back: Box = { x0: pad, y0: pad, x1: size - pad, y1: size - pad, r: side * 0.22 };
  // Three rows of height h with gaps of h/2 (whole pixels), centred in the square.
  const h = Math.max(2, Math.round(side / 7));
  const gap = Math.max(1, Math.round(h / 2));
  const block = 3 * h + 2 * gap;
  const top = pad + Math.round((side - block) / 2);
  const left = pad + Math.round(side * 0.22);
  const right = size - pad - Math.round(side * 0.22);
  const barLeft = left + h + gap;
  const round = size >= 48 ? h / 2 : 0;
  const rows: Box[] = [];
  for (let i = 0; i < 3; i++) {
    const y0 = top + i * (h + gap);
    const barRight = i === 2 ? barLeft + Math.round((right - barLeft) * 0.6) : right;
    rows.push({ x0: left, y0, x1: left + h, y1: y0 + h, r: round });
    rows.push({ x0: barLeft, y0, x1: barRight, y1: y0 + h, r: round });
  }
  return { back, rows };
}

/** The icon's RGBA pixels, row by row. */
export function iconPixels(size: number): Uint8Array {
  const { back, rows } = shapes(size);
  const out = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) {
    const t = (y + 0.5 - back.y0) / (back.y1 - back.y0);
    const base = TOP.map((c, k) => Math.round(c + (BOTTOM[k]! - c) * Math.min(1, Math.max(0, t)))) as Rgb;
    for (let x = 0; x < size; x++) {
      const a = coverage(back, x, y);
      // The rows lie inside the square: white over blue, by the share of the pixel they cover.
      const w = Math.min(1, rows.reduce((sum, r) => sum + coverage(r, x, y), 0));
      const o = (y * size + x) * 4;
      for (let k = 0; k < 3; k++) out[o + k] = a === 0 ? 0 : Math.round(base[k]! + (WHITE[k]! - base[k]!) * w);
      out[o + 3] = Math.round(a * 255);
    }
  }
  return out;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG (8-bit RGBA, no interlace) of `size` × `size` RGBA pixels. */
export function encodePng(size: number, rgba: Uint8Array): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  // Each scanline starts with its filter type (0: none).
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) raw.set(rgba.subarray(y * size * 4, (y + 1) * size * 4), y * (size * 4 + 1) + 1);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The icon of `size` px as PNG bytes. */
export function iconPng(size: number): Buffer {
  return encodePng(size, iconPixels(size));
}

if (import.meta.main) {
  fs.mkdirSync(ICON_DIR, { recursive: true });
  for (const size of ICON_SIZES) {
    const file = path.join(ICON_DIR, `${size}.png`);
    fs.writeFileSync(file, iconPng(size));
    console.log(`${path.relative(ROOT, file)} (${fs.statSync(file).size} bytes)`);
  }
}
