// The vault integrity check: recomputes every entry's digest, verifies the
// tenant's hash chain link by link, and compares the two, so entries edited
// or deleted behind the service's back (directly in the database) show up.
import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { memoryEntries, vaultChain } from '../../db/schema.ts';
import { CHAIN_GENESIS, chainHash, entryDigest } from '../../domain/vault.ts';

export interface IntegrityReport {
  ok: boolean;
  checked_entries: number;
  chain: { length: number; valid: boolean; broken_at_seq: number | null; head: string };
  /** Entries whose stored text or digest no longer matches what the service last wrote. */
  changed: string[];
  /** Entries the chain records but the table no longer has. */
  missing: string[];
  /** Rows the chain never recorded (inserted behind the service's back). */
  unrecorded: string[];
}

export async function checkIntegrity(db: Db, tenantId: string): Promise<IntegrityReport> {
  const rows = await db.select().from(memoryEntries).where(eq(memoryEntries.tenantId, tenantId));
  const links = await db.select().from(vaultChain).where(eq(vaultChain.tenantId, tenantId)).orderBy(asc(vaultChain.seq));

  let prev = CHAIN_GENESIS;
  let brokenAt: number | null = null;
  const lastDigest = new Map<string, string>();
  links.forEach((link, i) => {
    const expected = chainHash(prev, link);
    if (brokenAt === null && (link.seq !== i + 1 || link.prevHash !== prev || link.hash !== expected)) brokenAt = link.seq;
    lastDigest.set(link.entryId, link.entryDigest);
    prev = link.hash;
  });

  const changed: string[] = [];
  const unrecorded: string[] = [];
  for (const row of rows) {
    const recorded = lastDigest.get(row.id);
    if (recorded === undefined) {
      unrecorded.push(row.id);
      continue;
    }
    const textLeft = row.subject !== null || row.content !== null;
    const recomputed =
      row.state === 'forgotten'
        ? row.digest
        : entryDigest({
            id: row.id,
            version: row.version,
            subject: row.subject ?? '',
            content: row.content ?? '',
            tags: row.tags,
            source: row.source,
            expiresAt: row.expiresAt,
          });
    if (recomputed !== row.digest || row.digest !== recorded || (row.state === 'forgotten' && textLeft)) changed.push(row.id);
  }
  const present = new Set(rows.map((r) => r.id));
  const missing = [...lastDigest.keys()].filter((id) => !present.has(id));

  return {
    ok: brokenAt === null && changed.length === 0 && missing.length === 0 && unrecorded.length === 0,
    checked_entries: rows.length,
    chain: { length: links.length, valid: brokenAt === null, broken_at_seq: brokenAt, head: prev },
    changed: changed.sort(),
    missing: missing.sort(),
    unrecorded: unrecorded.sort(),
  };
}
