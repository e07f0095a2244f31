/**
 * "Changes since the last run" on a job's page (issue 26, docs/monitoring.md): for a completed run of a saved
 * config, the counts of its status answer's `changes` (rows added, removed and changed since the config's previous
 * completed run), the job it was compared with, and the changes themselves from `GET /api/v1/jobs/{id}/changes/`
 * a page of 25 at a time (`?offset=&limit=`), all kinds or one (`?change=`): an added or removed row's values, a
 * changed row's key and each changed field's old → new value.
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { getJobChanges, type ChangeKind, type JobChanges as ChangesPage, type JobChangesSummary, type Row, type RowChange } from '../api.ts';
import { CellValue, ErrorAlert, shownError, Status, TableBox, type ShownError } from './ui.tsx';

/** Changes per page of the table. */
const CHANGES_PAGE = 25;

const KINDS: { kind: ChangeKind; label: string }[] = [
  { kind: 'added', label: 'Added' },
  { kind: 'removed', label: 'Removed' },
  { kind: 'changed', label: 'Changed' },
];

/** A row's fields as a list of "name value" pairs. */
function Fields({ row }: { row: Row }) {
  return (
    <ul class="kv">
      {Object.entries(row).map(([name, value]) => (
        <li key={name}>
          <span class="kv-name">{name}:</span> <CellValue value={value} label={name} />
        </li>
      ))}
    </ul>
  );
}

/** A changed row's fields, each as old → new. */
function Diff({ fields }: { fields: Record<string, { old: unknown; new: unknown }> }) {
  return (
    <ul class="kv">
      {Object.entries(fields).map(([name, v]) => (
        <li key={name}>
          <span class="kv-name">{name}:</span> <del><CellValue value={v.old} label={`the old ${name}`} /></del> → <ins><CellValue value={v.new} label={`the new ${name}`} /></ins>
        </li>
      ))}
    </ul>
  );
}

function ChangeRow({ entry, n }: { entry: RowChange; n: number }) {
  return (
    <tr>
      <td class="num">{n}</td>
      <td>
        <span class={`badge badge-${entry.change}`}>{entry.change}</span>
      </td>
      <td>
        <Fields row={entry.change === 'changed' && entry.key ? entry.key : entry.row} />
      </td>
      <td>{entry.change === 'changed' && entry.fields ? <Diff fields={entry.fields} /> : <span class="muted">—</span>}</td>
    </tr>
  );
}

/** The section; `summary` is the job status answer's `changes`. */
export function JobChanges({ jobId, summary }: { jobId: string; summary: JobChangesSummary }) {
  const [kind, setKind] = useState<ChangeKind | ''>('');
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<ChangesPage | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const total = summary.added + summary.removed + summary.changed;
  const compared = summary.compared_with !== null;

  useEffect(() => {
    if (!compared || total === 0) return;
    const abort = new AbortController();
    setError(null);
    getJobChanges(jobId, { change: kind || undefined, offset, limit: CHANGES_PAGE }, abort.signal).then(setPage, (err) => {
      if ((err as Error).name !== 'AbortError') setError(shownError(err));
    });
    return () => abort.abort();
  }, [jobId, kind, offset, compared, total]);

  const shownTotal = page?.total ?? 0;
  return (
    <section aria-labelledby="changes-title" data-testid="changes">
      <h2 id="changes-title">Changes since the last run</h2>
      <dl class="facts" data-testid="changes-counts">
        {KINDS.map((k) => (
          <Fragment key={k.kind}>
            <dt>{k.label}</dt>
            <dd data-testid={`changes-${k.kind}`}>{summary[k.kind]}</dd>
          </Fragment>
        ))}
      </dl>
      {summary.compared_with === null ? (
        <p data-testid="changes-compared">First run: nothing to compare with.</p>
      ) : (
        <p data-testid="changes-compared">
          Compared with job <a href={`#/jobs/${summary.compared_with}`}>{summary.compared_with.slice(0, 8)}</a>
          {page && <>, rows matched on {page.key_fields?.length ? page.key_fields.join(', ') : 'all their values'}</>}.
        </p>
      )}
      {compared && total === 0 && <p>No row was added, removed or changed.</p>}
      <ErrorAlert message={error?.message} details={error?.details} />
      {compared && total > 0 && (
        <>
          <div class="stack narrow">
            <label for="changes-kind">Show</label>
            <select
              id="changes-kind"
              value={kind}
              onChange={(e) => {
                setKind(e.currentTarget.value as ChangeKind | '');
                setOffset(0);
              }}
            >
              <option value="">All changes ({total})</option>
              {KINDS.map((k) => (
                <option key={k.kind} value={k.kind} disabled={summary[k.kind] === 0}>
                  {k.label} ({summary[k.kind]})
                </option>
              ))}
            </select>
          </div>
          {page === null && !error && <Status>Loading the changes…</Status>}
          {page && page.results.length > 0 && (
            <>
              <TableBox label="Changes">
                <table data-testid="changes-table">
                  <thead>
                    <tr>
                      <th scope="col">#</th>
                      <th scope="col">Change</th>
                      <th scope="col">Row</th>
                      <th scope="col">Changed fields</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.results.map((entry, i) => (
                      <ChangeRow key={page.offset + i} entry={entry} n={page.offset + i + 1} />
                    ))}
                  </tbody>
                </table>
              </TableBox>
              <nav class="pager" aria-label="Changes pages">
                <button type="button" class="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - CHANGES_PAGE))}>
                  Previous changes
                </button>
                <span aria-live="polite" data-testid="changes-range">
                  Changes {page.offset + 1}–{page.offset + page.results.length} of {shownTotal}
                </span>
                <button type="button" class="secondary" disabled={offset + CHANGES_PAGE >= shownTotal} onClick={() => setOffset(offset + CHANGES_PAGE)}>
                  Next changes
                </button>
              </nav>
            </>
          )}
        </>
      )}
    </section>
  );
}
