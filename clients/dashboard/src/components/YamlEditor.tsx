/**
 * The YAML editor: a plain `<textarea>` (monospace, no wrapping, so that a line on screen is a line of the
 * file) with a line-number gutter kept in scroll sync, the erroring lines marked in the gutter, and the
 * error list under it. Each error reads "line L, column C: message" as the API reports it (details of
 * `invalid_config`: 1-based line and column, docs/errors.md); activating one puts the caret there.
 */
import { useRef } from 'preact/hooks';
import type { ErrorDetail } from '../api.ts';

/** Props of {@link YamlEditor}. */
export interface YamlEditorProps {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  /** The API's error details; those with a `line` are marked and listed with it. */
  errors: ErrorDetail[];
}

/** The character offset of 1-based `line`/`column` in `text`, clamped to the line's end and the text's. */
export function offsetOf(text: string, line: number, column: number): number {
  const lines = text.split('\n');
  const l = Math.min(Math.max(1, line), lines.length);
  let offset = 0;
  for (let i = 0; i < l - 1; i++) offset += lines[i]!.length + 1;
  return offset + Math.min(Math.max(0, column - 1), lines[l - 1]!.length);
}

/** "line 5, column 3: message" (or the path when the API gave no position). */
export function describeError(e: ErrorDetail): string {
  const where = e.line ? `line ${e.line}${e.column ? `, column ${e.column}` : ''}` : e.path ? `at ${e.path}` : '';
  const message = e.message ?? 'invalid';
  return where ? `${where}: ${message}` : message;
}

/** The editor. */
export function YamlEditor({ id, label, value, onInput, errors }: YamlEditorProps) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lineCount = value.split('\n').length;
  const badLines = new Set(errors.map((e) => e.line).filter((l): l is number => typeof l === 'number'));
  const errorsId = `${id}-errors`;

  const goTo = (e: ErrorDetail) => {
    const el = area.current;
    if (!el || !e.line) return;
    const offset = offsetOf(el.value, e.line, e.column ?? 1);
    el.focus();
    el.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(el).lineHeight) || 20;
    const top = (e.line - 1) * lineHeight;
    if (top < el.scrollTop || top > el.scrollTop + el.clientHeight - 2 * lineHeight) el.scrollTop = Math.max(0, top - el.clientHeight / 3);
    if (gutter.current) gutter.current.scrollTop = el.scrollTop;
  };

  return (
    <div class="yaml-editor">
      <label for={id}>{label}</label>
      <div class="editor-box">
        <div class="gutter" ref={gutter} aria-hidden="true" data-testid="gutter">
          {Array.from({ length: lineCount }, (_, i) => (
            <div key={i} class={badLines.has(i + 1) ? 'gutter-line gutter-error' : 'gutter-line'}>
              {i + 1}
            </div>
          ))}
        </div>
        <textarea
          id={id}
          ref={area}
          class="code"
          wrap="off"
          spellcheck={false}
          autocapitalize="off"
          autocomplete="off"
          rows={22}
          value={value}
          aria-invalid={errors.length > 0}
          aria-describedby={errors.length > 0 ? errorsId : undefined}
          onInput={(e) => onInput(e.currentTarget.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      <div id={errorsId} aria-live="polite">
        {errors.length > 0 && (
          <>
            <p class="errors-title">
              {errors.length === 1 ? '1 error' : `${errors.length} errors`} in the config:
            </p>
            <ul class="yaml-errors" data-testid="yaml-errors">
              {errors.map((e, i) => (
                <li key={i}>
                  {e.line ? (
                    <button type="button" class="link" onClick={() => goTo(e)}>
                      {describeError(e)}
                    </button>
                  ) : (
                    describeError(e)
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </div>
  );
}
