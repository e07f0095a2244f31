/**
 * Small shared pieces of the dashboard's pages: the error region, the status line, job progress, dates,
 * the raw-JSON disclosure, and a value of a row ({@link CellValue}: links, long values clamped).
 */
import type { ComponentChildren } from 'preact';
import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorText, type ErrorDetail } from '../api.ts';

/**
 * The error region of a page: `role="alert"` so screen readers announce the API's `error` text at once.
 * Always in the DOM (empty when there is no error) so that the announcement fires on change. `details` (an
 * `invalid_request` answer's `[{path, message}]`) are listed under the message as "path: message"; entries without
 * a message (a `plan_required` answer's plan facts) and those the message already says are left out.
 */
export function ErrorAlert({ message, details }: { message: string | null | undefined; details?: ErrorDetail[] }) {
  const lines = message
    ? (details ?? [])
        .filter((d) => typeof d.message === 'string' && d.message)
        .map((d) => (d.path ? `${d.path}: ${d.message}` : String(d.message)))
        .filter((line) => !message.includes(line))
    : [];
  return (
    <div class={message ? 'alert' : 'alert alert-empty'} role="alert" data-testid="error">
      {message ?? ''}
      {lines.length > 0 && (
        <ul class="alert-details" data-testid="error-details">
          {lines.map((d, i) => (
            <li key={i}>{d}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** An error as a page keeps it to show in {@link ErrorAlert}: the message, and the API's code and details. */
export interface ShownError {
  message: string;
  /** The API's `code` (`invalid_request`, `plan_required`, …); empty for an error of the page's own. */
  code: string;
  details: ErrorDetail[];
}

/** Any thrown value as a {@link ShownError}. */
export function shownError(err: unknown): ShownError {
  return err instanceof ApiError ? { message: err.message, code: err.code, details: err.details } : { message: errorText(err), code: '', details: [] };
}

/**
 * Whether the API named the body field `field` in the error's details (`{path: "cron"}`, `"/timezone"`,
 * `"events[0]"`): a form marks that control `aria-invalid`.
 */
export function namesField(error: ShownError | null | undefined, field: string): boolean {
  return (error?.details ?? []).some((d) => typeof d.path === 'string' && d.path.replace(/^[/.]+/, '').split(/[/.[]/)[0] === field);
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

/**
 * An ISO 8601 timestamp in the reader's locale and time zone, inside a `<time>` element whose title is the
 * ISO form (the exact instant, in UTC, on hover). `empty` is shown for no timestamp.
 */
export function DateTime({ iso, empty = '—' }: { iso: string | null | undefined; empty?: string }) {
  if (!iso) return <span>{empty}</span>;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return <span>{iso}</span>;
  return (
    <time dateTime={iso} title={iso}>
      {d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
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

/**
 * Delete in two steps: the row's other actions (`children`) and a Delete button; once asked, "Confirm delete" and
 * Cancel in their place. `label` names the thing in the buttons' accessible names (`Delete <label>`,
 * `Confirm: delete <label>`).
 */
export function DeleteWithConfirm({ label, asking, busy, onAsk, onConfirm, onCancel, children }: {
  label: string;
  asking: boolean;
  busy: boolean;
  onAsk(): void;
  onConfirm(): void;
  onCancel(): void;
  children?: ComponentChildren;
}) {
  if (asking) {
    return (
      <>
        <button type="button" class="danger" disabled={busy} onClick={onConfirm} aria-label={`Confirm: delete ${label}`}>
          Confirm delete
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </>
    );
  }
  return (
    <>
      {children}
      <button type="button" class="secondary" onClick={onAsk} aria-label={`Delete ${label}`}>
        Delete
      </button>
    </>
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

/** The host of an http(s) URL (`books.toscrape.com`), or the text itself when it is not one. */
export function hostOf(url: string | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * A job's warnings (issue 40): their count as the summary of a closed disclosure, the list inside. Each warning names
 * its page once (the service says `detail page URL: answered HTTP 404`). Nothing when there are none.
 */
export function Warnings({ warnings }: { warnings: string[] }) {
  if (!warnings.length) return null;
  return (
    <details class="warnings" data-testid="warnings">
      <summary>
        {warnings.length} warning{warnings.length === 1 ? '' : 's'}
      </summary>
      <ul>
        {warnings.map((w, i) => (
          <li key={i}>{w}</li>
        ))}
      </ul>
    </details>
  );
}

/** A cell value as text: strings as they are, null as an em dash, anything else as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * `value` as a link target when it is an absolute http(s) URL (the whole string, nothing around it), else null:
 * `javascript:`, `data:` and every other scheme, relative paths and text that only contains a URL stay text.
 * Returns the URL as the browser parses it.
 */
export function httpUrl(value: string): string | null {
  if (!/^https?:\/\/\S+$/i.test(value)) return null;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** Characters from which a value is shown clamped (three lines) with a button that shows it all. */
export const CLAMP_CHARS = 200;

/**
 * A value of a row, wherever rows are shown (a job's rows, a run's changes, a tool's tables): {@link cellText}, an
 * absolute http(s) URL as a link opened in a new tab (`rel="noopener noreferrer"`, never another scheme), and a long
 * value ({@link CLAMP_CHARS} characters or more, or more than three lines) clamped to three lines with a button
 * ("Show all" / "Show less", `aria-expanded`) that shows it whole; the button is there while the clamp hides part of
 * the value (a wide column may show it all in three lines; a ResizeObserver follows the width). The whole text stays
 * in the page either way (found by the browser's search, read by screen readers). `label` names the value in the
 * button's accessible name.
 */
export function CellValue({ value, label }: { value: unknown; label: string }) {
  const [open, setOpen] = useState(false);
  const [cut, setCut] = useState(false);
  const box = useRef<HTMLSpanElement>(null);
  const id = useId();
  const text = cellText(value);
  const href = typeof value === 'string' ? httpUrl(value.trim()) : null;
  const long = text.length >= CLAMP_CHARS || text.split('\n').length > 3;
  useLayoutEffect(() => {
    const el = box.current;
    if (!el || open) return;
    const check = () => setCut(el.scrollHeight > el.clientHeight + 1);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(el);
    return () => observer.disconnect();
  }, [open, text, long]);
  const content = href ? (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {text}
    </a>
  ) : (
    text
  );
  if (!long) return <span class="cell-value">{content}</span>;
  return (
    <span class="cell-long">
      <span id={id} ref={box} class={open ? 'cell-value' : 'cell-value clamped'} data-testid="clamped-value">
        {content}
      </span>
      {(open || cut) && (
        <button type="button" class="link cell-toggle" aria-expanded={open} aria-controls={id} aria-label={`${open ? 'Show less of' : 'Show all of'} ${label}`} onClick={() => setOpen(!open)}>
          {open ? 'Show less' : 'Show all'}
        </button>
      )}
    </span>
  );
}
