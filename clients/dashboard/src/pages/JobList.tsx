/**
 * Jobs: `GET /api/v1/jobs/` (newest first, cursor paging: `{count, next_cursor, results}`, docs/api.md) with
 * each job's config name and target host (its id in small print), status, type, creation time, progress, message and
 * warning count (the list lives on the job's page); refreshed every 2 s while any listed job is unfinished.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText, isFinished, request, type JobSummary } from '../api.ts';
import { usePoll } from '../poll.ts';
import { DateTime, ErrorAlert, hostOf, JobProgress, StatusBadge, TableBox } from '../components/ui.tsx';

const PAGE = 20;

interface JobPage {
  count: number;
  next_cursor: string | null;
  results: JobSummary[];
}

/** The jobs page. */
export function JobList() {
  const [jobs, setJobs] = useState<JobSummary[] | null>(null);
  const [count, setCount] = useState(0);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  /** Reloads the first `n` jobs (the ones on screen), as one page of at most 100. */
  const reload = async (n: number) => {
    try {
      const page = await request<JobPage>('/jobs/', { query: { limit: Math.min(100, Math.max(PAGE, n)) } });
      setJobs(page.results);
      setCount(page.count);
      setCursor(page.next_cursor);
      setError(null);
    } catch (err) {
      setError(errorText(err));
      throw err;
    }
  };
  useEffect(() => {
    void reload(PAGE).catch(() => {});
  }, []);

  const more = async () => {
    if (!cursor || !jobs) return;
    try {
      const page = await request<JobPage>('/jobs/', { query: { limit: PAGE, cursor } });
      setJobs([...jobs, ...page.results]);
      setCursor(page.next_cursor);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const anyRunning = jobs?.some((j) => !isFinished(j.status)) ?? false;
  usePoll(() => reload(jobs?.length ?? PAGE), 2000, anyRunning);

  return (
    <section>
      <h1 tabIndex={-1}>Jobs</h1>
      <ErrorAlert message={error} />
      {jobs === null && !error && <p>Loading…</p>}
      {jobs && jobs.length === 0 && <p>No jobs yet. Run a config or generate one.</p>}
      {jobs && jobs.length > 0 && (
        <>
          <p aria-live="polite">
            {count} job{count === 1 ? '' : 's'}
            {anyRunning ? ', refreshing while some are running' : ''}.
          </p>
          <TableBox label="Jobs">
            <table data-testid="jobs">
              <thead>
                <tr>
                  <th scope="col">Config and target</th>
                  <th scope="col">Status</th>
                  <th scope="col">Type</th>
                  <th scope="col">Created</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Message</th>
                </tr>
              </thead>
              <tbody>
                {jobs.map((j) => (
                  <tr key={j.id}>
                    <td class="job-name" data-testid="job-name">
                      <a href={`#/jobs/${j.id}`} aria-label={`Job ${j.id}`}>
                        {j.config_name || (j.job_type === 'generate' ? 'Generating a config' : 'Unnamed config')}
                      </a>
                      <span class="sub" data-testid="job-host">{hostOf(j.target_url)}</span>
                      <span class="sub">job {j.id.slice(0, 8)}</span>
                    </td>
                    <td>
                      <StatusBadge status={j.status} />
                    </td>
                    <td>{j.job_type}</td>
                    <td>
                      <DateTime iso={j.created_at} />
                    </td>
                    <td>
                      <JobProgress value={j.progress} label={`Progress of job ${j.id.slice(0, 8)}`} />
                    </td>
                    <td class="message">
                      {j.status_message ?? ''}
                      {(j.warning_count ?? 0) > 0 && (
                        <a class="warn-count" href={`#/jobs/${j.id}`} data-testid="warning-count">
                          {j.warning_count} warning{j.warning_count === 1 ? '' : 's'}
                        </a>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
          {cursor && (
            <button type="button" class="secondary" onClick={more}>
              Show older jobs
            </button>
          )}
        </>
      )}
    </section>
  );
}
