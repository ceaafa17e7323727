// Sign in: the admin token, tried with one call before it is kept (in session storage, for this tab).
import { type FormEvent, useState } from 'react';
import { adminClient, errorInfo, session } from '../trpc.ts';

export function Login(props: { refusal: string | null; onSignedIn: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(props.refusal);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const candidate = token.trim();
    if (!candidate) return setError('Enter the admin token (ADMIN_TOKEN).');
    setBusy(true);
    setError(null);
    try {
      await adminClient(() => candidate).orgs.list.query();
      session.signIn(candidate);
      props.onSignedIn();
    } catch (err) {
      const info = errorInfo(err);
      setError(
        info.status === 401 ? `The token was refused: ${info.message}` : `Could not sign in: ${info.message}`,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="login">
      <form onSubmit={submit} className="card">
        <h1>Admin console</h1>
        <p className="muted">
          Sign in with the admin token (<code>ADMIN_TOKEN</code>, printed at the first start). It is kept for
          this browser tab only.
        </p>
        <label>
          Admin token
          <input
            type="password"
            name="token"
            autoComplete="current-password"
            value={token}
            onChange={(e) => setToken(e.currentTarget.value)}
            // biome-ignore lint/a11y/noAutofocus: the form is the whole page
            autoFocus
          />
        </label>
        {error ? (
          <p className="notice error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </div>
  );
}
