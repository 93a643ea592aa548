// In-process caches of rows the hot path reads on every request (API keys, routing policies),
// kept true by Postgres LISTEN/NOTIFY. A write that changes a cached row sends
// `NOTIFY <channel>, '<tag>'` in its own transaction (delivered on commit); each API process
// LISTENs on one dedicated connection and drops the entries with that tag. A cache serves entries
// only while that connection is listening: when it drops, every cache is emptied and each read
// goes to the database until it is back, so a missed notification can never keep a stale row.
// On PGlite the caches are off: a write by an admin CLI beside the service (db/admin-socket.ts) is
// not delivered to the service's listeners, and the read is in process anyway.
import pg from 'pg';
import type { Db } from '../db/client.ts';

/** What the listener and writers see of a cache. */
export interface Invalidatable {
  /** Drops every entry whose value has this tag (what a notification carries). */
  invalidate(tag: string): void;
  /** Whether entries may be served: set by the listener. Going off empties the cache. */
  setLive(live: boolean): void;
}

export interface NotifiedCache<V> extends Invalidatable {
  /** The value under `key`: from the cache when fresh and live, else from `lookup` (null is never cached). */
  get(key: string, lookup: () => Promise<V | null>): Promise<V | null>;
  /** The value under `key` when the cache can serve it now (fresh and live), else undefined: the hot path's hit without a promise. */
  peek(key: string): V | undefined;
  readonly size: number;
}

export function createNotifiedCache<V>(options: { ttlMs: number; tagOf: (value: V) => string; maxEntries?: number; now?: () => number }): NotifiedCache<V> {
  const { ttlMs, tagOf, maxEntries = 10_000, now = Date.now } = options;
  const entries = new Map<string, { value: V; expiresAt: number }>();
  let live = false;
  // Bumped by every invalidation: a lookup that was in flight across one does not store its answer.
  let generation = 0;
  const peek = (key: string): V | undefined => {
    if (ttlMs <= 0 || !live) return undefined;
    const hit = entries.get(key);
    if (hit && hit.expiresAt > now()) return hit.value;
    if (hit) entries.delete(key);
    return undefined;
  };
  return {
    peek,
    async get(key, lookup) {
      if (ttlMs <= 0 || !live) return lookup();
      const hit = peek(key);
      if (hit !== undefined) return hit;
      const started = generation;
      const value = await lookup();
      if (value !== null && live && started === generation) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        entries.set(key, { value, expiresAt: now() + ttlMs });
      }
      return value;
    },
    invalidate(tag) {
      generation += 1;
      for (const [key, entry] of entries) if (tagOf(entry.value) === tag) entries.delete(key);
    },
    setLive(value) {
      live = value;
      entries.clear();
      generation += 1;
    },
    get size() {
      return entries.size;
    },
  };
}

// Caches of this process per database handle and channel, so a write through a handle reaches
// them at once (before its NOTIFY comes back), e.g. the API's own revoke and policy routes.
const localCaches = new WeakMap<Db, Map<string, Set<Invalidatable>>>();

export function registerLocalCache(db: Db, channel: string, cache: Invalidatable): () => void {
  let channels = localCaches.get(db);
  if (!channels) {
    channels = new Map();
    localCaches.set(db, channels);
  }
  let set = channels.get(channel);
  if (!set) {
    set = new Set();
    channels.set(channel, set);
  }
  const added = set.add(cache);
  return () => added.delete(cache);
}

/** Called by a writer after its transaction (which sent the NOTIFY) committed. */
export function invalidateLocally(db: Db, channel: string, tag: string): void {
  for (const cache of localCaches.get(db)?.get(channel) ?? []) cache.invalidate(tag);
}

/** The listener connection's application_name (pg_stat_activity shows it). */
export const LISTENER_APPLICATION_NAME = 'gws-cache-invalidations';

export interface InvalidationListener {
  close(): Promise<void>;
}

/**
 * Keeps one Postgres connection LISTENing on each channel of `caches` and applies what it hears.
 * The caches are live only while listening; a lost connection is retried every `retryMs` and the
 * caches, emptied when it dropped, start over once LISTEN succeeds again.
 */
export function listenForInvalidations(
  url: string,
  caches: ReadonlyMap<string, Invalidatable>,
  options: { retryMs?: number; onState?: (state: 'listening' | 'lost', err?: Error) => void } = {},
): InvalidationListener {
  const retryMs = options.retryMs ?? 1_000;
  const setLive = (live: boolean) => {
    for (const cache of caches.values()) cache.setLive(live);
  };
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
      setLive(false);
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
      if (msg.payload) caches.get(msg.channel)?.invalidate(msg.payload);
    });
    try {
      await c.connect();
      for (const channel of caches.keys()) await c.query(`LISTEN ${channel}`);
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
    setLive(true); // empty: whatever changed while not listening is read afresh
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
      setLive(false);
      await c?.end().catch(() => {});
    },
  };
}
