/**
 * One way to run a config (engine/engines.ts `runConfig`, issue 25): the run job, `sai run --local`, self-healing
 * and the generator's trial runs all go through it, so the generator's trial of a config and the real run of
 * the config it produces load the same pages with the same loader settings: the engine `auto` chooses, the
 * lightweight assertion, and the image decision (images load only for `eval` fields and `script` actions).
 * Observed from the server's side: which paths each run requested.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { runConfig } from '../../lambdas/engine/engines.ts';
import { BrowserHost } from '../../lambdas/engine/browser/host.ts';
import { Fetcher } from '../../lambdas/net/fetch.ts';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { Workbench } from '../../lambdas/generator/workbench.ts';
import { rejectsWithCode, serveInline, type InlineServer } from './helpers.ts';

const ALLOW = { allow: ['127.0.0.0/8'] };
const PIXEL = { type: 'image/gif', body: 'GIF89a' };

/** Each test reads its own copy of the site (`/<copy>/list/1`), so that a request the last test's browser sent late
 * (an image still loading when its page closed, on a busy machine) is not counted as the next test's. */
const COPIES = ['eval', 'light', 'refused'] as const;

function listing(copy: string, n: number, next?: string): string {
  const items = Array.from({ length: 3 }, (_, i) => `<li class="item"><img src="/${copy}/img/${n}-${i}.gif" alt=""><a href="/${copy}/detail/${n}-${i}">Item ${n}.${i}</a></li>`).join('');
  return `<!doctype html><html><body><ul>${items}</ul>${next ? `<a class="next" href="${next}">Next</a>` : ''}</body></html>`;
}

describe('runConfig: the generator\'s trial and the real run load the same pages the same way', () => {
  let site: InlineServer;
  let host: BrowserHost;
  before(async () => {
    const pages: Record<string, { type?: string; body: string } | string> = {};
    for (const copy of COPIES) {
      pages[`/${copy}/list/1`] = listing(copy, 1, `/${copy}/list/2`);
      pages[`/${copy}/list/2`] = listing(copy, 2);
      for (const n of [1, 2]) for (const i of [0, 1, 2]) pages[`/${copy}/img/${n}-${i}.gif`] = PIXEL;
    }
    site = await serveInline(pages);
    host = new BrowserHost({ guard: new OutboundGuard(ALLOW) });
  });
  after(async () => {
    await host?.close();
    await site?.close();
  });

  /** Runs `yaml` (on the copy of the site `copy`) as the generator's trial and as a run; returns the paths of that copy
   * each requested, sorted. */
  async function bothWays(copy: (typeof COPIES)[number], yaml: string): Promise<{ trial: string[]; run: string[]; trialRows: number; runRows: number }> {
    const ours = (hits: Iterable<string>) => [...hits].filter((p) => p.startsWith(`/${copy}/`)).sort();
    const config = parseConfig(yaml);
    site.hits.clear();
    const bench = new Workbench({ outbound: ALLOW, browser: () => host, trialMaxPages: 5, trialMaxItems: 100 });
    let trialRows: number;
    try {
      trialRows = (await bench.trial(config)).rows.length;
    } finally {
      await bench.close();
    }
    const trial = ours(site.hits.keys());
    site.hits.clear();
    const fetcher = new Fetcher(new OutboundGuard(ALLOW), { perHostConcurrency: 4 });
    let runRows: number;
    try {
      runRows = (await runConfig(config, { fetcher, browser: () => host, concurrency: 4 })).result.rows.length;
    } finally {
      await fetcher.close();
    }
    return { trial, run: ours(site.hits.keys()), trialRows, runRows };
  }

  it('an eval field: both run in the browser with images loaded (the trial used to load none)', async () => {
    const r = await bothWays('eval', `
target: { url: "${site.url}/eval/list/1", engine: auto }
extract:
  container: li.item
  fields:
    - { name: title, selector: a }
    - { name: width, type: eval, script: "return el.querySelector('img').complete" }
pagination: { type: click, selector: a.next, max_pages: 2 }
`);
    assert.equal(r.runRows, 6);
    assert.equal(r.trialRows, r.runRows);
    // The same pages; images loaded by both (which of the last page's images were asked for before its page closed
    // is a race on a busy machine, so the image lists are not compared).
    const pagesOf = (paths: string[]) => paths.filter((p) => !p.includes('/img/'));
    assert.deepEqual(pagesOf(r.run), ['/eval/list/1', '/eval/list/2']);
    assert.deepEqual(pagesOf(r.trial), pagesOf(r.run));
    assert.ok(r.run.includes('/eval/img/1-0.gif'), `the run loads images: ${r.run.join(' ')}`);
    assert.ok(r.trial.includes('/eval/img/1-0.gif'), `the trial loads images: ${r.trial.join(' ')}`);
  });

  it('a lightweight config: both fetch the same pages over HTTP and load no image', async () => {
    const r = await bothWays('light', `
target: { url: "${site.url}/light/list/1", engine: auto }
extract:
  container: li.item
  fields:
    - { name: title, selector: a }
    - { name: link, selector: a, type: attribute, attribute: href }
pagination: { type: click, selector: a.next, max_pages: 2 }
`);
    assert.deepEqual(r.run, ['/light/list/1', '/light/list/2']);
    assert.deepEqual(r.trial, r.run);
    assert.equal(r.trialRows, 6);
    assert.equal(r.runRows, 6);
  });

  it('a config that says lightweight but needs a browser is refused the same way by both, before any page loads', async () => {
    const config = parseConfig(`
target: { url: "${site.url}/refused/list/1", engine: lightweight }
actions:
  - { type: click, selector: a.next }
extract:
  container: li.item
  fields:
    - { name: title, selector: a }
`);
    site.hits.clear();
    const bench = new Workbench({ outbound: ALLOW, browser: () => host });
    try {
      await rejectsWithCode(bench.trial(config), 'browser_required');
    } finally {
      await bench.close();
    }
    const fetcher = new Fetcher(new OutboundGuard(ALLOW), { perHostConcurrency: 4 });
    try {
      await rejectsWithCode(runConfig(config, { fetcher, browser: () => host }), 'browser_required');
    } finally {
      await fetcher.close();
    }
    const refusedHits = [...site.hits.keys()].filter((p) => p.startsWith('/refused/'));
    assert.deepEqual(refusedHits, []);
  });

  it('without a browser at hand, a config that needs one fails with browser_required', async () => {
    const fetcher = new Fetcher(new OutboundGuard(ALLOW), { perHostConcurrency: 4 });
    try {
      await rejectsWithCode(runConfig(parseConfig(`
target: { url: "${site.url}/refused/list/1", engine: heavy }
extract: { container: li.item, fields: [{ name: title, selector: a }] }
`), { fetcher }), 'browser_required', /none is available/);
    } finally {
      await fetcher.close();
    }
  });

  it('reports the engine chosen with each progress call', async () => {
    const fetcher = new Fetcher(new OutboundGuard(ALLOW), { perHostConcurrency: 4 });
    const seen: string[] = [];
    try {
      const { choice } = await runConfig(parseConfig(`
target: { url: "${site.url}/light/list/1" }
extract: { container: li.item, fields: [{ name: title, selector: a }] }
`), { fetcher, onProgress: (_p, c) => seen.push(c.engine) });
      assert.equal(choice.engine, 'lightweight');
      assert.ok(seen.length > 0 && seen.every((e) => e === 'lightweight'), seen.join(','));
    } finally {
      await fetcher.close();
    }
  });
});
