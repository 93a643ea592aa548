// The sign-in form: one field, "API key", checked against the API before it is kept.
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, apiClient } from '../api.ts';

export function SignIn({ onSignedIn }: { onSignedIn(key: string): void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const secret = key.trim();
    if (!secret) return setError('Enter an API key.');
    setBusy(true);
    setError(null);
    try {
      await apiClient(secret).waitingRuns();
      onSignedIn(secret);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'That key was not accepted. Use a core key of your tenant.'
          : `Could not sign in: ${(err as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  }

  return html`
    <main class="sign-in">
      <h1>Approvals inbox</h1>
      <p>Sign in with a core API key of your tenant. It is kept in this tab only, and forgotten when the tab closes or you sign out.</p>
      <form onSubmit=${submit}>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" spellcheck="false" value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled=${busy}>Sign in</button>
        ${error && html`<p class="error" role="alert">${error}</p>`}
      </form>
    </main>
  `;
}
