/**
 * Small shared pieces of the dashboard's pages: the error region, the status line, job progress, dates,
 * the raw-JSON disclosure.
 */
import type { ComponentChildren } from 'preact';

/**
 * The error region of a page: `role="alert"` so screen readers announce the API's `error` text at once.
 * Always in the DOM (empty when there is no error) so that the announcement fires on change.
 */
export function ErrorAlert({ message }: { message: string | null | undefined }) {
  return (
    <div class={message ? 'alert' : 'alert alert-empty'} role="alert" data-testid="error">
      {message ?? ''}
    </div>
  );
}

/** A polite live region for progress and outcomes ("Saved.", "Running…"). */
export function Status({ children }: { children?: ComponentChildren }) {
  return (
    <p class="status" role="status" aria-live="polite">
      {children}
    </p>
  );
}

/** A job's progress as a native `<progress max=100>`, labelled with its percentage. */
export function JobProgress({ value, label }: { value: number; label: string }) {
  return (
    <span class="progress">
      <progress max={100} value={value} aria-label={label}>
        {value}%
      </progress>
      <span class="progress-value">{value}%</span>
    </span>
  );
}

/** A job status as a coloured badge (the colour repeats the word; the word is what counts). */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** An ISO 8601 timestamp in the reader's locale and time zone, inside a `<time>` element. */
export function DateTime({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return <span>{iso}</span>;
  return <time dateTime={iso}>{d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}</time>;
}

/** The answer as indented JSON, behind a `<details>` disclosure. */
export function RawJson({ value }: { value: unknown }) {
  return (
    <details class="raw">
      <summary>Raw JSON</summary>
      <pre class="code-block">{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

/** A table in its own horizontally scrolling box, so that a wide table never widens the page. */
export function TableBox({ children, label }: { children: ComponentChildren; label: string }) {
  return (
    <div class="table-box" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** A cell value as text: strings as they are, null as an em dash, anything else as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
