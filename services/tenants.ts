import { deliveryUrlProblem, type DeliveryUrlRules } from '../domain/delivery-url.ts';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { tenants } from '../db/schema.ts';
import { newId } from '../domain/ids.ts';
import { looksLikeSecret } from '../domain/secrets.ts';
import { generateWebhookSecret } from './webhook-endpoints.ts';

export interface Tenant {
  id: string;
  name: string;
}

/** Returns the tenant with this name, creating it on first use (safe under concurrent callers). */
export async function ensureTenant(db: Db, name: string): Promise<Tenant> {
  await db
    .insert(tenants)
    .values({ id: newId('ten'), name })
    .onConflictDoNothing({ target: tenants.name });
  const [row] = await db.select({ id: tenants.id, name: tenants.name }).from(tenants).where(eq(tenants.name, name));
  if (!row) throw new Error(`tenant ${name} vanished after insert`);
  return row;
}

/**
 * Sets (or with null clears) the URL the webhook_delivery tool posts run results to, under the one
 * delivery URL rule (domain/delivery-url.ts) of the deployment. Errors never quote the URL.
 *
 * Setting a URL also sets a new Standard Webhooks signing secret (`whsec_…`), replacing any earlier
 * one; clearing the URL clears it. The secret is returned so that the caller can show it once.
 */
export async function setWebhookUrl(db: Db, name: string, url: string | null, rules: DeliveryUrlRules): Promise<Tenant & { webhookSecret: string | null }> {
  if (url && looksLikeSecret(url))
    throw new Error(
      'The webhook URL carries a credential (user:password@ or a key in its query); nothing was changed. Give the receiver another way to check the sender.',
    );
  const problem = url === null ? null : deliveryUrlProblem(url, rules);
  if (problem) throw new Error(`The webhook URL ${problem}; nothing was changed.`);
  const tenant = await ensureTenant(db, name);
  const webhookSecret = url === null ? null : generateWebhookSecret();
  await db.update(tenants).set({ webhookUrl: url, webhookSecret }).where(eq(tenants.id, tenant.id));
  return { ...tenant, webhookSecret };
}

export async function tenantById(db: Db, tenantId: string): Promise<Tenant> {
  const [row] = await db.select({ id: tenants.id, name: tenants.name }).from(tenants).where(eq(tenants.id, tenantId));
  if (!row) throw new Error(`no tenant ${tenantId}`);
  return row;
}
