// The sign-in form: one field, the approver key, checked against the API before it is kept. Only an
// approver key signs in: a key that submits runs never decides them.
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
      await apiClient(secret).me();
      onSignedIn(secret);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'That key was not accepted. Sign in with your approver key (gws_apv_…); a core key submits runs and never decides them.'
          : `Could not sign in: ${(err as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  }

  return html`
    <main class="sign-in">
      <h1>Approvals inbox</h1>
      <p>Sign in with your approver key (<code>gws_apv_…</code>). It is kept in this tab only, and forgotten when the tab closes or you sign out.</p>
      <form onSubmit=${submit}>
        <label for="api-key">Approver key</label>
        <input id="api-key" type="password" autocomplete="off" spellcheck="false" value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled=${busy}>Sign in</button>
        ${error && html`<p class="error" role="alert">${error}</p>`}
      </form>
    </main>
  `;
}
