/**
 * The popup: run a config on the current tab (Quick Test or a full run with progress and stop), suggest a
 * config from the page's records, edit configs with validation (line and column), sync them with the
 * service, and export the rows (JSON, CSV with BOM, XLSX) with the service's own export code.
 *
 * Views: Run, Configs (list and editor) and Account. The account and the last synced configs live in
 * browser.storage.local, so the list and the YAML of each config are there offline; runs live in the
 * background service worker (lib/runner.ts), which tells the popup how they go.
 */
import { browser } from 'wxt/browser';
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ScrapeAI, DEFAULT_BASE_URL } from '../../../../typescript/src/client.ts';
import { ScrapeAIError } from '../../../../typescript/src/errors.ts';
import type { Config } from '../../../../typescript/src/types.ts';
import { parseConfig, ConfigError, type ConfigProblem } from '../../../../../lambdas/engine/config.ts';
import { checkCellOptions, DEFAULT_LIST_SEPARATOR, exportRows, exportColumns, MAX_LIST_SEPARATOR, type ExportFormat, type ListStyle } from '../../../../../lambdas/export/rows-export.ts';
import { YamlEditor } from '../../../../dashboard/src/components/YamlEditor.tsx';
import { TableBox, cellText } from '../../../../dashboard/src/components/ui.tsx';
import { saveBlob } from '../../../../dashboard/src/api.ts';
import { ask, STORAGE, type RunStateEvent } from '../../lib/messages.ts';
import { QUICK_TEST_MAX_ITEMS, type RunState } from '../../lib/runner.ts';
import { exportFileName } from '../../lib/files.ts';
import '../../../../dashboard/src/styles.css';
import './popup.css';

/** The service the extension was built for (`SAI_SERVICE_URL` at build time), else the local service's address. */
const BUILT_SERVICE_URL: string = import.meta.env.WXT_SAI_SERVICE_URL || DEFAULT_BASE_URL;

interface Account { baseUrl: string; apiKey: string; email: string | null; plan: string | null }
interface SyncedConfigs { syncedAt: number; baseUrl: string; configs: Config[] }
type View = 'run' | 'configs' | 'account';
/** The config being edited: a saved one (with its id) or a new one. */
interface Editing { id: string | null; name: string; yaml: string }

async function stored<T>(key: string): Promise<T | null> {
  return ((await browser.storage.local.get(key))[key] as T | undefined) ?? null;
}

function problemsOf(err: unknown): ConfigProblem[] {
  if (err instanceof ConfigError) return err.details;
  if (err instanceof ScrapeAIError && err.code === 'invalid_config') return (err.details ?? []) as ConfigProblem[];
  return [{ path: '', message: (err as Error)?.message ?? String(err) }];
}

/** Local validation with the service's parser (offline, immediate). */
function validate(yaml: string): ConfigProblem[] {
  if (!yaml.trim()) return [];
  try {
    parseConfig(yaml);
    return [];
  } catch (err) {
    return problemsOf(err);
  }
}

/**
 * Whether the extension may read other tabs of `pageUrl`'s site (for detail pages in a background tab): a
 * host permission it holds, else one asked for now (optional_host_permissions; Chrome shows its prompt, which
 * closes the popup: the answer is kept, and the next Run finds it).
 */
