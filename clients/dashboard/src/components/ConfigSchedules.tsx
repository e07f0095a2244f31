/**
 * A saved config's schedules (issue 26, docs/monitoring.md), on its editor page: `GET /api/v1/schedules/` (the
 * account's, kept to this config's), each with its cron rule, time zone, next run, state (enabled, disabled, or
 * paused with the reason of the refused firing), fired and skipped counts and the jobs it started; Enable/Disable
 * (`PUT /api/v1/schedules/{id}/ {enabled}`; enabling a paused schedule resumes it), Delete behind a confirm step
 * (`DELETE`), and a form that adds one (`POST /api/v1/schedules/ {config_id, cron, timezone, enabled}`), its time
 * zone the browser's by default. A refused addition shows the API's message in the form, and marks the fields its
 * details name.
 */
import { useEffect, useState } from 'preact/hooks';
import { createSchedule, deleteSchedule, listSchedules, updateSchedule, type Schedule } from '../api.ts';
import { DateTime, DeleteWithConfirm, ErrorAlert, namesField, shownError, Status, TableBox, type ShownError } from './ui.tsx';

/** The browser's IANA time zone (`Europe/Paris`), or UTC where it has none. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The time zones the browser knows, for the field's suggestions (UTC first). */
function timeZones(): string[] {
  try {
    return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
  } catch {
    return ['UTC'];
  }
}

/** A schedule's state in words: enabled, disabled, or paused (a refused firing turned it off). */
function stateOf(s: Schedule): { label: string; badge: string } {
  if (s.enabled) return { label: 'enabled', badge: 'completed' };
  if (s.paused) return { label: 'paused', badge: 'failed' };
  return { label: 'disabled', badge: 'skipped' };
}

