/**
 * The extension's Quick Test latency (issue 15: "shown as a table in the popup within a second on an ordinary
 * page"), in Debian's Chromium with the built extension loaded, on five shapes of page served on loopback:
 * a generated 50-item listing, the corpus books listing, two large real search-result pages of the corpus
 * (alibaba, 1.1 MB; newegg, 0.9 MB) and the ArchWiki list of applications (a large page of 7,000 links).
 *
 * Ours: the popup's Quick Test message to the service worker, which reads the page's DOM, parses it with the
 * service's HTML parser and runs the service's crawler and extraction (the click-to-rows path minus rendering).
 * Peer: the fastest way an extension can read the same rows, Instant Data Scraper's way: one
 * `chrome.scripting.executeScript` that walks the live DOM with querySelectorAll and reads each field's
 * text, href or src in the page, with no parse and no config language. Both are timed from the popup, median
 * of `--runs` after a warm-up, and must give the same number of rows.
 *
 * Usage: npm run bench -- quicktest [--runs N (15)] [--only products,books,...]
 * Needs: `npm run build:extension` first; /usr/bin/chromium (or SAI_CHROMIUM).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Page } from 'puppeteer-core';
import { ROOT, corpusDir } from './paths.ts';
import { launchDebianChromium } from '../test/helpers/chromium.ts';
import { suggestConfig } from '../lambdas/generator/suggest.ts';
import { parseConfig } from '../lambdas/engine/config.ts';

const DIST = path.join(ROOT, 'clients/extension/dist/chrome-mv3');
/** The issue's target for an ordinary page, ms. */
const TARGET_MS = 1000;

interface Shape {
  name: string;
  html: string;
  /** The config's YAML for `url`; null: suggested by suggestConfig from the page. */
  yaml: ((url: string) => string) | null;
}

function productsHtml(): string {
  const items = Array.from({ length: 50 }, (_, i) => `<li class="product"><h2><a href="/p/${i}">Product ${i}</a></h2><span class="price">£${i}.99</span><img src="/i/${i}.jpg" alt=""></li>`).join('\n');
  return `<!doctype html><html><head><title>Products</title></head><body><ul class="products">${items}</ul></body></html>`;
}

function shapes(): Shape[] {
  const corpus = corpusDir();
  const read = (...p: string[]) => fs.readFileSync(path.join(corpus, ...p), 'latin1');
  return [
    { name: 'products', html: productsHtml(), yaml: (url) => `version: "2.0"\nname: P\ntarget: { url: "${url}" }\nextract:\n  container: li.product\n  fields:\n    - { name: title, selector: h2 a }\n    - { name: url, selector: h2 a, type: link }\n    - { name: price, selector: .price }\n    - { name: image, selector: img, type: image_url }\n` },
    { name: 'books', html: read('listings', 'books-toscrape-home.html'), yaml: null },
    { name: 'alibaba', html: read('records', 'business--alibaba-com--home-business-keyword', 'page.html'), yaml: null },
    { name: 'newegg', html: read('records', 'shopping--newegg-com--toys-shopping-keyword', 'page.html'), yaml: null },
    { name: 'archwiki', html: read('links', 'archwiki-list-of-applications.html'), yaml: (url) => `version: "2.0"\nname: A\ntarget: { url: "${url}" }\nextract:\n  container: "#mw-content-text li"\n  fields:\n    - { name: name, selector: a }\n    - { name: url, selector: a, type: link }\n` },
  ];
}

