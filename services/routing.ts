// The minimal routing policy store: model alias -> provider, per tenant.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { routingPolicies } from '../db/schema.ts';

export const DEFAULT_PROVIDER = 'local';

export async function providerFor(db: Db, tenantId: string, model: string): Promise<string> {
  const [row] = await db
    .select({ provider: routingPolicies.provider })
    .from(routingPolicies)
    .where(and(eq(routingPolicies.tenantId, tenantId), eq(routingPolicies.model, model)));
  return row?.provider ?? DEFAULT_PROVIDER;
}

export async function setRoute(db: Db, tenantId: string, model: string, provider: string): Promise<void> {
  await db
    .insert(routingPolicies)
    .values({ tenantId, model, provider })
    .onConflictDoUpdate({ target: [routingPolicies.tenantId, routingPolicies.model], set: { provider, updatedAt: new Date() } });
}
