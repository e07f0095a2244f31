/**
 * The scrape-ai web dashboard (issue 14): the app shell, the session and hash routing.
 *
 * Routes (hash routing, so the service serves HTML at `/` only):
 *   #/profile, #/configs, #/configs/new, #/configs/<id>, #/generate, #/jobs, #/jobs/<id>, #/tools,
 *   #/tools/<name>, #/webhooks. Any route shows the sign-in form while there is no key.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { onUnauthorized, sessionKey, setSessionKey } from './api.ts';
import { SignIn } from './pages/SignIn.tsx';
import { Profile } from './pages/Profile.tsx';
import { ConfigList } from './pages/ConfigList.tsx';
import { ConfigEdit } from './pages/ConfigEdit.tsx';
import { Generate } from './pages/Generate.tsx';
import { JobList } from './pages/JobList.tsx';
import { JobPage } from './pages/JobPage.tsx';
import { ToolList, ToolPage } from './pages/Tools.tsx';
import { Webhooks } from './pages/Webhooks.tsx';
import './styles.css';

/** A parsed hash route: the page and its one parameter (an id or a tool name). */
interface Route {
  page: string;
  param?: string;
}

/** `#/jobs/<id>` → `{page: 'jobs', param: '<id>'}`; an empty hash is the profile. */
function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] ?? 'profile', param: parts[1] };
}

const NAV: { page: string; label: string }[] = [
  { page: 'profile', label: 'Profile' },
  { page: 'configs', label: 'Configs' },
  { page: 'generate', label: 'Generate' },
  { page: 'jobs', label: 'Jobs' },
  { page: 'tools', label: 'Tools' },
  { page: 'webhooks', label: 'Webhooks' },
];

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'profile':
      return <Profile />;
    case 'configs':
      return route.param ? <ConfigEdit key={route.param} id={route.param === 'new' ? null : route.param} /> : <ConfigList />;
    case 'generate':
      return <Generate />;
    case 'jobs':
      return route.param ? <JobPage key={route.param} id={route.param} /> : <JobList />;
    case 'tools':
      return route.param ? <ToolPage key={route.param} name={route.param} /> : <ToolList />;
    case 'webhooks':
      return <Webhooks />;
    default:
      return (
        <section>
          <h1 tabIndex={-1}>Page not found</h1>
          <p>
            There is no page at this address. <a href="#/profile">Go to your profile</a>.
          </p>
        </section>
      );
  }
}

function App() {
  const [key, setKey] = useState<string | null>(sessionKey());
  const [route, setRoute] = useState<Route>(parseRoute(location.hash));
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHash);
    onUnauthorized((message) => {
      setSessionKey(null);
      setKey(null);
      setNotice(`Signed out: ${message}`);
    });
    return () => removeEventListener('hashchange', onHash);
  }, []);

  // A new page: its heading takes the focus (keyboard and screen-reader users start there) and names the tab.
  useEffect(() => {
    const h1 = document.querySelector<HTMLElement>('main h1');
    document.title = `${h1?.textContent ?? 'Dashboard'} · scrape-ai`;
    if (h1 && document.activeElement !== h1 && route.page !== 'signin') h1.focus({ preventScroll: false });
  }, [route.page, route.param, key]);

  const signIn = (apiKey: string) => {
    setSessionKey(apiKey);
    setKey(apiKey);
    setNotice(null);
    if (route.page === 'signin' || !location.hash) location.hash = '#/profile';
  };
  const signOut = () => {
    setSessionKey(null);
    setKey(null);
    setNotice('You have signed out.');
  };

  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.querySelector<HTMLElement>('main h1')?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">scrape-ai</span>
        {key && (
          <nav aria-label="Main">
            <ul>
              {NAV.map((n) => (
                <li key={n.page}>
                  <a href={`#/${n.page}`} aria-current={route.page === n.page ? 'page' : undefined}>
                    {n.label}
                  </a>
                </li>
              ))}
            </ul>
            <button type="button" class="secondary" onClick={signOut}>
              Sign out
            </button>
          </nav>
        )}
      </header>
      <main id="main">{key ? <Page route={route} /> : <SignIn onSignedIn={signIn} notice={notice} />}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
