// Appends to a tenant's vault hash chain. Called inside the write's own
// transaction, after the tenant row is locked, so links never interleave.
import { desc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { tenants, vaultChain } from '../../db/schema.ts';
import { CHAIN_GENESIS, chainHash, type VaultAction } from '../../domain/vault.ts';

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** Serialises vault writes per tenant. (The ledger does not take it: reserves serialise on their tenant_balances row.) */
export async function lockTenant(tx: Tx, tenantId: string): Promise<void> {
  await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).for('update');
}

/** Returns the new link's sequence number. */
export async function appendChain(tx: Tx, tenantId: string, entryId: string, action: VaultAction, entryDigest: string): Promise<number> {
  const [last] = await tx
    .select({ seq: vaultChain.seq, hash: vaultChain.hash })
    .from(vaultChain)
    .where(eq(vaultChain.tenantId, tenantId))
    .orderBy(desc(vaultChain.seq))
    .limit(1);
  const seq = (last?.seq ?? 0) + 1;
  const prevHash = last?.hash ?? CHAIN_GENESIS;
  await tx.insert(vaultChain).values({
    tenantId,
    seq,
    entryId,
    action,
    entryDigest,
    prevHash,
    hash: chainHash(prevHash, { seq, entryId, action, entryDigest }),
  });
  return seq;
}
