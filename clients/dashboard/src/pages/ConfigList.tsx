/**
 * Configs: the account's configs (`GET /api/v1/configs/`, newest first), each with Edit, Run
 * (`POST /api/v1/run/ {config_id}` → the job's page) and Delete (`DELETE /api/v1/configs/{id}/`, after a
 * confirm step).
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText, request, type ConfigSummary, type JobSummary } from '../api.ts';
import { DateTime, DeleteWithConfirm, ErrorAlert, Status, TableBox } from '../components/ui.tsx';

/** Starts a run of a saved config and opens its job page. @throws ApiError (plan, quota, invalid config). */
export async function runConfig(configId: string): Promise<void> {
  const job = await request<JobSummary>('/run/', { method: 'POST', body: { config_id: configId } });
  location.hash = `#/jobs/${job.id}`;
}

/** The configs page. */
export function ConfigList() {
  const [configs, setConfigs] = useState<ConfigSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [confirming, setConfirming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = () => request<{ count: number; results: ConfigSummary[] }>('/configs/').then((r) => setConfigs(r.results), (err) => setError(errorText(err)));
  useEffect(() => {
    void load();
  }, []);

  const run = async (c: ConfigSummary) => {
    setBusy(true);
    setError(null);
    setStatus(`Starting a run of ${c.name}…`);
    try {
      await runConfig(c.id);
    } catch (err) {
      setError(errorText(err));
      setStatus('');
      setBusy(false);
    }
  };
  const remove = async (c: ConfigSummary) => {
    setBusy(true);
    setError(null);
    try {
      await request(`/configs/${c.id}/`, { method: 'DELETE' });
      setStatus(`Deleted ${c.name}.`);
      setConfirming(null);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
    setBusy(false);
  };

  return (
    <section>
      <div class="title-row">
        <h1 tabIndex={-1}>Configs</h1>
        <a class="button" href="#/configs/new">New config</a>
        <a class="button secondary" href="#/generate">Generate from a URL</a>
      </div>
      <ErrorAlert message={error} />
      <Status>{status}</Status>
      {configs === null && !error && <p>Loading…</p>}
      {configs && configs.length === 0 && <p>No configs yet. Write one, or generate one from a URL and a prompt.</p>}
      {configs && configs.length > 0 && (
        <TableBox label="Configs">
          <table data-testid="configs">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Target URL</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {configs.map((c) => (
                <tr key={c.id} data-config-id={c.id}>
                  <td>
                    <a href={`#/configs/${c.id}`}>{c.name}</a>
                  </td>
                  <td class="url">{c.target_url}</td>
                  <td>
                    <DateTime iso={c.created_at} />
                  </td>
                  <td class="actions">
                    <DeleteWithConfirm label={c.name} asking={confirming === c.id} busy={busy} onAsk={() => setConfirming(c.id)} onConfirm={() => remove(c)} onCancel={() => setConfirming(null)}>
                      <button type="button" disabled={busy} onClick={() => run(c)} aria-label={`Run ${c.name}`}>
                        Run
                      </button>
                      <a class="button secondary" href={`#/configs/${c.id}`} aria-label={`Edit ${c.name}`}>
                        Edit
                      </a>
                    </DeleteWithConfirm>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}
