// Crawlee's CheerioCrawler (@crawlee/cheerio, installed in bench/.peers, not a project dependency):
// minConcurrency = maxConcurrency = concurrency, in-memory storage (Configuration persistStorage: false),
// default retries, labels LIST/DETAIL; the next listing page is enqueued with enqueueLinks (forefront),
// detail pages with addRequests carrying the listing's rating in userData. Rows are counted, fingerprinted
// and one is kept as the sample (no Dataset, as for the other contenders).
//
//   node bench/contenders/crawlee.ts --start URL [--concurrency 8] [--sample-url URL]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PEERS_DIR } from '../paths.ts';
import { Fingerprint, bookListing, bookRow, contenderArgs, report, type Row } from './common.ts';

const args = contenderArgs();

// A computed path keeps bench/.peers out of typechecking; the module is typed loosely on purpose.
const entry = pathToFileURL(join(PEERS_DIR, 'node_modules', '@crawlee', 'cheerio', 'index.mjs')).href;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const crawlee: any = await import(entry);
const { CheerioCrawler, Configuration, log } = crawlee;
log.setLevel(log.LEVELS.WARNING);

let pages = 0;
let rows = 0;
let failed = 0;
let sample: Row | null = null;
const fingerprint = new Fingerprint();

/* eslint-disable @typescript-eslint/no-explicit-any */
const crawler = new CheerioCrawler(
  {
    minConcurrency: args.concurrency,
    maxConcurrency: args.concurrency,
    async requestHandler({ request, $, enqueueLinks, addRequests }: any): Promise<void> {
      pages++;
      if (request.label === 'LIST') {
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
const version = (JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', '@crawlee', 'cheerio', 'package.json'), 'utf8')) as { version: string }).version;
const notes = [`@crawlee/cheerio ${version}`];
if (failed) notes.push(`${failed} requests failed`);
report({ name: 'crawlee', pages, rows, seconds, fingerprint: fingerprint.hex(), sample, notes });
