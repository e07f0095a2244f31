// Crawlee's PuppeteerCrawler (@crawlee/puppeteer with puppeteer-core 24.42.0, both in bench/.peers, not project
// dependencies), configured as its documentation shows for a crawl like this one and otherwise left at its
// defaults (browser pool, fingerprints, retries, autoscaled pool):
//   - minConcurrency = maxConcurrency = concurrency; in-memory storage (Configuration persistStorage: false);
//   - launchContext: the same Chromium binary, flag base and headless 'shell' as the other contenders
//     (browser-common.ts), launched by the peers' puppeteer-core;
//   - a pre-navigation hook calling blockRequests() (Crawlee's way to block images and fonts: CDP
//     Network.setBlockedURLs with its default patterns .css .jpg .jpeg .png .svg .gif .woff .pdf .zip);
//   - per page: waitForSelector for the rendered content, then parseWithCheerio() and the same hand-written
//     extraction as the minimal loop; the next listing page is enqueued at the front (enqueueLinks forefront),
//     detail pages with addRequests carrying the listing's rating in userData.
//
//   node bench/contenders/browser-crawlee.ts --start URL [--concurrency 4] [--sample-url URL]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PEERS_DIR } from '../paths.ts';
import { Fingerprint, bookListing, bookRow, type Row } from './common.ts';
import { DETAIL_READY, LISTING_READY, browserContenderArgs, chromiumBase, reportBrowser } from './browser-common.ts';

const args = browserContenderArgs();

// Computed paths keep bench/.peers out of typechecking; the modules are typed loosely on purpose.
const peer = (...p: string[]): string => pathToFileURL(join(PEERS_DIR, 'node_modules', ...p)).href;
/* eslint-disable @typescript-eslint/no-explicit-any */
const crawlee: any = await import(peer('@crawlee', 'puppeteer', 'index.mjs'));
const puppeteer: any = (await import(peer('puppeteer-core', 'lib', 'esm', 'puppeteer', 'puppeteer-core.js'))).default;
const { PuppeteerCrawler, Configuration, log } = crawlee;
log.setLevel(log.LEVELS.WARNING);

let pages = 0;
let rows = 0;
let failed = 0;
let launches = 0;
let sample: Row | null = null;
const fingerprint = new Fingerprint();
const { executablePath, args: chromeArgs } = await chromiumBase();

const crawler = new PuppeteerCrawler(
  {
    minConcurrency: args.concurrency,
    maxConcurrency: args.concurrency,
    launchContext: {
      launcher: puppeteer,
      launchOptions: { executablePath, args: chromeArgs, headless: 'shell', defaultViewport: { width: 1366, height: 900 } },
    },
    browserPoolOptions: {
      postLaunchHooks: [(): void => { launches++; }],
    },
    preNavigationHooks: [
      async ({ blockRequests }: any): Promise<void> => {
        await blockRequests();
      },
    ],
    async requestHandler({ request, page, parseWithCheerio, enqueueLinks, addRequests }: any): Promise<void> {
      const list = request.label === 'LIST';
      await page.waitForSelector(list ? LISTING_READY : DETAIL_READY);
      const $ = await parseWithCheerio();
      pages++;
      if (list) {
        await enqueueLinks({ selector: 'li.next a', label: 'LIST', forefront: true });
        const { items } = bookListing($, request.loadedUrl ?? request.url);
        await addRequests(items.map((it) => ({ url: it.url, label: 'DETAIL', userData: { rating: it.rating } })));
        return;
      }
      const row: Row = bookRow($, request.url, request.userData.rating);
      rows++;
      fingerprint.add(row);
      if (row.url === args.sampleUrl) sample = row;
    },
    failedRequestHandler({ request }: any, error: Error): void {
      failed++;
      console.error(`crawlee: ${request.url} failed: ${error.message}`);
    },
  },
  new Configuration({ persistStorage: false, purgeOnStart: true }),
);
/* eslint-enable @typescript-eslint/no-explicit-any */

const t0 = performance.now();
await crawler.run([{ url: args.start, label: 'LIST' }]);
const seconds = (performance.now() - t0) / 1000;
const version = (JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', '@crawlee', 'puppeteer', 'package.json'), 'utf8')) as { version: string }).version;
const notes = [`@crawlee/puppeteer ${version}`];
if (failed) notes.push(`${failed} requests failed`);
reportBrowser({ name: 'crawlee', pages, rows, seconds, fingerprint: fingerprint.hex(), sample, launches, notes });
