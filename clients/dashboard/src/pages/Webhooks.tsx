/**
 * Webhooks (issue 26, docs/monitoring.md): signed POSTs (Standard Webhooks) to a URL of the user's when jobs end.
 * The account's webhooks (`GET /api/v1/webhooks/`), each with its events and its delivery attempts
 * (`GET /api/v1/webhooks/{id}/deliveries/`: time, event, job, attempt, status code, duration, outcome, error);
 * a form that adds one (`POST /api/v1/webhooks/ {url, events}`) and shows its signing secret this once, in a box to
 * copy, with a warning (the API never shows it again); Delete behind a confirm step.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  createWebhook,
  deleteWebhook,
  getWebhookDeliveries,
  listWebhooks,
  WEBHOOK_EVENTS,
  type Webhook,
  type WebhookCreated,
  type WebhookDelivery,
  type WebhookEvent,
} from '../api.ts';
import { DateTime, DeleteWithConfirm, ErrorAlert, namesField, shownError, Status, TableBox, type ShownError } from '../components/ui.tsx';

/** What each event means, for the form. */
const EVENT_HINTS: Record<WebhookEvent, string> = {
  'job.completed': 'a job completed',
  'job.failed': 'a job failed',
  'job.changed': 'a run of a saved config found rows added, removed or changed since its previous run',
};

/** Delivery outcomes in words, and the badge colour of each. */
const OUTCOMES: Record<WebhookDelivery['outcome'], { label: string; badge: string }> = {
  delivered: { label: 'delivered', badge: 'completed' },
  will_retry: { label: 'will retry', badge: 'timeout' },
  given_up: { label: 'given up', badge: 'failed' },
};

/** The secret of the webhook just created, shown once: copy it (or select it for Ctrl+C), then dismiss. */
function SecretBox({ created, onDone }: { created: WebhookCreated; onDone: () => void }) {
  const [copyStatus, setCopyStatus] = useState('');
  const ref = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.secret);
      setCopyStatus('Secret copied to the clipboard.');
    } catch {
      const el = ref.current;
      if (el) {
        const range = document.createRange();
        range.selectNodeContents(el);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
      setCopyStatus('The clipboard is not available: the secret is selected, press Ctrl+C (⌘C) to copy it.');
    }
  };
  return (
    <div class="panel secret-panel" data-testid="webhook-created">
      <h2>Signing secret</h2>
      <p class="warning" data-testid="secret-warning">
        <strong>Copy this secret now: it is shown only this once.</strong> Your receiver verifies each request's
        <code> webhook-signature</code> with it. If you lose it, delete the webhook and add a new one.
      </p>
      <p class="url">
        For <code>{created.url}</code>
      </p>
      <div class="key-row">
        <code class="api-key" ref={ref} data-testid="webhook-secret" aria-label="Signing secret">
          {created.secret}
        </code>
        <button type="button" class="secondary" onClick={copy}>
          Copy secret
        </button>
      </div>
      <Status>{copyStatus}</Status>
      <div class="button-row">
        <button type="button" onClick={onDone}>
          I have stored the secret
        </button>
      </div>
    </div>
  );
}

