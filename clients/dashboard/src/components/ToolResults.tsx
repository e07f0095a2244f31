/**
 * Each tool's result shown for people (field names from docs/tools.md and docs/openapi.json's report
 * schemas): the SEO score and failed audits, technologies by category, leads, the article, links with a state
 * filter, DNS records and WHOIS, the certificate and grade. Above each, {@link ResultErrors} lists every error the
 * answer carries (a 200 answer can: NXDOMAIN, WHOIS unreachable, a JSON-LD script that does not parse).
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { CellValue, cellText, httpUrl, TableBox } from './ui.tsx';

interface SeoAudit { id: string; title: string; passed: boolean; applicable: boolean; details?: { explanation?: string | null; items?: unknown[] } }
interface SeoReport { url: string; status: number; title: string | null; meta_description: string | null; score: number; audits: SeoAudit[]; word_count?: number; headings?: Record<string, string[]> }
interface Tech { name: string; version: string | null; categories: string[]; confidence: number; website: string | null }
interface TechReport { url: string; rendered: boolean; technologies: Tech[] }
interface LeadsReport { url: string; emails: { email: string }[]; phones: { e164: string; national: string; country: string | null }[]; social: { network: string; url: string; handle: string }[] }
interface ContentReport { title: string | null; byline: string | null; published_time: string | null; site_name: string | null; excerpt: string | null; text: string; word_count: number; reading_time_minutes: number }
interface Link { url: string; status: number | null; state: string; error: string | null; parents?: string[] }
interface LinksReport { url: string; links: Link[]; summary: Record<string, number> }
interface DnsReport { host: string; domain: string | null; dns: Record<string, unknown>; ips: { address: string; family: number; reverse?: string[] }[]; whois: Record<string, unknown> | null; dns_errors?: { type: string; message: string }[]; error?: { code: string; message: string } | null }
interface Cert { subject: string; issuer: string; san: string[]; valid_from: string; valid_to: string; days_to_expiry: number; key_type: string; key_bits: number | null }
interface SslReport { host: string; port: number; certificate: Cert; grade: string; grade_ignoring_trust: string; protocol: string; authorized: boolean; authorization_error: string | null; hostname_match: boolean; findings: { id: string; message: string }[] }

function Seo({ r }: { r: SeoReport }) {
  const failed = r.audits.filter((a) => a.applicable && !a.passed);
  return (
    <>
      <p class="score" data-testid="seo-score">
        <span class="score-value">{r.score}</span>
        <span> / 100 SEO score</span>
      </p>
      <meter min={0} max={100} low={50} high={90} optimum={100} value={r.score} aria-label="SEO score" />
      <dl class="facts">
        <dt>Title</dt>
        <dd>{r.title ?? '(none)'}</dd>
        <dt>Description</dt>
        <dd>{r.meta_description ?? '(none)'}</dd>
        <dt>HTTP status</dt>
        <dd>{r.status}</dd>
        {r.word_count !== undefined && (
          <>
            <dt>Words</dt>
            <dd>{r.word_count}</dd>
          </>
        )}
      </dl>
      <h3>Failed audits ({failed.length})</h3>
      {failed.length === 0 ? (
        <p>Every applicable audit passed.</p>
      ) : (
        <ul class="audits" data-testid="failed-audits">
          {failed.map((a) => (
            <li key={a.id}>
              <strong>{a.title}</strong> <code>{a.id}</code>
              {a.details?.explanation && <p>{a.details.explanation}</p>}
            </li>
          ))}
        </ul>
      )}
      <p class="hint">Passed: {r.audits.filter((a) => a.applicable && a.passed).map((a) => a.id).join(', ') || 'none'}.</p>
    </>
  );
}

function Techs({ r }: { r: TechReport }) {
  const groups = new Map<string, Tech[]>();
  for (const t of r.technologies) for (const c of t.categories.length ? t.categories : ['Other']) groups.set(c, [...(groups.get(c) ?? []), t]);
  if (groups.size === 0) return <p>No technology recognised{r.rendered ? '' : ' (try rendering the page)'}.</p>;
  return (
    <div class="groups" data-testid="tech-groups">
      {[...groups].map(([category, techs]) => (
        <section key={category} class="group">
          <h3>{category}</h3>
          <ul>
            {techs.map((t) => (
              <li key={t.name}>
                {t.name}
                {t.version ? ` ${t.version}` : ''} <span class="muted">({t.confidence}% sure)</span>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}

function Leads({ r }: { r: LeadsReport }) {
  return (
    <div class="groups">
      <section class="group">
        <h3>Emails ({r.emails.length})</h3>
        <ul>{r.emails.map((e) => <li key={e.email}>{e.email}</li>)}</ul>
      </section>
      <section class="group">
        <h3>Phones ({r.phones.length})</h3>
        <ul>{r.phones.map((p) => <li key={p.e164}>{p.national} <span class="muted">{p.e164}{p.country ? `, ${p.country}` : ''}</span></li>)}</ul>
      </section>
      <section class="group">
        <h3>Social ({r.social.length})</h3>
        <ul>{r.social.map((s) => <li key={s.url}>{s.network}: {s.handle} {httpUrl(s.url) ? <a class="url" href={httpUrl(s.url)!} target="_blank" rel="noopener noreferrer">{s.url}</a> : <span class="muted url">{s.url}</span>}</li>)}</ul>
      </section>
    </div>
  );
}

function Content({ r }: { r: ContentReport }) {
  return (
    <article class="article">
      <h3 data-testid="article-title">{r.title ?? '(no title)'}</h3>
      <p class="muted">
        {[r.byline, r.site_name, r.published_time].filter(Boolean).join(' · ') || 'No byline or date.'} · {r.word_count} words, {r.reading_time_minutes} min read
      </p>
      <div class="article-text">{r.text.length > 20_000 ? `${r.text.slice(0, 20_000)}…` : r.text}</div>
    </article>
  );
}

const LINK_STATES = ['all', 'broken', 'redirect', 'timeout', 'skipped', 'ok'];

function Links({ r }: { r: LinksReport }) {
  const [state, setState] = useState('all');
  const shown = r.links.filter((l) => state === 'all' || l.state === state);
  return (
    <>
      <p data-testid="links-summary">
        {['total', 'ok', 'broken', 'redirect', 'timeout', 'skipped'].map((k) => `${r.summary[k] ?? 0} ${k}`).join(' · ')}
      </p>
      <label for="link-state">Show</label>{' '}
      <select id="link-state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
        {LINK_STATES.map((s) => (
          <option key={s} value={s}>
            {s === 'all' ? 'all links' : s}
          </option>
        ))}
      </select>
      <TableBox label="Links">
        <table data-testid="links">
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">State</th>
              <th scope="col">HTTP</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((l) => (
              <tr key={l.url}>
                <td class="url">
                  <CellValue value={l.url} label={`the link ${l.url}`} />
                </td>
                <td>
                  <span class={`badge badge-${l.state}`}>{l.state}</span>
                </td>
                <td>{l.status ?? '—'}</td>
                <td>{l.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </>
  );
}

function recordText(v: unknown): string {
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if ('address' in o) return `${o.address}${o.ttl !== undefined ? ` (TTL ${o.ttl})` : ''}`;
    if ('exchange' in o) return `${o.priority} ${o.exchange}`;
    if ('value' in o) return String(o.value);
    return Object.entries(o).map(([k, x]) => `${k}: ${x}`).join(', ');
  }
  return cellText(v);
}

function Dns({ r }: { r: DnsReport }) {
  const rows = Object.entries(r.dns).flatMap(([type, v]) => (Array.isArray(v) ? v.map((x) => [type, recordText(x)]) : v ? [[type, recordText(v)]] : []));
  const whois = r.whois ?? {};
  const fields = ['source', 'registrar', 'created', 'updated', 'expires', 'status', 'nameservers', 'dnssec'];
  return (
    <>
      <h3>DNS records of {r.host}</h3>
      {rows.length === 0 ? <p>No records.</p> : (
        <TableBox label="DNS records">
          <table>
            <thead><tr><th scope="col">Type</th><th scope="col">Value</th></tr></thead>
            <tbody>{rows.map(([t, v], i) => <tr key={i}><td>{t}</td><td>{v}</td></tr>)}</tbody>
          </table>
        </TableBox>
      )}
      <h3>Addresses</h3>
      {r.ips.length === 0 ? (
        <p data-testid="no-addresses">No addresses{r.error ? ': the name was not looked up' : ': the name has no A or AAAA record'}.</p>
      ) : (
        <ul>{r.ips.map((ip) => <li key={ip.address}>{ip.address} {ip.reverse?.length ? <span class="muted">→ {ip.reverse.join(', ')}</span> : null}</li>)}</ul>
      )}
      <h3>Registration{r.domain ? ` of ${r.domain}` : ''}</h3>
      <dl class="facts">
        {fields.map((f) => (
          <Fragment key={f}>
            <dt>{f}</dt>
            <dd>{Array.isArray(whois[f]) ? (whois[f] as unknown[]).join(', ') || '—' : cellText(whois[f])}</dd>
          </Fragment>
        ))}
      </dl>
    </>
  );
}

function Ssl({ r }: { r: SslReport }) {
  const c = r.certificate;
  return (
    <>
      <p class="score">
        <span class="score-value" data-testid="ssl-grade">{r.grade}</span>
        <span> grade{r.grade !== r.grade_ignoring_trust ? ` (${r.grade_ignoring_trust} if the certificate were trusted)` : ''}</span>
      </p>
      <dl class="facts">
        <dt>Subject</dt>
        <dd>{c.subject}</dd>
        <dt>Issuer</dt>
        <dd>{c.issuer}</dd>
        <dt>Expires</dt>
        <dd>
          {c.valid_to} ({c.days_to_expiry >= 0 ? `${c.days_to_expiry} days left` : `expired ${-c.days_to_expiry} days ago`})
        </dd>
        <dt>Names</dt>
        <dd>{c.san.join(', ') || '—'}</dd>
        <dt>Key</dt>
        <dd>{c.key_type}{c.key_bits ? ` ${c.key_bits} bits` : ''}</dd>
        <dt>Trusted</dt>
        <dd>{r.authorized ? 'yes' : `no${r.authorization_error ? `: ${r.authorization_error}` : ''}`}; host name {r.hostname_match ? 'matches' : 'does not match'}</dd>
        <dt>Protocol</dt>
        <dd>{r.protocol}</dd>
      </dl>
      {r.findings.length > 0 && (
        <>
          <h3>Findings</h3>
          <ul>{r.findings.map((f) => <li key={f.id}>{f.message}</li>)}</ul>
        </>
      )}
    </>
  );
}

/** One error or warning a tool's answer carries: where in the answer, its code when it has one, its message. */
export interface CarriedError {
  where: string;
  code: string | null;
  message: string;
  /** An entry of a `warnings` array (the page was read, with a caveat), else an error. */
  warning: boolean;
}

