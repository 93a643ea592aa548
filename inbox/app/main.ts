// The approvals inbox (GET /inbox): a page of the API itself, bundled by esbuild from these files
// (inbox/assets.ts). Everything a run holds is untrusted, so it is only ever rendered as text:
// Preact escapes every value, nothing here sets HTML, and the CSP forbids inline script anyway.
import { html } from 'htm/preact';
import { render } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import { Inbox } from './components/inbox.ts';
import { SignIn } from './components/sign-in.ts';
import { session } from './session.ts';

function App() {
  const [key, setKey] = useState(session.key());
  const signIn = useCallback((secret: string) => {
    session.signIn(secret);
    setKey(secret);
  }, []);
  const signOut = useCallback(() => {
    session.signOut();
    setKey(null);
  }, []);
  return key ? html`<${Inbox} apiKey=${key} onSignOut=${signOut} />` : html`<${SignIn} onSignedIn=${signIn} />`;
}

render(html`<${App} />`, document.getElementById('app')!);
