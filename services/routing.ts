// The minimal routing policy store: model alias -> provider, per tenant. A
// policy may name only a provider this deployment has configured (the API and
// the CLI check it before writing); one that outlived its provider (the
// configuration changed later) makes the model unroutable, which chat, the
// estimate and run creation answer with 409 model_not_routable (services/model-layer.ts).
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { preparedPer } from '../db/prepared.ts';
import { routingPolicies } from '../db/schema.ts';
import { errors } from '../domain/errors.ts';
import { createNotifiedCache, invalidateLocally, type NotifiedCache, registerLocalCache } from './notified-cache.ts';

/** Refuses (400 provider_not_configured, param provider) a provider that is not among `configured`. */
export function assertProviderConfigured(provider: string, configured: readonly string[]): void {
  if (!configured.includes(provider)) throw errors.providerNotConfigured(provider);
}

// Read on every run creation and chat completion.
const selectProvider = preparedPer((db) =>
  db
    .select({ provider: routingPolicies.provider })
    .from(routingPolicies)
    .where(and(eq(routingPolicies.tenantId, sql.placeholder('tenantId')), eq(routingPolicies.model, sql.placeholder('model'))))
    .prepare('gws_select_route'),
);

/** The channel policy writes are announced on; the payload is the tenant id. */
export const ROUTE_CHANGED_CHANNEL = 'gws_route_changed';

/** A tenant's provider for one model (null when it has no policy), as cached. */
export type RouteCache = NotifiedCache<{ tenantId: string; provider: string | null }>;

export function createRouteCache(options: { ttlMs: number; maxEntries?: number; now?: () => number }): RouteCache {
  return createNotifiedCache({ ...options, tagOf: (route) => route.tenantId });
}

// The cache that serves a handle's policy reads (the API's database, on Postgres: runtime/compose-api.ts).
const routeCaches = new WeakMap<Db, RouteCache>();

/**
 * Serves `db`'s policy reads from `cache`, which the handle's own writes invalidate at once and
 * other processes' writes through ROUTE_CHANGED_CHANNEL. Returns the undo.
 */
export function cacheRoutes(db: Db, cache: RouteCache): () => void {
  routeCaches.set(db, cache);
  const unregister = registerLocalCache(db, ROUTE_CHANGED_CHANNEL, cache);
  return () => {
    routeCaches.delete(db);
    unregister();
  };
}

/** The tenant's provider for `model`: its policy's, or `fallback` (the deployment's default provider) when it has none. */
export async function providerFor(db: Db, tenantId: string, model: string, fallback: string): Promise<string> {
  const read = async () => {
    const [row] = await selectProvider(db).execute({ tenantId, model });
    return { tenantId, provider: row?.provider ?? null };
  };
  const cache = routeCaches.get(db);
  const route = cache ? await cache.get(`${tenantId}\u0000${model}`, read) : await read();
  return route!.provider ?? fallback;
}

/**
 * Writes a policy as given; callers check the provider first (assertProviderConfigured). The same
 * transaction announces it on ROUTE_CHANGED_CHANNEL (delivered on commit), so every API process
 * reads the tenant's policies afresh; this process's caches at once.
 */
export async function setRoute(db: Db, tenantId: string, model: string, provider: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .insert(routingPolicies)
      .values({ tenantId, model, provider })
      .onConflictDoUpdate({ target: [routingPolicies.tenantId, routingPolicies.model], set: { provider, updatedAt: new Date() } });
    await tx.execute(sql`select pg_notify(${ROUTE_CHANGED_CHANNEL}, ${tenantId})`);
  });
  invalidateLocally(db, ROUTE_CHANGED_CHANNEL, tenantId);
}
