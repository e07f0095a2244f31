/**
 * One job: its status, `status_message` and a live progress bar (`GET /api/v1/jobs/{id}/status/` every
 * second while it is unfinished; polling stops when it ends or the page is left), then, once completed, its
 * rows (`GET /api/v1/jobs/{id}/results/`: `[{data, row_count}]`, every row in one answer) as a table of 25
 * rows a page, columns in the config's field order (the key order of the rows as the API gives them), and
 * downloads of the server's exports (`?format=json|csv|xlsx`, docs/exports.md). A run of a saved config links to that
 * config's page; once completed, it also shows what changed since the config's previous run (components/JobChanges.tsx).
 * Each value is a {@link CellValue}: http(s) URLs as links, long values clamped with "Show all". A wide table scrolls
 * sideways in its box with the row number and the first field kept in view; a run's warnings are counted, their list
 * folded (issue 40).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorText, isFinished, request, requestBlob, saveBlob, type Config, type Job, type Row } from '../api.ts';
import { usePoll } from '../poll.ts';
import { CellValue, DateTime, ErrorAlert, hostOf, JobProgress, Status, StatusBadge, TableBox, Warnings } from '../components/ui.tsx';
import { JobChanges } from '../components/JobChanges.tsx';

/** Rows per page of the table. */
const PAGE_SIZE = 25;

/** The columns of `rows`: the first row's keys in order, then any key a later row adds, in order of appearance. */
export function columnsOf(rows: Row[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const k of Object.keys(row)) seen.add(k);
  return [...seen];
}

