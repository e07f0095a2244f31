/**
 * Create or edit a config. New: name, target URL and YAML → `POST /api/v1/configs/`. Existing: loaded with
 * `GET /api/v1/configs/{id}/`, saved with `PUT /api/v1/configs/{id}/ {yaml_content}`. While typing, the YAML
 * is checked with `POST /api/v1/configs/validate/` 400 ms after the last keystroke (and on "Check"); an
 * `invalid_config` answer's details (`[{path, line, column, message}]`) are shown in the editor. A saved config's
 * page also lists its schedules and adds them (components/ConfigSchedules.tsx).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorText, request, type Config, type ErrorDetail } from '../api.ts';
import { ErrorAlert, Status } from '../components/ui.tsx';
import { YamlEditor } from '../components/YamlEditor.tsx';
import { ConfigSchedules } from '../components/ConfigSchedules.tsx';
import { runConfig } from './ConfigList.tsx';

/** Milliseconds after the last keystroke before the YAML is validated. */
const VALIDATE_DELAY_MS = 400;

/** A starting point for a new config (docs/config-language.md). */
function starterYaml(url: string): string {
  return `version: "2.0"
name: My config
target:
  url: ${url || 'https://example.com/'}
  engine: auto
extract:
  container: article
  type: list
  fields:
    - name: title
      selector: h2
      type: text
      transform: [strip]
    - name: link
      selector: a
      type: link
output:
  format: json
`;
}

/** The editor page; `id` null creates a new config. */
export function ConfigEdit({ id }: { id: string | null }) {
  const [config, setConfig] = useState<Config | null>(null);
  const [name, setName] = useState('');
  const [targetUrl, setTargetUrl] = useState('');
  const [yaml, setYaml] = useState(id ? '' : starterYaml(''));
  const [yamlErrors, setYamlErrors] = useState<ErrorDetail[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const checkSeq = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout>>();

  useEffect(() => {
    if (!id) return;
    request<Config>(`/configs/${id}/`).then(
      (c) => {
        setConfig(c);
        setName(c.name);
        setTargetUrl(c.target_url);
        setYaml(c.yaml_content);
      },
      (err) => setError(errorText(err)),
    );
  }, [id]);
  useEffect(() => () => clearTimeout(timer.current), []);

  /** Validates `text`; a later check wins over an earlier one still in flight. */
  const check = async (text: string, announce: boolean) => {
    const seq = ++checkSeq.current;
    try {
      await request('/configs/validate/', { method: 'POST', body: { yaml_content: text } });
      if (seq !== checkSeq.current) return;
      setYamlErrors([]);
      if (announce) setStatus('The config is valid.');
    } catch (err) {
      if (seq !== checkSeq.current) return;
      if (err instanceof ApiError && err.code === 'invalid_config') {
        setYamlErrors(err.details);
        if (announce) setStatus(`The config has ${err.details.length === 1 ? 'an error' : `${err.details.length} errors`}.`);
      } else if (announce) {
        setError(errorText(err));
      }
    }
  };

  const onYaml = (text: string) => {
    setYaml(text);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => void check(text, false), VALIDATE_DELAY_MS);
  };

  const save = async (e: Event) => {
    e.preventDefault();
    clearTimeout(timer.current);
    checkSeq.current++;
    setBusy(true);
    setError(null);
    setStatus('');
    try {
      if (id) {
        const saved = await request<Config>(`/configs/${id}/`, { method: 'PUT', body: { yaml_content: yaml } });
        setConfig(saved);
        setYamlErrors([]);
        setStatus(`Saved ${saved.name}.`);
      } else {
        const created = await request<Config>('/configs/', { method: 'POST', body: { name: name.trim(), target_url: targetUrl.trim(), yaml_content: yaml } });
        setYamlErrors([]);
        location.hash = `#/configs/${created.id}`;
        return;
      }
    } catch (err) {
      setError(errorText(err));
      if (err instanceof ApiError && err.code === 'invalid_config') setYamlErrors(err.details);
    }
    setBusy(false);
  };

  const run = async () => {
    if (!id) return;
    setBusy(true);
    setError(null);
    try {
      await runConfig(id);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  if (id && !config && !error) return <section><h1 tabIndex={-1}>Edit config</h1><Status>Loading…</Status></section>;
  return (
    <section>
      <h1 tabIndex={-1}>{id ? `Edit ${config?.name ?? 'config'}` : 'New config'}</h1>
      <p>
        <a href="#/configs">← All configs</a> · The language: version, target, extract (container, fields), pagination, output.
      </p>
      <form class="stack" onSubmit={save} data-testid="config-form">
        {id ? (
          <dl class="facts">
            <dt>Name</dt>
            <dd>{config?.name}</dd>
            <dt>Target URL</dt>
            <dd class="url">{config?.target_url}</dd>
          </dl>
        ) : (
          <>
            <label for="config-name">Name</label>
            <input id="config-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            <label for="config-url">Target URL</label>
            <input id="config-url" type="url" required placeholder="https://…" value={targetUrl} onInput={(e) => setTargetUrl(e.currentTarget.value)} />
          </>
        )}
        <YamlEditor id="config-yaml" label="YAML" value={yaml} onInput={onYaml} errors={yamlErrors} />
        <ErrorAlert message={error} />
        <Status>{status}</Status>
        <div class="button-row">
          <button type="submit" disabled={busy}>
            {id ? 'Save' : 'Create'}
          </button>
          <button type="button" class="secondary" onClick={() => check(yaml, true)}>
            Check
          </button>
          {id && (
            <button type="button" class="secondary" disabled={busy} onClick={run}>
              Run
            </button>
          )}
        </div>
      </form>
      {id && config && <ConfigSchedules configId={id} configName={config.name} />}
    </section>
  );
}
