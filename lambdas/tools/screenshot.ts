/**
 * The screenshot tool (docs/spec.md, "Tool endpoints", POST /api/v1/tools/screenshot/; docs/tools.md "screenshot"): a page
 * rendered by the worker's Chromium through the guard proxy (lambdas/engine/browser/screenshot.ts), answered as
 * the image itself, or stored and answered as `{url, width, height, format, bytes}` when the caller asks for
 * JSON. Stored images live {@link SCREENSHOT_TTL_S} seconds: in the cloud behind a presigned S3 URL, on one
 * machine behind GET /api/v1/screenshots/{id}/, whose unguessable id carries its expiry.
 */
import { randomBytes } from 'node:crypto';
import { CodedError } from '../errors.ts';
import { SCREENSHOT_LIMITS } from '../engine/browser/screenshot.ts';
import type { Services } from '../core/services.ts';

/** Formats of the screenshot tool. */
export type ScreenshotFormat = 'png' | 'jpeg' | 'webp';

/** Body of POST /api/v1/tools/screenshot/ (docs/tools.md). Sizes in CSS pixels, `delay` in ms. */
export interface ScreenshotBody {
  url: string;
  /** @default 'png' */
  format?: ScreenshotFormat;
  /** The whole page (up to 16,384 px tall) instead of the viewport. @default false */
  full_page?: boolean;
  /** Viewport width, 100-3840. @default 1366 */
  width?: number;
  /** Viewport height, 100-2160. @default 900 */
  height?: number;
  /** 0.5-3 (2 for "retina"). @default 1 */
  device_scale_factor?: number;
  /** Wait after the page loaded, 0-10000 ms. @default 0 */
  delay?: number;
}

/** JSON Schema of {@link ScreenshotBody}. */
export const screenshotBodySchema = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    format: { type: 'string', enum: ['png', 'jpeg', 'webp'] },
    full_page: { type: 'boolean' },
    width: { type: 'integer', minimum: SCREENSHOT_LIMITS.minSize, maximum: SCREENSHOT_LIMITS.maxWidth },
    height: { type: 'integer', minimum: SCREENSHOT_LIMITS.minSize, maximum: SCREENSHOT_LIMITS.maxHeight },
    device_scale_factor: { type: 'number', minimum: 0.5, maximum: SCREENSHOT_LIMITS.maxScale },
    delay: { type: 'integer', minimum: 0, maximum: SCREENSHOT_LIMITS.maxDelayMs },
  },
} as const;

/** The JSON answer (`Accept: application/json`): where the stored image is, its pixel size, format and bytes. */
export interface ScreenshotStored {
  /** A presigned S3 URL (cloud) or this service's GET /api/v1/screenshots/{id}/ (one machine), valid {@link SCREENSHOT_TTL_S} s. */
  url: string;
  /** Pixel width of the image (viewport width × device scale factor). */
  width: number;
  /** Pixel height of the image. */
  height: number;
  format: ScreenshotFormat;
  /** Size of the image, bytes. */
  bytes: number;
  /** When `url` stops working, ISO 8601 UTC. */
  expires_at: string;
}

/** JSON Schema of {@link ScreenshotStored}. */
export const screenshotStoredSchema = {
  type: 'object',
  required: ['url', 'width', 'height', 'format', 'bytes', 'expires_at'],
  additionalProperties: false,
  properties: {
    url: { type: 'string' },
    width: { type: 'integer' },
    height: { type: 'integer' },
    format: { type: 'string', enum: ['png', 'jpeg', 'webp'] },
    bytes: { type: 'integer' },
    expires_at: { type: 'string' },
  },
} as const;

/** How long a stored screenshot and its URL live, seconds. */
export const SCREENSHOT_TTL_S = 3600;

/** Blob-key prefix of stored screenshots (an S3 lifecycle rule deletes them after a day). */
export const SCREENSHOT_PREFIX = 'screenshots/';

/** Ids of stored screenshots: `<expiry, unix seconds, base 36>-<128 random bits, base64url>.<format>`. */
const SCREENSHOT_ID = /^([0-9a-z]{1,10})-([A-Za-z0-9_-]{22})\.(png|jpeg|webp)$/;

/** A new id for a screenshot stored now, and when it expires. */
export function newScreenshotId(format: ScreenshotFormat, now: Date): { id: string; expiresAt: Date } {
  const expiresAt = new Date(now.getTime() + SCREENSHOT_TTL_S * 1000);
  return { id: `${Math.floor(expiresAt.getTime() / 1000).toString(36)}-${randomBytes(16).toString('base64url')}.${format}`, expiresAt };
}

/**
 * Reads a screenshot id from GET /api/v1/screenshots/{id}/.
 * @returns its blob key and MIME type.
 * @throws CodedError `not_found` for a malformed or expired id (an expired image is as gone as a deleted one).
 */
function screenshotKey(id: string, now: Date): { key: string; contentType: string } {
  const m = SCREENSHOT_ID.exec(id);
  if (!m || parseInt(m[1]!, 36) * 1000 <= now.getTime()) throw new CodedError('not_found', `Screenshot ${id} not found (screenshot URLs work for ${SCREENSHOT_TTL_S / 60} minutes)`);
  return { key: `${SCREENSHOT_PREFIX}${id}`, contentType: `image/${m[3]}` };
}

/**
 * Pixel width and height of a PNG, JPEG or WebP image, from its header.
 * @throws Error for another format or a truncated header.
 */
export function imageSize(b: Buffer): { width: number; height: number } {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47) return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    // JPEG: walk the segments to the first start-of-frame (SOF0-SOF15 except DHT 0xC4, JPG 0xC8, DAC 0xCC).
    for (let i = 2; i + 9 < b.length;) {
      if (b[i] !== 0xff) { i++; continue; }
      const marker = b[i + 1]!;
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0xff) { i += marker === 0xff ? 1 : 2; continue; }
      i += 2 + b.readUInt16BE(i + 2);
    }
  }
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = b.toString('latin1', 12, 16);
    if (chunk === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
    if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    if (chunk === 'VP8L') {
      const bits = b.readUInt32LE(21);
      return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
    }
  }
  throw new Error('not a PNG, JPEG or WebP image');
}

/**
 * A stored screenshot by its id (GET /api/v1/screenshots/{id}/).
 * @throws CodedError `not_found` for an unknown, malformed or expired id (an expired file is deleted).
 */
export async function readScreenshot(svc: Services, id: string): Promise<{ body: Buffer; contentType: string }> {
  const now = svc.clock.now();
  let found: { key: string; contentType: string };
  try {
    found = screenshotKey(id, now);
  } catch (err) {
    // Delete what an expired id named (a well-formed id only: a malformed one names no file).
    if (SCREENSHOT_ID.test(id)) await svc.blobs.delete(`${SCREENSHOT_PREFIX}${id}`).catch(() => undefined);
    throw err;
  }
  const body = await svc.blobs.get(found.key);
  if (!body) throw new CodedError('not_found', `Screenshot ${id} not found`);
  return { body, contentType: found.contentType };
}