/** `quotes-2026-11-24`: the config's `name:` (from its YAML) made file-safe, else `job-<id8>`, and today's date. */
function fileBase(job: Job): string {
  const m = /^name:\s*["']?(.+?)["']?\s*$/m.exec(job.yaml_config?.yaml_content ?? '');
  const slug = (m?.[1] ?? '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
  return `${slug || `job-${job.id.slice(0, 8)}`}-${new Date().toISOString().slice(0, 10)}`;
}

const FORMATS = [
  { format: 'json', label: 'JSON' },
  { format: 'csv', label: 'CSV' },
  { format: 'xlsx', label: 'XLSX' },
] as const;

/**
 * The saved config a run job ran (`yaml_config.id`, docs/spec.md's job field), as a link to its page named by the
 * config's name (`GET /configs/{id}/`); a config deleted since is named by its id, without a link. A run of YAML
 * sent with the request has no saved config.
 */
function JobConfig({ configId }: { configId: string | null }) {
  const [name, setName] = useState<string | null>(null);
  const [gone, setGone] = useState(false);
  useEffect(() => {
    if (!configId) return;
    setName(null);
    setGone(false);
    request<Config>(`/configs/${configId}/`).then(
      (c) => setName(c.name),
      (err) => {
        if (err instanceof ApiError && err.status === 404) setGone(true);
      },
    );
  }, [configId]);
  if (!configId) return <span class="muted">none: the YAML was sent with the run</span>;
  if (gone) return <span>{`config ${configId.slice(0, 8)} (deleted since)`}</span>;
  return <a href={`#/configs/${configId}`}>{name ?? `config ${configId.slice(0, 8)}`}</a>;
}

/** The job page. */
export function JobPage({ id }: { id: string }) {
  const [job, setJob] = useState<Job | null>(null);
  const [rows, setRows] = useState<Row[] | null>(null);
  const [page, setPage] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [downloadStatus, setDownloadStatus] = useState('');
  /** The job does not exist (or is another account's): polling stops. */
  const [gone, setGone] = useState(false);

  usePoll(
    async () => {
      try {
        const next = await request<Job>(`/jobs/${id}/status/`);
        setJob(next);
        setError(null);
      } catch (err) {
        setError(errorText(err));
        if (err instanceof ApiError && err.status === 404) setGone(true);
        throw err;
      }
    },
    1000,
    !gone && (job === null || !isFinished(job.status)),
    [id],
  );

  const completed = job?.status === 'completed';
  useEffect(() => {
    if (!completed) return;
    request<{ data: Row[]; row_count: number }[]>(`/jobs/${id}/results/`).then(
      (entries) => setRows(entries.flatMap((e) => e.data)),
      (err) => setError(errorText(err)),
    );
  }, [id, completed]);

  const download = async (format: string) => {
    if (!job) return;
    setDownloadStatus(`Preparing the ${format.toUpperCase()} file…`);
    try {
      const blob = await requestBlob(`/jobs/${id}/results/`, { query: { format } });
      saveBlob(blob, `${fileBase(job)}.${format}`);
      setDownloadStatus(`Downloaded ${fileBase(job)}.${format}.`);
    } catch (err) {
      setDownloadStatus('');
      setError(errorText(err));
    }
  };

  const columns = rows ? columnsOf(rows) : [];
  const pages = rows ? Math.max(1, Math.ceil(rows.length / PAGE_SIZE)) : 1;
  const shown = rows ? rows.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE) : [];
  return (
    <section>
      <h1 tabIndex={-1}>Job {id.slice(0, 8)}</h1>
      <p>
        <a href="#/jobs">← All jobs</a>
      </p>
      <ErrorAlert message={error} />
      {job && (
        <>
          <dl class="facts" data-testid="job">
            <dt>Status</dt>
            <dd data-testid="job-status">
              <StatusBadge status={job.status} />
            </dd>
            <dt>Type</dt>
            <dd>{job.job_type}</dd>
            <dt>Target</dt>
            <dd data-testid="job-target">{hostOf(job.target_url)}</dd>
            {job.job_type === 'run' && (
              <>
                <dt>Config</dt>
                <dd data-testid="job-config">
                  <JobConfig configId={job.yaml_config?.id ?? null} />
                </dd>
              </>
            )}
            <dt>Progress</dt>
            <dd>
              <JobProgress value={job.progress} label="Job progress" />
            </dd>
            <dt>Message</dt>
            <dd class="message" aria-live="polite" data-testid="status-message">
              {job.status_message ?? ''}
              <Warnings warnings={job.warnings ?? []} />
            </dd>
            <dt>Created</dt>
            <dd>
              <DateTime iso={job.created_at} />
            </dd>
            {job.completed_at && (
              <>
                <dt>Finished</dt>
                <dd>
                  <DateTime iso={job.completed_at} />
                </dd>
              </>
            )}
            {job.pages_scraped !== undefined && (
              <>
                <dt>Pages</dt>
                <dd>{job.pages_scraped}</dd>
              </>
            )}
            {job.items_found !== undefined && (
              <>
                <dt>Items</dt>
                <dd>{job.items_found}</dd>
              </>
            )}
          </dl>
          {job.job_type === 'generate' && job.status === 'completed' && job.yaml_config?.id && (
            <p>
              <a href={`#/configs/${job.yaml_config.id}`}>Open the generated config</a>
            </p>
          )}
        </>
      )}
      {completed && job?.changes && <JobChanges jobId={id} summary={job.changes} />}
      {completed && rows === null && !error && <Status>Loading the rows…</Status>}
      {rows && (
        <>
          <h2>Rows</h2>
          <div class="button-row" role="group" aria-label="Download the rows">
            {FORMATS.map((f) => (
              <button type="button" class="secondary" key={f.format} data-format={f.format} onClick={() => download(f.format)}>
                Download {f.label}
              </button>
            ))}
          </div>
          <Status>{downloadStatus}</Status>
          {rows.length === 0 ? (
            <p>The job found no rows.</p>
          ) : (
            <>
              <TableBox label="Rows">
                <table data-testid="rows" class="rows">
                  <thead>
                    <tr>
                      <th scope="col" class="sticky sticky-0">
                        #
                      </th>
                      {columns.map((c, ci) => (
                        <th scope="col" key={c} class={ci === 0 ? 'sticky sticky-1' : undefined}>
                          {c}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {shown.map((row, i) => (
                      <tr key={page * PAGE_SIZE + i}>
                        <td class="num sticky sticky-0">{page * PAGE_SIZE + i + 1}</td>
                        {columns.map((c, ci) => (
                          <td key={c} class={ci === 0 ? 'sticky sticky-1' : undefined}>
                            <CellValue value={row[c]} label={`${c} of row ${page * PAGE_SIZE + i + 1}`} />
                          </td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
              <nav class="pager" aria-label="Rows pages">
                <button type="button" class="secondary" disabled={page === 0} onClick={() => setPage(page - 1)}>
                  Previous
                </button>
                <span aria-live="polite" data-testid="rows-range">
                  Rows {page * PAGE_SIZE + 1}–{Math.min(rows.length, (page + 1) * PAGE_SIZE)} of {rows.length}
                </span>
                <button type="button" class="secondary" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
                  Next
                </button>
              </nav>
            </>
          )}
        </>
      )}
    </section>
  );
}
