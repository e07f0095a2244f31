/**
 * Fair scheduling across accounts over real HTTP (docs/plans-and-metering.md, "Fair scheduling"): the local
 * service with 2 job workers; account A queues more jobs than there are workers, each on a loopback page that
 * does not answer until the test lets it; account B's one-page job completes within 5 s of being queued. Before
 * fair scheduling A's jobs held both workers and B's job stayed `pending` as long as A's pages took.
 */
import { describe, it, before, after } from 'node:test';
import { readdirSync, readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { BACKGROUND_NICE, HTTP_THREAD_SLICE_NS, threadSlice } from '../../lambdas/thread-priority.ts';
import { waitUntil } from '../helpers/until.ts';

/** A loopback site: /slow/<n> answers only once the gate opens (at most 60 s); /fast/ at once. */
async function startGatedSite(): Promise<{ url: string; open(): void; slowRequests(): number; close(): Promise<void> }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  let slow = 0;
  const page = (label: string) => `<!doctype html><html><body><ul><li><span>${label} one</span></li><li><span>${label} two</span></li></ul></body></html>`;
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/slow/')) {
      slow++;
      const timer = setTimeout(() => release(), 60_000);
      void gate.then(() => {
        clearTimeout(timer);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page('slow'));
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page('fast'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    open: () => release(),
    slowRequests: () => slow,
    close: () => new Promise<void>((resolve) => { release(); server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const config = (url: string) => `target: { url: "${url}", engine: lightweight }
extract:
  container: li
  fields:
    - { name: text, selector: span }
`;


describe('fair scheduling across accounts (2 job workers)', () => {
  let site: Awaited<ReturnType<typeof startGatedSite>>;
  let service: TestService;
  before(async () => {
    site = await startGatedSite();
    service = await startService({ SAI_WORKERS: '2' });
  });
  after(async () => {
    await site?.close();
    await service?.stop();
  });

  it("while account A has 6 jobs queued on pages that hang, account B's one-page job completes within 5 s", async () => {
    const [a, b] = await Promise.all([createAccount(service.dataDir, { plan: 'pro' }), createAccount(service.dataDir, { plan: 'pro' })]);
    const apiA = client(service.url, a.api_key);
    const apiB = client(service.url, b.api_key);
    const aJobs: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await apiA.post('/api/v1/run/', { yaml_content: config(`${site.url}/slow/${i}`) });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      aJobs.push(r.body.id);
    }
    // A's first job is on a worker, waiting for its page.
    await waitUntil(async () => site.slowRequests() >= 1, 20_000, "A's first page request");

    const queuedAt = Date.now();
    const r = await apiB.post('/api/v1/run/', { yaml_content: config(`${site.url}/fast/`) });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const { job } = await apiB.waitForJob(r.body.id, 30_000);
    const tookMs = Date.now() - queuedAt;
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.results.row_count, 2);
    assert.ok(tookMs < 5_000, `B's job took ${tookMs} ms from being queued to completed, with A's backlog in front of it`);

    // A holds one worker (a pro account on 2 workers may use all but one), the rest of its jobs wait their turn.
    const listed = (await apiA.get('/api/v1/jobs/?limit=10')).body.results as Array<{ id: string; status: string }>;
    const statuses = aJobs.map((id) => listed.find((j) => j.id === id)?.status);
    assert.equal(statuses.filter((s) => s === 'running').length, 1, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 'pending').length, 5, JSON.stringify(statuses));
    assert.equal(site.slowRequests(), 1, "A's other jobs never reached a worker");

    // Once its pages answer, every job of A completes, one after another, each exactly once.
    site.open();
    for (const id of aJobs) {
      const done = await apiA.waitForJob(id, 60_000);
      assert.equal(done.job.status, 'completed', done.job.status_message);
      assert.equal(done.job.results.row_count, 2);
    }
    assert.equal(site.slowRequests(), 6);
  });

  it('the thread that answers HTTP has the short time slice, and none of the service\'s other threads has it; the workers and V8\'s threads run at nice 10', () => {
    // lambdas/thread-priority.ts: a request that comes in runs before the background work that has been using the CPU.
    const pid = service.proc.pid!;
    assert.equal(threadSlice(pid), HTTP_THREAD_SLICE_NS);
    const others = readdirSync(`/proc/${pid}/task`).map(Number).filter((tid) => tid !== pid);
    assert.ok(others.length >= 4, `the workers' threads: ${others.length}`);
    const short = others.filter((tid) => threadSlice(tid) === HTTP_THREAD_SLICE_NS);
    assert.deepEqual(short, [], 'threads started after the slice was set keep the default');
    // Every thread but the HTTP thread (and libuv's pool, which serves it too) runs at nice 10: the workers and V8's.
    const comm = (tid: number) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    const niceOf = (tid: number) => Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const platform = others.filter((tid) => comm(tid) === 'V8Worker');
    assert.ok(platform.length >= 1, 'V8 platform threads');
    for (const tid of platform) assert.equal(niceOf(tid), BACKGROUND_NICE, `V8Worker ${tid}`);
    const workers = others.filter((tid) => /^(job|tool)-worker/.test(comm(tid)));
    assert.ok(workers.length >= 2, `job and tool workers: ${others.map(comm).join(', ')}`);
    for (const tid of workers) assert.equal(niceOf(tid), BACKGROUND_NICE, `${comm(tid)} ${tid}`);
  });
});
