import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useLocation, useNavigate } from 'react-router';

import { ErrorAlert } from '@/components/ui/error-alert';
import { paths } from '@/config/paths';
import { clearToken, setToken } from '@/lib/session';

import { getMe } from '../api/get-me';

/** Sign in with an API token (an admin creates users and hands out their first token). */
export function LoginPage() {
  const [token, setTokenInput] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setToken(token.trim());
    try {
      await getMe(); // the token is checked before anything else uses it
      queryClient.clear();
      const from = (location.state as { from?: string } | null)?.from;
      navigate(from ?? paths.catalog.path, { replace: true });
    } catch (cause) {
      clearToken();
      setError(cause instanceof Error ? cause : new Error(String(cause)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="page page--narrow">
      <h1>Sign in</h1>
      <p className="muted">Paste the API token you were given (an admin creates users; `deploy/up` prints the first admin&apos;s token).</p>
      <form className="form" onSubmit={submit}>
        <label className="form__field">
          <span>API token</span>
          <input type="password" autoComplete="off" value={token} onChange={(e) => setTokenInput(e.target.value)} required />
        </label>
        <button type="submit" className="button button--primary" disabled={busy || !token.trim()}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
      {error && <ErrorAlert title="Sign-in failed" error={error} />}
    </section>
  );
}
