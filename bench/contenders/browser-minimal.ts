// The practical ceiling for a browser crawl in Node: one Chromium (puppeteer-core, the common flags, headless
// 'shell', a pipe), `concurrency` pages opened once and reused, request interception aborting images, media and
// fonts, then per URL: goto until `domcontentloaded`, waitForSelector for the rendered content, page.content() parsed
// by htmlparser2 + cheerio with the extraction written by hand; a promise pool, the next listing page at the
// front of the queue so the frontier keeps growing.
//
//   node bench/contenders/browser-minimal.ts --start URL [--concurrency 4] [--sample-url URL]
import * as cheerio from 'cheerio';
import { parseDocument } from 'htmlparser2';
import type { Page } from 'puppeteer-core';
import { Fingerprint, bookListing, bookRow, type Row } from './common.ts';
import { BLOCKED_TYPES, DETAIL_READY, LISTING_READY, browserContenderArgs, launchBrowser, reportBrowser } from './browser-common.ts';

const args = browserContenderArgs();

interface Task {
  url: string;
  kind: 'list' | 'detail';
  rating?: string;
}

let pages = 0;
let rows = 0;
let sample: Row | null = null;
const fingerprint = new Fingerprint();
const seen = new Set<string>();

const t0 = performance.now();
const browser = await launchBrowser();

async function openPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.isInterceptResolutionHandled()) return;
    if (BLOCKED_TYPES.has(req.resourceType())) void req.abort('blockedbyclient');
    else void req.continue();
  });
  return page;
}

async function handle(page: Page, task: Task, enqueue: (t: Task, front: boolean) => void): Promise<void> {
  const res = await page.goto(task.url, { waitUntil: 'domcontentloaded' });
  if (!res || res.status() !== 200) throw new Error(`GET ${task.url}: HTTP ${res?.status() ?? '(no response)'}`);
  await page.waitForSelector(task.kind === 'list' ? LISTING_READY : DETAIL_READY);
  const html = await page.content();
  pages++;
  const $ = cheerio.load(parseDocument(html));
  if (task.kind === 'list') {
    const { next, items } = bookListing($, task.url);
    if (next) enqueue({ url: next, kind: 'list' }, true);
    for (const it of items) enqueue({ url: it.url, kind: 'detail', rating: it.rating }, false);
    return;
  }
  const row = bookRow($, task.url, task.rating);
  rows++;
  fingerprint.add(row);
  if (row.url === args.sampleUrl) sample = row;
}

/** `concurrency` pages, each taking the next task until the queue is empty and no page is busy. */
function crawl(start: Task, tabs: Page[]): Promise<void> {
  const queue: Task[] = [start];
  const idle = [...tabs];
  let active = 0;
  seen.add(start.url);
  return new Promise((resolve, reject) => {
    let failed = false;
    const enqueue = (t: Task, front: boolean): void => {
      if (seen.has(t.url)) return;
      seen.add(t.url);
      if (front) queue.unshift(t);
      else queue.push(t);
    };
    const pump = (): void => {
      if (failed) return;
      while (idle.length > 0 && queue.length > 0) {
        const task = queue.shift()!;
        const page = idle.pop()!;
        active++;
        handle(page, task, enqueue).then(
          () => {
            active--;
            idle.push(page);
            pump();
          },
          (err: unknown) => {
            failed = true;
            reject(err);
          },
        );
      }
      if (active === 0 && queue.length === 0) resolve();
    };
    pump();
  });
}

try {
  const tabs = await Promise.all(Array.from({ length: args.concurrency }, openPage));
  await crawl({ url: args.start, kind: 'list' }, tabs);
  const seconds = (performance.now() - t0) / 1000;
  reportBrowser({ name: 'minimal', pages, rows, seconds, fingerprint: fingerprint.hex(), sample, launches: 1, notes: [`puppeteer-core ${browser.process() ? 'pipe' : '?'}, ${await browser.version()}`] });
} finally {
  await browser.close();
}
