// In-process cache of authenticated API keys, so a request does not look its key up in the
// database (the lookup was a round trip on every request). Entries are keyed by the secret's
// hash and live `ttlMs`; only active keys are cached (unknown and revoked keys go to the
// database every time; their floods are limited by the `unauthenticated` policy).
//
// Revocation reaches every API process within a moment: revokeKey() (services/keys.ts, which
// the CLI and the API routes call) sends `NOTIFY gws_key_revoked, '<key id>'` in the revoking
// transaction (services/notified-cache.ts has the listener and what happens when it drops).
import type { KeyKind } from '../domain/api-keys.ts';
import { createNotifiedCache, type NotifiedCache } from './notified-cache.ts';

/** The channel revocations are announced on; the payload is the key id (never the secret). */
export const KEY_REVOKED_CHANNEL = 'gws_key_revoked';

/** An active key, as looked up by its secret's hash. */
export interface ActiveKey {
  id: string;
  tenantId: string;
  kind: KeyKind;
  name: string | null;
}

export type KeyCache = NotifiedCache<ActiveKey>;

export function createKeyCache(options: { ttlMs: number; maxEntries?: number; now?: () => number }): KeyCache {
  return createNotifiedCache<ActiveKey>({ ...options, tagOf: (key) => key.id });
}
