// The tenant memory store: full-text recall (Postgres ts_rank; PGlite too) and
// idempotent remember. Runs touch it only when memory is true.
import { and, count, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { memoryEntries } from '../db/schema.ts';
import { newId } from '../domain/ids.ts';

export interface RecalledEntry {
  id: string;
  subject: string;
  content: string;
  rank: number;
}

const document = sql`to_tsvector('english', ${memoryEntries.subject} || ' ' || ${memoryEntries.content})`;

/** Entries matching any word of `query`, most relevant first. */
export async function recallMemory(db: Db, tenantId: string, query: string, limit = 3): Promise<RecalledEntry[]> {
  const words = query.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  if (words.length === 0) return [];
  const tsQuery = sql`to_tsquery('english', ${words.join(' | ')})`;
  const rank = sql<number>`ts_rank(${document}, ${tsQuery})`;
  const rows = await db
    .select({ id: memoryEntries.id, subject: memoryEntries.subject, content: memoryEntries.content, rank })
    .from(memoryEntries)
    .where(and(eq(memoryEntries.tenantId, tenantId), sql`${document} @@ ${tsQuery}`))
    .orderBy(sql`${rank} desc`, memoryEntries.id)
    .limit(limit);
  return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
}

/** Writes one entry; repeating with the same entryKey writes nothing more. Returns the entry id. */
export async function rememberEntry(
  db: Db,
  input: { tenantId: string; subject: string; content: string; source: string; entryKey: string },
): Promise<string> {
  const [inserted] = await db
    .insert(memoryEntries)
    .values({ id: newId('mem'), ...input })
    .onConflictDoNothing({ target: memoryEntries.entryKey })
    .returning({ id: memoryEntries.id });
  if (inserted) return inserted.id;
  const [existing] = await db.select({ id: memoryEntries.id }).from(memoryEntries).where(eq(memoryEntries.entryKey, input.entryKey));
  return existing!.id;
}

export async function countMemoryEntries(db: Db, tenantId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(memoryEntries).where(eq(memoryEntries.tenantId, tenantId));
  return Number(row?.n ?? 0);
}