async function siteAccess(pageUrl: string): Promise<boolean> {
  let origins: string[];
  try {
    const u = new URL(pageUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
    origins = [`${u.protocol}//${u.hostname}/*`];
  } catch {
    return false;
  }
  if (await browser.permissions.contains({ origins })) return true;
  return browser.permissions.request({ origins });
}

/** What the popup shows from the click until the service worker reports: a new run, not the last one's rows. */
function startingRun(mode: RunState['mode'], startUrl: string): RunState {
  return { mode, status: 'running', configName: '', startUrl, progress: 0, pagesScraped: 0, itemsFound: 0, message: mode === 'quick' ? 'Quick Test…' : 'Starting', warnings: [], rows: [], startedAt: Date.now() };
}

function Rows({ rows, limit }: { rows: Record<string, unknown>[]; limit: number }) {
  const columns = exportColumns(rows);
  return (
    <TableBox label="Rows">
      <table data-testid="rows">
        <thead><tr><th scope="col">#</th>{columns.map((c) => <th key={c} scope="col">{c}</th>)}</tr></thead>
        <tbody>
          {rows.slice(0, limit).map((r, i) => (
            <tr key={i}><td>{i + 1}</td>{columns.map((c) => <td key={c}>{cellText(r[c])}</td>)}</tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

function Popup() {
  const [view, setView] = useState<View>('run');
  const [account, setAccount] = useState<Account | null>(null);
  const [synced, setSynced] = useState<SyncedConfigs | null>(null);
  const [editing, setEditing] = useState<Editing>({ id: null, name: '', yaml: '' });
  const [problems, setProblems] = useState<ConfigProblem[]>([]);
  const [tab, setTab] = useState<{ id: number; url: string } | null>(null);
  const [run, setRun] = useState<RunState | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [notice, setNotice] = useState<{ kind: 'error' | 'ok'; text: string } | null>(null);
  const [suggestNotes, setSuggestNotes] = useState<string[]>([]);
  /** How CSV and XLSX write a list (docs/exports.md, "Lists"): JSON text (the default) or joined with `listSeparator`. */
  const [lists, setLists] = useState<ListStyle>('json');
  const [listSeparator, setListSeparator] = useState(DEFAULT_LIST_SEPARATOR);
  const loaded = useRef(false);
  const [ready, setReady] = useState(false);

  useEffect(() => {
    void (async () => {
      const [active] = await browser.tabs.query({ active: true, currentWindow: true });
      if (active?.id !== undefined) setTab({ id: active.id, url: active.url ?? '' });
      setAccount(await stored<Account>(STORAGE.account));
      setSynced(await stored<SyncedConfigs>(STORAGE.configs));
      const draft = await stored<Editing>(STORAGE.draft);
      if (draft) setEditing(draft);
      setRun(await ask({ type: 'state' }));
      loaded.current = true;
      setReady(true);
    })();
    const onMessage = (m: RunStateEvent) => { if (m?.type === 'run-state') setRun(m.state); };
    browser.runtime.onMessage.addListener(onMessage);
    return () => browser.runtime.onMessage.removeListener(onMessage);
  }, []);

  // Validate as the user types (debounced) and keep the text as a draft, so closing the popup loses nothing.
  useEffect(() => {
    const t = setTimeout(() => {
      setProblems(validate(editing.yaml));
      if (loaded.current) void browser.storage.local.set({ [STORAGE.draft]: editing });
    }, 250);
    return () => clearTimeout(t);
  }, [editing]);

  const client = useMemo(() => (account ? new ScrapeAI({ apiKey: account.apiKey, baseUrl: account.baseUrl, maxRetries: 1, timeoutMs: 15_000 }) : null), [account]);

  const act = async (label: string, fn: () => Promise<void>) => {
    setBusy(label);
    setNotice(null);
    try {
      await fn();
    } catch (err) {
      setNotice({ kind: 'error', text: err instanceof ScrapeAIError ? `${err.message}${err.code ? ` (${err.code})` : ''}` : (err as Error).message });
      if (err instanceof ScrapeAIError && err.code === 'invalid_config') setProblems(problemsOf(err));
    } finally {
      setBusy(null);
    }
  };

  /** The editor's config, parsed; its problems are listed and an Error thrown (`fix`: what to tell the user) when it has any. */
  const validConfig = (fix: string) => {
    const local = validate(editing.yaml);
    if (local.length) {
      setProblems(local);
      throw new Error(`The config has errors: ${fix}`);
    }
    return parseConfig(editing.yaml);
  };

  const sync = () => act('sync', async () => {
    if (!client || !account) throw new Error('Sign in first (Account)');
    const list = await client.listConfigs();
    const configs = await Promise.all(list.results.map((c) => client.getConfig(c.id)));
    const next: SyncedConfigs = { syncedAt: Date.now(), baseUrl: account.baseUrl, configs };
    await browser.storage.local.set({ [STORAGE.configs]: next });
    setSynced(next);
    setNotice({ kind: 'ok', text: `Synced ${configs.length} config(s)` });
  });

  const save = () => act('save', async () => {
    if (!client) throw new Error('Sign in first (Account)');
    const config = validConfig('fix them before saving');
    const saved = editing.id
      ? await client.updateConfig(editing.id, editing.yaml)
      : await client.createConfig({ name: config.name ?? 'Untitled config', target_url: config.target.url, yaml_content: editing.yaml });
    const configs = [...(synced?.configs ?? []).filter((c) => c.id !== saved.id), saved];
    const next: SyncedConfigs = { syncedAt: synced?.syncedAt ?? Date.now(), baseUrl: account!.baseUrl, configs };
    await browser.storage.local.set({ [STORAGE.configs]: next });
    setSynced(next);
    setEditing({ id: saved.id, name: saved.name, yaml: saved.yaml_content });
    setNotice({ kind: 'ok', text: `Saved "${saved.name}"` });
  });

  const signIn = (baseUrl: string, key: string, email: string, password: string) => act('sign-in', async () => {
    const options = { baseUrl: baseUrl.trim() || BUILT_SERVICE_URL, maxRetries: 1, timeoutMs: 15_000 };
    let next: Account;
    if (key.trim()) {
      const me = await new ScrapeAI({ ...options, apiKey: key.trim() }).me();
      next = { baseUrl: options.baseUrl, apiKey: key.trim(), email: me.user.email, plan: me.subscription.plan };
    } else {
      const c = await ScrapeAI.login(email.trim(), password, options);
      next = { baseUrl: options.baseUrl, apiKey: c.apiKey!, email: c.account!.email, plan: c.account!.plan };
    }
    await browser.storage.local.set({ [STORAGE.account]: next });
    setAccount(next);
    setNotice({ kind: 'ok', text: `Signed in${next.email ? ` as ${next.email}` : ''}` });
  });

  const signOut = async () => {
    await browser.storage.local.remove([STORAGE.account, STORAGE.configs]);
    setAccount(null);
    setSynced(null);
  };

  const quickTest = () => act('quick-test', async () => {
    if (!tab) throw new Error('No current tab');
    setRun(startingRun('quick', tab.url));
    const ended = await ask({ type: 'quick-test', tabId: tab.id, yaml: editing.yaml });
    setRun(ended);
    if (ended.error?.code === 'invalid_config') setProblems(ended.error.details as ConfigProblem[]);
  });

  const fullRun = () => act('run', async () => {
    if (!tab) throw new Error('No current tab');
    const config = validConfig('fix them in Configs');
    if (config.detail_fields && !(await siteAccess(tab.url))) {
      throw new Error(`Detail pages open in a background tab, which needs access to ${new URL(tab.url).origin}: allow it when Chrome asks, then press Run again`);
    }
    setRun(startingRun('full', tab.url));
    const answer = await ask({ type: 'run', tabId: tab.id, yaml: editing.yaml });
    if (!answer.started) {
      setRun(await ask({ type: 'state' }));
      throw new Error(answer.reason);
    }
  });

  const suggest = () => act('suggest', async () => {
    if (!tab) throw new Error('No current tab');
    const answer = await ask({ type: 'suggest', tabId: tab.id });
    if (!answer.ok) throw new Error(answer.message);
    const s = answer.suggestion;
    setEditing({ id: null, name: parseConfig(s.yaml).name ?? '', yaml: s.yaml });
    setSuggestNotes(s.notes);
    setRun({ mode: 'quick', status: 'completed', configName: 'Suggestion', startUrl: tab.url, progress: 100, pagesScraped: 1, itemsFound: s.rows.length, message: `Suggested: ${s.rows.length} record(s) of ${s.container}`, warnings: [], rows: s.rows.slice(0, QUICK_TEST_MAX_ITEMS), startedAt: Date.now(), finishedAt: Date.now() });
  });

  const exportAs = (format: ExportFormat) => act(`export-${format}`, async () => {
    if (!run?.rows.length) throw new Error('No rows to export');
    // An emptied separator box joins with the default one, as the service does when none is given.
    const cells = checkCellOptions(lists === 'join' ? { lists, listSeparator: listSeparator || DEFAULT_LIST_SEPARATOR } : {});
    const file = await exportRows(run.rows, format, { sheetName: run.configName, ...cells });
    saveBlob(new Blob([file.body as BlobPart], { type: file.contentType }), exportFileName(run.configName || editing.name, format, new Date(run.finishedAt ?? Date.now())));
  });

  const running = run?.status === 'running';
  /** The editor's config as the picker names it: its YAML's name (the YAML may have been edited or pasted). */
  const editorName = useMemo(() => {
    try {
      return parseConfig(editing.yaml).name || 'Unsaved config';
    } catch {
      return editing.name || 'Unsaved config';
    }
  }, [editing.yaml]);
  return (
    <div class="popup" data-ready={ready ? 'true' : undefined} aria-busy={!ready}>
      <header class="popup-head">
        <strong>scrape-ai</strong>
        <nav aria-label="Views">
          {(['run', 'configs', 'account'] as const).map((v) => (
            <button key={v} type="button" class={view === v ? 'tab active' : 'tab'} aria-current={view === v ? 'page' : undefined} onClick={() => setView(v)} data-view={v}>
              {v === 'run' ? 'Run' : v === 'configs' ? 'Configs' : 'Account'}
            </button>
          ))}
        </nav>
        <span class="who" data-testid="who">{account ? account.email ?? 'signed in' : 'not signed in'}</span>
      </header>
      {notice && <p role={notice.kind === 'error' ? 'alert' : 'status'} class={notice.kind === 'error' ? 'notice error' : 'notice ok'} data-testid="notice">{notice.text}</p>}

      {view === 'run' && (
        <main>
          <p class="page-url" title={tab?.url}>Page: <code>{tab?.url || '—'}</code></p>
          <label for="pick">Config</label>
          <select id="pick" onChange={(e) => {
            const c = synced?.configs.find((x) => x.id === e.currentTarget.value);
            if (c) setEditing({ id: c.id, name: c.name, yaml: c.yaml_content });
          }}>
            <option value="" selected={!editing.id}>{editing.id ? '—' : editing.yaml ? `${editorName} (editor)` : 'Pick a config, or suggest one'}</option>
            {synced?.configs.map((c) => <option key={c.id} value={c.id} selected={editing.id === c.id}>{c.name}</option>)}
          </select>
          {problems.length > 0 && <p class="notice error" data-testid="config-problems">The config has {problems.length} error(s): see Configs</p>}
          <div class="actions" hidden={!ready}>
            <button type="button" onClick={quickTest} disabled={!editing.yaml || running || busy !== null} data-testid="quick-test">Quick Test</button>
            <button type="button" onClick={fullRun} disabled={!editing.yaml || running || busy !== null} data-testid="run">Run</button>
            {running && <button type="button" class="danger" onClick={() => void ask({ type: 'stop' })} data-testid="stop">Stop</button>}
            <button type="button" class="secondary" onClick={suggest} disabled={running || busy !== null} data-testid="suggest">Suggest</button>
          </div>
          {suggestNotes.length > 0 && <ul class="notes">{suggestNotes.map((n) => <li key={n}>{n}</li>)}</ul>}
          {run && (
            <section aria-label="Run" data-testid="run-state" data-status={run.status} data-mode={run.mode} data-started={String(run.startedAt)}>
              <progress max={100} value={run.progress} aria-label="Progress" />
              <p data-testid="run-message">{run.status === 'failed' && run.error ? `${run.error.code}: ${run.message}` : run.message}</p>
              {run.status === 'running' && <p class="muted">{run.pagesScraped} page(s), {run.itemsFound} item(s)</p>}
              {run.error && (
                <ul class="yaml-errors">
                  {(run.error.details as ConfigProblem[]).filter((d) => d && (d.line || d.message)).slice(0, 5).map((d, i) => <li key={i}>{d.line ? `line ${d.line}, column ${d.column}: ` : ''}{d.message}</li>)}
                </ul>
              )}
              {run.warnings.length > 0 && <ul class="notes">{run.warnings.map((w) => <li key={w}>{w}</li>)}</ul>}
              {run.rows.length > 0 && (
                <>
                  <p data-testid="row-count">{run.rows.length} row(s){run.mode === 'quick' ? ' (Quick Test: first page, at most 20)' : ''}</p>
                  <div class="actions">
                    {(['json', 'csv', 'xlsx'] as const).map((f) => <button key={f} type="button" class="secondary" onClick={() => exportAs(f)} data-testid={`export-${f}`}>{f.toUpperCase()}</button>)}
                  </div>
                  <div class="actions" role="group" aria-label="Lists in CSV and XLSX">
                    <label>
                      Lists in CSV and XLSX{' '}
                      <select data-testid="lists" value={lists} onChange={(e) => setLists(e.currentTarget.value as ListStyle)}>
                        <option value="json">as JSON text</option>
                        <option value="join">joined</option>
                      </select>
                    </label>
                    {lists === 'join' && (
                      <label>
                        with{' '}
                        <input data-testid="list-separator" aria-label="List separator" size={4} maxLength={MAX_LIST_SEPARATOR} value={listSeparator} onInput={(e) => setListSeparator(e.currentTarget.value)} />
                      </label>
                    )}
                  </div>
                  <Rows rows={run.rows} limit={run.mode === 'quick' ? QUICK_TEST_MAX_ITEMS : 50} />
                </>
              )}
            </section>
          )}
        </main>
      )}

      {view === 'configs' && (
        <main>
          <div class="actions">
            <button type="button" onClick={sync} disabled={!account || busy !== null} data-testid="sync">Sync</button>
            <button type="button" class="secondary" onClick={() => setEditing({ id: null, name: '', yaml: '' })} data-testid="new">New</button>
            <span class="muted" data-testid="synced-at">{synced ? `Last synced ${new Date(synced.syncedAt).toLocaleString()}` : 'Never synced'}</span>
          </div>
          <ul class="config-list" data-testid="config-list">
            {synced?.configs.map((c) => (
              <li key={c.id}>
                <button type="button" class={editing.id === c.id ? 'link current' : 'link'} onClick={() => setEditing({ id: c.id, name: c.name, yaml: c.yaml_content })}>{c.name}</button>
                <span class="muted"> {c.target_url}</span>
              </li>
            ))}
          </ul>
          <YamlEditor id="yaml" label={editing.id ? `Editing "${editing.name}"` : 'New config (not saved)'} value={editing.yaml} onInput={(yaml) => setEditing({ ...editing, yaml })} errors={problems.map((p) => ({ ...p }))} />
          <div class="actions">
            <button type="button" onClick={save} disabled={!account || !editing.yaml || busy !== null} data-testid="save">{editing.id ? 'Save' : 'Save as new'}</button>
          </div>
        </main>
      )}

      {view === 'account' && (
        <main>
          {account ? (
            <>
              <p data-testid="account">Signed in{account.email ? ` as ${account.email}` : ''}{account.plan ? ` (${account.plan} plan)` : ''} at <code>{account.baseUrl}</code></p>
              <button type="button" class="secondary" onClick={() => void signOut()} data-testid="sign-out">Sign out</button>
            </>
          ) : (
            <SignIn busy={busy !== null} onSignIn={signIn} />
          )}
        </main>
      )}
    </div>
  );
}

function SignIn({ busy, onSignIn }: { busy: boolean; onSignIn: (baseUrl: string, key: string, email: string, password: string) => void }) {
  const [baseUrl, setBaseUrl] = useState(BUILT_SERVICE_URL);
  const [key, setKey] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  return (
    <form onSubmit={(e) => { e.preventDefault(); onSignIn(baseUrl, key, email, password); }} data-testid="sign-in">
      <label for="base">Service URL</label>
      <input id="base" type="url" value={baseUrl} onInput={(e) => setBaseUrl(e.currentTarget.value)} required />
      <label for="key">API key</label>
      <input id="key" type="password" autocomplete="off" placeholder="sai_…" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      <p class="muted">or your email and password:</p>
      <label for="email">Email</label>
      <input id="email" type="email" autocomplete="username" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      <label for="password">Password</label>
      <input id="password" type="password" autocomplete="current-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
      <div class="actions"><button type="submit" disabled={busy || (!key.trim() && (!email.trim() || !password))}>Sign in</button></div>
    </form>
  );
}

render(<Popup />, document.getElementById('app')!);
