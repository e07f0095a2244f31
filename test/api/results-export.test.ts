/**
 * GET /api/v1/jobs/{id}/results/?format= over real HTTP (docs/exports.md): a run of the quotes fixture site,
 * then its rows without a format (docs/spec.md's shape), as JSON, CSV (read back with its BOM) and XLSX (read back
 * with read-excel-file); an unknown format is a 400 and an unfinished job a 409. A page whose values a spreadsheet
 * would run as formulas: CSV cells get a `'` in front by default and are kept as scraped with `raw=1`; XLSX keeps
 * them as text.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import readXlsxFile from 'read-excel-file/node';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

/** A minimal RFC 4180 reader (quoted fields, doubled quotes, CRLF records). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { record.push(field); field = ''; }
    else if (ch === '\r' && text[i + 1] === '\n') { record.push(field); records.push(record); record = []; field = ''; i++; }
    else field += ch;
  }
  return records;
}

describe('results exports over HTTP', () => {
  let site: FixtureSite;
  let svc: TestService;
  let key: string;
  let jobId: string;
  const expected = allQuotes().slice(0, 10);

  const raw = (path: string) => fetch(svc.url + path, { headers: { authorization: `Bearer ${key}` } });

  before(async () => {
    site = await startFixtureSite();
    svc = await startService();
    key = (await createAccount(svc.dataDir, { email: 'exporter@example.com', plan: 'pro' })).api_key;
    const api = client(svc.url, key);
    const yaml = `target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
    - { name: tags, selector: a.tag, multiple: true }
`;
    const run = await api.post('/api/v1/run/', { yaml_content: yaml });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    jobId = run.body.id;
    const { job } = await api.waitForJob(jobId);
    assert.equal(job.status, 'completed', job.status_message);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('without a format answers docs/spec.md shape [{data, row_count}]', async () => {
    const r = await client(svc.url, key).get(`/api/v1/jobs/${jobId}/results/`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(r.headers.get('content-disposition'), null);
    assert.deepEqual(r.body, [{ data: expected.map((q) => ({ text: q.text, author: q.author, tags: q.tags })), row_count: 10 }]);
  });

  it('format=json answers the rows as a pretty-printed array', async () => {
    const res = await raw(`/api/v1/jobs/${jobId}/results/?format=json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    const text = await res.text();
    assert.ok(text.startsWith('[\n  {\n    "text": '), text.slice(0, 40));
    assert.deepEqual(JSON.parse(text), expected.map((q) => ({ text: q.text, author: q.author, tags: q.tags })));
  });

  it('format=csv answers a CSV attachment with a BOM, the header in field order and every row', async () => {
    const res = await raw(`/api/v1/jobs/${jobId}/results/?format=csv`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(res.headers.get('content-disposition'), `attachment; filename="${jobId}.csv"`);
    const body = Buffer.from(await res.arrayBuffer());
    assert.deepEqual([...body.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    const records = parseCsv(body.subarray(3).toString('utf8'));
    assert.deepEqual(records[0], ['text', 'author', 'tags']);
    assert.equal(records.length, 1 + 10);
    const withComma = expected.findIndex((q) => q.text.includes(','));
    assert.ok(withComma >= 0, 'the first page has a quote with a comma');
    records.slice(1).forEach((r, i) => assert.deepEqual(r, [expected[i]!.text, expected[i]!.author, JSON.stringify(expected[i]!.tags)]));
  });

  it('format=xlsx answers a workbook that reads back with the same rows, typed', async () => {
    const res = await raw(`/api/v1/jobs/${jobId}/results/?format=xlsx`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    assert.equal(res.headers.get('content-disposition'), `attachment; filename="${jobId}.xlsx"`);
    const sheets = await readXlsxFile(Buffer.from(await res.arrayBuffer()), { trim: false });
    assert.equal(sheets.length, 1);
    assert.deepEqual(sheets[0]!.data, [['text', 'author', 'tags'], ...expected.map((q) => [q.text, q.author, JSON.stringify(q.tags)])]);
  });

  it('lists=join joins a list\'s items in CSV and XLSX ("; " unless list_separator says otherwise); JSON text is the default; bad values are 400s', async () => {
    const csvOf = async (query: string) => {
      const res = await raw(`/api/v1/jobs/${jobId}/results/?${query}`);
      assert.equal(res.status, 200, query);
      return parseCsv(Buffer.from(await res.arrayBuffer()).subarray(3).toString('utf8'));
    };
    const joined = await csvOf('format=csv&lists=join');
    joined.slice(1).forEach((r, i) => assert.deepEqual(r, [expected[i]!.text, expected[i]!.author, expected[i]!.tags.join('; ')]));
    const piped = await csvOf(`format=csv&lists=join&list_separator=${encodeURIComponent(' | ')}`);
    piped.slice(1).forEach((r, i) => assert.equal(r[2], expected[i]!.tags.join(' | ')));
    const asJson = await csvOf('format=csv&lists=json');
    asJson.slice(1).forEach((r, i) => assert.equal(r[2], JSON.stringify(expected[i]!.tags)));
    const xlsx = await raw(`/api/v1/jobs/${jobId}/results/?format=xlsx&lists=join&list_separator=,`);
    const sheets = await readXlsxFile(Buffer.from(await xlsx.arrayBuffer()), { trim: false });
    assert.deepEqual(sheets[0]!.data.slice(1), expected.map((q) => [q.text, q.author, q.tags.join(',')]));
    const json = await raw(`/api/v1/jobs/${jobId}/results/?format=json&lists=join`);
    assert.deepEqual(JSON.parse(await json.text()), expected.map((q) => ({ text: q.text, author: q.author, tags: q.tags })), 'JSON keeps lists');
    for (const [query, path] of [['format=csv&lists=comma', 'lists'], ['format=csv&list_separator=|', 'list_separator'], ['format=csv&lists=join&list_separator=', 'list_separator'], [`format=csv&lists=join&list_separator=${'x'.repeat(11)}`, 'list_separator']] as const) {
      const r = await client(svc.url, key).get(`/api/v1/jobs/${jobId}/results/?${query}`);
      assert.equal(r.status, 400, query);
      assert.equal(r.body.code, 'invalid_request');
      assert.equal(r.body.details[0].path, path, query);
    }
  });

  it('an unknown format is a 400 invalid_request naming the parameter', async () => {
    for (const format of ['pdf', 'CSV', '']) {
      const r = await client(svc.url, key).get(`/api/v1/jobs/${jobId}/results/?format=${format}`);
      assert.equal(r.status, 400, format);
      assert.equal(r.body.code, 'invalid_request');
      assert.equal(r.body.details[0].path, 'format');
    }
  });

  it("formula-like values: CSV cells get a ' in front, raw=1 keeps them as scraped, XLSX keeps them as text", async () => {
    const values = ['=HYPERLINK("http://evil.example","Click")', "=cmd|' /C calc'!A0", '+33 1 23 45 67 89', '-2+3', '@SUM(A1:A2)', '-5', 'plain'];
    const page = `<!doctype html><html><body><ul>${values.map((v) => `<li class="v"><span>${v.replaceAll("&", "&amp;").replaceAll("<", "&lt;")}</span></li>`).join('')}</ul></body></html>`;
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const api = client(svc.url, key);
      const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const run = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${target}" }\nextract:\n  container: li.v\n  fields:\n    - { name: "=value", selector: span }\n` });
      assert.equal(run.status, 202, JSON.stringify(run.body));
      const { job } = await api.waitForJob(run.body.id);
      assert.equal(job.status, 'completed', job.status_message);
      const csvOf = async (query: string) => {
        const res = await raw(`/api/v1/jobs/${run.body.id}/results/?format=csv${query}`);
        assert.equal(res.status, 200, query);
        return parseCsv(Buffer.from(await res.arrayBuffer()).subarray(3).toString('utf8'));
      };
      const quoted = (v: string) => (/^[=+@-]/.test(v) && v !== '-5' ? `'${v}` : v);
      assert.deepEqual(await csvOf(''), [["'=value"], ...values.map((v) => [quoted(v)])], 'prefixed by default');
      assert.deepEqual(await csvOf('&raw=0'), await csvOf(''), 'raw=0 is the default');
      assert.deepEqual(await csvOf('&raw=1'), [['=value'], ...values.map((v) => [v])], 'raw=1: as scraped');
      const xlsx = await raw(`/api/v1/jobs/${run.body.id}/results/?format=xlsx`);
      const sheets = await readXlsxFile(Buffer.from(await xlsx.arrayBuffer()), { trim: false });
      assert.deepEqual(sheets[0]!.data, [['=value'], ...values.map((v) => [v])], 'XLSX: text cells, unchanged');
      for (const bad of ['yes', 'true', '2', '']) {
        const r = await api.get(`/api/v1/jobs/${run.body.id}/results/?format=csv&raw=${bad}`);
        assert.equal(r.status, 400, bad);
        assert.equal(r.body.code, 'invalid_request');
        assert.deepEqual(r.body.details, [{ path: 'raw', message: 'must be 1 or 0' }]);
      }
    } finally {
      await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
    }
  });

  it('an unfinished job is the 409 job_not_finished, with a format too', async () => {
    const api = client(svc.url, key);
    const run = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/slow/1500/quotes/" }\nextract: { container: div.quote, fields: [{ name: text, selector: span.text }] }\n` });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    for (const q of ['?format=csv', '?format=xlsx', '?format=json', '']) {
      const r = await api.get(`/api/v1/jobs/${run.body.id}/results/${q}`);
      assert.equal(r.status, 409, q);
      assert.equal(r.body.code, 'job_not_finished');
    }
    await api.waitForJob(run.body.id);
  });

  it('an unknown job is a 404 whatever the format', async () => {
    const r = await client(svc.url, key).get('/api/v1/jobs/00000000-0000-4000-8000-000000000000/results/?format=csv');
    assert.equal(r.status, 404);
    assert.equal(r.body.code, 'not_found');
  });
});
