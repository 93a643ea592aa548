// Audit events: a bounded, content-free receipt of every control write.
import { desc, eq, lt, and, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { auditEvents } from '../db/schema.ts';
import { digestOf } from '../domain/digest.ts';

/** How many receipts a tenant keeps; older ones are dropped on write. */
export const AUDIT_RETENTION_COUNT = 1_000;

export interface AuditInput {
  tenantId: string;
  keyId: string | null;
  action: string;
  target: string;
  /** What was written; only its digest is kept. */
  subject: unknown;
}

export async function recordAudit(db: Db, e: AuditInput): Promise<void> {
  await db.insert(auditEvents).values({ tenantId: e.tenantId, keyId: e.keyId, action: e.action, target: e.target, digest: digestOf(e.subject) });
  const cutoff = sql`(select ${auditEvents.id} from ${auditEvents} where ${auditEvents.tenantId} = ${e.tenantId} order by ${auditEvents.id} desc offset ${AUDIT_RETENTION_COUNT - 1} limit 1)`;
  await db.delete(auditEvents).where(and(eq(auditEvents.tenantId, e.tenantId), lt(auditEvents.id, cutoff)));
}

export function listAudit(db: Db, tenantId: string, limit: number) {
  return db.select().from(auditEvents).where(eq(auditEvents.tenantId, tenantId)).orderBy(desc(auditEvents.id)).limit(limit);
}
