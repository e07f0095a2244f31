/**
 * The crawler's scheduling (lambdas/engine/crawl/scheduler.ts) with stand-in handlers: listing requests before
 * detail pages, detail pages only beyond the budget the listings hold back, detail pages dropped with the page-limit
 * warning once the budget is spent, `concurrency` requests at once, the first failure failing the run at once (and
 * aborting the run's signal), the caller's abort, the user's stop, and the end callback.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestQueue, type CrawlRequest } from '../../lambdas/engine/request-queue.ts';
import { PageBudget } from '../../lambdas/engine/crawl/budget.ts';
import { Scheduler, type SchedulerHooks } from '../../lambdas/engine/crawl/scheduler.ts';
import { Warnings } from '../../lambdas/engine/crawl/warnings.ts';

const tick = () => new Promise<void>((r) => setImmediate(r));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}

function setup(o: { maxPages?: number; concurrency?: number; signal?: AbortSignal; stopSignal?: AbortSignal } = {}) {
  const queue = new RequestQueue();
  const budget = new PageBudget(o.maxPages ?? 100);
  const warnings = new Warnings();
  const scheduler = new Scheduler({ concurrency: o.concurrency ?? 2, queue, budget, warnings, ...(o.signal ? { signal: o.signal } : {}), ...(o.stopSignal ? { stopSignal: o.stopSignal } : {}) });
  const listing = (url: string) => queue.add({ label: 'listing', url, uniqueKey: url }, 0);
  const detail = (url: string) => queue.add({ label: 'detail', url, uniqueKey: `detail:${url}` }, 1);
  return { queue, budget, warnings, scheduler, listing, detail };
}

function hooks(over: Partial<SchedulerHooks> & Pick<SchedulerHooks, 'handle'>): SchedulerHooks {
  return { listingsPending: () => false, reservedForListings: () => 0, dropDetail: () => undefined, ...over };
}

describe('crawl scheduler', () => {
  it('takes listing requests before detail pages, in queue order', async () => {
    const s = setup({ concurrency: 1 });
    s.detail('d1');
    s.listing('l1');
    s.detail('d2');
    s.listing('l2');
    const order: string[] = [];
    await s.scheduler.run(hooks({ handle: async (r) => { order.push(r.url!); } }));
    assert.deepEqual(order, ['l1', 'l2', 'd1', 'd2']);
    assert.equal(s.budget.started, 2, 'detail pages take their slot when taken; listings take their own');
  });

  it('runs at most `concurrency` requests at once, and each worker keeps its index', async () => {
    const s = setup({ concurrency: 3 });
    for (let i = 0; i < 10; i++) s.detail(`d${i}`);
    let inFlight = 0;
    let most = 0;
    const workers = new Set<number>();
    await s.scheduler.run(hooks({
      handle: async (_r, w) => {
        workers.add(w);
        most = Math.max(most, ++inFlight);
        await tick();
        inFlight--;
      },
    }));
    assert.equal(most, 3);
    assert.deepEqual([...workers].sort(), [0, 1, 2]);
  });

  it('once the budget is spent and no listing page may come, the detail pages left are dropped with one warning', async () => {
    const s = setup({ maxPages: 2, concurrency: 1 });
    for (const d of ['d1', 'd2', 'd3', 'd4']) s.detail(d);
    const handled: string[] = [];
    const dropped: string[] = [];
    await s.scheduler.run(hooks({ handle: async (r) => { handled.push(r.url!); }, dropDetail: (r) => dropped.push(r.url!) }));
    assert.deepEqual(handled, ['d1', 'd2']);
    assert.deepEqual(dropped, ['d3', 'd4']);
    assert.deepEqual(s.warnings.list(), ['stopped at the page limit of 2 pages per run']);
  });

  it('a detail page waits while the listings hold back the rest of the budget, and starts once they free it', async () => {
    const s = setup({ maxPages: 3, concurrency: 2 });
    for (const d of ['d1', 'd2', 'd3']) s.detail(d);
    let pending = true;
    const started: string[] = [];
    const gate = deferred();
    const run = s.scheduler.run(hooks({
      listingsPending: () => pending,
      reservedForListings: () => (pending ? 2 : 0),
      handle: async (r) => {
        started.push(r.url!);
        if (r.url === 'd1') await gate.promise;
      },
    }));
    await tick();
    assert.deepEqual(started, ['d1'], 'with 2 of 3 slots held back, one detail page at a time');
    pending = false;
    gate.resolve();
    await run;
    assert.deepEqual(started, ['d1', 'd2', 'd3']);
    assert.deepEqual(s.warnings.list(), []);
  });

  it('a listing request is taken even when the budget is spent: its handler decides (and ends the listing)', async () => {
    const s = setup({ maxPages: 0 });
    s.listing('l1');
    const seen: string[] = [];
    await s.scheduler.run(hooks({ handle: async (r) => { seen.push(`${r.url} ${s.budget.tryStart()}`); } }));
    assert.deepEqual(seen, ['l1 false']);
  });

  it('the first failure rejects the run at once, aborts its signal and stops the workers; the end callback still comes', async () => {
    const s = setup({ concurrency: 2 });
    for (let i = 0; i < 6; i++) s.detail(`d${i}`);
    const boom = new Error('boom');
    const slow = deferred();
    const handled: string[] = [];
    let settled = false;
    const run = s.scheduler.run(hooks({
      handle: async (r: CrawlRequest) => {
        handled.push(r.url!);
        if (r.url === 'd0') await slow.promise; // still in flight when the run fails
        else throw boom;
      },
      settled: () => { settled = true; },
    }));
    await assert.rejects(run, (e) => e === boom);
    assert.equal(s.scheduler.signal.aborted, true);
    assert.equal(s.scheduler.signal.reason, boom);
    assert.deepEqual(handled, ['d0', 'd1']);
    assert.equal(settled, false, 'd0 is still in flight');
    slow.resolve();
    await tick();
    assert.equal(settled, true);
    assert.deepEqual(handled, ['d0', 'd1'], 'no request starts after the failure');
  });

  it("the caller's abort rejects the run with its reason", async () => {
    const caller = new AbortController();
    const s = setup({ signal: caller.signal });
    s.detail('d1');
    const run = s.scheduler.run(hooks({ handle: (_r) => new Promise<void>(() => undefined) }));
    await tick();
    caller.abort(new Error('cancelled'));
    await assert.rejects(run, /cancelled/);
    assert.equal(s.scheduler.signal.aborted, true);
  });

  it("the user's stop: pages in flight finish, the detail pages left are dropped, the warning counts the pages started", async () => {
    const stop = new AbortController();
    const s = setup({ concurrency: 1, stopSignal: stop.signal });
    for (const d of ['d1', 'd2', 'd3']) s.detail(d);
    const handled: string[] = [];
    const dropped: string[] = [];
    await s.scheduler.run(hooks({
      handle: async (r) => {
        handled.push(r.url!);
        stop.abort();
        await tick();
      },
      dropDetail: (r) => dropped.push(r.url!),
    }));
    assert.deepEqual(handled, ['d1']);
    assert.deepEqual(dropped, ['d2', 'd3']);
    assert.deepEqual(s.warnings.list(), ['stopped by the user after 1 page(s)']);
  });

  it('a stop signal already aborted lets no detail page start', async () => {
    const stop = new AbortController();
    stop.abort();
    const s = setup({ stopSignal: stop.signal });
    s.detail('d1');
    const handled: string[] = [];
    await s.scheduler.run(hooks({ handle: async (r) => { handled.push(r.url!); } }));
    assert.deepEqual(handled, []);
    assert.deepEqual(s.warnings.list(), ['stopped by the user after 0 page(s)']);
  });

  it('wake() lets waiting workers take requests added meanwhile', async () => {
    const s = setup({ concurrency: 2 });
    s.listing('l1');
    const order: string[] = [];
    await s.scheduler.run(hooks({
      handle: async (r) => {
        order.push(r.url!);
        if (r.url === 'l1') {
          s.detail('d1');
          s.detail('d2');
          s.scheduler.wake();
          await tick();
          await tick();
          order.push('l1 done');
        }
      },
    }));
    assert.deepEqual(order, ['l1', 'd1', 'd2', 'l1 done'], 'the detail pages ran while the listing was in flight');
  });
});
