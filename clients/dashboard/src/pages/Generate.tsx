/**
 * Generate a config from a URL and a prompt: `POST /api/v1/generate/` starts a job, whose states
 * (pending → analyzing → generating → validating → completed | failed, docs/generate.md) are shown live by
 * polling `GET /api/v1/jobs/{id}/status/`; a completed job links to the config it saved.
 *
 * The generate job's rows are a trial of the first pages (docs/generate.md, "All the rows"): the page says so. With
 * "Run it for all the rows" checked the request carries `run: true`, and the run job it names (`run_job_id`) is
 * followed to its end too, with a link to its rows; without it, a button runs the saved config (`POST /run/`).
 * "Other pages of the same template" (one URL a line, optional) is sent as `example_urls` (at most 4; the service
 * checks each one and says which is refused).
 */
import { useState } from 'preact/hooks';
import { errorText, isFinished, request, type Job, type JobSummary } from '../api.ts';
import { usePoll } from '../poll.ts';
import { ErrorAlert, JobProgress, Status, StatusBadge } from '../components/ui.tsx';

const STATES = ['pending', 'analyzing', 'generating', 'validating', 'completed'];

/** Follows a job by id (every second while unfinished): its latest status, or null before the first answer. */
function useJob(id: string | null | undefined, onError: (message: string) => void): Job | null {
  const [job, setJob] = useState<Job | null>(null);
  usePoll(
    async () => {
      if (!id) return;
      try {
        setJob(await request<Job>(`/jobs/${id}/status/`));
      } catch (err) {
        onError(errorText(err));
        throw err;
      }
    },
    1000,
    Boolean(id) && (job === null || job.id !== id || !isFinished(job.status)),
    [id],
  );
  return job && job.id === id ? job : null;
}

/** The run of the saved config: its state and progress while it runs, then a link to all its rows. */
function RunOfConfig({ job }: { job: Job | null }) {
  if (!job) return <Status>Starting the run of the saved config…</Status>;
  return (
    <div data-testid="generate-run">
      <p>
        Run of the saved config for all the rows: <StatusBadge status={job.status} />
      </p>
      <JobProgress value={job.progress} label="Run progress" />
      <Status>{job.status_message ?? job.status}</Status>
      {job.status === 'completed' && (
        <p>
          <a class="button" href={`#/jobs/${job.id}`}>
            See all {job.results?.row_count ?? ''} rows
          </a>
        </p>
      )}
    </div>
  );
}

/** The non-blank lines of the "other pages" field, trimmed: the request's `example_urls`. */
function exampleUrls(text: string): string[] {
  return text.split('\n').map((line) => line.trim()).filter(Boolean);
}

/** The generate page. */
export function Generate() {
  const [url, setUrl] = useState('');
  const [prompt, setPrompt] = useState('');
  const [runAll, setRunAll] = useState(false);
  const [examples, setExamples] = useState('');
  const [started, setStarted] = useState<JobSummary | null>(null);
  const [runId, setRunId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setStarted(null);
    setRunId(null);
    try {
      setStarted(await request<JobSummary>('/generate/', { method: 'POST', body: { url: url.trim(), prompt: prompt.trim(), ...(exampleUrls(examples).length ? { example_urls: exampleUrls(examples) } : {}), ...(runAll ? { run: true } : {}) } }));
    } catch (err) {
      setError(errorText(err));
    }
    setBusy(false);
  };

  const polled = useJob(started?.id, setError);
  const job: Job | JobSummary | null = polled ?? started;
  const run = useJob(runId ?? polled?.run_job_id, setError);

  /** Runs the saved config (`POST /run/`) for all the rows, and follows that run here. */
  const runConfig = async () => {
    const configId = polled?.yaml_config?.id;
    if (!configId) return;
    setError(null);
    try {
      setRunId((await request<JobSummary>('/run/', { method: 'POST', body: { config_id: configId } })).id);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const running = job !== null && !isFinished(job.status);
  const reached = job ? STATES.indexOf(job.status) : -1;
  const done = polled?.status === 'completed' ? polled : null;
  return (
    <section>
      <h1 tabIndex={-1}>Generate a config</h1>
      <p>
        The service reads the page, writes a YAML config for what the prompt asks, tries it on the first pages, and saves it to your configs. The try
        gives a trial of the first pages only; run the config for all the rows.
      </p>
      <form class="stack" onSubmit={submit} data-testid="generate-form">
        <label for="gen-url">Page URL</label>
        <input id="gen-url" type="url" required placeholder="https://…" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        <label for="gen-prompt">What to extract</label>
        <textarea id="gen-prompt" required maxLength={2000} rows={3} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
        <label for="gen-examples">Other pages of the same template (optional, one URL per line, at most 4)</label>
        <textarea id="gen-examples" rows={3} spellcheck={false} placeholder="https://…/page/2/" aria-describedby="gen-examples-hint" value={examples} onInput={(e) => setExamples(e.currentTarget.value)} />
        <p class="hint" id="gen-examples-hint">
          More listing pages or other searches of the site: the generator compares them with the page to tell the records from the template&apos;s furniture, and
          tries the config on them.
        </p>
        <label class="check">
          <input id="gen-run" type="checkbox" checked={runAll} onChange={(e) => setRunAll(e.currentTarget.checked)} /> Run it for all the rows once generated (a
          run of the saved config: one more run&apos;s cost; plans with server execution)
        </label>
        <ErrorAlert message={error} />
        <div class="button-row">
          <button type="submit" disabled={busy || running}>
            Generate
          </button>
        </div>
      </form>
      {job && (
        <div class="panel" data-testid="generate-job">
          <h2>
            Job <a href={`#/jobs/${job.id}`}>{job.id.slice(0, 8)}</a>
          </h2>
          <ol class="states" aria-label="Generation states">
            {STATES.map((s, i) => (
              <li key={s} class={job.status === s ? 'state-current' : i < reached || job.status === 'completed' ? 'state-done' : 'state-todo'} aria-current={job.status === s ? 'step' : undefined}>
                {s}
              </li>
            ))}
            {job.status === 'failed' && <li class="state-failed" aria-current="step">failed</li>}
          </ol>
          <JobProgress value={job.progress} label="Generation progress" />
          <Status>{job.status_message ?? job.status}</Status>
          {done?.yaml_config?.id && (
            <>
              <p>
                <a class="button" href={`#/configs/${done.yaml_config.id}`}>
                  Open the generated config
                </a>{' '}
                <a class="button secondary" href={`#/jobs/${done.id}`}>
                  See the trial&apos;s rows
                </a>
              </p>
              {done.run_job_id || runId ? (
                <RunOfConfig job={run} />
              ) : (
                <div class="notice" data-testid="generate-trial">
                  <p>
                    The {done.results?.row_count ?? 0} rows of this job are a trial of the first pages only (at most 2 listing pages, 30 rows).
                    {done.run_error ? ` Its run could not start: ${done.run_error}.` : ''} Run the saved config for all of them.
                  </p>
                  <button type="button" onClick={runConfig}>
                    Run it for all the rows
                  </button>
                </div>
              )}
            </>
          )}
        </div>
      )}
    </section>
  );
}
