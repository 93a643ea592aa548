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

export const DEFAULT_PROVIDER = 'local';

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

export async function providerFor(db: Db, tenantId: string, model: string): Promise<string> {
  const [row] = await selectProvider(db).execute({ tenantId, model });
  return row?.provider ?? DEFAULT_PROVIDER;
}

/** Writes a policy as given; callers check the provider first (assertProviderConfigured). */
export async function setRoute(db: Db, tenantId: string, model: string, provider: string): Promise<void> {
  await db
    .insert(routingPolicies)
    .values({ tenantId, model, provider })
    .onConflictDoUpdate({ target: [routingPolicies.tenantId, routingPolicies.model], set: { provider, updatedAt: new Date() } });
}