/** The schedules section of a config's page. */
export function ConfigSchedules({ configId, configName }: { configId: string; configName: string }) {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  /** The error of loading the list or of a change to a listed schedule. */
  const [error, setError] = useState<ShownError | null>(null);
  /** The error of adding a schedule, shown in the form. */
  const [formError, setFormError] = useState<ShownError | null>(null);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [cron, setCron] = useState('');
  const [timezone, setTimezone] = useState(browserTimeZone);
  const [enabled, setEnabled] = useState(true);
  const [zones] = useState(timeZones);

  const load = async () => {
    try {
      const all = await listSchedules();
      setSchedules(all.filter((s) => s.config_id === configId));
    } catch (err) {
      setError(shownError(err));
    }
  };
  useEffect(() => {
    void load();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [configId]);

  /** Runs one change, shows its error or its outcome, then reloads the list. */
  const act = async (what: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setFormError(null);
    setStatus('');
    try {
      setStatus(await what());
      setConfirming(null);
      await load();
    } catch (err) {
      setError(shownError(err));
    }
    setBusy(false);
  };

  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFormError(null);
    setError(null);
    setStatus('');
    try {
      const s = await createSchedule({ config_id: configId, cron: cron.trim(), timezone: timezone.trim() || undefined, enabled });
      setCron('');
      const next = s.next_run_at ? `; next run ${new Date(s.next_run_at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}` : '';
      setStatus(`Added the schedule ${s.cron} (${s.timezone})${next}.`);
      await load();
    } catch (err) {
      setFormError(shownError(err));
    }
    setBusy(false);
  };
  const setOn = (s: Schedule, on: boolean) =>
    act(async () => {
      await updateSchedule(s.id, { enabled: on });
      return on ? `${s.paused ? 'Resumed' : 'Enabled'} the schedule ${s.cron}.` : `Disabled the schedule ${s.cron}.`;
    });
  const remove = (s: Schedule) =>
    act(async () => {
      await deleteSchedule(s.id);
      return `Deleted the schedule ${s.cron}.`;
    });

  return (
    <section aria-labelledby="schedules-title" data-testid="schedules">
      <h2 id="schedules-title">Schedules</h2>
      <p class="hint">
        Runs of {configName} on a cron rule, on the server (plans with server execution). Each completed run is compared
        with the previous one: its job page shows what changed.
      </p>
      <ErrorAlert message={error?.message} details={error?.details} />
      <Status>{status}</Status>
      {schedules === null && !error && <p>Loading the schedules…</p>}
      {schedules && schedules.length === 0 && <p>No schedules: this config runs only when you start it.</p>}
      {schedules && schedules.length > 0 && (
        <TableBox label="Schedules">
          <table data-testid="schedule-list">
            <thead>
              <tr>
                <th scope="col">Cron</th>
                <th scope="col">Time zone</th>
                <th scope="col">Next run</th>
                <th scope="col">State</th>
                <th scope="col">Fired</th>
                <th scope="col">Skipped</th>
                <th scope="col">Recent jobs</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {schedules.map((s) => {
                const state = stateOf(s);
                return (
                  <tr key={s.id} data-schedule-id={s.id}>
                    <td class="nowrap">
                      <code data-testid="schedule-cron">{s.cron}</code>
                    </td>
                    <td data-testid="schedule-timezone">{s.timezone}</td>
                    <td data-testid="schedule-next">
                      <DateTime iso={s.next_run_at} empty={s.enabled ? 'never again' : '—'} />
                    </td>
                    <td data-testid="schedule-state">
                      <span class={`badge badge-${state.badge}`}>{state.label}</span>
                      {s.paused && (
                        <p class="pause-reason" data-testid="schedule-paused">
                          {s.paused.message} (<code>{s.paused.code}</code>, <DateTime iso={s.paused.at} />)
                        </p>
                      )}
                    </td>
                    <td class="num" data-testid="schedule-fired">{s.fired_count}</td>
                    <td class="num" data-testid="schedule-skipped">{s.skipped_count}</td>
                    <td>
                      {s.recent_jobs.length === 0 ? (
                        <span class="muted">none yet</span>
                      ) : (
                        <ul class="plain-list">
                          {s.recent_jobs.map((j) => (
                            <li key={j.job_id}>
                              <a href={`#/jobs/${j.job_id}`}>{j.job_id.slice(0, 8)}</a> <span class="muted">for</span> <DateTime iso={j.scheduled_for} />
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                    <td class="actions">
                      <DeleteWithConfirm label={`the schedule ${s.cron}`} asking={confirming === s.id} busy={busy} onAsk={() => setConfirming(s.id)} onConfirm={() => remove(s)} onCancel={() => setConfirming(null)}>
                        <button type="button" class="secondary" disabled={busy} onClick={() => setOn(s, !s.enabled)} aria-label={`${s.enabled ? 'Disable' : s.paused ? 'Resume' : 'Enable'} the schedule ${s.cron}`}>
                          {s.enabled ? 'Disable' : s.paused ? 'Resume' : 'Enable'}
                        </button>
                      </DeleteWithConfirm>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
      <div class="button-row">
        <button type="button" class="secondary" disabled={busy} onClick={() => void load()}>
          Refresh the schedules
        </button>
      </div>

      <form class="stack narrow" onSubmit={add} data-testid="schedule-form">
        <h3>Add a schedule</h3>
        <label for="schedule-cron">Cron rule</label>
        <input id="schedule-cron" required maxLength={200} placeholder="0 6 * * *" spellcheck={false} autoComplete="off" aria-describedby="schedule-cron-hint" aria-invalid={namesField(formError, 'cron') || undefined} value={cron} onInput={(e) => setCron(e.currentTarget.value)} />
        <p class="hint" id="schedule-cron-hint">
          Five fields: minute, hour, day of month, month, day of week. <code>0 6 * * 1-5</code> is 06:00 on weekdays,{' '}
          <code>*/30 * * * *</code> every 30 minutes; <code>@hourly</code> and <code>@daily</code> work too. Your plan sets
          how often a schedule may fire.
        </p>
        <label for="schedule-timezone">Time zone</label>
        <input id="schedule-timezone" list="schedule-timezones" maxLength={100} spellcheck={false} autoComplete="off" aria-invalid={namesField(formError, 'timezone') || undefined} value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />
        <datalist id="schedule-timezones">
          {zones.map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
        <label class="check">
          <input id="schedule-enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          Enabled
        </label>
        <ErrorAlert message={formError?.message} details={formError?.details} />
        <div class="button-row">
          <button type="submit" disabled={busy}>
            Add schedule
          </button>
        </div>
      </form>
    </section>
  );
}
