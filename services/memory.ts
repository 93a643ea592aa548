// Memory as runs (and later chat) use it: recall and remember, both through
// the customer vault, so quarantined, expired and forgotten entries are never recalled.
import { and, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { memoryEntries } from '../db/schema.ts';
import { createEntry } from './vault/entries.ts';
import { searchVault } from './vault/search.ts';

export interface RecalledEntry {
  id: string;
  version: number;
  subject: string;
  content: string;
  rank: number;
}

export async function recallMemory(db: Db, tenantId: string, query: string, limit = 3): Promise<RecalledEntry[]> {
  const hits = await searchVault(db, tenantId, { q: query, limit });
  return hits.map((h) => ({ id: h.entry.id, version: h.entry.version, subject: h.entry.subject ?? '', content: h.entry.content ?? '', rank: h.rank }));
}

/**
 * The current text of entries a run recalled earlier, read again now: only those
 * that could still be recalled (active, unexpired), so an entry forgotten,
 * quarantined or expired since is simply absent from the map.
 */
export async function recallableEntries(db: Db, tenantId: string, ids: string[]): Promise<Map<string, { version: number; subject: string; content: string }>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: memoryEntries.id, version: memoryEntries.version, subject: memoryEntries.subject, content: memoryEntries.content })
    .from(memoryEntries)
    .where(
      and(
        eq(memoryEntries.tenantId, tenantId),
        inArray(memoryEntries.id, [...new Set(ids)]),
        eq(memoryEntries.state, 'active'),
        or(isNull(memoryEntries.expiresAt), gt(memoryEntries.expiresAt, sql`now()`)),
      ),
    );
  return new Map(rows.map((r) => [r.id, { version: r.version, subject: r.subject ?? '', content: r.content ?? '' }]));
}

/** Writes one vault entry; repeating with the same entryKey writes nothing more. Returns the entry id. */
export async function rememberEntry(
  db: Db,
  input: { tenantId: string; subject: string; content: string; source: string; entryKey: string; tags?: string[] },
): Promise<string> {
  const { entry } = await createEntry(db, input.tenantId, {
    subject: input.subject,
    content: input.content,
    tags: input.tags ?? [],
    source: input.source,
    expiresAt: null,
    entryKey: input.entryKey,
  });
  return entry.id;
}
