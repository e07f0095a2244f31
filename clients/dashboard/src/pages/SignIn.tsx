/**
 * Sign in: email and password → `POST /api/v1/auth/login/` → the account's API key, kept for this tab's
 * session only (docs/spec.md, "Authentication": login makes a key for an account that has none).
 */
import { useState } from 'preact/hooks';
import { request, errorText, type LoginResult } from '../api.ts';
import { ErrorAlert } from '../components/ui.tsx';

/** The sign-in form; `notice` explains why it shows (signed out, session ended). */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (apiKey: string) => void; notice: string | null }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const result = await request<LoginResult>('/auth/login/', { method: 'POST', body: { email: email.trim(), password }, anonymous: true });
      onSignedIn(result.api_key);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  return (
    <section class="narrow">
      <h1 tabIndex={-1}>Sign in</h1>
      {notice && <p class="notice" role="status">{notice}</p>}
      <form onSubmit={submit} class="stack" data-testid="signin-form">
        <label for="signin-email">Email</label>
        <input id="signin-email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="signin-password">Password</label>
        <input id="signin-password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <ErrorAlert message={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p class="hint">Your API key is kept in this browser tab only, until you sign out or close it.</p>
    </section>
  );
}
