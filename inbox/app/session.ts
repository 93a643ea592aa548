// The API key lives in this tab's sessionStorage only: never a URL, a cookie, localStorage or a log.
// Closing the tab, or "Sign out", forgets it.
const KEY = 'gws.inbox.api_key';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn: (key: string) => sessionStorage.setItem(KEY, key),
  signOut: () => sessionStorage.removeItem(KEY),
};
