/**
 * Issue 38's figure: a generated config that reads the site's JSON API against the generated config that reads the
 * rendered page, for the same rows. On the fixture site's API-backed pages (an infinite-scroll feed over an offset
 * API, search results from a POST with a JSON body, a "Show more" over a cursor API, a next link over a paged API),
 * the no-LLM generator writes both configs (`readApi: true`, its default, and `readApi: false`); each is then run
 * whole, `--runs` times, interleaved: the API config on the lightweight engine (plain HTTP, what `engine: auto` picks
 * for it), the page config on the browser engine (the same Chromium the service uses). Prints the median seconds of
 * each, their ratio (target: the API config at least 10x faster), and whether the rows are the same (they must be).
 *
 * Usage: npm run bench -- api-source [--runs N (3)] [--only feed,search,cursor,quotes]
 */
import os from 'node:os';
import { startFixtureSite } from '../test/fixtures/site/server.ts';
import { generateHeuristic } from '../lambdas/generator/heuristic.ts';
import type { GenerationResult } from '../lambdas/generator/generator.ts';
import { runHeavy, runLightweight } from '../lambdas/engine/engines.ts';
import { BrowserHost } from '../lambdas/engine/browser/host.ts';
import { OutboundGuard } from '../lambdas/net/guard.ts';

const OUTBOUND = { allow: ['127.0.0.0/8'] };
const PROMPT = 'All the quotes with their authors and tags, from every page';
const TARGET = 10;
const PAGES: Record<string, string> = { feed: '/js/feed/', search: '/js/search-post/?q=life', cursor: '/js/cursor/', quotes: '/js/quotes/' };

function arg(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function main(args: string[]): Promise<number> {
  const runs = Number(arg(args, 'runs') ?? 3);
  const only = (arg(args, 'only') ?? Object.keys(PAGES).join(',')).split(',');
  const site = await startFixtureSite();
  const host = new BrowserHost({ guard: new OutboundGuard(OUTBOUND) });
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} before; ${runs} run(s) each, interleaved; node ${process.version}`);
  let failed = 0;
  try {
    console.log('page     rows  api s (median)  page s (median)  page/api  same rows  target');
    for (const name of only) {
      const path = PAGES[name];
      if (!path) throw new Error(`unknown page ${name}: one of ${Object.keys(PAGES).join(', ')}`);
      const gen = (readApi: boolean): Promise<GenerationResult> =>
        generateHeuristic({ url: `${site.url}${path}`, prompt: PROMPT }, { outbound: OUTBOUND, browser: () => host, readApi, signal: AbortSignal.timeout(120_000) });
      const viaApi = await gen(true);
      const viaPage = await gen(false);
      if (!viaApi.config.target.api) throw new Error(`${name}: the generator wrote no API config:\n${viaApi.yaml}\n${viaApi.notes.join(' | ')}`);
      if (viaPage.config.target.api) throw new Error(`${name}: readApi false wrote an API config`);
      const apiTimes: number[] = [];
      const pageTimes: number[] = [];
      let same = true;
      let rows = 0;
      for (let i = 0; i < runs; i++) {
        let t = performance.now();
        const a = await runLightweight(viaApi.config, { outbound: OUTBOUND, maxPages: 200 });
        apiTimes.push((performance.now() - t) / 1000);
        t = performance.now();
        const p = await runHeavy(viaPage.config, { host, maxPages: 200, concurrency: 4 });
        pageTimes.push((performance.now() - t) / 1000);
        rows = a.rows.length;
        // The two configs name their fields alike (both from the page's fields): the rows must be equal as they are.
        if (JSON.stringify(a.rows) !== JSON.stringify(p.rows)) {
          same = false;
          console.log(`  ${name} run ${i + 1}: rows differ (api ${a.rows.length}, page ${p.rows.length}); first api ${JSON.stringify(a.rows[0])}, first page ${JSON.stringify(p.rows[0])}`);
        }
      }
      const api = median(apiTimes);
      const page = median(pageTimes);
      const ratio = page / api;
      const pass = same && ratio >= TARGET;
      if (!pass) failed++;
      console.log(`${name.padEnd(8)} ${String(rows).padStart(4)}  ${api.toFixed(3).padStart(14)}  ${page.toFixed(3).padStart(15)}  ${ratio.toFixed(1).padStart(7)}x  ${same ? 'yes' : 'NO '.padEnd(9)}        >= ${TARGET}x ${pass ? 'PASS' : 'MISSED'}`);
    }
  } finally {
    await host.close();
    await site.close();
  }
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} after`);
  return failed ? 1 : 0;
}
