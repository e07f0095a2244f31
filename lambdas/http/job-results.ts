/**
 * GET /api/v1/jobs/{id}/results/ (docs/spec.md): `[{data, row_count}]` with every row of a completed job;
 * `[]` for a failed job; 409 `job_not_finished` while it is pending or running (docs/api.md).
 * `?format=json|csv|xlsx` answers the rows as a file instead (docs/exports.md): `json` is the pretty-printed
 * array of rows, `csv` and `xlsx` are attachments named `<job id>.<ext>`; an unknown format is a 400. Files are made
 * off the thread that answers HTTP where the service can, at most 2 of one account at once (core/exports.ts).
 */
import { CodedError } from '../errors.ts';
import { rowsJson } from '../core/jobs.ts';
import { exportJobRows, readWhole } from '../core/exports.ts';
import { cellOptionProblems, EXPORT_FORMATS, exportFileType, isExportFormat, type CellOptionProblem, type CellOptions, type ExportFormat, type ListStyle } from '../export/rows-export.ts';
import { apiHandler, binary, json, jsonText, uuidParam, type ApiResult } from './middleware.ts';
import { responseStreamsEnabled, streamedResult } from './response-streams.ts';
import { route } from '../routes.ts';

/**
 * `?raw=`: `1` writes CSV cells exactly as scraped (no `'` before formula-like text), `0` or absent is the default.
 * @throws CodedError `invalid_request` for any other value.
 */
function rawParam(value: string | undefined): boolean {
  if (value === undefined || value === '0') return false;
  if (value === '1') return true;
  throw new CodedError('invalid_request', `raw must be 1 or 0; got "${value.length > 20 ? `${value.slice(0, 20)}…` : value}"`, [{ path: 'raw', message: 'must be 1 or 0' }]);
}

/**
 * `?lists=json|join` and `?list_separator=` (docs/exports.md, "Lists"): how CSV and XLSX write a list; with `raw`, the
 * cell options of the export.
 * @throws CodedError `invalid_request` with a detail per parameter at fault: a style not `json` or `join`, a separator
 *   without `lists=join`, one of no or more than 10 characters.
 */
function cellParams(query: Record<string, string | undefined> | null | undefined, raw: boolean): CellOptions {
  const lists = query?.lists;
  const listSeparator = query?.list_separator;
  const cells: CellOptions = { raw, ...(lists !== undefined ? { lists: lists as ListStyle } : {}), ...(listSeparator !== undefined ? { listSeparator } : {}) };
  const problems = cellOptionProblems(cells);
  if (!problems.length) return cells;
  const shown = (v: string) => JSON.stringify(v.length > 20 ? `${v.slice(0, 20)}…` : v);
  const given = (p: CellOptionProblem) => (p.path === 'lists' ? `; got ${shown(lists!)}` : p.message.startsWith('must') ? `; got ${shown(listSeparator!)}` : '');
  throw new CodedError('invalid_request', problems.map((p) => `${p.path} ${p.message}${given(p)}`).join('; '), problems);
}

export const handler = apiHandler(route('GET', '/api/v1/jobs/{id}/results/'), async (event, { svc, account }) => {
  const id = uuidParam(event, 'Job');
  const format = event.queryStringParameters?.format;
  if (format !== undefined && !isExportFormat(format)) {
    throw new CodedError('invalid_request', `format must be one of ${EXPORT_FORMATS.join(', ')}; got "${format}"`, [{ path: 'format', message: `must be one of ${EXPORT_FORMATS.join(', ')}` }]);
  }
  const raw = rawParam(event.queryStringParameters?.raw);
  const cells = cellParams(event.queryStringParameters, raw);
  const job = await svc.store.getJob(account.id, id);
  if (!job) throw new CodedError('not_found', `Job ${id} not found`);
  if (job.status === 'failed' && format === undefined) return json(200, []);
  if (job.status !== 'completed' && job.status !== 'failed') {
    throw new CodedError('job_not_finished', `Job ${id} is ${job.status} (${job.progress}%); poll /api/v1/jobs/${id}/status/ until it is completed`, [{ status: job.status, progress: job.progress }]);
  }
  if (format === undefined) {
    // The stored rows are already JSON: wrapped, not parsed and serialized again.
    return { ...json(200, []), body: `[{"data":${(await rowsJson(svc, job)) ?? '[]'},"row_count":${job.row_count}}]` };
  }
  return fileAnswer(id, format, await exportJobRows(svc, account, job, format, cells));
});

/**
 * The answer of an export (docs/exports.md): JSON as a JSON text, CSV and XLSX as attachments; written as the file is
 * made where the host streams (the local service), else whole (API Gateway: base64 for the files).
 */
async function fileAnswer(id: string, format: ExportFormat, file: ReadableStream<Uint8Array>): Promise<ApiResult> {
  const { contentType, extension } = exportFileType(format);
  const answer = format === 'json' ? jsonText(200, '') : binary(200, Buffer.alloc(0), contentType, { 'Content-Disposition': `attachment; filename="${id}.${extension}"` });
  if (responseStreamsEnabled()) return streamedResult({ statusCode: 200, headers: answer.headers, body: '' }, file);
  const bytes = await readWhole(file);
  return format === 'json' ? jsonText(200, bytes.toString('utf8')) : { ...answer, body: bytes.toString('base64') };
}
