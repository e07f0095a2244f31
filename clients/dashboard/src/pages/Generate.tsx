/**
 * Generate a config from a URL and a prompt: `POST /api/v1/generate/` starts a job, whose states
 * (pending → analyzing → generating → validating → completed | failed, docs/generate.md) are shown live by
 * polling `GET /api/v1/jobs/{id}/status/`; a completed job links to the config it saved.
 */
import { useState } from 'preact/hooks';
import { errorText, isFinished, request, type Job, type JobSummary } from '../api.ts';
import { usePoll } from '../poll.ts';
import { ErrorAlert, JobProgress, Status } from '../components/ui.tsx';

const STATES = ['pending', 'analyzing', 'generating', 'validating', 'completed'];

/** The generate page. */
export function Generate() {
  const [url, setUrl] = useState('');
  const [prompt, setPrompt] = useState('');
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setJob(null);
    try {
      const started = await request<JobSummary>('/generate/', { method: 'POST', body: { url: url.trim(), prompt: prompt.trim() } });
      setJob(started);
    } catch (err) {
      setError(errorText(err));
    }
    setBusy(false);
  };

  const running = job !== null && !isFinished(job.status);
  usePoll(
    async () => {
      if (!job) return;
      try {
        setJob(await request<Job>(`/jobs/${job.id}/status/`));
      } catch (err) {
        setError(errorText(err));
        throw err;
      }
    },
    1000,
    running,
    [job?.id],
  );

  const reached = job ? STATES.indexOf(job.status) : -1;
  return (
    <section>
      <h1 tabIndex={-1}>Generate a config</h1>
      <p>The service reads the page, writes a YAML config for what the prompt asks, tries it, and saves it to your configs.</p>
      <form class="stack" onSubmit={submit} data-testid="generate-form">
        <label for="gen-url">Page URL</label>
        <input id="gen-url" type="url" required placeholder="https://…" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        <label for="gen-prompt">What to extract</label>
        <textarea id="gen-prompt" required maxLength={2000} rows={3} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
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
          {job.status === 'completed' && job.yaml_config?.id && (
            <p>
              <a class="button" href={`#/configs/${job.yaml_config.id}`}>
                Open the generated config
              </a>{' '}
              <a class="button secondary" href={`#/jobs/${job.id}`}>
                See the trial's rows
              </a>
            </p>
          )}
        </div>
      )}
    </section>
  );
}
