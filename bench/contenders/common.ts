// Shared by the JavaScript contenders (scrapy_spider.py has the same logic in Python): arguments,
// the row fingerprint, peak RSS, and the one JSON line each contender prints.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CheerioAPI } from 'cheerio';

export interface Row {
  url: unknown;
  title: unknown;
  price: unknown;
  rating: unknown;
  upc: unknown;
  description: unknown;
}

export interface ContenderArgs {
  /** First listing page, e.g. http://127.0.0.1:PORT/catalogue/page-1.html */
  start: string;
  concurrency: number;
  /** URL of the detail page whose row is printed as `sample`. */
  sampleUrl: string;
  /** Extra, contender-specific option (minimal: the parser). */
  parser: string;
}

export function contenderArgs(argv = process.argv.slice(2)): ContenderArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      start: { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      'sample-url': { type: 'string', default: '' },
      parser: { type: 'string', default: '' },
    },
  });
  if (!values.start) throw new Error('--start URL is required');
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`bad --concurrency ${values.concurrency}`);
  return { start: values.start, concurrency, sampleUrl: values['sample-url'] ?? '', parser: values.parser ?? '' };
}

const MASK = (1n << 64n) - 1n;

/**
 * The canonical form of a row: fields in a fixed order, the price with two decimals when it is a number
 * (anything else is kept as text, so a price that is not a number makes the fingerprint differ).
 * Must match row_key() in scrapy_spider.py.
 */
export function rowKey(r: Row): string {
  const price = typeof r.price === 'number' ? r.price.toFixed(2) : `!${String(r.price)}`;
  return [r.url, r.title, price, r.rating, r.upc, r.description].map((v) => (typeof v === 'string' ? v : `!${String(v)}`)).join('\x1f');
}

/** Order-independent fingerprint of a set of rows: sum mod 2^64 of the first 64 bits of each row key's sha256. */
export class Fingerprint {
  private sum = 0n;
  add(r: Row): void {
    const h = createHash('sha256').update(rowKey(r)).digest();
    this.sum = (this.sum + h.readBigUInt64BE(0)) & MASK;
  }
  hex(): string {
    return this.sum.toString(16).padStart(16, '0');
  }
}

/** Peak resident set size of this process in MB (VmHWM from /proc/self/status). */
export function peakRssMb(): number {
  const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  if (!m) throw new Error('no VmHWM in /proc/self/status');
  return Math.round((Number(m[1]) / 1024) * 10) / 10;
}

export interface ContenderResult {
  name: string;
  pages: number;
  rows: number;
  seconds: number;
  peak_rss_mb: number;
  fingerprint: string;
  sample: Row | null;
  notes?: string[];
}

export function report(r: Omit<ContenderResult, 'peak_rss_mb'>): void {
  const out: ContenderResult = { ...r, seconds: Math.round(r.seconds * 1000) / 1000, peak_rss_mb: peakRssMb() };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** "£51.77" → 51.77 (the same as Scrapy's float(text.replace('£', '').strip())). */
export function parsePrice(text: string): number {
  return Number.parseFloat(text.replace(/[^0-9.]/g, ''));
}

/** "star-rating Three" → "Three". */
export function ratingWord(cls: string | undefined): string {
  return (cls ?? '').replace('star-rating', '').trim();
}

/** An item of a books listing page: its detail page (absolute) and the rating word of its listing entry. */
export interface ListingItem {
  url: string;
  rating: string;
}

/**
 * The hand-written extraction of a books listing page, shared by the contenders that are not our engine (our
 * engine reads the same from bench/configs/*.yaml): the next listing page (`li.next a`, absolute) and the items.
 */
export function bookListing($: CheerioAPI, pageUrl: string): { next: string | undefined; items: ListingItem[] } {
  const next = $('li.next a').attr('href');
  const items: ListingItem[] = [];
  $('article.product_pod').each((_, el) => {
    const pod = $(el);
    const href = pod.find('h3 a').attr('href');
    if (href) items.push({ url: new URL(href, pageUrl).href, rating: ratingWord(pod.find('p.star-rating').attr('class')) });
  });
  return { next: next ? new URL(next, pageUrl).href : undefined, items };
}

/** The hand-written extraction of a books detail page into a row (`rating` comes from the listing). */
export function bookRow($: CheerioAPI, url: string, rating: unknown): Row {
  return {
    url,
    title: $('h1').first().text().trim(),
    price: parsePrice($('p.price_color').first().text()),
    rating,
    upc: $('table.table-striped tr:first-child td').first().text(),
    description: $('#product_description + p').first().text().trim(),
  };
}
