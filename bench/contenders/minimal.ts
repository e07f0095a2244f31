// The practical ceiling for a JavaScript engine: one undici Agent (keep-alive), request(), body as text,
// htmlparser2's parseDocument() handed to cheerio's load() (measurably faster than cheerio.load(html), which
// parses with parse5; `--parser parse5` runs that variant), a promise pool of `concurrency`, and the extraction
// written by hand. Listing pages go to the front of the queue so the frontier keeps growing.
//
//   node bench/contenders/minimal.ts --start URL [--concurrency 8] [--sample-url URL] [--parser htmlparser2|parse5|html5]
import * as cheerio from 'cheerio';
import { parseDocument } from 'htmlparser2';
import { Agent, request } from 'undici';
import { Fingerprint, bookListing, bookRow, contenderArgs, report, type Row } from './common.ts';

const args = contenderArgs();
const parser = args.parser || 'htmlparser2';
if (parser !== 'htmlparser2' && parser !== 'parse5' && parser !== 'html5') throw new Error(`unknown --parser ${parser}`);
// html5: our parseHtml() (lambdas/engine/html/), to see what reading HTML as a browser does costs this loop.
const { parseHtml } = parser === 'html5' ? await import('../../lambdas/engine/html/parse.ts') : { parseHtml: null };
const load = parser === 'parse5'
  ? (html: string) => cheerio.load(html)
  : parseHtml ? (html: string) => cheerio.load(parseHtml(html)) : (html: string) => cheerio.load(parseDocument(html));

const agent = new Agent({ connections: args.concurrency, keepAliveTimeout: 30_000 });

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

async function get(url: string): Promise<string> {
  const { statusCode, body } = await request(url, { dispatcher: agent });
  if (statusCode !== 200) {
    await body.dump();
    throw new Error(`GET ${url}: HTTP ${statusCode}`);
  }
  return body.text();
}

/**
 * Lets a page's tree die young once it is read, as our engine does (lambdas/engine/extract.ts, releaseDocument):
 * cheerio's load() makes a class per document that V8's scavenger keeps alive, and with it the whole tree, so every
 * tree is promoted to the old generation otherwise (about 25% of this loop's time on the bench's site).
 */
function letGo($: cheerio.CheerioAPI): void {
  ($.root()[0] as { children: unknown[] }).children = [];
}

async function handle(task: Task, enqueue: (t: Task, front: boolean) => void): Promise<void> {
  const html = await get(task.url);
  pages++;
  const $ = load(html);
  if (task.kind === 'list') {
    const { next, items } = bookListing($, task.url);
    letGo($);
    if (next) enqueue({ url: next, kind: 'list' }, true);
    for (const it of items) enqueue({ url: it.url, kind: 'detail', rating: it.rating }, false);
    return;
  }
  const row = bookRow($, task.url, task.rating);
  letGo($);
  rows++;
  fingerprint.add(row);
  if (row.url === args.sampleUrl) sample = row;
}

/** Runs tasks with at most `concurrency` in flight until the queue is empty and nothing is in flight. */
function crawl(start: Task, concurrency: number): Promise<void> {
  const queue: Task[] = [start];
  let active = 0;
  return new Promise((resolve, reject) => {
    let failed = false;
    const enqueue = (t: Task, front: boolean): void => {
      if (seen.has(t.url)) return;
      seen.add(t.url);
      if (front) queue.unshift(t);
      else queue.push(t);
    };
    seen.add(start.url);
    const pump = (): void => {
      if (failed) return;
      while (active < concurrency && queue.length > 0) {
        const task = queue.shift()!;
        active++;
        handle(task, enqueue).then(
          () => {
            active--;
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

const t0 = performance.now();
await crawl({ url: args.start, kind: 'list' }, args.concurrency);
const seconds = (performance.now() - t0) / 1000;
await agent.close();
report({ name: 'minimal', pages, rows, seconds, fingerprint: fingerprint.hex(), sample, notes: [`parser: ${parser}`] });
