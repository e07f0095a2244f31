/**
 * The eight website-analysis tools (`POST /api/v1/tools/<name>/ {url, …options}`, docs/tools.md): a list,
 * and per tool a form with its optional parameters and its result shown for people, with the raw JSON
 * under it. The screenshot tool answers the image's bytes; they are shown from a blob URL, and Download saves them
 * as `screenshot-<host>-<date>.<ext>`.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText, requestRaw, saveBlob } from '../api.ts';
import { ErrorAlert, RawJson, Status } from '../components/ui.tsx';
import { ToolResult } from '../components/ToolResults.tsx';

/** One optional parameter of a tool, as its form shows it. */
interface ToolOption {
  key: string;
  label: string;
  kind: 'checkbox' | 'number' | 'select' | 'list';
  min?: number;
  max?: number;
  step?: number;
  choices?: string[];
  hint?: string;
}

/** A tool: its API name, title, what it does, its options (docs/openapi.json request bodies). */
interface Tool {
  name: string;
  title: string;
  about: string;
  options: ToolOption[];
}

/** The tools in docs/spec.md's order. */
export const TOOLS: Tool[] = [
  { name: 'seo-analyzer', title: 'SEO analyzer', about: "Lighthouse's ten SEO audits and score, metadata, Open Graph, headings, structured data.", options: [] },
  { name: 'tech-detector', title: 'Technology detector', about: 'Technologies, frameworks and infrastructure, from Wappalyzer-format fingerprints.', options: [{ key: 'render', label: 'Render the page in a browser (tests JavaScript globals too)', kind: 'checkbox' }] },
  { name: 'lead-generation', title: 'Lead generation', about: 'Email addresses, phone numbers and social profiles on the page.', options: [{ key: 'follow_contact_pages', label: "Also read the site's contact pages", kind: 'checkbox' }] },
  {
    name: 'screenshot',
    title: 'Screenshot',
    about: 'An image of the page as Chromium shows it.',
    options: [
      { key: 'format', label: 'Format', kind: 'select', choices: ['png', 'jpeg', 'webp'] },
      { key: 'full_page', label: 'The whole page, not only the viewport', kind: 'checkbox' },
      { key: 'width', label: 'Viewport width (CSS px)', kind: 'number', min: 100, max: 3840, hint: '1366 by default' },
      { key: 'height', label: 'Viewport height (CSS px)', kind: 'number', min: 100, max: 2160, hint: '900 by default' },
      { key: 'device_scale_factor', label: 'Device scale factor', kind: 'number', min: 0.5, max: 3, step: 0.5, hint: '1 by default' },
      { key: 'delay', label: 'Extra wait before the shot (ms)', kind: 'number', min: 0, max: 10000 },
    ],
  },
  { name: 'content-extractor', title: 'Content extractor', about: "The article's title, byline, date and text (Mozilla Readability).", options: [] },
  {
    name: 'broken-link-checker',
    title: 'Broken link checker',
    about: "Every link on the page checked: broken, redirected, timed out or fine.",
    options: [
      { key: 'depth', label: 'Depth (pages of the same site to follow)', kind: 'number', min: 0, max: 3, hint: '0 by default: this page only' },
      { key: 'max_links', label: 'Most links to check', kind: 'number', min: 1, max: 10000, hint: '500 by default' },
    ],
  },
  { name: 'dns-whois', title: 'DNS and WHOIS', about: 'DNS records, addresses and their reverse names, registration data (RDAP or WHOIS).', options: [{ key: 'servers', label: 'DNS servers (IP[:port], comma-separated, up to 4)', kind: 'list' }] },
  { name: 'ssl-checker', title: 'SSL checker', about: "The certificate, its chain and expiry, protocols, ciphers, HSTS and a grade.", options: [{ key: 'port', label: 'Port', kind: 'number', min: 1, max: 65535, hint: "the URL's, else 443" }] },
];

