// Workspace account state: entry counts by state, storage, chain length.
import { and, count, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { memoryEntries, vaultChain } from '../../db/schema.ts';

export async function vaultAccount(db: Db, tenantId: string) {
  const [counts] = await db
    .select({
      active: sql<string>`count(*) filter (where ${memoryEntries.state} = 'active' and (${memoryEntries.expiresAt} is null or ${memoryEntries.expiresAt} > now()))`,
      expired: sql<string>`count(*) filter (where ${memoryEntries.state} = 'active' and ${memoryEntries.expiresAt} <= now())`,
      quarantined: sql<string>`count(*) filter (where ${memoryEntries.state} = 'quarantined')`,
      forgotten: sql<string>`count(*) filter (where ${memoryEntries.state} = 'forgotten')`,
      bytes: sql<string>`coalesce(sum(octet_length(coalesce(${memoryEntries.subject}, '')) + octet_length(coalesce(${memoryEntries.content}, ''))), 0)`,
    })
    .from(memoryEntries)
    .where(eq(memoryEntries.tenantId, tenantId));
  const [chain] = await db
    .select({ n: count() })
    .from(vaultChain)
    .where(and(eq(vaultChain.tenantId, tenantId)));
  return {
    entries: {
      active: Number(counts?.active ?? 0),
      expired: Number(counts?.expired ?? 0),
      quarantined: Number(counts?.quarantined ?? 0),
      forgotten: Number(counts?.forgotten ?? 0),
    },
    storage_bytes: Number(counts?.bytes ?? 0),
    chain_length: Number(chain?.n ?? 0),
  };
}
