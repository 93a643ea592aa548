// Full-text search over the vault (Postgres text search; PGlite has it too).
// Only active, unexpired entries are ever searched or recalled: quarantined,
// expired and forgotten ones never come back.
import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { memoryEntries } from '../../db/schema.ts';
import type { EntryRow } from './entries.ts';

const document = sql`to_tsvector('english', coalesce(${memoryEntries.subject}, '') || ' ' || coalesce(${memoryEntries.content}, ''))`;

export interface SearchHit {
  entry: EntryRow;
  rank: number;
}

/** Entries matching any word of `query`, most relevant first (more matching words and denser matches rank higher). */
export async function searchVault(db: Db, tenantId: string, query: { q: string; tag?: string; subject?: string; limit: number }): Promise<SearchHit[]> {
  const words = query.q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return [];
  const tsQuery = sql`to_tsquery('english', ${words.map((w) => w.replace(/'/g, '')).join(' | ')})`;
  const rank = sql<number>`ts_rank_cd(${document}, ${tsQuery})`;
  const conditions = [
    eq(memoryEntries.tenantId, tenantId),
    eq(memoryEntries.state, 'active'),
    or(isNull(memoryEntries.expiresAt), gt(memoryEntries.expiresAt, sql`now()`))!,
    sql`${document} @@ ${tsQuery}`,
  ];
  if (query.tag) conditions.push(sql`${memoryEntries.tags} @> ${JSON.stringify([query.tag])}::jsonb`);
  if (query.subject) conditions.push(sql`${memoryEntries.subject} ilike ${`%${query.subject.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`);
  const rows = await db
    .select({ entry: memoryEntries, rank })
    .from(memoryEntries)
    .where(and(...conditions))
    .orderBy(sql`${rank} desc`, memoryEntries.createdAt, memoryEntries.id)
    .limit(query.limit);
  return rows.map((r) => ({ entry: r.entry, rank: Number(r.rank) }));
}