const ERROR_LISTS = /^(errors|warnings|.+_errors)$/;

function carried(where: string, v: unknown, warning = false): CarriedError {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const code = typeof o.code === 'string' && o.code ? o.code : null;
    const message = typeof o.message === 'string' ? o.message : JSON.stringify(o);
    // The other facts of the entry (a DNS query's `type`, a JSON-LD script's `index`) say which one failed.
    const facts = Object.entries(o).filter(([k, x]) => k !== 'code' && k !== 'message' && (typeof x === 'string' || typeof x === 'number'));
    return { where: facts.length ? `${where} (${facts.map(([k, x]) => `${k} ${x}`).join(', ')})` : where, code, message, warning };
  }
  return { where, code: null, message: typeof v === 'string' ? v : JSON.stringify(v), warning };
}

/**
 * Every error a tool's answer carries, in the order of the answer: each non-null `error` (a string or
 * `{code, message}`) at any depth, and each entry of the arrays named `errors`, `*_errors` or `warnings`.
 * The broken-link checker's per-link `error`s are its findings, shown in its table, so not listed here.
 */
export function carriedErrors(tool: string, value: unknown): CarriedError[] {
  const out: CarriedError[] = [];
  const walk = (node: unknown, path: string, depth: number): void => {
    if (!node || typeof node !== 'object' || depth > 8) return;
    if (Array.isArray(node)) {
      node.forEach((x, i) => walk(x, `${path}[${i}]`, depth + 1));
      return;
    }
    const o = node as Record<string, unknown>;
    const label = typeof o.address === 'string' ? `${path} ${o.address}` : path;
    for (const [k, v] of Object.entries(o)) {
      if (k === 'raw' || (tool === 'broken-link-checker' && path === '' && k === 'links')) continue;
      const at = path ? `${path}.${k}` : k;
      if (k === 'error') {
        if (v !== null && v !== undefined && v !== '') out.push(carried(label || 'answer', v));
      } else if (ERROR_LISTS.test(k) && Array.isArray(v)) {
        for (const x of v) out.push(carried(at, x, k === 'warnings'));
      } else walk(v, at, depth + 1);
    }
  };
  walk(value, '', 0);
  return out;
}