/** The few chrome.* calls the bench makes from the popup. */
interface ChromeApi {
  tabs: { query(q: object): Promise<Array<{ id?: number }>> };
  runtime: { sendMessage(m: object): Promise<unknown> };
  scripting: { executeScript(o: { target: { tabId: number }; func: (...a: never[]) => unknown; args: unknown[] }): Promise<Array<{ result?: unknown }>> };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function main(args: string[]): Promise<number> {
  const runs = Number(args[args.indexOf('--runs') + 1] ?? 15) || 15;
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1]!.split(',') : null;
  if (!fs.existsSync(path.join(DIST, 'manifest.json'))) throw new Error('build the extension first: npm run build:extension');
  const list = shapes().filter((s) => !only || only.includes(s.name));
  const server = http.createServer((req, res) => {
    const shape = list.find((s) => req.url === `/${s.name}/`);
    res.writeHead(shape ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(shape ? shape.html : 'not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-quicktest-'));
  const browser = await launchDebianChromium(path.join(work, 'profile'), { pipe: true, enableExtensions: [DIST] });
  let failures = 0;
  try {
    const sw = await browser.waitForTarget((t) => t.type() === 'service_worker' && t.url().endsWith('/background.js'));
    const id = new URL(sw.url()).host;
    const extension = (await browser.extensions()).get(id)!;
    console.log(`Quick Test, median of ${runs} runs after a warm-up (ms, click to rows in the popup; target ${TARGET_MS} ms)\n`);
    console.log(`${'page'.padEnd(10)} ${'KB'.padStart(6)} ${'rows'.padStart(5)} ${'ours'.padStart(8)} ${'minimal'.padStart(8)}  ratio`);
    for (const shape of list) {
      const url = `${base}/${shape.name}/`;
      const yaml = shape.yaml ? shape.yaml(url) : suggestConfig(shape.html, url).yaml;
      const config = parseConfig(yaml);
      const fields = config.extract.fields.map((f) => ({ selector: f.selector ?? null, type: f.type, attribute: f.attribute ?? null }));
      const tab = await browser.newPage();
      await tab.goto(url, { waitUntil: 'load' });
      await tab.bringToFront();
      await tab.triggerExtensionAction(extension);
      const popup = (await (await browser.waitForTarget((t) => t.url().endsWith('/popup.html'))).asPage()) as Page;
      await popup.waitForSelector('.popup[data-ready="true"]');
      // Runs in the popup (its `chrome` API); the peer function is written inline because the popup's CSP forbids eval.
      const timing = await popup.evaluate(async (yamlText: string, container: string, fs_: typeof fields, n: number) => {
        const chrome = (globalThis as unknown as { chrome: ChromeApi }).chrome;
        const [t] = await chrome.tabs.query({ active: true, currentWindow: true });
        const tabId = t!.id!;
        /** The peer: reads the rows from the live DOM in the page (IDS's way). Runs inside the page. */
        const peer = (box: string, fl: Array<{ selector: string | null; type: string; attribute: string | null }>, limit: number): unknown[] => {
          const rows: unknown[] = [];
          for (const item of Array.from(document.querySelectorAll(box)).slice(0, limit)) {
            rows.push(fl.map((f) => {
              const el = f.selector ? item.querySelector(f.selector) : item;
              if (!el) return null;
              if (f.type === 'link') return (el.closest('a') ?? el.querySelector('a'))?.href ?? null;
              if (f.type === 'image_url') return ((el.tagName === 'IMG' ? el : el.querySelector('img')) as HTMLImageElement | null)?.src ?? null;
              if (f.type === 'attribute') return el.getAttribute(f.attribute ?? '');
              return (el.textContent ?? '').trim();
            }));
          }
          return rows;
        };
        const ours: number[] = [];
        const minimal: number[] = [];
        let oursRows = 0;
        let minimalRows = 0;
        for (let i = 0; i <= n; i++) {
          let start = performance.now();
          const state = await chrome.runtime.sendMessage({ type: 'quick-test', tabId, yaml: yamlText }) as { status: string; rows: unknown[]; message: string };
          if (state.status !== 'completed') throw new Error(state.message);
          if (i) ours.push(performance.now() - start);
          oursRows = state.rows.length;
          start = performance.now();
          const [r] = await chrome.scripting.executeScript({ target: { tabId }, func: peer, args: [container, fs_, 20] });
          if (i) minimal.push(performance.now() - start);
          minimalRows = (r!.result as unknown[]).length;
        }
        return { ours, minimal, oursRows, minimalRows };
      }, yaml, config.extract.container!, fields, runs).catch((err: unknown) => ({ error: String(err) }));
      await popup.close();
      await tab.close();
      if ('error' in timing) {
        console.log(`${shape.name.padEnd(10)} failed: ${timing.error}`);
        failures++;
        continue;
      }
      const o = median(timing.ours);
      const m = median(timing.minimal);
      const agree = timing.oursRows === timing.minimalRows;
      if (!agree) failures++;
      const kb = Math.round(Buffer.byteLength(shape.html) / 1024);
      console.log(`${shape.name.padEnd(10)} ${String(kb).padStart(6)} ${String(timing.oursRows).padStart(5)} ${o.toFixed(0).padStart(8)} ${m.toFixed(0).padStart(8)}  ${(o / m).toFixed(1)}x${agree ? '' : `  ROWS DIFFER (minimal ${timing.minimalRows})`}${o > TARGET_MS ? '  OVER TARGET' : ''}`);
    }
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
  return failures ? 1 : 0;
}
