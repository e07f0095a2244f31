// The practical ceiling for GET /api/v1/jobs/{id}/status/ in Node, for `npm run bench -- api` (part minimal): a bare
// node:http server that reads the job's row from the service's own SQLite database (node:sqlite, read-only, one
// prepared `SELECT * FROM jobs WHERE id = ? AND account_id = ?` per request, as the service's store does) and answers
// the same JSON as the service: the job's fields, `results` with the preview rows (the preview blob the service wrote,
// read once and kept, as the service keeps it) and `yaml_config`. Per request it checks the Authorization header
// against the one key it was given (a string comparison: no key look-up, no account read) and matches the path with
// one regular expression. Nothing else: no routing table, no middleware, no logging.
//
//   node bench/contenders/status-minimal.ts --db DATA_DIR/scrape-ai.db --blobs DATA_DIR/blobs --account ID --key sai_…
//
// Prints `listening on http://127.0.0.1:PORT` once it listens (port 0: any free one); stops on SIGTERM.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    blobs: { type: 'string' },
    account: { type: 'string' },
    key: { type: 'string' },
    port: { type: 'string', default: '0' },
  },
});
if (!values.db || !values.blobs || !values.account || !values.key) throw new Error('usage: status-minimal.ts --db FILE --blobs DIR --account ID --key KEY [--port N]');

const db = new DatabaseSync(values.db, { readOnly: true, timeout: 10_000 });
const byId = db.prepare('SELECT * FROM jobs WHERE id = ? AND account_id = ?');
const accountId = Number(values.account);
const expected = `Bearer ${values.key}`;
const STATUS_PATH = /^\/api\/v1\/jobs\/([0-9a-f-]{36})\/status\/$/;
/** Preview texts by blob key, read once (the service keeps them in memory too). */
const previews = new Map<string, string>();

function preview(resultsKey: string | null): string {
  if (!resultsKey) return '[]';
  const key = resultsKey.replace(/\.json$/, '.preview.json');
  let text = previews.get(key);
  if (text === undefined) {
    text = readFileSync(join(values.blobs!, key), 'utf8');
    previews.set(key, text);
  }
  return text;
}

type Row = Record<string, string | number | null>;

function statusJson(r: Row): string {
  const job: Record<string, unknown> = {
    id: r.id, status: r.status, progress: r.progress, job_type: r.job_type, target_url: r.target_url, status_message: r.status_message,
    items_found: r.items_found, pages_scraped: r.pages_scraped, api_discovered: r.api_discovered === 1, created_at: r.created_at,
    // What the service's status adds beyond the spec (issue 40): the config's id and name, the warnings' count.
    config_id: r.config_id, config_name: r.config_name ?? null, warning_count: r.warnings ? (JSON.parse(r.warnings as string) as unknown[]).length : 0,
  };
  if (r.completed_at) job.completed_at = r.completed_at;
  const head = JSON.stringify(job);
  const rows = r.status === 'completed' ? preview(r.results_key as string | null) : '[]';
  const rowCount = r.status === 'completed' ? r.row_count : 0;
  return `${head.slice(0, -1)},"results":{"data":${rows},"row_count":${rowCount}},"yaml_config":${JSON.stringify({ id: r.config_id, yaml_content: r.yaml_content })},"warnings":${r.warnings ?? '[]'}}`;
}

function send(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const m = STATUS_PATH.exec(req.url ?? '');
  if (!m || req.method !== 'GET') return send(res, 404, '{"error":"not found","code":"not_found","details":[]}');
  if (req.headers.authorization !== expected) return send(res, 401, '{"error":"unauthorized","code":"unauthorized","details":[]}');
  const row = byId.get(m[1]!, accountId) as Row | undefined;
  if (!row) return send(res, 404, '{"error":"not found","code":"not_found","details":[]}');
  send(res, 200, statusJson(row));
});
server.keepAliveTimeout = 5000;
server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as { port: number }).port}`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  db.close();
});
