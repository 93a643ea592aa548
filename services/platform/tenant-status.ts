// What a tenant has set up: keys, credits, webhook, and control-plane records.
import { and, count, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { apiKeys, auditEvents, budgets, routingPolicies, tenants, traceExports } from '../../db/schema.ts';
import { balanceOf } from '../ledger.ts';

async function countOf(db: Db, table: typeof auditEvents | typeof budgets | typeof routingPolicies | typeof traceExports, tenantId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(table).where(eq(table.tenantId, tenantId));
  return Number(row?.n ?? 0);
}

export async function tenantStatus(db: Db, tenantId: string) {
  const [tenant] = await db.select({ webhookUrl: tenants.webhookUrl }).from(tenants).where(eq(tenants.id, tenantId));
  const keys = await db
    .select({ kind: apiKeys.kind, n: count() })
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), isNull(apiKeys.revokedAt)))
    .groupBy(apiKeys.kind);
  const keyCount = (kind: string) => Number(keys.find((k) => k.kind === kind)?.n ?? 0);
  return {
    webhookConfigured: Boolean(tenant?.webhookUrl),
    keys: { core: keyCount('core'), workspace: keyCount('workspace') },
    budgets: await countOf(db, budgets, tenantId),
    routingPolicies: await countOf(db, routingPolicies, tenantId),
    traceExports: await countOf(db, traceExports, tenantId),
    auditEvents: await countOf(db, auditEvents, tenantId),
    availableCredits: (await balanceOf(db, tenantId)).available,
  };
}
