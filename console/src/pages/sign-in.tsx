import { useEffect, useState } from 'preact/hooks';
import { Problems } from '../components/common.js';
import { usePath } from '../router.js';
import { signIn, type Credentials, type Session } from '../session.js';
import { singleSignOnProvider, startSingleSignOn, type Provider } from '../single-sign-on.js';

interface SignInProps {
  onSignedIn: (session: Session) => void;
  /** Why the user is here again: a single sign-on session that expired or failed. */
  notice?: string | null;
}

/** Single sign-on when configured; Basic credentials, or a Bearer token pasted in. */
export function SignInPage({ onSignedIn, notice = null }: SignInProps) {
  const [kind, setKind] = useState<'basic' | 'bearer'>('basic');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const [remember, setRemember] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const credentials: Credentials =
      kind === 'basic' ? { kind, username, password } : { kind, token: token.trim() };
    if (kind === 'basic' ? username === '' || password === '' : token.trim() === '') {
      setProblem(kind === 'basic' ? 'Give a user name and a password.' : 'Paste a token.');
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await signIn(credentials, remember));
    } catch (error) {
      setProblem((error as Error).message);
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Trellis</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <SingleSignOn />
      <form onSubmit={(event) => void submit(event)} noValidate>
        <fieldset class="choice">
          <legend>Sign in with</legend>
          <label>
            <input
              type="radio"
              name="kind"
              checked={kind === 'basic'}
              onChange={() => setKind('basic')}
            />{' '}
            User name and password
          </label>
          <label>
            <input
              type="radio"
              name="kind"
              checked={kind === 'bearer'}
              onChange={() => setKind('bearer')}
            />{' '}
            Bearer token
          </label>
        </fieldset>
        {kind === 'basic' ? (
          <>
            <div class="field">
              <label for="username">User name</label>
              <input
                id="username"
                name="username"
                autoComplete="username"
                value={username}
                onInput={(event) => setUsername(event.currentTarget.value)}
              />
            </div>
            <div class="field">
              <label for="password">Password</label>
              <input
                id="password"
                name="password"
                type="password"
                autoComplete="current-password"
                value={password}
                onInput={(event) => setPassword(event.currentTarget.value)}
              />
            </div>
          </>
        ) : (
          <div class="field">
            <label for="token">Token (a JWT)</label>
            <textarea
              id="token"
              name="token"
              rows={5}
              spellcheck={false}
              value={token}
              onInput={(event) => setToken(event.currentTarget.value)}
            />
          </div>
        )}
        <label class="check">
          <input
            type="checkbox"
            checked={remember}
            onChange={(event) => setRemember(event.currentTarget.checked)}
          />{' '}
          Stay signed in in this tab (kept in session storage until the tab closes)
        </label>
        {problem && <Problems messages={[problem]} />}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

/** "Sign in with <provider>", when single sign-on is configured; nothing otherwise. */
function SingleSignOn() {
  const path = usePath();
  const [provider, setProvider] = useState<Provider | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    // Unreachable settings: the other ways to sign in still work, and say why if Trellis is down.
    singleSignOnProvider().then(setProvider, () => setProvider(null));
  }, []);
  if (!provider) return null;
  const start = async () => {
    setBusy(true);
    setProblem(null);
    try {
      await startSingleSignOn(provider, path);
    } catch (error) {
      setProblem(`${provider.displayName} could not be reached: ${(error as Error).message}`);
      setBusy(false);
    }
  };
  return (
    <section class="single-sign-on" aria-label="Single sign-on">
      <button type="button" class="primary" disabled={busy} onClick={() => void start()}>
        {busy ? 'Going to ' : 'Sign in with '}
        {provider.displayName}
      </button>
      {problem && <Problems messages={[problem]} />}
      <p class="muted">Or with a user name and password, or a token:</p>
    </section>
  );
}
