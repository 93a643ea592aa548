// In-process cache of authenticated API keys, so a request does not look its key up in the
// database (the lookup was a round trip on every request). Entries are keyed by the secret's
// hash and live `ttlMs`; only active keys are cached (unknown and revoked keys go to the
// database every time; their floods are limited by the `unauthenticated` policy).
//
// Revocation reaches every API process within a moment: revokeKey() (services/keys.ts, which
// the CLI and the API routes call) sends `NOTIFY gws_key_revoked, '<key id>'` in the revoking
// transaction, and each API process LISTENs on a dedicated connection. The cache is used only
// while that connection is listening: when it drops, the cache is emptied and every request
// looks its key up again until the connection is back, so a missed notification can never
// keep a revoked key alive. On PGlite the cache is off: a revocation by an admin CLI beside the
// service (db/admin-socket.ts) is not delivered to the service's listeners, and the lookup is in
// process anyway.
import pg from 'pg';
import type { Db } from '../db/client.ts';
import type { KeyKind } from '../domain/api-keys.ts';

/** The channel revocations are announced on; the payload is the key id (never the secret). */
export const KEY_REVOKED_CHANNEL = 'gws_key_revoked';

/** An active key, as looked up by its secret's hash. */
export interface ActiveKey {
  id: string;
  tenantId: string;
  kind: KeyKind;
}

export interface KeyCache {
  /** The active key with this secret hash: from the cache when fresh and live, else from `lookup`. */
  get(hash: string, lookup: () => Promise<ActiveKey | null>): Promise<ActiveKey | null>;
  /** Drops the entries of one key (a revocation). */
  invalidate(keyId: string): void;
  /** Whether entries may be served: set by the invalidation listener. Going off empties the cache. */
  setLive(live: boolean): void;
  readonly size: number;
}

export function createKeyCache(options: { ttlMs: number; maxEntries?: number; now?: () => number }): KeyCache {
  const { ttlMs, maxEntries = 10_000, now = Date.now } = options;
  const entries = new Map<string, { key: ActiveKey; expiresAt: number }>();
  let live = false;
  // Bumped by every invalidation: a lookup that was in flight across one does not store its answer.
  let generation = 0;
  const clear = () => {
    entries.clear();
    generation += 1;
  };
  return {
    async get(hash, lookup) {
      if (ttlMs <= 0 || !live) return lookup();
      const hit = entries.get(hash);
      if (hit && hit.expiresAt > now()) return hit.key;
      if (hit) entries.delete(hash);
      const started = generation;
      const key = await lookup();
      if (key && live && started === generation) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(hash, { key, expiresAt: now() + ttlMs });
      }
      return key;
    },
    invalidate(keyId) {
      generation += 1;
      for (const [hash, entry] of entries) if (entry.key.id === keyId) entries.delete(hash);
    },
    setLive(value) {
      live = value;
      clear();
    },
    get size() {
      return entries.size;
    },
  };
}

// Caches of this process per database handle, so a revocation through a handle reaches them at
// once (before its NOTIFY comes back), e.g. the API's own revoke route.
const localCaches = new WeakMap<Db, Set<KeyCache>>();

export function registerLocalCache(db: Db, cache: KeyCache): () => void {
  let set = localCaches.get(db);
  if (!set) localCaches.set(db, (set = new Set()));
  set.add(cache);
  return () => set.delete(cache);
}

/** Called by revokeKey() after the revoking transaction committed. */
export function invalidateLocally(db: Db, keyId: string): void {
  for (const cache of localCaches.get(db) ?? []) cache.invalidate(keyId);
}

/** The listener connection's application_name (pg_stat_activity shows it). */
export const LISTENER_APPLICATION_NAME = 'gws-key-revocations';

export interface RevocationListener {
  close(): Promise<void>;
}

/**
 * Keeps one Postgres connection LISTENing on KEY_REVOKED_CHANNEL and applies what it hears to
 * `cache`. The cache is live only while listening; a lost connection is retried every `retryMs`
 * and the cache, emptied when it dropped, starts over once LISTEN succeeds again.
 */
export function listenForRevocations(
  url: string,
  cache: KeyCache,
  options: { retryMs?: number; onState?: (state: 'listening' | 'lost', err?: Error) => void } = {},
): RevocationListener {
  const retryMs = options.retryMs ?? 1_000;
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  const lost = (err?: Error) => {
    if (client) {
      const c = client;
      client = undefined;
      c.removeAllListeners('notification');
      c.on('error', () => {});
      void c.end().catch(() => {});
      cache.setLive(false);
      options.onState?.('lost', err);
    }
    if (!closed && !timer) timer = setTimeout(connect, retryMs);
  };

  async function connect(): Promise<void> {
    timer = undefined;
    if (closed) return;
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, keepAlive: true, application_name: LISTENER_APPLICATION_NAME });
    c.on('error', (err) => {
      if (client === c) lost(err);
    });
    c.on('end', () => {
      if (client === c) lost();
    });
    c.on('notification', (msg) => {
      if (msg.channel === KEY_REVOKED_CHANNEL && msg.payload) cache.invalidate(msg.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${KEY_REVOKED_CHANNEL}`);
    } catch (err) {
      c.on('error', () => {});
      void c.end().catch(() => {});
      options.onState?.('lost', err as Error);
      if (!closed && !timer) timer = setTimeout(connect, retryMs);
      return;
    }
    if (closed) {
      void c.end().catch(() => {});
      return;
    }
    client = c;
    cache.setLive(true); // empty: whatever was revoked while not listening is looked up afresh
    options.onState?.('listening');
  }

  void connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      const c = client;
      client = undefined;
      cache.setLive(false);
      await c?.end().catch(() => {});
    },
  };
}