/** One webhook's delivery attempts, newest first. */
function Deliveries({ webhook, refresh }: { webhook: Webhook; refresh: number }) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    getWebhookDeliveries(webhook.id, undefined, abort.signal).then(
      (d) => {
        setDeliveries(d);
        setError(null);
      },
      (err) => {
        if ((err as Error).name !== 'AbortError') setError(shownError(err));
      },
    );
    return () => abort.abort();
  }, [webhook.id, refresh]);

  return (
    <div data-testid="deliveries">
      <h4>Deliveries</h4>
      <ErrorAlert message={error?.message} details={error?.details} />
      {deliveries === null && !error && <p>Loading the deliveries…</p>}
      {deliveries && deliveries.length === 0 && <p data-testid="no-deliveries">No deliveries yet: a message is sent when a job of yours ends with one of these events.</p>}
      {deliveries && deliveries.length > 0 && (
        <TableBox label={`Deliveries to ${webhook.url}`}>
          <table data-testid="delivery-list">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Job</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status code</th>
                <th scope="col">Duration</th>
                <th scope="col">Outcome</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id} data-delivery-id={d.id}>
                  <td>
                    <DateTime iso={d.attempted_at} />
                  </td>
                  <td>
                    <code>{d.event}</code>
                  </td>
                  <td>
                    <a href={`#/jobs/${d.job_id}`}>{d.job_id.slice(0, 8)}</a>
                  </td>
                  <td class="num">{d.attempt}</td>
                  <td class="num">{d.status_code ?? '—'}</td>
                  <td class="num">{d.duration_ms} ms</td>
                  <td>
                    <span class={`badge badge-${OUTCOMES[d.outcome]?.badge ?? 'skipped'}`}>{OUTCOMES[d.outcome]?.label ?? d.outcome}</span>
                    {d.outcome === 'will_retry' && d.next_attempt_at && (
                      <>
                        {' '}
                        <span class="muted">
                          next <DateTime iso={d.next_attempt_at} />
                        </span>
                      </>
                    )}
                  </td>
                  <td class="message">{d.error ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </div>
  );
}

/** The webhooks page. */
export function Webhooks() {
  const [webhooks, setWebhooks] = useState<Webhook[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>(['job.completed', 'job.failed']);
  const [created, setCreated] = useState<WebhookCreated | null>(null);
  const [refresh, setRefresh] = useState(0);

  const load = async () => {
    try {
      setWebhooks(await listWebhooks());
    } catch (err) {
      setError(shownError(err));
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const toggle = (event: WebhookEvent, on: boolean) => setEvents(WEBHOOK_EVENTS.filter((e) => (e === event ? on : events.includes(e))));

  const add = async (e: Event) => {
    e.preventDefault();
    if (events.length === 0) {
      setError({ message: 'Choose at least one event.', code: 'no_events', details: [] });
      return;
    }
    setBusy(true);
    setError(null);
    setStatus('');
    try {
      const w = await createWebhook({ url: url.trim(), events });
      setCreated(w);
      setUrl('');
      setStatus(`Added the webhook ${w.url}.`);
      await load();
    } catch (err) {
      setError(shownError(err));
    }
    setBusy(false);
  };
  const remove = async (w: Webhook) => {
    setBusy(true);
    setError(null);
    try {
      await deleteWebhook(w.id);
      setStatus(`Deleted the webhook ${w.url}.`);
      setConfirming(null);
      if (created?.id === w.id) setCreated(null);
      await load();
    } catch (err) {
      setError(shownError(err));
    }
    setBusy(false);
  };

  return (
    <section>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p>
        When a job of yours ends, the service POSTs a signed message (Standard Webhooks) to each webhook subscribed to
        its event, and retries with back-off for about a day while the receiver fails.
      </p>
      <ErrorAlert message={error?.message} details={error?.details} />
      <Status>{status}</Status>
      {created && <SecretBox created={created} onDone={() => setCreated(null)} />}

      <form class="stack narrow" onSubmit={add} data-testid="webhook-form">
        <h2>Add a webhook</h2>
        <label for="webhook-url">URL</label>
        <input
          id="webhook-url"
          type="url"
          required
          maxLength={2048}
          placeholder="https://example.com/hooks/scrape-ai"
          aria-invalid={error?.code === 'invalid_url' || error?.code === 'target_forbidden' || namesField(error, 'url') || undefined}
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
        <fieldset class={error?.code === 'no_events' || namesField(error, 'events') ? 'events invalid' : 'events'}>
          <legend>Events</legend>
          {WEBHOOK_EVENTS.map((ev) => (
            <label class="check" key={ev}>
              <input type="checkbox" name="events" value={ev} checked={events.includes(ev)} onChange={(e) => toggle(ev, e.currentTarget.checked)} />
              <span>
                <code>{ev}</code> <span class="muted">{EVENT_HINTS[ev]}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <div class="button-row">
          <button type="submit" disabled={busy}>
            Add webhook
          </button>
        </div>
      </form>

      <div class="title-row">
        <h2>Your webhooks</h2>
        <button type="button" class="secondary" onClick={() => { setRefresh(refresh + 1); void load(); }}>
          Refresh
        </button>
      </div>
      {webhooks === null && !error && <p>Loading…</p>}
      {webhooks && webhooks.length === 0 && <p>No webhooks yet.</p>}
      {webhooks && webhooks.length > 0 && (
        <ul class="webhooks" data-testid="webhooks">
          {webhooks.map((w) => (
            <li key={w.id} class="panel" data-webhook-id={w.id}>
              <h3 class="url" data-testid="webhook-url">{w.url}</h3>
              <dl class="facts">
                <dt>Events</dt>
                <dd data-testid="webhook-events">{w.events.join(', ')}</dd>
                <dt>Added</dt>
                <dd>
                  <DateTime iso={w.created_at} />
                </dd>
              </dl>
              <div class="button-row">
                <DeleteWithConfirm label={`the webhook ${w.url}`} asking={confirming === w.id} busy={busy} onAsk={() => setConfirming(w.id)} onConfirm={() => remove(w)} onCancel={() => setConfirming(null)} />
              </div>
              <Deliveries webhook={w} refresh={refresh} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
