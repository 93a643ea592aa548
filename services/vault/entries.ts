// Vault entry lifecycle: create, read, list, correct (new version, history
// kept), quarantine and release, forget (content gone for good, tombstone
// kept). Every write locks the tenant, appends to the hash chain and records a
// content-free journey event in the same transaction.
import { and, asc, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { memoryEntries, memoryEntryVersions } from '../../db/schema.ts';
import { errors } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import { entryDigest, type VaultAction } from '../../domain/vault.ts';
import { recordJourneyEvent } from '../journey.ts';
import { afterPosition, type Position, toPage } from '../keyset-page.ts';
import { appendChain, lockTenant, type Tx } from './chain.ts';

export type EntryRow = typeof memoryEntries.$inferSelect;
export type EntryState = 'active' | 'quarantined' | 'forgotten' | 'expired';

export interface NewEntry {
  subject: string;
  content: string;
  tags: string[];
  source: string;
  expiresAt: Date | null;
  /** Makes the write idempotent (a retried activity writes one entry). */
  entryKey?: string;
}

/** The state a reader sees: an active entry past its expiry is expired. */
export function effectiveState(row: EntryRow, now = new Date()): EntryState {
  if (row.state === 'active' && row.expiresAt && row.expiresAt <= now) return 'expired';
  return row.state;
}

function digestFor(row: Pick<EntryRow, 'id' | 'version' | 'subject' | 'content' | 'tags' | 'source' | 'expiresAt'>): string {
  return entryDigest({
    id: row.id,
    version: row.version,
    subject: row.subject ?? '',
    content: row.content ?? '',
    tags: row.tags,
    source: row.source,
    expiresAt: row.expiresAt,
  });
}

async function audit(tx: Tx, row: EntryRow, action: VaultAction): Promise<void> {
  const seq = await appendChain(tx, row.tenantId, row.id, action, row.digest);
  // Content-free: the kind and the entry's state only.
  await recordJourneyEvent(tx as unknown as Db, {
    tenantId: row.tenantId,
    runId: null,
    kind: `vault.${action}`,
    state: row.state,
    eventKey: `vault:${row.tenantId}:${seq}`,
  });
}

export async function createEntry(db: Db, tenantId: string, input: NewEntry): Promise<{ entry: EntryRow; created: boolean }> {
  return db.transaction(async (tx) => {
    await lockTenant(tx, tenantId);
    if (input.entryKey) {
      const [existing] = await tx.select().from(memoryEntries).where(eq(memoryEntries.entryKey, input.entryKey));
      if (existing) return { entry: existing, created: false };
    }
    const id = newId('mem', 12);
    const fields = { id, version: 1, subject: input.subject, content: input.content, tags: input.tags, source: input.source, expiresAt: input.expiresAt };
    const [entry] = await tx
      .insert(memoryEntries)
      .values({ ...fields, tenantId, state: 'active', digest: digestFor(fields), entryKey: input.entryKey ?? null })
      .returning();
    await tx.insert(memoryEntryVersions).values({ entryId: id, tenantId, version: 1, subject: input.subject, content: input.content, digest: entry!.digest });
    await audit(tx, entry!, 'created');
    return { entry: entry!, created: true };
  });
}

export async function getEntry(db: Db, tenantId: string, entryId: string): Promise<EntryRow> {
  const [row] = await db
    .select()
    .from(memoryEntries)
    .where(and(eq(memoryEntries.tenantId, tenantId), eq(memoryEntries.id, entryId)));
  if (!row) throw errors.notFound('No such vault entry.');
  return row;
}

export type EntryCursor = Position;

/** Newest first. `state` filters by the state a reader sees (expired included). */
export async function listEntries(
  db: Db,
  tenantId: string,
  filter: { state?: EntryState; tag?: string },
  page: { limit: number; after?: EntryCursor },
): Promise<{ rows: EntryRow[]; next: EntryCursor | null }> {
  const conditions = [eq(memoryEntries.tenantId, tenantId)];
  const notExpired = or(isNull(memoryEntries.expiresAt), gt(memoryEntries.expiresAt, sql`now()`))!;
  if (filter.state === 'expired') conditions.push(eq(memoryEntries.state, 'active'), sql`${memoryEntries.expiresAt} <= now()`);
  else if (filter.state === 'active') conditions.push(eq(memoryEntries.state, 'active'), notExpired);
  else if (filter.state) conditions.push(eq(memoryEntries.state, filter.state));
  if (filter.tag) conditions.push(sql`${memoryEntries.tags} @> ${JSON.stringify([filter.tag])}::jsonb`);
  if (page.after) conditions.push(afterPosition(memoryEntries.createdAt, memoryEntries.id, page.after));
  const rows = await db
    .select()
    .from(memoryEntries)
    .where(and(...conditions))
    .orderBy(desc(memoryEntries.createdAt), desc(memoryEntries.id))
    .limit(page.limit + 1);
  return toPage(rows, page.limit);
}

export async function versionsOf(db: Db, tenantId: string, entryId: string) {
  await getEntry(db, tenantId, entryId);
  return db
    .select()
    .from(memoryEntryVersions)
    .where(and(eq(memoryEntryVersions.tenantId, tenantId), eq(memoryEntryVersions.entryId, entryId)))
    .orderBy(asc(memoryEntryVersions.version));
}

/** Runs `change` on the locked entry of this tenant; a forgotten entry refuses every change. */
async function changeEntry(db: Db, tenantId: string, entryId: string, change: (tx: Tx, row: EntryRow) => Promise<EntryRow>): Promise<EntryRow> {
  return db.transaction(async (tx) => {
    await lockTenant(tx, tenantId);
    const [row] = await tx
      .select()
      .from(memoryEntries)
      .where(and(eq(memoryEntries.tenantId, tenantId), eq(memoryEntries.id, entryId)));
    if (!row) throw errors.notFound('No such vault entry.');
    if (row.state === 'forgotten') throw errors.entryForgotten();
    return change(tx, row);
  });
}

/** A correction writes a new version; the old one stays in the history and is never recalled again. */
export function correctEntry(
  db: Db,
  tenantId: string,
  entryId: string,
  input: { content: string; subject?: string; tags?: string[]; expiresAt?: Date | null; reason?: string },
): Promise<EntryRow> {
  return changeEntry(db, tenantId, entryId, async (tx, row) => {
    const next = {
      ...row,
      version: row.version + 1,
      content: input.content,
      subject: input.subject ?? row.subject,
      tags: input.tags ?? row.tags,
      expiresAt: input.expiresAt === undefined ? row.expiresAt : input.expiresAt,
    };
    const digest = digestFor(next);
    const [updated] = await tx
      .update(memoryEntries)
      .set({ version: next.version, content: next.content, subject: next.subject, tags: next.tags, expiresAt: next.expiresAt, digest, updatedAt: new Date() })
      .where(eq(memoryEntries.id, row.id))
      .returning();
    await tx
      .insert(memoryEntryVersions)
      .values({ entryId: row.id, tenantId, version: next.version, subject: next.subject, content: next.content, digest, reason: input.reason ?? null });
    await audit(tx, updated!, 'corrected');
    return updated!;
  });
}

export function quarantineEntry(db: Db, tenantId: string, entryId: string, reason: string | null): Promise<EntryRow> {
  return changeEntry(db, tenantId, entryId, async (tx, row) => {
    if (row.state === 'quarantined') return row;
    const [updated] = await tx
      .update(memoryEntries)
      .set({ state: 'quarantined', quarantineReason: reason, updatedAt: new Date() })
      .where(eq(memoryEntries.id, row.id))
      .returning();
    await audit(tx, updated!, 'quarantined');
    return updated!;
  });
}

export function releaseEntry(db: Db, tenantId: string, entryId: string): Promise<EntryRow> {
  return changeEntry(db, tenantId, entryId, async (tx, row) => {
    if (row.state !== 'quarantined') throw errors.entryNotQuarantined();
    const [updated] = await tx
      .update(memoryEntries)
      .set({ state: 'active', quarantineReason: null, updatedAt: new Date() })
      .where(eq(memoryEntries.id, row.id))
      .returning();
    await audit(tx, updated!, 'released');
    return updated!;
  });
}

/**
 * Forgets for good: the entry's text, tags and every version's text are
 * erased (so the search index no longer has them); a tombstone with the last
 * digest stays for audit. Forgetting twice returns the tombstone.
 */
export async function forgetEntry(db: Db, tenantId: string, entryId: string): Promise<EntryRow> {
  return db.transaction(async (tx) => {
    await lockTenant(tx, tenantId);
    const [row] = await tx
      .select()
      .from(memoryEntries)
      .where(and(eq(memoryEntries.tenantId, tenantId), eq(memoryEntries.id, entryId)));
    if (!row) throw errors.notFound('No such vault entry.');
    if (row.state === 'forgotten') return row;
    const [tombstone] = await tx
      .update(memoryEntries)
      .set({
        state: 'forgotten',
        subject: null,
        content: null,
        tags: [],
        quarantineReason: null,
        entryKey: null,
        forgottenAt: new Date(),
        updatedAt: new Date(),
      })
      .where(eq(memoryEntries.id, row.id))
      .returning();
    await tx.update(memoryEntryVersions).set({ subject: null, content: null, reason: null }).where(eq(memoryEntryVersions.entryId, row.id));
    await audit(tx, tombstone!, 'forgotten');
    return tombstone!;
  });
}
