/**
 * Result exports made off the thread that answers HTTP (issue 37; core/exports.ts, adapters/local/export-threads.ts),
 * over real HTTP on a 60,000-row job (one 4.6 MB page): the files' bytes are the ones `exportRows` makes (XLSX up to
 * its zip entries' times), a third export of one account at once is 429 `rate_limited` (`reason: exports`), and
 * another account's `GET /me/` is answered while two XLSX exports of the job are made (made on the HTTP thread, each
 * held it about 4 s).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportRows, type ExportFormat } from '../../lambdas/export/rows-export.ts';
import { MAX_EXPORTS_AT_ONCE } from '../../lambdas/core/exports.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';
import { startLatencyProbe } from '../helpers/latency-probe.ts';
import { withoutZipTimes } from '../helpers/zip-times.ts';

const ROWS = 60_000;

/** One page of {@link ROWS} records (about 4.6 MB): text with quotes and commas, a number, a link, formula-like text. */
function bigPage(): string {
  const items: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    items.push(`<li class="r"><span class="t">Row ${i}, "quoted" — ${i % 7 === 0 ? '=SUM(A1)' : 'plain'}</span><b>${(i * 1.25).toFixed(2)}</b><a href="/item/${i}">more</a></li>`);
  }
  return `<!doctype html><html><head><title>Rows</title></head><body><ul>${items.join('')}</ul></body></html>`;
}

describe('result exports off the HTTP thread (60,000 rows)', () => {
  let site: http.Server;
  let svc: TestService;
  let exporter: string;
  let other: string;
  let jobId: string;
  let rows: Array<Record<string, unknown>>;

  const file = async (format: ExportFormat, extra = '', key = exporter) => {
    const res = await fetch(`${svc.url}/api/v1/jobs/${jobId}/results/?format=${format}${extra}`, { headers: { authorization: `Bearer ${key}` } });
    return { res, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  before(async () => {
    const page = Buffer.from(bigPage());
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': page.length }).end(page));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    svc = await startService();
    exporter = (await createAccount(svc.dataDir, { plan: 'pro' })).api_key;
    other = (await createAccount(svc.dataDir, { plan: 'pro' })).api_key;
    const api = client(svc.url, exporter);
    const yaml = `target: { url: "http://127.0.0.1:${(site.address() as AddressInfo).port}/rows/" }
extract:
  container: li.r
  fields:
    - { name: text, selector: span.t }
    - { name: price, selector: b, transform: [to_number] }
    - { name: link, selector: a, type: attribute, attribute: href }
`;
    const run = await api.post('/api/v1/run/', { yaml_content: yaml });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    jobId = run.body.id;
    const { job } = await api.waitForJob(jobId, 180_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.results.row_count, ROWS);
    const whole = await api.get(`/api/v1/jobs/${jobId}/results/`);
    rows = whole.body[0].data;
    assert.equal(rows.length, ROWS);
  });
  after(async () => {
    await svc?.stop();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
  });

  it('each format answers the bytes exportRows makes (XLSX up to its zip entries\' times), with the same headers as before', async () => {
    for (const [format, extra] of [['json', ''], ['csv', ''], ['csv', '&raw=1'], ['xlsx', '']] as const) {
      const { res, bytes } = await file(format, extra);
      assert.equal(res.status, 200, `${format}${extra}: ${bytes.subarray(0, 300).toString()}`);
      const want = Buffer.from((await exportRows(rows, format, { raw: extra === '&raw=1' })).body);
      if (format === 'xlsx') assert.ok(withoutZipTimes(bytes).equals(withoutZipTimes(want)), `xlsx: ${bytes.length} bytes against ${want.length}`);
      else assert.ok(bytes.equals(want), `${format}${extra}: ${bytes.length} bytes against ${want.length}`);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      if (format === 'json') {
        assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
        assert.equal(res.headers.get('content-disposition'), null);
      } else {
        assert.equal(res.headers.get('content-type'), format === 'csv' ? 'text/csv; charset=utf-8' : 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
        assert.equal(res.headers.get('content-disposition'), `attachment; filename="${jobId}.${format}"`);
      }
    }
  });

  it(`a third export of one account at once is 429 rate_limited (reason exports), the other ${MAX_EXPORTS_AT_ONCE} are made`, async () => {
    const answers = await Promise.all([file('xlsx'), file('xlsx'), file('xlsx')]);
    const refused = answers.filter((a) => a.res.status === 429);
    assert.equal(refused.length, 1, `statuses ${answers.map((a) => a.res.status).join(', ')}`);
    const body = JSON.parse(refused[0]!.bytes.toString());
    assert.equal(body.code, 'rate_limited');
    assert.deepEqual(body.details, [{ limit: MAX_EXPORTS_AT_ONCE, window: 'at once', retry_after_seconds: 5, reason: 'exports' }]);
    assert.equal(refused[0]!.res.headers.get('retry-after'), '5');
    for (const a of answers.filter((x) => x.res.status !== 429)) assert.equal(a.res.status, 200);
    // Their places are given back once sent: the next export is made.
    assert.equal((await file('csv')).res.status, 200);
  });

  it('another account\'s GET /me/ is answered while two XLSX exports of the job are made', async () => {
    const probe = await startLatencyProbe(`${svc.url}/api/v1/me/`, other);
    let seen;
    try {
      const answers = await Promise.all([file('xlsx'), file('xlsx')]);
      for (const a of answers) assert.equal(a.res.status, 200);
    } finally {
      seen = await probe.stop();
    }
    assert.deepEqual(seen.failures, []);
    assert.ok(seen.ms.length > 10, `${seen.ms.length} polls`);
    // Made on the HTTP thread (3513992^), the two exports held /me/ for 2,060 ms at load 11 (3,746 at load 8), under the 3 s
    // this bound once was, so it passed before the fix too; off it, the slowest /me/ took 24 ms at load 10.6. 1 s
    // fails the HTTP thread's exports and leaves room for a machine running a second test suite.
    const max = Math.max(...seen.ms);
    assert.ok(max < 1_000, `the slowest GET /me/ took ${max.toFixed(0)} ms`);
  });
});
