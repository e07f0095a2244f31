/**
 * Profile (`GET /api/v1/me/`): the email, the plan, the API key (masked, with Reveal/Hide and Copy), and the
 * quota left in the variant the service runs: scrapes and generations (variant A) or credits (variant B), with
 * the date the quota resets (the 1st of next month, 00:00 UTC: docs/plans-and-metering.md).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText, request, sessionKey, type Me } from '../api.ts';
import { ErrorAlert, Status } from '../components/ui.tsx';
// The plans file the service reads (both billing variants), bundled at build time for the plans' display names.
import plans from '../../../../lambdas/core/plans.json';

/** Each plan's display name (`label`) by its id, from the plans file of both billing variants. */
const PLAN_LABELS: Record<string, string> = Object.fromEntries(
  [plans.credits.plans, plans.scrapes.plans].flatMap((variant) => Object.entries(variant).map(([id, p]) => [id, p.label])),
);

/**
 * The plan as the plans file names it (`pro` → "Pro"): `/me/` carries the plan's id only. A plan the bundled file
 * lacks (a service started with its own SAI_PLANS_FILE) is its id with a capital letter.
 */
export function planLabel(id: string): string {
  return PLAN_LABELS[id] ?? id.charAt(0).toUpperCase() + id.slice(1).replace(/[-_]+/g, ' ');
}

/** `sai_••••••••1a2b`: the prefix, bullets, and the last four characters. */
export function maskKey(key: string): string {
  return `${key.slice(0, 4)}${'•'.repeat(8)}${key.slice(-4)}`;
}

/** The first instant of the next calendar month in UTC, when monthly quotas reset. */
function nextReset(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

function formatNumber(n: number): string {
  return n.toLocaleString(undefined, { maximumFractionDigits: 2 });
}

/** The profile page. */
export function Profile() {
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [revealed, setRevealed] = useState(false);
  const [copyStatus, setCopyStatus] = useState('');
  const keyRef = useRef<HTMLElement>(null);
  const key = sessionKey() ?? '';

  useEffect(() => {
    request<Me>('/me/').then(setMe, (err) => setError(errorText(err)));
  }, []);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(key);
      setCopyStatus('API key copied to the clipboard.');
    } catch {
      // No clipboard access (permission, insecure context): show the key selected, for Ctrl+C.
      setRevealed(true);
      requestAnimationFrame(() => {
        const el = keyRef.current;
        if (!el) return;
        const range = document.createRange();
        range.selectNodeContents(el);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      });
      setCopyStatus('The clipboard is not available: the key is selected, press Ctrl+C (⌘C) to copy it.');
    }
  };

  const sub = me?.subscription;
  const reset = nextReset();
  return (
    <section>
      <h1 tabIndex={-1}>Profile</h1>
      <ErrorAlert message={error} />
      {!me && !error && <Status>Loading your account…</Status>}
      {me && sub && (
        <>
          <dl class="facts" data-testid="profile">
            <dt>Email</dt>
            <dd data-testid="email">{me.user.email}</dd>
            {(me.user.first_name || me.user.last_name) && (
              <>
                <dt>Name</dt>
                <dd>{`${me.user.first_name} ${me.user.last_name}`.trim()}</dd>
              </>
            )}
            <dt>Plan</dt>
            <dd data-testid="plan" data-plan={sub.plan}>
              {planLabel(sub.plan)}
            </dd>
            <dt>Server execution</dt>
            <dd>{sub.has_server_execution ? 'included' : 'not in this plan (runs happen in the clients)'}</dd>
            <dt>API access</dt>
            <dd>{sub.has_api_access ? 'included' : 'not in this plan'}</dd>
          </dl>

          <h2>API key</h2>
          <div class="key-row">
            <code class="api-key" ref={keyRef} data-testid="api-key" aria-label={revealed ? 'API key' : 'API key, masked'}>
              {revealed ? key : maskKey(key)}
            </code>
            <button type="button" class="secondary" aria-pressed={revealed} onClick={() => setRevealed(!revealed)}>
              {revealed ? 'Hide' : 'Reveal'}
            </button>
            <button type="button" class="secondary" onClick={copy}>
              Copy
            </button>
          </div>
          <Status>{copyStatus}</Status>
          <p class="hint">
            Send it as <code>Authorization: Bearer sai_…</code> with every API call. Anyone with the key can use your quota.
          </p>

          <h2>Quota</h2>
          <dl class="facts" data-testid="quota">
            {sub.credits_remaining !== undefined && (
              <>
                <dt>Credits left</dt>
                <dd>
                  {formatNumber(sub.credits_remaining)}
                  {sub.credits_per_month !== undefined && ` of ${formatNumber(sub.credits_per_month)} this month`}
                </dd>
              </>
            )}
            {sub.monthly_scrapes_remaining !== undefined && (
              <>
                <dt>Scrapes left this month</dt>
                <dd>{formatNumber(sub.monthly_scrapes_remaining)}</dd>
              </>
            )}
            {sub.yaml_generations_remaining !== undefined && (
              <>
                <dt>Config generations left this month</dt>
                <dd>{formatNumber(sub.yaml_generations_remaining)}</dd>
              </>
            )}
            <dt>Resets</dt>
            <dd>
              <time dateTime={reset.toISOString()}>
                {reset.toLocaleDateString(undefined, { dateStyle: 'long', timeZone: 'UTC' })}, 00:00 UTC
              </time>
            </dd>
          </dl>
        </>
      )}
    </section>
  );
}