/** The tools page: one link per tool. */
export function ToolList() {
  return (
    <section>
      <h1 tabIndex={-1}>Tools</h1>
      <ul class="cards">
        {TOOLS.map((t) => (
          <li key={t.name} class="card">
            <h2>
              <a href={`#/tools/${t.name}`}>{t.title}</a>
            </h2>
            <p>{t.about}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The request body from the form's values: `url` and each option that was set. */
function bodyOf(tool: Tool, url: string, values: Record<string, string | boolean>): Record<string, unknown> {
  const body: Record<string, unknown> = { url: url.trim() };
  for (const o of tool.options) {
    const v = values[o.key];
    if (o.kind === 'checkbox') {
      if (v === true) body[o.key] = true;
    } else if (typeof v === 'string' && v.trim() !== '') {
      if (o.kind === 'number') body[o.key] = Number(v);
      else if (o.kind === 'list') body[o.key] = v.split(',').map((s) => s.trim()).filter(Boolean);
      else body[o.key] = v;
    }
  }
  return body;
}

/** What a tool answered: JSON, or an image (the screenshot) with its blob URL. */
type Answer = { kind: 'json'; value: unknown } | { kind: 'image'; blob: Blob; src: string; type: string; bytes: number; pageUrl: string };

/** The file extension of an image type (`image/jpeg` → `jpg`). */
function imageExtension(type: string): string {
  const sub = type.replace(/^image\//, '').replace(/[;+].*$/, '').toLowerCase();
  return sub === 'jpeg' ? 'jpg' : sub || 'png';
}

/** `screenshot-example.com-2026-11-24.png`: the page's host (file-safe) and today's date, with the image's extension. */
export function screenshotFileName(pageUrl: string, type: string, now = new Date()): string {
  let host = '';
  try {
    host = new URL(pageUrl.trim()).host;
  } catch {
    /* no host: the name without it */
  }
  const safe = host.toLowerCase().replace(/[^a-z0-9.]+/g, '-').replace(/^[-.]+|[-.]+$/g, '').slice(0, 80);
  return `screenshot-${safe ? `${safe}-` : ''}${now.toISOString().slice(0, 10)}.${imageExtension(type)}`;
}

/** One tool's page. */
export function ToolPage({ name }: { name: string }) {
  const tool = TOOLS.find((t) => t.name === name);
  const [url, setUrl] = useState('');
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // A screenshot's blob URL lives while it is shown.
  useEffect(() => () => {
    if (answer?.kind === 'image') URL.revokeObjectURL(answer.src);
  }, [answer]);

  if (!tool) {
    return (
      <section>
        <h1 tabIndex={-1}>No such tool</h1>
        <p>
          <a href="#/tools">See the tools</a>
        </p>
      </section>
    );
  }

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setAnswer(null);
    try {
      const res = await requestRaw(`/tools/${tool.name}/`, { method: 'POST', body: bodyOf(tool, url, values), accept: tool.name === 'screenshot' ? 'image/*' : 'application/json' });
      const type = res.headers.get('content-type') ?? '';
      if (type.startsWith('image/')) {
        const blob = await res.blob();
        setAnswer({ kind: 'image', blob, src: URL.createObjectURL(blob), type: blob.type, bytes: blob.size, pageUrl: url });
      } else {
        setAnswer({ kind: 'json', value: await res.json() });
      }
    } catch (err) {
      setError(errorText(err));
    }
    setBusy(false);
  };

  const set = (key: string, v: string | boolean) => setValues({ ...values, [key]: v });
  return (
    <section>
      <h1 tabIndex={-1}>{tool.title}</h1>
      <p>
        <a href="#/tools">← All tools</a> · {tool.about}
      </p>
      <form class="stack" onSubmit={submit} data-testid="tool-form">
        <label for="tool-url">URL</label>
        <input id="tool-url" type="url" required placeholder="https://…" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        {tool.options.map((o) => {
          const id = `tool-${o.key}`;
          if (o.kind === 'checkbox') {
            return (
              <label class="check" key={o.key}>
                <input type="checkbox" checked={values[o.key] === true} onChange={(e) => set(o.key, e.currentTarget.checked)} /> {o.label}
              </label>
            );
          }
          return (
            <div key={o.key} class="stack">
              <label for={id}>{o.label}</label>
              {o.kind === 'select' ? (
                <select id={id} value={String(values[o.key] ?? o.choices?.[0] ?? '')} onChange={(e) => set(o.key, e.currentTarget.value)}>
                  {o.choices?.map((c) => (
                    <option key={c} value={c}>
                      {c}
                    </option>
                  ))}
                </select>
              ) : (
                <input id={id} type={o.kind === 'number' ? 'number' : 'text'} min={o.min} max={o.max} step={o.step} placeholder={o.hint} value={String(values[o.key] ?? '')} onInput={(e) => set(o.key, e.currentTarget.value)} />
              )}
            </div>
          );
        })}
        <ErrorAlert message={error} />
        <div class="button-row">
          <button type="submit" disabled={busy}>
            {busy ? 'Running…' : 'Run'}
          </button>
        </div>
      </form>
      <Status>{busy ? `Running the ${tool.title.toLowerCase()}…` : answer ? 'Done.' : ''}</Status>
      {answer && (
        <div class="panel" data-testid="tool-result">
          <h2>Result</h2>
          {answer.kind === 'image' ? (
            <>
              <figure class="shot">
                <img src={answer.src} alt={`Screenshot of ${url}`} data-testid="screenshot" />
                <figcaption>
                  {answer.type}, {(answer.bytes / 1024).toFixed(1)} KiB
                </figcaption>
              </figure>
              <div class="button-row">
                <button type="button" data-testid="screenshot-download" onClick={() => saveBlob(answer.blob, screenshotFileName(answer.pageUrl, answer.type))}>
                  Download {imageExtension(answer.type).toUpperCase()}
                </button>
              </div>
            </>
          ) : (
            <>
              <ToolResult tool={tool.name} value={answer.value} />
              <RawJson value={answer.value} />
            </>
          )}
        </div>
      )}
    </section>
  );
}
