// Shared by the browser contenders (bench/browser.ts): arguments, the Chromium binary and flags every contender
// launches with, the one JSON line each prints, and the checks of a page's fields.
//
// The same Chromium for all: @sparticuz/chromium's binary (unpacked to /tmp/chromium) with its flags minus
// --single-process and --in-process-gpu (Lambda-only; BrowserHost drops them the same way outside Lambda) and
// minus its --headless flag (puppeteer's `headless: 'shell'` sets it). Our engine's BrowserHost adds its own
// service flags to that base (the guard proxy, no background networking, …): that is part of what is measured.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Browser, LaunchOptions } from 'puppeteer-core';
import type { Row } from './common.ts';

export interface BrowserContenderArgs {
  /** First listing page, e.g. http://127.0.0.1:PORT/catalogue/page-1.html */
  start: string;
  concurrency: number;
  /** URL of the detail page whose row is printed as `sample`. */
  sampleUrl: string;
}

export function browserContenderArgs(argv = process.argv.slice(2)): BrowserContenderArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      start: { type: 'string' },
      concurrency: { type: 'string', default: '4' },
      'sample-url': { type: 'string', default: '' },
    },
  });
  if (!values.start) throw new Error('--start URL is required');
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`bad --concurrency ${values.concurrency}`);
  return { start: values.start, concurrency, sampleUrl: values['sample-url'] ?? '' };
}

/** Flags of @sparticuz/chromium that are for Lambda only (BrowserHost drops them outside Lambda too). */
const LAMBDA_ONLY = new Set(['--single-process', '--in-process-gpu']);

/** The Chromium binary and the flag base every contender starts it with. */
export async function chromiumBase(): Promise<{ executablePath: string; args: string[] }> {
  const { default: chromium } = await import('@sparticuz/chromium');
  const executablePath = process.env.CHROME_PATH || (await chromium.executablePath());
  const args = chromium.args.filter((a) => !LAMBDA_ONLY.has(a) && !a.startsWith('--headless'));
  return { executablePath, args };
}

/** The launch options of the minimal loop (and of the site generator's image drawing). */
export async function launchOptions(): Promise<LaunchOptions> {
  const { executablePath, args } = await chromiumBase();
  return { executablePath, args, headless: 'shell', pipe: true, defaultViewport: { width: 1366, height: 900 } };
}

/** One Chromium with the common flag base (puppeteer-core of the project). */
export async function launchBrowser(): Promise<Browser> {
  const { default: puppeteer } = await import('puppeteer-core');
  return puppeteer.launch(await launchOptions());
}

/** Peak resident set size of this (Node) process in MB (VmHWM): the runner measures the whole process tree. */
export function nodePeakRssMb(): number {
  const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : -1;
}

export interface BrowserContenderResult {
  name: string;
  /** Documents the contender loaded (listing and detail pages). */
  pages: number;
  rows: number;
  /** From just before the first browser launch to every row in hand. */
  seconds: number;
  /** Filled in by the runner, which samples the process tree (see bench/browser.ts); null as printed. */
  peak_tree_rss_mb: number | null;
  fingerprint: string;
  sample: Row | null;
  /** VmHWM of the contender's Node process alone (browsers excluded). */
  node_peak_rss_mb: number;
  /** Chromium launches during the run. */
  launches?: number;
  notes?: string[];
}

export function reportBrowser(r: Omit<BrowserContenderResult, 'peak_tree_rss_mb' | 'node_peak_rss_mb'>): void {
  const out: BrowserContenderResult = { ...r, seconds: Math.round(r.seconds * 1000) / 1000, peak_tree_rss_mb: null, node_peak_rss_mb: nodePeakRssMb() };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** Resource types the minimal loop aborts (the same set as our engine's). */
export const BLOCKED_TYPES = new Set(['image', 'media', 'font']);
/** What each contender waits for after loading a page: the rendered items, the rendered product title. */
export const LISTING_READY = 'article.product_pod';
export const DETAIL_READY = 'article.product_page h1';
