// Keyset pagination over (created_at desc, id desc): stable under inserts,
// cheap at any depth. Callers fetch `limit + 1` rows; this trims and makes the cursor.
import { and, type Column, eq, lt, or, type SQL } from 'drizzle-orm';

export interface Position {
  createdAt: Date;
  id: string;
}

/** The condition "strictly after `after`" in newest-first order. */
export function afterPosition(createdAt: Column, id: Column, after: Position): SQL {
  return or(lt(createdAt, after.createdAt), and(eq(createdAt, after.createdAt), lt(id, after.id)))!;
}

export function toPage<Row extends Position>(rows: Row[], limit: number): { rows: Row[]; next: Position | null } {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return { rows: pageRows, next: more && last ? { createdAt: last.createdAt, id: last.id } : null };
}