function carriedTitle(errors: CarriedError[]): string {
  const w = errors.filter((e) => e.warning).length;
  const e = errors.length - w;
  const parts = [e && (e === 1 ? 'an error' : `${e} errors`), w && (w === 1 ? 'a warning' : `${w} warnings`)].filter(Boolean);
  return `The answer carries ${parts.join(' and ')}:`;
}

/** The errors {@link carriedErrors} finds, as an alert above the result; nothing when there are none. */
function ResultErrors({ tool, value }: { tool: string; value: unknown }) {
  const errors = carriedErrors(tool, value);
  if (errors.length === 0) return null;
  return (
    <div class="alert" role="alert" data-testid="result-errors">
      <strong>{carriedTitle(errors)}</strong>
      <ul class="alert-details">
        {errors.map((e, i) => (
          <li key={i}>
            {e.code && <><code>{e.code}</code> </>}
            {e.message} <span class="muted">({e.where})</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The human view of `tool`'s JSON answer `value`: the errors it carries, then the tool's own view. */
export function ToolResult({ tool, value }: { tool: string; value: unknown }) {
  return (
    <>
      <ResultErrors tool={tool} value={value} />
      <ToolView tool={tool} value={value} />
    </>
  );
}

function ToolView({ tool, value }: { tool: string; value: unknown }) {
  switch (tool) {
    case 'seo-analyzer':
      return <Seo r={value as SeoReport} />;
    case 'tech-detector':
      return <Techs r={value as TechReport} />;
    case 'lead-generation':
      return <Leads r={value as LeadsReport} />;
    case 'content-extractor':
      return <Content r={value as ContentReport} />;
    case 'broken-link-checker':
      return <Links r={value as LinksReport} />;
    case 'dns-whois':
      return <Dns r={value as DnsReport} />;
    case 'ssl-checker':
      return <Ssl r={value as SslReport} />;
    default:
      return <p>The answer is below.</p>;
  }
}
